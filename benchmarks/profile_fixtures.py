"""Where a cold `check --only fixture-lock` spends its time, beside the floors
of hashing a gigabyte: bench_goals.py's cold row, taken apart.

    python benchmarks/profile_fixtures.py [--quick] [--repo DIR]

Prints, in this process (no profiler, whose cost per call would swamp the
Python parts): the wall time of the check's phases; the CPU time of the pack
reader alone over the same blobs, one thread; SHA-256 over bytes already in
the CPU's cache (hashlib, OpenSSL); one copy of the mapped pack (what reading
a gigabyte out of the page cache costs anyone); and the CPU time the two
`openssl dgst -sha256` of the reference take. The figures are CPU seconds
where they say so: they hold better than wall time on a loaded machine.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import glob
import hashlib
import io
import mmap
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_scale


def timed(acc: Dict[str, float], owner: Any, name: str) -> None:
    """``owner.name`` replaced by itself, its wall time added up in ``acc``."""
    real = getattr(owner, name)

    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            acc[name] = acc.get(name, 0.0) + time.perf_counter() - start

    setattr(owner, name, wrapper)


TIMES: Dict[str, float] = {}


def instrument() -> None:
    """The check's phases timed, once for the process."""
    from oracle_guard.checks import fixture_lock
    from oracle_guard.git import pack

    for owner, name in (
        (fixture_lock, "_check_entry"),
        (fixture_lock, "fixture_files"),
        (fixture_lock, "parse_lock"),
        (pack, "locate"),
        (pack, "sha256_packed"),
    ):
        timed(TIMES, owner, name)


def phases(repo: str) -> Dict[str, float]:
    from oracle_guard import cli

    TIMES.clear()
    argv = ["check", "--now", bench_scale.NOW, "--only", "fixture-lock", "--head", "HEAD"]
    here = os.getcwd()
    os.chdir(repo)
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli.main([*argv, "--no-cache"], bench_scale.ENV)
    finally:
        os.chdir(here)
    TIMES["the check"] = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"the check exited {code}")
    return dict(TIMES)


def cpu(job: Callable[[], object]) -> float:
    start = time.process_time()
    job()
    return time.process_time() - start


def floors(repo: str) -> Dict[str, float]:
    from oracle_guard.git import pack

    listing = bench_scale.git("ls-tree", "-r", "HEAD", "fixtures/", cwd=repo).decode()
    rows = [line.split(None, 3) for line in listing.splitlines()]
    rows = [row for row in rows if not row[3].endswith("SHA256SUMS")]
    with open(os.path.join(repo, "fixtures", "SHA256SUMS")) as f:
        lock = dict(line.split("  ", 1)[::-1] for line in f.read().splitlines())
    expected = {row[2]: lock[row[3][len("fixtures/") :]] for row in rows}
    objects = os.path.join(repo, ".git", "objects")
    oids: List[str] = list(expected)
    found: Dict[str, float] = {}
    found["pack reader, 1 thread (CPU)"] = cpu(
        lambda: pack.sha256_packed(objects, oids, 1, expected)
    )
    (path,) = glob.glob(os.path.join(objects, "pack", "*.pack"))
    size = os.path.getsize(path)
    block = bytes(1 << 20)
    found["SHA-256 of bytes in cache (CPU)"] = cpu(
        lambda: [hashlib.sha256(block) for _ in range(size >> 20)]
    )

    def copy() -> None:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            for at in range(0, size, 1 << 20):
                mapped[at : at + (1 << 20)]

    found["one copy out of the page cache (CPU)"] = cpu(copy)
    return found


def openssl_cpu(repo: str) -> float:
    names = sorted(
        os.path.relpath(os.path.join(d, f), os.path.join(repo, "fixtures"))
        for d, _, files in os.walk(os.path.join(repo, "fixtures"))
        for f in files
        if f != "SHA256SUMS"
    )
    with tempfile.TemporaryDirectory() as tmp:
        lists = []
        for half in (0, 1):
            lists.append(os.path.join(tmp, f"half{half}"))
            with open(lists[-1], "wb") as f:
                f.write(b"\0".join(n.encode() for n in names[half::2]))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [
                "sh",
                "-c",
                'xargs -0 openssl dgst -sha256 < "$1" > "$1.out" & '
                'xargs -0 openssl dgst -sha256 < "$2" > "$2.out"; wait $!',
                "openssl",
                *lists,
            ],
            cwd=os.path.join(repo, "fixtures"),
            check=True,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a repository 10x smaller")
    parser.add_argument("--repo", help="a repository bench_scale built before (kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.repo or os.path.join(tmp, "fixtures")
        if not os.path.exists(repo):
            sizes = bench_scale.Sizes(10 if args.quick else 1)
            bench_scale.build_fixtures(repo, sizes, random.Random(bench_scale.SEED))
        instrument()
        phases(repo)  # a warm-up: the page cache, the bytecode
        for name, seconds in {**phases(repo), **floors(repo)}.items():
            print(f"{name:40} {seconds * 1000:7.0f} ms")
        openssl_cpu(repo)  # its warm-up: the checked-out files into the page cache
        print(f"{'two openssl dgst -sha256 (CPU)':40} {openssl_cpu(repo) * 1000:7.0f} ms")
        print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
