# catalog_job_edge_run (issue 12's job edges) loses the two foreign-key indexes that
# repeated its unique (edge_id, run_id) and its run index: upkeep on every run's insert
# (ADR 0025, amendment).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0007_derivation_scale_indexes'),
    ]

    operations = [
        migrations.AlterField(
            model_name='joblineageedgerun',
            name='edge',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='catalog.joblineageedge'),
        ),
        migrations.AlterField(
            model_name='joblineageedgerun',
            name='run',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.run'),
        ),
    ]
