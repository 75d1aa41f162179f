"""Every target of "fast at any size" beside its reference, in one run.

Synthetic repositories are built from a fixed seed with `git fast-import`; each
job runs after one untimed warm-up, interleaved with its reference, and the
medians, their ratio, the goal it meets or misses and the peak memory (max RSS
of the job's whole process tree, git's included, measured by GNU time) are printed.

    python benchmarks/bench_scale.py [--runs N] [--quick]

Needs check-jsonschema (the `bench` extra) and check-yaml (the pre-commit-hooks
package) beside this Python or on PATH:

    pip install '.[bench]' pre-commit-hooks

The full run writes about 2.2 GiB (1 GiB of random fixtures in a checkout and
again in git objects) to a temporary folder it deletes at the end, and takes
about 3 minutes on 2 cores; --quick shrinks every size 10x for a smoke run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_check  # build_demo_repo
import bench_pre_receive  # the push repository's fast-import stream

SEED = 20260925
NOW = "2026-09-25"
MEMORY_GOAL_MIB = 200
BINDIR = os.path.dirname(sys.executable)
GUARD = os.path.join(BINDIR, "oracle-guard")
# variables through which a CI system, pre-commit or a git server names revisions
_NOT_INHERITED = (
    "CI",
    "GITHUB_",
    "GITLAB_",
    "GL_",
    "BUILDKITE",
    "JENKINS",
    "TRAVIS",
    "TF_BUILD",
    "PRE_COMMIT",
    "GIT_",
    "ORACLE_GUARD_",
    "REMOTE_USER",
)
ENV = {k: v for k, v in os.environ.items() if not k.startswith(_NOT_INHERITED)}
ENV.update(
    GIT_AUTHOR_NAME="bench",
    GIT_AUTHOR_EMAIL="bench@example.invalid",
    GIT_COMMITTER_NAME="bench",
    GIT_COMMITTER_EMAIL="bench@example.invalid",
    GIT_CONFIG_NOSYSTEM="1",
    GIT_CONFIG_GLOBAL=os.devnull,
)
# the pre-receive hook has no --now flag: its clock comes from the environment
PUSH_ENV = dict(ENV, ORACLE_GUARD_NOW=NOW)


class Sizes:
    def __init__(self, scale: int) -> None:
        self.fixture_files = 10_000 // scale
        self.fixture_bytes = (1 << 30) // scale
        self.corpus_lines = 1_000_000 // scale
        self.appended_lines = 1_000 // scale
        self.changed_paths = 100_000 // scale
        self.push_commits = 1_000 // scale
        self.push_repo_files = 10_000 // scale


class Sample(NamedTuple):
    seconds: float
    rss_mib: float  # max RSS of the process and every child it waited for


def _gnu_time() -> Optional[str]:
    """GNU time, which forks the command from its own small process: a child
    forked from this benchmark would count the benchmark's memory as its own."""
    path = "/usr/bin/time"
    try:
        proc = subprocess.run(
            [path, "-f", "%M", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
    except OSError:
        return None
    return path if proc.returncode == 0 and proc.stderr.strip().isdigit() else None


GNU_TIME = _gnu_time()


def measure(cmd: Sequence[str], cwd: str, env: Dict[str, str], stdin: bytes = b"") -> Sample:
    """Wall time and peak memory of one command and its children; output goes to
    a real file, so no tool can notice /dev/null and skip its work."""
    with (
        tempfile.TemporaryFile() as given,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile() as rss,
    ):
        given.write(stdin)
        given.seek(0)
        wrapped = [GNU_TIME, "-f", "%M", "-o", rss.name, *cmd] if GNU_TIME else list(cmd)
        start = time.perf_counter()
        code = subprocess.run(
            wrapped, cwd=cwd, env=env, stdin=given, stdout=out, stderr=err
        ).returncode
        elapsed = time.perf_counter() - start
        if code != 0:
            out.seek(0)
            err.seek(0)
            raise SystemExit(
                f"{' '.join(cmd)} (in {cwd}) exited {code}:\n"
                f"{out.read()[-600:].decode(errors='replace')}"
                f"{err.read()[-600:].decode(errors='replace')}"
            )
        # the last line: GNU time puts "Command exited with non-zero status" before it
        kib = rss.read().split()[-1] if GNU_TIME else b"nan"
    return Sample(elapsed, float(kib) / 1024)


def command(
    cmd: Sequence[str], cwd: str, env: Dict[str, str] = ENV, stdin: bytes = b""
) -> Callable[[], Sample]:
    return lambda: measure(cmd, cwd, env, stdin)


def interleaved(jobs: Sequence[Callable[[], Sample]], runs: int) -> List[List[Sample]]:
    """One untimed warm-up each (page cache, .pyc files, a cache being filled),
    then the jobs in turn, so drift hits them alike."""
    for job in jobs:
        job()
    samples: List[List[Sample]] = [[] for _ in jobs]
    for _ in range(runs):
        for job, taken in zip(jobs, samples):
            taken.append(job())
    return samples


def median(samples: Sequence[Sample]) -> float:
    return statistics.median(s.seconds for s in samples)


def peak(samples: Sequence[Sample]) -> float:
    return max(s.rss_mib for s in samples)


# -- building ------------------------------------------------------------------
def git(*args: str, cwd: Optional[str] = None, stdin: Optional[bytes] = None) -> bytes:
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


def commit_header(ref: str, mark: int, when: int, parent: Optional[int] = None) -> bytes:
    head = b"commit %s\nmark :%d\ncommitter bench <bench@example.invalid> %d +0000\n%s" % (
        ref.encode(),
        mark,
        when,
        blob(b"commit %d" % mark),
    )
    return head + (b"from :%d\n" % parent if parent else b"")


def fast_import(repo: str, chunks: Iterable[bytes]) -> None:
    """A new repository filled from a fast-import stream written as it is made."""
    git("init", "-q", "-b", "main", repo)
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet"], cwd=repo, env=ENV, stdin=subprocess.PIPE
    )
    assert proc.stdin is not None
    with proc.stdin:
        for chunk in chunks:
            proc.stdin.write(chunk)
    if proc.wait() != 0:
        raise SystemExit(f"git fast-import failed in {repo}")


def tags(names: Dict[str, int]) -> bytes:
    return b"".join(b"reset refs/tags/%s\nfrom :%d\n\n" % (n.encode(), m) for n, m in names.items())


FIXTURE_CONTRACT = b"""\
version: 1
fixtures:
  - lock: fixtures/SHA256SUMS
    root: fixtures
    paths: ["fixtures/**"]
"""


def build_fixtures(repo: str, sizes: Sizes, rng: random.Random) -> None:
    """One commit of random (incompressible) fixture files and their sha256sum-style
    lock; the same bytes are written to the checkout for `sha256sum -c`."""

    def stream() -> Iterable[bytes]:
        yield commit_header("refs/heads/main", 1, 1758800000)
        each, extra = divmod(sizes.fixture_bytes, sizes.fixture_files)
        lock = []
        for i in range(sizes.fixture_files):
            data = rng.randbytes(each + (i < extra))
            name = f"d{i % 100:02d}/f{i:05d}.bin"
            target = os.path.join(repo, "fixtures", name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
            lock.append(f"{hashlib.sha256(data).hexdigest()}  {name}\n")
            yield b"M 100644 inline fixtures/%s\n" % name.encode() + blob(data)
        text = "".join(lock).encode()
        with open(os.path.join(repo, "fixtures", "SHA256SUMS"), "wb") as f:
            f.write(text)
        yield b"M 100644 inline fixtures/SHA256SUMS\n" + blob(text)
        yield b"M 100644 inline .oracle-guard.yaml\n" + blob(FIXTURE_CONTRACT)
        yield b"\n"

    os.makedirs(repo)
    fast_import(repo, stream())
    git("read-tree", "HEAD", cwd=repo)  # an index that matches HEAD, as after a checkout


SEED_CONTRACT = b"""\
version: 1
seeds:
  - {paths: ["oracle/corpus.jsonl"], format: jsonl}
"""


def build_corpus(repo: str, sizes: Sizes, rng: random.Random) -> int:
    """Tag A: corpus.jsonl of N lines; tag B: the same with lines appended."""

    def line(i: int) -> bytes:
        return b'{"id":%d,"seed":"%08x"}\n' % (i, rng.getrandbits(32))

    old = b"".join(line(i) for i in range(sizes.corpus_lines))
    new = old + b"".join(line(sizes.corpus_lines + i) for i in range(sizes.appended_lines))
    if len(new) > 32 << 20:  # the default limits.seed_bytes: stay a passing check
        raise SystemExit(f"corpus of {len(new)} bytes exceeds the default seed cap")
    contract = b"M 100644 inline .oracle-guard.yaml\n" + blob(SEED_CONTRACT)
    fast_import(
        repo,
        [
            commit_header("refs/heads/main", 1, 1758800000),
            contract,
            b"M 100644 inline src/app.py\n",
            blob(b"x = 1\n"),
            b"M 100644 inline oracle/corpus.jsonl\n",
            blob(old),
            b"\n",
            commit_header("refs/heads/main", 2, 1758800001, parent=1),
            b"M 100644 inline oracle/corpus.jsonl\n",
            blob(new),
            b"\n",
            tags({"A": 1, "B": 2}),
        ],
    )
    return len(old)


WRITE_SET_CONTRACT = b"""\
version: 1
write_set:
  allow: ["src/**"]
  deny: ["oracle/**"]
"""


def build_write_set(repo: str, sizes: Sizes) -> None:
    """Tag A: N source files; tag B: every one of them changed (a mass reformat)."""

    def files(suffix: bytes) -> Iterable[bytes]:
        for i in range(sizes.changed_paths):
            yield b"M 100644 inline src/m%03d/f%06d.py\n" % (i % 1000, i)
            yield blob(b"x = %d%s\n" % (i, suffix))

    def stream() -> Iterable[bytes]:
        yield commit_header("refs/heads/main", 1, 1758800000)
        yield b"M 100644 inline .oracle-guard.yaml\n" + blob(WRITE_SET_CONTRACT)
        yield b"M 100644 inline oracle/corpus.jsonl\n" + blob(b'{"seed": 1}\n')
        yield from files(b"")
        yield b"\n"
        yield commit_header("refs/heads/main", 2, 1758800001, parent=1)
        yield from files(b"  # reformatted")
        yield b"\n"
        yield tags({"A": 1, "B": 2})

    fast_import(repo, stream())


# -- the rows ------------------------------------------------------------------
class Row(NamedTuple):
    number: int
    title: str
    ours: str
    ours_seconds: float
    reference: str
    reference_seconds: float
    goal: float
    rss_mib: float  # oracle-guard's peak, judged against MEMORY_GOAL_MIB
    reference_rss_mib: float
    notes: List[str]

    @property
    def ratio(self) -> float:
        return self.ours_seconds / self.reference_seconds


def verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def print_row(row: Row) -> None:
    print(f"{row.number}. {row.title}")
    print(f"     {row.ours:62s} {row.ours_seconds * 1000:9.1f} ms   max RSS {row.rss_mib:7.1f} MiB")
    print(
        f"     {row.reference:62s} {row.reference_seconds * 1000:9.1f} ms   "
        f"max RSS {row.reference_rss_mib:7.1f} MiB"
    )
    for note in row.notes:
        print(f"     {note}")
    print(
        f"     ratio {row.ratio:.3f}x (goal <= {row.goal}x): {verdict(row.ratio <= row.goal)};"
        f" memory {row.rss_mib:.1f} MiB (goal <= {MEMORY_GOAL_MIB} MiB): "
        f"{verdict(row.rss_mib <= MEMORY_GOAL_MIB)}",
        flush=True,
    )


def pair(
    number: int,
    title: str,
    goal: float,
    ours: str,
    ours_job,
    reference: str,
    reference_job,
    runs: int,
    notes: Sequence[str] = (),
) -> Row:
    mine, theirs = interleaved([ours_job, reference_job], runs)
    row = Row(
        number,
        title,
        ours,
        median(mine),
        reference,
        median(theirs),
        goal,
        peak(mine),
        peak(theirs),
        list(notes),
    )
    print_row(row)
    return row


def find_tool(name: str, install: str) -> str:
    found = shutil.which(name, path=BINDIR) or shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} not found beside {sys.executable} or on PATH: {install}")
    return found


def has_no_cache_flag() -> bool:
    out = subprocess.run(
        [GUARD, "check", "--help"], env=ENV, stdout=subprocess.PIPE, check=True
    ).stdout
    return b"--no-cache" in out


def header(runs: int, quick: bool) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    from oracle_guard import __version__

    version = git("--version").decode().strip().replace("git version ", "")
    return (
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()} ({cpu}), "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, git {version}, "
        f"oracle-guard {__version__}; {runs} runs each after a warm-up, medians"
        f"{'; --quick: every size 1/10' if quick else ''}"
    )


class GitDirState:
    """The git directory as built; what runs add to it (a cache) can be wiped."""

    def __init__(self, repo: str) -> None:
        self.dir = git("rev-parse", "--absolute-git-dir", cwd=repo).decode().strip()
        self.names = set(os.listdir(self.dir))

    def added(self) -> List[str]:
        return sorted(set(os.listdir(self.dir)) - self.names)

    def wipe(self) -> None:
        for name in self.added():
            path = os.path.join(self.dir, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.remove(path)


def folder_bytes_of(folder: str, names: Sequence[str]) -> int:
    total = 0
    for name in names:
        path = os.path.join(folder, name)
        total += folder_bytes(path) if os.path.isdir(path) else os.lstat(path).st_size
    return total


def folder_bytes(path: str) -> int:
    return sum(os.lstat(os.path.join(d, f)).st_size for d, _, names in os.walk(path) for f in names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per job (default 3)")
    parser.add_argument("--quick", action="store_true", help="every size 10x smaller")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    sizes = Sizes(10 if args.quick else 1)
    checker = find_tool("check-jsonschema", "pip install '.[bench]'")
    check_yaml = find_tool("check-yaml", "pip install pre-commit-hooks")
    no_cache = ["--no-cache"] if has_no_cache_flag() else []
    guard = [GUARD, "check", "--now", NOW]
    rng = random.Random(SEED)
    print(header(args.runs, args.quick), flush=True)
    began = time.perf_counter()
    rows: List[Row] = []

    with tempfile.TemporaryDirectory(prefix="oracle-guard-bench-scale-") as tmp:
        from oracle_guard.parsing import validation

        # 1, 2: the demo repository
        demo = os.path.join(tmp, "demo")
        bench_check.build_demo_repo(demo)
        small_json = os.path.join(tmp, "freeze.json")
        with open(small_json, "w") as f:
            f.write('{"excluded_property_ids": ["a"], "reason": {"a": "flaky"}}\n')
        rows.append(
            pair(
                1,
                "oracle-guard check, all five hooks, on the demo repository",
                1.0,
                "oracle-guard check",
                command(guard, demo),
                "check-jsonschema --schemafile freeze.schema.json, one file",
                command(
                    [checker, "--schemafile", validation.schema_path("freeze"), small_json], tmp
                ),
                args.runs,
            )
        )
        rows.append(
            pair(
                2,
                "one hook alone (fixture-lock) on the demo repository",
                2.0,
                "oracle-guard check --only fixture-lock",
                command(guard + ["--only", "fixture-lock"], demo),
                "check-yaml (pre-commit-hooks) on .oracle-guard.yaml",
                command([check_yaml, ".oracle-guard.yaml"], demo),
                args.runs,
            )
        )

        # 3, 4: fixture-lock at size, from git objects
        started = time.perf_counter()
        fixtures = os.path.join(tmp, "fixtures")
        build_fixtures(fixtures, sizes, rng)
        built = (
            f"built in {time.perf_counter() - started:.0f} s; "
            f"{folder_bytes(fixtures) / (1 << 30):.2f} GiB on disk with the checkout"
        )
        lock_cmd = guard + ["--only", "fixture-lock", "--head", "HEAD"]
        size_text = (
            f"{sizes.fixture_files:,} files, "
            f"{sizes.fixture_bytes / (1 << 30):.2f} GiB of random bytes"
        )
        built_state = GitDirState(fixtures)

        def cold() -> Sample:
            if not no_cache:  # no flag: remove what runs left in the git directory
                built_state.wipe()
            return measure(lock_cmd + no_cache, fixtures, ENV)

        rows.append(
            pair(
                3,
                f"fixture-lock, cold cache, {size_text}, judged from git objects",
                0.6,
                " ".join(["oracle-guard check --only fixture-lock --head HEAD", *no_cache]),
                cold,
                "sha256sum -c SHA256SUMS of the same files in the checkout",
                command(["sha256sum", "-c", "SHA256SUMS"], os.path.join(fixtures, "fixtures")),
                args.runs,
                [
                    built,
                    "cold: --no-cache"
                    if no_cache
                    else "cold: no --no-cache flag, so what earlier runs added to the git "
                    "directory is removed before each run",
                ],
            )
        )
        warm = command(lock_cmd, fixtures)
        mine, theirs = interleaved([warm, cold], args.runs)
        left = built_state.added()
        cache_note = (
            f"the cache: {', '.join(left)} in the git directory, "
            f"{folder_bytes_of(built_state.dir, left) / 1024:.0f} KiB"
            if left
            else "no cache yet: nothing was written to the git directory"
        )
        row = Row(
            4,
            f"fixture-lock, warm cache, the same {sizes.fixture_files:,} files unchanged",
            "oracle-guard check --only fixture-lock --head HEAD (warm)",
            median(mine),
            "the same hook cold",
            median(theirs),
            0.05,
            peak(mine),
            peak(theirs),
            [cache_note],
        )
        print_row(row)
        rows.append(row)
        shutil.rmtree(fixtures)  # 2 GiB: gone before the next repository is built

        # 5: seed-append-only on a large corpus
        corpus = os.path.join(tmp, "corpus")
        corpus_bytes = build_corpus(corpus, sizes, rng)
        rows.append(
            pair(
                5,
                f"seed-append-only, {sizes.corpus_lines:,}-line corpus.jsonl "
                f"({corpus_bytes / (1 << 20):.1f} MiB), {sizes.appended_lines:,} lines appended",
                2.0,
                "oracle-guard check --only seed-append-only --base A --head B",
                command(
                    guard + ["--only", "seed-append-only", "--base", "A", "--head", "B"], corpus
                ),
                "git diff --stat A B",
                command(["git", "diff", "--stat", "A", "B"], corpus),
                args.runs,
            )
        )

        # 6: write-set over a change of many paths
        paths = os.path.join(tmp, "write-set")
        build_write_set(paths, sizes)
        rows.append(
            pair(
                6,
                f"write-set over a change of {sizes.changed_paths:,} paths",
                2.0,
                "oracle-guard check --only write-set --base A --head B",
                command(guard + ["--only", "write-set", "--base", "A", "--head", "B"], paths),
                "git diff --name-only -z A B",
                command(["git", "diff", "--name-only", "-z", "A", "B"], paths),
                args.runs,
            )
        )

        # 7: pre-receive on a large push
        rows.append(push_row(tmp, sizes, args.runs))
        used = folder_bytes(tmp)

    print(
        f"total {time.perf_counter() - began:.0f} s; the temporary folder held "
        f"{used / (1 << 20):.0f} MiB at the end (removed)"
    )
    print("summary:")
    for row in rows:
        print(
            f"  {row.number}. {row.ratio:8.3f}x (goal <= {row.goal:4}x) "
            f"{verdict(row.ratio <= row.goal):6s}  {row.rss_mib:7.1f} MiB "
            f"{verdict(row.rss_mib <= MEMORY_GOAL_MIB):6s}  {row.title}"
        )
    return 0


class PushSamples(NamedTuple):
    hooked: List[Sample]  # the push with the hook
    bare: List[Sample]  # without it
    log: List[Sample]  # git log --raw -z over the range
    alone: List[Sample]  # the hook run alone on a server the push reached
    title: str


def push_samples(tmp: str, sizes: Sizes, runs: int) -> PushSamples:
    """A push to a fresh bare server with the hook, and without it, beside
    `git log --raw -z` over the pushed range. The hook is also run alone, for its
    own peak memory (the push's tree includes git's receive-pack), on a server
    holding the pushed objects with main still at the old tip, as during a push."""
    bench_pre_receive.FILES = sizes.push_repo_files
    bench_pre_receive.COMMITS = sizes.push_commits
    touched = sizes.push_commits * bench_pre_receive.TOUCHED_PER_COMMIT
    client = os.path.join(tmp, "client")
    git("init", "-q", "-b", "main", client)
    git("fast-import", "--quiet", cwd=client, stdin=bench_pre_receive.fast_import_stream())
    git("checkout", "-q", "main", cwd=client)
    seed = os.path.join(tmp, "seed.git")
    # the server before the push: main only, so the push carries every new object
    git("clone", "-q", "--bare", "--single-branch", "--branch", "main", client, seed)
    old = git("rev-parse", "main", cwd=client).decode().strip()
    new = git("rev-parse", "big", cwd=client).decode().strip()

    def server(hooked: bool) -> str:
        path = tempfile.mkdtemp(dir=tmp, suffix=".git")
        shutil.rmtree(path)
        git("clone", "-q", "--bare", "--no-local", seed, path)
        if hooked:
            subprocess.run(
                [sys.executable, "-m", "oracle_guard", "install-pre-receive", path],
                check=True,
                stdout=subprocess.DEVNULL,
                env=PUSH_ENV,
            )
        return path

    def push(hooked: bool) -> Callable[[], Sample]:
        def job() -> Sample:
            path = server(hooked)
            try:
                return measure(["git", "push", "-q", path, "big:main"], client, PUSH_ENV)
            finally:
                shutil.rmtree(path)

        return job

    hooked, bare, log = interleaved(
        [push(True), push(False), command(["git", "log", "--raw", "-z", "main..big"], client)], runs
    )
    reached = server(False)
    git("push", "-q", reached, "big:main", cwd=client)
    # main back at the old tip, the new objects kept: the server as the hook sees it
    git("update-ref", "refs/heads/main", old, cwd=reached)
    alone = interleaved(
        [
            command(
                [sys.executable, "-I", "-m", "oracle_guard", "pre-receive"],
                reached,
                PUSH_ENV,
                f"{old} {new} refs/heads/main\n".encode(),
            )
        ],
        runs,
    )[0]
    shutil.rmtree(reached)
    title = (
        f"pre-receive, a {sizes.push_commits:,}-commit push touching {touched:,} "
        f"files (repository of {sizes.push_repo_files:,} files)"
    )
    return PushSamples(hooked, bare, log, alone, title)


def push_row(tmp: str, sizes: Sizes, runs: int) -> Row:
    """The hook's added time (push with it minus push without) beside the reference."""
    hooked, bare, log, alone, title = push_samples(tmp, sizes, runs)
    added = median(hooked) - median(bare)
    row = Row(
        7,
        title,
        "added by the hook (push with it minus push without)",
        added,
        "git log --raw -z over the pushed range",
        median(log),
        2.0,
        peak(alone),
        peak(log),
        [
            f"push with the hook {median(hooked) * 1000:.1f} ms (max RSS of the push's "
            f"processes {peak(hooked):.1f} MiB), without {median(bare) * 1000:.1f} ms",
            f"the hook run alone on the pushed server: {median(alone) * 1000:.1f} ms, "
            f"max RSS {peak(alone):.1f} MiB (the memory judged below)",
        ],
    )
    print_row(row)
    return row


if __name__ == "__main__":
    raise SystemExit(main())
