"""Every finding code: which hook emits it, what it means, and the fix.

README.md carries the same table; tests/readme_test.py keeps them in step.
"""
from __future__ import annotations

from typing import Dict, NamedTuple


class Code(NamedTuple):
    hook: str
    meaning: str
    fix: str
    example: str = ""  # a finding line as the hook prints it ('oracle-guard explain')


CODES: Dict[str, Code] = {
    "fixture-mismatch": Code(
        "fixture-lock", "a fixture's SHA-256 differs from its lock entry",
        "restore the fixture (git restore --staged --worktree PATH); if the change is "
        "intended, a human runs 'oracle-guard lock' and commits fixture and lock alone",
        "oracle/inputs/prices.json: fixture-mismatch: sha256 57c7463d1e73… does not match "
        "oracle/fixtures.lock.json (1bb382b9c535…)"),
    "fixture-unlocked": Code(
        "fixture-lock", "a file under the fixture paths has no lock entry",
        "remove the file, or have a human run 'oracle-guard lock' to record it",
        "oracle/inputs/extra.json: fixture-unlocked: has no entry in "
        "oracle/fixtures.lock.json"),
    "fixture-missing": Code(
        "fixture-lock", "a lock entry names a file that is absent or outside the fixture paths",
        "restore the file, or have a human run 'oracle-guard lock' to drop the entry",
        "oracle/fixtures.lock.json:3: fixture-missing: entry 'rates.csv' names no fixture "
        "file in the index"),
    "lock-invalid": Code(
        "fixture-lock", "the lock file is absent, unparsable, or has a bad entry "
        "(path not normalized or outside the root, duplicate, digest not 64 lowercase hex)",
        "regenerate it with 'oracle-guard lock' (if the finding says lock cannot rewrite it, "
        "rename the file it names first); on a branch cut before the lock existed, rebase it "
        "onto the target instead",
        "oracle/fixtures.lock.json: lock-invalid: lock file is missing from the index"),
    "fixture-not-regular": Code(
        "fixture-lock", "a symlink or submodule sits under the fixture paths",
        "replace it with a regular file; locks hash bytes, not link targets",
        "oracle/inputs/prices.json: fixture-not-regular: is a symlink (mode 120000), not a "
        "regular file"),
    "seed-removed": Code(
        "seed-append-only", "a seed present in the base is gone (element, line or key)",
        "put the seed back: seeds are append-only (git checkout BASE -- PATH, then re-append)",
        "seeds/parse_header.json: seed-removed: element [2] 3 is gone: the candidate keeps 2 "
        "of the base's 3 seeds"),
    "seed-reordered": Code(
        "seed-append-only", "an existing seed moved to another position",
        "restore the base order and append new seeds at the end",
        "seeds/parse_header.json:2: seed-reordered: element [0] moved: the base has 1 there, "
        "the candidate has 2"),
    "seed-rewritten": Code(
        "seed-append-only", "an existing seed (or an immutable file) changed its value "
        "or type, or its mode",
        "restore the base content; add a new seed instead of editing an old one",
        "seeds/parse_header.json:2: seed-rewritten: element [0] changed: 1 -> 1.0"),
    "seed-file-deleted": Code(
        "seed-append-only", "a seed file of the base is missing from the candidate "
        "(a rename counts as a deletion)",
        "restore the file under its old name (git checkout BASE -- PATH)",
        "seeds/unicode_hyphen.json: seed-file-deleted: present in HEAD, missing from the "
        "index (renamed to seeds/unicode_hyphen_v2.json? a rename counts as a deletion)"),
    "seed-invalid": Code(
        "seed-append-only", "a seed file does not parse strictly or has the wrong shape "
        "for its format",
        "fix the syntax; 'json-array' needs one JSON array, 'jsonl' one JSON value a line, "
        "'json-object' one JSON object",
        "oracle/corpus.jsonl:2: seed-invalid: line 2 is not one JSON value: expected a string "
        "key"),
    "oracle-incomplete": Code(
        "seed-append-only", "a seeds entry matches no file, or a json-array/jsonl seed "
        "file holds no seeds",
        "restore the seed files: missing seeds are never a pass",
        ".: oracle-incomplete: seeds entry [\"seeds/*.json\"] matches no file in the index"),
    "freeze-invalid": Code(
        "freeze-schema", "a freeze, quarantine or budget file does not parse strictly, fails "
        "its schema, or breaks a cross-field rule (duplicate ids, reason without an "
        "excluded id, pass_count + fail_count != runs); flake-budget reports the same file as "
        "'not counted'",
        "fix the file at the reported line and JSON path",
        "oracle/flake_budget.yaml:3: freeze-invalid: does not parse: anchor &entry is not "
        "allowed (column 5)"),
    "budget-exceeded": Code(
        "flake-budget", "more entries are frozen than max_frozen allows (the smaller of the "
        "contract's and the file's own)",
        "fix a frozen test and have an owner run 'oracle-guard freeze remove ID'; raising the "
        "cap is a human's change to the base",
        ".oracle-guard.yaml: budget-exceeded: 4 entries frozen, budget.max_frozen in the "
        "contract allows 3"),
    "budget-no-owner": Code(
        "flake-budget", "a frozen entry has no owner",
        "name the owning team or person in the entry",
        "oracle/flake_budget.yaml:3: budget-no-owner: 'unicode_hyphen' has no owner"),
    "budget-no-expiry": Code(
        "flake-budget", "a frozen entry has no expiry date",
        "give the entry an expiry (a date or a date-time with offset)",
        "oracle/quarantine.json:2: budget-no-expiry: 'tests/test_api.py::test_timeout' has no "
        "expiry"),
    "budget-expired": Code(
        "flake-budget", "a frozen entry's expiry has passed (a date lasts through its "
        "day in UTC)",
        "fix the test and remove the entry ('oracle-guard freeze remove ID'); renewing "
        "('oracle-guard freeze renew ID --days N') is a human's decision",
        "freeze.json:3: budget-expired: 'parse_header' expired 2026-09-24"),
    "budget-too-far": Code(
        "flake-budget", "a frozen entry expires later than now + max_days",
        "shorten the expiry to at most max_days from now ('oracle-guard freeze renew ID' "
        "writes the longest allowed)",
        "oracle/flake_budget.yaml:3: budget-too-far: 'unicode_hyphen' expires 2026-12-31, "
        "beyond 14 days from now"),
    "budget-unknown-id": Code(
        "flake-budget", "a frozen id is not among the known ids (stems of known_ids files)",
        "use an existing property id; check for typos",
        "freeze.json:3: budget-unknown-id: 'parse_headr' is not a known id (stems of "
        "seeds/*.json)"),
    "budget-expiring": Code(
        "flake-budget", "warning: a frozen entry expires within warn_days",
        "plan the fix or ask the owner to renew ('oracle-guard freeze renew ID --days N')",
        "oracle/flake_budget.yaml:3: budget-expiring (warning): "
        "'tests/test_io.py::test_upload' expires 2026-09-27, within 3 days"),
    "write-outside-set": Code(
        "write-set", "a changed path matches no 'allow' pattern or allow_file line",
        "drop the change to that path (git restore --staged PATH), or ask an owner to widen "
        "the write set in its own change",
        "Makefile: write-outside-set: matches no allowed pattern of the write set"),
    "write-denied": Code(
        "write-set", "a changed path is protected: it matches 'deny' (also ignoring letter "
        "case) or is an oracle file the contract names",
        "drop the change (git restore --staged PATH); oracle edits are made by an owner "
        "in a change of their own",
        "oracle/corpus.jsonl: write-denied: matches deny pattern 'oracle/**'"),
    "ref-deleted": Code(
        "pre-receive", "a push deletes a protected branch or tag",
        "keep the ref; an owner lists it in the contract's deletable_refs first if it "
        "really should go",
        "oracle-guard: refs/heads/main: ref-deleted: deleting protected refs/heads/main is "
        "not allowed"),
    "oracle-edit-undone": Code(
        "write-set", "a pushed commit changes a protected path that a later commit of the "
        "push changes back (owners and owner-signed commits excepted)",
        "drop both commits from the branch (git rebase -i), then push again: the server keeps "
        "every commit, and a tag or branch could point at the edit",
        "seeds/a.json: oracle-edit-undone: commit 3782a5f0c1d2 changes protected "
        "'seeds/a.json' and a later commit undoes it: the push would record the edit in "
        "history, where a tag or branch can point at it"),
    "ref-at-old-commit": Code(
        "pre-receive", "a non-owner's push creates a protected ref at an older commit of the "
        "default branch, whose tree was never judged as a tip",
        "create it at the default branch's tip (or on new commits, which are judged); an "
        "owner creates a ref at an older commit",
        "oracle-guard: refs/tags/v1 (3782a5f0c1d2): ref-at-old-commit: 3782a5f0c1d2 is an older "
        "commit of refs/heads/main; its tree was never judged on its own"),
    "replace-ref": Code(
        "pre-receive", "a non-owner's push creates, moves or deletes a refs/replace/* ref",
        "push no replace refs: they change what 'git show', archives and mirror clones "
        "give for a commit; an owner pushes one if it really is needed",
        "oracle-guard: refs/replace/2f1c0e9a7b3d…: replace-ref: refs/replace/* changes "
        "what git shows for an object; only an owner may push it"),
    "contract-mixed-commit": Code(
        "write-set", "a commit of the range changes a protected path and an allowed path "
        "together (owners too)",
        "rewrite the commit without its oracle change (git rebase -i, then edit); an "
        "owner's oracle change goes in a commit of its own",
        "seeds/parse_header.json: contract-mixed-commit: commit a05136137b16 changes protected "
        "'seeds/parse_header.json' and allowed 'src/app.py': an oracle change rides alone in "
        "its own commit"),
    "merge-edits-oracle": Code(
        "write-set", "a merge commit records protected content that git's clean remerge "
        "of its parents does not give (owners too)",
        "redo the merge keeping what git merges for oracle files, and make any oracle "
        "change in a commit of its own; resolve an oracle conflict by rebasing, not in a "
        "merge commit",
        "seeds/parse_header.json: merge-edits-oracle: merge commit 7e0c41d2a9b8 records "
        "protected 'seeds/parse_header.json' as its parents do not merge to that"),
    "oracle-change-unsigned": Code(
        "write-set", "the change edits protected paths, and a commit that leads to it is "
        "not signed by an owner (a key in authority.signers at the rules revision)",
        "an owner signs every commit of the oracle change (git commit -S with gpg.format=ssh "
        "and a key in the signers file), in a branch of its own with no unsigned commit",
        "seeds/parse_header.json: oracle-change-unsigned: commit 3f1c0e9a7b2d is not signed; "
        "the change edits protected 'seeds/parse_header.json', and an oracle change is made "
        "only of commits an owner signed (a key in .oracle-guard/allowed_signers)"),
    "merge-conflict": Code(
        "write-set", "merging the change into its target conflicts at this path: the "
        "merge cannot be judged",
        "rebase the branch onto the target (or merge the target into it) and resolve the "
        "conflict, then push again",
        "seeds/parse_header.json: merge-conflict: the merge of HEAD into "
        "refs/remotes/origin/main conflicts here; it is judged once it merges cleanly"),
}
