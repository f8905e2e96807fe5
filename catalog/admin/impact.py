"""The "Impact" view of a dataset or one of its schema fields (ADR 0081).

The report the API serves (``catalog.lineage.impact``), as a page with its controls (plain
GET parameters, so a report is a link a steward can share) and a CSV download of the same
items. Bad control values are named on the page and the default is used instead.
"""

from typing import Any
from urllib.parse import urlencode

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from catalog.admin.visibility import hide_retired
from catalog.lineage import design_time, impact
from catalog.lineage.request import MAX_DEPTH, UnknownNode
from catalog.models import Dataset
from catalog.permissions import VIEW_JOB

# The page shows at most this many items; the CSV download holds up to impact.MAX_ITEMS.
PAGE_ITEMS = 500


def _choice(query: Any, name: str, choices: tuple[str, ...], errors: list[str]) -> str:
    value = query.get(name, "") or choices[0]
    if value not in choices:
        errors.append(f"{name.capitalize()} must be one of {', '.join(choices)}.")
        return choices[0]
    return value


def parse_request(dataset_id: int, query: Any, csv: bool) -> tuple[impact.ImpactRequest, list[str]]:
    """The report the page's controls ask for, and a message per refused value."""
    errors: list[str] = []
    depth_text = query.get("depth", "")
    depth = impact.DEFAULT_DEPTH
    if depth_text:
        if depth_text.isdigit() and 1 <= int(depth_text) <= MAX_DEPTH:
            depth = int(depth_text)
        else:
            errors.append(f"Depth must be a whole number from 1 to {MAX_DEPTH}.")
    return (
        impact.ImpactRequest(
            dataset_id=dataset_id,
            field=query.get("field") or None,
            upstream=_choice(query, "direction", ("downstream", "upstream"), errors) == "upstream",
            depth=depth,
            max_items=impact.MAX_ITEMS if csv else PAGE_ITEMS,
            namespace=query.get("namespace") or None,
            currency=_choice(query, "currency", impact.CURRENCIES, errors),
            lineage=_choice(query, "lineage", design_time.LINEAGES, errors),
        ),
        errors,
    )


def impact_link(dataset_id: int, field: str = "", text: str = "impact") -> str:
    """A link to the Impact view of a dataset (or of one of its fields)."""
    url = reverse("admin:catalog_dataset_impact", args=[dataset_id])
    if field:
        url += "?" + urlencode({"field": field})
    return format_html('<a href="{}">{}</a>', url, text)


class ImpactMixin:
    """Adds ``<dataset id>/impact/`` to the dataset admin."""

    admin_site: Any

    def get_urls(self) -> list[Any]:
        urls = [
            path(
                "<int:dataset_id>/impact/",
                self.admin_site.admin_view(self.impact_view),
                name="catalog_dataset_impact",
            )
        ]
        return urls + super().get_urls()  # type: ignore[misc]

    def impact_view(self, request: HttpRequest, dataset_id: int) -> HttpResponseBase:
        # The report names jobs and their runs' states beside datasets.
        if not (
            self.has_view_permission(request)  # type: ignore[attr-defined]
            and request.user.has_perm(VIEW_JOB)
        ):
            raise PermissionDenied
        csv = request.GET.get("format") == "csv"
        asked, errors = parse_request(dataset_id, request.GET, csv)
        # A retired dataset has no impact page for a reader (ADR 0078): as an unknown id.
        datasets = hide_retired(Dataset.objects.filter(pk=dataset_id), ("pk",), user=request.user)
        dataset = datasets.only("id", "namespace", "name").first()
        report = None
        status = 200
        if dataset is None:
            errors.append(f"No dataset has id {dataset_id}.")
            status = 404
        else:
            try:
                report = impact.report(asked)
            except (UnknownNode, impact.UnknownField):
                errors.append("The dataset has no such field (in its schema or column lineage).")
                status = 404
        if csv and report is not None:
            response = StreamingHttpResponse(impact.csv_chunks(report), content_type="text/csv")
            response["Content-Disposition"] = f'attachment; filename="impact-{dataset_id}.csv"'
            return response
        query = request.GET.copy()
        query["format"] = "csv"
        context = {
            **self.admin_site.each_context(request),
            "title": f"Impact of {dataset}" + (f".{asked.field}" if asked.field else ""),
            "dataset": dataset,
            "asked": asked,
            "errors": errors,
            "report": report,
            "counts": impact.counts(report.items) if report else {},
            "csv_query": query.urlencode(),
            "directions": ("downstream", "upstream"),
            "currencies": impact.CURRENCIES,
            "lineages": design_time.LINEAGES,
            "opts": Dataset._meta,
        }
        return TemplateResponse(
            request, "admin/catalog/dataset/impact.html", context, status=status
        )
