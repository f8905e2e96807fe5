"""tests/faults/processes.py's ``stop_together``: every service is sent SIGTERM before any is
waited for, so their shutdowns overlap (ADR 0205)."""

import sys
from pathlib import Path

from tests.faults import processes

# On SIGTERM: say so in its own file, then end only once the other one has said so too. Stopped
# one after the other, the first would wait for a signal the second is sent only after the
# first has ended: Service.stop's 15 s, then SIGKILL.
RENDEZVOUS = """
import pathlib, signal, sys, time
mine, other = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def ended(*_):
    mine.touch()
    while not other.exists():
        time.sleep(0.01)
    sys.exit(0)
signal.signal(signal.SIGTERM, ended)
mine.with_suffix(".ready").touch()
while True:
    time.sleep(1)
"""


def test_services_stopped_together_each_see_the_others_signal(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    services = [
        processes.Service(
            [sys.executable, "-c", RENDEZVOUS, str(mine), str(other)], {}, tmp_path / "log"
        ).start()
        for mine, other in ((first, second), (second, first))
    ]
    try:
        processes.wait_for(
            lambda: all(path.with_suffix(".ready").exists() for path in (first, second)),
            30,
            "both to set their handlers",
            0.01,
        )
        processes.stop_together(*services)
    finally:
        for service in services:
            service.kill()  # only what is still running: none when the stop worked
    assert [service.process.returncode for service in services if service.process] == [0, 0]
