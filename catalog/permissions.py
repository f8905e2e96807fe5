"""The steward and reader groups and their permissions, taken from the admin's registry.

``stewards`` may look at everything and curate: add and change alias rules, merge datasets,
re-derive events. ``catalog readers`` may only look. API tokens are for superusers only
(ApiTokenAdmin checks ``is_superuser``), so neither group gets a token permission.

What "everything" is comes from the admin registry: after every ``migrate`` (``post_migrate``,
connected in CatalogConfig.ready) both groups get the view permission of every model the
admin registers in the catalog's apps, so a model added to the admin cannot be forgotten
(issue 29: job lineage edges were, and a steward clicking "lineage edges" got a 403).
``READ_MODELS`` is only what migration 0002 gave, against its historical registry.
"""

from typing import Any

# The live registry, named apart from the historical ``apps`` migration 0002 passes in.
from django.apps import apps as live_apps
from django.contrib import admin
from django.contrib.auth.management import create_permissions

# The view permissions the admin asks for beside a page's own model (field_permissions).
VIEW_JOB, VIEW_RUN, VIEW_DATASET = "catalog.view_job", "catalog.view_run", "catalog.view_dataset"
VIEW_EVENT = "ingest.view_event"

STEWARDS = "stewards"
READERS = "catalog readers"
# The apps whose admin pages stewards and readers browse; tokens stay superuser-only.
STEWARD_APPS = ("catalog", "ingest", "admin")
SUPERUSER_ONLY = {("ingest", "apitoken")}
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
# Models the read API shows that have no admin page of their own (the admin shows them
# inside the job, run and dataset pages): their view permissions are read permissions of
# API views (api/access.py), so both groups hold them like the registry's.
API_READ_MODELS = {
    "catalog": ["staticlineage", "staticdataset", "staticcolumnlineage", "rundatasetfacet"],
}
# (app label, model, codename, name): permissions that no model declares.
CUSTOM_PERMISSIONS = [
    ("ingest", "event", "rederive_event", "Can re-derive events from the admin"),
    ("catalog", "dataset", "merge_dataset", "Can merge datasets (steward assertion)"),
]
CURATE = [
    # Retire and restore (ADR 0078): the admin's actions and the Marquez mount's DELETEs.
    ("catalog", "change_dataset"),
    ("catalog", "change_job"),
    ("catalog", "add_aliasrule"),
    ("catalog", "change_aliasrule"),
    ("catalog", "merge_dataset"),
    ("ingest", "rederive_event"),
]
# Stewards replay Kafka dead letters (docs/ingest.md); the model is newer than migration 0002's
# historical registry, so only the live registry's models bring it.
REPLAY = ("ingest", "change_deadletter")
# Stewards add, hide and delete tags and owners (ADR 0083); newer than migration 0002 too.
LABEL = [("catalog", "add_stewardlabel"), ("catalog", "delete_stewardlabel")]
# Stewards describe tags (the admin, Marquez's PUT /tags/{tag}); newer too.
TAG_DESCRIPTION = [
    ("catalog", "add_tagdescription"),
    ("catalog", "change_tagdescription"),
    ("catalog", "delete_tagdescription"),
]
# Stewards manage webhook subscriptions and replay deliveries (ADR 0086); newer too.
WEBHOOKS = [
    ("catalog", "add_webhooksubscription"),
    ("catalog", "change_webhooksubscription"),
    ("catalog", "delete_webhooksubscription"),
    ("catalog", "change_webhookdelivery"),
]


def registry_read_models() -> dict[str, list[str]]:
    """Every model the admin registers in STEWARD_APPS, by app label (live registry)."""
    models: dict[str, list[str]] = {label: [] for label in STEWARD_APPS}
    for model in live_apps.get_models():
        label, name = model._meta.app_label, model._meta.model_name or ""
        shown = label in models and (label, name) not in SUPERUSER_ONLY
        if shown and admin.site.is_registered(model):
            models[label].append(name)
    return models


def apply_registry_permissions(**kwargs: Any) -> None:
    """``post_migrate``: complete both groups with the registry's models (idempotent)."""
    read_models = registry_read_models()
    for label, names in API_READ_MODELS.items():
        read_models[label] += [name for name in names if name not in read_models[label]]
    ensure_steward_groups(live_apps, read_models)


def ensure_steward_groups(apps: Any, read_models: dict[str, list[str]] | None = None) -> None:
    """Create (or complete) both groups; safe to run any number of times."""
    read_models = READ_MODELS if read_models is None else read_models
    for label in read_models:
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
        for app_label, models in read_models.items()
        for model in models
    ]
    readers, _ = Group.objects.get_or_create(name=READERS)
    readers.permissions.add(*view)
    stewards, _ = Group.objects.get_or_create(name=STEWARDS)
    curate = [*CURATE, REPLAY] if "deadletter" in read_models.get("ingest", ()) else CURATE
    if "stewardlabel" in read_models.get("catalog", ()):
        curate = [*curate, *LABEL]
    if "tagdescription" in read_models.get("catalog", ()):
        curate = [*curate, *TAG_DESCRIPTION]
    if "webhooksubscription" in read_models.get("catalog", ()):
        curate = [*curate, *WEBHOOKS]
    stewards.permissions.add(*view, *(permission(*pair) for pair in curate))


def sees_retired(user: Any, model: type[Any]) -> bool:
    """Whether ``user`` reads what is retired of ``model`` (ADR 0078): a session that may
    change it, as a steward who may restore it. A read token and a catalog reader get what
    the lists and the Marquez mount give: it is gone. The API (api.access) and the admin
    (catalog.admin.visibility) both ask here."""
    permission = f"{model._meta.app_label}.change_{model._meta.model_name}"
    return hasattr(user, "has_perm") and bool(user.has_perm(permission))
