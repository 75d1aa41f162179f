"""Wall time of `oracle-guard check` on the demo repository, side by side with
`check-jsonschema` validating one small file, in one run (medians).

    python benchmarks/bench_check.py [--runs N]

Needs the `bench` extra (check-jsonschema) in the same environment.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def build_demo_repo(path: str) -> None:
    """The demo's baseline with its honest change staged."""
    from oracle_guard.commands import demo

    repo = demo.baseline(path)
    demo.honest_change(repo)
    repo.git("add", "-A")


def timed(cmd, cwd, env) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-300:]}")
    return elapsed


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
        jobs = {
            "oracle-guard check (all six, demo repo)": [guard, "check", "--now", demo.NOW],
            "check-jsonschema, one small file": [
                checker,
                "--schemafile",
                validation.schema_path("freeze"),
                small,
            ],
        }
        samples = {name: [] for name in jobs}
        for cmd in jobs.values():
            timed(cmd, repo, env)  # warm the page cache and .pyc files
        for _ in range(args.runs):
            for name, cmd in jobs.items():  # interleaved, so drift hits both alike
                samples[name].append(timed(cmd, repo, env))
    medians = {name: statistics.median(s) for name, s in samples.items()}
    ours, reference = medians.values()
    ratio = ours / reference
    print(
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {args.runs} runs each, medians"
    )
    for name, value in medians.items():
        print(f"  {name:45s} {value * 1000:7.1f} ms")
    verdict = "meets" if ratio <= 1.0 else "MISSES"
    print(f"  ratio {ratio:.2f}x (goal <= 1.0x): {verdict} the goal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
