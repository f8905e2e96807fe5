"""Client CPU per single-event post: openlineage-python's emit against bench.senders.

The soak's load generator shares two cores with the system it measures, so what its client
costs is taken from the server (bench/senders.py). This posts the same number of distinct
events both ways to the shipped web server on a scratch database, and prints the client's
CPU per request for each.

Usage: .venv/bin/python -m bench.client_cpu [--events 1000]
"""

import argparse
import time

import orjson

from bench.common import (
    DEFAULT_CORPUS,
    load_templates,
    make_events,
    migrated_database,
    new_token,
    running_server,
)
from bench.senders import Connection, openlineage_requests, openlineage_transport


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench_client"
    )
    args = parser.parse_args()
    env = migrated_database(args.database_url)
    token = new_token(env, "ingest")
    events = make_events(load_templates(DEFAULT_CORPUS), 2 * args.events + 100)
    warm, through_emit, prepared_bodies = (
        events[:100],
        events[100 : 100 + args.events],
        events[100 + args.events :],
    )
    with running_server(env) as url:
        transport = openlineage_transport(url, token)
        for body in warm:
            transport.emit(orjson.loads(body))
        started = time.process_time()
        for body in through_emit:
            transport.emit(orjson.loads(body))
        emit_ms = (time.process_time() - started) / args.events * 1000

        prepared = openlineage_requests(url, token, prepared_bodies)
        connection = Connection(url, timeout=10)
        started = time.process_time()
        for path, body, headers in prepared:
            status, _ = connection.request("POST", path, body, headers)
            if status not in (200, 201):
                raise SystemExit(f"POST {path}: {status}")
        sent_ms = (time.process_time() - started) / args.events * 1000
    print(f"{args.events} distinct events each way, client CPU per request:")
    print(f"  openlineage-python HttpTransport.emit : {emit_ms:.2f} ms")
    print(f"  bench.senders, built before the run   : {sent_ms:.2f} ms")


if __name__ == "__main__":
    main()
