# A time nobody knows sorts after every known one in a newest-first order (ADR 0160): a
# placeholder run (no start) came before a job's real runs, so it was the job's latest run,
# and a never-seen dataset topped the admin's list. PostgreSQL puts NULL first in DESC, and
# an index serves only its own NULL placement (forwards, or exactly reversed), so the
# indexes behind these orders are rebuilt NULLS LAST under the same names.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0035_namespace_summary"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="run",
            options={
                "ordering": [
                    models.OrderBy(models.F("started_at"), descending=True, nulls_last=True),
                    models.OrderBy(models.F("id"), descending=True),
                ]
            },
        ),
        migrations.RemoveIndex(
            model_name="dataset",
            name="catalog_dataset_seen_idx",
        ),
        migrations.RemoveIndex(
            model_name="run",
            name="catalog_run_job_started_idx",
        ),
        migrations.RemoveIndex(
            model_name="run",
            name="catalog_run_state_idx",
        ),
        migrations.AddIndex(
            model_name="dataset",
            index=models.Index(
                models.OrderBy(models.F("last_seen"), descending=True, nulls_last=True),
                models.OrderBy(models.F("id"), descending=True),
                name="catalog_dataset_seen_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                models.F("job"),
                models.OrderBy(models.F("started_at"), descending=True, nulls_last=True),
                models.OrderBy(models.F("id"), descending=True),
                name="catalog_run_job_started_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                models.F("state"),
                models.OrderBy(models.F("started_at"), descending=True, nulls_last=True),
                name="catalog_run_state_idx",
            ),
        ),
    ]
