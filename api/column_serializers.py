"""Column lineage in the read API: column edges and dataset-level dependencies, as
catalog.lineage.column_lineage reads them (the graph's ``columns=true`` and the dataset detail)."""

from rest_framework import serializers


class ColumnEdgeSerializer(serializers.Serializer):
    # Only the stubs see Field.source here: the serializer metaclass pops declared fields.
    source = serializers.CharField()  # type: ignore[assignment]
    source_field = serializers.CharField()
    target = serializers.CharField()
    target_field = serializers.CharField()
    job = serializers.CharField()
    transformation_type = serializers.CharField(allow_blank=True)
    transformation_subtype = serializers.CharField(allow_blank=True)
    transformation_description = serializers.CharField(allow_blank=True)
    masking = serializers.BooleanField()
    field_transformation_type = serializers.CharField(
        allow_blank=True, help_text="The producer's older field-level form (transformationType)."
    )
    field_transformation_description = serializers.CharField(
        allow_blank=True, help_text="The field-level transformationDescription."
    )
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    run_count = serializers.IntegerField()
    last_run_id = serializers.UUIDField(allow_null=True)
    current = serializers.BooleanField(
        help_text="The job's latest completed run still produced this column edge."
    )
    static = serializers.BooleanField(
        help_text="Declared by the job's current JobEvent (no runs, never current), not "
        "observed (ADR 0061)."
    )
    outside_schema = serializers.BooleanField(
        help_text="The target dataset has a schema and target_field is not in it (a "
        "producer's SQL parser may have missed an INSERT's column list): kept, flagged "
        "(ADR 0069)."
    )
    through = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Only on an edge composed through folded temporary datasets (the graph, "
        "ADR 0089): the datasets it passed, in order; `job` is the last job's.",
    )


class DatasetDependencySerializer(serializers.Serializer):
    """A field that filters, joins, groups, sorts or windows the whole target dataset
    (columnLineage's dataset-level ``dataset`` list)."""

    # Only the stubs see Field.source here: the serializer metaclass pops declared fields.
    source = serializers.CharField()  # type: ignore[assignment]
    source_field = serializers.CharField()
    target = serializers.CharField()
    job = serializers.CharField()
    transformation_type = serializers.CharField(allow_blank=True, help_text="Usually INDIRECT.")
    transformation_subtype = serializers.CharField(
        allow_blank=True, help_text="FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL, ..."
    )
    transformation_description = serializers.CharField(allow_blank=True)
    masking = serializers.BooleanField()
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    run_count = serializers.IntegerField()
    last_run_id = serializers.UUIDField(allow_null=True)
    current = serializers.BooleanField()
    static = serializers.BooleanField(help_text="Declared by the job's current JobEvent.")
    through = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Only on an edge composed through folded temporary datasets (the graph, "
        "ADR 0089): the datasets it passed, in order; `job` is the last job's.",
    )


class NamedSource(serializers.Serializer):
    source_namespace = serializers.CharField(help_text="The source dataset's display namespace.")
    source_name = serializers.CharField(help_text="The source dataset's display name.")


class DatasetColumnEdgeSerializer(ColumnEdgeSerializer, NamedSource):
    """A column edge into the dataset (its detail), with its source named."""


class DatasetDependencyDetailSerializer(DatasetDependencySerializer, NamedSource):
    """A dataset-level dependency of the dataset (its detail), with its source named."""
