"""Admin for the raw event log and API tokens. Read-only: the log is never edited."""

import operator
from functools import reduce
from typing import Any, ClassVar

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.functional import cached_property
from django.utils.html import format_html, format_html_join

from core.admin_base import (
    COUNT_CAP,
    BoundedAdmin,
    ChoicesFilter,
    EstimatedCountPaginator,
    IdSearchMixin,
    WindowFilter,
    pretty_json,
)
from core.admin_scans import NewestRowsFilterMixin
from core.redaction import redact_text
from ingest.admin.shown_once import shown_once
from ingest.derivation_status import FAILED, PENDING
from ingest.facet_problems import redacted_problems
from ingest.models import ApiToken, Event
from ingest.querysets import RUN_EVENTS_ORDER
from ingest.services import create_token, revoke_token


class ReceivedWithinFilter(WindowFilter):
    title = "received"
    parameter_name = "received_within"
    column = "received_at"  # BRIN ingest_event_received_brin


class EventTypeFilter(ChoicesFilter):
    """The fixed OpenLineage event types."""

    title = "event type"
    parameter_name = "event_type"
    column = "event_type"
    options = [
        (value, value) for value in ("START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER")
    ]


class FacetProblemsFilter(admin.SimpleListFilter):
    """Events stored with problems outside their core (ADR 0004): ingest_event_facet_prob_idx."""

    title = "facet problems"
    parameter_name = "facet_problems"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "with facet problems"), ("no", "without")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "yes":
            return queryset.filter(facet_problems__isnull=False)
        if self.value() == "no":
            return queryset.filter(facet_problems__isnull=True)
        return queryset


# The columns the search matches a term to exactly, each with the order its md5 index holds
# its events in after the digest (``EventQuerySet.columns_holding``).
SEARCHED_COLUMNS = {"run_id": ("event_time", "id"), "job_name": (), "producer": ()}


class EventPaginator(EstimatedCountPaginator):
    """The base's capped count, a run's events (``EventQuerySet.of_run``) counted in their
    order: the first ``COUNT_CAP`` + 1 entries of their index range. Unordered, PostgreSQL
    counted a streaming run's events with a sequential scan of the log until that many
    turned up, all of it before a run at its end (ADR 0183)."""

    @cached_property
    def count(self) -> int:
        queryset = self.object_list
        if tuple(queryset.query.order_by) == RUN_EVENTS_ORDER:
            return queryset[: COUNT_CAP + 1].count()
        return super().count


@admin.register(Event)
class EventAdmin(NewestRowsFilterMixin, IdSearchMixin, BoundedAdmin):
    list_display: tuple[str, ...] = (
        "id",
        "kind",
        "event_type",
        "job_label",
        "run_id_redacted",
        "event_time",
        "received_at",
        "derivation_status",
    )
    list_filter: ClassVar[tuple[str | type[admin.SimpleListFilter], ...]] = (
        "kind",
        EventTypeFilter,
        "derivation_status",
        FacetProblemsFilter,
        ReceivedWithinFilter,
    )
    # No index holds these in id order, and issue 42 forbids a ninth on the ingest path
    # (ADRs 0142, 0206): filtered by them, the newest 10,000 events are searched (ADR 0208).
    # Pending and failed events have partial indexes of their own.
    scanned_columns = {
        "kind": frozenset(),
        "event_type": frozenset(),
        "derivation_status": frozenset({PENDING, FAILED}),
    }
    paginator = EventPaginator
    search_fields = ("run_id", "job_name", "producer")
    search_help_text = "Exact runId, job name or producer URL, or #id."
    sortable_by = ("id",)
    fields: ClassVar[tuple[str, ...]] = (
        "id",
        "kind",
        "event_type",
        "event_time",
        "received_at",
        "run_id_redacted",
        "job_namespace_redacted",
        "job_name_redacted",
        "producer_redacted",
        "schema_url",
        "derivation_status",
        "derived_at",
        "derivation_error_redacted",
        "facet_problems_table",
        "payload_pretty",
    )
    readonly_fields = fields

    def scans(self, params: dict[str, list[str]], search_term: str, queryset: QuerySet) -> bool:
        """A run's events (the search of a runId, ``of_run``) are a range of their own index,
        filtered whole as ``/api/v1/events?run_id=`` is (ADR 0194): the window would hide an
        old run's events behind the log's newest."""
        if tuple(queryset.query.order_by) == RUN_EVENTS_ORDER:
            return False
        return super().scans(params, search_term, queryset)

    @admin.display(description="facet problems (stored all the same; ADR 0004)")
    def facet_problems_table(self, event: Event) -> str:
        problems = redacted_problems(event.facet_problems)
        if not problems:
            return "none"
        rows = format_html_join(
            "",
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            (
                (
                    problem["path"],
                    problem["message"],
                    "skipped by derivation" if problem["skipped"] else "used",
                )
                for problem in problems
            ),
        )
        return format_html(
            "<table><thead><tr><th>path</th><th>problem</th><th>facet</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )

    @admin.display(description="job")
    def job_label(self, event: Event) -> str:
        if not event.job_name:
            return "—"
        return redact_text(f"{event.job_namespace}/{event.job_name}")

    @admin.display(description="job name")
    def job_name_redacted(self, event: Event) -> str:
        return redact_text(event.job_name or "")

    # Producer text kept as sent (stewards search the log by it), shown redacted.
    @admin.display(description="run id")
    def run_id_redacted(self, event: Event) -> str:
        return redact_text(event.run_id or "")

    @admin.display(description="job namespace")
    def job_namespace_redacted(self, event: Event) -> str:
        return redact_text(event.job_namespace or "")

    @admin.display(description="producer")
    def producer_redacted(self, event: Event) -> str:
        return redact_text(event.producer or "")

    @admin.display(description="derivation error")
    def derivation_error_redacted(self, event: Event) -> str:
        return redact_text(event.derivation_error or "")

    @admin.display(description="payload (as received)")
    def payload_pretty(self, event: Event) -> str:
        return pretty_json(event.received_payload)

    def search_exact(self, queryset: QuerySet, term: str) -> QuerySet:
        # A term redaction would change holds what the page shows redacted (a password in a
        # producer URL): matched as stored, it would say whether a guess was right, which
        # the API refuses too (/api/v1/events?producer=). It finds nothing, right or wrong.
        if redact_text(term) != term:
            return queryset.none()
        # Each is an equality its md5 index serves; only the columns that hold the term are
        # searched (ADR 0183). A runId alone (the run page's "events of this run") lists the
        # run's events in RUN_EVENTS_ORDER, a range of their index: in id order PostgreSQL
        # walked the log back from its newest event, or read and sorted every event of the
        # run, to show 50. That order replaces the list's (Django orders before it searches),
        # whatever header was clicked.
        held = Event.objects.columns_holding(term, SEARCHED_COLUMNS)
        if held == {"run_id"}:
            return queryset.of_run(term)  # type: ignore[attr-defined]
        matches = [Q(**{column: term}) for column in SEARCHED_COLUMNS if column in held]
        return queryset.filter(reduce(operator.or_, matches)) if matches else queryset.none()


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Superusers only. Creating a token shows its secret once, on the answer to the form
    (``shown_once``, never in a message: ADR 0178)."""

    list_display = ("name", "scope", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("scope",)
    search_fields = ("name", "prefix")
    fields = ("name", "scope", "prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # revoke instead: the row is the audit trail of who could write

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is not None:
            return ("name", "scope", *self.readonly_fields)
        return self.readonly_fields

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            return
        token, secret = create_token(obj.name, obj.scope)
        obj.pk = token.pk
        obj.prefix = token.prefix
        obj.secret_shown_once = secret  # type: ignore[attr-defined]  # for response_add only

    def response_add(
        self, request: HttpRequest, obj: ApiToken, post_url_continue: str | None = None
    ) -> HttpResponse:
        return shown_once(
            request,
            self,
            f"Created the token {obj.name}",
            [(str(obj), obj.secret_shown_once)],  # type: ignore[attr-defined]
            "Only its hash is stored: give it to the program that uses it.",
        )

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet) -> None:
        revoked = 0
        for token in queryset:
            if revoke_token(token.pk):
                revoked += 1
                # Who revoked which token, and when: the record of who could write.
                self.log_change(request, token, "Revoked the token.")
        self.message_user(request, f"Revoked {revoked} token(s).")


from ingest.admin import kafka as kafka  # noqa: E402  (registers the Kafka ingest admin)
