"""django-filter FilterSets: natural-key filters (namespace, name) and explicit ``_id`` filters.

The natural-key, id, time and label filters map to an indexed predicate (see the model
indexes and api's own migrations). The event list keeps its one statement for ``run_id`` (a
range of the run's index), the dataset filters (the dataset's links) and the filters whose
partial index is in its id order (``derivation_status=pending|failed``,
``has_facet_problems=true``); a request naming any other reads at most a bounded scan of
the log a page (``api.event_scan``, ADR 0194), not the whole log.
"""

from datetime import UTC, datetime
from typing import Any

import django_filters as filters
from django import forms
from django.db.models import Exists, OuterRef, QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import PermissionDenied

from api.access import sees_retired
from api.params import shown_as_is, truth
from api.problems import bad_parameter
from catalog.facets import hierarchy
from catalog.models import (
    AliasReason,
    Dataset,
    DatasetAlias,
    EventDataset,
    Job,
    JobDataset,
    JobQuerySet,
    Run,
    RunState,
    stored_key,
    writes,
)
from ingest.models import DerivationStatus, Event, EventKind


class UtcDateTimeField(filters.fields.IsoDateTimeField):
    """ISO 8601, converted to UTC here: PostgreSQL refuses offsets beyond ±15:59."""

    def to_python(self, value: Any) -> datetime | None:
        parsed = super().to_python(value)
        if parsed is None:
            return None
        try:
            return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        except (OverflowError, ValueError):
            raise forms.ValidationError("The time is out of range.", code="invalid") from None


class MomentFilter(filters.IsoDateTimeFilter):
    field_class = UtcDateTimeField


class StrictBooleanField(forms.Field):
    """true or false as ``params.boolean`` spells them; any other value is invalid (a 400).

    django-filter's BooleanFilter reads its value through Django's NullBooleanSelect, which
    maps every spelling it does not know (``1``, ``yes``, ``maybe``) to "unknown", so the
    filter was dropped and ``?is_dropped=1`` listed every dataset, as if it had filtered."""

    widget = forms.TextInput  # the text as sent, not NullBooleanSelect's mapping of it

    def to_python(self, value: Any) -> bool | None:
        if value is None or value == "":
            return None
        parsed = truth(str(value))
        if parsed is None:
            raise forms.ValidationError("Expected true or false.", code="invalid")
        return parsed


class BooleanFilter(filters.BooleanFilter):
    field_class = StrictBooleanField


class ShownRedactedFilter(filters.CharFilter):
    """An exact filter on producer text the API shows redacted (``params.shown_as_is``)."""

    def filter(self, qs: Any, value: Any) -> Any:
        return super().filter(qs, shown_as_is(self.field_name, value))


class IdFilter(filters.NumberFilter):
    """A primary key: an integer PostgreSQL's bigint can hold (else 400, not a DataError)."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", 2**63 - 1)
        super().__init__(*args, **kwargs)


class CatalogFilterSet(filters.FilterSet):
    """A FilterSet whose form class is built once per class, not once per request.

    django-filter builds a new form class from every filter's field on each request, which
    was about a fifth of a list request's CPU. Our filters' fields depend on nothing of the
    request (no request-bound choices), so one class serves every request; each form
    instance still copies its fields, as Django forms do.
    """

    def get_form_class(self) -> type[forms.Form]:
        form_class = type(self).__dict__.get("_form_class")
        if form_class is None:
            form_class = super().get_form_class()
            type(self)._form_class = form_class  # type: ignore[attr-defined]
        return form_class

    @classmethod
    def unasked(cls, queryset: Any) -> Any:
        """What ``qs`` is for a request that names none of the filters: the queryset as it
        is. A subclass whose ``filter_queryset`` does more without any filter says so here
        (RetiredMixin); tests/api/test_filter_backend.py holds every filterset to it."""
        return queryset


class FilterBackend(DjangoFilterBackend):
    """django-filter's backend, which builds no filterset for a request that names none of
    its filters (an unfiltered list, and every next page of one: ``cursor`` and ``limit``).

    Building one copies every filter and its form field (``copy.deepcopy``) and validates
    an empty form: a sixth of a deep cursor page's CPU, and of the cheapest list request's a
    fifth (ADR 0119), for a queryset that comes back as it went in, or ``unasked``'s. A
    parameter whose name starts with a filter's (``state``, a range's ``name_min``) builds it
    as before, so every filter's validation and 400s are unchanged.
    """

    def filter_queryset(self, request: Any, queryset: Any, view: Any) -> Any:
        filterset_class = self.get_filterset_class(view, queryset)
        if (
            filterset_class is not None
            and issubclass(filterset_class, CatalogFilterSet)
            and not names_a_filter(request.query_params, filterset_class)
        ):
            return filterset_class.unasked(queryset)
        return super().filter_queryset(request, queryset, view)


def names_a_filter(parameters: Any, filterset_class: type[filters.FilterSet]) -> bool:
    """Whether a query parameter is (or starts with) the name of one of the filters."""
    names = tuple(filterset_class.base_filters)
    return any(parameter.startswith(names) for parameter in parameters)


class TimeWindowMixin(CatalogFilterSet):
    seen_since = MomentFilter(
        field_name="last_seen", lookup_expr="gte", help_text="Last seen at or after (ISO 8601)."
    )
    seen_until = MomentFilter(
        field_name="first_seen", lookup_expr="lt", help_text="First seen before (ISO 8601)."
    )


class RetiredMixin(TimeWindowMixin):
    """Lists hide what is retired (ADR 0078); ``retired=true`` lists only that."""

    retired = BooleanFilter(
        method="filter_retired",
        help_text="Only what is retired (true; a steward's session); default: only the rest.",
    )

    def filter_retired(self, queryset: QuerySet, name: str, value: bool) -> QuerySet:
        return queryset  # applied by filter_queryset, which also decides when it is absent

    @classmethod
    def unasked(cls, queryset: Any) -> Any:
        return queryset.current()

    def filter_queryset(self, queryset: Any) -> Any:
        queryset = super().filter_queryset(queryset)
        if not self.form.cleaned_data.get("retired"):
            return self.unasked(queryset)
        user = getattr(self.request, "user", None)
        if not sees_retired(user, queryset.model):
            raise PermissionDenied(
                "Only a session that may change them (a steward) lists what is retired."
            )
        return queryset.retired()


class LabelFilterMixin(CatalogFilterSet):
    """``?tag=`` and ``?owner=`` of jobs and datasets (ADR 0083): visible ones only."""

    tag = filters.CharFilter(
        method="filter_tag",
        help_text="With a visible tag (its own or a column's) of this key, or key:value.",
    )
    owner = filters.CharFilter(method="filter_owner", help_text="With this visible owner.")

    def filter_tag(self, queryset: Any, name: str, value: str) -> QuerySet:
        return queryset.tagged(value)

    def filter_owner(self, queryset: Any, name: str, value: str) -> QuerySet:
        return queryset.owned_by(value)


class JobFilterSet(RetiredMixin, LabelFilterMixin):
    namespace = filters.CharFilter(help_text="Exact namespace.")
    name = filters.CharFilter(help_text="Exact name.")
    name_prefix = filters.CharFilter(
        field_name="name", lookup_expr="startswith", help_text="Name starts with."
    )
    parent_id = IdFilter(field_name="parent_id", help_text="Parent job id.")
    parent_namespace = filters.CharFilter(field_name="parent__namespace")
    parent_name = filters.CharFilter(field_name="parent__name")
    state = filters.ChoiceFilter(
        choices=RunState.choices,
        method="filter_state",
        help_text="State of the job's latest run.",
    )
    is_placeholder = BooleanFilter(
        help_text="Jobs known only as another job's parent (true) or from their own events."
    )
    integration = filters.CharFilter()
    job_type = filters.CharFilter()

    class Meta:
        model = Job
        fields: list[str] = []

    def filter_state(self, queryset: JobQuerySet, name: str, value: str) -> QuerySet:
        return queryset.with_latest_run_state().filter(latest_run_state=value)


# The dataset list's filters that name a job: what they answer is job lineage (the views'
# permissions, api/views/catalog.py).
JOB_FILTERS = ("job_id", "producer_job_id", "consumer_job_id")


class DatasetFilterSet(RetiredMixin, LabelFilterMixin):
    namespace = filters.CharFilter(help_text="Exact namespace of the display name.")
    name = filters.CharFilter(help_text="Exact display name.")
    name_prefix = filters.CharFilter(field_name="name", lookup_expr="startswith")
    alias_namespace = filters.CharFilter(
        method="filter_alias", help_text="With alias_name: datasets with this alias (any name)."
    )
    alias_name = filters.CharFilter(method="filter_alias")
    alias_reason = filters.ChoiceFilter(
        choices=AliasReason.choices,
        method="filter_alias_reason",
        help_text="Datasets having at least one alias for this reason.",
    )
    path = filters.CharFilter(
        method="filter_path",
        help_text="Browse path: datasets whose hierarchy facet's level names, joined by /, "
        "are this path or start with it by whole levels (db/schema: db/schema/t, not "
        "db/schema2/t).",
    )
    lifecycle_state = filters.CharFilter()
    is_dropped = BooleanFilter()
    job_id = IdFilter(method="filter_job", help_text="Read or written by this job.")
    producer_job_id = IdFilter(
        method="filter_job",
        help_text="Written by a completed run of this job, or declared as its output.",
    )
    consumer_job_id = IdFilter(method="filter_job", help_text="Read by this job.")

    class Meta:
        model = Dataset
        fields: list[str] = []

    def filter_alias(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        namespace, alias_name = _pair(self.data, "alias_namespace", "alias_name")
        if name == "alias_name":
            return queryset  # applied once, by alias_namespace
        return queryset.filter(aliases__key_hash=stored_key(namespace, alias_name))

    def filter_path(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        path = value.strip("/")
        if not path or len(path) > hierarchy.KEY_LIMIT:
            raise bad_parameter(
                "path", f"path names one or more levels, at most {hierarchy.KEY_LIMIT} characters."
            )
        return queryset.under_path(path)  # type: ignore[attr-defined]

    def filter_alias_reason(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Exists(DatasetAlias.objects.filter(dataset=OuterRef("pk"), reason=value))
        )

    def filter_job(self, queryset: QuerySet, name: str, value: Any) -> QuerySet:
        if name == "producer_job_id":
            return queryset.filter(writes.produced_by(int(value)))  # not its attempts
        links = JobDataset.objects.filter(job_id=int(value), alias__dataset=OuterRef("pk"))
        if name == "consumer_job_id":
            links = links.filter(direction="input")
        return queryset.filter(Exists(links))


class RunFilterSet(CatalogFilterSet):
    job_id = IdFilter(help_text="Runs of this job id.")
    job_namespace = filters.CharFilter(field_name="job__namespace")
    job_name = filters.CharFilter(field_name="job__name")
    state = filters.MultipleChoiceFilter(choices=RunState.choices, help_text="Repeatable.")
    started_since = MomentFilter(field_name="started_at", lookup_expr="gte")
    started_until = MomentFilter(field_name="started_at", lookup_expr="lt")
    parent_run_id = filters.UUIDFilter(field_name="parent_run__run_uuid")
    is_streaming = BooleanFilter()

    class Meta:
        model = Run
        fields: list[str] = []


class EventFilterSet(CatalogFilterSet):
    since = MomentFilter(
        field_name="event_time", lookup_expr="gte", help_text="eventTime at or after."
    )
    until = MomentFilter(field_name="event_time", lookup_expr="lt", help_text="eventTime before.")
    received_since = MomentFilter(field_name="received_at", lookup_expr="gte")
    received_until = MomentFilter(field_name="received_at", lookup_expr="lt")
    event_type = filters.CharFilter(help_text="START, RUNNING, COMPLETE, FAIL, ABORT, OTHER.")
    kind = filters.ChoiceFilter(choices=EventKind.choices)
    producer = ShownRedactedFilter()
    job_namespace = ShownRedactedFilter()
    job_name = ShownRedactedFilter()
    run_id = ShownRedactedFilter(help_text="The runId exactly as sent.")
    derivation_status = filters.ChoiceFilter(choices=DerivationStatus.choices)
    has_facet_problems = BooleanFilter(
        field_name="facet_problems",
        lookup_expr="isnull",
        exclude=True,
        help_text="true: only events stored with facet problems (ADR 0004); false: only without.",
    )
    dataset_id = IdFilter(
        method="filter_dataset", help_text="Events naming any alias of this dataset."
    )
    dataset_namespace = filters.CharFilter(
        method="filter_dataset_alias", help_text="With dataset_name: events naming this alias."
    )
    dataset_name = filters.CharFilter(method="filter_dataset_alias")

    class Meta:
        model = Event
        fields: list[str] = []

    def filter_dataset(self, queryset: QuerySet, name: str, value: Any) -> QuerySet:
        links = EventDataset.objects.filter(alias__dataset_id=int(value))
        return queryset.filter(id__in=links.values("event_id"))

    def filter_dataset_alias(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        namespace, dataset_name = _pair(self.data, "dataset_namespace", "dataset_name")
        if name == "dataset_name":
            return queryset  # applied once, by dataset_namespace
        links = EventDataset.objects.filter(alias__key_hash=stored_key(namespace, dataset_name))
        return queryset.filter(id__in=links.values("event_id"))


def _pair(data: Any, first: str, second: str) -> tuple[str, str]:
    """Two parameters that only make sense together (a namespace and a name)."""
    one, two = data.get(first, ""), data.get(second, "")
    if not one or not two:
        missing = second if one else first
        raise bad_parameter(missing, f"{first} and {second} are used together.")
    return one, two
