"""/metrics label values come from closed sets: a client cannot add series (issue 27, item 6).

Invented HTTP methods, unknown URLs (plain, admin, Marquez mount, a Marquez host), odd
status codes, made-up facets and task names: every label value is one of a known set or
``other``, and a second burst of new inventions adds no series at all.
"""

from typing import Any

import pytest
from celery import signals
from django.test import Client
from django.test.utils import override_settings

from ingest import metrics
from tests.deploy.test_metrics import scrape

pytestmark = pytest.mark.django_db
LATENCY = "lineage_http_request_duration_seconds_count"


@pytest.fixture(autouse=True)
def _timed(settings: Any) -> None:
    settings.MIDDLEWARE = ["ingest.metrics.RequestLatencyMiddleware", *settings.MIDDLEWARE]


def _series(name: str) -> set[tuple[tuple[str, str], ...]]:
    return {labels for sample, labels in scrape(Client()) if sample == name}


def _burst(tag: str) -> None:
    client = Client(raise_request_exception=False)
    for index in range(15):
        invented = f"X{tag}{index}"
        client.generic(invented, "/healthz")
        client.generic(invented, f"/api/v1/{tag}/{index}")
        client.get(f"/{tag}-{index}/made/up")
        client.get(f"/marquez/api/v1/{tag}/{index}")
        client.get(f"/admin/{tag}/{index}/")
        client.get(f"/api/v1/{tag}-{index}", HTTP_HOST="marquez.example.com")
        client.generic(invented, "/marquez/api/v1/namespaces")


def test_invented_methods_and_unknown_urls_add_no_series():
    with override_settings(
        MARQUEZ_API={
            "ENABLED": True,
            "HOSTS": ["marquez.example.com"],
            "ALLOW_ANONYMOUS_READS": False,
        }
    ):
        _series(LATENCY)  # the scrape's own series first
        _burst("first")
        after_first = _series(LATENCY)
        _burst("second")
        after_second = _series(LATENCY)
    assert after_second == after_first
    for labels in after_second:
        values = dict(labels)
        assert values["method"] in metrics.METHODS | {"other"}, values
        assert values["status"] in metrics.STATUSES | {"other"}, values
        assert "first" not in values["route"] and "second" not in values["route"], values
    methods = {dict(labels)["method"] for labels in after_second}
    assert "other" in methods and not any(m.startswith("X") for m in methods)


def test_labels_outside_the_closed_sets_are_other():
    assert metrics.request_labels("BREW", "healthz", 418) == ("other", "healthz", "418")
    assert metrics.request_labels("GET", "healthz", 799) == ("GET", "healthz", "other")
    assert metrics.bounded("made-up:facet", metrics.facet_labels()) == "other"
    assert (
        "run:parent" in metrics.facet_labels()
        and "input:dataQualityMetrics" in metrics.facet_labels()
    )
    assert metrics.bounded("events", metrics.KINDS) == "other"


def test_a_route_label_is_always_a_route_of_the_url_map():
    class Match:
        route = "api/v1/<made-up>"

    class Request:
        resolver_match = Match()

    assert metrics.route_label(Request()) == "other"  # type: ignore[arg-type]
    Match.route = "healthz"
    assert metrics.route_label(Request()) == "healthz"  # type: ignore[arg-type]


def test_an_unregistered_task_name_is_other():
    from config.celery import app

    class Task:
        name = "made.up.task"

    Task.app = app  # type: ignore[attr-defined]
    before = metrics.TASK_FAILURES.labels("other")._value.get()
    signals.task_failure.send(sender=Task(), task_id="1", exception=RuntimeError("boom"))
    assert metrics.TASK_FAILURES.labels("other")._value.get() - before == 1
    assert ("made.up.task",) not in {key for key in metrics.TASK_FAILURES._metrics}
