"""Wall time of the replay loop of ``oracle-guard score`` on 200 corpus lines,
side by side with 200 separate plain ``python -m pytest`` runs of the same test
with the same payloads, run as many at once as the machine has cores (medians,
with the spread, and the ratio; goal: within 1.2x).

    python benchmarks/bench_replay.py [--runs N] [--lines N]

Two repositories in a temporary folder, the same but for one key: a contract
with a score section, ``src/calc.py``, a test module of 10 tests, one of which
reads ``CORPUS_PAYLOAD``, and ``oracle/corpus.jsonl`` of ``--lines`` lines
(``expect: pass``) naming it. One contract's corpus entry has ``replay: {}``,
the other's has not. Tag A holds them; tag B changes the code only. Each run
times, back to back and in alternating order, after one untimed warm-up of each:

- ``oracle-guard score --base A --head B`` in both: the replay loop's time is the
  difference (the trees, the oracle's session and the target's collection are the
  same in both);
- ``--lines`` plain ``python -m pytest -p no:cacheprovider -q TEST`` runs in a
  checkout of B, each with its line's ``CORPUS_ID`` and ``CORPUS_PAYLOAD``,
  through a pool of ``os.cpu_count()`` threads, as the score runs them; the
  bytecode kept (the fastest plain pytest gets).

Both use the interpreter running the benchmark. It prints each median with its
range, the ratio of the loop's median to plain pytest's, and the sum of each
replay's own seconds (the record's) beside the sum of the plain runs' (the
same measure without the difference of two scores). Run ``uptime`` beside it:
the machine's load moves every figure. The folder is deleted at the end.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, NamedTuple, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_score import git, plain_env, scored, spread, write

TEST = "tests/test_calc.py::test_add_of_a_corpus_line"
CONTRACT = """\
version: 1
seeds:
  - paths: ["oracle/corpus.jsonl"]
    format: jsonl
    records: corpus-line
%(replay)sscore:
  tests: ["tests/**"]
  pin: {randomly_seed: 20260921}
  timeout: 900
"""
SOURCE = "def add(a, b):\n    return a + b\n"
TESTS = """\
import json
import os

from src.calc import add


def test_add_of_a_corpus_line():
    a, b, total = json.loads(os.environ.get("CORPUS_PAYLOAD") or "[1, 2, 3]")
    assert add(a, b) == total
""" + "".join(f"\n\ndef test_add_{i}():\n    assert add({i}, 1) == {i + 1}\n" for i in range(9))


def corpus(lines: int) -> str:
    out = []
    for i in range(lines):
        payload = [i, 2 * i, 3 * i]
        digest = hashlib.sha256(json.dumps(payload, separators=(",", ":")).encode()).hexdigest()
        line = {"id": f"c-{i:04d}", "test": TEST, "payload": payload, "expect": "pass"}
        line["payload_sha256"] = digest
        out.append(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")
    return "".join(out)


def build(repo: str, lines: int, replayed: bool) -> None:
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    replay = "    replay: {}\n" if replayed else ""
    write(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT % {"replay": replay},
            "oracle/corpus.jsonl": corpus(lines),
            "src/__init__.py": "",
            "src/calc.py": SOURCE,
            "tests/test_calc.py": TESTS,
        },
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the target")
    git(repo, "tag", "A")
    write(repo, {"src/calc.py": '"""Adding."""\n\n' + SOURCE})
    git(repo, "commit", "-qam", "an honest patch")
    git(repo, "tag", "B")


def timed_score(repo: str, lines: int) -> Tuple[float, float]:
    """The score's wall time, and the sum of its replays' own seconds."""
    seconds, record = scored(repo)
    if len(record["replays"]) not in (0, lines):
        raise SystemExit(f"the score replayed {len(record['replays'])} of {lines} lines")
    return seconds, sum(r["seconds"] for r in record["replays"])


def one_plain(repo: str, line: Dict[str, object]) -> float:
    env = {
        **plain_env(),
        "CORPUS_ID": str(line["id"]),
        "CORPUS_PAYLOAD": json.dumps(line["payload"]),
    }
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", TEST]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"plain pytest failed on {line['id']}:\n{proc.stdout.decode()}")
    return seconds


def timed_plain(repo: str, lines: List[Dict[str, object]]) -> Tuple[float, float]:
    """The wall time of every plain run through the pool, and the sum of each's."""
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        each = list(pool.map(lambda line: one_plain(repo, line), lines))
    return time.perf_counter() - start, sum(each)


class Samples(NamedTuple):
    with_loop: List[float]  # the score with the replays, run by run
    without: List[float]  # the same score without them
    own: List[float]  # the sum of each replay's own seconds
    plain: List[float]  # the plain runs through the pool
    plain_own: List[float]  # the sum of each plain run's seconds

    @property
    def loop(self) -> List[float]:
        """The replay loop's time: the difference of the two scores."""
        return [a - b for a, b in zip(self.with_loop, self.without)]


def samples(tmp: str, lines: int, runs: int) -> Samples:
    """Both repositories built in ``tmp``, one untimed warm-up of each, then
    ``runs`` interleaved runs (bench_goals takes its replay row from here)."""
    replayed, unreplayed = os.path.join(tmp, "replayed"), os.path.join(tmp, "unreplayed")
    build(replayed, lines, True)
    build(unreplayed, lines, False)
    parsed = [json.loads(raw) for raw in corpus(lines).splitlines()]
    timed_score(replayed, lines), timed_score(unreplayed, lines)  # warm-up
    timed_plain(replayed, parsed[:4])
    out = Samples([], [], [], [], [])

    def scores() -> None:
        total, replays = timed_score(replayed, lines)
        out.with_loop.append(total)
        out.own.append(replays)
        out.without.append(timed_score(unreplayed, lines)[0])

    def plains() -> None:
        total, each = timed_plain(replayed, parsed)
        out.plain.append(total)
        out.plain_own.append(each)

    for run in range(runs):
        for job in (scores, plains) if run % 2 == 0 else (plains, scores):
            job()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lines", type=int, default=200)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-replay-")
    try:
        got = samples(tmp, args.lines, args.runs)
        print(
            f"{args.lines} corpus lines; {args.runs} interleaved runs; "
            f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
        )
        print(f"score with the replays:         {spread(got.with_loop)}")
        print(f"score without them:             {spread(got.without)}")
        print(f"the replay loop (difference):   {spread(got.loop)}")
        print(f"{args.lines} plain pytest runs, pooled: {spread(got.plain)}")
        print(f"loop / plain: {statistics.median(got.loop) / statistics.median(got.plain):.2f}x")
        print(
            f"sum of each replay's seconds / sum of each plain run's: "
            f"{statistics.median(got.own) / statistics.median(got.plain_own):.2f}x"
        )
        return 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
