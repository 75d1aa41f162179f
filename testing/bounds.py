"""Resource bounds for hostile-input tests, and the hypothesis profile.

``run_bounded`` runs oracle-guard in a child process whose address space is
capped with RLIMIT_AS (inherited by every git it starts, each capped on its
own) and whose CPU time, its own and its children's, is capped; a run that
breaks either bound fails the test, whatever its exit code. CPU time, not wall
time: a loaded machine stretches the second and barely moves the first. A
generous wall-clock guard still kills a run that hangs without using the CPU.

``property_settings`` is the one hypothesis profile of the property tests: a
fixed seed and a bounded example count so CI replays the same inputs, or, with
ORACLE_GUARD_EXPLORE=1 in the environment, a random seed and many more
examples (hypothesis prints the seed of any failure it finds).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Optional, Sequence, TypeVar, Union

CPU_LIMIT = 5.0  # seconds of CPU, user and system, of the child and what it waited for
HANG_LIMIT = 300.0  # seconds of wall time before a run is taken to hang and killed
MEMORY_LIMIT = 256 * 2**20  # bytes of address space, per process

# What a child says when the address-space cap, not the input, stopped it.
_OUT_OF_MEMORY = (
    "MemoryError",
    "Cannot allocate memory",
    "out of memory",
    "cannot allocate",
    "failed to allocate",
)


@dataclass
class Bounded:
    """One bounded run: exit code, output, CPU seconds (user and system, the
    child's and those of the processes it waited for), peak resident memory
    (bytes, the largest of the child and the processes it waited for)."""

    returncode: int
    stdout: str
    stderr: str
    cpu_seconds: float
    max_rss: int


def _limit(memory: int, cpu: float) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        # each process's own cap (SIGXCPU), so a spinning one stops soon, load or not
        seconds = int(cpu) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))

    return apply


def run_bounded(
    args: Sequence[str],
    *,
    cwd: Union[str, Path, None] = None,
    env: Optional[Dict[str, str]] = None,
    cpu_limit: float = CPU_LIMIT,
    memory_limit: int = MEMORY_LIMIT,
    hang_limit: float = HANG_LIMIT,
) -> Bounded:
    """Run ``args`` under both bounds; AssertionError when either is broken, or
    when the run outlasts ``hang_limit`` (a hang guard, not a speed bound)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        # files, not pipes: a child writing a lot never blocks on a full pipe
        proc = subprocess.Popen(
            list(args),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            preexec_fn=_limit(memory_limit, cpu_limit),
        )
        status, usage = _wait(proc, start + hang_limit)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "backslashreplace")
        stderr = err.read().decode("utf-8", "backslashreplace")
    cpu_seconds = usage.ru_utime + usage.ru_stime
    if status is None:
        raise AssertionError(f"{_show(args)} hung past {hang_limit:g} s and was killed")
    returncode = os.waitstatus_to_exitcode(status)
    proc.returncode = returncode
    max_rss = usage.ru_maxrss * 1024  # Linux reports KiB
    if cpu_seconds > cpu_limit or returncode == -signal.SIGXCPU:
        raise AssertionError(
            f"{_show(args)} used {cpu_seconds:.1f} s of CPU, over its {cpu_limit:g} s"
        )
    if returncode < 0:
        raise AssertionError(
            f"{_show(args)} died of signal {-returncode} "
            f"(peak RSS {max_rss >> 20} MiB); stderr: {stderr[-500:]}"
        )
    if any(sign in stderr for sign in _OUT_OF_MEMORY):
        raise AssertionError(
            f"{_show(args)} ran out of its {memory_limit >> 20} MiB address space: {stderr[-500:]}"
        )
    if max_rss > memory_limit:
        raise AssertionError(f"{_show(args)} peaked at {max_rss >> 20} MiB resident")
    return Bounded(returncode, stdout, stderr, cpu_seconds, max_rss)


def _wait(proc: subprocess.Popen, deadline: float):
    """(wait status, rusage) of the child, or (None, rusage) after killing its
    whole process group at the deadline."""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return status, usage
        if time.monotonic() >= deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            _, _, usage = os.wait4(proc.pid, 0)
            proc.returncode = -signal.SIGKILL
            return None, usage
        time.sleep(0.005)


def _show(args: Sequence[str]) -> str:
    text = " ".join(str(a) for a in args)
    return text if len(text) <= 200 else text[:200] + "…"


def guard_command(repo: Union[str, Path], *args: str) -> list:
    """``python -m oracle_guard check -C REPO ARGS`` with this interpreter."""
    return [sys.executable, "-m", "oracle_guard", "check", "-C", str(repo), *args]


def guard_env(**extra: str) -> Dict[str, str]:
    """The test process's environment without CI or pre-commit revision
    variables (conftest already removed them), plus ``extra``."""
    env = dict(os.environ)
    env.update(extra)
    return env


# -- hypothesis ----------------------------------------------------------------
EXPLORE = os.environ.get("ORACLE_GUARD_EXPLORE") == "1"
SEED = 20240501  # checked in: CI replays exactly these inputs

F = TypeVar("F", bound=Callable)


def property_settings(max_examples: int = 100) -> Callable[[F], F]:
    """Replayable by default; random and 20x longer under ORACLE_GUARD_EXPLORE=1."""
    from hypothesis import HealthCheck, seed, settings

    checks = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large]
    if EXPLORE:
        return settings(
            max_examples=max_examples * 20,
            deadline=None,
            database=None,
            suppress_health_check=checks,
        )
    profile = settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=checks,
    )

    def apply(test: F) -> F:
        return seed(SEED)(profile(test))

    return apply
