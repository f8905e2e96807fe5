"""What is retired is gone from the admin for a user who does not see it (ADR 0078, issue 37).

The read API's rule (``catalog.permissions.sees_retired``): what is retired is for those who
may change it (stewards, who may restore it). A catalog reader gets what a read token gets:
retired datasets and jobs are gone from lists, search, autocomplete, pages by id, the rows
that link to them on other pages (edges, aliases, runs, changes) and the retirements'
history (which names retired namespaces).

The admin's page helpers (a related table on a dataset's page) are called with the object
only, not the request; the middleware keeps the request's user in a context variable for
them, so ``hide_retired`` knows whom a page is drawn for. Outside a request (a shell, a
management command) nothing is hidden.
"""

from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any, ClassVar

from django.contrib.contenttypes.models import ContentType
from django.db.models import Exists, Model, OuterRef, Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.http import HttpRequest, HttpResponse

from catalog.models import Dataset, Job, RetiredKind, Retirement
from catalog.permissions import sees_retired
from core.pages import for_pages

_viewer: ContextVar[Any] = ContextVar("admin_viewer", default=None)

_KINDS: dict[str, tuple[type[Model], RetiredKind]] = {
    "dataset": (Dataset, RetiredKind.DATASET),
    "job": (Job, RetiredKind.JOB),
}


class AdminViewerMiddleware:
    """Keeps the request's user for ``hide_retired`` while the response is made."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not for_pages(request):  # the API draws no admin page (core/pages.py)
            return self.get_response(request)
        token = _viewer.set(getattr(request, "user", None))
        try:
            return self.get_response(request)
        finally:
            _viewer.reset(token)


def viewer_sees_retired(kind: str, user: Any = None) -> bool:
    """Whether ``user`` (default: the request's) sees retired ``kind`` ("dataset", "job");
    True outside a request."""
    user = user if user is not None else _viewer.get()
    return user is None or sees_retired(user, _KINDS[kind][0])


def _retired_at(kind: RetiredKind, path: str) -> Exists:
    return Exists(Retirement.objects.active().filter(kind=kind, object_id=OuterRef(path)))


def hide_retired(
    queryset: QuerySet,
    datasets: Iterable[str] = (),
    jobs: Iterable[str] = (),
    user: Any = None,
) -> QuerySet:
    """``queryset`` without the rows whose dataset (at each path of ``datasets``, e.g.
    "source", "alias__dataset") or job (``jobs``) is retired, unless the user sees those.
    Each is an index probe on the active retirements' unique index, in the same query."""
    for kind, paths in (("dataset", datasets), ("job", jobs)):
        if viewer_sees_retired(kind, user):
            continue
        for path in paths:
            column = "pk" if path == "pk" else f"{path}_id"
            queryset = queryset.exclude(_retired_at(_KINDS[kind][1], column))
    return queryset


def visible_ids(kind: str, ids: Iterable[int]) -> set[int]:
    """Of ``ids`` (of datasets or jobs), those the request's user may see."""
    wanted = set(ids)
    if viewer_sees_retired(kind) or not wanted:
        return wanted
    model = _KINDS[kind][0]
    return set(model.objects.current().filter(pk__in=wanted).values_list("pk", flat=True))  # type: ignore[attr-defined]


def hide_retired_log_entries(entries: QuerySet, user: Any) -> QuerySet:
    """The admin log's ``entries`` without those about a retired dataset or job, unless
    ``user`` sees those: an entry names and links its object (retiring one is an entry)."""
    for kind, (model, retired_kind) in _KINDS.items():
        if viewer_sees_retired(kind, user):
            continue
        # LogEntry.object_id is text (any model's key): the retirement's id is compared as
        # text, so a row of another model (a UUID) is never cast to a number.
        retired = Retirement.objects.active().filter(kind=retired_kind)
        retired = retired.annotate(as_text=Cast("object_id", TextField()))
        entries = entries.exclude(
            Q(content_type=ContentType.objects.get_for_model(model))
            & Exists(retired.filter(as_text=OuterRef("object_id")))
        )
    return entries


class HidesRetiredMixin:
    """For an admin over rows that point at datasets or jobs: its lists, search,
    autocomplete and pages by id leave out the rows pointing at a retired one (for a user
    who does not see them). Subclasses name the paths."""

    retired_datasets: ClassVar[tuple[str, ...]] = ()
    retired_jobs: ClassVar[tuple[str, ...]] = ()

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)  # type: ignore[misc]
        return hide_retired(queryset, self.retired_datasets, self.retired_jobs, user=request.user)
