# Issue 41 item 4 (ADR 0093 amended): the browse paths of datasets derived before 0030,
# from the hierarchy facet their facets already hold; no rederive. Not atomic: each span of
# ids commits on its own (short row locks while the previous release serves), and a
# migration stopped half way resumes where the paths are still empty.

from django.db import migrations


def fill(apps, schema_editor):
    from catalog.services import browse_paths

    browse_paths.fill(using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("catalog", "0031_tag_descriptions"),
    ]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop, elidable=True)]
