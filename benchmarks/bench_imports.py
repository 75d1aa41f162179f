"""What importing GitPython would cost each hook run, beside what oracle-guard's
own runtime dependencies cost: the wall and CPU time of a bare Python start, of
`import git` (and of importing each dependency), of `oracle-guard check --help`,
and of one git read (the paths a commit changes) done by GitPython and by
oracle-guard's plumbing, each a whole process.

    python benchmarks/bench_imports.py [--runs N]

GitPython and this checkout (not editable, so with its bytecode written, as a
pip install leaves it) are installed into a throwaway venv made from this
interpreter's base Python, with pip from the package index; oracle-guard itself
never imports GitPython. When either cannot be installed the script exits 1 with
one line. Every job runs that venv's Python. Interleaved runs after one warm-up each;
medians with the fastest and slowest run, and the median CPU time of each process
and the git it ran. The import figures are `-X importtime`'s
(a module, the packages above it and all they import) for GitPython and for
oracle-guard's runtime dependencies, which its code imports only where needed.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Sequence, Tuple

FILES = 2_000  # in the repository the git read runs on
CHANGED = 200  # files the last commit changes
# GitPython, and oracle-guard's runtime dependencies as its code imports them
MODULES = ["git", "yaml", "jsonschema", "cryptography.hazmat.primitives.asymmetric.ed25519"]
if sys.version_info < (3, 11):
    MODULES.append("tomli")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}

# the same read: every path HEAD~1..HEAD changes, as a list
GITPYTHON_READ = (
    "import sys, git\n"
    "r = git.Repo(sys.argv[1])\n"
    "paths = [d.b_path or d.a_path for d in r.commit('HEAD~1').diff('HEAD')]\n"
    "assert len(paths) == %d, len(paths)\n" % CHANGED
)
OURS_READ = (
    "import sys\n"
    "from oracle_guard.git.plumbing import Git\n"
    "g = Git(sys.argv[1])\n"
    "paths, _ = g.diff_paths(g.resolve_commit('HEAD~1'), g.resolve_commit('HEAD'))\n"
    "assert len(paths) == %d, len(paths)\n" % CHANGED
)


def fail(line: str) -> SystemExit:
    return SystemExit(f"bench_imports: {line}")


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_venv(folder: str) -> str:
    """A venv with GitPython and oracle-guard; its python's path."""
    base = getattr(sys, "_base_executable", sys.executable)
    made = subprocess.run(
        [base, "-m", "venv", folder], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    if made.returncode != 0:
        raise fail(f"python -m venv failed: {made.stdout.decode().strip().splitlines()[-1:]}")
    python = os.path.join(folder, "bin", "python")
    pip = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "GitPython", ROOT],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    if pip.returncode != 0:
        said = [line.strip() for line in pip.stdout.decode("utf-8", "replace").splitlines()]
        # pip's last verdict, not the hint lines it prints after it
        errors = [line for line in said if line.startswith("ERROR:")]
        reason = (errors or [line for line in said if line] or ["pip exit %d" % pip.returncode])[-1]
        raise fail(f"cannot install GitPython and oracle-guard: {reason}")
    return python


def build_repo(path: str) -> None:
    env = {**os.environ, **GIT_ENV}

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", path, *args], env=env, check=True, stdout=subprocess.DEVNULL)

    os.makedirs(path)
    git("init", "-q")
    for i in range(FILES):
        folder = os.path.join(path, "src", "d%02d" % (i % 40))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "f%04d.txt" % i), "w") as out:
            out.write("line %d\n" % i)
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    for i in range(0, FILES, FILES // CHANGED):
        with open(os.path.join(path, "src", "d%02d" % (i % 40), "f%04d.txt" % i), "a") as out:
            out.write("changed\n")
    git("commit", "-q", "-a", "-m", "change")


def import_time_us(python: str, module: str) -> int:
    """`-X importtime`'s cumulative microseconds for importing `module` and the
    packages above it: the top-level lines printed after the interpreter's own
    start-up imports."""
    code = "import sys; sys.stderr.write('START\\n'); import " + module
    proc = subprocess.run(
        [python, "-X", "importtime", "-c", code],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=True,
    )
    lines = proc.stderr.decode().splitlines()
    if "START" not in lines:
        raise fail(f"python -X importtime printed nothing for {module}")
    total = 0
    for line in lines[lines.index("START") + 1 :]:
        parts = line.split("|")
        # a nested import's name is indented below the one that imported it
        if len(parts) == 3 and parts[2].startswith(" ") and not parts[2].startswith("  "):
            total += int(parts[1])
    return total


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(cmd: Sequence[str]) -> Tuple[float, float]:
    """Wall time, and CPU time (user + system, git's included), which a busy
    machine moves far less."""
    cpu = children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    cpu = children_cpu() - cpu
    if proc.returncode != 0:
        raise fail(f"{' '.join(cmd[:3])} failed: {proc.stderr.decode()[-200:].strip()}")
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    if args.runs < 1:
        raise fail("--runs must be at least 1")

    with tempfile.TemporaryDirectory(prefix="oracle-guard-bench-imports-") as tmp:
        python = make_venv(os.path.join(tmp, "venv"))
        guard = os.path.join(os.path.dirname(python), "oracle-guard")
        repo = os.path.join(tmp, "repo")
        build_repo(repo)
        jobs: Dict[str, List[str]] = {
            "python -c pass": [python, "-c", "pass"],
            **{f"python -c 'import {m}'": [python, "-c", f"import {m}"] for m in MODULES},
            "oracle-guard check --help": [guard, "check", "--help"],
            "GitPython: the paths HEAD~1..HEAD changes": [python, "-c", GITPYTHON_READ, repo],
            "oracle-guard's Git.diff_paths: the same": [python, "-c", OURS_READ, repo],
        }
        times: Dict[str, List[float]] = {name: [] for name in jobs}
        cpus: Dict[str, List[float]] = {name: [] for name in jobs}
        for cmd in jobs.values():
            timed(cmd)  # warm-up: bytecode written, files in the page cache
        imports: Dict[str, List[int]] = {module: [] for module in MODULES}
        for _ in range(args.runs):
            for name, cmd in jobs.items():
                elapsed, cpu = timed(cmd)
                times[name].append(elapsed)
                cpus[name].append(cpu)
            for module in MODULES:
                imports[module].append(import_time_us(python, module))
        version = subprocess.run(
            [python, "-c", "import git; print(git.__version__)"],
            stdout=subprocess.PIPE,
            check=True,
            text=True,
        ).stdout.strip()

    print(
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"GitPython {version}, {args.runs} interleaved runs; medians (min to max)"
    )
    for module, runs in imports.items():
        print(f"  import {module}: {statistics.median(runs) / 1000:.1f} ms (-X importtime)")
    floor = statistics.median(times["python -c pass"])
    for name, runs in times.items():
        median = statistics.median(runs)
        print(
            f"  {name}: {median * 1000:.1f} ms ({min(runs) * 1000:.1f} to "
            f"{max(runs) * 1000:.1f}), {(median - floor) * 1000:+.1f} ms over python -c pass; "
            f"CPU {statistics.median(cpus[name]) * 1000:.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
