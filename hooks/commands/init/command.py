"""init from start to end: make the plan, refuse to overwrite what differs without
--force, report, write every file or none, then print the next steps."""

from __future__ import annotations

from typing import List, Mapping, Sequence

from oracle_guard.commands.init.contract_writer import CONTRACT
from oracle_guard.commands.init.plan import Plan, Settings, make_plan
from oracle_guard.commands.init.preflight import preflight
from oracle_guard.commands.init.report import next_steps, report, say, staging
from oracle_guard.errors import InitError
from oracle_guard.git.plumbing import Git
from oracle_guard.snapshot import Snapshot


def init(settings: Settings, env: Mapping[str, str]) -> int:
    # deferred: 2 ms to import, only for init()
    from oracle_guard import clock
    from oracle_guard.commands import workspace

    now = clock.now_from(settings.now, env)
    git = Git(settings.directory, use_cache=False)
    try:
        git.check_repository()
        top = workspace.working_tree(git, "'oracle-guard init'")
        plan = make_plan(settings, git, top, env)
        if not settings.force and not settings.dry_run:
            refuse_conflicts(plan)
        report(plan, settings.dry_run, bool(settings.layout))
        # a dry run judges what it would write as if it were there
        planned = (
            {p.path: p.text.encode("utf-8") for p in plan.files if p.state != "same"}
            if settings.dry_run
            else {}
        )
        if not settings.dry_run:
            write(plan, top)
        to_add, locks = staging(plan, set(git.unstaged_paths()) | set(planned))
        findings, plan.unchecked = preflight(
            plan.data, git, now, plan.now_arg, top, to_add, planned
        )
        uncommitted = not_committed(git, [p.path for p in plan.files])
        uncommitted += [p for p in planned if p not in uncommitted]
    finally:
        git.close()
    if settings.dry_run:
        say(f"\n{CONTRACT} as proposed:\n")
        say(plan.contract_text, end="")
        say("\nOnce written (without --dry-run), init goes on:")
    next_steps(plan, to_add, locks, uncommitted, findings)
    return 0


def refuse_conflicts(plan: Plan) -> None:
    """Stop when a file differs from what init would write, or an edit replaces a value
    someone chose: that takes --force."""
    conflicts = [p for p in plan.files if p.state == "differs" or p.needs_force]
    if not conflicts:
        return
    first = conflicts[0]
    locks = [
        e["lock"] for e in plan.data.get("fixtures", []) if e["lock"] in [p.path for p in conflicts]
    ]
    others = [p.path for p in conflicts[1:]]
    raise InitError(
        f"{first.path} exists and differs from what init would write"
        f"{' (' + first.why + ')' if first.why else ''}"
        f"{' (and ' + ', '.join(others) + ')' if others else ''}; "
        "nothing was written: rerun with --force to overwrite, or with --dry-run to "
        "see the proposal"
        + ("; to refresh only a stale fixture lock, run 'oracle-guard lock'" if locks else "")
    )


def write(plan: Plan, top: str) -> None:
    """Every planned file or none, never through a symlink (worktree.write_files)."""
    # deferred: under 1 ms to import, only for write()
    from oracle_guard.git import worktree

    worktree.write_files(
        top,
        {
            planned.path: planned.text.encode("utf-8")
            for planned in plan.files
            if planned.state != "same"
        },
    )


def not_committed(git: Git, paths: Sequence[str]) -> List[str]:
    """Those of ``paths`` whose staged blob is not the one in HEAD."""

    head = git.resolve_commit("HEAD")
    committed = Snapshot.of_commit(git, head, "HEAD").entries if head else {}
    staged = Snapshot.of_index(git).entries
    return [p for p in paths if staged.get(p) != committed.get(p)]
