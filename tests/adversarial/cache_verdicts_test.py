"""The cache never changes a verdict: every judgment the adversarial catalogue
(testing/scenarios.py) makes, in the "ci" and "staged" contexts, gives
byte-identical `oracle-guard check --format json` output (exit code, stdout,
stderr) three ways in the same copy:

- ``--no-cache``: the cache is neither read nor written;
- cold: the cache file deleted first;
- warm: every verdict this revision needs is in the cache (the cold run's),
  beside those of every earlier revision judged in this copy (the baseline's and
  the earlier steps'), so two revisions whose verdicts share a key but not a
  value would show here.

The scenarios run as the catalogue runs them (``scenarios.run``); only the
judging is wrapped, by replacing ``oracle_guard.cli.main`` for the test.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from oracle_guard import cache as cache_mod
from oracle_guard import cli
from testing import scenarios
from testing.git import clean_environment
from testing.scenarios import CATALOG, Work

CONTEXTS = ("ci", "staged")
Run = Tuple[int, str, str]  # exit code, stdout, stderr


def _cache_files(repo: str) -> List[Path]:
    """The cache's files (cache_mod.FILES), the main one first."""
    common = subprocess.run(
        ["git", "-C", repo, "rev-parse", "--path-format=absolute", "--git-common-dir"],
        stdout=subprocess.PIPE,
        check=True,
        text=True,
    ).stdout.strip()
    return [Path(common) / "oracle-guard" / name for name, _ in cache_mod.FILES]


def _read(path: Path) -> Optional[bytes]:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _merged(earlier: Optional[bytes], fresh: Optional[bytes]) -> Optional[bytes]:
    """One cache file holding both files' entries. A key in both must hold one
    value: a cold computation gives one answer for one key, so two answers mean
    the key leaves out something the verdict depends on."""
    docs = [json.loads(d) for d in (earlier, fresh) if d is not None]
    if len(docs) < 2:
        return earlier if fresh is None else fresh
    old, new = docs
    assert old["key"] == new["key"] and old["format"] == new["format"]
    entries = {kind: dict(table) for kind, table in old["entries"].items()}
    for kind, table in new["entries"].items():
        for key, value in table.items():
            if key in entries[kind]:
                assert entries[kind][key] == value, (
                    f"cache key {kind} {key} holds two verdicts:\n"
                    f"  earlier {entries[kind][key]!r}\n  now     {value!r}"
                )
            entries[kind][key] = value
    return json.dumps(dict(new, entries=entries, checksum=cache_mod._checksum(entries))).encode()


class ThreeWays:
    """Stands in for ``cli.main`` for `check`: judges three ways, records each,
    and prints and returns what the warm run said."""

    def __init__(self, real) -> None:
        self.real = real
        self.judgments: List[Dict[str, Run]] = []
        self.problems: List[str] = []

    def _once(self, argv: List[str], env) -> Run:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = self.real(argv, env=None if env is None else dict(env))
        return rc, out.getvalue(), err.getvalue()

    def __call__(self, argv, env=None) -> int:
        argv = list(argv)
        if not argv or argv[0] != "check":
            return self.real(argv, env=env)
        paths = _cache_files(argv[argv.index("-C") + 1])
        earlier = [_read(path) for path in paths]  # the baseline's and earlier verdicts
        runs = {"--no-cache": self._once(argv + ["--no-cache"], env)}
        if [_read(path) for path in paths] != earlier:
            self.problems.append(f"{argv}: --no-cache changed the cache file")
        for path in paths:
            if path.exists():
                path.unlink()
        runs["cold"] = self._once(argv, env)
        merged = [_merged(old, _read(path)) for old, path in zip(earlier, paths)]
        for path, doc, (_, kinds) in zip(paths, merged, cache_mod.FILES):
            if doc is not None:
                path.write_bytes(doc)
                cache = cache_mod.Cache(str(paths[0]))
                loaded = {kind: cache._table(kind) for kind in kinds}
                assert loaded == json.loads(doc)["entries"], "the merged cache was not believed"
        runs["warm"] = self._once(argv, env)
        if [_read(path) for path in paths] != merged:  # the warm run found every verdict
            self.problems.append(
                f"{argv}: the warm run computed a verdict the cold run "
                "had cached, or a different one"
            )
        self.judgments.append(runs)
        rc, out, err = runs["warm"]
        print(out, end="")
        print(err, end="", file=sys.stderr)
        return rc


def _difference(runs: Dict[str, Run]) -> Optional[str]:
    reference = runs["--no-cache"]
    for way in ("cold", "warm"):
        if runs[way] != reference:
            lines = []
            for name, a, b in zip(("exit", "stdout", "stderr"), reference, runs[way]):
                if a != b:
                    lines += difflib.unified_diff(
                        str(a).splitlines(),
                        str(b).splitlines(),
                        f"{name} --no-cache",
                        f"{name} {way}",
                        lineterm="",
                    )
            return "\n".join(lines)
    return None


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """Built once per module and copied per scenario, with the environment
    conftest gives each test; its client's cache holds what judging the
    baseline itself cached, so the first warm run already has earlier verdicts."""
    with clean_environment():
        root = scenarios.build_baseline(tmp_path_factory.mktemp("baseline"))
        got = scenarios.guard(Work(root).client, env={})
        assert got.verdict == scenarios.PASS, got.detail
        assert _cache_files(str(Work(root).client))[0].exists()
        return root


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("scenario", CATALOG, ids=lambda s: s.name)
def test_warm_cold_and_no_cache_agree(scenario, context, baseline, tmp_path, monkeypatch):
    work = Work.copy(baseline, tmp_path / "copy")
    three = ThreeWays(cli.main)
    monkeypatch.setattr(cli, "main", three)
    scenarios.run(scenario, context, work)
    monkeypatch.undo()
    assert three.judgments, "the scenario was judged without the three-way stand-in"
    for number, runs in enumerate(three.judgments, 1):
        difference = _difference(runs)
        assert difference is None, (
            f"{scenario.name} in {context}, judgment {number}: the cache changed the "
            f"output\n{difference}"
        )
    assert not three.problems, "\n".join(three.problems)
