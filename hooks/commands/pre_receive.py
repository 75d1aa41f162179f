"""``oracle-guard pre-receive``: the server-side gate.

Reads git's pre-receive protocol (``<old> <new> <ref>`` lines) on stdin and
judges every updated protected ref from git objects alone, inside git's
quarantine environment (the environment is passed to git untouched). Exit 0
accepts the whole push; anything else rejects all of it.
"""

from __future__ import annotations

import fnmatch
import re
import signal
import sys
from typing import Callable, List, Mapping, NamedTuple, Optional, TextIO, Tuple

from oracle_guard import clock
from oracle_guard import contract as contract_mod
from oracle_guard.checks.codes import fix_in
from oracle_guard.commands.options import host as host_option
from oracle_guard.errors import GitError, ProtocolError, failure
from oracle_guard.findings import HOOKS, Finding, unique_findings
from oracle_guard.git.plumbing import Git
from oracle_guard.git.process import decode_path
from oracle_guard.judge import judge, next_contract_findings
from oracle_guard.report.escaping import inert, show_path, show_text
from oracle_guard.revisions import caught_up, new_ref_base, rules_branch, unresolved_head
from oracle_guard.snapshot import Snapshot

HOOK = "pre-receive"
DEFAULT_PROTECTED = ("refs/heads/*", "refs/tags/*")
DEFAULT_TIMEOUT = 4.0
REPLACE_REFS = "refs/replace/"


class PushTimeout(Exception):
    """The alarm: the push took longer than its budget (reported with the budget)."""


class RefUpdate(NamedTuple):  # not a dataclass: every push would import inspect
    old: str
    new: str
    ref: str

    @property
    def created(self) -> bool:
        return set(self.old) == {"0"}

    @property
    def deleted(self) -> bool:
        return set(self.new) == {"0"}


def parse_updates(text: str, id_length: int = 40) -> List[RefUpdate]:
    """git's lines, split on newline alone: a ref name may hold U+2028 or U+0085."""
    updates = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    oid = re.compile(f"^[0-9a-f]{{{id_length}}}$")
    for number, line in enumerate(lines, 1):
        parts = line.split(" ")
        if (
            len(parts) != 3
            or not oid.match(parts[0])
            or not oid.match(parts[1])
            or not parts[2].startswith("refs/")
        ):
            raise ProtocolError(
                f"stdin line {number} is not '<old-oid> <new-oid> <ref>' with "
                f"{id_length}-digit ids: {line[:80]!r}"
            )
        updates.append(RefUpdate(*parts))
    return updates


def matches_any(ref: str, patterns) -> bool:
    # refspec-style globs: '*' spans '/'
    return any(fnmatch.fnmatchcase(ref, p) for p in patterns)


def pusher(
    env: Mapping[str, str], contract: Optional[contract_mod.Contract], trusted: Optional[str] = None
) -> Optional[str]:
    """The account the hosting server says is pushing, in the one variable the
    contract names: a fallback over several hosts' variables let a client's own
    variable (sshd's AcceptEnv, a --receive-pack wrapper) win over the host's.
    ``trusted``: the variable the installed host sets; another one never counts."""
    named = contract.section("identity_env") if contract else None
    if not named or (trusted is not None and named != trusted):
        return None
    return env.get(named) or None


def untrusted_identity(
    contract: Optional[contract_mod.Contract], trusted: Optional[str]
) -> Optional[str]:
    """A note when the contract names owners by a variable this host does not set."""
    named = contract.section("identity_env") if contract else None
    if not named or trusted is None or named == trusted:
        return None
    assert contract is not None  # named came from it
    if not contract.owners:
        return None
    return (
        f"identity_env {named} is not the variable this server sets for the pusher "
        f"({trusted}): nobody is an owner by variable; owners' signatures still count"
    )


class RefVerdict(NamedTuple):
    update: RefUpdate
    findings: List[Tuple[Optional[str], Finding]]  # (short commit id, finding)
    notes: List[str]
    base: Optional[str] = None  # the commit the pushed tip was compared with, for the fixes
    sections: Optional[Tuple[str, ...]] = None  # the rules' contract sections, for the fixes


def rules_for_push(git: Git, default_tip: Optional[str]) -> Optional[Snapshot]:
    """Where every ref of the push takes its rules: the default branch's tip
    before the push. No ref chooses older rules by where it starts."""
    if default_tip is None:
        return None
    return Snapshot.of_commit(git, default_tip, "the default branch tip")


def _old_tip(git: Git, update: RefUpdate) -> Snapshot:
    old_commit = git.resolve_commit(update.old)
    if old_commit is None:
        raise GitError(f"{update.ref}: old tip {update.old[:12]} is not a commit")
    return Snapshot.of_commit(git, old_commit, f"the old tip of {update.ref}")


def _contract_for(
    git: Git, update: RefUpdate, default: Optional[Snapshot], candidate: Optional[Snapshot]
) -> Optional[contract_mod.Contract]:
    """The default branch's contract; when it has none, the old tip's; only when
    neither has one (the first contract of a repository), the pushed tip's."""
    if default is not None and contract_mod.CONTRACT_PATH in default:
        return contract_mod.choose(default, default)
    old_commit = None if update.created else git.resolve_commit(update.old)
    if old_commit is not None:  # an unprotected ref may hold a blob or a tree
        old = Snapshot.of_commit(git, old_commit, f"the old tip of {update.ref}")
        if contract_mod.CONTRACT_PATH in old:
            return contract_mod.choose(old, old)
    if candidate is None:
        return None
    return contract_mod.choose(default or Snapshot.empty("no default branch"), candidate)


def judge_update(
    git: Git,
    update: RefUpdate,
    env: Mapping[str, str],
    now,
    default_tip: Optional[str],
    rules_ref: Optional[str] = None,
    trusted: Optional[str] = None,
) -> Optional[RefVerdict]:
    """None when the ref is not protected; else the verdict for this ref.
    ``rules_ref``: the branch the rules come from, protected whatever
    protected_refs says (a push to it would choose the next push's rules)."""
    default = rules_for_push(git, default_tip)

    def guarded(contract) -> bool:
        return update.ref == rules_ref or matches_any(update.ref, _protected_refs(contract))

    if update.ref.startswith(REPLACE_REFS):
        return _replace_ref(update, env, _contract_for(git, update, default, None), trusted)
    if update.deleted:
        contract = _contract_for(git, update, default, None)
        if not guarded(contract):
            return None
        return _deletion(git, update, env, contract, trusted, rules_ref)
    provisional = _contract_for(git, update, default, None)
    if provisional is not None and not guarded(provisional):
        return None  # not judged, whatever it points at
    new_commit = git.resolve_commit(update.new)
    if new_commit is None:
        if not guarded(provisional):
            return None
        raise GitError(f"{update.ref}: {update.new[:12]} does not point to a commit")
    candidate = Snapshot.of_commit(git, new_commit, f"the pushed tip of {update.ref}")
    contract = provisional or _contract_for(git, update, default, candidate)
    if not guarded(contract):
        return None
    base = _base_of(git, update, new_commit, default_tip, contract)

    notes = [note for note in [untrusted_identity(contract, trusted)] if note]
    who = pusher(env, contract, trusted)
    owner = contract is not None and who is not None and who in contract.owners
    hooks = list(HOOKS)
    if owner:
        hooks.remove("write-set")
        notes.append(f"{who} is an owner: protected paths may change")
    pending = None
    new_ids: set = set()
    old_commit: Optional[str] = None  # read only when pending is set, which sets it
    if contract is not None and contract.from_base:
        # git lists the new commits while the hooks judge the tip; commits the
        # default branch already has were judged when they landed there
        old_commit = None if update.created else git.resolve_commit(update.old)
        pending = git.history(new_commit, [c for c in (old_commit, default_tip) if c])
    if update.created and not owner:
        old_commit_finding = _at_old_commit(
            git, update, new_commit, default_tip, rules_ref, contract
        )
        if old_commit_finding is not None:
            return RefVerdict(update, [(new_commit[:12], old_commit_finding)], notes)
    results = judge(contract, base, candidate, now, hooks)
    findings: List[Tuple[Optional[str], Finding]] = [
        (new_commit[:12], f)
        for f in unique_findings([r for r in results if r.hook != "write-set"])
        if f.severity == "error"
    ]
    net = [f for result in results if result.hook == "write-set" for f in result.findings]
    per_commit: List[Tuple[str, Finding]] = []
    if pending is not None:
        from oracle_guard.authority import history

        commits = pending()
        new_ids = {commit.id for commit in commits}
        # a new commit whose parent is the old tip says it descends: no process to ask
        linear = (
            old_commit is None
            or any(old_commit in commit.parents for commit in commits)
            or git.is_ancestor(old_commit, new_commit)
        )
        net, per_commit, note = history.judge_with_authority(
            contract, git, commits, net, linear, undone=not owner
        )
        notes.extend([note] if note else [])
        if not owner:
            standing = [f for _, f in findings] + net + [f for _, f in per_commit]
            per_commit += history.undone_by_checks(
                contract,
                git,
                commits,
                new_commit,
                lambda commit: _base_of(git, update, commit, default_tip, contract),
                now,
                standing,
            )
    if contract is not None and contract.from_base and not owner and pending is not None:
        findings.extend(
            (commit, f)
            for commit, f in _inherited(git, contract, new_commit, default_tip, new_ids, now)
        )
    if contract is not None:  # the contract it leaves judges every later push
        net += next_contract_findings(git, contract, candidate, now)
    findings.extend((new_commit[:12], f) for f in net)
    findings.extend((commit[:12] or None, f) for commit, f in per_commit)
    sections = None if contract is None else tuple(k for k in contract.data if k != "version")
    return RefVerdict(update, findings, notes, base.commit, sections)


def _deletion(
    git: Git,
    update: RefUpdate,
    env: Mapping[str, str],
    contract: Optional[contract_mod.Contract],
    trusted: Optional[str],
    rules_ref: Optional[str],
) -> RefVerdict:
    """A protected ref may go when the contract's deletable (or deletable_refs)
    lists it: for everyone, or for owners, an owner being one by identity_env or
    the signer of the push's certificate (git push --signed) with an owner's key.
    The default branch and the rules branch never go: every push is judged by
    them."""
    section = (contract.section("deletable") if contract else None) or {}
    legacy = (contract.section("deletable_refs") if contract else None) or ()
    owners = section.get("owners", [])
    kept = update.ref in (rules_ref, git.head_target())
    why = "" if kept else None
    for key, patterns in (
        ("deletable_refs", legacy),
        ("deletable.everyone", section.get("everyone", [])),
    ):
        if not kept and matches_any(update.ref, patterns):
            return RefVerdict(update, [], [f"deletion allowed by {key}"])
    if not kept and contract is not None and matches_any(update.ref, owners):
        who = pusher(env, contract, trusted)
        if who is not None and who in contract.owners:
            return RefVerdict(
                update, [], [f"{who} is an owner: deletion allowed by deletable.owners"]
            )
        signer, why = push_certificate_signer(git, env, contract, update)
        if signer is not None:
            return RefVerdict(
                update,
                [],
                [f"the push is signed by {signer}, an owner: deletion allowed by deletable.owners"],
            )
    message = f"deleting protected {update.ref} is not allowed"
    if kept:
        message += ": it is the branch every push takes its rules from"
    elif why:
        message += f": only an owner may (deletable.owners), and {why}"
    return RefVerdict(update, [(None, Finding(HOOK, "ref-deleted", None, message))], [])


SIGNATURE_BEGIN = "-----BEGIN SSH SIGNATURE-----"


def push_certificate_signer(
    git: Git, env: Mapping[str, str], contract, update: RefUpdate
) -> Tuple[Optional[str], str]:
    """(the owner who signed this push's certificate for ``update``, "") or
    (None, why not). git hands the certificate to the hook (GIT_PUSH_CERT) and
    says whether its nonce is the one it gave out for this push
    (GIT_PUSH_CERT_NONCE_STATUS OK: receive.certNonceSeed is set); the signature
    is verified here against the signers file at the rules revision, and the
    certificate must name this very update."""
    from oracle_guard.authority import allowed_signers, sshsig
    from oracle_guard.authority.signatures import NAMESPACE, Authority

    blob = env.get("GIT_PUSH_CERT")
    if not blob:
        return None, "the push is not signed (git push --signed with an owner's ssh key)"
    if env.get("GIT_PUSH_CERT_NONCE_STATUS") != "OK":
        return None, (
            "its certificate's nonce is not the one this server gave out "
            f"({env.get('GIT_PUSH_CERT_NONCE_STATUS') or 'no status'}; the server sets "
            "receive.certNonceSeed)"
        )
    authority = Authority.of(contract, git)
    if authority is None:
        return None, "the contract has no authority section to verify a signed push by"
    text = git.run("cat-file", "blob", blob).decode("utf-8", "replace")
    start = text.find(SIGNATURE_BEGIN)
    if start < 0 or not text[:start].endswith("\n"):
        return None, "its certificate is not signed with an ssh key"
    payload, armored = text[:start].encode(), text[start:].encode()
    commands = payload.split(b"\n\n", 1)[1].decode().splitlines() if b"\n\n" in payload else []
    if f"{update.old} {update.new} {update.ref}" not in commands:
        return None, "its certificate does not name this deletion"
    try:
        verified = sshsig.verify(sshsig.parse(armored), payload, NAMESPACE)
    except sshsig.SignatureError as exc:
        return None, f"its certificate's signature does not verify ({exc})"
    signer = allowed_signers.find(authority.signers, verified.public_key, NAMESPACE)
    if signer is None:
        return None, f"its certificate is signed by a key that is not in {authority.path}"
    return signer.principals[0], ""


def _oracle_paths(git: Git, contract, default_tip: str, new_commit: str) -> List[str]:
    """The files that differ between the default branch's tip and the pushed tip
    and that the contract guards: what the write set protects, the scoring tree
    test-tamper reads (tamper.paths, conftest.py files and pytest's config)."""
    from oracle_guard.checks.write_set import WriteSet

    write_set = WriteSet.of(contract)
    scoring: Callable[[str], bool] = lambda path: False  # noqa: E731
    if contract.section("tamper") is not None:
        from oracle_guard.checks.test_tamper import Scope, options

        scope = Scope.of(contract)

        def scoring(path: str) -> bool:
            return scope.tree(path) or scope.is_python(path) or options.is_config(path)

    # diff_paths: a push to the default branch asked it already for its own change
    changed, _ = git.diff_paths(default_tip, new_commit)
    return [path for path in map(decode_path, changed) if write_set.protects(path) or scoring(path)]


def _inherited(
    git: Git, contract, new_commit: str, default_tip: Optional[str], new_ids, now
) -> List[Tuple[str, Finding]]:
    """A ref is judged by what it holds. Where its oracle files differ from the
    default branch's tip and no commit of this push changed them, it holds them
    as some older commit left them: an owner's push, or history from before the
    hook, can have left a state no push was judged by (a skip a later commit
    removed, a seed rewrite later undone), and a tag or branch made there (or a
    commit on top, or a fast-forward onto it) would bring it back. Each such
    file is judged as the change its last commit made: from that commit's first
    parent to the pushed tip, by every check but the write set (that commit was
    an owner's, or older than the rules). A branch cut before the default branch
    moved on holds the state main had then, made by honest changes (a seed list
    before later appends, a fixture before the owner's update), and passes."""
    if default_tip is None or new_commit == default_tip:
        return []
    from oracle_guard.checks.registry import CHECKS

    hooks = [check.id for check in CHECKS if check.id != "write-set"]
    by_change: dict = {}
    for path in _oracle_paths(git, contract, default_tip, new_commit):
        last = git.last_change(new_commit, path)
        if last is None or last[0] in new_ids:
            continue  # the push's own change, judged as such; or a file the tip never had
        by_change.setdefault(last, []).append(path)
    out: List[Tuple[str, Finding]] = []
    for (commit, parents), paths in by_change.items():
        before = (
            Snapshot.of_commit(git, parents[0], f"the parent of {commit[:12]}")
            if parents
            else Snapshot.empty("the empty tree")
        )
        held = Snapshot.of_commit(git, new_commit, "the pushed tip")
        for result in judge(contract, before, held, now, hooks):
            out.extend(
                (
                    commit[:12],
                    Finding(
                        HOOK,
                        "ref-holds-unjudged",
                        f.path,
                        f"the pushed tip holds {show_path(f.path or '')!r} as commit "
                        f"{commit[:12]} left it, unlike the default branch's tip, and that "
                        f"change is {f.code} ({f.message})",
                        f.line,
                    ),
                )
                for f in result.findings
                if f.severity == "error" and f.path in paths
            )
    return out


def _at_old_commit(
    git: Git,
    update: RefUpdate,
    new_commit: str,
    default_tip: Optional[str],
    rules_ref: Optional[str],
    contract,
) -> Optional[Finding]:
    """A new ref at an older commit of the default branch is compared with its
    merge-base, which is that commit: nothing is judged. Its tree was judged only
    as part of a range whose tip may have undone it (an oracle edit, then its
    revert), so only an owner (an owner-signed commit, or an owner by variable)
    points a new protected ref there."""
    if (
        default_tip is None
        or new_commit == default_tip
        or not git.is_ancestor(new_commit, default_tip)
    ):
        return None
    from oracle_guard.authority.signatures import Authority
    from oracle_guard.git.history import Commit

    authority = Authority.of(contract, git) if contract is not None else None
    if authority is not None:
        parents = tuple(
            git.run("rev-list", "--parents", "-n", "1", new_commit).decode().split()[1:]
        )
        if authority.why_not(Commit(new_commit, parents, [])) is None:
            return None
    branch = rules_ref or "the default branch"
    return Finding(
        HOOK,
        "ref-at-old-commit",
        None,
        f"{new_commit[:12]} is an older commit of {branch}; its tree was never judged on its own",
    )


def _base_of(
    git: Git,
    update: RefUpdate,
    new_commit: str,
    default_tip: Optional[str],
    contract: Optional[contract_mod.Contract],
) -> Snapshot:
    """What the pushed tip is compared with: the old tip (with what it took from
    the default branch); for a new ref, its merge-base with the default branch
    (the empty tree when there is none)."""
    if not update.created:
        return caught_up(git, _old_tip(git, update), default_tip, new_commit, contract)
    if default_tip is None:
        return Snapshot.empty("the empty tree")
    return new_ref_base(git, default_tip, new_commit)


def _replace_ref(
    update: RefUpdate,
    env: Mapping[str, str],
    contract: Optional[contract_mod.Contract],
    trusted: Optional[str],
) -> RefVerdict:
    """refs/replace/* swaps one object for another in every later read, so only
    an owner may push one, whatever protected_refs says."""
    who = pusher(env, contract, trusted)
    if contract is not None and who is not None and who in contract.owners:
        return RefVerdict(update, [], [f"{who} is an owner: replace refs may change"])
    return RefVerdict(
        update,
        [
            (
                None,
                Finding(
                    HOOK,
                    "replace-ref",
                    None,
                    f"{update.ref}: refs/replace/* changes what git shows for an object; only an owner "
                    "may push it",
                ),
            )
        ],
        [],
    )


def _protected_refs(contract) -> Tuple[str, ...]:
    return tuple((contract.section("protected_refs") if contract else None) or DEFAULT_PROTECTED)


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


def _timeout_for(git: Git, default_tip: Optional[str]) -> float:
    if default_tip is None:
        return DEFAULT_TIMEOUT
    data = contract_mod.read(Snapshot.of_commit(git, default_tip, "the default branch tip"))
    return float((data or {}).get("timeout_s", DEFAULT_TIMEOUT))


def _read_text(stdin) -> str:
    """stdin as git wrote it: bytes, with no newline translation."""
    raw = (
        stdin.buffer.read()
        if hasattr(stdin, "buffer")
        else stdin.read().encode("utf-8", "surrogateescape")
    )
    return raw.decode("utf-8", "surrogateescape")


def _on_alarm(signum, frame):
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
    import time

    prefix = "GL-HOOK-ERR: " if env.get("GL_ID") else ""
    git = Git(".")
    git.resolve_in_batch = True  # HEAD and every pushed id: no rev-parse each
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
        rules_ref, default_tip = rules_branch(git, default_tip)
        timeout = _timeout_for(git, default_tip)
        remaining = timeout - (time.monotonic() - started)
        if remaining <= 0:
            raise PushTimeout()
        signal.setitimer(signal.ITIMER_REAL, remaining)
        verdicts = []
        for update in updates:
            verdict = judge_update(git, update, env, now, default_tip, rules_ref, trusted)
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
        git.close()


def add_parser(sub) -> None:
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


def run(options) -> int:
    from oracle_guard.hosts import pusher_variable

    return receive(
        sys.stdin,
        sys.stderr,
        options.env,
        trusted=pusher_variable(options.host, options.identity_env),
        now_option=options.now,
        host=options.host,
    )
