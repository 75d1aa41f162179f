"""Command line: ``oracle-guard check | lock | init | freeze | seeds | signers | explain
| schema | demo | pre-receive | install-pre-receive | doctor``."""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from oracle_guard import __version__, clock
from oracle_guard import contract as contract_mod
from oracle_guard.report import formats as reporters
from oracle_guard.findings import HOOKS, HookResult, exit_code
from oracle_guard.report.escaping import inert, show_text
from oracle_guard.judge import judge

class UsageError(Exception):
    pass


def hook_list(text: str) -> List[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in HOOKS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown hook {', '.join(unknown) or text!r}; choose from {', '.join(HOOKS)}")
    return names


def run_checks(git, hooks: Sequence[str], base: Optional[str], head: Optional[str],
               now, env: Mapping[str, str], target: Optional[str] = None
               ) -> Tuple[List[HookResult], Dict, List[str]]:
    from oracle_guard import revisions

    git.check_repository()
    revs = revisions.resolve(
        git, base, head, env,
        contract_base=lambda snap: (contract_mod.read(snap) or {}).get("base"), target=target)
    contract = contract_mod.choose(revs.rules, revs.candidate)
    meta = {
        "base": revs.base.commit or revs.base.label,
        "base_from": revs.base_reason,
        "candidate": revs.head or revs.candidate.label,
        "contract_from": None if contract is None else contract.source.label,
        "now": now.isoformat(),
    }
    if revs.head is not None and revs.candidate.commit != revs.head:
        meta["merge_tree"] = revs.candidate.commit
    if revs.notice:
        meta["notice"] = revs.notice
    owners = [] if contract is None else contract.owners
    if revs.conflicts:
        return _conflicted(revs, hooks), meta, owners
    pending = None
    if revs.history and contract is not None and contract.from_base and "write-set" in hooks:
        pending = git.history(*revs.history)  # runs beside the checks
    results = judge(contract, revs.base, revs.candidate, now, hooks)
    if revs.candidate.commit is None and contract is not None and "write-set" in hooks:
        _staged_authority(git, contract, revs, results)
    if pending is not None:
        from oracle_guard.authority import history

        result = next(r for r in results if r.hook == "write-set")
        net, per_commit, note = history.judge_with_authority(
            contract, git, pending(), result.findings, revs.linear, undone=revs.pushed)
        if per_commit or note:
            result.findings = net + [f for _, f in per_commit]
            result.note = note
    return results, meta, owners


def _staged_authority(git, contract, revs, results: List[HookResult]) -> None:
    """A commit being made: the owners' signing configuration, where set up."""
    from oracle_guard.authority import signatures as authority
    from oracle_guard.snapshot import changes

    result = next(r for r in results if r.hook == "write-set")
    if not result.findings or contract.section("authority") is None:
        return
    changed = [path for path, _, _ in changes(revs.base, revs.candidate)]
    result.findings, note = authority.judge_staged(contract, git, changed, result.findings)
    result.note = note or result.note


def _conflicted(revs, hooks: Sequence[str]) -> List[HookResult]:
    """A merge that conflicts is not judged (no check reports a pass): the
    platform cannot record it as is, and a conflicted oracle file is never
    judged as one side."""
    from oracle_guard.findings import Finding

    return [HookResult("write-set", [Finding(
        "write-set", "merge-conflict", path,
        f"{revs.candidate.label} conflicts here; it is judged once it merges cleanly")
        for path in revs.conflicts])]


def cmd_check(args, env: Mapping[str, str]) -> int:
    from oracle_guard.git.plumbing import Git

    now = clock.now_from(args.now, env)
    git = Git(args.C, use_cache=not args.no_cache)
    try:
        results, meta, owners = run_checks(git, args.only or HOOKS, args.base, args.head,
                                           now, env, getattr(args, "target", None))
    finally:
        git.close()
    code = exit_code(results)
    if meta.get("notice"):
        sys.stderr.write(f"oracle-guard: note: {meta['notice']}\n")
    colour = args.format == "text" and reporters.colour_wanted(args.color, env, sys.stdout)
    sys.stdout.write(reporters.render(args.format, results, meta=meta, owners=owners,
                                      exit_code=code, colour=colour))
    return code


def cmd_lock(args, env: Mapping[str, str]) -> int:
    if args.add is not None:  # one new fixture (authoring.py)
        from oracle_guard.commands import freeze as authoring

        return authoring.cmd_lock_add(args, env)
    if args.check:
        args.only, args.base, args.head = ["fixture-lock"], None, None
        return cmd_check(args, env)
    from oracle_guard.checks import fixture_lock
    from oracle_guard.git.plumbing import Git
    from oracle_guard.snapshot import Snapshot

    git = Git(args.C, use_cache=not args.no_cache)
    try:
        git.check_repository()
        top = git.toplevel()
        if top is None:
            raise UsageError("'oracle-guard lock' needs a working tree (not a bare repository)")
        index = Snapshot.of_index(git)
        data = contract_mod.read(index)
        if data is None:
            raise UsageError(f"no {contract_mod.CONTRACT_PATH} in the index: write and "
                             "'git add' the contract first")
        entries = data.get("fixtures") or []
        if not entries:
            print("nothing to lock: the contract has no 'fixtures' section")
            return 0
        unstaged = git.unstaged_paths()
        from oracle_guard.commands.freeze import git_add, unlockable_name

        here = os.path.realpath(args.C or ".")  # the printed 'git add' works from there
        for entry in entries:
            pending = fixture_lock.pending_fixtures(entry, unstaged)
            if pending:
                state = ("is not tracked" if pending[0] not in index.entries
                         else "has changes git has not staged")
                raise UsageError(
                    f"{pending[0]!r} {state}; the lock hashes what git will commit: run "
                    f"'{git_add(pending[0], top, here)}' first")
            problems = fixture_lock.unlockable(entry, index)
            problems += [p for p in map(unlockable_name, fixture_lock.fixture_files(entry, index))
                         if p]
            if problems:
                raise UsageError(f"cannot lock {entry['lock']}: {problems[0]}")
        from oracle_guard.git import worktree

        built = [(entry["lock"], *fixture_lock.build_lock(entry, index)) for entry in entries]
        try:  # every lock or none
            worktree.write_files(top, {lock: text.encode("utf-8") for lock, text, _ in built})
        except worktree.WorktreeError as exc:
            raise UsageError(str(exc)) from None
        for lock, _, count in built:
            print(f"wrote {lock} ({count} file{'s' if count != 1 else ''}); "
                  f"stage it with: {git_add(lock, top, here)}")
    finally:
        git.close()
    return 0


def cmd_pre_receive(args, env: Mapping[str, str]) -> int:
    from oracle_guard.commands import pre_receive
    from oracle_guard.hosts import pusher_variable

    return pre_receive.main(sys.stdin, sys.stderr, env,
                            trusted=pusher_variable(args.host, args.identity_env),
                            now_option=args.now, host=args.host)


def cmd_install_pre_receive(args, env: Mapping[str, str]) -> int:
    from oracle_guard.commands import install_pre_receive as install
    from oracle_guard.git.plumbing import trust_repository_owner

    trust_repository_owner()
    try:
        lines, code = install.install(args.repo, host=args.host, identity_env=args.identity_env,
                                      force=args.force, directory=args.dir,
                                      sshd_config=args.sshd_config)
    except (install.InstallError, OSError) as exc:
        raise UsageError(str(exc)) from None
    print("\n".join(lines))
    return code


def cmd_doctor(args, env: Mapping[str, str]) -> int:
    from oracle_guard.commands import doctor
    from oracle_guard.git.plumbing import trust_repository_owner

    trust_repository_owner()
    return doctor.main(args.repo, args.dir, sys.stdout, args.sshd_config)


def cmd_demo(args, env: Mapping[str, str]) -> int:
    from oracle_guard.commands import demo

    return demo.main(keep=args.keep)


def cmd_init(args, env: Mapping[str, str]) -> int:
    from oracle_guard.commands import init

    try:
        return init.main(args, env)
    except init.InitError as exc:
        raise UsageError(str(exc)) from None


def cmd_explain(args, env: Mapping[str, str]) -> int:
    from oracle_guard.checks.codes import CODES

    if args.all == (args.code is not None):
        raise UsageError("'oracle-guard explain' takes a CODE or --all")
    if args.all:
        width = max(map(len, CODES))
        hook_width = max(len(info.hook) for info in CODES.values())
        for code, info in CODES.items():
            print(f"{code:<{width}}  {info.hook:<{hook_width}}  {info.meaning}")
        return 0
    code = args.code.strip().lower()
    if code not in CODES:
        raise UsageError(_unknown_code(args.code, CODES))
    info = CODES[code]
    print(f"code:    {code}\nhook:    {info.hook}\nmeaning: {info.meaning}\n"
          f"example: {info.example}\nfix:     {info.fix}")
    return 0


def _unknown_code(given: str, codes: Sequence[str]) -> str:
    import difflib

    word = given.strip().lower()
    near = difflib.get_close_matches(word, codes, n=3, cutoff=0.6)
    near += [c for c in codes if word and word in c and c not in near]
    listed = f"did you mean {', '.join(near[:5])}? " if near else ""
    return f"unknown code {given!r}; {listed}'oracle-guard explain --all' lists every code"


def schema_names() -> List[str]:
    from oracle_guard.parsing.validation import schema_dir

    suffix = ".schema.json"
    return sorted(n[: -len(suffix)] for n in os.listdir(schema_dir()) if n.endswith(suffix))


def cmd_schema(args, env: Mapping[str, str]) -> int:
    from oracle_guard.parsing.validation import schema_path

    names = schema_names()
    if args.list == (args.name is not None):
        raise UsageError("'oracle-guard schema' takes a NAME or --list")
    if args.list:
        print("\n".join(names))
        return 0
    if args.name not in names:
        raise UsageError(f"unknown schema {args.name!r}; choose from {', '.join(names)}")
    with open(schema_path(args.name), encoding="utf-8") as f:
        text = f.read()
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oracle-guard",
        description="Keep a repository's test oracle out of reach of the patches it judges.")
    parser.add_argument("--version", action="version", version=f"oracle-guard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-C", metavar="DIR", default=".",
                        help="run as if started in DIR (default: the current folder)")
    common.add_argument("--debug", action="store_true",
                        help="print a traceback on unexpected errors")
    judged = argparse.ArgumentParser(add_help=False)
    judged.add_argument("--now", metavar="TIME",
                        help="the clock: ISO-8601 date or date-time with offset "
                             "(default: $ORACLE_GUARD_NOW, else the system clock in UTC)")
    judged.add_argument("--format", choices=reporters.FORMATS, default="text",
                        help="text (default), json, github (Actions annotations) "
                             "or sarif (SARIF 2.1.0)")
    judged.add_argument("--color", choices=reporters.COLOR_CHOICES, default="auto",
                        help="colour the text format (default auto: on a terminal, unless "
                             "NO_COLOR; FORCE_COLOR and PRE_COMMIT_COLOR are honoured)")
    judged.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the verdict cache in the git directory")

    check = sub.add_parser("check", parents=[common, judged],
                           help="run the hooks (all five by default)")
    check.add_argument("--only", type=hook_list, metavar="ID[,ID...]",
                       help=f"run only these hooks: {', '.join(HOOKS)}")
    check.add_argument("--base", metavar="REV", help="the revision the change started from")
    check.add_argument("--head", metavar="REV",
                       help="judge this commit instead of the index")
    check.add_argument("--target", metavar="BRANCH",
                       help="the branch the change merges into: the rules come from its tip "
                            "and, without --base, the change is compared with the merge-base "
                            "(default: $ORACLE_GUARD_TARGET)")
    check.set_defaults(func=cmd_check)

    lock = sub.add_parser("lock", parents=[common, judged],
                          help="write the fixture lock(s) from staged content")
    lock.add_argument("--check", action="store_true",
                      help="verify instead of writing (same as the fixture-lock hook)")
    lock.add_argument("--add", metavar="PATH",
                      help="add one new, staged fixture (repo-relative) to its lock")
    lock.set_defaults(func=cmd_lock)

    from oracle_guard.commands import freeze as authoring
    from oracle_guard.commands import seeds as seeds_edit
    from oracle_guard.commands import signers as signers_edit  # freeze, seeds, signers

    authoring.register(sub, common)
    seeds_edit.register(sub, common)
    signers_edit.register(sub, common)

    from oracle_guard.commands import doctor as doctor_mod
    from oracle_guard.hosts import HOSTS

    host = argparse.ArgumentParser(add_help=False)
    host.add_argument("--host", choices=list(HOSTS),
                      help="the server that runs the hook; the pusher is read only from the "
                           "variable it sets (README: Per server)")
    host.add_argument("--identity-env", metavar="NAME",
                      help="ssh and plain hosts: the variable your setup sets for the pusher "
                           "(ssh: default REMOTE_USER, set per key in authorized_keys)")
    receive = sub.add_parser(
        "pre-receive", parents=[host],
        help="judge a push: git's pre-receive protocol on stdin (server side)")
    receive.add_argument("--now", metavar="TIME",
                         help="the clock, to replay a push (default: the system clock in UTC; "
                              "without --host, $ORACLE_GUARD_NOW first)")
    receive.set_defaults(func=cmd_pre_receive)

    install = sub.add_parser("install-pre-receive", parents=[common, host],
                             help="install the pre-receive hook where your git server runs it")
    install.add_argument("repo", metavar="REPO",
                         help="the repository, e.g. /srv/git/app.git (gitolite: its "
                              "repositories folder; ghes: a clone of the hooks repository)")
    install.add_argument("--force", action="store_true",
                         help="replace a pre-receive hook oracle-guard did not write (it is "
                              "kept as pre-receive.before-oracle-guard)")
    install.add_argument("--dir", metavar="DIR",
                         help="write DIR/oracle-guard instead, for servers that run every "
                              "script of a pre-receive.d folder (relative to REPO)")
    install.add_argument("--sshd-config", metavar="FILE", default=doctor_mod.SSHD_CONFIG,
                         help="ssh and gitolite: the configuration of the sshd that serves "
                              "the repositories (default: %(default)s)")
    install.set_defaults(func=cmd_install_pre_receive)

    doctor = sub.add_parser("doctor", parents=[common],
                            help="say whether a server repository is guarded (read-only)")
    doctor.add_argument("repo", metavar="REPO", help="the repository, e.g. /srv/git/app.git")
    doctor.add_argument("--dir", metavar="DIR",
                        help="the hook is DIR/oracle-guard (as installed with --dir)")
    doctor.add_argument("--sshd-config", metavar="FILE", default=doctor_mod.SSHD_CONFIG,
                        help="ssh and gitolite: the configuration of the sshd that serves "
                             "the repository, read with sshd -T (default: %(default)s)")
    doctor.set_defaults(func=cmd_doctor)

    debug_only = argparse.ArgumentParser(add_help=False)  # demo builds its own repository
    debug_only.add_argument("--debug", action="store_true",
                            help="print a traceback on unexpected errors")
    demo = sub.add_parser("demo", parents=[debug_only],
                          help="show the hooks at work in a throwaway repository")
    demo.add_argument("--keep", action="store_true", help="keep the demo repository")
    demo.set_defaults(func=cmd_demo)

    init = sub.add_parser("init", parents=[common],
                          help="write a contract, fixture lock and pre-commit hooks for this "
                               "repository's layout")
    init.add_argument("--layout", metavar="NAME",
                      help="harness, merge-contract, oracle-dir or replay-queue "
                           "(default: the one recognised)")
    init.add_argument("--force", action="store_true",
                      help="overwrite files that differ from what init would write")
    init.add_argument("--dry-run", action="store_true",
                      help="print what would be written; write nothing")
    init.add_argument("--repo", metavar="URL",
                      default="https://your.git.server/mirrors/oracle-guard",
                      help="where pre-commit installs oracle-guard from: a URL or a local clone "
                           "(default: a placeholder to fill in)")
    init.add_argument("--rev", metavar="REV",
                      help="the tag or commit of --repo to pin (default: a local clone's HEAD, "
                           "else a placeholder)")
    init.add_argument("--allow", metavar="PATTERN", action="append",
                      help="a pattern the write set allows (repeat it for more; default: the "
                           "layout example's allow patterns that match a path here)")
    init.add_argument("--ci", choices=("github", "gitlab"),
                      help="also write the CI recipe, installing oracle-guard from --repo at "
                           "--rev (default: none)")
    init.add_argument("--now", metavar="TIME",
                      help="the clock for the budget check of what is staged "
                           "(default: $ORACLE_GUARD_NOW, else the system clock in UTC)")
    init.set_defaults(func=cmd_init)

    explain = sub.add_parser("explain", help="what a finding code means, an example, the fix")
    explain.add_argument("code", metavar="CODE", nargs="?", help="a finding code")
    explain.add_argument("--all", action="store_true",
                         help="list every code with its hook and meaning")
    explain.set_defaults(func=cmd_explain)

    schema = sub.add_parser("schema", help="print a built-in JSON Schema")
    schema.add_argument("name", metavar="NAME", nargs="?",
                        help="contract, fixtures-lock, flake-budget, freeze, quarantine-entry "
                             "or quarantine-list")
    schema.add_argument("--list", action="store_true", help="list the built-in schema names")
    schema.set_defaults(func=cmd_schema)
    return parser


def main(argv: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None) -> int:
    if env is None:
        env = os.environ
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except AttributeError:  # replaced by a test harness
            pass
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.func(args, env)
        sys.stdout.flush()  # a closed pipe surfaces here, not at interpreter exit
        return code
    except BrokenPipeError:  # the reader went away (`| head`): quiet, but not a pass
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return 2
    except Exception as exc:  # fail closed: nothing unexpected exits 0
        return _fail(args, exc)


def _fail(args, exc: BaseException) -> int:
    from oracle_guard.contract import ContractError
    from oracle_guard.git.plumbing import GitError
    from oracle_guard.revisions import RevisionError

    known = (ContractError, GitError, RevisionError, UsageError, clock.ClockError)
    if isinstance(exc, known):
        message = str(exc)
    else:
        message = f"internal error: {type(exc).__name__}: {exc} (rerun with --debug)"
    if getattr(args, "debug", False):
        traceback.print_exc()
    # json, github and sarif readers get the failure in their own format too
    sys.stdout.write(reporters.render_error(getattr(args, "format", "text"), message))
    # one line, whatever names the message quotes (a contract key, a file name)
    print(inert(f"oracle-guard: error: {show_text(message)}"), file=sys.stderr)
    return 2
