# A job whose runs had dataset → dataset pairs cut (LINEAGE_MAX_RUN_EDGES, issue 38) is
# marked, so the graph can say a walk through it may stop short (ADR 0080). Existing jobs
# start unmarked; a full rederive marks those whose runs are cut.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0021_retirement"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="lineage_edges_cut",
            field=models.BooleanField(db_default=False, default=False),
        ),
    ]
