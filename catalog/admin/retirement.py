"""Retire and restore in the admin (ADR 0078): an action on the dataset and job lists (with
the reason the steward gives), a retire or restore button on each page, and the list of
retirements (the history, namespaces included) with its restore action.

Lists hide what is retired unless the "retired" filter asks; a page by id still opens and
says who retired it, when and why. Every act goes through catalog.services.retirement.
"""

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from catalog.admin.support import selection
from catalog.admin.visibility import viewer_sees_retired
from catalog.models import Dataset, Job, NamespacePurge, RetiredKind, Retirement
from catalog.services import retirement
from catalog.services.retirement import Actor
from core.admin_base import BoundedAdmin

REASON_LENGTH = 500
# What one retire or restore action does: the rest of a larger selection is refused, said.
MAX_SELECTED = 100


def selected(request: HttpRequest, queryset: QuerySet, admin_: Any) -> list[Any] | None:
    """The selection, or None (said) over ``MAX_SELECTED``: the actions did the first 100
    and said nothing of the rest (a namespace retirement took the namespaces of the first
    100 rows only)."""
    hint = " (filter the list first, or retire a whole namespace from one of its rows)"
    return selection(request, queryset, admin_, MAX_SELECTED, hint)


class RetiredFilter(admin.SimpleListFilter):
    title = "retired"
    parameter_name = "retired"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        # A catalog reader does not see what is retired (ADR 0078): nothing to offer.
        kind = model_admin.model._meta.model_name
        if not viewer_sees_retired(kind, request.user):
            return []
        return [("yes", "Retired"), ("all", "All")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == "all":
            return queryset
        return queryset.retired() if value == "yes" else queryset.current()  # type: ignore[attr-defined]


class RetireMixin:
    """For the dataset and job admins: the filter, the actions, the page's button."""

    retire_actions = ["retire_action", "restore_action", "retire_namespace_action"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Every list, search, autocomplete and page by id starts here: for a user who does
        # not see what is retired (a catalog reader), it is gone, as in the read API.
        queryset = super().get_queryset(request)  # type: ignore[misc]
        if viewer_sees_retired(self.model._meta.model_name, request.user):  # type: ignore[attr-defined]
            return queryset
        return queryset.current()

    def has_curate_permission(self, request: HttpRequest) -> bool:
        meta = self.model._meta  # type: ignore[attr-defined]
        return bool(request.user.has_perm(f"{meta.app_label}.change_{meta.model_name}"))

    def get_urls(self) -> list[Any]:
        meta = self.model._meta  # type: ignore[attr-defined]
        own = [
            path(
                "<int:object_id>/retire/",
                self.admin_site.admin_view(self.retire_view),  # type: ignore[attr-defined]
                name=f"{meta.app_label}_{meta.model_name}_retire",
            )
        ]
        return own + super().get_urls()  # type: ignore[misc]

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        # The page's retirement is read with the row (subqueries), not by a query of its own.
        queryset = self.get_queryset(request).with_retirement()  # type: ignore[attr-defined]
        meta = queryset.model._meta
        field = meta.pk if from_field is None else meta.get_field(from_field)
        try:
            return queryset.get(**{field.name: field.to_python(object_id)})
        except (queryset.model.DoesNotExist, ValueError, ValidationError):
            return None

    @admin.display(description="retirement")
    def retirement_status(self, obj: Any) -> str:
        if getattr(obj, "retired_at", None) is None:
            return "Current."
        return format_html(
            "Retired {} by {}: {}",
            obj.retired_at,
            obj.retired_by,
            obj.retired_reason or "(no reason given)",
        )

    @admin.display(description="retire or restore")
    def retirement_button(self, obj: Any) -> str:
        meta = self.model._meta  # type: ignore[attr-defined]
        url = reverse(f"admin:{meta.app_label}_{meta.model_name}_retire", args=[obj.pk])
        verb = "Retire…" if getattr(obj, "retired_at", None) is None else "Restore…"
        return format_html('<a class="button" href="{}">{}</a>', url, verb)

    def retire_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """The page's button: a form with the reason, then retire (or restore)."""
        obj = self.get_object(request, str(object_id))  # type: ignore[attr-defined]
        meta = self.model._meta  # type: ignore[attr-defined]
        if obj is None or not self.has_curate_permission(request):
            return HttpResponseRedirect(
                reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
            )
        active = retirement.active_retirement(obj)
        if request.method == "POST":
            actor = Actor.of(request.user)
            if active is None:
                retirement.retire(obj, actor, request.POST.get("reason", "")[:REASON_LENGTH])
                self.message_user(request, f"Retired {obj}.", messages.SUCCESS)  # type: ignore[attr-defined]
            else:
                retirement.restore(obj, actor)
                self.message_user(request, f"Restored {obj}.", messages.SUCCESS)  # type: ignore[attr-defined]
            return HttpResponseRedirect(
                reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
            )
        context = {
            **self.admin_site.each_context(request),  # type: ignore[attr-defined]
            "title": f"{'Restore' if active else 'Retire'} {obj}",
            "objects": [obj],
            "opts": meta,
            "restore": active is not None,
        }
        return TemplateResponse(request, "admin/catalog/retirement/retire.html", context)

    @admin.action(
        description="Retire the selected (hidden until restored or named again)",
        permissions=["curate"],
    )
    def retire_action(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        if (chosen := selected(request, queryset, self)) is None:
            return None
        if request.POST.get("confirm") != "yes":
            return self._reason_form(request, chosen, "retire_action", "Retire")
        actor, reason = Actor.of(request.user), request.POST.get("reason", "")[:REASON_LENGTH]
        done = sum(retirement.retire(obj, actor, reason) is not None for obj in chosen)
        self.message_user(request, f"Retired {done} of {len(chosen)}.", messages.SUCCESS)  # type: ignore[attr-defined]
        return None

    @admin.action(description="Restore the selected", permissions=["curate"])
    def restore_action(self, request: HttpRequest, queryset: QuerySet) -> None:
        if (chosen := selected(request, queryset, self)) is None:
            return
        actor = Actor.of(request.user)
        done = sum(retirement.restore(obj, actor) for obj in chosen)
        self.message_user(request, f"Restored {done}.", messages.SUCCESS)  # type: ignore[attr-defined]

    @admin.action(description="Retire the whole namespaces of the selected", permissions=["curate"])
    def retire_namespace_action(
        self, request: HttpRequest, queryset: QuerySet
    ) -> HttpResponse | None:
        if (chosen := selected(request, queryset, self)) is None:
            return None
        namespaces = sorted({obj.namespace for obj in chosen})
        if request.POST.get("confirm") != "yes":
            return self._reason_form(
                request,
                chosen,
                "retire_namespace_action",
                "Retire namespaces",
                namespaces,
            )
        actor, reason = Actor.of(request.user), request.POST.get("reason", "")[:REASON_LENGTH]
        for namespace in namespaces:
            count = retirement.retire_namespace(namespace, actor, reason)
            if count is not None:
                self.message_user(  # type: ignore[attr-defined]
                    request,
                    f"Retired {namespace}: {count.datasets} dataset(s), {count.jobs} job(s).",
                    messages.SUCCESS,
                )
        return None

    def _reason_form(
        self,
        request: HttpRequest,
        chosen: list[Any],
        action: str,
        verb: str,
        namespaces: list[str] | None = None,
    ) -> HttpResponse:
        context = {
            **self.admin_site.each_context(request),  # type: ignore[attr-defined]
            "title": verb,
            "objects": chosen,
            "namespaces": namespaces or [],
            "opts": self.model._meta,  # type: ignore[attr-defined]
            "action": action,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/catalog/retirement/retire.html", context)


@admin.register(Retirement)
class RetirementAdmin(BoundedAdmin):
    """Every retirement, newest first: what, who, when, why, and how it ended."""

    list_display = (
        "kind",
        "what",
        "retired_at",
        "retired_by",
        "reason",
        "restored_at",
        "restored_by",
        "revived_by_event",
    )
    list_filter = ("kind",)
    ordering = ("-id",)
    actions = ["restore_action"]

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # The history names what is retired, namespaces too: for those who may restore it.
        return self.has_curate_permission(request) and super().has_view_permission(request, obj)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.has_curate_permission(request) and super().has_module_permission(request)

    @admin.display(description="what")
    def what(self, row: Retirement) -> str:
        if row.kind == RetiredKind.NAMESPACE:
            return row.namespace
        name = "dataset" if row.kind == RetiredKind.DATASET else "job"
        url = reverse(f"admin:catalog_{name}_change", args=[row.object_id])
        return format_html('<a href="{}">{} #{}</a> in {}', url, name, row.object_id, row.namespace)

    def has_curate_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perms(["catalog.change_dataset", "catalog.change_job"]))

    @admin.action(
        description="Restore (a namespace: with everything its retirement retired)",
        permissions=["curate"],
    )
    def restore_action(self, request: HttpRequest, queryset: QuerySet) -> None:
        if (chosen := selected(request, queryset.filter(restored_at__isnull=True), self)) is None:
            return
        actor = Actor.of(request.user)
        for row in chosen:
            if row.kind == RetiredKind.NAMESPACE:
                retirement.restore_namespace(row.namespace, actor)
            else:
                model = Dataset if row.kind == RetiredKind.DATASET else Job
                obj = model.objects.filter(pk=row.object_id).first()
                if obj is not None:
                    retirement.restore(obj, actor)
        self.message_user(request, "Restored.", messages.SUCCESS)


@admin.register(NamespacePurge)
class NamespacePurgeAdmin(BoundedAdmin):
    """What ``manage.py purge_namespace`` did: who, when, rows per table (the name hashed)."""

    list_display = ("purged_at", "purged_by", "namespace_sha256")
    ordering = ("-id",)
