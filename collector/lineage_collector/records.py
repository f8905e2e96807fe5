"""What the hooks put on the collector's queue: the kinds of queued tuples and ``JobRun``.

A leaf module (it imports no other part of the collector but event ids), so the context
that creates runs, the runtime that holds the queue and the processor that consumes it can
all import it without importing each other in a circle.
"""

import time
from dataclasses import dataclass, field
from typing import Any

from lineage_collector.events import uuid7

# Kinds of the tuples hooks put on the queue; the worker's Processor dispatches on them.
START, END, SQL, AWS, IO, EVENT = "start", "end", "sql", "aws", "io", "event"


@dataclass(eq=False)
class JobRun:
    """One run of a job: what the OpenLineage RunEvents of that run are about."""

    name: str
    namespace: str
    run_id: str = field(default_factory=uuid7)
    parent: tuple[str, str, str] | None = None  # (namespace, name, run_id)
    upstream: tuple[tuple[str, str], ...] = ()
    started: float = field(default_factory=time.time)
    token: Any = field(default=None, repr=False)  # the ContextVar token to reset at the end


__all__ = ["AWS", "END", "EVENT", "IO", "SQL", "START", "JobRun"]
