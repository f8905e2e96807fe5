"""The event log admin with links into the catalog, the re-derive views, the admin log."""

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from catalog.admin.support import (
    HiddenIdFilter,
    changelist_url,
    link,
    related_table,
)
from catalog.admin.visibility import hide_retired_log_entries
from catalog.models import (
    EventDataset,
    Job,
    RederiveJob,
    Run,
)
from catalog.services import rederive_jobs
from core.admin_base import BoundedAdmin
from core.admin_scans import SEARCHED_ROWS, NewestRowsSearchMixin
from core.redaction import redact_text
from ingest.admin import EventAdmin
from ingest.models import Event

# --- events: the raw log, linked to what it derived -----------------------------------------


class EventDatasetFilter(HiddenIdFilter):
    """``?dataset=<id>``: events that named one of the dataset's aliases."""

    parameter_name = "dataset"

    def for_id(self, queryset: QuerySet, dataset_id: int) -> QuerySet:
        named = EventDataset.objects.filter(event=OuterRef("pk"), alias__dataset_id=dataset_id)
        return queryset.filter(Exists(named))


class EventAliasFilter(HiddenIdFilter):
    """``?alias=<id>``: events that named the alias (catalog_event_dataset_uniq prefix)."""

    parameter_name = "alias"

    def for_id(self, queryset: QuerySet, alias_id: int) -> QuerySet:
        return queryset.filter(
            id__in=EventDataset.objects.filter(alias_id=alias_id).values("event_id")
        )


# The other jobs' runs of an event's runId its page names at most.
SHARERS_SHOWN = 20


def _sharers(run_id: str, run: Run) -> SafeString:
    """The other jobs' own runs of ``run_id``, flagged as ``run`` is, found as
    ``/events/{id}``'s ``run_id_shared_with`` finds them: by ``Run.objects.named`` (a text
    runId by the text as sent, on catalog_run_text_idx, its first runs by id; a UUID by the
    key, in job order on catalog_run_uuid_job_uniq). A text runId's runs have a run_uuid
    each, so looking for the run's own run_uuid listed none (ADR 0202). At most
    ``SHARERS_SHOWN`` + 2 runs are read (``run``, the others shown, one to know there are
    more): an Airflow runId thousands of DAGs sent is not read whole."""
    read = SHARERS_SHOWN + 2
    runs = list(
        Run.objects.named(run_id, jobs_limit=read).select_related("job").order_by("job_id")[:read]
    )
    others = [other for other in runs if other.shares_run_id and other.id != run.id]
    return format_html(
        "<strong>runId also sent by another job</strong> (ADR 0028): {}{}",
        format_html_join(
            ", ",
            "{} ({})",
            ((link(o, o.run_uuid), link(o.job)) for o in others[:SHARERS_SHOWN]),
        ),
        f" (only the runId's first {read} runs were read)" if len(runs) == read else "",
    )


class RederiveSinceForm(forms.Form):
    since = forms.DateTimeField(
        help_text="UTC, e.g. 2026-11-28 00:00. Events with eventTime from then on, and every "
        "event of their runs, are derived again on top of the current catalog."
    )


admin.site.unregister(Event)


@admin.register(Event)
class CatalogEventAdmin(EventAdmin):
    """The ingest Event admin plus links into the catalog (ingest itself knows no catalog)."""

    list_display = (*EventAdmin.list_display, "error_summary")
    list_filter = (*EventAdmin.list_filter, EventDatasetFilter, EventAliasFilter)
    fields = (*EventAdmin.fields[:-1], "catalog_links", EventAdmin.fields[-1])
    readonly_fields = fields
    actions = ["rederive_selected"]

    def get_urls(self) -> list[Any]:
        urls = [
            path(
                "rederive/",
                self.admin_site.admin_view(self.rederive_view),
                name="catalog_rederive",
            ),
            path(
                "rederive/<int:job_id>/",
                self.admin_site.admin_view(self.rederive_progress_view),
                name="catalog_rederive_progress",
            ),
        ]
        return urls + super().get_urls()

    def has_rederive_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("ingest.rederive_event")

    @admin.display(description="derivation error")
    def error_summary(self, event: Event) -> str:
        return redact_text(event.derivation_error or "")[:120]

    @admin.display(description="derived into")
    def catalog_links(self, event: Event) -> str:
        parts = []
        if event.job_name:
            job = Job.objects.for_name(event.job_namespace or "", event.job_name).first()
            parts.append(format_html("job: {}", link(job)))
        if event.run_id:
            run = (
                Run.objects.for_run_id(
                    event.run_id, event.job_namespace or "", event.job_name or ""
                )
                .filter(job__namespace=event.job_namespace or "", job__name=event.job_name or "")
                .first()
            )
            parts.append(format_html("run: {}", link(run, run.run_uuid if run else None)))
            if run is not None and run.shares_run_id:
                parts.append(_sharers(event.run_id, run))
        parts.append(
            related_table(
                EventDataset.objects.filter(event=event)
                .select_related("alias__dataset")
                .order_by("role", "id"),
                [
                    ("role", lambda row: row.role),
                    ("dataset", lambda row: link(row.alias.dataset)),
                    ("as alias", lambda row: link(row.alias)),
                ],
                empty="no datasets",
            )
        )
        return format_html(
            "<div>{}</div>", format_html_join("<br>", "{}", ((part,) for part in parts))
        )

    @admin.action(
        description="Re-derive selected events (in the background)", permissions=["rederive"]
    )
    def rederive_selected(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        most = rederive_jobs.MAX_SELECTED_EVENTS
        ids = list(queryset.order_by().values_list("id", flat=True)[: most + 1])
        if len(ids) > most:
            self.message_user(
                request,
                f"More than {most} events: use “re-derive since”.",
                messages.ERROR,
            )
            return None
        job_id = rederive_jobs.schedule_rederive(request.user, event_ids=ids, reason="admin action")
        return HttpResponseRedirect(reverse("admin:catalog_rederive_progress", args=[job_id]))

    def rederive_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_rederive_permission(request):
            raise PermissionDenied
        form = RederiveSinceForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            job_id = rederive_jobs.schedule_rederive(
                request.user, since=form.cleaned_data["since"], reason="admin: since"
            )
            return HttpResponseRedirect(reverse("admin:catalog_rederive_progress", args=[job_id]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Re-derive events",
            "form": form,
            "jobs": rederive_jobs.recent_rederives(),
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/catalog/rederive.html", context)

    def rederive_progress_view(self, request: HttpRequest, job_id: int) -> HttpResponse:
        if not (self.has_rederive_permission(request) or self.has_view_permission(request)):
            raise PermissionDenied
        job = RederiveJob.objects.select_related("requested_by").filter(pk=job_id).first()
        if job is None:
            return HttpResponseRedirect(reverse("admin:catalog_rederive"))
        context = {
            **self.admin_site.each_context(request),
            "title": f"Re-derive #{job_id}: {job.description}",
            "job": job,
            "opts": self.model._meta,
            "events_url": changelist_url(Event),
        }
        return TemplateResponse(request, "admin/catalog/rederive_progress.html", context)


# --- the admin log: every curation, with who and when ---------------------------------------


@admin.register(LogEntry)
class LogEntryAdmin(NewestRowsSearchMixin, BoundedAdmin):
    list_display = ("action_time", "user", "content_type", "object_link", "action_flag", "message")
    # A rare action (a deletion) in the list's order: catalog_admin_log_flag_idx
    # (action_flag, id); without it the page and its count walked the whole log (ADR 0195).
    # A content type: Django's own index on it.
    list_filter = ("action_flag", "content_type")
    list_select_related = ("user", "content_type")
    # A word of the object's name or of the change, in the newest entries only: an
    # icontains over every entry read the whole log, for the page and again for its count
    # (ADR 0195). Older entries are found by their filters.
    search_fields = ("object_repr", "change_message")
    search_help_text = (
        f"Words of the object or the change, in the newest {SEARCHED_ROWS:,} entries "
        "(older ones: filter by action or content type)."
    )
    # Newest first by id, the primary key's order: Django's log has no index on
    # action_time, so "-action_time" sorted the whole log on every visit (ADR 0193). An
    # entry's time is taken as it is written, so the two orders are the same list.
    ordering = ("-id",)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        """Only entries about objects the user may view in the admin: an entry names its
        object and says what changed, so without this the log would show readers the API
        tokens and webhook subscriptions (and users) their own pages refuse them. Entries
        about a model the admin does not register (re-derive jobs) stay shown to all. What
        is retired is left out for whoever does not see it (catalog/admin/visibility.py)."""
        entries = hide_retired_log_entries(super().get_queryset(request), request.user)
        if request.user.is_superuser:
            return entries
        refused = [
            ContentType.objects.get_for_model(model).pk
            for model, model_admin in self.admin_site._registry.items()
            if not model_admin.has_view_permission(request)
        ]
        return entries.exclude(content_type_id__in=refused).exclude(content_type=None)

    @admin.display(description="object")
    def object_link(self, entry: LogEntry) -> str:
        url = entry.get_admin_url()
        return (
            format_html('<a href="{}">{}</a>', url, entry.object_repr) if url else entry.object_repr
        )

    @admin.display(description="change")
    def message(self, entry: LogEntry) -> str:
        try:
            parts = json.loads(entry.change_message)
        except ValueError:
            parts = None
        if isinstance(parts, list):
            curations = [
                part["curation"] for part in parts if isinstance(part, dict) and "curation" in part
            ]
            if curations:
                return "; ".join(str(part.get("message", "")) for part in curations)
        return entry.get_change_message()
