# The admin's lists over tables that grow with use, filtered by a rare value, read in the
# list's order from an index (ADR 0195): the delivery log newest first, whole or by status or
# kind (its ids are random UUIDs, no order of time); the job edges named only in column
# lineage; the admin log's entries of one action (a deletion). Without them the page and its
# capped count read the table until they had found enough: all of it for a rare value.
# Django's admin log is not this app's model: its index is SQL of its own here.

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models

ADMIN_LOG_INDEX = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS catalog_admin_log_flag_idx "
    "ON django_admin_log (action_flag, id)"
)


class Migration(migrations.Migration):
    # Built concurrently: derivation and the delivery sweep keep writing meanwhile.
    atomic = False

    dependencies = [
        ("admin", "0003_logentry_add_action_flag_choices"),
        ("catalog", "0041_redact_metadata_keys"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="joblineageedge",
            index=models.Index(
                condition=models.Q(("via", ""), _negated=True),
                fields=["id"],
                name="catalog_job_edge_via_idx",
            ),
        ),
        AddIndexConcurrently(
            model_name="webhookdelivery",
            index=models.Index(fields=["created_at", "id"], name="catalog_webhook_time_idx"),
        ),
        AddIndexConcurrently(
            model_name="webhookdelivery",
            index=models.Index(
                condition=models.Q(("status", "delivered"), _negated=True),
                fields=["status", "created_at", "id"],
                name="catalog_webhook_status_idx",
            ),
        ),
        AddIndexConcurrently(
            model_name="webhookdelivery",
            index=models.Index(fields=["kind", "created_at", "id"], name="catalog_webhook_kind_idx"),
        ),
        migrations.RunSQL(
            ADMIN_LOG_INDEX,
            "DROP INDEX CONCURRENTLY IF EXISTS catalog_admin_log_flag_idx",
            elidable=False,
        ),
    ]
