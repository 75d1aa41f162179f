"""Wall time of ``oracle-guard score`` on a generated suite of 2,000 passing tests,
side by side with a plain ``python -m pytest -p no:cacheprovider`` of the same
suite, in one run (medians, with the spread, and the ratio).

    python benchmarks/bench_score.py [--runs N] [--files N] [--tests N]

One repository in a temporary folder: a contract with a score section
(``tests: ["tests/**"]``), ``src/calc.py``, a ``pytest.ini`` and ``--files`` test
modules of ``--tests`` tests each (half plain functions, half one parametrized
function), 20 x 100 = 2,000 tests by default. Tag A holds them; tag B changes
the code only, as an honest patch does. Each run times, back to back and in
alternating order, after one untimed warm-up of each:

- ``oracle-guard score --base A --head B``: both trees written from git objects,
  the target's own collection beside the oracle's session, the verdict;
- plain pytest in a checkout of B, cold: its ``__pycache__`` folders removed
  before each run (untimed), as a fresh CI checkout has none and as a score,
  which never reads or writes bytecode in the tree, compiles every module;
- plain pytest in the same checkout, warm: the bytecode of the previous run kept
  (a developer's rerun, the fastest pytest gets).

Both use the interpreter running the benchmark. It prints each median with its
range, the ratios of the medians with the range of the run-by-run ratios, and the
time of the score's oracle session alone (the record's ``seconds``). The folder
is deleted at the end. Issue #36's goal: within 1.10x of plain pytest
(bench_goals.py's score row, against the cold run: a score never has the tree's
bytecode).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, NamedTuple, Tuple

GUARD = [sys.executable, "-m", "oracle_guard"]
NOW = "2026-09-25"
CONTRACT = """\
version: 1
write_set:
  allow: ["src/**", "tests/**"]
score:
  tests: ["tests/**"]
  pin: {randomly_seed: 20260921}
  timeout: 900
"""
SOURCE = "def add(a, b):\n    return a + b\n"


def module(index: int, tests: int) -> str:
    plain = tests // 2
    cases = ", ".join(f"({i}, {index}, {i + index})" for i in range(tests - plain))
    lines = ["import pytest", "", "from src.calc import add", ""]
    for i in range(plain):
        lines += ["", f"def test_add_{i}():", f"    assert add({i}, {index}) == {i + index}", ""]
    lines += [
        "",
        f'@pytest.mark.parametrize(("a", "b", "total"), [{cases}])',
        "def test_cases(a, b, total):",
        "    assert add(a, b) == total",
        "",
    ]
    return "\n".join(lines)


def git(repo: str, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
        "GIT_AUTHOR_DATE": "2026-09-25T09:00:00+00:00",
        "GIT_COMMITTER_DATE": "2026-09-25T09:00:00+00:00",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)


def write(repo: str, files: Dict[str, str]) -> None:
    for path, text in files.items():
        full = os.path.join(repo, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as out:
            out.write(text)


def build(repo: str, files: int, tests: int) -> None:
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    suite = {f"tests/test_calc_{i:03d}.py": module(i, tests) for i in range(files)}
    write(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT,
            "pytest.ini": "[pytest]\ntestpaths = tests\n",
            "src/__init__.py": "",
            "src/calc.py": SOURCE,
            "tests/conftest.py": "",
            **suite,
        },
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the target")
    git(repo, "tag", "A")
    write(repo, {"src/calc.py": '"""Adding."""\n\n' + SOURCE})
    git(repo, "commit", "-qam", "an honest patch")
    git(repo, "tag", "B")


def plain_env() -> Dict[str, str]:
    # what a plain CI job would pass pytest: nothing that adds options or plugins
    drop = {"PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def scored(repo: str) -> Tuple[float, Dict[str, Any]]:
    """The wall time of ``score --base A --head B``, and its record; it must pass."""
    cmd = GUARD + ["score", "--now", NOW, "--base", "A", "--head", "B", "--format", "json"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"the score did not pass:\n{proc.stdout.decode()}{proc.stderr.decode()}")
    return seconds, json.loads(proc.stdout)


def timed_score(repo: str) -> Tuple[float, float]:
    seconds, record = scored(repo)
    return seconds, record["seconds"]


def timed_pytest(repo: str, expected: int, cold: bool) -> float:
    if cold:
        for folder, dirs, _ in os.walk(repo):
            if "__pycache__" in dirs:
                shutil.rmtree(os.path.join(folder, "__pycache__"))
                dirs.remove("__pycache__")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests"]
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=repo, env=plain_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    seconds = time.perf_counter() - start
    last = proc.stdout.decode().strip().splitlines()[-1:]
    if proc.returncode != 0 or not last or not last[0].startswith(f"{expected} passed"):
        raise SystemExit(f"plain pytest did not pass {expected} tests:\n{proc.stdout.decode()}")
    return seconds


def spread(values: List[float]) -> str:
    return f"{statistics.median(values):.3f}s ({min(values):.3f}-{max(values):.3f})"


def ratio(over: List[float], under: List[float]) -> str:
    each = [a / b for a, b in zip(over, under)]
    whole = statistics.median(over) / statistics.median(under)
    return f"{whole:.2f}x (run by run {min(each):.2f}-{max(each):.2f}x)"


class Samples(NamedTuple):
    scores: List[float]  # the whole score, run by run
    sessions: List[float]  # its oracle session alone (the record's seconds)
    cold: List[float]  # plain pytest, no bytecode
    warm: List[float]  # plain pytest, bytecode kept


def samples(tmp: str, files: int, tests: int, runs: int) -> Samples:
    """The suite built in ``tmp``, one untimed warm-up of each, then ``runs``
    interleaved runs of the score and of plain pytest, cold and warm (bench_goals
    takes its score row from here)."""
    repo = os.path.join(tmp, "repo")
    build(repo, files, tests)
    expected = files * tests
    timed_score(repo), timed_pytest(repo, expected, cold=True)  # warm-up
    out = Samples([], [], [], [])

    def score() -> None:
        total, session = timed_score(repo)
        out.scores.append(total)
        out.sessions.append(session)

    jobs = [
        score,
        lambda: out.cold.append(timed_pytest(repo, expected, cold=True)),
        lambda: out.warm.append(timed_pytest(repo, expected, cold=False)),
    ]
    for run in range(runs):
        for job in jobs if run % 2 == 0 else list(reversed(jobs)):
            job()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--tests", type=int, default=100, help="tests per module")
    args = parser.parse_args()
    compileall.compile_dir(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hooks"), quiet=1
    )
    tmp = tempfile.mkdtemp(prefix="bench-score-")
    try:
        got = samples(tmp, args.files, args.tests, args.runs)
        scores, sessions, cold, warm = got
        expected = args.files * args.tests
        print(
            f"suite: {expected:,} tests in {args.files} modules; {args.runs} interleaved runs; "
            f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
        )
        print(f"oracle-guard score:           {spread(scores)}")
        print(f"  its oracle session alone:   {spread(sessions)}")
        print(f"pytest, cold (no bytecode):   {spread(cold)}")
        print(f"pytest, warm (bytecode kept): {spread(warm)}")
        print(f"score / cold pytest: {ratio(scores, cold)}")
        print(f"score / warm pytest: {ratio(scores, warm)}")
        return 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
