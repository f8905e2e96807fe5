# ADR 0201: a runId that is no UUID is keyed per job, so the runs two jobs keep of it were
# never flagged `shares_run_id` (the recompute went by run_uuid). Recomputed by the text,
# walking catalog_run_text_idx in spans; only the texts two runs keep are read from the
# table. Not atomic: each span commits on its own, and a migration stopped half way resumes
# by running again (the flags already right are not written again).

from django.db import migrations


def flag(apps, schema_editor):
    from catalog.services.derivation import run_conflicts

    run_conflicts.mark_all_shared_run_texts()


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("catalog", "0042_admin_lists_bounded_reads"),
    ]

    operations = [migrations.RunPython(flag, migrations.RunPython.noop, elidable=True)]
