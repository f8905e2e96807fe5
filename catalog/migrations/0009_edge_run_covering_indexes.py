# The edge-run tables' unique (edge, run) index carries first_seen and last_seen, so the
# graph as of a time and the diff read an edge's history from the index alone (ADR 0050).
# The index is rebuilt: on a big store, run this migration in a quiet hour.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0008_job_edge_run_indexes'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='joblineageedgerun',
            name='catalog_job_edge_run_uniq',
        ),
        migrations.RemoveConstraint(
            model_name='lineageedgerun',
            name='catalog_edge_run_uniq',
        ),
        migrations.AddConstraint(
            model_name='joblineageedgerun',
            constraint=models.UniqueConstraint(fields=('edge', 'run'), include=('first_seen', 'last_seen'), name='catalog_job_edge_run_uniq'),
        ),
        migrations.AddConstraint(
            model_name='lineageedgerun',
            constraint=models.UniqueConstraint(fields=('edge', 'run'), include=('first_seen', 'last_seen'), name='catalog_edge_run_uniq'),
        ),
    ]
