"""Django's PostgreSQL backend, and one thing more: a kept connection that PostgreSQL closed
is replaced before a request uses it (ADR 0146).

Connections are kept between requests (``CONN_MAX_AGE``) and, for the ingest hot path,
not pinged before each one (``CONN_HEALTH_CHECKS`` off: a round trip per request). When
PostgreSQL restarts, or a backend is terminated (``pg_terminate_backend``, a failover, an
idle timeout), every kept connection is dead, and each web thread found out by answering
its next request with a 503: after a restart, one 503 per thread, whenever that thread next
served something, long after PostgreSQL was back. (Celery's workers close their connection
after every task and are not concerned.)

A backend that ends closes its socket, mostly after a last FATAL message. So where Django
decides whether to keep a connection, at the start and end of every request
(``close_if_unusable_or_obsolete``: Django's request signals, and the front paths' upkeep,
ingest/request_upkeep.py), an idle connection whose socket has something to read
is closed: an idle session is rarely sent anything else (a reported setting the
administrator changed and reloaded; a notification, and this service listens for none),
and the cost of being wrong is one reconnect. One ``poll`` with no wait,
no round trip. A connection cut silently (no FIN: a network partition) still fails on use,
as before, and is replaced after it. A connection that is not idle (a transaction open, the
Kafka consumer's INSERT in flight) belongs to the code running it and is left alone; in an
atomic block Django's own check closes it anyway.
"""

import select

import psycopg
from django.db.backends.postgresql import base

IDLE = psycopg.pq.TransactionStatus.IDLE


def closed_by_server(raw: psycopg.Connection) -> bool:
    """Whether idle connection ``raw``'s socket has something to read (PostgreSQL's last
    message, or end of file): its backend ended. A connection that is not idle has answers
    to read and is not asked."""
    if raw.closed:
        return False  # Django's own checks handle a connection psycopg already closed
    if raw.pgconn.transaction_status != IDLE:
        return False
    waiting = select.poll()
    waiting.register(raw.pgconn.socket, select.POLLIN)
    return bool(waiting.poll(0))


class DatabaseWrapper(base.DatabaseWrapper):
    def close_if_unusable_or_obsolete(self) -> None:
        super().close_if_unusable_or_obsolete()
        if self.connection is not None and closed_by_server(self.connection):
            self.close()
