"""Issue #19's speed goal: appending 1,000 lines to a 1,000,000-line corpus costs
at most 1.5x with ``records`` and a digest as without them.

    python benchmarks/bench_records.py [--runs N] [--lines N] [--appended N]

Two repositories hold the same corpus (corpus-line records, each with a real
payload_sha256) at tag A and the same 1,000 lines appended at tag B; their
contracts differ only in the record rules (``records: corpus-line``, ``digest``).
Each run times ``oracle-guard check --only seed-append-only --base A --head B``
in both, back to back and in alternating order, after one untimed warm-up of
each. It prints both medians with their range and the ratio of the medians with
the range of the run-by-run ratios. The repositories are built with `git
fast-import` in a temporary folder that is deleted at the end (about 300 MiB).
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_scale

GUARD = [sys.executable, "-m", "oracle_guard"]
NOW = "2026-09-25"
GOAL = 1.5
PLAIN = b"""\
version: 1
seeds:
  - {paths: ["oracle/corpus.jsonl"], format: jsonl}
limits: {seed_bytes: 536870912}
"""
RECORDS = b"""\
version: 1
seeds:
  - paths: ["oracle/corpus.jsonl"]
    format: jsonl
    records: corpus-line
    digest: {field: payload_sha256, of: payload, form: json-sorted-compact-utf8}
limits: {seed_bytes: 536870912}
"""


def line(i: int) -> bytes:
    payload = b'{"items":[{"price":"%d.%02d","qty":%d}],"tax_bps":%d}' % (
        i % 1000,
        i % 100,
        i % 7,
        i % 2000,
    )
    digest = hashlib.sha256(payload).hexdigest().encode()  # compact, sorted already
    return (
        b'{"id":"inv-%07d","test":"tests/test_invoice_total.py::test_totals","payload":%s,'
        b'"payload_sha256":"%s","expect":"fail","fixed_by":null}\n' % (i, payload, digest)
    )


def build(repo: str, contract: bytes, old: bytes, new: bytes) -> None:
    b = bench_scale
    b.fast_import(
        repo,
        [
            b.commit_header("refs/heads/main", 1, 1758800000),
            b"M 100644 inline .oracle-guard.yaml\n" + b.blob(contract),
            b"M 100644 inline oracle/corpus.jsonl\n",
            b.blob(old),
            b"\n",
            b.commit_header("refs/heads/main", 2, 1758800001, parent=1),
            b"M 100644 inline oracle/corpus.jsonl\n",
            b.blob(new),
            b"\n",
            b.tags({"A": 1, "B": 2}),
        ],
    )


def timed(repo: str) -> float:
    cmd = GUARD + ["check", "--now", NOW, "--only", "seed-append-only", "--base", "A"]
    start = time.perf_counter()
    proc = subprocess.run(
        cmd + ["--head", "B"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"the check did not pass in {repo}:\n{proc.stdout.decode()}")
    return seconds


def spread(values: List[float]) -> str:
    return f"{statistics.median(values):.3f}s ({min(values):.3f}-{max(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--appended", type=int, default=1_000)
    args = parser.parse_args()
    compileall.compile_dir(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hooks"), quiet=1
    )
    tmp = tempfile.mkdtemp(prefix="bench-records-")
    try:
        old = b"".join(line(i) for i in range(args.lines))
        new = old + b"".join(line(args.lines + i) for i in range(args.appended))
        plain, records = os.path.join(tmp, "plain"), os.path.join(tmp, "records")
        build(plain, PLAIN, old, new)
        build(records, RECORDS, old, new)
        timed(plain), timed(records)  # warm-up: the page cache, bytecode
        without: List[float] = []
        with_records: List[float] = []
        for run in range(args.runs):
            order = [(plain, without), (records, with_records)]
            for repo, sink in order if run % 2 == 0 else reversed(order):
                sink.append(timed(repo))
        ratios = [w / p for w, p in zip(with_records, without)]
        ratio = statistics.median(with_records) / statistics.median(without)
        print(
            f"corpus: {args.lines:,} lines ({len(old) / (1 << 20):.1f} MiB), "
            f"{args.appended:,} appended; {args.runs} interleaved runs"
        )
        print(f"without records:             {spread(without)}")
        print(f"with records and a digest:   {spread(with_records)}")
        print(
            f"ratio of the medians: {ratio:.2f}x (run by run {min(ratios):.2f}-"
            f"{max(ratios):.2f}x); goal at most {GOAL}x: {'met' if ratio <= GOAL else 'MISSED'}"
        )
        return 0 if ratio <= GOAL else 1
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
