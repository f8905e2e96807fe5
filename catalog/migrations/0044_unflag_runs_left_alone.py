# ADR 0202: retention and the namespace purge deleted runs without looking at their
# runIds again, so the last run of a runId another job had shared stayed `shares_run_id`.
# The flagged runs are read along catalog_run_shared_idx in spans, and each runId they name
# that keeps fewer than two own runs has its run unflagged. Not atomic: each span commits on
# its own, and a migration stopped half way resumes by running again (the runs it unflagged
# are not read again).

from django.db import migrations


def unflag(apps, schema_editor):
    # Imported here: a migration reads the service as it is when the migration runs.
    from catalog.services.derivation import run_conflicts

    run_conflicts.unflag_all_left_alone()


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("catalog", "0043_flag_shared_text_run_ids"),
    ]

    operations = [migrations.RunPython(unflag, migrations.RunPython.noop, elidable=True)]
