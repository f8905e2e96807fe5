"""Alias rules: previewed before saving, applied (re-deriving what they regroup) after."""

import re
from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html

from catalog.models import (
    AliasRule,
)
from catalog.services import curation
from catalog.services.rule_files import RULE_FIELDS

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups


# --- alias rules: preview before saving, apply after ----------------------------------------


class AliasRuleForm(forms.ModelForm):
    class Meta:
        model = AliasRule
        fields = ("slug", *RULE_FIELDS)

    def clean_name_pattern(self) -> str:
        pattern = self.cleaned_data["name_pattern"]
        try:
            re.compile(pattern)
        except re.error as error:
            raise forms.ValidationError(f"Not a valid regular expression: {error}") from error
        return pattern


@admin.register(AliasRule)
class AliasRuleAdmin(admin.ModelAdmin):
    form = AliasRuleForm
    # The rule's own fields but its free-text description, then who and when.
    list_display = (
        "slug",
        *(name for name in RULE_FIELDS if name != "description"),
        "created_by",
        "updated_at",
    )
    list_filter = ("action", "enabled")
    list_select_related = ("created_by",)
    search_fields = ("slug", "namespace", "target_namespace", "description")
    readonly_fields = ("created_by", "created_at", "updated_at")
    actions = ["disable_rules", "enable_rules"]
    change_form_template = "admin/catalog/aliasrule/change_form.html"

    def get_fields(self, request: HttpRequest, obj: Any = None) -> "_FieldGroups":
        return [*AliasRuleForm.Meta.fields, *self.readonly_fields]

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        if request.method == "POST" and "_preview" in request.POST:
            return self._preview_view(request, object_id, form_url, extra_context)
        return super().changeform_view(request, object_id, form_url, extra_context)

    def _preview_view(
        self,
        request: HttpRequest,
        object_id: str | None,
        form_url: str,
        extra_context: dict[str, Any] | None,
    ) -> HttpResponse:
        """Validate the posted rule and show what it would regroup, without saving."""
        add = object_id is None
        obj = None if object_id is None else self.get_object(request, unquote(object_id))
        if add and not self.has_add_permission(request):
            raise PermissionDenied
        if not add and (obj is None or not self.has_change_permission(request, obj)):
            raise PermissionDenied
        form_class = self.get_form(request, obj, change=not add)
        form = form_class(request.POST, request.FILES, instance=obj)
        preview = None
        if form.is_valid():
            candidate = form.save(commit=False)
            preview = curation.preview_rule(candidate)
        fieldsets = self.get_fieldsets(request, obj)
        admin_form = helpers.AdminForm(
            form,
            # As Django's own changeform_view does; the stubs type the two sides differently.
            cast(list[tuple[Any, dict[str, list[str]]]], list(fieldsets)),
            self.get_prepopulated_fields(request, obj),
            self.get_readonly_fields(request, obj),
            model_admin=self,
        )
        context = {
            **self.admin_site.each_context(request),
            "title": ("Add" if add else "Change") + " alias rule: preview",
            "subtitle": None,
            "adminform": admin_form,
            "object_id": object_id,
            "original": obj,
            "is_popup": False,
            "to_field": None,
            "media": self.media + admin_form.media,
            "inline_admin_formsets": [],
            "errors": helpers.AdminErrorList(form, []),
            "preview": preview,
            "preview_limit": curation.PREVIEW_LIMIT,
            "preserved_filters": self.get_preserved_filters(request),
            **(extra_context or {}),
        }
        return self.render_change_form(
            request, context, add=add, change=not add, obj=obj, form_url=form_url
        )

    def save_model(self, request: HttpRequest, obj: AliasRule, form: Any, change: bool) -> None:
        if obj.created_by_id is None:
            if not request.user.is_authenticated:  # the admin only serves staff users
                raise PermissionDenied
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
        events, job_id = curation.apply_rule(obj, request.user)
        if job_id is not None:
            url = reverse("admin:catalog_rederive_progress", args=[job_id])
            self.message_user(
                request,
                format_html(
                    'Re-deriving {} event(s) in the background: <a href="{}">progress</a>.',
                    events,
                    url,
                ),
            )
        elif events:
            self.message_user(request, f"Re-derived {events} event(s) named by the rule.")
        if change and not obj.enabled:
            self.message_user(
                request,
                "A disabled rule stops applying to new events; run a full rederive to undo "
                "the groupings it already made.",
                messages.WARNING,
            )

    @admin.action(description="Disable selected rules", permissions=["change"])
    def disable_rules(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_enabled(request, queryset, False)

    @admin.action(description="Enable selected rules", permissions=["change"])
    def enable_rules(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_enabled(request, queryset, True)

    def _set_enabled(self, request: HttpRequest, queryset: QuerySet, enabled: bool) -> None:
        rules = list(queryset.exclude(enabled=enabled))
        for rule in rules:
            rule.enabled = enabled
            rule.save(update_fields=["enabled", "updated_at"])
            self.log_change(request, rule, [{"changed": {"fields": ["Enabled"]}}])
            if enabled:
                curation.apply_rule(rule, request.user)
        verb = "Enabled" if enabled else "Disabled"
        self.message_user(request, f"{verb} {len(rules)} rule(s).")
