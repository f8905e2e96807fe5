"""The fast path's request upkeep: what Django's request signals do for it, for less CPU.

Django's handler sends ``request_started`` and ``request_finished`` around every request,
and the ingest fast path did too (ADR 0006). Their receivers are Django's: ``reset_queries``
and ``close_old_connections`` when a request starts, ``close_old_connections``,
``close_caches`` and ``reset_urlconf`` when it ends. Each reads thread-local state through
asgiref's ``Local`` (an exception raised and caught per read, to learn that no event loop
runs): the two sends were 12-16% of a single-event request's instructions in process
(ADR 0126). On this path two of the five receivers have nothing to do: the fast path opens
no cache (``close_caches``) and never sets a URLconf (``reset_urlconf``; a request Django
handled in the same thread reset its own). So while the signals' receivers are exactly
Django's, the fast path calls the three that matter itself, the same functions in the same
order; with any other receiver connected (or one of Django's disconnected, as a test client
may), it sends the signals as before.
``tests/ingest/test_request_upkeep.py`` checks both ways.

The two functions' own loops (``connections.all(initialized_only=True)``) reach the
thread's connection wrappers through the same ``Local``: two reads per call, each an
exception raised and caught, three calls a request, about a tenth of a single event's
instructions in all (ADR 0136). So the upkeep finds the thread's opened wrappers once per
call with asgiref's own storage lookup (``opened``) and does what each function does to
each of them: clears its query log (``reset_queries``), closes it when unusable or past its
age (``close_if_unusable_or_obsolete``, Django's method, as ``close_old_connections`` calls
it). ``tests/ingest/test_request_upkeep.py`` checks ``opened`` against
``connections.all(initialized_only=True)``.
"""

from typing import Any

from django.core import signals
from django.core.cache import close_caches
from django.core.handlers.base import reset_urlconf
from django.db import close_old_connections, connections, reset_queries
from django.db.backends.base.base import BaseDatabaseWrapper
from django.dispatch.dispatcher import NONE_ID

# Django's receivers of each signal, in the order Django connects them.
STARTED = (reset_queries, close_old_connections)
FINISHED = (close_old_connections, close_caches, reset_urlconf)


def _keys(receivers: tuple[Any, ...]) -> frozenset[tuple[Any, Any]]:
    """The keys Django files these receivers under (a function's id, and any sender)."""
    return frozenset((id(receiver), NONE_ID) for receiver in receivers)


# asgiref's storage lookup, private (asgiref 3.13): without it, Django's functions as before.
ONE_LOOKUP = hasattr(type(connections._connections), "_get_storage")  # type: ignore[attr-defined]


def opened() -> list[BaseDatabaseWrapper]:
    """What ``connections.all(initialized_only=True)`` answers (this thread's, or this
    context's, connection wrappers made so far, in the settings' order), with one lookup of
    the storage instead of two per alias."""
    storage = connections._connections._get_storage()  # type: ignore[attr-defined]
    return [
        wrapper
        for alias in connections.settings
        if (wrapper := getattr(storage, alias, None)) is not None
    ]


class RequestUpkeep:
    def __init__(self, sender: type) -> None:
        self.sender = sender
        self.started_keys = _keys(STARTED)
        self.finished_keys = _keys(FINISHED)

    @staticmethod
    def _only(signal: Any, keys: frozenset[tuple[Any, Any]]) -> bool:
        """Whether ``signal``'s receivers are exactly ``keys`` (Django's, none dead), in any
        order: a receiver disconnected and connected again (as a test may) comes last."""
        receivers = signal.receivers
        return (
            not signal._dead_receivers
            and len(receivers) == len(keys)
            and {entry[0] for entry in receivers} == keys
        )

    def started(self, environ: dict[str, Any]) -> None:
        if not self._only(signals.request_started, self.started_keys):
            signals.request_started.send(sender=self.sender, environ=environ)
        elif ONE_LOOKUP:
            wrappers = opened()
            for wrapper in wrappers:  # reset_queries
                wrapper.queries_log.clear()
            for wrapper in wrappers:  # close_old_connections
                wrapper.close_if_unusable_or_obsolete()
        else:
            reset_queries()
            close_old_connections()

    def finished(self) -> None:
        if not self._only(signals.request_finished, self.finished_keys):
            signals.request_finished.send(sender=self.sender)
        elif ONE_LOOKUP:
            for wrapper in opened():  # close_old_connections
                wrapper.close_if_unusable_or_obsolete()
        else:  # close_caches, reset_urlconf: nothing to do here (either way)
            close_old_connections()
