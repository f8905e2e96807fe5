"""Instructions ``core.body_reads.BodyReads`` adds to a request with a body (ADR 0197).

Counted by valgrind (callgrind), which the machine's load does not move: a WSGI application
that reads a 2,000-byte body from ``wsgi.input`` is called --requests times, bare and inside
``BodyReads``, each in a process of its own, and once more with no request at all; the
difference over the requests is each one's cost. bench/ingest_instructions.py counts a whole
single-event request (about 1.06 million instructions), against which this is compared; its
own run-to-run spread (the Django baseline moved 5 % between runs) is larger than this.

Usage: .venv/bin/python -m bench.body_reads_cost [--requests 20000]. Needs valgrind.
"""

import argparse
import io
import os
import re
import subprocess
import sys
import tempfile

BODY = b"x" * 2000


def child(variant: str, requests: int) -> None:
    import django

    django.setup()
    from core.body_reads import TOKEN, BodyReads

    def application(environ: dict[str, object], start_response: object) -> list[bytes]:
        environ["wsgi.input"].read(len(BODY))  # type: ignore[attr-defined]
        return [b""]

    target = BodyReads(application, 7) if variant == "wrapped" else application
    for _ in range(requests):
        environ = {"CONTENT_LENGTH": str(len(BODY)), "wsgi.input": io.BytesIO(BODY), TOKEN: 5}
        target(environ, lambda status, headers: None)


def counted(variant: str, requests: int) -> int:
    """Instructions of a process that serves ``requests`` in ``variant``, start-up included."""
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={scratch}/out",
            sys.executable,
            "-m",
            "bench.body_reads_cost",
            "--child",
            variant,
            "--requests",
            str(requests),
        ]
        env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings.test")
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(done.stderr[-2000:])
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--child", choices=["bare", "wrapped"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.requests)
        return
    each = {}
    for variant in ("bare", "wrapped"):
        start_up = counted(variant, 0)
        each[variant] = (counted(variant, args.requests) - start_up) / args.requests
        print(f"{variant:8} {each[variant]:8,.0f} instructions per request", flush=True)
    print(f"added by BodyReads: {each['wrapped'] - each['bare']:,.0f} instructions per request")


if __name__ == "__main__":
    main()
