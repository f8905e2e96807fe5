"""How long a fresh clone's `make run` takes to serve, first and second time (issue 30).

    python3 bench/first_run.py                 # both caches: a cold uv cache, then the warm one
    python3 bench/first_run.py --cache warm    # only the machine's uv cache as it is
    python3 bench/first_run.py --repo PATH     # clone PATH's HEAD instead of this repository's

For each cache it clones the repository's committed HEAD into a temporary folder, runs
`make run` there in its own process group against a database of its own (DATABASE_URL's
server, a fresh database name), and times until the web server answers `/`; then stops the
whole process group (SIGTERM, SIGKILL after 15 s), checks nothing of it is left running,
runs `make run` again in the same clone and times that. "Cold" points UV_CACHE_DIR at an
empty folder (and turns pip's cache off for the uv bootstrap), so every package is
downloaded from PyPI; "warm" uses the uv cache the machine already has. It prints the
figures and the lines `make run` printed before it served. Standard library only: it runs
with any python3, before any virtualenv exists.
"""

import argparse
import ctypes
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
FIRST_RUN_LIMIT = 600.0  # seconds; give up (and say so) after this
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
STOP_LIMIT = 30.0  # seconds from SIGTERM to SIGKILL (run_local itself kills after 10 s)
TARGET_FIRST, TARGET_SECOND = 120.0, 15.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(port: int) -> bool:
    """The web server answers / with any HTTP response (the front page: 200)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError):
        return False


def become_subreaper() -> None:
    """Orphans of `make run` (its processes once make is gone) become this process's
    children, so they are reaped here and their CPU time counts in RUSAGE_CHILDREN."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER) failed: errno {ctypes.get_errno()}")


def reap() -> None:
    """Collect every child that has exited (make, and the orphans it left)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def group_alive(pgid: int) -> bool:
    reap()  # a zombie still counts as a member of its group
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_group(process: subprocess.Popen[bytes]) -> float:
    """SIGTERM the whole process group (make, run_local, web, worker, beat), then SIGKILL;
    the seconds until none of it was left."""
    pgid = process.pid
    started = time.monotonic()
    if group_alive(pgid):
        os.killpg(pgid, signal.SIGTERM)
    deadline = started + STOP_LIMIT
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if group_alive(pgid):
        print(f"  process group {pgid} still alive after SIGTERM; SIGKILL", flush=True)
        os.killpg(pgid, signal.SIGKILL)
        time.sleep(1)
    if group_alive(pgid):
        sys.exit(f"process group {pgid} is still running after SIGKILL")
    return time.monotonic() - started


@dataclass
class Timing:
    answered: float  # seconds from `make run` to an answer on /
    stopped: float  # seconds from SIGTERM until nothing of it was running
    cpu: float  # CPU seconds of make run and everything it started, until stopped
    load: float  # the 1-minute load average when it answered
    printed: str
    steps: list[tuple[float, str]]  # when each of make's and run_local's own lines appeared


def timed_make_run(clone: Path, env: dict[str, str], port: int, log: Path) -> Timing:
    """Start `make run`, wait for an answer on /, stop it; what that took."""
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with log.open("wb") as output:
        process = subprocess.Popen(
            ["make", "run", f"PORT={port}"],
            cwd=clone,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, stopped whole
        )
    steps: list[tuple[float, str]] = []
    try:
        while not answers(port):
            for line in log.read_text(errors="replace").splitlines()[len(steps) :]:
                steps.append((time.monotonic() - started, line))
            if process.poll() is not None and not group_alive(process.pid):
                sys.exit(f"make run exited with {process.returncode}:\n{log.read_text()}")
            if time.monotonic() - started > FIRST_RUN_LIMIT:
                sys.exit(f"make run did not serve within {FIRST_RUN_LIMIT:.0f} s")
            time.sleep(0.25)
        elapsed = time.monotonic() - started
        load = os.getloadavg()[0]
    finally:
        stopped = stop_group(process)
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    own = [(moment, line) for moment, line in steps if line.startswith("[make")]
    return Timing(elapsed, stopped, cpu, load, log.read_text(errors="replace"), own)


def drop_database(clone: Path, env: dict[str, str], database_url: str) -> None:
    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    script = (
        "import psycopg, sys\n"
        "with psycopg.connect(sys.argv[1], autocommit=True) as c:\n"
        f"    c.execute('DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)')\n"
    )
    python = clone / ".venv" / "bin" / "python"
    subprocess.run([python, "-c", script, maintenance], env=env, check=True)


def report(cache: str, which: str, timing: Timing) -> None:
    print(
        f"{cache} uv cache: {which} `make run` answered / after {timing.answered:.1f} s "
        f"(load average {timing.load:.2f}; {timing.cpu:.1f} CPU s until stopped; "
        f"stopped in {timing.stopped:.1f} s)",
        flush=True,
    )


def measure(repo: Path, cache: str, base_url: str, workdir: Path) -> tuple[Timing, Timing]:
    clone = workdir / f"clone-{cache}"
    subprocess.run(["git", "clone", "--quiet", str(repo), str(clone)], check=True)
    database_url = f"{base_url.rsplit('/', 1)[0]}/lc_first_run_{uuid.uuid4().hex[:8]}"
    env = {
        key: value
        for key, value in os.environ.items()
        # A developer's activated virtualenv must not leak into the clone's.
        if key not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "DJANGO_SETTINGS_MODULE", "PORT")
    }
    env["DATABASE_URL"] = database_url
    env.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
    if cache == "cold":
        env["UV_CACHE_DIR"] = str(workdir / f"uv-cache-{cache}")
        env["PIP_NO_CACHE_DIR"] = "1"
    port = free_port()
    try:
        first = timed_make_run(clone, env, port, workdir / f"{cache}-1.log")
        report(cache, "first", first)
        print("  it printed, before the banner (seen at, within a quarter second):")
        for line in first.printed.split("Lineage Catalog is running")[0].strip().splitlines():
            seen = [moment for moment, own in first.steps if own == line]
            print(f"    {seen[0]:6.1f} s | {line}" if seen else f"           | {line}")
        second = timed_make_run(clone, env, port, workdir / f"{cache}-2.log")
        report(cache, "second", second)
    finally:
        if (clone / ".venv" / "bin" / "python").exists():
            drop_database(clone, env, database_url)
    return first, second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT, help="the repository to clone")
    parser.add_argument("--cache", choices=("cold", "warm", "both"), default="both")
    arguments = parser.parse_args()
    base_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    commit = subprocess.run(
        ["git", "-C", str(arguments.repo), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    become_subreaper()
    print(f"cloning {arguments.repo} at {commit}; load average {os.getloadavg()[0]:.2f}")
    caches = ("cold", "warm") if arguments.cache == "both" else (arguments.cache,)
    results = {}
    with tempfile.TemporaryDirectory(prefix="lc-first-run-") as workdir:
        for cache in caches:
            results[cache] = measure(arguments.repo, cache, base_url, Path(workdir))
    print("\ncache   first make run   second make run   (targets: first <= 120 s, second <= 15 s)")
    for cache, (first, second) in results.items():
        met = first.answered <= TARGET_FIRST and second.answered <= TARGET_SECOND
        print(
            f"{cache:<7} {first.answered:>12.1f} s {second.answered:>15.1f} s   "
            f"{'ok' if met else 'MISSED'}   (CPU s: {first.cpu:.1f}, {second.cpu:.1f})"
        )


if __name__ == "__main__":
    main()
