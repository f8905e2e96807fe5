# A run's dataset → dataset edges are capped (LINEAGE_MAX_RUN_EDGES, issue 38): what the
# cap left out is counted on the run. Existing runs cut nothing (0).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0017_complete_names_writes'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='lineage_edges_cut',
            field=models.BigIntegerField(db_default=0, default=0),
        ),
    ]
