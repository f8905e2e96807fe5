# ADR 0187: metadata records derived before ADR 0179 hold their additionalValues' keys as
# sent (and before ADR 0056 their values), and /metadata?<key>=<value> matches what is
# stored: a guessed secret key was confirmed by a filter. Redacted again from the row
# itself, as derivation stores it today; no rederive. Not atomic: each span of ids commits
# on its own (no row is locked but the ones written), and a migration stopped half way
# resumes by running again (rows already redacted are left alone).

from django.db import migrations


def redact(apps, schema_editor):
    from catalog.services import metadata_keys

    metadata_keys.redact_stored(using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("catalog", "0040_runs_by_text_run_id"),
    ]

    operations = [migrations.RunPython(redact, migrations.RunPython.noop, elidable=True)]
