"""A scanned event page reached by a cursor at either end of bigint serves links that work
(ADR 0207). An empty page links back from the cursor's own event, one id past it: from a
forged ``r=1&p=9223372036854775807`` that was ``p=9223372036854775808``, from
``p=-9223372036854775808`` it was ``r=1&p=-9223372036854775809``, positions the list's own
cursor check refuses, so the server answered its own link with a 400. Now the link stays
within bigint and reads the page it names."""

import base64
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

LAST = 2**63 - 1


def _cursor(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _decoded(link: str) -> str:
    return base64.b64decode(parse_qs(urlsplit(link).query)["cursor"][0]).decode()


def _fails() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO ingest_event (kind, event_type, event_time, run_id, job_namespace,
                job_name, producer, payload, digest, derivation_status)
            SELECT 'run', 'FAIL', '2026-01-01T00:00:00Z'::timestamptz + i * interval '1 s',
                'run', 'ends', 'job', 'https://tests/producer', jsonb_build_object('n', i),
                sha256(convert_to('ends:' || i, 'UTF8')), 'derived'
            FROM generate_series(1, 3) AS i RETURNING id"""
        )
        return sorted((row[0] for row in cursor.fetchall()), reverse=True)


def _page(api: Any, cursor: str) -> Any:
    path = f"/api/v1/events?event_type=FAIL&cursor={cursor}"
    return api.get(path, RAW_URI=path)


@pytest.mark.parametrize(
    ("forged", "link", "served"),
    [
        (f"r=1&p={LAST}", "next", f"p={LAST}"),
        (f"p={-(2**63)}", "previous", f"r=1&p={-(2**63)}"),
    ],
)
def test_a_cursor_at_an_end_of_bigint_links_to_a_page_that_is_served(
    api: Any, forged: str, link: str, served: str
) -> None:
    fails = _fails()
    answer = _page(api, _cursor(forged))
    assert answer.status_code == 200, answer.content
    assert answer.json()["results"] == []
    onward = answer.json()[link]
    assert _decoded(onward) == served
    followed = _page(api, parse_qs(urlsplit(onward).query)["cursor"][0])
    assert followed.status_code == 200, followed.content
    assert [event["id"] for event in followed.json()["results"]] == fails
