"""Every finding code: which hook emits it, what it means, and the fix.

A check's codes are in its registry entry (checks/registry.py); the codes
raised outside the checks are here. README.md carries the same table;
tests/readme_test.py keeps them in step.
"""

from __future__ import annotations

from typing import Dict, NamedTuple

from oracle_guard.checks.registry import CHECKS


class Code(NamedTuple):
    hook: str
    meaning: str
    fix: str
    example: str = ""  # a finding line as the hook prints it ('oracle-guard explain')


# Raised outside the checks: by the pre-receive command about refs, and by the
# write-set rules on each commit of a range (authority/history.py,
# authority/signatures.py) and on a merge that conflicts (commands/check.py).
NOT_FROM_A_CHECK: Dict[str, Code] = {
    "ref-deleted": Code(
        "pre-receive",
        "a push deletes a protected branch or tag",
        "keep the ref; an owner lists it in the contract's deletable_refs first if it "
        "really should go",
        "oracle-guard: refs/heads/main: ref-deleted: deleting protected refs/heads/main is "
        "not allowed",
    ),
    "oracle-edit-undone": Code(
        "write-set",
        "a pushed commit changes a protected path that a later commit of the "
        "push changes back (owners and owner-signed commits excepted)",
        "drop both commits from the branch (git rebase -i), then push again: the server keeps "
        "every commit, and a tag or branch could point at the edit",
        "seeds/a.json: oracle-edit-undone: commit 3782a5f0c1d2 changes protected "
        "'seeds/a.json' and a later commit undoes it: the push would record the edit in "
        "history, where a tag or branch can point at it",
    ),
    "ref-at-old-commit": Code(
        "pre-receive",
        "a non-owner's push creates a protected ref at an older commit of the "
        "default branch, whose tree was never judged as a tip",
        "create it at the default branch's tip (or on new commits, which are judged); an "
        "owner creates a ref at an older commit",
        "oracle-guard: refs/tags/v1 (3782a5f0c1d2): ref-at-old-commit: 3782a5f0c1d2 is an older "
        "commit of refs/heads/main; its tree was never judged on its own",
    ),
    "replace-ref": Code(
        "pre-receive",
        "a non-owner's push creates, moves or deletes a refs/replace/* ref",
        "push no replace refs: they change what 'git show', archives and mirror clones "
        "give for a commit; an owner pushes one if it really is needed",
        "oracle-guard: refs/replace/2f1c0e9a7b3d…: replace-ref: refs/replace/* changes "
        "what git shows for an object; only an owner may push it",
    ),
    "contract-mixed-commit": Code(
        "write-set",
        "a commit of the range changes a protected path and an allowed path together (owners too)",
        "rewrite the commit without its oracle change (git rebase -i, then edit); an "
        "owner's oracle change goes in a commit of its own",
        "seeds/parse_header.json: contract-mixed-commit: commit a05136137b16 changes protected "
        "'seeds/parse_header.json' and allowed 'src/app.py': an oracle change rides alone in "
        "its own commit",
    ),
    "merge-edits-oracle": Code(
        "write-set",
        "a merge commit records protected content that git's clean remerge "
        "of its parents does not give (owners too)",
        "redo the merge keeping what git merges for oracle files, and make any oracle "
        "change in a commit of its own; resolve an oracle conflict by rebasing, not in a "
        "merge commit",
        "seeds/parse_header.json: merge-edits-oracle: merge commit 7e0c41d2a9b8 records "
        "protected 'seeds/parse_header.json' as its parents do not merge to that",
    ),
    "oracle-change-unsigned": Code(
        "write-set",
        "the change edits protected paths, and a commit that leads to it is "
        "not signed by an owner (a key in authority.signers at the rules revision)",
        "an owner signs every commit of the oracle change (git commit -S with gpg.format=ssh "
        "and a key in the signers file), in a branch of its own with no unsigned commit",
        "seeds/parse_header.json: oracle-change-unsigned: commit 3f1c0e9a7b2d is not signed; "
        "the change edits protected 'seeds/parse_header.json', and an oracle change is made "
        "only of commits an owner signed (a key in .oracle-guard/allowed_signers)",
    ),
    "merge-conflict": Code(
        "write-set",
        "merging the change into its target conflicts at this path: the merge cannot be judged",
        "rebase the branch onto the target (or merge the target into it) and resolve the "
        "conflict, then push again",
        "seeds/parse_header.json: merge-conflict: the merge of HEAD into "
        "refs/remotes/origin/main conflicts here; it is judged once it merges cleanly",
    ),
}


def _every_code() -> Dict[str, Code]:
    codes = {
        doc.code: Code(check.id, doc.meaning, doc.fix, doc.example)
        for check in CHECKS
        for doc in check.codes
    }
    codes.update(NOT_FROM_A_CHECK)  # after the checks': the README table's order
    return codes


CODES: Dict[str, Code] = _every_code()
