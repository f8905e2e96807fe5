"""A pytest run started by a bench script (bench/test_files_alternately.py,
bench/suite_workers.py): timed from outside, the load at its start, its tests' CPU seconds
from ``--cpu-durations``' total line (tests/cpu_report.py), and a failed run's whole output
kept in a file it names, to read why (a fixture's timeout under load, a real failure)."""

import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# "tests' CPU in all: 442.0s over 2372 tests (per worker: gw0 100.2, gw1 94.5; ...)"
CPU = re.compile(r"tests' CPU in all: ([\d.]+)s(?: over \d+ tests \(per worker: ([^;]*);)?")


@dataclass(frozen=True)
class PytestRun:
    stdout: str
    stderr: str
    wall: float  # the process's seconds, start-up and collection included
    load: float  # the 1-minute load average at its start
    tests_cpu: float  # NaN without ``--cpu-durations``
    per_worker: str  # xdist's split of the tests' CPU, "" without xdist
    failure: str  # "" when it passed, else "FAILED (code, output in FILE)"


def run_pytest(command: list[str], cwd: Path, failed_log_prefix: str) -> PytestRun:
    load = os.getloadavg()[0]
    started = time.monotonic()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall = time.monotonic() - started
    failure = ""
    if result.returncode != 0:
        log = Path(tempfile.mkstemp(prefix=failed_log_prefix, suffix=".log")[1])
        log.write_text(result.stdout + result.stderr)
        failure = f"FAILED ({result.returncode}, output in {log})"
    cpu = CPU.search(result.stdout)
    return PytestRun(
        stdout=result.stdout,
        stderr=result.stderr,
        wall=wall,
        load=load,
        tests_cpu=float(cpu.group(1)) if cpu else float("nan"),
        per_worker=(cpu.group(2) or "") if cpu else "",
        failure=failure,
    )
