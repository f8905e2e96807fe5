"""Response shapes of the catalog resources (read-only; the api never writes)."""

from typing import Any, cast

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api import serializers_run_facts as _run_facts
from api.alias_serializers import AliasSerializer, ShortAliasSerializer
from api.column_serializers import DatasetColumnEdgeSerializer, DatasetDependencyDetailSerializer
from api.json_fields import RedactedJSONField
from api.label_serializers import OwnersField, TagsField
from catalog.facets import hierarchy
from catalog.models import (
    ALIASES_SHOWN,
    Dataset,
    DatasetField,
    Job,
    Run,
)
from core.redaction import redact, redact_text
from ingest.facet_problems import FacetProblemSerializer, redacted_problems
from ingest.models import Event


def _many(serializer: type[serializers.BaseSerializer[Any]], items: Any) -> list[dict[str, Any]]:
    """``serializer(items, many=True).data``: a list (the stubs type it as one item's dict)."""
    return cast(list[dict[str, Any]], serializer(items, many=True).data)


class RedactedCharField(serializers.CharField):
    """Producer text kept as sent because it is a key into the raw log (an event's runId,
    producer URI and job namespace, a run's runId as sent): redacted on the way out."""

    def to_representation(self, value: Any) -> str:
        return redact_text(super().to_representation(value))


class JobRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Job
        fields = ["id", "namespace", "name"]


class DatasetRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Dataset
        fields = ["id", "namespace", "name"]


class RunRefSerializer(serializers.Serializer):
    run_id = serializers.UUIDField(help_text="The run's id (UUID) in this API.")
    state = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)


class FieldSerializer(serializers.ModelSerializer):
    class Meta:
        model = DatasetField
        fields = ["ordinal", "name", "type", "description"]


class NamespaceSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    jobs = serializers.IntegerField(help_text="Jobs in this namespace.")
    datasets = serializers.IntegerField(help_text="Datasets whose display name is here.")


class JobSerializer(serializers.ModelSerializer):
    latest_run = serializers.SerializerMethodField()
    tags = TagsField()
    owners = OwnersField()

    class Meta:
        model = Job
        fields = [
            "id",
            "namespace",
            "name",
            "is_placeholder",
            "parent_id",
            "processing_type",
            "job_type",
            "integration",
            "description",
            "tags",
            "owners",
            "first_seen",
            "last_seen",
            "latest_run",
        ]

    @extend_schema_field(RunRefSerializer(allow_null=True))
    def get_latest_run(self, job: Job) -> dict[str, Any] | None:
        run_uuid = getattr(job, "latest_run_uuid", None)
        if run_uuid is None:
            return None
        return {
            "run_id": str(run_uuid),
            "state": job.latest_run_state,  # type: ignore[attr-defined]
            "started_at": serializers.DateTimeField().to_representation(job.latest_run_started)  # type: ignore[attr-defined]
            if job.latest_run_started  # type: ignore[attr-defined]
            else None,
        }


class JobDatasetSerializer(serializers.Serializer):
    dataset = DatasetRefSerializer(source="alias.dataset", allow_null=True)
    alias = ShortAliasSerializer()
    declared = serializers.BooleanField(help_text="Declared by a JobEvent (static lineage).")
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    run_count = serializers.IntegerField(help_text="The job's runs that read/wrote it.")
    completed_run_count = serializers.IntegerField(
        help_text="Of run_count, those that completed and, for an output, wrote it (their "
        "COMPLETE named it, or named no output): 0 of n, the I/O was only attempted "
        "(ADR 0069)."
    )


class RetiredSerializer(serializers.Serializer):
    """A retirement in force (ADR 0078): when, by whom (a user, or ``token:<name>``), why."""

    at = serializers.DateTimeField()
    by = serializers.CharField()
    reason = serializers.CharField()


@extend_schema_field(RetiredSerializer(allow_null=True))
class RetiredField(serializers.Field):
    """The row's active retirement (``with_retirement``'s annotations), or null."""

    def __init__(self) -> None:
        super().__init__(
            source="*",
            read_only=True,
            help_text="Set while the object is retired: hidden from lists, search and the "
            "graph until restored, or named by an event received later.",
        )

    def to_representation(self, row: Any) -> dict[str, Any] | None:
        if getattr(row, "retired_at", None) is None:
            return None
        return {"at": row.retired_at, "by": row.retired_by, "reason": row.retired_reason}


class JobDetailSerializer(JobSerializer):
    facets = RedactedJSONField()
    retired = RetiredField()
    parent = JobRefSerializer(allow_null=True)
    children = serializers.SerializerMethodField()
    inputs = serializers.SerializerMethodField()
    outputs = serializers.SerializerMethodField()
    latest_tests = serializers.SerializerMethodField(
        help_text="The test results of the newest of the job's latest 50 runs that reported "
        "tests, or null (ADR 0092)."
    )

    class Meta(JobSerializer.Meta):
        fields = [
            *JobSerializer.Meta.fields,
            "facets",
            "parent",
            "children",
            "inputs",
            "outputs",
            "retired",
            "latest_tests",
        ]

    @extend_schema_field(_run_facts.LatestTestsSerializer(allow_null=True))
    def get_latest_tests(self, job: Job) -> dict[str, Any] | None:
        latest = self.context["latest_tests"]
        if latest is None:
            return None
        return cast(dict[str, Any], _run_facts.LatestTestsSerializer(redact(latest)).data)

    @extend_schema_field(JobRefSerializer(many=True))
    def get_children(self, job: Job) -> list[dict[str, Any]]:
        return _many(JobRefSerializer, self.context["children"])

    @extend_schema_field(JobDatasetSerializer(many=True))
    def get_inputs(self, job: Job) -> list[dict[str, Any]]:
        return _many(JobDatasetSerializer, self.context["inputs"])

    @extend_schema_field(JobDatasetSerializer(many=True))
    def get_outputs(self, job: Job) -> list[dict[str, Any]]:
        return _many(JobDatasetSerializer, self.context["outputs"])


class RunSerializer(serializers.ModelSerializer):
    run_id = serializers.UUIDField(source="run_uuid", help_text="The run's id in this API.")
    run_id_as_sent = RedactedCharField(source="run_id_text")
    job = JobRefSerializer()
    parent_run_id = serializers.SerializerMethodField()
    duration_seconds = serializers.SerializerMethodField()
    tags = TagsField()

    class Meta:
        model = Run
        fields = [
            "run_id",
            "run_id_as_sent",
            "job",
            "state",
            "state_time",
            "started_at",
            "ended_at",
            "duration_seconds",
            "nominal_start_time",
            "nominal_end_time",
            "parent_run_id",
            "error_message",
            "is_streaming",
            "is_placeholder",
            "tags",
            "shares_run_id",
            "first_event_time",
            "last_event_time",
            "lineage_edges_cut",
        ]
        extra_kwargs = {
            "lineage_edges_cut": {
                "help_text": "(input, output) dataset pairs of this run with no dataset → "
                "dataset lineage edge: a run's edges stop at LINEAGE_MAX_RUN_EDGES "
                "(docs/derivation.md). Its job edges still name every input and output."
            },
            "shares_run_id": {
                "help_text": "Another job's events carry the same runId: each job keeps its "
                "own run (ADR 0028); /runs/{runId}?job_id= picks one."
            },
        }

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_parent_run_id(self, run: Run) -> str | None:
        parent = getattr(run, "parent_uuid", None)
        return str(parent) if parent else None

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_duration_seconds(self, run: Run) -> float | None:
        return run.duration.total_seconds() if run.duration is not None else None


class DatasetSerializer(serializers.ModelSerializer):
    # A list serializer at runtime (many=True); the detail serializer swaps in a richer child.
    aliases: serializers.BaseSerializer[Any] = ShortAliasSerializer(
        many=True,
        source="prefetched_aliases",
        help_text=f"The first {ALIASES_SHOWN} aliases by namespace and name (ADR 0180); "
        "/datasets/{id}/aliases lists them all.",
    )
    alias_count = serializers.IntegerField(
        read_only=True, help_text="How many aliases the dataset has (`aliases` shows the first)."
    )
    tags = TagsField()
    owners = OwnersField()

    class Meta:
        model = Dataset
        fields = [
            "id",
            "namespace",
            "name",
            "description",
            "tags",
            "owners",
            "lifecycle_state",
            "is_dropped",
            "first_seen",
            "last_seen",
            "aliases",
            "alias_count",
        ]


class DatasetJobSerializer(serializers.Serializer):
    job = JobRefSerializer()
    declared = serializers.BooleanField()
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    run_count = serializers.IntegerField(help_text="The job's runs that read/wrote the dataset.")
    completed_run_count = serializers.IntegerField(
        help_text="Of run_count, those that completed (COMPLETE) and, for an output, wrote "
        "it: their COMPLETE named it, or named no output (ADR 0069)."
    )


class HierarchyLevelSerializer(serializers.Serializer):
    type = serializers.CharField(help_text="DATABASE, SCHEMA, TABLE, ...")
    name = serializers.CharField()


class DatasetDetailSerializer(DatasetSerializer):
    aliases = serializers.SerializerMethodField(  # type: ignore[assignment]
        help_text=f"The first {ALIASES_SHOWN} aliases by namespace and name (ADR 0180); "
        "`aliases_url` lists them all."
    )
    aliases_url = serializers.SerializerMethodField(
        help_text="/datasets/{id}/aliases: every alias, a cursor-paginated list."
    )
    hierarchy = serializers.SerializerMethodField(
        help_text="The browse path its HierarchyDatasetFacet gives, highest level first "
        "(ADR 0093); empty without one."
    )
    # Only the stubs see Serializer.fields here: the serializer metaclass pops declared fields.
    fields = FieldSerializer(many=True, source="prefetched_fields")  # type: ignore[assignment]
    facets = RedactedJSONField()
    retired = RetiredField()
    producing_jobs = serializers.SerializerMethodField(
        help_text="Jobs that wrote the dataset in a completed run, or declare it (static)."
    )
    attempting_jobs = serializers.SerializerMethodField(
        help_text="Jobs that named the dataset as an output in runs none of which wrote it "
        "(failed, aborted, not ended, or completed naming other outputs): attempted "
        "writes, no version (ADR 0069)."
    )
    consuming_jobs = serializers.SerializerMethodField()
    column_lineage_outside_schema = serializers.SerializerMethodField(
        help_text="How many column edges into this dataset target a field outside its schema "
        "(column_lineage entries with outside_schema true; 0 without a schema)."
    )
    column_lineage = serializers.SerializerMethodField(
        help_text="Column edges into this dataset (ADR 0060): observed ones, then those jobs' "
        "current JobEvents declare (`static: true`); up to 200 of each."
    )
    dataset_dependencies = serializers.SerializerMethodField(
        help_text="Fields that filter, join, group, sort or window this whole dataset, observed "
        "and declared (`static: true`) as column_lineage."
    )
    run_facts = serializers.SerializerMethodField(
        help_text="What the latest runs (up to 10) reported about the dataset: statistics, "
        "data quality metrics and assertions, newest run first (ADR 0061)."
    )

    class Meta(DatasetSerializer.Meta):
        fields = [
            *DatasetSerializer.Meta.fields,
            "aliases_url",
            "lifecycle_changed_at",
            "retired",
            "facets",
            "fields",
            "producing_jobs",
            "attempting_jobs",
            "consuming_jobs",
            "column_lineage",
            "column_lineage_outside_schema",
            "dataset_dependencies",
            "run_facts",
            "hierarchy",
        ]

    @extend_schema_field(AliasSerializer(many=True))
    def get_aliases(self, dataset: Dataset) -> list[dict[str, Any]]:
        return _many(AliasSerializer, dataset.prefetched_aliases)  # type: ignore[attr-defined]

    @extend_schema_field(OpenApiTypes.URI)
    def get_aliases_url(self, dataset: Dataset) -> str:
        return cast(str, self.context["aliases_url"])

    @extend_schema_field(DatasetColumnEdgeSerializer(many=True))
    def get_column_lineage(self, dataset: Dataset) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self.context["column_lineage"])

    @extend_schema_field(DatasetDependencyDetailSerializer(many=True))
    def get_dataset_dependencies(self, dataset: Dataset) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self.context["dataset_dependencies"])

    @extend_schema_field(HierarchyLevelSerializer(many=True))
    def get_hierarchy(self, dataset: Dataset) -> list[dict[str, str]]:
        return cast(list[dict[str, str]], redact(hierarchy.levels(dataset.facets)))

    @extend_schema_field(_run_facts.DatasetRunFactsSerializer(many=True))
    def get_run_facts(self, dataset: Dataset) -> list[dict[str, Any]]:
        return cast(
            list[dict[str, Any]],
            redact(
                [{**entry, "run_id": str(entry["run_id"])} for entry in self.context["run_facts"]]
            ),
        )

    # The view hands both lists over already in DatasetJobSerializer's shape.
    @extend_schema_field(DatasetJobSerializer(many=True))
    def get_producing_jobs(self, dataset: Dataset) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self.context["producing"])

    @extend_schema_field(DatasetJobSerializer(many=True))
    def get_attempting_jobs(self, dataset: Dataset) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self.context["attempting"])

    @extend_schema_field(OpenApiTypes.INT)
    def get_column_lineage_outside_schema(self, dataset: Dataset) -> int:
        return cast(int, self.context["column_lineage_outside_schema"])

    @extend_schema_field(DatasetJobSerializer(many=True))
    def get_consuming_jobs(self, dataset: Dataset) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self.context["consuming"])


class EventSerializer(serializers.ModelSerializer):
    payload = serializers.SerializerMethodField(
        help_text="The event exactly as received, with secret values redacted."
    )
    # Both are producer text (an edge's pipeline, an exception quoting the payload).
    job_name = serializers.SerializerMethodField()
    derivation_error = serializers.SerializerMethodField()
    run_id = RedactedCharField(allow_null=True, required=False)
    job_namespace = RedactedCharField(allow_null=True, required=False)
    producer = RedactedCharField(allow_null=True, required=False)
    facet_problems = serializers.SerializerMethodField(
        help_text="What the event gets wrong outside its core (facets against their schemas, "
        "producer, schemaURL, eventType), recorded at ingest; [] when nothing. The event was "
        "stored as received; skipped facets are not used by derivation (ADR 0004)."
    )

    class Meta:
        model = Event
        fields = [
            "id",
            "received_at",
            "kind",
            "event_type",
            "event_time",
            "run_id",
            "job_namespace",
            "job_name",
            "producer",
            "derivation_status",
            "derivation_error",
            "derived_at",
            "facet_problems",
            "payload",
        ]

    @extend_schema_field(OpenApiTypes.ANY)
    def get_payload(self, event: Event) -> Any:
        return redact(event.received_payload)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_job_name(self, event: Event) -> str | None:
        return None if event.job_name is None else redact_text(event.job_name)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_derivation_error(self, event: Event) -> str | None:
        error = event.derivation_error
        return None if error is None else redact_text(error)

    @extend_schema_field(FacetProblemSerializer(many=True))
    def get_facet_problems(self, event: Event) -> list[dict[str, Any]]:
        return redacted_problems(event.facet_problems)


class EventDetailSerializer(EventSerializer):
    run_id_shared_with = serializers.SerializerMethodField(
        help_text="Other jobs whose own events carry this event's runId: each job keeps its "
        "own run (ADR 0028). [] when none (bounded)."
    )

    class Meta(EventSerializer.Meta):
        fields = [*EventSerializer.Meta.fields, "run_id_shared_with"]

    @extend_schema_field(JobRefSerializer(many=True))
    def get_run_id_shared_with(self, event: Event) -> list[dict[str, Any]]:
        if event.kind != "run" or not event.run_id or event.job_name is None:
            return []
        runs = Run.objects.shared_with(
            event.run_id, event.job_namespace or "", event.job_name, SHARED_LIMIT
        )
        return _many(JobRefSerializer, [run.job for run in runs])


SHARED_LIMIT = 20


class MetadataRecordSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    event_id = serializers.IntegerField()
    resource = serializers.CharField()
    subject = serializers.CharField()
    action = serializers.CharField()
    timestamp = serializers.DateTimeField()
    additionalValues = RedactedJSONField(  # the ingest payload spells it so
        source="additional_values", help_text="The record's additionalValues (str → str)."
    )
