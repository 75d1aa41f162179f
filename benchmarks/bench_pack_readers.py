"""Who hashes 10,000 fixture blobs (1 GiB) out of git objects fastest: the
readers oracle-guard could use, beside two parallel `openssl dgst -sha256` over
the same files checked out (the cold fixture-lock row's reference).

    python benchmarks/bench_pack_readers.py [--runs N] [--quick] [--repo DIR]

Each reader runs in a process of its own (startup and imports included) that
hashes every blob of HEAD's fixtures; interleaved runs after one warm-up each,
medians with the fastest and slowest run, the CPU time and the peak memory of
the process tree (GNU time; the machine being busy moves CPU time less than wall
time). A library that is not installed is skipped, and said so:

    pip install gitdb dulwich pygit2    # for the comparison only

The repository is the one bench_scale.py builds for row 3 (a fast-import pack
of random bytes); --repo reuses one built before (`--keep` prints where).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_scale

# -- readers, each run in a child process: python bench_pack_readers.py --child NAME


def blob_ids(repo: str) -> List[str]:
    out = subprocess.run(
        ["git", "-C", repo, "ls-tree", "-r", "-z", "HEAD", "fixtures"],
        stdout=subprocess.PIPE,
        check=True,
    ).stdout
    return [rec.split(b"\t")[0].split()[2].decode() for rec in out.split(b"\0") if rec]


def read_oracle_guard(repo: str, oids: Sequence[str]) -> Dict[str, str]:
    from oracle_guard.git.plumbing import Git

    return Git(repo).sha256_blobs(oids)


def read_cat_file(repo: str, oids: Sequence[str]) -> Dict[str, str]:
    """What sha256_blobs did before pack.py: one streamed cat-file --batch."""
    from oracle_guard.git.plumbing import Git

    return Git(repo)._objects.sha256_streamed(list(dict.fromkeys(oids)))


def read_pygit2(repo: str, oids: Sequence[str]) -> Dict[str, str]:
    import pygit2

    handle = pygit2.Repository(repo)
    return {oid: hashlib.sha256(handle[oid].data).hexdigest() for oid in oids}


def read_dulwich(repo: str, oids: Sequence[str]) -> Dict[str, str]:
    from dulwich.repo import Repo

    store = Repo(repo).object_store
    return {oid: hashlib.sha256(store[oid.encode()].as_raw_string()).hexdigest() for oid in oids}


def read_gitdb(repo: str, oids: Sequence[str]) -> Dict[str, str]:
    from gitdb import GitDB

    db = GitDB(os.path.join(repo, ".git", "objects"))
    digests = {}
    for oid in oids:
        stream, digest = db.stream(bytes.fromhex(oid)), hashlib.sha256()
        chunk = stream.read(1 << 20)
        while chunk:
            digest.update(chunk)
            chunk = stream.read(1 << 20)
        digests[oid] = digest.hexdigest()
    return digests


READERS: Dict[str, Callable[[str, Sequence[str]], Dict[str, str]]] = {
    "oracle-guard": read_oracle_guard,
    "cat-file": read_cat_file,
    "pygit2": read_pygit2,
    "dulwich": read_dulwich,
    "gitdb": read_gitdb,
}
MODULES = {"pygit2": "pygit2", "dulwich": "dulwich", "gitdb": "gitdb"}
LABELS = {
    "oracle-guard": "Git.sha256_blobs (pack.py, cat-file for the rest)",
    "cat-file": "one streamed git cat-file --batch (the old path)",
    "pygit2": "pygit2 (libgit2), repo[oid].data",
    "dulwich": "dulwich object_store[oid]",
    "gitdb": "gitdb GitDB.stream (GitPython's backend)",
}


def child(name: str, repo: str, expected_file: str) -> int:
    oids = blob_ids(repo)
    digests = READERS[name](repo, oids)
    with open(expected_file) as f:
        expected = dict(line.split() for line in f)
    wrong = [oid for oid in oids if digests.get(oid) != expected[oid]]
    with open(f"{expected_file}.{name}.wrong", "w") as f:  # timed all the same, and said
        f.write("".join(f"{oid}\n" for oid in wrong))
    return 0


def wrong_digests(expected_file: str, name: str) -> List[str]:
    try:
        with open(f"{expected_file}.{name}.wrong") as f:
            return f.read().split()
    except FileNotFoundError:
        return []


# -- the comparison --------------------------------------------------------------------


def installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


class Run(NamedTuple):
    seconds: float
    cpu_seconds: float  # user + system of the process tree: less moved by a busy machine
    rss_mib: float


def measure(cmd: Sequence[str], cwd: str, env: Optional[Dict[str, str]] = None) -> Run:
    """Like bench_scale.measure, with the CPU time GNU time reports too."""
    if bench_scale.GNU_TIME is None:
        sample = bench_scale.measure(cmd, cwd, env or bench_scale.ENV)
        return Run(sample.seconds, float("nan"), sample.rss_mib)
    with tempfile.NamedTemporaryFile() as report, tempfile.TemporaryFile() as out:
        wrapped = [bench_scale.GNU_TIME, "-f", "%U %S %M", "-o", report.name, *cmd]
        start = time.perf_counter()
        code = subprocess.run(
            wrapped, cwd=cwd, env=env or bench_scale.ENV, stdout=out, stderr=subprocess.STDOUT
        ).returncode
        elapsed = time.perf_counter() - start
        if code != 0:
            out.seek(0)
            raise SystemExit(f"{' '.join(cmd)} exited {code}: {out.read()[-600:]!r}")
        user, system, kib = report.read().split()[-3:]
    return Run(elapsed, float(user) + float(system), float(kib) / 1024)


def job(cmd: Sequence[str], cwd: str, env: Optional[Dict[str, str]] = None) -> Callable[[], Run]:
    return lambda: measure(cmd, cwd, env)


def openssl_job(repo: str, tmp: str) -> Callable[[], Run]:
    """Two openssl processes, each over half of the checked-out files."""
    folder = os.path.join(repo, "fixtures")
    names = sorted(
        os.path.relpath(os.path.join(d, f), folder)
        for d, _, files in os.walk(folder)
        for f in files
        if f != "SHA256SUMS"
    )
    halves = []
    for i, part in enumerate((names[0::2], names[1::2])):
        path = os.path.join(tmp, f"half{i}")
        with open(path, "w") as f:
            f.write("\n".join(part) + "\n")
        halves.append(path)
    script = " & ".join(f"xargs -a {h} openssl dgst -sha256 > {h}.out" for h in halves) + " & wait"
    return job(["sh", "-c", script], folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="every size 10x smaller")
    parser.add_argument("--repo", help="a repository bench_scale.build_fixtures built")
    parser.add_argument("--keep", action="store_true", help="keep the repository built")
    parser.add_argument("--only", action="append", help="a reader to run (repeatable)")
    parser.add_argument(
        "--before",
        metavar="DIR",
        help="a folder holding an older oracle_guard package (git archive REV hooks, "
        "renamed): its check is timed too, for a before and after",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--expected", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.repo, args.expected)
    if shutil.which("openssl") is None:
        raise SystemExit("openssl not found: it is the reference")
    tmp = tempfile.mkdtemp(prefix="oracle-guard-bench-packs-")
    try:
        repo = args.repo
        if repo is None:
            repo = os.path.join(tmp, "fixtures")
            sizes = bench_scale.Sizes(10 if args.quick else 1)
            bench_scale.build_fixtures(repo, sizes, random.Random(bench_scale.SEED))
        expected = os.path.join(tmp, "expected")
        with open(expected, "w") as f:
            for oid, digest in read_cat_file(repo, blob_ids(repo)).items():
                f.write(f"{oid} {digest}\n")
        print(bench_scale.header(args.runs, args.quick), flush=True)
        count = len(blob_ids(repo))
        pack_bytes = sum(
            os.path.getsize(os.path.join(repo, ".git", "objects", "pack", name))
            for name in os.listdir(os.path.join(repo, ".git", "objects", "pack"))
        )
        print(f"{count:,} blobs, packs of {pack_bytes / (1 << 30):.2f} GiB")
        names = []
        for name in args.only or list(READERS):
            if name in MODULES and not installed(MODULES[name]):
                print(f"  {name}: not installed, skipped (pip install {MODULES[name]})")
                continue
            names.append(name)
        me = [sys.executable, os.path.abspath(__file__), "--repo", repo, "--expected", expected]
        jobs = [job([*me, "--child", name], tmp) for name in names]
        # python -m for both the check and the one --before: the same start
        guard = [sys.executable, "-m", "oracle_guard", "check", "--now", bench_scale.NOW]
        guard += ["--only", "fixture-lock", "--head", "HEAD", "--no-cache"]
        jobs.append(job(guard, repo))
        names.append("check")
        LABELS["check"] = "oracle-guard check --only fixture-lock --head HEAD --no-cache"
        if args.before:
            older = dict(bench_scale.ENV, PYTHONPATH=os.path.abspath(args.before))
            jobs.append(job(guard, repo, older))
            names.append("before")
            LABELS["before"] = "the same check, the code in --before"
        jobs.append(openssl_job(repo, tmp))
        names.append("openssl")
        LABELS["openssl"] = "2 x openssl dgst -sha256 in parallel, half the files each"
        for each in jobs:  # one warm-up each: the page cache, .pyc files
            each()
        samples: List[List[Run]] = [[] for _ in jobs]
        for _ in range(args.runs):
            for each, taken in zip(jobs, samples):
                taken.append(each())
        reference = statistics.median(s.seconds for s in samples[-1])
        reference_cpu = statistics.median(s.cpu_seconds for s in samples[-1])
        print(f"  {'':62s} {'wall, median [min-max]':>28s}  {'CPU, median':>18s}")
        for name, taken in zip(names, samples):
            seconds = sorted(s.seconds for s in taken)
            cpu = statistics.median(s.cpu_seconds for s in taken)
            wall = statistics.median(seconds)
            print(
                f"  {LABELS[name]:62s} {wall * 1000:6.0f} ms "
                f"[{seconds[0] * 1000:.0f}-{seconds[-1] * 1000:.0f}] {wall / reference:5.2f}x  "
                f"{cpu * 1000:6.0f} ms {cpu / reference_cpu:5.2f}x  "
                f"max RSS {max(s.rss_mib for s in taken):6.1f} MiB",
                flush=True,
            )
            wrong = wrong_digests(expected, name)
            if wrong:
                print(f"    WRONG: {len(wrong)} digests differ from git's, {wrong[0]} first")
        if args.keep and args.repo is None:
            kept = tempfile.mkdtemp(prefix="oracle-guard-fixtures-")
            shutil.move(repo, kept)
            print(f"kept the repository: --repo {os.path.join(kept, 'fixtures')}")
    finally:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
