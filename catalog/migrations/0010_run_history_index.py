# A job's run history in its cursor's order (job, id) gets its index: the API walked every newer
# run to find an old job's. The foreign-key index on parent_run goes: the partial
# catalog_run_parent_idx serves every lookup, and each index is upkeep on a run's insert.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0009_edge_run_covering_indexes'),
    ]

    operations = [
        migrations.AlterField(
            model_name='run',
            name='parent_run',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='child_runs', to='catalog.run'),
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(fields=['job', '-id'], name='catalog_run_job_id_idx'),
        ),
    ]
