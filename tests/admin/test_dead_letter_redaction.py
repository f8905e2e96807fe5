"""Dead letters are shown redacted in every form their payload takes (issue 38, item 8),
and stewards replay them from the admin, as docs/ingest.md says (issue 38, "Also").

A dead letter holds what a Kafka producer sent and ingest refused: a JSON document, JSON
cut short at the kept prefix, refused JSON, text or binary. The value was redacted as text
only, so ``{"password": {"nested": S}}`` showed S: the key's first word was redacted and the
structure after it was not. The catalog-readers group can read these pages.
"""

import html
import json
import re
from collections import deque
from urllib.parse import urljoin

import pytest
from django.test import Client

from ingest.models import DeadLetter, Event
from tests.admin.conftest import run_event

pytestmark = pytest.mark.django_db
LIST = "/admin/ingest/deadletter/"


def _cut(document: str, after: str) -> bytes:
    """``document`` cut just after ``after``, as a prefix kept of a larger message."""
    return document[: document.index(after) + len(after)].encode()


def _planted() -> list[tuple[str, bytes, bytes | None, str, int | None]]:
    """(reason code, value kept, key, reason, whole size when only a prefix is kept)."""
    deep_text = '{"facet": ' * 70 + '{"passphrase": {"v": "PLANTED10"}}' + "}" * 70
    truncated = json.dumps(
        {"job": {"facets": {"conf": {"credentials": {"deep": ["PLANTED3", {"x": "PLANTED4"}]}}}}}
    )
    escaped = json.dumps({"conf": json.dumps({"password": {"v": "PLANTED5 x"}, "u": 1}), "y": "z"})
    return [
        (
            "invalid-event",
            json.dumps(
                {"eventType": "START", "run": {"facets": {"x": {"password": {"n": "PLANTED1"}}}}}
            ).encode(),
            None,
            "/run/runId: missing",
            None,
        ),
        (
            "invalid-event",
            b'{"secrets": ["x", "PLANTED2"], "api_key": 271828182845}',
            None,
            "-",
            None,
        ),
        ("payload-too-large", _cut(truncated, "PLANTED4"), None, "too large", 10_000),
        ("payload-too-large", _cut(escaped, "PLANTED5"), None, "too large", 10_000),
        (
            "invalid-event",
            b"{}",
            None,
            "/run/runId: {'token': {'nested': 'PLANTED6'}} is not of type 'string'",
            None,
        ),
        ("invalid-json", b"{", b'{"password": ["PLANTED7"]}', "Expecting value", None),
        ("invalid-json", '{"password": {"n": "PLANTED8"}}'.encode("utf-16"), None, "utf-8", None),
        (
            "invalid-json",
            b'{"pwd": {"a": "PLANTED9"}, "pwd": {"a": "PLANTED9b"}}',
            None,
            "dup",
            None,
        ),
        ("too-deep", deep_text.encode(), None, "too deep", None),
        ("invalid-event", b'{"pass\\u0077ord": {"x": "PLANTED11"}}', None, "-", None),
        (
            "invalid-event",
            json.dumps(json.dumps({"secret": {"v": "PLANTED12"}})).encode(),
            None,
            "-",
            None,
        ),
    ]


SECRETS = [f"PLANTED{n}" for n in range(1, 13)] + ["271828182845"]


def _forms(secret: str) -> list[str]:
    """A secret as a page could show it: as is, and as UTF-16 or UTF-32 decoded as UTF-8."""
    return [
        secret,
        *(secret.encode(codec).decode("utf-8", "replace") for codec in ("utf-16-le", "utf-32-le")),
    ]


@pytest.fixture
def letters(db: None) -> list[DeadLetter]:
    made = []
    for offset, (code, value, key, reason, size) in enumerate(_planted()):
        made.append(
            DeadLetter.objects.create(
                topic="lineage",
                partition=0,
                offset=offset,
                kind="openlineage",
                key=key,
                value=value,
                value_size=size or len(value),
                reason_code=code,
                reason=reason,
            )
        )
    return made


def crawl(client: Client) -> dict[str, str]:
    """Every dead-letter page the list links to (change pages, filters, pages), by address."""
    queue, pages = deque([LIST]), {}
    while queue and len(pages) < 200:
        url = queue.popleft()
        if url in pages:
            continue
        response = client.get(url)
        assert response.status_code == 200, url
        pages[url] = response.content.decode()
        for href in re.findall(r'href="([^"#]*)', pages[url]):
            target = urljoin(url, html.unescape(href))
            if target.startswith(LIST) and target not in pages:
                queue.append(target)
    return pages


@pytest.mark.parametrize("who", ["reader", "steward"])
def test_no_dead_letter_page_shows_a_planted_secret(letters, request, who) -> None:
    pages = crawl(request.getfixturevalue(f"{who}_client"))
    change_pages = {url for url in pages if re.search(r"/deadletter/\d+/change/$", url)}
    assert len(change_pages) == len(letters)  # the crawl opened every letter
    for url, page in pages.items():
        text = html.unescape(page)
        for secret in SECRETS:
            for form in _forms(secret):
                assert form not in text, (url, secret)
    first = html.unescape(pages[f"{LIST}{letters[0].id}/change/"])
    # Redacted, not hidden: the rest of the document is there.
    assert '"eventType": "START"' in first and '"password": "***REDACTED***"' in first
    cut = html.unescape(pages[f"{LIST}{letters[2].id}/change/"])
    assert '{"job": {"facets": {"conf": {"credentials": "***REDACTED***"' in cut
    binary = html.unescape(pages[f"{LIST}{letters[6].id}/change/"])
    assert "binary" in binary and "not shown" in binary


def test_a_steward_replays_dead_letters_from_the_admin_and_a_reader_cannot(
    steward_client, reader_client
) -> None:
    event = run_event("replayed", "START", "1b4e28ba-2fa1-11d2-883f-0016d3cca427")
    value = json.dumps(event).encode()
    letter = DeadLetter.objects.create(
        topic="lineage",
        partition=0,
        offset=99,
        kind="openlineage",
        value=value,
        value_size=len(value),
        reason_code="invalid-event",
        reason="refused before a fix",
    )
    action = {"action": "replay_selected", "_selected_action": [letter.id]}
    refused = reader_client.post(LIST, action, follow=True).content.decode()
    assert "Stored" not in refused
    letter.refresh_from_db()
    assert letter.replayed_at is None
    answer = steward_client.post(LIST, action, follow=True).content.decode()
    assert "Stored 1, refused again 0" in answer
    letter.refresh_from_db()
    assert letter.replayed_at is not None
    assert Event.objects.get(id=letter.replayed_event_id).job_name == "replayed"
