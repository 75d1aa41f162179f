"""Real-shaped oracle files, one per built-in freeze format, as users keep them,
the example layouts of examples/ as committed repositories, and the trees the
registry's samples make (each check's SAMPLE: hooks/checks/sample.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, Iterable, Optional

from oracle_guard.checks.registry import CHECKS, Check
from oracle_guard.contract import CONTRACT_PATH
from testing.git import commit, init_repo, write

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def sample_sections(checks: Iterable[Check] = CHECKS) -> Dict[str, Any]:
    """The contract's sections the samples of ``checks`` give, in the registry's order;
    two samples that give one section must give it alike."""
    sections: Dict[str, Any] = {}
    for check in checks:
        for name, value in check.sample().sections.items():
            if sections.setdefault(name, value) != value:
                raise ValueError(f"{check.id}'s sample gives the section {name!r} otherwise")
    return sections


def contract_text(sections: Dict[str, Any]) -> str:
    """A contract of ``sections``: each one line of flow YAML."""
    lines = ["version: 1", *(f"{name}: {json.dumps(value)}" for name, value in sections.items())]
    return "\n".join(lines) + "\n"


def sample_contract(checks: Iterable[Check] = CHECKS) -> str:
    """The contract of the samples of ``checks``."""
    return contract_text(sample_sections(checks))


def sample_tree(checks: Iterable[Check] = CHECKS) -> Dict[str, str]:
    """The samples' contract and files: every check of ``checks`` passes it."""
    checks = list(checks)
    tree = {CONTRACT_PATH: sample_contract(checks)}
    for check in checks:
        for path, text in check.sample().files.items():
            if tree.setdefault(path, text) != text:
                raise ValueError(f"{check.id}'s sample holds {path!r} otherwise")
    return tree


def sample_change(checks: Iterable[Check] = CHECKS) -> Dict[str, Optional[str]]:
    """What the samples' changes write (None: remove): each check rejects its own
    (given with --only: write-set also denies the oracle files the others change)."""
    change: Dict[str, Optional[str]] = {}
    for check in checks:
        change.update(check.sample().change)
    return change


def stage_change(repo: Any, change: Dict[str, Optional[str]]) -> None:
    """Stage ``change`` in a testing.trees.MemoryRepo: write its files, remove the None."""
    repo.stage({path: text for path, text in change.items() if text is not None})
    repo.remove(*[path for path, text in change.items() if text is None])


def changed_tree(tree: Dict[str, str], change: Dict[str, Optional[str]]) -> Dict[str, str]:
    """``tree`` with ``change`` applied."""
    out = dict(tree)
    for path, text in change.items():
        if text is None:
            out.pop(path, None)
        else:
            out[path] = text
    return out


def example_repo(tmp_path, name, files=None):
    """The example layout ``name`` as shipped (plus ``files``), committed."""
    repo = init_repo(tmp_path / name)
    shutil.copytree(EXAMPLES / name, repo, dirs_exist_ok=True)
    if files:
        write(repo, files)
    commit(repo, message="example as shipped")
    return repo


FREEZE_JSON = """\
{
  "excluded_property_ids": [
    "prop.http.retry_after_parse"
  ],
  "reason": {
    "prop.http.retry_after_parse": "intermittent under parallel workers; excluded from scoring until retimed"
  }
}
"""
FLAKE_BUDGET_YAML = """\
max_frozen: 3
frozen:
  - id: canonicalize_unicode_hyphen
    owner: platform-api
    expires: "2026-09-30"
    reason: "locale-dependent hyphen folding on CI image"
  - id: discount_inverse_leap_promo
    owner: billing
    expires: "2026-10-07"
    reason: "promo calendar not pinned in fixture"
"""
# expires_at is an unquoted YAML timestamp: it must stay a string and validate.
QUARANTINE_ENTRY_YAML = """\
id: retry_budget_9c2
seed: 1729
command: pytest tests/test_retry.py::test_budget -q
runs: 7
pass_count: 4
fail_count: 3
expires_at: 2026-10-07T00:00:00Z
repro: |
  python harness/replay.py --id retry_budget_9c2 --repeat 7
owner: humans-only
"""
QUARANTINE_LIST_JSON = """\
[
  {"test": "tests/test_invoice_total.py::test_rounding_half_even"}
]
"""
