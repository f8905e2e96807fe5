"""Response shapes of run facts (``catalog.reads.run_facts``): output/input statistics, data
quality metrics and assertions and subsets per run and dataset (issue 26 part 7, ADR 0061),
and what a run reports of itself: its tests and execution parameters (ADR 0092).

The entries are built by ``catalog.reads.run_facts`` already in these shapes; these serializers
document them (OpenAPI) and the detail serializers redact them like every facet."""

from rest_framework import serializers

from api.json_fields import RedactedJSONField


class _RefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    namespace = serializers.CharField()
    name = serializers.CharField()


class _AliasSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    name = serializers.CharField()
    reason = serializers.CharField()


class StatisticsSerializer(serializers.Serializer):
    row_count = serializers.IntegerField(allow_null=True)
    bytes = serializers.IntegerField(allow_null=True)
    file_count = serializers.IntegerField(allow_null=True)


class QualityMetricsSerializer(StatisticsSerializer):
    column_metrics = RedactedJSONField(
        help_text="Per column, as the producer sent them (nullCount, distinctCount, sum, "
        "count, min, max, quantiles).",
    )


class AssertionSerializer(serializers.Serializer):
    assertion = serializers.CharField()
    success = serializers.BooleanField(allow_null=True)
    column = serializers.CharField(allow_null=True)
    name = serializers.CharField(allow_null=True, help_text="The test's name (1-1-0).")
    severity = serializers.CharField(
        allow_null=True, help_text="error or warn, as configured (1-1-0)."
    )
    expected = serializers.CharField(allow_null=True, help_text="As sent, as text (1-1-0).")
    actual = serializers.CharField(allow_null=True, help_text="As sent, as text (1-1-0).")


class SubsetSerializer(serializers.Serializer):
    """BaseSubsetDatasetFacet: the part of the dataset the run read (or wrote)."""

    type = serializers.CharField(
        allow_null=True, help_text="partition, location, compare or binary."
    )
    partitions = RedactedJSONField(
        help_text="Each partition the condition names (at any depth of AND/OR): "
        "identifier and dimensions."
    )
    locations = serializers.ListField(child=serializers.CharField())
    condition = RedactedJSONField(help_text="The input's (or output's) condition as sent.")


class RunDatasetFactsSerializer(serializers.Serializer):
    """What a run reported about one dataset it read or wrote."""

    dataset = _RefSerializer(allow_null=True)
    alias = _AliasSerializer()
    direction = serializers.CharField(help_text="input or output")
    statistics = StatisticsSerializer(
        allow_null=True, help_text="outputStatistics of an output, inputStatistics of an input."
    )
    quality_metrics = QualityMetricsSerializer(allow_null=True, help_text="dataQualityMetrics.")
    assertions = AssertionSerializer(many=True, help_text="dataQualityAssertions.")
    subset = SubsetSerializer(allow_null=True, help_text="subset (an input's or output's).")


class DatasetRunFactsSerializer(serializers.Serializer):
    """What one of the latest runs reported about the dataset."""

    run_id = serializers.UUIDField()
    job = _RefSerializer()
    direction = serializers.CharField(help_text="input or output")
    statistics = StatisticsSerializer(
        allow_null=True, help_text="outputStatistics of an output, inputStatistics of an input."
    )
    quality_metrics = QualityMetricsSerializer(allow_null=True, help_text="dataQualityMetrics.")
    assertions = AssertionSerializer(many=True, help_text="dataQualityAssertions.")
    subset = SubsetSerializer(allow_null=True, help_text="subset (an input's or output's).")


class TestResultSerializer(serializers.Serializer):
    """One test a run executed (TestRunFacet)."""

    name = serializers.CharField()
    status = serializers.CharField(allow_null=True, help_text="pass, fail or skip.")
    severity = serializers.CharField(allow_null=True, help_text="error or warn.")
    type = serializers.CharField(allow_null=True, help_text="not_null, unique, row_count, ...")
    description = serializers.CharField(allow_null=True)
    expected = serializers.CharField(allow_null=True)
    actual = serializers.CharField(allow_null=True)


class LatestTestsSerializer(serializers.Serializer):
    """The newest of the job's latest 50 runs that reported tests, and its results."""

    run_id = serializers.UUIDField()
    state = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    tests = TestResultSerializer(many=True)


class ExecutionParameterSerializer(serializers.Serializer):
    """One parameter the job was run with (ExecutionParametersRunFacet); a secret's value
    (its key or name looks secret, or a URL's password) is redacted."""

    key = serializers.CharField()
    name = serializers.CharField(allow_null=True)
    value = serializers.CharField(allow_null=True)
    description = serializers.CharField(allow_null=True)
