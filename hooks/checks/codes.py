"""Every finding code: which hook emits it, what it means, and the fix.

A check's codes are in its registry entry (checks/registry.py); the codes
raised outside the checks are here. The docs' codes page is
written from this table (docs/_generate/reference.py).
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Optional, Sequence

from oracle_guard.checks.registry import CHECKS


class Code(NamedTuple):
    hook: str
    meaning: str
    fix: str
    example: str = ""  # a finding line as the hook prints it ('oracle-guard explain')


# Raised outside the checks: by pre-receive about refs (push.py), and by the
# write-set rules on each commit of a range (authority/history.py,
# authority/signatures.py), on a merge that conflicts and on a contract that
# would not load (commands/check.py).
NOT_FROM_A_CHECK: Dict[str, Code] = {
    "ref-deleted": Code(
        "pre-receive",
        "a push deletes a protected branch or tag",
        "keep the ref; an owner lists it in the contract's deletable first if it really "
        "should go (deletable.owners: then an owner deletes it, by identity_env or with "
        "git push --signed)",
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
    "ref-holds-unjudged": Code(
        "pre-receive",
        "a non-owner's push leaves a ref holding an oracle file as an older commit of the "
        "repository's history left it (an owner's push, or history from before the hook), "
        "unlike the default branch's tip, and that commit's change to it fails a check: a tag "
        "or branch made there, a commit on top, or a fast-forward onto it would bring it back",
        "base the ref on the default branch's tip (git rebase origin/main), so it holds the "
        "oracle main holds; an owner makes a ref at an older state",
        "oracle-guard: refs/heads/topic (5e1f0c2a9b3d): tests/test_app.py:4: "
        "ref-holds-unjudged: the pushed tip holds 'tests/test_app.py' as commit 5e1f0c2a9b3d "
        "left it, unlike the default branch's tip, and that change is skip-added "
        "(@pytest.mark.skip on test_app: a skipped test scores as a pass)",
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
    "signature-replayed": Code(
        "write-set",
        "an owner-signed commit of the change makes the same change, from the same parents, as "
        "a commit already in the rules revision's history: a copy of an owner's old signed "
        "change under a new commit id (a re-encoded signature), reverted since or not",
        "drop the copied commit (git rebase -i); an owner who wants the change again signs it "
        "anew on the target's tip",
        "oracle/fixtures.lock.json: signature-replayed: commit c49654771687 makes the same "
        "change from the same parents as cc28e4b6f268, already in the history of the default "
        "branch tip: an owner's signature vouches for a change once, and a copy of it with a "
        "new commit id (a re-encoded signature) is a replay",
    ),
    "contract-invalid": Code(
        "write-set",
        "the change edits the contract (or a schema, allow_file or signers file it names) "
        "and the contract it leaves does not load: every later check would exit 2",
        "fix the contract at the reported line and column (oracle-guard check names each "
        "problem), in the owner's change that edits it",
        ".oracle-guard.yaml:17: contract-invalid: invalid contract at $.budget: Additional "
        "properties are not allowed ('max_froze' was unexpected); did you mean 'max_frozen'? "
        "(column 3): the contract in the index would judge every later change, and it does "
        "not load",
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

# Raised by `oracle-guard score` (scoring/verdict.py), from what its plugin recorded
# while the target's tests ran against the candidate's code.
SCORE_CODES: Dict[str, Code] = {
    "test-failed": Code(
        "score",
        "a test of the target failed or errored against the candidate's code, or a test "
        "module of the target did not collect",
        "fix the code until the target's test passes; the test itself is the oracle's, and "
        "editing it in the change does not move the score",
        "tests/test_pricing.py: test-failed: tests/test_pricing.py::test_discount failed: "
        "assert 90 == 80",
    ),
    "test-vanished": Code(
        "score",
        "a test collected from the target's own tree is not collected from the candidate's, "
        "and is not frozen",
        "make the candidate's code collect every test the target has (a parameter list the "
        "code provides, an import a test module needs); to retire a test, an owner freezes "
        "or removes it in a change of their own",
        "tests/test_pricing.py: test-vanished: tests/test_pricing.py::test_discount[gold] is "
        "collected from the target's own tree and not from the candidate's, and it is not "
        "frozen",
    ),
    "frozen-collected": Code(
        "score",
        "a test frozen at the target is still collected after every plugin ran, so the "
        "session was refused before any test ran",
        "find what puts the test back (a conftest or plugin that adds items after "
        "deselection) and remove it; a frozen test is out of the score until its owner "
        "lifts the freeze",
        "tests/test_retry.py: frozen-collected: tests/test_retry.py::test_budget is frozen at "
        "the target and still collected after every plugin ran: the session was refused "
        "before any test ran",
    ),
    "run-incomplete": Code(
        "score",
        "the pytest session ended without its final record: the process exited during the "
        "run (os._exit, a signal, a crash)",
        "remove whatever ends the process early (an exit at import, a killed worker); a run "
        "that does not reach its end is never a pass",
        ".: run-incomplete: pytest exited with status 0 after 0 of 3 tests, before its session "
        "ended: an exit during the run (os._exit, a signal) is not a pass",
    ),
    "outcome-mismatch": Code(
        "score",
        "pytest's exit status disagrees with what the plugin recorded, as a hook that "
        "rewrites the session's exit status makes it",
        "remove the code that changes the session's exit status (a pytest_sessionfinish "
        "setting session.exitstatus, an atexit exit)",
        ".: outcome-mismatch: pytest exited with status 0, but what ran says 1 (1 failed of "
        "3): something in the session changed its exit status",
    ),
    "skip-at-run": Code(
        "score",
        "a scored test was skipped (or xfailed) while it ran, by a file of the candidate's, "
        "where the target's own test code declares no skip for it",
        "remove the skip from the code (a helper that calls pytest.skip, an import that "
        "skips); a test the oracle's owners want out of the score is frozen by them",
        "tests/test_pricing.py: skip-at-run: tests/test_pricing.py::test_discount was "
        "skipped at run time by src/pricing.py:12, a file of the candidate's, not the "
        "target's test code (not ready)",
    ),
    "score-timeout": Code(
        "score",
        "a score session ran past the contract's score.timeout and was stopped",
        "make the tests finish within the limit (a hang, a sleep, a loop in the code); an "
        "owner raises score.timeout in a change of their own if the suite has grown",
        ".: score-timeout: the oracle's session ran past its limit of 900 s and was stopped; "
        "a run that does not end is not a pass",
    ),
    "example-lost": Code(
        "score",
        "a corpus line of the target with expect: fail passes its test against the "
        "candidate's code: the failing example no longer fails",
        "if the change fixes the example, an owner records it in a change of their own "
        "(expect: pass, fixed_by); otherwise find what makes the test stop seeing the input",
        "oracle/corpus.jsonl:1: example-lost: corpus-line 'inv-014' (expect: fail) passes "
        "tests/test_invoice_total.py::test_totals_are_non_negative: the failing example no "
        "longer fails",
    ),
    "example-regressed": Code(
        "score",
        "a corpus line of the target with expect: pass fails its test against the "
        "candidate's code: a known-good example regressed",
        "fix the code until the example passes again; the corpus line is the oracle's, and "
        "the candidate's copy of it does not count",
        "oracle/corpus.jsonl:2: example-regressed: corpus-line 'inv-020' (expect: pass) fails "
        "tests/test_invoice_total.py::test_totals_are_non_negative: a known-good example "
        "regressed",
    ),
    "replay-errored": Code(
        "score",
        "a replayed record neither passed nor failed: it crashed, exited before its session "
        "ended, was not collected, skipped, or ran past score.timeout; a replay error is a "
        "reject, never a skip",
        "make the record's run end in a pass or a fail (its test collected, no exit during "
        "the run, within the limit); an owner quarantines a record that cannot run yet",
        "replays/parse_header.json: replay-errored: replay-case 'parse_header_a3f1' neither "
        "passed nor failed: it ran past score.timeout (900 s) and was stopped",
    ),
    "replay-mismatch": Code(
        "score",
        "a replay case's command, run with its seed, gave another result than the case's expected",
        "fix the code until the command's result is the expected one; expected is filled in "
        "by an owner, never by the change it judges",
        "replays/parse_header.json: replay-mismatch: replay-case 'parse_header_a3f1' was "
        "expected to pass and its command's result was a fail",
    ),
}


def _every_code() -> Dict[str, Code]:
    codes = {
        doc.code: Code(check.id, doc.meaning, doc.fix, doc.example)
        for check in CHECKS
        for doc in check.codes
    }
    codes.update(NOT_FROM_A_CHECK)  # after the checks': the order the docs list them in
    codes.update(SCORE_CODES)
    return codes


CODES: Dict[str, Code] = _every_code()


# Where a hint is given: a commit being made (the index), commits (pre-push,
# CI), or a push the server judges. A fix that names a git command names the
# one that fits there; {base} and {path} are the values the run knows.
CONTEXTS = ("staged", "commits", "server")
_OWNER_FLOW = (
    "if the change is intended, an owner makes it: the fixture and its lock "
    "('oracle-guard lock') in a commit of their own, signed with a key in the "
    "authority signers file (docs: how-to/edit-the-oracle.md)"
)
_FROM_BRANCH = "git checkout {base} -- {path}, or git rm {path} if {base} lacks it, then commit"
IN_CONTEXT: Dict[str, Dict[str, str]] = {
    "fixture-mismatch": {
        "staged": "restore the fixture (git restore --staged --worktree {path}); " + _OWNER_FLOW,
        "commits": "restore the fixture (git checkout {base} -- {path}, then commit); "
        + _OWNER_FLOW,
        "server": "restore the fixture in the pushed branch (git checkout {base} -- {path}, "
        "then commit); " + _OWNER_FLOW,
    },
    "seed-removed": {
        "staged": "put the seed back: seeds are append-only (git checkout {base} -- {path}, "
        "then re-append)",
        "commits": "put the seed back: seeds are append-only (git checkout {base} -- {path}, "
        "re-append, then commit)",
        "server": "put the seed back in the pushed branch: seeds are append-only "
        "(git checkout {base} -- {path}, re-append, then commit)",
    },
    "seed-file-deleted": {
        "staged": "restore the file under its old name (git checkout {base} -- {path})",
        "commits": "restore the file under its old name (git checkout {base} -- {path}, "
        "then commit)",
        "server": "restore the file under its old name in the pushed branch "
        "(git checkout {base} -- {path}, then commit)",
    },
    "write-outside-set": {
        "staged": "drop the change to that path (git restore --staged {path}), or ask an owner "
        "to widen the write set in its own change",
        "commits": "drop the change to that path from the branch (" + _FROM_BRANCH + "), or ask "
        "an owner to widen the write set in its own change",
        "server": "drop the change to that path from the pushed branch (" + _FROM_BRANCH + "), "
        "or ask an owner to widen the write set in its own change",
    },
    "write-denied": {
        "staged": "drop the change (git restore --staged {path}); oracle edits are made by an "
        "owner in a change of their own",
        "commits": "drop the change from the branch (" + _FROM_BRANCH + "); oracle edits are "
        "made by an owner in a change of their own",
        "server": "drop the change from the pushed branch (" + _FROM_BRANCH + "); oracle edits "
        "are made by an owner in a change of their own",
    },
}


# A file over a size limit: the fix is about its size, not its syntax.
_OVER_LIMIT = "bytes, above the limit of"
SIZE_FIXES = {
    "test-unparsable": "the file is over limits.test_bytes: shrink it or split it into "
    "smaller test files; an owner who means it raises limits.test_bytes in a contract "
    "change of its own",
    "seed-invalid": "the seed file is over limits.seed_bytes: start a new seed file for new "
    "seeds instead of growing this one; an owner who means it raises limits.seed_bytes in "
    "a contract change of its own",
}
# A file no lock can name: 'oracle-guard lock' refuses it, so the fix is its name.
UNNAMEABLE_FIXES = {
    "a lock (UTF-8 text) cannot name it": "rename the file to a UTF-8 name (git mv), or "
    "remove it: no lock can name it, and 'oracle-guard lock' refuses it until then",
    "a sha256sum lock cannot name it": "rename the file, or have an owner switch the entry "
    "to a JSON lock: 'oracle-guard lock' refuses to write a sha256sum lock that names it",
}
# What a fix says that only holds when the contract has the section named.
_SIGNED = ", signed with a key in the authority signers file"
_FREEZE_RECORD = "recorded in the freeze file the scoring harness reads"
_WITHOUT_FREEZE = "recorded in a freeze file, which a freeze section of the contract names"


def fit_to_contract(fix: str, sections: Optional[Sequence[str]]) -> str:
    """``fix`` without what the contract's sections make untrue: the signers file
    without ``authority``, the freeze file without ``freeze`` (None: not known)."""
    if sections is None:
        return fix
    if "authority" not in sections:
        fix = fix.replace(_SIGNED, "")
    if "freeze" not in sections:
        fix = fix.replace(_FREEZE_RECORD, _WITHOUT_FREEZE)
    return fix


def fix_in(
    code: str,
    context: str,
    base: Optional[str] = None,
    path: Optional[str] = None,
    message: str = "",
    sections: Optional[Sequence[str]] = None,
) -> str:
    """The fix for ``code`` as a hint in ``context`` gives it: the base commit and
    the path filled in where known (a placeholder only where they are not); for a
    file over a size limit (``message`` says so), the size's fix; for a fixture no
    lock can name, its renaming; and only what
    the contract's ``sections`` make true."""
    if code in SIZE_FIXES and _OVER_LIMIT in message:
        return SIZE_FIXES[code]
    if code.startswith("fixture-"):
        unnameable = next((fix for why, fix in UNNAMEABLE_FIXES.items() if why in message), None)
        if unnameable:
            return unnameable
    return fit_to_contract(_fix_in(code, context, base, path), sections)


def _fix_in(code: str, context: str, base: Optional[str], path: Optional[str]) -> str:
    template = IN_CONTEXT.get(code, {}).get(context)
    if template is None:
        return CODES[code].fix
    if path is not None:
        import shlex  # only for a hint that names a path

        # deferred: under 1 ms to import, only for _fix_in()
        from oracle_guard.report.escaping import show_path

        shown = show_path(path)
        template = template.replace("{path}", shlex.quote(shown))
    else:
        template = template.replace("{path}", "PATH")
    label = base[:12] if base else ("HEAD" if context == "staged" else "the base commit")
    return template.replace("{base}", label)
