"""``oracle-guard pre-receive``: the server-side gate.

Reads git's pre-receive protocol (``<old> <new> <ref>`` lines) on stdin and
judges every updated protected ref from git objects alone, inside git's
quarantine environment (the environment is passed to git untouched). Exit 0
accepts the whole push; anything else rejects all of it. How each ref is judged
is ``push``; this module keeps the time budget and tells the pusher.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from types import FrameType
from typing import TYPE_CHECKING, List, Mapping, Optional, TextIO

from oracle_guard import clock
from oracle_guard import contract as contract_mod
from oracle_guard.checks.codes import fix_in
from oracle_guard.commands.options import host as host_option
from oracle_guard.errors import ProtocolError, failure
from oracle_guard.git.plumbing import Git
from oracle_guard.hosts import pusher_variable
from oracle_guard.push import RefVerdict, judge_update, parse_updates
from oracle_guard.report.escaping import inert, show_path, show_text
from oracle_guard.revisions import rules_branch, unresolved_head
from oracle_guard.session import Session
from oracle_guard.snapshot import Snapshot

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers

DEFAULT_TIMEOUT = 4.0


class PushTimeout(Exception):
    """The alarm: the push took longer than its budget (reported with the budget)."""


def report(verdicts: List[RefVerdict], stream: TextIO, env: Mapping[str, str]) -> int:
    prefix = "GL-HOOK-ERR: " if env.get("GL_ID") else ""
    bad = [v for v in verdicts if v.findings]

    def say(line: str) -> None:
        stream.write(f"{prefix}{inert(line)}\n")

    for verdict in verdicts:
        for note in verdict.notes:
            stream.write(
                inert(f"oracle-guard: {show_text(verdict.update.ref)}: {show_text(note)}") + "\n"
            )
    for verdict in bad:
        for commit, f in verdict.findings:
            # a finding about the ref itself (a deletion, a replace ref) has no path
            where = (
                ""
                if f.path is None
                else show_path(f.path) + (f":{f.line}" if f.line else "") + ": "
            )
            at = f" ({commit})" if commit else ""
            say(
                f"oracle-guard: {show_text(verdict.update.ref)}{at}: {where}{f.code}: "
                f"{show_text(f.message)}"
            )
            say(
                f"oracle-guard:   fix: {fix_in(f.code, 'server', verdict.base, f.path, f.message, verdict.sections)}"
            )
    if any(commit for v in bad for commit, _ in v.findings):
        # the fixes name what to do before committing; a pushed commit is redone
        say(
            "oracle-guard: the fixes name local commands: apply them in the commits that "
            "carry the change (git rebase -i, git commit --amend), then push again"
        )
    if bad:
        count = sum(len(v.findings) for v in bad)
        say(
            f"oracle-guard: push rejected: {count} problem{'s' if count != 1 else ''} in "
            f"{len(bad)} of {len(verdicts)} judged ref{'s' if len(verdicts) != 1 else ''}; "
            "no ref was updated"
        )
        return 1
    if verdicts:  # so the pusher and the admin can see the gate is there
        count = len(verdicts)
        stream.write(
            f"oracle-guard: push accepted: {count} judged ref{'s' if count != 1 else ''} passed\n"
        )
    return 0


def _timeout_for(session: Session, default_tip: Optional[str]) -> float:
    if default_tip is None:
        return DEFAULT_TIMEOUT
    tip = Snapshot.of_commit(session.git, default_tip, "the default branch tip")
    data = contract_mod.read(tip, session)
    return float((data or {}).get("timeout_s", DEFAULT_TIMEOUT))


def _read_text(stdin: TextIO) -> str:
    """stdin as git wrote it: bytes, with no newline translation."""
    raw = (
        stdin.buffer.read()
        if hasattr(stdin, "buffer")
        else stdin.read().encode("utf-8", "surrogateescape")
    )
    return raw.decode("utf-8", "surrogateescape")


def _on_alarm(signum: int, frame: Optional[FrameType]) -> None:
    raise PushTimeout()


def receive(
    stdin: TextIO,
    stderr: TextIO,
    env: Mapping[str, str],
    trusted: Optional[str] = None,
    now_option: Optional[str] = None,
    host: Optional[str] = None,
) -> int:
    """Exit 0 accepts the push; 1 rejects it for findings; 2 for anything else.
    ``trusted``: the only variable the pusher may be read from (the host's).
    On a named host the clock is --now or the server's: ORACLE_GUARD_NOW may be
    the client's (sshd's AcceptEnv), and would move every expiry date; git
    daemon and file:// (plain) hand the hook no client's variable."""
    prefix = "GL-HOOK-ERR: " if env.get("GL_ID") else ""
    git = Git(".")
    git.resolve_in_batch = True  # HEAD and every pushed id: no rev-parse each
    session = Session(git)  # the push's state: its git, cache and parsed contracts
    timeout = DEFAULT_TIMEOUT
    started = time.monotonic()
    try:
        # the default budget runs until the contract's own timeout_s is known
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        clock_env = env if host in (None, "plain") else {}
        now = clock.now_from(now_option, clock_env)
        updates = parse_updates(_read_text(stdin), git.object_id_length())
        default_tip = git.resolve_commit("HEAD")
        if default_tip is None and git.has_refs():
            # new refs are judged against the default branch: without one they
            # would bring their own rules
            raise ProtocolError(unresolved_head(git))
        rules_ref, default_tip = rules_branch(git, default_tip, session)
        timeout = _timeout_for(session, default_tip)
        remaining = timeout - (time.monotonic() - started)
        if remaining <= 0:
            raise PushTimeout()
        signal.setitimer(signal.ITIMER_REAL, remaining)
        verdicts = []
        for update in updates:
            verdict = judge_update(session, update, env, now, default_tip, rules_ref, trusted)
            if verdict is not None:
                verdicts.append(verdict)
        signal.setitimer(signal.ITIMER_REAL, 0)
        return report(verdicts, stderr, env)
    except PushTimeout:
        stderr.write(
            f"{prefix}oracle-guard: push rejected: the checks took longer than "
            f"{timeout:g} s (contract key timeout_s)\n"
        )
        return 2
    except Exception as exc:  # fail closed: nothing unexpected accepts a push
        failed = failure(exc)
        line = inert(f"oracle-guard: push rejected: {show_text(failed.message)}")
        stderr.write(f"{prefix}{line}\n")
        return failed.exit_code
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        session.close()


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "pre-receive",
        parents=[host_option()],
        help="judge a push: git's pre-receive protocol on stdin (server side)",
    )
    parser.add_argument(
        "--now",
        metavar="TIME",
        help="the clock, to replay a push (default: the system clock in UTC; "
        "without --host, $ORACLE_GUARD_NOW first)",
    )
    parser.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    return receive(
        sys.stdin,
        sys.stderr,
        options.env,
        trusted=pusher_variable(options.host, options.identity_env),
        now_option=options.now,
        host=options.host,
    )
