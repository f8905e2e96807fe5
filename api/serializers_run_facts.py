"""Response shapes of run facts (``catalog.reads.run_facts``): output/input statistics, data
quality metrics and assertions per run and dataset (issue 26 part 7, ADR 0061).

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
