"""What the per-namespace summary's triggers cost derivation (ADR 0121).

On a store bench/derive.py built (``--curve --streams fleet``: its ``<database>_fleet``),
stores --events more events of the fleet stream from --begin, derives them with
PostgreSQL's function timing on (``track_functions = 'pl'``, this session only), and
prints each trigger function's calls and milliseconds beside derivation's CPU per event
(this process and its backend).

Usage: .venv/bin/python bench/namespace_triggers.py --database URL --begin 10000
       [--events 5000]
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TIMED = """
SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions
WHERE funcname LIKE 'catalog_namespace%%' ORDER BY funcname"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--begin", type=int, required=True, help="the stream's next event")
    parser.add_argument("--events", type=int, default=5000)
    options = parser.parse_args()
    from bench.common import migrated_django_without_broker

    migrated_django_without_broker(options.database, fresh=False)
    from django.db import connection

    from bench.derive import _cpu_seconds, _drain
    from bench.streams import records
    from ingest.services import record_events

    def timed() -> dict[str, tuple[int, float, float]]:
        with connection.cursor() as cursor:
            cursor.execute(TIMED)
            return {name: (calls, total, own) for name, calls, total, own in cursor.fetchall()}

    end = options.begin + options.events
    for offset in range(options.begin, end, 1000):
        record_events(records("fleet", offset, min(1000, end - offset)))
    before = timed()
    with connection.cursor() as cursor:
        cursor.execute("SET track_functions = 'pl'")
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    cpu = time.process_time() + _cpu_seconds(backend)
    derived = _drain(500)
    cpu = time.process_time() + _cpu_seconds(backend) - cpu
    connection.close()  # the session's function timings are reported when it ends
    time.sleep(1.5)
    after = timed()
    print(f"{'function':40} {'calls':>6} {'total ms':>9} {'self ms':>8}")
    spent = 0.0
    for name, (calls, total, own) in after.items():
        was = before.get(name, (0, 0.0, 0.0))
        spent += own - was[2]
        print(f"{name:40} {calls - was[0]:6} {total - was[1]:9.1f} {own - was[2]:8.1f}")
    print(
        f"{derived:,} events derived: {cpu * 1000 / derived:.3f} ms CPU/event (process and "
        f"backend); the triggers {spent:.1f} ms, {spent / derived:.4f} ms/event"
    )


if __name__ == "__main__":
    main()
