"""The steward and reader groups and their permissions (used by a data migration and tests).

``stewards`` may look at everything and curate: add and change alias rules, merge datasets,
re-derive events. ``catalog readers`` may only look. API tokens are for superusers only
(ApiTokenAdmin checks ``is_superuser``), so neither group gets a token permission.
Written against an ``apps`` registry so the migration can pass its historical one.
"""

from typing import Any

# The view permissions the admin asks for beside a page's own model (field_permissions).
VIEW_JOB, VIEW_RUN, VIEW_DATASET = "catalog.view_job", "catalog.view_run", "catalog.view_dataset"
VIEW_EVENT = "ingest.view_event"

STEWARDS = "stewards"
READERS = "catalog readers"
READ_MODELS = {
    "catalog": [
        "job",
        "run",
        "dataset",
        "datasetalias",
        "aliaslink",
        "aliasrule",
        "lineageedge",
        "lineageedgerun",
        "columnlineageedge",
        "datasetfield",
        "rundataset",
        "jobdataset",
        "eventdataset",
        "metadatarecord",
    ],
    "ingest": ["event"],
    "admin": ["logentry"],
}
# (app label, model, codename, name): permissions that no model declares.
CUSTOM_PERMISSIONS = [
    ("ingest", "event", "rederive_event", "Can re-derive events from the admin"),
    ("catalog", "dataset", "merge_dataset", "Can merge datasets (steward assertion)"),
]
CURATE = [
    ("catalog", "add_aliasrule"),
    ("catalog", "change_aliasrule"),
    ("catalog", "merge_dataset"),
    ("ingest", "rederive_event"),
]


def ensure_steward_groups(apps: Any) -> None:
    """Create (or complete) both groups; safe to run any number of times."""
    from django.contrib.auth.management import create_permissions

    for label in READ_MODELS:
        config = apps.get_app_config(label)
        if getattr(config, "models_module", None) is None:
            config.models_module = True  # historical registry: let create_permissions run
        create_permissions(config, verbosity=0, apps=apps)
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    for app_label, model, codename, name in CUSTOM_PERMISSIONS:
        content_type, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
        Permission.objects.get_or_create(
            content_type=content_type, codename=codename, defaults={"name": name}
        )

    def permission(app_label: str, codename: str) -> Any:
        return Permission.objects.get(content_type__app_label=app_label, codename=codename)

    view = [
        permission(app_label, f"view_{model}")
        for app_label, models in READ_MODELS.items()
        for model in models
    ]
    readers, _ = Group.objects.get_or_create(name=READERS)
    readers.permissions.add(*view)
    stewards, _ = Group.objects.get_or_create(name=STEWARDS)
    stewards.permissions.add(*view, *(permission(*pair) for pair in CURATE))
