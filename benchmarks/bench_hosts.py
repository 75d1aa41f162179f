"""The hook's latency on real servers: N small honest pushes (one commit changing
src/) by the agent, each timed end to end from `git push` to its exit, to a
repository with the oracle-guard hook and to one without, interleaved; over
HTTP (lighttpd running git http-backend as its own account, basic auth) and
over ssh to gitolite3 (an sshd of its own). Each repository's first push (cold
cache) is not counted. Needs root: it creates and removes Unix accounts.

    python benchmarks/bench_hosts.py [--runs N] [--http-only]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # testing/

from testing.git import GIT_ENV, commit, git, init_repo
from testing.hosts import gitolite_host, hook_venv, system_account, world_folder
from testing.http_host import as_user, lighttpd, make_repo

SEEDS = "seeds/a.json"
SIGNERS = ".oracle-guard/allowed_signers"


def contract(identity_env: str) -> str:
    return f"""\
version: 1
seeds:
  - {{paths: ["seeds/*.json"], format: json-array}}
write_set:
  allow: ["src/**"]
  owners: [alice]
identity_env: {identity_env}
"""


GITOLITE_CONF = """\
repo gitolite-admin
    RW+     =   admin

repo bench
    RW+     =   alice
    RW      =   bob
"""


class Target:
    """One repository on a server and a client that pushes to it; push() commits
    one src/ change and returns the wall time of `git push`."""

    def __init__(
        self,
        client: Path,
        url: str,
        env_for: Callable[[str], Dict[str, str]],
        identity_env: str,
        hooked: bool,
    ) -> None:
        self.client, self.env_for, self.hooked, self.n = client, env_for, hooked, 0
        init_repo(client)
        git(client, "remote", "add", "origin", url)
        commit(
            client,
            {".oracle-guard.yaml": contract(identity_env), SEEDS: "[1, 2]\n", "src/app.py": "v0\n"},
            "the oracle",
        )
        self._push("alice")  # the first contract
        self.push()  # the first judged push: cold cache, not counted

    def _push(self, user: str) -> float:
        start = time.perf_counter()
        proc = subprocess.run(
            ["git", "-C", str(self.client), "push", "origin", "main"],
            env=self.env_for(user),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"push failed:\n{proc.stderr}")
        # the hook's line shows it ran, and only where it should
        if self.n and ("oracle-guard: push accepted" in proc.stderr) != self.hooked:
            raise SystemExit(f"hook {'missing' if self.hooked else 'present'}:\n{proc.stderr}")
        return elapsed

    def push(self) -> float:
        self.n += 1
        commit(self.client, {"src/app.py": f"v{self.n}\n"}, f"change {self.n}")
        return self._push("bob")


def measure(pair: Dict[str, Target], runs: int) -> Dict[str, List[float]]:
    samples: Dict[str, List[float]] = {name: [] for name in pair}
    for _ in range(runs):
        for name, target in pair.items():  # interleaved: load drifts hit both alike
            samples[name].append(target.push())
    return samples


def http_pair(base: Path, python: Path, runs: int) -> Dict[str, List[float]]:
    with system_account("ogbweb", "/usr/sbin/nologin", base=base) as account:
        folder = base / "http"
        folder.mkdir(mode=0o755)
        with lighttpd(account, folder) as host:
            pair = {}
            for name, hooked in (("no hook", False), ("hook", True)):
                repo_name = f"{name.replace(' ', '-')}.git"
                make_repo(host, repo_name, python if hooked else None)
                pair[name] = Target(
                    base / f"client-http-{repo_name}",
                    host.url(repo_name),
                    lambda user: as_user(host, user),
                    "REMOTE_USER",
                    hooked,
                )
            return measure(pair, runs)


def gitolite_pair(base: Path, python: Path, runs: int) -> Dict[str, List[float]]:
    pair = {}
    for keys in ("keys-plain", "keys-hooked"):
        (base / keys).mkdir(mode=0o700)
    with (
        gitolite_host(base, base / "keys-plain", conf=GITOLITE_CONF) as plain,
        gitolite_host(base, base / "keys-hooked", conf=GITOLITE_CONF) as hooked,
    ):
        done = hooked.run(
            python,
            "-m",
            "oracle_guard",
            "install-pre-receive",
            hooked.repositories,
            "--host",
            "gitolite",
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(
                f"install-pre-receive --host gitolite failed:\n{done.stdout}{done.stderr}"
            )
        for name, host in (("no hook", plain), ("hook", hooked)):
            host.run(
                "git", "--git-dir", host.repo("bench"), "symbolic-ref", "HEAD", "refs/heads/main"
            )
            pair[name] = Target(
                base / f"client-gitolite-{name.replace(' ', '-')}",
                host.url("bench"),
                lambda user, h=host: h.env(user),
                "GL_USER",
                name == "hook",
            )
        return measure(pair, runs)


def spread(values: List[float]) -> str:
    q = statistics.quantiles(values, n=4)
    return f"{q[0] * 1000:.0f}-{q[2] * 1000:.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--http-only", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench_hosts.py needs root: it creates Unix accounts and servers")
    os.environ.update(GIT_ENV)
    for name in (
        "CI",
        "GL_ID",
        "GL_USERNAME",
        "GL_USER",
        "REMOTE_USER",
        "GITHUB_USER_LOGIN",
        "GITEA_PUSHER_NAME",
        "ORACLE_GUARD_NOW",
    ):
        os.environ.pop(name, None)

    with world_folder("og-bench-hosts-") as base:
        python = hook_venv(base)
        hook_version = subprocess.run(
            [str(python), "-c", "import platform; print(platform.python_version())"],
            stdout=subprocess.PIPE,
            text=True,
        ).stdout.strip()
        results = {"HTTP (lighttpd, git http-backend)": http_pair(base, python, args.runs)}
        if not args.http_only:
            results["ssh (sshd, gitolite3)"] = gitolite_pair(base, python, args.runs)
    git_version = subprocess.run(
        ["git", "--version"], stdout=subprocess.PIPE, text=True
    ).stdout.split()[-1]
    print(
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
        f"hook Python {hook_version} (/usr/bin/python3 venv), git {git_version}; "
        f"{args.runs} interleaved pushes each, medians (p25-p75), warm cache"
    )
    print(f"  {'path':36} {'no hook ms':>16} {'hook ms':>16} {'added ms':>9} {'ratio':>6}")
    for path, samples in results.items():
        plain, hooked = (statistics.median(samples[k]) for k in ("no hook", "hook"))
        print(
            f"  {path:36} {plain * 1000:6.1f} ({spread(samples['no hook']):>7}) "
            f"{hooked * 1000:6.1f} ({spread(samples['hook']):>7}) "
            f"{(hooked - plain) * 1000:9.1f} {hooked / plain:5.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
