"""Create the ``stewards`` and ``catalog readers`` groups with their admin permissions.

Data only. The reverse is a no-op: groups may have gained members and must not vanish.
"""

from django.db import migrations


def create_groups(apps, schema_editor):
    from catalog.permissions import ensure_steward_groups

    ensure_steward_groups(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0001_initial"),
        ("ingest", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("admin", "0003_logentry_add_action_flag_choices"),
    ]

    operations = [migrations.RunPython(create_groups, migrations.RunPython.noop)]
