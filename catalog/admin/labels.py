"""Tags and owners in the admin (ADR 0083): the stewards' own rows (add, hide a producer's,
delete), the columns and filters of the dataset and job lists, each page's entries, and
the tags' descriptions (Marquez's ``PUT /tags/{tag}`` writes the same rows).

A steward's row names its dataset (by any of its names) or job; the service
(catalog.services.labels) stores it by that name, so a rederive keeps it, and projects the
holder's tags and owners at once."""

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from catalog.models import Dataset, Job, LabelTarget, StewardLabel, TagDescription
from catalog.reads import labels as label_reads
from catalog.services import labels
from core.admin_base import BoundedAdmin
from core.admin_scans import SEARCHED_ROWS, NewestRowsFilterMixin, NewestRowsSearchMixin


class StewardLabelForm(forms.ModelForm):
    class Meta:
        model = StewardLabel
        fields = ("target", "namespace", "name", "kind", "field", "key", "value", "hides")
        help_texts = {
            "name": "Any name of the dataset (an alias), or the job's name.",
            "field": "A tag's column; empty for the whole dataset or job.",
            "key": "The tag's key, or the owner's name (e.g. team:data).",
            "value": "The tag's value, or the owner's type (both optional).",
            "hides": "Hide the producer's tag (of this key and column) or owner of this name: "
            "kept, not shown, not found.",
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        namespace, name = data.get("namespace", ""), data.get("name", "")
        if data.get("target") == LabelTarget.JOB:
            holder = Job.objects.for_name(namespace, name).first()
        else:
            holder = Dataset.objects.for_alias(namespace, name).first()
        if holder is None:
            raise forms.ValidationError(f"No {data.get('target')} is named {namespace} {name}.")
        self.holder = holder
        return data


@admin.register(StewardLabel)
class StewardLabelAdmin(NewestRowsSearchMixin, NewestRowsFilterMixin, BoundedAdmin):
    """On the bounded base, not Django's: Marquez's tag endpoints write these rows too, so a
    script can label every column of every dataset, and Django's list counted every label
    and sorted them all by holder on each visit, its search an icontains over all of them
    (ADR 0195). Newest first, by the primary key; searched in the newest rows."""

    readonly = False  # stewards add and delete (a change is a delete and an add)
    form = StewardLabelForm
    list_display = ("__str__", "target", "kind", "key", "value", "field", "hides", "created_by")
    list_filter = ("target", "kind", "hides")
    # In no index: filtered by them, the newest 10,000 labels are searched (ADR 0208).
    scanned_columns = {"target": frozenset(), "kind": frozenset(), "hides": frozenset()}
    ordering = ("-id",)
    search_fields = ("key", "name")
    search_help_text = (
        f"Words of the key or the dataset's or job's name, in the newest {SEARCHED_ROWS:,} labels."
    )

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # delete and add again: one statement, one row

    def save_model(self, request: HttpRequest, obj: StewardLabel, form: Any, change: bool) -> None:
        data = form.cleaned_data
        saved = labels.label_holder(
            request.user,
            form.holder,
            data["kind"],
            data["key"],
            data.get("value", ""),
            data.get("field", ""),
            data.get("hides", False),
        )
        obj.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: StewardLabel) -> None:
        labels.unlabel(request.user, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for label in queryset:
            labels.unlabel(request.user, label)


class TagDescriptionForm(forms.ModelForm):
    class Meta:
        model = TagDescription
        fields = ("name", "description")
        widgets = {"description": forms.Textarea(attrs={"rows": 4})}
        help_texts = {
            "name": "The tag as Marquez names it: its key, or key:value.",
            "description": "Shown with the tag on Marquez's GET /tags.",
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        name = str(data.get("name") or getattr(self.instance, "name", "") or "")
        problem = labels.tag_description_problem(name, data.get("description", ""))
        if problem is not None:
            raise forms.ValidationError(problem)
        return data


@admin.register(TagDescription)
class TagDescriptionAdmin(admin.ModelAdmin):
    form = TagDescriptionForm
    list_display = ("name", "description", "updated_at", "created_by")
    search_fields = ("name",)
    ordering = ("name",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("name",) if obj is not None else ()  # another name is another tag's row

    def save_model(
        self, request: HttpRequest, obj: TagDescription, form: Any, change: bool
    ) -> None:
        saved = labels.describe_tag(request.user, obj.name, obj.description)
        obj.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: TagDescription) -> None:
        labels.forget_tag_description(request.user, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for row in queryset:
            labels.forget_tag_description(request.user, row)


class _LabelFilter(admin.SimpleListFilter):
    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        return self.filtered(queryset, value) if value else queryset

    def filtered(self, queryset: Any, value: str) -> QuerySet:
        raise NotImplementedError


def _in_use(request: HttpRequest, model: Any) -> tuple[list[str], list[str]]:
    """The tag and owner names of ``model`` in use, read once for both filters of a page
    (kept on the request: the page's two filters ask in turn)."""
    memo = request.__dict__.setdefault("_labels_in_use", {})
    if model not in memo:
        memo[model] = label_reads.names_in_use(model)
    return memo[model]


class TagFilter(_LabelFilter):
    title, parameter_name = "tag", "tag"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(name, name) for name in _in_use(request, model_admin.model)[0]]

    def filtered(self, queryset: Any, value: str) -> QuerySet:
        return queryset.tagged(value)


class OwnerFilter(_LabelFilter):
    title, parameter_name = "owner", "owner"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(name, name) for name in _in_use(request, model_admin.model)[1]]

    def filtered(self, queryset: Any, value: str) -> QuerySet:
        return queryset.owned_by(value)


class LabelColumnsMixin:
    """``tag_list``/``owner_list`` columns and the ``labels_table`` of a change page."""

    @admin.display(description="tags")
    def tag_list(self, holder: Dataset | Job) -> str:
        return ", ".join(_said(entry) for entry in holder.tags if not entry.get("hidden"))

    @admin.display(description="owners")
    def owner_list(self, holder: Dataset | Job) -> str:
        return ", ".join(entry["name"] for entry in holder.owners if not entry.get("hidden"))

    @admin.display(description="tags and owners")
    def labels_table(self, holder: Dataset | Job) -> str:
        rows = [("tag", _said(entry), entry) for entry in holder.tags]
        rows += [("owner", entry["name"], entry) for entry in holder.owners]
        table = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (kind, said, entry.get("source", ""), "hidden" if entry.get("hidden") else "")
                for kind, said, entry in rows
            ),
        )
        return format_html(
            "<table><tr><th>kind</th><th>tag or owner</th><th>source</th><th></th></tr>{}</table>",
            table,
        )

    @admin.display(description="steward's labels")
    def labels_add_link(self, holder: Dataset | Job) -> str:
        """Shown to those who may add one (``field_permissions``: ``LABEL_ADD``)."""
        target = LabelTarget.DATASET if isinstance(holder, Dataset) else LabelTarget.JOB
        query = urlencode({"target": target, "namespace": holder.namespace, "name": holder.name})
        add = reverse("admin:catalog_stewardlabel_add") + "?" + query
        return format_html('<a href="{}">add a tag or owner, or hide one</a>', add)


# The permission the add link needs (a reader sees the table, not the link).
LABEL_ADD = "catalog.add_stewardlabel"


def _said(entry: dict[str, Any]) -> str:
    said = f"{entry['key']}={entry['value']}" if entry.get("value") else entry["key"]
    return f"{entry['field']}: {said}" if entry.get("field") else said
