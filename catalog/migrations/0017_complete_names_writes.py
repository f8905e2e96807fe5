# A run's COMPLETE names its writes (ADR 0069, amended): the facts that say which outputs
# a COMPLETE event named. No backfill: they live in the raw events, so an existing catalog
# keeps its answer (every output of a completed run is a write, both facts being false)
# until `manage.py rederive` reads them.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0016_edge_completed_runs'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='outputs_confirmed',
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddField(
            model_name='rundataset',
            name='confirmed',
            field=models.BooleanField(db_default=False, default=False),
        ),
    ]
