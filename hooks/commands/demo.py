"""``oracle-guard demo``: a throwaway repository, one honest change, and the
edits an agent might try, each judged by the real hooks."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Callable, Dict, List, Tuple

from oracle_guard.commands.options import debug_only

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers

NOW = "2026-09-25"  # fixed, so the demo prints the same every day

CONTRACT = """\
version: 1
fixtures:
  - lock: oracle/fixtures.lock.json
    root: oracle/inputs
    paths: ["oracle/inputs/**"]
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
freeze:
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
budget:
  max_frozen: 3
  max_days: 14
  warn_days: 3
  known_ids: ["seeds/*.json"]
write_set:
  allow: ["src/**", "tests/**", "README.md"]
  deny: ["oracle/**", "seeds/**", ".pre-commit-config.yaml", ".pre-commit-config.yml", "prek.toml"]
  owners: [alice]
tamper:
  paths: ["tests/**"]
score:
  tests: ["tests/**"]
  pin: {randomly_seed: 20260925}
identity_env: GL_USERNAME
"""

PRICING = """\
[
  {"id": "p1", "price_cents": 1000, "rate_bps": 250},
  {"id": "p2", "price_cents": 1999, "rate_bps": 0}
]
"""

BUDGET = """\
max_frozen: 3
frozen:
  - id: discount_rounding
    owner: billing
    expires: "2026-10-07"
    reason: "promo calendar not pinned in fixture"
"""

# The owners' tests. One fails: price rounds the rate down; the owners want half up.
TESTS = """\
from src.pricing import price


def test_no_rate():
    assert price(100, 0) == 100


def test_rate_rounds_half_up():
    assert price(1999, 250) == 2049
"""

# An agent's way to a green run: the failing test is never collected.
DESELECTING_CONFTEST = '''\
"""Shared test setup."""


def pytest_collection_modifyitems(config, items):
    items[:] = [item for item in items if item.name != "test_rate_rounds_half_up"]
'''

SEEDS = [
    {"cents": 1000, "rate_bps": 250, "expect": 1025},
    {"cents": 1999, "rate_bps": 0, "expect": 1999},
    {"cents": 1, "rate_bps": 9999, "expect": 1},
]

BASELINE: Dict[str, str] = {
    ".oracle-guard.yaml": CONTRACT,
    "oracle/inputs/pricing.json": PRICING,
    "oracle/flake_budget.yaml": BUDGET,
    "seeds/discount_rounding.json": json.dumps(SEEDS, indent=2) + "\n",
    "seeds/price_total.json": json.dumps(SEEDS[:2], indent=2) + "\n",
    "tests/test_pricing.py": TESTS,
    "src/pricing.py": "def price(cents, rate_bps):\n    return cents + cents * rate_bps // 10000\n",
    "README.md": "# shop\n",
}

GIT_ENV = {
    "GIT_AUTHOR_NAME": "oracle-guard demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "oracle-guard demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
    # fixed dates, so the commit ids the hints print are the same every run
    "GIT_AUTHOR_DATE": f"{NOW}T12:00:00+00:00",
    "GIT_COMMITTER_DATE": f"{NOW}T12:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class Repo:
    def __init__(self, path: str) -> None:
        self.path = path
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self.env.update(GIT_ENV)

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", "-C", self.path, *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"git {args[0]} failed: {proc.stderr.decode().strip()}")
        return proc.stdout.decode()

    def write(self, name: str, text: str) -> None:
        target = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)

    def read(self, name: str) -> str:
        with open(os.path.join(self.path, name), encoding="utf-8") as f:
            return f.read()


# -- the scenarios: (title, edit, expected exit) ------------------------------
def honest_change(repo: Repo) -> None:
    repo.write(
        "src/pricing.py",
        repo.read("src/pricing.py") + "\n\ndef free(cents):\n    return price(cents, 0) == cents\n",
    )
    repo.write(
        "tests/test_free.py",
        "from src.pricing import free\n\n\ndef test_free_is_the_price():\n    assert free(100)\n",
    )


def append_seed(repo: Repo) -> None:
    seeds = json.loads(repo.read("seeds/price_total.json"))
    seeds.append({"cents": 5, "rate_bps": 2000, "expect": 6})
    repo.write("seeds/price_total.json", json.dumps(seeds, indent=2) + "\n")


def rewrite_fixture(repo: Repo) -> None:
    repo.write("oracle/inputs/pricing.json", PRICING.replace('"rate_bps": 250', '"rate_bps": 0'))


def rewrite_fixture_and_lock(repo: Repo) -> None:
    rewrite_fixture(repo)
    # deferred: cli imports this module for its parser; hashlib: 2 ms, for a run
    import hashlib

    digest = hashlib.sha256(repo.read("oracle/inputs/pricing.json").encode()).hexdigest()
    repo.write("oracle/fixtures.lock.json", json.dumps({"pricing.json": digest}, indent=2) + "\n")


def reorder_seeds(repo: Repo) -> None:
    seeds = json.loads(repo.read("seeds/discount_rounding.json"))
    seeds[0], seeds[2] = seeds[2], seeds[0]
    repo.write("seeds/discount_rounding.json", json.dumps(seeds, indent=2) + "\n")


def delete_seed_file(repo: Repo) -> None:
    repo.git("rm", "-q", "seeds/price_total.json")


def stretch_quarantine(repo: Repo) -> None:
    repo.write(
        "oracle/flake_budget.yaml",
        BUDGET.replace("2026-10-07", "2027-01-31")
        + """\
  - id: price_total
    owner: ""
    expires: "2026-12-31"
    reason: "flaky, skip for now"
""",
    )


def loosen_contract(repo: Repo) -> None:
    repo.write(
        ".oracle-guard.yaml",
        CONTRACT.replace('"seeds/**", ', "").split("seeds:")[0]
        + "freeze:"
        + CONTRACT.split("freeze:")[1],
    )
    seeds = json.loads(repo.read("seeds/discount_rounding.json"))
    repo.write("seeds/discount_rounding.json", json.dumps(seeds[1:], indent=2) + "\n")


def widen_write_set(repo: Repo) -> None:
    repo.write("oracle/write_set.txt", "src/\noracle/\n")
    repo.write("src/pricing.py", repo.read("src/pricing.py").replace("//", "/"))


def deselect_failing_test(repo: Repo) -> None:
    repo.write("tests/conftest.py", DESELECTING_CONFTEST)


# (title, edit, hooks to run, expected exit)
SCENARIOS: List[Tuple[str, Callable[[Repo], None], str, int]] = [
    ("an honest change: edit src/, add a test", honest_change, "", 0),
    (
        "an owner appends a seed (seed-append-only alone; the write set keeps seeds/ for humans)",
        append_seed,
        "seed-append-only",
        0,
    ),
    ("rewrite a fixture", rewrite_fixture, "", 1),
    ("rewrite a fixture and its lock together", rewrite_fixture_and_lock, "", 1),
    ("reorder property-test seeds", reorder_seeds, "", 1),
    ("delete a seed file", delete_seed_file, "", 1),
    ("stretch a quarantine past the budget", stretch_quarantine, "", 1),
    ("loosen the contract in the same change", loosen_contract, "", 1),
    ("edit an oracle path outside the write set", widen_write_set, "", 1),
    ("deselect the owners' failing test in a new tests/conftest.py", deselect_failing_test, "", 1),
]


def edit_expected_value(repo: Repo) -> None:
    repo.write("tests/test_pricing.py", TESTS.replace("== 2049", "== 2048"))


def round_half_up(repo: Repo) -> None:
    repo.write(
        "src/pricing.py",
        "def price(cents, rate_bps):\n    return cents + (cents * rate_bps + 5000) // 10000\n",
    )


# committed changes, judged by check and scored: (title, edit, show check, expected score exit)
SCORED: List[Tuple[str, Callable[[Repo], None], bool, int]] = [
    (
        "edit the failing test's expected value (tests/ is in the write set: every check passes)",
        edit_expected_value,
        True,
        1,
    ),
    ("the honest fix: round half up in src/pricing.py", round_half_up, False, 0),
]


def scored(repo: Repo, base: str) -> Tuple[int, str]:
    """What `oracle-guard score --base BASE --head HEAD` prints, with its exit code."""

    # deferred: cli imports this module for its parser; 13 ms, for a run
    from oracle_guard.commands import score

    record = score.score(repo.path, base, "HEAD", None, now=NOW, env={}, python=sys.executable)
    return (0 if record["verdict"] == "passed" else 1), score.render_text(record)


def judge(repo: Repo, only: str) -> Tuple[int, str]:
    """What `oracle-guard check` prints for the staged change, with its exit code."""
    # deferred: cli imports this module for its parser; 16 ms, for a run
    from oracle_guard.check_run import check
    from oracle_guard.findings import HOOKS

    out = io.StringIO()
    hooks = only.split(",") if only else HOOKS
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = check(repo.path, hooks, now=NOW, env={})
    return code, out.getvalue()


def baseline(path: str) -> Repo:
    """A repository at ``path`` whose one commit holds the demo's oracle."""
    # deferred: cli imports this module for its parser; 14 ms, for a run
    from oracle_guard.commands.lock import write_locks

    os.makedirs(path, exist_ok=True)
    repo = Repo(path)
    repo.git("init", "-q")
    for name, text in BASELINE.items():
        repo.write(name, text)
    repo.git("add", "-A")
    with contextlib.redirect_stdout(io.StringIO()):
        write_locks(path)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "baseline: the oracle, owned by humans")
    return repo


def play(path: str, write: Callable[[str], object]) -> bool:
    """Judge every scenario in a repository at ``path``; True when each did as expected."""
    repo = baseline(path)
    write(
        f"A repository with a merge contract (.oracle-guard.yaml), judged at {NOW}:\n"
        "locked fixtures under oracle/inputs/, append-only seeds/, a flake budget, "
        "a write set,\nand the owners' tests in tests/ (one fails), judged for tampering.\n"
        "Each change below is staged, then judged as `git commit` "
        "would judge it.\n"
    )
    all_as_expected = True
    for number, (title, edit, only, expected) in enumerate(SCENARIOS):
        repo.git("reset", "-q", "--hard")
        repo.git("clean", "-q", "-fdx")
        edit(repo)
        repo.git("add", "-A")
        code, output = judge(repo, only)
        verdict = "accepted" if code == 0 else f"rejected (exit {code})"
        ok = code == expected
        all_as_expected &= ok
        command = "oracle-guard check" + (f" --only {only}" if only else "")
        write(
            f"\n── {number}. {title}\n   $ {command}   -> {verdict}"
            f"{'' if ok else '  <-- NOT AS EXPECTED'}\n"
        )
        write("".join(f"   {line}\n" for line in output.splitlines()))
    base = repo.git("rev-parse", "HEAD").strip()
    write(
        f"\nThe score: each change below is committed, and `oracle-guard score` runs the "
        f"owners' tests,\nas the baseline ({base[:12]}) has them, against the change's code, "
        "in a pytest subprocess.\n"
    )
    for number, (title, edit, show_check, expected) in enumerate(SCORED, len(SCENARIOS)):
        repo.git("reset", "-q", "--hard", base)
        repo.git("clean", "-q", "-fdx")
        edit(repo)
        repo.git("commit", "-q", "-am", title)
        write(f"\n── {number}. {title}\n")
        if show_check:
            # deferred: cli imports this module for its parser; 14 ms, for a run
            from oracle_guard.check_run import check
            from oracle_guard.findings import HOOKS

            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                code = check(repo.path, HOOKS, base, "HEAD", now=NOW, env={})
            all_as_expected &= code == 0
            verdict = "accepted" if code == 0 else f"rejected (exit {code})"
            write(f"   $ oracle-guard check --base {base[:12]} --head HEAD   -> {verdict}\n")
        code, output = scored(repo, base)
        ok = code == expected
        all_as_expected &= ok
        verdict = "accepted" if code == 0 else f"rejected (exit {code})"
        write(
            f"   $ oracle-guard score --base {base[:12]} --head HEAD   -> {verdict}"
            f"{'' if ok else '  <-- NOT AS EXPECTED'}\n"
        )
        write("".join(f"   {line}\n" for line in output.splitlines()))
    write(
        "\n"
        + (
            "Every honest change passed and every move of the goalposts was caught."
            if all_as_expected
            else "Some scenario did not behave as expected."
        )
        + "\n"
    )
    return all_as_expected


def show(keep: bool = False) -> int:
    """The demo in a temporary folder (kept with ``keep``): 0 when every scenario did
    as expected."""
    # deferred: cli imports this module for its parser; shutil, tempfile: 4 ms, for a run
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="oracle-guard-demo-")
    try:
        ok = play(path, sys.stdout.write)
    finally:
        if keep:
            print(f"(kept the demo repository at {path})")
        else:
            shutil.rmtree(path, ignore_errors=True)
    return 0 if ok else 1


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "demo", parents=[debug_only()], help="show the hooks at work in a throwaway repository"
    )
    parser.add_argument("--keep", action="store_true", help="keep the demo repository")
    parser.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    return show(keep=options.keep)
