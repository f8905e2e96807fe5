"""The OpenAPI contract: committed, in sync with the code, and honoured by every response."""

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, Phase, given, settings

from api.pagination import EXAMPLE_API
from tests import fast_yaml

ROOT = Path(__file__).resolve().parent.parent.parent
COMMITTED = ROOT / "docs" / "openapi.yaml"
READ_PATHS = (
    "/api/v1/namespaces",
    "/api/v1/jobs",
    "/api/v1/runs",
    "/api/v1/datasets",
    "/api/v1/lineage/",
    "/api/v1/search",
    "/api/v1/events",
    "/api/v1/stats",
)


def test_committed_schema_matches_the_code(tmp_path):
    generated = tmp_path / "openapi.yaml"
    call_command("spectacular", "--file", str(generated))
    assert fast_yaml.load(generated.read_text()) == fast_yaml.load(COMMITTED.read_text()), (
        "docs/openapi.yaml is stale: run `make schema` and commit it."
    )


def test_page_link_examples_are_this_apis_own_lists():
    """Swagger shows ``next``/``previous`` examples as this API's answers: each is a list of
    this API (DRF's defaults named api.example.org/accounts, one with a stray quote)."""
    schema = fast_yaml.load(COMMITTED.read_text())
    lists = {path.removeprefix("/api/v1/") for path in schema["paths"]}
    links = re.findall(r"(?:next|previous|example): (https?://\S+)", COMMITTED.read_text())
    assert links
    for link in links:
        assert link.startswith(EXAMPLE_API), link
        assert urlsplit(link).path.removeprefix("/api/v1/") in lists, link


def test_every_read_operation_documents_problems():
    schema = fast_yaml.load(COMMITTED.read_text())
    for path, item in schema["paths"].items():
        if not path.startswith(READ_PATHS) or "get" not in item:
            continue
        responses = item["get"]["responses"]
        assert {"200", "400", "401", "403"} <= set(responses), path
        assert "application/problem+json" in responses["401"]["content"], path


@pytest.fixture
def keep_test_connection():
    """The WSGI app closes "old" connections after each request; Django's test Client stops
    that (it would close the test transaction's connection), and so do we here."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.django_db
def test_schemathesis_finds_no_server_error_or_schema_violation(read_token, keep_test_connection):
    """Property-based requests from the live schema, a few per read operation (bounded)."""
    import schemathesis
    from schemathesis.specs.openapi import checks as openapi_checks

    options = {alias: dict(db["OPTIONS"]) for alias, db in django_settings.DATABASES.items()}
    from config.wsgi import application

    # Importing the web entry point gives the connections this process opens later the web
    # statement timeout (core/statement_timeout.py): the rest of the suite runs without it.
    for alias, saved in options.items():
        django_settings.DATABASES[alias]["OPTIONS"] = saved
    from tests.api.factories import make_column_edge, make_dataset, make_edge, make_job, make_run

    a, b = make_dataset("shop.orders"), make_dataset("shop.orders_clean")
    job = make_job("etl.clean")
    make_edge(a, b, job)
    make_column_edge(a, "id", b, "id", job)
    make_run(job, state="FAIL")

    schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
    headers = {"Authorization": f"Bearer {read_token}"}
    checks = [
        schemathesis.checks.not_a_server_error,
        openapi_checks.status_code_conformance,
        openapi_checks.content_type_conformance,
        openapi_checks.response_schema_conformance,
    ]
    operations = [
        result.ok()
        for result in schema.get_all_operations()
        if result.ok().method.upper() == "GET" and result.ok().path.startswith(READ_PATHS)
    ]
    assert len(operations) >= 14
    failures = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=25,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def run(case):
            # A savepoint per request: one failing request must not poison the next ones.
            with transaction.atomic():
                case.call_and_validate(headers=headers, checks=checks)

        try:
            run()
        except Exception as error:  # collect every operation's failure, then report
            failures.append(f"{operation.method.upper()} {operation.path}: {error}")
    assert not failures, "\n\n".join(failures)
