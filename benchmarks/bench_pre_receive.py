"""The server-side gate at size: a 10,000-file repository and a 1,000-commit push
touching 5,000 files, pushed to a bare repository with the oracle-guard hook and
without it, beside `git log --raw -z` over the pushed range; plus a typical
10-commit push. One run, several repetitions, medians.

    python benchmarks/bench_pre_receive.py [--runs N]
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

FILES = 10_000
COMMITS = 1_000
TOUCHED_PER_COMMIT = 5  # 1,000 x 5 = 5,000 files
CONTRACT = """\
version: 1
fixtures:
  - lock: oracle/fixtures.sha256
    root: oracle/inputs
    paths: ["oracle/inputs/**"]
seeds:
  - {paths: ["oracle/corpus.jsonl"], format: jsonl}
write_set:
  allow: ["src/**"]
  deny: ["oracle/**"]
"""
ENV = dict(
    os.environ,
    GIT_AUTHOR_NAME="bench",
    GIT_AUTHOR_EMAIL="bench@example.invalid",
    GIT_COMMITTER_NAME="bench",
    GIT_COMMITTER_EMAIL="bench@example.invalid",
    ORACLE_GUARD_NOW="2026-09-25",
)
for name in ("CI", "GL_ID", "GL_USERNAME", "REMOTE_USER", "GITHUB_USER_LOGIN"):
    ENV.pop(name, None)


def git(*args, cwd=None, stdin=None) -> bytes:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=ENV,
        input=stdin,
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ).stdout


def blob(data: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(data), data)


def fast_import_stream() -> bytes:
    """The base commit (10,000 files) on refs/heads/main, then 1,000 commits
    on refs/heads/big and 10 on refs/heads/small, built without a process each."""
    import hashlib

    out = [
        b"commit refs/heads/main\nmark :1\n",
        b"committer bench <bench@example.invalid> 1758800000 +0000\n",
        blob(b"base"),
        b"deleteall\n",
    ]
    lock = []
    for i in range(FILES - 101):
        out.append(b"M 100644 inline src/m%03d/f%05d.py\n" % (i % 100, i))
        out.append(blob(b"x = %d\n" % i))
    for i in range(100):
        data = b'{"case": %d}\n' % i
        lock.append(b"%s  f%03d.json\n" % (hashlib.sha256(data).hexdigest().encode(), i))
        out.append(b"M 100644 inline oracle/inputs/f%03d.json\n" % i)
        out.append(blob(data))
    out.append(b"M 100644 inline oracle/fixtures.sha256\n" + blob(b"".join(lock)))
    out.append(b"M 100644 inline oracle/corpus.jsonl\n" + blob(b'{"seed": 1}\n'))
    out.append(b"M 100644 inline .oracle-guard.yaml\n" + blob(CONTRACT.encode()))
    for branch, count, first_mark in ((b"big", COMMITS, 10_000), (b"small", 10, 20_000)):
        parent = b":1"
        for c in range(count):
            mark = b":%d" % (first_mark + c)
            out.append(b"commit refs/heads/%s\nmark %s\n" % (branch, mark))
            out.append(b"committer bench <bench@example.invalid> %d +0000\n" % (1758800001 + c))
            out.append(blob(b"change %d" % c))
            out.append(b"from %s\n" % parent)
            for t in range(TOUCHED_PER_COMMIT):
                n = (c * TOUCHED_PER_COMMIT + t) % (FILES - 101)
                out.append(b"M 100644 inline src/m%03d/f%05d.py\n" % (n % 100, n))
                out.append(blob(b"x = %d  # %s %d\n" % (n, branch, c)))
            parent = mark
    return b"".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    guard_python = sys.executable

    with tempfile.TemporaryDirectory(prefix="oracle-guard-bench-") as tmp:
        client = os.path.join(tmp, "client")
        git("init", "-q", "-b", "main", client)
        git("fast-import", "--quiet", cwd=client, stdin=fast_import_stream())
        git("checkout", "-q", "main", cwd=client)
        seed = os.path.join(tmp, "seed.git")
        # the server before the push: main only, so the push carries every new object
        git("clone", "-q", "--bare", "--single-branch", "--branch", "main", client, seed)

        def server(hooked: bool) -> str:
            path = tempfile.mkdtemp(dir=tmp, suffix=".git")
            shutil.rmtree(path)
            git("clone", "-q", "--bare", "--no-local", seed, path)
            if hooked:
                subprocess.run(
                    [guard_python, "-m", "oracle_guard", "install-pre-receive", path],
                    check=True,
                    stdout=subprocess.DEVNULL,
                    env=ENV,
                )
            return path

        def push(branch: str, hooked: bool) -> float:
            path = server(hooked)
            start = time.perf_counter()
            proc = subprocess.run(
                ["git", "push", "-q", path, f"{branch}:main"],
                cwd=client,
                env=ENV,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            elapsed = time.perf_counter() - start
            if proc.returncode != 0:
                raise SystemExit(f"push of {branch} failed:\n{proc.stderr.decode()}")
            shutil.rmtree(path)
            return elapsed

        def log_raw() -> float:
            start = time.perf_counter()
            git("log", "--raw", "-z", "main..big", cwd=client)
            return time.perf_counter() - start

        samples = {"hook": [], "no hook": [], "log": [], "small hook": []}
        push("big", True)  # warm caches
        for _ in range(args.runs):
            samples["hook"].append(push("big", True))
            samples["no hook"].append(push("big", False))
            samples["log"].append(log_raw())
            samples["small hook"].append(push("small", True))
    med = {k: statistics.median(v) for k, v in samples.items()}
    added = med["hook"] - med["no hook"]
    ratio = added / med["log"]
    print(
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {args.runs} runs each, medians"
    )
    print(
        f"  repository: {FILES} files; push: {COMMITS} commits touching "
        f"{COMMITS * TOUCHED_PER_COMMIT} files"
    )
    print(f"  push with the oracle-guard hook       {med['hook'] * 1000:8.1f} ms")
    print(f"  push with no hook                     {med['no hook'] * 1000:8.1f} ms")
    print(f"  git log --raw -z over the pushed range {med['log'] * 1000:7.1f} ms")
    print(
        f"  added by the hook: {added * 1000:.1f} ms = {ratio:.2f}x git log --raw "
        f"(goal < 2.0x): {'meets' if ratio < 2.0 else 'MISSES'} the goal"
    )
    print(
        f"  a 10-commit push with the hook        {med['small hook'] * 1000:8.1f} ms "
        f"(goal: well inside 5 s): {'meets' if med['small hook'] < 2.5 else 'MISSES'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
