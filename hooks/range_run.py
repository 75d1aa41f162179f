"""``oracle-guard check --range A..B``: each commit of a range judged against its
first parent, as ``check --base C^1 --head C`` judges it, in one process: one
session (its ``Git``, cat-file batch, cache and parsed contracts) and one clock
for the whole range."""

from __future__ import annotations

import datetime
import sys
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from oracle_guard import clock
from oracle_guard.check_run import run_checks
from oracle_guard.errors import RevisionError, UsageError
from oracle_guard.findings import HOOKS, HookResult, exit_code, unique_findings
from oracle_guard.git.plumbing import Git
from oracle_guard.report import formats as reporters
from oracle_guard.report.escaping import inert, show_text
from oracle_guard.report.json import dump_json, json_document
from oracle_guard.report.text import finding_line, painter
from oracle_guard.session import Session

FORMATS = ("text", "json")
ROOT = (
    "{spec}: {commit} is a root commit, with no parent to judge it against (its own "
    "contract would judge it); start the range after it, or judge it alone with "
    "'oracle-guard check --head {commit}'"
)


def parse_range(spec: str) -> Tuple[str, str]:
    """(A, B) of git's two-dot ``A..B``; the three-dot form, a single revision
    and an empty side are refused."""
    if "..." in spec:
        raise UsageError(
            f"--range {spec!r}: the three-dot form is a symmetric difference; "
            "name the range as A..B (the commits reachable from B and not from A)"
        )
    exclude, dots, tip = spec.partition("..")
    if not dots:
        raise UsageError(f"--range {spec!r} names one revision; name a range as A..B")
    if not exclude or not tip:
        raise UsageError(f"--range {spec!r} has an empty side; name both ends, as A..B")
    return exclude, tip


def range_commits(git: Git, spec: str) -> List[Tuple[str, str]]:
    """(commit, first parent) of each commit of ``spec``, parents first. A root
    commit, a parent a shallow clone lacks, and an empty range are errors."""
    exclude, tip = parse_range(spec)
    ends = []
    for rev in (exclude, tip):
        oid = git.resolve_commit(rev)
        if oid is None:
            raise RevisionError(f"--range {spec!r}: {rev!r} does not name a commit here")
        ends.append(oid)
    listed = git.commits_in_order(ends[1], ends[0])
    if not listed:
        raise RevisionError(
            f"--range {spec!r} holds no commits: nothing to judge, so nothing passes"
        )
    commits = []
    for commit, parents in listed:
        if not parents and git.records_a_parent(commit):
            raise RevisionError(
                f"--range {spec!r}: the parent of {commit[:12]} is not in this clone "
                "(a shallow clone); fetch full history (git fetch --unshallow)"
            )
        if not parents:
            raise RevisionError(ROOT.format(spec=spec, commit=commit[:12]))
        commits.append((commit, parents[0]))
    return commits


def judge_range(
    session: Session,
    spec: str,
    hooks: Sequence[str],
    now: datetime.datetime,
    env: Mapping[str, str],
) -> List[Tuple[str, List[HookResult], Dict]]:
    """(commit, results, meta) of each commit of the range, in range order."""
    judged = []
    for commit, parent in range_commits(session.git, spec):
        results, meta, _ = run_checks(session, hooks, parent, commit, now, env)
        judged.append((commit, results, meta))
    return judged


def render_range(
    spec: str, judged: Sequence[Tuple[str, List[HookResult], Dict]], fmt: str, colour: bool
) -> str:
    if fmt == "json":
        commits = []
        for commit, results, meta in judged:
            commits.append(
                {
                    "commit": commit,
                    "verdict": "failed" if exit_code(results) else "passed",
                    "results": json_document(results, meta=meta),
                }
            )
        failed = sum(1 for c in commits if c["verdict"] == "failed")
        return dump_json({"range": spec, "commits": commits, "failed": failed})
    paint = painter(colour)
    lines = []
    failed = 0
    for commit, results, _ in judged:
        findings = unique_findings(results)
        if exit_code(results):
            failed += 1
            lines.append(f"{commit[:12]} failed: {len(findings)} finding(s)")
        else:
            lines.append(f"{commit[:12]} passed")
        lines.extend(finding_line(f, paint) for f in findings)
    lines.append(f"range {show_text(spec)}: {failed} of {len(judged)} commits failed")
    return "\n".join(inert(line) for line in lines) + "\n"


def run_range(
    directory: str,
    spec: str,
    hooks: Sequence[str] = HOOKS,
    *,
    now: Optional[str],
    env: Mapping[str, str],
    output: str = "text",
    color: str = "auto",
    use_cache: bool = True,
) -> int:
    """Judge each commit of ``spec`` and print one verdict a commit; the exit
    code: 0 every commit passed, 1 one has an error finding."""
    if output not in FORMATS:
        raise UsageError(f"--range supports --format {' and '.join(FORMATS)}")
    when = clock.now_from(now, env)  # once, for the whole range
    with Session(Git(directory, use_cache=use_cache)) as session:
        session.git.check_repository()
        judged = judge_range(session, spec, hooks, when, env)
    for commit, _, meta in judged:
        if meta.get("notice"):
            sys.stderr.write(f"oracle-guard: note: {commit[:12]}: {meta['notice']}\n")
    colour = output == "text" and reporters.colour_wanted(color, env, sys.stdout)
    sys.stdout.write(render_range(spec, judged, output, colour))
    return 1 if any(exit_code(results) for _, results, _ in judged) else 0
