"""A run's detail in the read API: the run, its first inputs and outputs with their counts
and the lists of them all (/runs/{runId}/inputs and /outputs, whose items are
``RunDatasetSerializer``'s), its events, child runs, the other runs of its runId and what it
reported (run facts, tests, parameters). Out of api/serializers.py, which holds the lists'
items and the other details (at most 600 lines a module, tests/test_module_size.py)."""

from typing import Any, cast

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api import serializers_run_facts as _run_facts
from api.alias_serializers import ShortAliasSerializer
from api.json_fields import RedactedJSONField
from api.serializers import DatasetRefSerializer, JobRefSerializer, RunSerializer, _many
from catalog.facets import execution_parameters, run_tests
from catalog.models import RUN_LINKS_COUNTED, RUN_LINKS_SHOWN, Run, writes
from core.redaction import redact
from ingest.models import Event


class RunDatasetSerializer(serializers.Serializer):
    dataset = DatasetRefSerializer(source="alias.dataset", allow_null=True)
    alias = ShortAliasSerializer()
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    attempted = serializers.SerializerMethodField(
        help_text="This input or output was only attempted: the run is no write (it failed, "
        "was aborted or has not ended, and is not a streaming run that is running), or, for "
        "an output, the run's COMPLETE named other outputs and not this one (a START's plan). "
        "An attempted output is no version of the dataset, no last modification (ADR 0069)."
    )

    def get_attempted(self, link: Any) -> bool:
        return not writes.row_is_write(self.context["run"], link)


class RunEventRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Event
        fields = ["id", "event_type", "event_time", "received_at", "derivation_status"]


class SameRunIdSerializer(serializers.Serializer):
    job = JobRefSerializer()
    is_placeholder = serializers.BooleanField()


def _run_io(run: Run, links: list[Any]) -> list[dict[str, Any]]:
    """A run's inputs or outputs, each ``attempted`` unless it is a write of the run."""
    context = {"run": run}
    return cast(list[dict[str, Any]], RunDatasetSerializer(links, many=True, context=context).data)


class RunDetailSerializer(RunSerializer):
    facets = RedactedJSONField()
    inputs = serializers.SerializerMethodField(
        help_text=f"The run's first {RUN_LINKS_SHOWN} inputs by id, however many it has (ADR "
        "0168): the first page of `inputs_url`."
    )
    outputs = serializers.SerializerMethodField(
        help_text=f"The run's first {RUN_LINKS_SHOWN} outputs by id, however many it has (ADR "
        "0168): the first page of `outputs_url`."
    )
    input_count = serializers.SerializerMethodField(
        help_text=f"How many inputs the run has, counted up to {RUN_LINKS_COUNTED:,}: past "
        "that, `input_count_is_lower_bound` is true and it has more (ADR 0186)."
    )
    input_count_is_lower_bound = serializers.SerializerMethodField(
        help_text="The run has more inputs than `input_count`: counting stopped there."
    )
    output_count = serializers.SerializerMethodField(
        help_text=f"How many outputs the run has, counted up to {RUN_LINKS_COUNTED:,}: past "
        "that, `output_count_is_lower_bound` is true and it has more (ADR 0186)."
    )
    output_count_is_lower_bound = serializers.SerializerMethodField(
        help_text="The run has more outputs than `output_count`: counting stopped there."
    )
    inputs_url = serializers.SerializerMethodField(
        help_text="/runs/{runId}/inputs?job_id=: every input, a cursor-paginated list by id."
    )
    outputs_url = serializers.SerializerMethodField(
        help_text="/runs/{runId}/outputs?job_id=: every output, a cursor-paginated list by id."
    )
    events = serializers.SerializerMethodField()
    child_run_ids = serializers.SerializerMethodField()
    same_run_id_runs = serializers.SerializerMethodField(
        help_text="Other runs the same runId names (other jobs), bounded; "
        "/runs/{runId}?job_id=<job id> shows one of them."
    )
    dataset_facts = serializers.SerializerMethodField(
        help_text="What the run reported about the inputs and outputs shown: statistics, "
        "data quality metrics and assertions, subsets (ADR 0061, 0168)."
    )
    tests = serializers.SerializerMethodField(help_text="The tests the run executed (ADR 0092).")
    parameters = serializers.SerializerMethodField(
        help_text="The parameters the run was given, secrets redacted (ADR 0092)."
    )

    class Meta(RunSerializer.Meta):
        fields = [
            *RunSerializer.Meta.fields,
            "facets",
            "inputs",
            "outputs",
            "input_count",
            "input_count_is_lower_bound",
            "output_count",
            "output_count_is_lower_bound",
            "inputs_url",
            "outputs_url",
            "events",
            "child_run_ids",
            "same_run_id_runs",
            "dataset_facts",
            "tests",
            "parameters",
        ]

    @extend_schema_field(_run_facts.RunDatasetFactsSerializer(many=True))
    def get_dataset_facts(self, run: Run) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], redact(self.context["dataset_facts"]))

    @extend_schema_field(_run_facts.TestResultSerializer(many=True))
    def get_tests(self, run: Run) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], redact(run_tests.results(run.facets)))

    @extend_schema_field(_run_facts.ExecutionParameterSerializer(many=True))
    def get_parameters(self, run: Run) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], redact(execution_parameters.parameters(run.facets)))

    @extend_schema_field(SameRunIdSerializer(many=True))
    def get_same_run_id_runs(self, run: Run) -> list[dict[str, Any]]:
        return _many(SameRunIdSerializer, self.context["same_run_id"])

    @extend_schema_field(RunDatasetSerializer(many=True))
    def get_inputs(self, run: Run) -> list[dict[str, Any]]:
        return _run_io(run, self.context["inputs"])

    @extend_schema_field(RunDatasetSerializer(many=True))
    def get_outputs(self, run: Run) -> list[dict[str, Any]]:
        return _run_io(run, self.context["outputs"])

    @extend_schema_field(OpenApiTypes.INT)
    def get_input_count(self, run: Run) -> int:
        return min(run.input_count, RUN_LINKS_COUNTED)  # type: ignore[attr-defined]

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_input_count_is_lower_bound(self, run: Run) -> bool:
        return bool(run.input_count > RUN_LINKS_COUNTED)  # type: ignore[attr-defined]

    @extend_schema_field(OpenApiTypes.INT)
    def get_output_count(self, run: Run) -> int:
        return min(run.output_count, RUN_LINKS_COUNTED)  # type: ignore[attr-defined]

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_output_count_is_lower_bound(self, run: Run) -> bool:
        return bool(run.output_count > RUN_LINKS_COUNTED)  # type: ignore[attr-defined]

    @extend_schema_field(OpenApiTypes.URI)
    def get_inputs_url(self, run: Run) -> str:
        return cast(str, self.context["inputs_url"])

    @extend_schema_field(OpenApiTypes.URI)
    def get_outputs_url(self, run: Run) -> str:
        return cast(str, self.context["outputs_url"])

    @extend_schema_field(RunEventRefSerializer(many=True))
    def get_events(self, run: Run) -> list[dict[str, Any]]:
        return _many(RunEventRefSerializer, self.context["events"])

    @extend_schema_field(serializers.ListField(child=serializers.UUIDField()))
    def get_child_run_ids(self, run: Run) -> list[str]:
        return [str(value) for value in self.context["children"]]
