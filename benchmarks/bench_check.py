"""Wall time of `oracle-guard check` on the demo repository, on a first run (empty
cache, as in every CI clone) and warm, side by side with `check-jsonschema`
validating one small file, in one run (medians, min to max; wall time, and the
CPU time of each process with the git processes it ran).

    python benchmarks/bench_check.py [--runs N]

Needs the `bench` extra (check-jsonschema) in the same environment. Run it with
bytecode present (`python -m compileall hooks` without PYTHONDONTWRITEBYTECODE,
or a non-editable install), as check-jsonschema has its own.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional, Tuple

GOALS = {"first run": 0.40, "warm": 0.25}  # issue #16's small-repository rows


def build_demo_repo(path: str) -> None:
    """The demo's baseline with its honest change staged, and no cache: building it
    runs oracle-guard, whose cache a first run's timing must not find (the
    git directory as built is what bench_scale.GitDirState keeps)."""
    from oracle_guard.commands import demo

    repo = demo.baseline(path)
    demo.honest_change(repo)
    repo.git("add", "-A")
    shutil.rmtree(os.path.join(path, ".git", "oracle-guard"), ignore_errors=True)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(cmd, cwd, env, before: Optional[Callable[[], None]] = None) -> Tuple[float, float]:
    """Wall time, and CPU time (user + system) of the process and every git it ran:
    on a loaded machine the CPU time moves far less than the wall time."""
    if before is not None:
        before()  # untimed
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-300:]}")
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()

    bindir = os.path.dirname(sys.executable)
    guard = os.path.join(bindir, "oracle-guard")
    checker = shutil.which("check-jsonschema", path=bindir) or shutil.which("check-jsonschema")
    if checker is None:
        raise SystemExit("check-jsonschema not found: pip install '.[bench]'")
    from oracle_guard.commands import demo
    from oracle_guard.parsing import validation

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CI", "PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF")
    }
    env.update(demo.GIT_ENV)
    with tempfile.TemporaryDirectory(prefix="oracle-guard-bench-") as tmp:
        repo = os.path.join(tmp, "repo")
        build_demo_repo(repo)
        small = os.path.join(tmp, "freeze.json")
        with open(small, "w") as f:
            f.write('{"excluded_property_ids": ["a"], "reason": {"a": "flaky"}}\n')
        cache_dir = os.path.join(repo, ".git", "oracle-guard")

        def empty_cache() -> None:
            shutil.rmtree(cache_dir, ignore_errors=True)

        check = [guard, "check", "--now", demo.NOW]
        reference = [checker, "--schemafile", validation.schema_path("freeze"), small]
        jobs = {  # name: (command, what runs untimed before each sample)
            "first run": (check, empty_cache),
            "warm": (check, None),
            "reference": (reference, None),
        }
        samples: Dict[str, List[float]] = {name: [] for name in jobs}
        cpu: Dict[str, List[float]] = {name: [] for name in jobs}
        for cmd, before in jobs.values():
            timed(cmd, repo, env, before)  # warm the page cache and .pyc files
        for _ in range(args.runs):
            for name, (cmd, before) in jobs.items():  # interleaved: drift hits all alike
                wall, used = timed(cmd, repo, env, before)
                samples[name].append(wall)
                cpu[name].append(used)
    medians = {name: statistics.median(s) for name, s in samples.items()}
    cpu_medians = {name: statistics.median(s) for name, s in cpu.items()}
    print(
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {args.runs} interleaved runs each, "
        "medians (min to max)"
    )
    labels = {
        "first run": "oracle-guard check, every hook, demo repo, empty cache",
        "warm": "oracle-guard check, every hook, demo repo, warm cache",
        "reference": "check-jsonschema, one small file",
    }
    for name, label in labels.items():
        s, c = samples[name], cpu[name]
        print(
            f"  {label:55s} {medians[name] * 1000:7.1f} ms"
            f"  ({min(s) * 1000:.1f} to {max(s) * 1000:.1f});"
            f" CPU {cpu_medians[name] * 1000:.1f} ms ({min(c) * 1000:.1f} to {max(c) * 1000:.1f})"
        )
    # each run's own ratio too: the spread of the side-by-side pairs
    for name, goal in GOALS.items():
        ratio = medians[name] / medians["reference"]
        pairs = sorted(a / b for a, b in zip(samples[name], samples["reference"]))
        verdict = "meets" if ratio <= goal else "MISSES"
        print(
            f"  {name}: ratio {ratio:.2f}x (per-run {pairs[0]:.2f}x to {pairs[-1]:.2f}x; "
            f"CPU {cpu_medians[name] / cpu_medians['reference']:.2f}x), "
            f"goal <= {goal:.2f}x: {verdict} the goal"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
