"""Content negotiation's choice for a request's Accept header and ``?format=`` is made once
per process (core.negotiation, ADR 0123): the same renderer and media type DRF's
negotiation chooses, a refusal refused every time, and a bounded memory."""

from typing import Any

import pytest
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from core import negotiation
from core.negotiation import ProblemContentNegotiation
from core.problems import Problem
from core.rendering import JSONRenderer


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"


ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "application/json; indent=2",
    "text/csv",
    "text/html;q=0.9, application/json;q=0.8, */*;q=0.1",
    "text/*",
]


@pytest.fixture(autouse=True)
def forget() -> Any:
    negotiation._chosen.clear()
    yield
    negotiation._chosen.clear()


def _request(accept: str | None, query: str = "") -> Request:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    return Request(APIRequestFactory().get(f"/api/v1/impact{query}", **headers))


def _drf(request: Request, renderers: list[Any]) -> tuple[type, str]:
    renderer, media_type = DefaultContentNegotiation().select_renderer(request, renderers)
    return type(renderer), media_type


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=json", "?format=csv"])
def test_the_remembered_choice_is_drfs(accept: str | None, query: str) -> None:
    classes = [JSONRenderer, CSVRenderer]
    try:
        expected: Any = _drf(_request(accept, query), [cls() for cls in classes])
    except NotAcceptable:
        expected = NotAcceptable
    for _ in range(3):  # negotiated, then remembered
        renderers = [cls() for cls in classes]
        try:
            renderer, media_type = ProblemContentNegotiation().select_renderer(
                _request(accept, query), renderers
            )
        except NotAcceptable:
            assert expected is NotAcceptable
            continue
        assert (type(renderer), media_type) == expected
        assert any(renderer is candidate for candidate in renderers)  # this request's own
    assert len(negotiation._chosen) == (0 if expected is NotAcceptable else 1)


def test_a_refusal_is_refused_every_time_and_not_remembered() -> None:
    for _ in range(2):
        with pytest.raises(NotAcceptable):
            ProblemContentNegotiation().select_renderer(_request("text/html"), [JSONRenderer()])
        with pytest.raises(Problem):
            ProblemContentNegotiation().select_renderer(
                _request(None, "?format=xml"), [JSONRenderer()]
            )
    assert negotiation._chosen == {}


def test_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(negotiation, "MAX_CHOICES", 2)
    for indent in range(4):
        accept = f"application/json; indent={indent}"
        _, media_type = ProblemContentNegotiation().select_renderer(
            _request(accept), [JSONRenderer()]
        )
        assert media_type == accept
    assert len(negotiation._chosen) == 2
    ProblemContentNegotiation().select_renderer(_request("*/*" + " " * 300), [JSONRenderer()])
    assert len(negotiation._chosen) == 2


@pytest.mark.django_db
def test_an_indented_answer_stays_indented(read_client: Any) -> None:
    for _ in range(2):
        response = read_client.get("/api/v1/stats", HTTP_ACCEPT="application/json; indent=2")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert response.content.startswith(b"{\n  ")


def test_a_header_longer_than_the_bound_is_answered_and_never_remembered() -> None:
    # With room left in the memory: a client choosing long headers (each a new key of up to
    # the server's header size) must not fill it with them (MAX_ACCEPT).
    long = "application/json, " + "text/plain;q=0.1, " * (negotiation.MAX_ACCEPT // 18)
    assert len(long) > negotiation.MAX_ACCEPT
    for _ in range(2):
        _, media_type = ProblemContentNegotiation().select_renderer(
            _request(long), [JSONRenderer()]
        )
        assert media_type == "application/json"
    assert negotiation._chosen == {}
    at_bound = long[: negotiation.MAX_ACCEPT].rstrip(", ")
    ProblemContentNegotiation().select_renderer(_request(at_bound), [JSONRenderer()])
    assert len(negotiation._chosen) == 1
