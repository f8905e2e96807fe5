"""Hand newly stored events to the derivation workers, after commit, without ever failing ingest.

The commit in PostgreSQL is the acknowledgement; the broker is only a nudge. When Redis is
unreachable the publish fails fast (see CELERY_BROKER_TRANSPORT_OPTIONS), ingest skips the
broker for a few seconds, and the periodic sweep derives whatever was not enqueued.
"""

import logging
import time
from collections.abc import Sequence
from functools import partial

from celery import current_app
from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

_skip_broker_until = 0.0


def enqueue_derivation_on_commit(event_ids: Sequence[int]) -> None:
    """Schedule derivation of ``event_ids`` once the surrounding transaction commits."""
    if event_ids:
        transaction.on_commit(partial(_publish, list(event_ids)))


def _publish(event_ids: list[int]) -> None:
    global _skip_broker_until
    if time.monotonic() < _skip_broker_until:
        return
    try:
        current_app.send_task(settings.LINEAGE["DERIVE_TASK"], args=[event_ids])
    except Exception as error:  # the broker is optional for ingest: never fail the request
        _skip_broker_until = time.monotonic() + settings.LINEAGE["ENQUEUE_BACKOFF_SECONDS"]
        logger.warning(
            "enqueue_failed events=%d error=%s backoff_seconds=%s",
            len(event_ids),
            type(error).__name__,
            settings.LINEAGE["ENQUEUE_BACKOFF_SECONDS"],
        )
