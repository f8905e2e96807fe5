"""Admin for the raw event log and API tokens. Read-only: the log is never edited."""

from datetime import timedelta
from typing import Any, ClassVar

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from ingest.admin.base import EstimatedCountPaginator, ReadOnlyAdminMixin, pretty_json
from ingest.models import ApiToken, Event
from ingest.services import create_token, revoke_token


class ReceivedWithinFilter(admin.SimpleListFilter):
    """Time windows instead of a date hierarchy, which would scan for distinct dates."""

    title = "received"
    parameter_name = "received_within"
    WINDOWS = {"1h": timedelta(hours=1), "24h": timedelta(days=1), "7d": timedelta(days=7)}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("1h", "Last hour"), ("24h", "Last 24 hours"), ("7d", "Last 7 days")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        window = self.WINDOWS.get(self.value() or "")
        if window is None:
            return queryset
        return queryset.filter(received_at__gte=timezone.now() - window)


class EventTypeFilter(admin.SimpleListFilter):
    """The fixed OpenLineage event types (no DISTINCT over the table)."""

    title = "event type"
    parameter_name = "event_type"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        types = ["START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER"]
        return [(value, value) for value in types]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(event_type=self.value()) if self.value() else queryset


@admin.register(Event)
class EventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display: tuple[str, ...] = (
        "id",
        "kind",
        "event_type",
        "job_label",
        "run_id",
        "event_time",
        "received_at",
        "derivation_status",
    )
    list_filter: ClassVar[tuple[str | type[admin.SimpleListFilter], ...]] = (
        "kind",
        EventTypeFilter,
        "derivation_status",
        ReceivedWithinFilter,
    )
    search_fields = ("run_id", "job_name", "producer")
    search_help_text = "Exact runId, job name or producer URL, or #id."
    paginator = EstimatedCountPaginator
    show_full_result_count = False
    sortable_by = ("id",)
    list_per_page = 50
    fields: ClassVar[tuple[str, ...]] = (
        "id",
        "kind",
        "event_type",
        "event_time",
        "received_at",
        "run_id",
        "job_namespace",
        "job_name",
        "producer",
        "schema_url",
        "derivation_status",
        "derived_at",
        "derivation_error",
        "payload_pretty",
    )
    readonly_fields = fields

    @admin.display(description="job")
    def job_label(self, event: Event) -> str:
        return f"{event.job_namespace}/{event.job_name}" if event.job_name else "—"

    @admin.display(description="payload (as received)")
    def payload_pretty(self, event: Event) -> str:
        return pretty_json(event.received_payload)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        # Exact matches only, so each hits its hash index; "#123" looks up an id.
        term = search_term.strip()
        if not term:
            return queryset, False
        if term.startswith("#") and term[1:].isdigit():
            return queryset.filter(id=int(term[1:])), False
        matches = (
            queryset.filter(run_id=term)
            | queryset.filter(job_name=term)
            | queryset.filter(producer=term)
        )
        return matches, False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Superusers only. Creating a token shows its secret once, in a message."""

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
        messages.warning(
            request, f"Token created. Copy it now, it will not be shown again: {secret}"
        )

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet) -> None:
        revoked = sum(revoke_token(token_id) for token_id in queryset.values_list("id", flat=True))
        self.message_user(request, f"Revoked {revoked} token(s).")
