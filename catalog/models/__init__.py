"""The catalog derived from the raw event log (see docs/derivation.md), one module per idea.

Everything but steward input (``AliasRule``, ``DisplayNamePin``, ``StewardLabel``,
``TagDescription``, ``RederiveJob``, ``Retirement``, and the webhook subscriptions with their
deliveries) is derived from ``ingest.Event`` and rebuilt by ``manage.py rederive``. Natural
keys are unique constraints on bounded columns: names of unbounded length are keyed by a
sha256 (``key_hash``).

Facts (``RunDataset``, ``ColumnLineageFact``, ``JobDataset``, ``EventDataset``) point at
``DatasetAlias`` rows, which never merge, so a dataset merge only moves aliases and
recomputes the aggregates (``LineageEdge``, ``ColumnLineageEdge``, ``DatasetField``).

The modules import each other downwards only (steward, identity, jobs_runs, then edges,
metadata, static, pairs, rederive, retained, ``namespaces`` (the per-namespace summary PostgreSQL
keeps), and ``writes``, the rule of which runs wrote what)
and never this package; everything else imports the models from here, which registers them
with the app. Each model's queryset (its read helpers) is in the model's own module.
"""

from catalog.models.changes import (
    BREAKING_KINDS,
    SCHEMA_KINDS,
    ChangeKind,
    DatasetChange,
    SchemaVersion,
)
from catalog.models.edges import (
    ColumnLineageEdge,
    ColumnLineageFact,
    ControlEdge,
    JobLineageEdge,
    JobLineageEdgeRun,
    LineageEdge,
    LineageEdgeRun,
)
from catalog.models.identity import (
    ALIASES_SHOWN,
    DATASETS_BY_NAME,
    AliasLink,
    AliasReason,
    AliasRule,
    AliasRuleAction,
    Dataset,
    DatasetAlias,
    stored_key,
)
from catalog.models.jobs_runs import (
    JOBS_BY_UPDATE,
    RUN_LINKS_COUNTED,
    RUN_LINKS_SHOWN,
    RUNS_BY_START,
    TERMINAL_STATES,
    Direction,
    Job,
    JobDataset,
    JobQuerySet,
    Run,
    RunDataset,
    RunDatasetFacet,
    RunState,
)
from catalog.models.metadata import DatasetField, EventDataset, EventDatasetRole, MetadataRecord
from catalog.models.namespaces import Namespace
from catalog.models.pairs import RunDatasetPair, StaticDatasetPair
from catalog.models.rederive import (
    FINISHED_STATES,
    RederiveJob,
    RederiveState,
    RememberedId,
    RememberedKind,
)
from catalog.models.retained import (
    RetainedAlias,
    RetainedColumnEdge,
    RetainedControlEdge,
    RetainedEdge,
    RetainedJob,
    RetainedJobDataset,
    RetainedJobEdge,
    RetainedLink,
)
from catalog.models.retirement import (
    RETIREMENT_LOCK,
    NamespacePurge,
    RetirableQuerySet,
    RetiredKind,
    Retirement,
    any_retired_sql,
    retired_sql,
)
from catalog.models.static import (
    StaticColumnLineage,
    StaticDataset,
    StaticLineage,
    Via,
    any_declared_sql,
)
from catalog.models.steward import (
    DisplayNamePin,
    LabelKind,
    LabelTarget,
    StewardInput,
    StewardLabel,
    TagDescription,
)
from catalog.models.webhooks import (
    DUE_STATUSES,
    DeliveryStatus,
    NotifiedChange,
    WebhookDelivery,
    WebhookSubscription,
)

__all__ = [
    "ALIASES_SHOWN",
    "BREAKING_KINDS",
    "DATASETS_BY_NAME",
    "DUE_STATUSES",
    "FINISHED_STATES",
    "JOBS_BY_UPDATE",
    "RETIREMENT_LOCK",
    "RUNS_BY_START",
    "RUN_LINKS_COUNTED",
    "RUN_LINKS_SHOWN",
    "SCHEMA_KINDS",
    "TERMINAL_STATES",
    "AliasLink",
    "AliasReason",
    "AliasRule",
    "AliasRuleAction",
    "ChangeKind",
    "ColumnLineageEdge",
    "ColumnLineageFact",
    "ControlEdge",
    "Dataset",
    "DatasetAlias",
    "DatasetChange",
    "DatasetField",
    "DeliveryStatus",
    "Direction",
    "DisplayNamePin",
    "EventDataset",
    "EventDatasetRole",
    "Job",
    "JobDataset",
    "JobLineageEdge",
    "JobLineageEdgeRun",
    "JobQuerySet",
    "LabelKind",
    "LabelTarget",
    "LineageEdge",
    "LineageEdgeRun",
    "MetadataRecord",
    "Namespace",
    "NamespacePurge",
    "NotifiedChange",
    "RederiveJob",
    "RederiveState",
    "RememberedId",
    "RememberedKind",
    "RetainedAlias",
    "RetainedColumnEdge",
    "RetainedControlEdge",
    "RetainedEdge",
    "RetainedJob",
    "RetainedJobDataset",
    "RetainedJobEdge",
    "RetainedLink",
    "RetirableQuerySet",
    "RetiredKind",
    "Retirement",
    "Run",
    "RunDataset",
    "RunDatasetFacet",
    "RunDatasetPair",
    "RunState",
    "SchemaVersion",
    "StaticColumnLineage",
    "StaticDataset",
    "StaticDatasetPair",
    "StaticLineage",
    "StewardInput",
    "StewardLabel",
    "TagDescription",
    "Via",
    "WebhookDelivery",
    "WebhookSubscription",
    "any_declared_sql",
    "any_retired_sql",
    "retired_sql",
    "stored_key",
]
