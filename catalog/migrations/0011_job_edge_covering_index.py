# The job-edge dataset index covers the graph's job links (dataset, direction, job, with first and
# last seen) so a big graph reads them from the index alone; the job and dataset foreign
# keys lose the indexes that the unique key and this index already serve (ADR 0050).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0010_run_history_index'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='joblineageedge',
            name='catalog_job_edge_dataset_idx',
        ),
        migrations.AlterField(
            model_name='joblineageedge',
            name='dataset',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='io_edges', to='catalog.dataset'),
        ),
        migrations.AlterField(
            model_name='joblineageedge',
            name='job',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='io_edges', to='catalog.job'),
        ),
        migrations.AddIndex(
            model_name='joblineageedge',
            index=models.Index(fields=['dataset', 'direction', 'job'], include=('first_seen', 'last_seen'), name='catalog_job_edge_dataset_idx'),
        ),
    ]
