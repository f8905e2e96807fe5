"""Minimal admin registrations; the steward admin is a later issue."""

from django.contrib import admin

from catalog.models import (
    AliasRule,
    Dataset,
    DatasetAlias,
    Job,
    LineageEdge,
    MetadataRecord,
    Run,
)


@admin.register(AliasRule)
class AliasRuleAdmin(admin.ModelAdmin):
    list_display = ["slug", "action", "namespace", "name_pattern", "target_namespace", "enabled"]
    list_filter = ["action", "enabled"]
    search_fields = ["slug", "namespace", "target_namespace"]

    def save_model(self, request, obj, form, change):  # type: ignore[no-untyped-def]
        if obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["namespace", "name", "job_type", "is_placeholder", "last_seen"]
    search_fields = ["name"]
    raw_id_fields = ["parent"]
    show_full_result_count = False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["run_uuid", "job", "state", "started_at", "ended_at"]
    list_filter = ["state"]
    raw_id_fields = ["job", "parent_run"]
    show_full_result_count = False


class DatasetAliasInline(admin.TabularInline):
    model = DatasetAlias
    fields = ["namespace", "name", "reason", "reason_detail", "reason_event", "reason_rule"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["namespace", "name", "lifecycle_state", "last_seen"]
    search_fields = ["name"]
    inlines = [DatasetAliasInline]
    show_full_result_count = False


@admin.register(LineageEdge)
class LineageEdgeAdmin(admin.ModelAdmin):
    list_display = ["source", "target", "job", "run_count", "first_seen", "last_seen"]
    raw_id_fields = ["source", "target", "job", "last_run"]
    show_full_result_count = False


@admin.register(MetadataRecord)
class MetadataRecordAdmin(admin.ModelAdmin):
    list_display = ["subject", "action", "resource", "timestamp"]
    raw_id_fields = ["event"]
    show_full_result_count = False
