"""Every finding code: which hook emits it, what it means, and the fix.

README.md carries the same table; tests/readme_test.py keeps them in step.
"""
from __future__ import annotations

from typing import Dict, NamedTuple


class Code(NamedTuple):
    hook: str
    meaning: str
    fix: str


CODES: Dict[str, Code] = {
    "fixture-mismatch": Code(
        "fixture-lock", "a fixture's SHA-256 differs from its lock entry",
        "restore the fixture (git restore --staged --worktree PATH); if the change is "
        "intended, a human runs 'oracle-guard lock' and commits fixture and lock alone"),
    "fixture-unlocked": Code(
        "fixture-lock", "a file under the fixture paths has no lock entry",
        "remove the file, or have a human run 'oracle-guard lock' to record it"),
    "fixture-missing": Code(
        "fixture-lock", "a lock entry names a file that is absent or outside the fixture paths",
        "restore the file, or have a human run 'oracle-guard lock' to drop the entry"),
    "lock-invalid": Code(
        "fixture-lock", "the lock file is absent, unparsable, or has a bad entry "
        "(path not normalized or outside the root, duplicate, digest not 64 lowercase hex)",
        "regenerate it with 'oracle-guard lock'"),
    "fixture-not-regular": Code(
        "fixture-lock", "a symlink or submodule sits under the fixture paths",
        "replace it with a regular file; locks hash bytes, not link targets"),
    "seed-removed": Code(
        "seed-append-only", "a seed present in the base is gone (element, line or key)",
        "put the seed back: seeds are append-only (git checkout BASE -- PATH, then re-append)"),
    "seed-reordered": Code(
        "seed-append-only", "an existing seed moved to another position",
        "restore the base order and append new seeds at the end"),
    "seed-rewritten": Code(
        "seed-append-only", "an existing seed (or an immutable file) changed its value "
        "or type, or its mode",
        "restore the base content; add a new seed instead of editing an old one"),
    "seed-file-deleted": Code(
        "seed-append-only", "a seed file of the base is missing from the candidate "
        "(a rename counts as a deletion)",
        "restore the file under its old name (git checkout BASE -- PATH)"),
    "seed-invalid": Code(
        "seed-append-only", "a seed file does not parse strictly or has the wrong shape "
        "for its format",
        "fix the syntax; 'json-array' needs one JSON array, 'jsonl' one JSON value a line, "
        "'json-object' one JSON object"),
    "oracle-incomplete": Code(
        "seed-append-only", "a seeds entry matches no file, or a json-array/jsonl seed "
        "file holds no seeds",
        "restore the seed files: missing seeds are never a pass"),
    "freeze-invalid": Code(
        "freeze-schema", "a freeze, quarantine or budget file does not parse strictly, fails "
        "its schema, or breaks a cross-field rule (duplicate ids, reason without an "
        "excluded id, pass_count + fail_count != runs); flake-budget reports the same file as "
        "'not counted'",
        "fix the file at the reported line and JSON path"),
    "budget-exceeded": Code(
        "flake-budget", "more entries are frozen than max_frozen allows (the smaller of the "
        "contract's and the file's own)",
        "fix or remove a frozen test; raising the cap is a human's change to the base"),
    "budget-no-owner": Code(
        "flake-budget", "a frozen entry has no owner",
        "name the owning team or person in the entry"),
    "budget-no-expiry": Code(
        "flake-budget", "a frozen entry has no expiry date",
        "give the entry an expiry (a date or a date-time with offset)"),
    "budget-expired": Code(
        "flake-budget", "a frozen entry's expiry has passed (a date lasts through its "
        "day in UTC)",
        "fix the test and remove the entry; renewing is a human's decision"),
    "budget-too-far": Code(
        "flake-budget", "a frozen entry expires later than now + max_days",
        "shorten the expiry to at most max_days from now"),
    "budget-unknown-id": Code(
        "flake-budget", "a frozen id is not among the known ids (stems of known_ids files)",
        "use an existing property id; check for typos"),
    "budget-expiring": Code(
        "flake-budget", "warning: a frozen entry expires within warn_days",
        "plan the fix or ask the owner to renew"),
    "write-outside-set": Code(
        "write-set", "a changed path matches no 'allow' pattern or allow_file line",
        "drop the change to that path (git restore --staged PATH), or ask an owner to widen "
        "the write set in its own change"),
    "write-denied": Code(
        "write-set", "a changed path is protected: it matches 'deny' (also ignoring letter "
        "case) or is an oracle file the contract names",
        "drop the change (git restore --staged PATH); oracle edits are made by an owner "
        "in a change of their own"),
    "ref-deleted": Code(
        "pre-receive", "a push deletes a protected branch or tag",
        "keep the ref; an owner lists it in the contract's deletable_refs first if it "
        "really should go"),
    "contract-mixed-commit": Code(
        "pre-receive", "a pushed commit changes a protected path and an allowed path "
        "together (rejected for owners too)",
        "split the commit: the oracle change in a commit of its own, the rest in "
        "another (git rebase -i, then edit)"),
}
