"""What init prints: what it found and wrote, what the contract protects, and the
next steps, numbered, with the git add that stages exactly what it wrote."""

from __future__ import annotations

import shlex
import sys
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from oracle_guard import contract as contract_mod
from oracle_guard.commands.init.ci_recipes import CI_RECIPES
from oracle_guard.commands.init.contract_writer import CONTRACT
from oracle_guard.commands.init.editor_schemas import MODELINE_WHAT
from oracle_guard.commands.init.files import (
    PRE_COMMIT_CONFIG,
    PREK_CONFIG,
    REPO_PLACEHOLDER,
    REV_PLACEHOLDER,
)
from oracle_guard.commands.init.layouts import describe
from oracle_guard.commands.init.plan import Plan
from oracle_guard.commands.init.precommit_config import (
    installs_both_stages as pre_commit_installs_both,
)
from oracle_guard.snapshot import Snapshot


def say(*values: object, end: str = "\n") -> None:
    """print, with every line made safe to show: init prints file names, ids and
    owners from the repository, which must neither drive the terminal nor read as
    a CI runner command."""
    # deferred: under 1 ms to import, only for say()
    from oracle_guard.report.escaping import inert, show_text

    text = " ".join(str(v) for v in values)
    sys.stdout.write("\n".join(inert(show_text(line)) for line in text.split("\n")) + end)


def report(plan: Plan, dry_run: bool, layout_asked: bool) -> None:
    """What init found and what it writes (or would write, with --dry-run)."""
    evidence = describe(plan.evidence) or "none of its files yet"
    how = "as asked (--layout)" if layout_asked else "recognised from"
    say(f"oracle-guard init: layout '{plan.layout}', {how}: {evidence}")
    verbs = {
        "new": ("wrote", "would write"),
        "edit": ("added", "would add"),
        "retarget": ("set", "would set"),
        "differs": ("overwrote", "would overwrite (needs --force)"),
        "same": ("unchanged", "unchanged"),
    }
    modelines = [p for p in plan.files if p.what == MODELINE_WHAT]
    for planned in plan.files:
        if planned.what == MODELINE_WHAT:
            continue
        verb = verbs[planned.state][1 if dry_run else 0]
        if planned.path == plan.config_path and planned.state == "new":
            verb = "would create" if dry_run else "created"
        if planned.state == "edit":
            say(f"  {verb} {planned.what} to {planned.path}")
        elif planned.state == "retarget":
            force = " (needs --force)" if planned.needs_force and dry_run else ""
            say(f"  {verb} {planned.what} in {planned.path}{force} (it had {planned.detail})")
        else:
            say(f"  {verb} {planned.path} ({planned.what})")
    for planned in modelines[:5]:
        say(
            f"  {verbs['edit'][1 if dry_run else 0]} {MODELINE_WHAT} to "
            f"{planned.path}: {planned.text.split(chr(10), 1)[0].rstrip()}"
        )
    if len(modelines) > 5:
        say(f"  ... and to {len(modelines) - 5} more YAML freeze files")
    for lock, pending in plan.blocked_locks:
        say(
            f"  not written: {lock} (the fixtures are not all staged: {pending[0]}"
            f"{' and more' if len(pending) > 1 else ''})"
        )
    if plan.snippet is not None:
        say(
            f"  not edited: {plan.config_path} ({plan.snippet_why}); add this entry "
            f"{plan.snippet_where} yourself:"
        )
        say("\n".join("    " + ln for ln in plan.snippet.splitlines()))
    if plan.ci_snippet is not None:
        say(
            f"  not edited: {CI_RECIPES[plan.ci or ''][1]} (it exists); add this job to it "
            "yourself:"
        )
        say("\n".join(("    " + ln).rstrip() for ln in plan.ci_snippet.splitlines()))
    if (
        all(p.state == "same" for p in plan.files)
        and plan.snippet is None
        and not plan.blocked_locks
        and not plan.config_todo
        and plan.ci_snippet is None
    ):
        say("  nothing changed: every file init writes is already in place")
    for note in plan.notes:
        say(f"  note: {note}")
    for warning in plan.warnings:
        say(f"  warning: {warning}")


def protected_list(data: Dict[str, Any]) -> List[str]:

    probe = contract_mod.Contract(data, Snapshot.empty(), from_base=False)
    out: List[str] = []
    for item in probe.oracle_files() + probe.oracle_globs() + data["write_set"]["deny"]:
        shown = ".gitattributes (every one)" if item == ".gitattributes" else item
        if shown not in out:
            out.append(shown)
    return out


def quote_all(paths: Iterable[str]) -> str:
    return " ".join(shlex.quote(p) for p in paths)


def allowed_line(write_set: Mapping[str, Any]) -> str:
    """What the write set lets a change touch, in one line."""
    allowed = [", ".join(write_set.get("allow", []))] if write_set.get("allow") else []
    if "allow_file" in write_set:
        allowed.append(f"what {write_set['allow_file']} lists")
    if not allowed:
        return "The write set allows: every path the contract does not protect (it has no allow)"
    return f"The write set allows: {' and '.join(allowed)} (nothing else)"


def tamper_line(tamper: Mapping[str, Any]) -> str:
    """What test-tamper judges, in one line."""
    hermetic = tamper.get("hermetic")
    return (
        f"test-tamper judges the tests in: {', '.join(tamper['paths'])}, and every "
        "conftest.py and pytest configuration file"
        + (f"; no wall clock, entropy or network in {', '.join(hermetic)}" if hermetic else "")
    )


def install_step(
    config_text: Optional[str], runner: str = "pre-commit", path: str = PRE_COMMIT_CONFIG
) -> str:
    """The runner's install command: prek's takes pre-commit's arguments."""
    # deferred: 5 ms to import, only for install_step()
    from oracle_guard.commands.init.prek_config import installs_both_stages as prek_installs_both

    both = prek_installs_both if path == PREK_CONFIG else pre_commit_installs_both
    if both(config_text):
        return (
            f"{runner} install   # the pre-commit and pre-push hooks (default_install_hook_types)"
        )
    return f"{runner} install --hook-type pre-commit --hook-type pre-push"


def hand_steps(plan: Plan) -> List[Tuple[str, str]]:
    """The edits init leaves to you, in order, each with the file it changes (which
    the git add then stages)."""
    steps = []
    path = plan.config_path
    config = next((p for p in plan.files if p.path == path), None)
    if plan.config_todo:
        steps.append((plan.config_todo, path))
    elif config is not None and (REPO_PLACEHOLDER in config.text or REV_PLACEHOLDER in config.text):
        steps.append(
            (
                f"in {path}, set repo: to where you host or mirror "
                "oracle-guard and rev: to the tag or commit you reviewed (or rerun "
                "init with --repo and --rev)",
                path,
            )
        )
    if plan.snippet is not None:
        unset = REPO_PLACEHOLDER in plan.snippet or REV_PLACEHOLDER in plan.snippet
        steps.append(
            (
                f"add the oracle-guard entry above to {path}"
                + (
                    ", with its repo: and rev: set to where you host or mirror "
                    "oracle-guard and the tag or commit you reviewed"
                    if unset
                    else ""
                ),
                path,
            )
        )
    if plan.ci is not None:
        path = CI_RECIPES[plan.ci][1]
        if plan.ci_snippet is not None:
            steps.append((f"add the oracle-guard job above to {path}", path))
        if plan.ci_todo:
            steps.append((plan.ci_todo, path))
    write_set = plan.data["write_set"]
    if "allow" not in write_set and "allow_file" not in write_set:
        steps.append(
            (
                f"narrow the write set: rerun init with --allow PATTERN (once a "
                f"pattern; --force to overwrite), or add write_set.allow to {CONTRACT}",
                CONTRACT,
            )
        )
    return steps


def staging(plan: Plan, pending: Set[str]) -> Tuple[List[str], List[str]]:
    """What the printed git add stages: the files init wrote or asks you to edit, the
    oracle files not staged yet, the fixtures of a lock not written; and those locks."""
    to_add = [p.path for p in plan.files if p.path in pending]
    to_add += [p for p in plan.pending_oracle if p in pending and p not in to_add]
    for _, path in hand_steps(plan):
        if path not in to_add:
            to_add.append(path)
    locks = []
    for lock, fixtures in plan.blocked_locks:
        to_add += [f for f in fixtures if f not in to_add]
        locks.append(lock)
    return to_add, locks


def next_steps(
    plan: Plan,
    to_add: List[str],
    locks: List[str],
    uncommitted: List[str],
    findings: List[Tuple[str, str]],
) -> None:
    say("The contract protects (write-set denies every change to these):")
    for item in protected_list(plan.data):
        say(f"  {item}")
    say(allowed_line(plan.data["write_set"]))
    if "tamper" in plan.data:
        say(tamper_line(plan.data["tamper"]))
    steps = [step for step, _ in hand_steps(plan)]
    if to_add:
        steps.append(f"git add {quote_all(to_add)}")
    if locks:
        steps.append(f"oracle-guard lock && git add {quote_all(locks)}")
    if findings:
        steps.append(
            "fix what the hooks will report (below, each with its command) and "
            "git add what the command names"
        )
    if to_add or locks or uncommitted or findings:
        steps.append("oracle-guard check   # judges what you staged: it should pass")
    steps.append(install_step(plan.config_text, plan.runner, plan.config_path))
    if to_add or locks or uncommitted or findings:
        ci_path = CI_RECIPES[plan.ci][1] if plan.ci else None
        ci_note = ""
        if ci_path in to_add or ci_path in uncommitted:
            what = "the workflow" if plan.ci == "github" else ci_path
            ci_note = (
                f" ({what} too: the contract denies it, so it goes in this first guard commit)"
            )
        steps.append(
            "git commit -m 'Guard the test oracle with oracle-guard'   # one "
            "human-made commit of what the steps above staged, nothing else" + ci_note
        )
    say("Next steps:")
    for n, step in enumerate(steps, 1):
        say(f"  {n}. {step}")
    if findings:
        say("What the hooks will report today on the oracle as the git add step stages it:")
        for text, fix in findings:
            say(f"  {text}")
            if fix:
                say(f"    fix: {fix}")
    if plan.unchecked:
        say(
            "Not judged before the git add (oracle-guard check judges them once staged): "
            + ", ".join(plan.unchecked)
        )
    say(CI_NEXT[plan.ci or ""])


CI_NEXT = {
    "": "Then add CI and make it a required check: oracle-guard init --ci github|gitlab "
    "writes the recipe (docs: how-to/ci-github.md, how-to/ci-gitlab.md).",
    "github": "Then, once the workflow is on the default branch, make the oracle-guard-gate "
    "job a required status check (branch protection or a ruleset): docs, how-to/ci-github.md.",
    "gitlab": "Then make the oracle-guard job the gate where a merge request cannot change "
    "it (a CI/CD configuration file kept in another project, or a pipeline "
    'execution policy) and turn on "Pipelines must succeed": docs, how-to/ci-gitlab.md.',
}
