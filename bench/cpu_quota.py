"""Hold a process to a share of the CPU, as a Kubernetes CPU limit (a CFS quota) does, so a
benchmark can give each of several processes its own fraction of a small machine.

Needs root and the cgroup CPU controller (v2 ``cpu.max`` or v1 ``cpu.cfs_quota_us``);
``available`` says whether this machine has them.
"""

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

_V2 = Path("/sys/fs/cgroup")
_V1 = Path("/sys/fs/cgroup/cpu")
_PERIOD_US = 100_000


def _root() -> tuple[Path, bool] | None:
    """(where groups are made, whether it is cgroup v2), or None."""
    if (_V2 / "cgroup.controllers").exists() and "cpu" in (_V2 / "cgroup.controllers").read_text():
        return _V2, True
    if (_V1 / "cpu.cfs_quota_us").exists():
        return _V1, False
    return None


def available() -> str | None:
    """None when quotas can be set here, else why not."""
    if os.geteuid() != 0:
        return "setting a CPU quota needs root"
    if _root() is None:
        return "no cgroup CPU controller (cgroup v2 cpu.max or v1 cpu.cfs_quota_us)"
    return None


@contextlib.contextmanager
def cpu_quota(pid: int, cores: float, name: str) -> Iterator[None]:
    """Run process ``pid`` (and the threads it starts) on at most ``cores`` CPUs' worth of
    time, in a group of its own removed on exit."""
    found = _root()
    if found is None:
        raise RuntimeError(available() or "no cgroup CPU controller")
    root, v2 = found
    group = root / f"lineage-bench-{name}-{pid}"
    group.mkdir()
    try:
        quota = int(cores * _PERIOD_US)
        if v2:
            (group / "cpu.max").write_text(f"{quota} {_PERIOD_US}")
        else:
            (group / "cpu.cfs_period_us").write_text(str(_PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(quota))
        (group / "cgroup.procs").write_text(str(pid))
        yield
    finally:
        # The process has ended (or is moved back first); an empty group can be removed.
        with contextlib.suppress(OSError):
            (root / "cgroup.procs").write_text(str(pid))
        with contextlib.suppress(OSError):
            group.rmdir()
