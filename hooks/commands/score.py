"""``oracle-guard score``: run the target's tests against the candidate's code and
judge what ran. The candidate is what ``check`` judges (in CI, the merge the
platform will record); the tests, their conftests and pytest's configuration
come from the target; pytest runs in a subprocess with a scrubbed environment and
oracle-guard's own plugin, and the verdict comes from what the plugin recorded."""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from oracle_guard import __version__, clock
from oracle_guard.commands.options import common, judged
from oracle_guard.errors import OracleGuardError
from oracle_guard.findings import Finding, HookResult

if TYPE_CHECKING:
    from oracle_guard.contract import Contract
    from oracle_guard.git.plumbing import Entry, Git
    from oracle_guard.scoring.session import Session
    from oracle_guard.scoring.tree import Reader, ScoredTree
    from oracle_guard.snapshot import Snapshot

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers

DEFAULT_TIMEOUT = 900
RECORD_VERSION = 1


class ScoreError(OracleGuardError):
    """No score can be made (exit 2)."""


def _frozen_ids(
    contract: Contract, target: Snapshot, now: dt.datetime
) -> Tuple[List[str], List[Dict[str, Any]]]:
    """The ids frozen at the target and not expired at ``now``, and every entry
    with its owner and expiry (for the record). A freeze file the target cannot
    read fails the score: what is excluded is never guessed."""
    # deferred: cli imports this module for its parser; 8 ms, for a run
    from oracle_guard.checks import freeze_files

    state = freeze_files.load(contract, target, "score")
    if state.findings or state.unreadable:
        first = state.findings[0] if state.findings else None
        what = f"{first.path}: {first.message}" if first else ", ".join(state.unreadable)
        raise ScoreError(f"the target's freeze files do not load ({what}): nothing is scored")
    ids, entries = [], []
    for entry in state.entries:
        expired = entry.expires is not None and _expired(entry.expires, now)
        entries.append(
            {
                "id": entry.id,
                "owner": entry.owner,
                "expires": entry.expires,
                "expired": expired,
                "path": entry.path,
            }
        )
        if not expired:
            ids.append(entry.id)
    return ids, entries


def _expired(expires: str, now: dt.datetime) -> bool:
    try:
        day = dt.date.fromisoformat(str(expires)[:10])
    except ValueError:
        return False  # freeze-schema's finding; the entry still freezes
    return day < now.date()


def _oracle_digest(target: Snapshot, oracle: Sequence[str]) -> str:
    """SHA-256 over the target's oracle files, as (path, blob id) lines."""
    lines = []
    for path in sorted(oracle):
        entry = target.entry(path)
        if entry is not None:
            lines.append(f"{entry.mode} {entry.oid}\t{path}\n")
    return hashlib.sha256("".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def score(
    directory: str,
    base: Optional[str],
    head: Optional[str],
    target: Optional[str],
    *,
    now: Optional[str],
    env: Mapping[str, str],
    python: str,
    keep: bool = False,
) -> Dict[str, Any]:
    """The score's record (docs: reference/score.md; schemas/score-record.schema.json)."""
    # deferred: cli imports this module for its parser; 18 ms, for a run
    from oracle_guard import contract as contract_mod
    from oracle_guard import revisions
    from oracle_guard.git.plumbing import Git
    from oracle_guard.scoring import pin as pins
    from oracle_guard.scoring import replay as replays
    from oracle_guard.scoring import session as sessions
    from oracle_guard.scoring import tree as trees
    from oracle_guard.scoring import verdict
    from oracle_guard.session import Session as Run

    when = clock.now_from(now, env)
    found_python = shutil.which(python)
    if found_python is None or not os.access(found_python, os.X_OK):
        raise ScoreError(f"--python {python!r} is not an interpreter this machine can run")
    run = Run(Git(directory))  # the run's state: its git, cache and parsed contracts
    git = run.git
    scratch = tempfile.mkdtemp(prefix="oracle-guard-score-")
    try:
        git.check_repository()
        revs = revisions.resolve(
            git,
            base,
            head or "HEAD",
            env,
            contract_base=lambda snap: (contract_mod.read(snap, run) or {}).get("base"),
            target=target,
            session=run,
        )
        if env.get("CI") and revs.base_reason == "--head without a base":
            raise ScoreError(
                "CI is set but no target is named: set GITHUB_BASE_REF or "
                "CI_MERGE_REQUEST_TARGET_BRANCH_NAME, or pass --target BRANCH: a gate scores "
                "the merge with the target's tests, never a commit with its own parent's"
            )
        if revs.conflicts:
            raise ScoreError(
                f"{revs.candidate.label} conflicts with its target at "
                f"{', '.join(revs.conflicts)}: a merge that cannot be recorded is not scored"
            )
        rules = revs.rules
        contract = contract_mod.choose(rules, revs.candidate, run)
        if contract is None or not contract.from_base:
            raise ScoreError(
                f"{rules.label} has no contract: the tests to score come from the target's "
                "score section"
            )
        section = contract.section("score")
        if section is None:
            raise ScoreError(
                f"the contract in {rules.label} has no score section: add "
                "'score: {tests: [\"tests/**\"]}' in an owner's change (docs: reference/score.md)"
            )
        pin = pins.read_pin(section, rules)
        frozen, frozen_entries = _frozen_ids(contract, rules, when)
        timeout = float(section.get("timeout", DEFAULT_TIMEOUT))
        cases = replays.load(contract, rules)  # the target's records, never the candidate's
        scored = trees.build(rules, revs.candidate, section["tests"])
        own = trees.build(rules, rules, section["tests"])
        folders = sessions.private_folder(os.path.join(scratch, "run"))
        candidate_tree = os.path.join(scratch, "candidate")
        target_tree = os.path.join(scratch, "target")
        for folder, built in ((candidate_tree, scored), (target_tree, own)):
            trees.write(folder, built.files, _reader(git, built.files))
        config = trees.config_file(scored.files, scored.arguments, _reader(git, scored.files))
        settings = {"frozen": frozen, "seed": pin.seed, "hypothesis": pin.hypothesis}

        def one(
            name: str, tree: str, built: trees.ScoredTree, collect_only: bool = False
        ) -> sessions.Session:
            return sessions.run(
                python,
                tree,
                built.arguments,
                config,
                folders,
                os.path.join(scratch, "run", f"{name}.jsonl"),
                settings,
                pin.seed,
                timeout,
                collect_only=collect_only,
            )

        # the target's own collection beside the oracle's session: what may not vanish
        found: Dict[str, Any] = {}

        def collect() -> None:
            try:
                found["baseline"] = one("target", target_tree, own, True)
            except BaseException as exc:  # re-raised below, in the caller's thread
                found["error"] = exc

        collecting = threading.Thread(target=collect)
        collecting.start()
        oracle = one("oracle", candidate_tree, scored)
        collecting.join()
        if "error" in found:
            raise found["error"]
        baseline = found["baseline"]
        if baseline.returncode is None or not baseline.ended:
            said = (baseline.output.strip().splitlines() or ["it printed nothing"])[-1]
            if baseline.returncode is None:
                said = f"it ran past score.timeout ({timeout:g} s)"
            raise ScoreError(
                f"collecting the target's own tests with {python} did not finish "
                f"(status {baseline.returncode}): {said}"
            )
        judged_run = verdict.judge(oracle, baseline, frozen, scored.oracle, candidate_tree, timeout)
        replayer = replays.Replayer(
            python,
            candidate_tree,
            config,
            folders,
            os.path.join(scratch, "run", "replays"),
            settings,
            pin.seed,
            timeout,
        )
        replayed = replays.judge(
            cases,
            lambda kept: replays.replay_all(replayer, kept),
            frozen,
            frozen_entries,
            oracle.of("test"),
        )
        added = _candidate_tests(git, scored, candidate_tree, one) if scored.added_tests else []
        start = (oracle.of("start") or baseline.of("start") or [{}])[0]
        findings = judged_run.findings + replayed.findings
        passed = not [f for f in findings if f.severity == "error"]
        return {
            "version": RECORD_VERSION,
            "oracle_guard": __version__,
            "replayable": oracle.ended and oracle.returncode is not None,
            "verdict": "passed" if passed else "failed",
            "now": when.isoformat(),
            "target": rules.commit,
            "target_label": rules.label,
            "candidate": revs.candidate.commit,
            "head": revs.head,
            "seed": pin.seed,
            "pin": pin.source,
            "hypothesis": pin.hypothesis,
            "python": start.get("python"),
            "pytest": start.get("pytest"),
            "oracle_digest": _oracle_digest(rules, sorted(scored.oracle)),
            "arguments": scored.arguments,
            "config": config,
            "scored": judged_run.collected,
            "frozen": frozen_entries,
            "deselected": [i for r in oracle.of("deselected") for i in r.get("ids", [])],
            "tests": judged_run.tests,
            "candidate_tests": added,
            "left_out": scored.dropped,
            "replays": replayed.replays,
            "queues": replayed.queues if replays.replaying(contract) else None,
            "exit_status": oracle.returncode,
            "seconds": round(oracle.seconds, 3),
            "findings": [
                {
                    "code": f.code,
                    "path": f.path,
                    "line": f.line,
                    "message": f.message,
                    "severity": f.severity,
                }
                for f in findings
            ],
            "output": oracle.output if not passed else "",
        }
    finally:
        run.close()
        if keep:
            sys.stderr.write(f"oracle-guard: the score's folders are kept in {scratch}\n")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def _reader(git: Git, entries: Dict[str, Entry]) -> Reader:
    # deferred: cli imports this module for its parser; 7 ms, for a run
    from oracle_guard.scoring.tree import blob_reader

    return blob_reader(git, entries)


def _candidate_tests(
    git: Git, scored: ScoredTree, tree: str, one: Callable[[str, str, ScoredTree], Session]
) -> List[Dict[str, Any]]:
    """The test files only the candidate has, run in a session of their own after
    the oracle's: reported, never counted in the verdict."""
    # deferred: cli imports this module for its parser; 7 ms, for a run
    from oracle_guard.scoring import tree as trees

    trees.write(tree, scored.added_tests, _reader(git, scored.added_tests))
    run = one("candidate", tree, scored._replace(arguments=sorted(scored.added_tests)))
    return [{"nodeid": r.get("nodeid"), "outcome": r.get("outcome")} for r in run.of("test")]


def results_of(record: Dict[str, Any]) -> List[HookResult]:
    findings = [
        Finding("score", f["code"], f["path"], f["message"], f.get("line"), f["severity"])
        for f in record["findings"]
    ]
    return [HookResult("score", findings)]


def render_text(record: Dict[str, Any]) -> str:
    # deferred: cli imports this module for its parser; 1 ms, for a run
    from oracle_guard.report.escaping import show_text
    from oracle_guard.report.text import finding_line

    outcomes: Dict[str, int] = {}
    for test in record["tests"]:
        outcomes[test["outcome"]] = outcomes.get(test["outcome"], 0) + 1
    counted = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items())) or "no tests"
    target = (record["target"] or "")[:12]
    candidate = (record["candidate"] or "")[:12]
    label = record["target_label"]
    named = (
        target
        if record["target"] and record["target"].startswith(label)
        else (f"{show_text(label)} ({target})")
    )
    lines = [
        f"score: seed {record['seed']} ({show_text(record['pin'])}); the tests of "
        f"{named} against {candidate}",
    ]
    queues = record.get("queues")
    if queues is not None:
        lines.append(
            f"score: {len(queues['captured'])} captured, {len(queues['generalized'])} "
            f"generalized, {len(queues['time_boxed'])} time-boxed"
        )
        for entry in queues["time_boxed"]:
            lines.append(
                f"score: time-boxed {show_text(entry['id'])} (owner "
                f"{show_text(str(entry['owner'] or 'none'))}, expires "
                f"{show_text(str(entry['expires'] or 'never'))})"
            )
    results = results_of(record)
    lines += [finding_line(f) for f in results[0].findings]
    extra = f"; {len(record['deselected'])} frozen, not run" if record["deselected"] else ""
    if record["replays"]:
        extra += f"; {len(record['replays'])} records replayed"
    if record["candidate_tests"]:
        extra += f"; {len(record['candidate_tests'])} new tests of the candidate's, not counted"
    lines.append(f"score: {record['verdict']} ({counted}{extra})")
    if record["verdict"] == "failed":
        first = record["findings"][0]["code"] if record["findings"] else "test-failed"
        lines.append(f"hint: see 'oracle-guard explain {first}'.")
    return "\n".join(lines) + "\n"


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "score",
        parents=[common(), judged()],
        help="run the target's tests against the candidate's code, and judge the run",
    )
    parser.add_argument("--base", metavar="REV", help="the revision whose tests are the oracle")
    parser.add_argument(
        "--head", metavar="REV", help="the commit whose code is scored (default: HEAD)"
    )
    parser.add_argument(
        "--target",
        metavar="BRANCH",
        help="the branch the change merges into: its tip's tests score the merge "
        "(default: $ORACLE_GUARD_TARGET, or in CI the platform's target)",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        default=sys.executable,
        help="the interpreter that runs pytest, with the project's test dependencies "
        "(default: the one running oracle-guard)",
    )
    parser.add_argument(
        "--record", metavar="FILE", help="also write the JSON record to FILE (relative to -C DIR)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the scratch folders, and say where they are"
    )
    parser.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    # deferred: cli imports this module for its parser; 2 ms, for a run
    from oracle_guard.report import formats as reporters
    from oracle_guard.report import outputs

    options.outputs = outputs.resolve(options.output, options.C)
    record = score(
        options.C,
        options.base,
        options.head,
        options.target,
        now=options.now,
        env=options.env,
        python=options.python,
        keep=options.keep,
    )
    code = 0 if record["verdict"] == "passed" else 1
    meta = {
        "base": record["target"],
        "candidate": record["candidate"],
        "now": record["now"],
        "context": "commits",
    }
    document = json.dumps(record, indent=2, sort_keys=True) + "\n"
    if options.record:
        outputs.write(
            outputs.Output("json", options.record, os.path.join(options.C, options.record)),
            document,
        )
    for wanted in options.outputs:
        text = (
            document
            if wanted.format == "json"
            else reporters.render(wanted.format, results_of(record), meta=meta, exit_code=code)
        )
        outputs.write(wanted, text)
    if options.format == "text":
        sys.stdout.write(render_text(record))
    elif options.format == "json":
        sys.stdout.write(document)
    else:
        sys.stdout.write(
            reporters.render(options.format, results_of(record), meta=meta, exit_code=code)
        )
    return code
