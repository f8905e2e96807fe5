"""Fixtures of the webhook tests: the operator's allowance for loopback receivers (which
every test of real delivery needs, and which one test leaves off to prove the refusal)."""

from collections.abc import Iterator
from typing import Any

import pytest

FAST = {
    "MAX_ATTEMPTS": 3,
    "BACKOFF_SECONDS": 0.0,
    "CONNECT_TIMEOUT_SECONDS": 1.0,
    "READ_TIMEOUT_SECONDS": 0.5,
    "ANSWER_SECONDS": 1.0,
    "MAX_ANSWER_BYTES": 1024,
}


@pytest.fixture
def allow_loopback(settings: Any) -> Iterator[None]:
    settings.WEBHOOKS = {**settings.WEBHOOKS, **FAST, "ALLOW_PRIVATE": True}
    yield


@pytest.fixture
def refuse_private(settings: Any) -> Iterator[None]:
    settings.WEBHOOKS = {
        **settings.WEBHOOKS,
        **FAST,
        "ALLOW_PRIVATE": False,
        "ALLOWED_NETWORKS": [],
    }
    yield
