# The job's lineage-edge index also orders its edges by last seen (then id), so the admin's
# job page lists a job's newest edges from the index instead of sorting all of them: a
# planted job with 360,000 edges made that page sort them all (1.3 s, ADR 0057). It
# replaces the index on the job alone, which every lookup by job still uses.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0013_static_lineage_and_run_facts'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='lineageedge',
            name='catalog_edge_job_idx',
        ),
        migrations.AddIndex(
            model_name='lineageedge',
            index=models.Index(fields=['job', 'last_seen', 'id'], name='catalog_edge_job_idx'),
        ),
    ]
