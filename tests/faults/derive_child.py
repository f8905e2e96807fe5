"""A derivation in a process of its own, for the fault test that SIGKILLs one mid-write
(tests/faults/test_change_key_kill.py): ``python -m tests.faults.derive_child STEP`` with
DATABASE_URL set. Steps: ``second`` stores orders' second schema (committed) and derives
it (the step the test kills), ``drain`` derives whatever is pending. Each prints one line
of what it did."""

import sys

import django


def main(step: str) -> None:
    django.setup()
    from catalog.services.derive import derive_events, drain_pending
    from tests.api.test_changes import V2, load
    from tests.catalog.helpers import openlineage, store

    if step == "second":
        ids = store([openlineage(load(V2, 100, 1))])
        print(f"stored {ids}", flush=True)
        result = derive_events(ids)
    elif step == "drain":
        result, _ = drain_pending()
    else:
        raise SystemExit(f"unknown step {step!r}")
    print(f"{step} derived={result.derived} failed={result.failed}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
