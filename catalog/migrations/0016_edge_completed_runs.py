# Edges count their completed runs beside all their runs (ADR 0069); existing rows are
# filled from the runs' states so a catalog needs no rederive.

from django.db import migrations, models


_BACKFILL = """
UPDATE catalog_lineage_edge_run er SET completed = true
FROM catalog_run r WHERE r.id = er.run_id
  AND (r.state = 'COMPLETE' OR (r.is_streaming AND r.state = 'RUNNING'));
UPDATE catalog_job_edge_run er SET completed = true
FROM catalog_run r WHERE r.id = er.run_id
  AND (r.state = 'COMPLETE' OR (r.is_streaming AND r.state = 'RUNNING'));
UPDATE catalog_lineage_edge e SET completed_run_count = c.n
FROM (SELECT edge_id, COUNT(*) AS n FROM catalog_lineage_edge_run WHERE completed
      GROUP BY edge_id) c WHERE c.edge_id = e.id;
UPDATE catalog_job_edge e SET completed_run_count = c.n
FROM (SELECT edge_id, COUNT(*) AS n FROM catalog_job_edge_run WHERE completed
      GROUP BY edge_id) c WHERE c.edge_id = e.id;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0012_marquez_list_order_indexes'),
    ]

    operations = [
        migrations.AddField(
            model_name='joblineageedge',
            name='completed_run_count',
            field=models.IntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name='joblineageedgerun',
            name='completed',
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddField(
            model_name='lineageedge',
            name='completed_run_count',
            field=models.IntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name='lineageedgerun',
            name='completed',
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.RunSQL(_BACKFILL, migrations.RunSQL.noop),
    ]
