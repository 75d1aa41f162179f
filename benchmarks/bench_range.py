"""Wall time of `oracle-guard check --range A..B` over 150 commits against 150 runs
of `oracle-guard check --base P --head C`, one process start each (medians, min
to max), on the demo's repository (a contract with each check's section) with
150 honest commits on top: source edits, new tests under the tamper paths, and
README edits beside the oracle. Goal (issue #36): at most 0.15x.

    python benchmarks/bench_range.py [--runs N] [--commits N]

Run it with bytecode present (`python -m compileall hooks`, or a non-editable
install).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from typing import List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_check  # build_demo_repo's repository: the demo's oracle
from bench_scale import ENV, GUARD, NOW, Sample, command, git, interleaved

GOAL = 0.15
COMMITS = 150


def build(path: str, commits: int) -> List[str]:
    """The demo's baseline and ``commits`` honest commits; their ids, oldest first."""
    from oracle_guard.commands import demo

    repo = demo.baseline(path)
    ids = []
    for n in range(commits):
        kind = n % 3
        if kind == 0:
            repo.write(f"src/part_{n}.py", f"def part_{n}():\n    return {n}\n")
        elif kind == 1:
            repo.write(
                f"tests/test_part_{n}.py",
                f"from src.pricing import price\n\n\ndef test_price_{n}():\n"
                f"    assert price({n + 1}, 0) == {n + 1}\n",
            )
        else:
            repo.write("README.md", repo.read("README.md") + f"\nrelease note {n}\n")
        repo.git("add", "-A")
        repo.git("commit", "-q", "-m", f"change {n}")
        ids.append(repo.git("rev-parse", "HEAD").strip())
    return ids


def one_by_one(repo: str, ids: List[str], parents: List[str]):
    jobs = [
        command([GUARD, "check", "--now", NOW, "--base", p, "--head", c], repo)
        for p, c in zip(parents, ids)
    ]

    def run() -> Sample:
        samples = [job() for job in jobs]
        return Sample(sum(s.seconds for s in samples), max(s.rss_mib for s in samples))

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per job (default 3)")
    parser.add_argument("--commits", type=int, default=COMMITS, help="commits in the range")
    args = parser.parse_args()
    assert bench_check  # the demo repository's builder lives beside it
    with tempfile.TemporaryDirectory(prefix="oracle-guard-bench-range-") as tmp:
        repo = os.path.join(tmp, "repo")
        ids = build(repo, args.commits)
        parents = [git("rev-parse", f"{c}^", cwd=repo).decode().strip() for c in ids]
        spec = f"{parents[0]}..{ids[-1]}"
        ranged = command([GUARD, "check", "--now", NOW, "--range", spec], repo, ENV)
        mine, theirs = interleaved([ranged, one_by_one(repo, ids, parents)], args.runs)
    ours = statistics.median(s.seconds for s in mine)
    reference = statistics.median(s.seconds for s in theirs)
    ratio = ours / reference
    print(
        f"check --range, {args.commits} commits: {ours * 1000:.0f} ms "
        f"({min(s.seconds for s in mine) * 1000:.0f} to {max(s.seconds for s in mine) * 1000:.0f})"
    )
    print(
        f"{args.commits} runs of check --base P --head C: {reference * 1000:.0f} ms "
        f"({min(s.seconds for s in theirs) * 1000:.0f} to {max(s.seconds for s in theirs) * 1000:.0f})"
    )
    print(f"ratio {ratio:.3f}x (goal <= {GOAL}x): {'met' if ratio <= GOAL else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
