"""Run the checks: one HookResult per hook, the same in every context."""
from __future__ import annotations

import importlib
from typing import List, Optional, Sequence

from oracle_guard.contract import CONTRACT_PATH, Contract
from oracle_guard.findings import HOOKS, HookResult
from oracle_guard.snapshot import Snapshot

SECTIONS = {
    "fixture-lock": "fixtures",
    "seed-append-only": "seeds",
    "freeze-schema": "freeze",
    "flake-budget": "budget",
    "write-set": "write_set",
}
DIFF_HOOKS = ("seed-append-only", "write-set")


def check_module(hook: str):
    return importlib.import_module("oracle_guard.checks." + hook.replace("-", "_"))


def judge(contract: Optional[Contract], base: Snapshot, candidate: Snapshot, now,
          hooks: Sequence[str] = HOOKS) -> List[HookResult]:
    """``contract`` is read from the rules revision (None when neither it nor the
    candidate has one); ``hooks`` are run in the canonical order."""
    results = []
    for hook in HOOKS:
        if hook not in hooks:
            continue
        result = HookResult(hook)
        section = SECTIONS[hook]
        if contract is None:
            result.note = f"nothing to check: no {CONTRACT_PATH} in base or candidate"
        elif contract.section(section) is None and hook != "write-set":
            # write-set always guards what the contract names, section or not
            result.note = f"nothing to check: the contract has no '{section}' section"
        elif hook in DIFF_HOOKS and not contract.from_base:
            result.note = (f"nothing to check: the base ({contract.rules_label}) has no "
                           "contract; this change introduces it")
        else:
            try:
                result.findings = check_module(hook).check(contract, base, candidate, now)
            except SystemExit as exc:  # a stray exit() in a hook is a bug, never a pass
                raise RuntimeError(f"{hook} tried to exit (status {exc.code!r})") from None
            if hook in DIFF_HOOKS and not result.findings and base.same_files(candidate):
                result.note = (f"no change: {candidate.label} has the same files as "
                               f"{base.label}")
            elif contract.section(section) is None:
                result.note = f"no '{section}' section: only what the contract names is guarded"
        results.append(result)
    return results
