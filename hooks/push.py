"""How a push is judged, one ref update at a time: which refs are protected, the
rules every ref of the push takes (the default branch's tip before the push),
what the pushed tip is compared with, and the refs judged by rules of their own
(a deletion, a replace ref, a new ref at an older commit, a tip that holds an
oracle file as an unjudged commit left it).

The pre-receive command reads git's lines, keeps the time budget and tells the
pusher; this module sees git objects and plain values.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
from typing import (
    AbstractSet,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Set,
    Tuple,
)

from oracle_guard.checks.registry import CHECKS
from oracle_guard.contract import CONTRACT_PATH, Contract
from oracle_guard.contract import choose as choose_contract
from oracle_guard.errors import GitError, ProtocolError
from oracle_guard.findings import HOOKS, Finding, unique_findings
from oracle_guard.git.history import Commit
from oracle_guard.git.plumbing import Git
from oracle_guard.git.process import decode_path
from oracle_guard.judge import judge, next_contract_findings
from oracle_guard.report.escaping import show_path
from oracle_guard.revisions import caught_up, new_ref_base
from oracle_guard.session import Session
from oracle_guard.snapshot import Snapshot

HOOK = "pre-receive"
DEFAULT_PROTECTED = ("refs/heads/*", "refs/tags/*")
REPLACE_REFS = "refs/replace/"


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


def matches_any(ref: str, patterns: Iterable[str]) -> bool:
    # refspec-style globs: '*' spans '/'
    return any(fnmatch.fnmatchcase(ref, p) for p in patterns)


def pusher(
    env: Mapping[str, str], contract: Optional[Contract], trusted: Optional[str] = None
) -> Optional[str]:
    """The account the hosting server says is pushing, in the one variable the
    contract names: a fallback over several hosts' variables let a client's own
    variable (sshd's AcceptEnv, a --receive-pack wrapper) win over the host's.
    ``trusted``: the variable the installed host sets; another one never counts."""
    named = contract.section("identity_env") if contract else None
    if not named or (trusted is not None and named != trusted):
        return None
    return env.get(named) or None


def untrusted_identity(contract: Optional[Contract], trusted: Optional[str]) -> Optional[str]:
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
    session: Session,
    update: RefUpdate,
    default: Optional[Snapshot],
    candidate: Optional[Snapshot],
) -> Optional[Contract]:
    """The default branch's contract; when it has none, the old tip's; only when
    neither has one (the first contract of a repository), the pushed tip's."""
    git = session.git
    if default is not None and CONTRACT_PATH in default:
        return choose_contract(default, default, session)
    old_commit = None if update.created else git.resolve_commit(update.old)
    if old_commit is not None:  # an unprotected ref may hold a blob or a tree
        old = Snapshot.of_commit(git, old_commit, f"the old tip of {update.ref}")
        if CONTRACT_PATH in old:
            return choose_contract(old, old, session)
    if candidate is None:
        return None
    return choose_contract(default or Snapshot.empty("no default branch"), candidate, session)


def judge_update(
    session: Session,
    update: RefUpdate,
    env: Mapping[str, str],
    now: dt.datetime,
    default_tip: Optional[str],
    rules_ref: Optional[str] = None,
    trusted: Optional[str] = None,
) -> Optional[RefVerdict]:
    """None when the ref is not protected; else the verdict for this ref.
    ``rules_ref``: the branch the rules come from, protected whatever
    protected_refs says (a push to it would choose the next push's rules).
    ``session``: the push's, whose repository holds the refs and commits."""
    git = session.git
    default = rules_for_push(git, default_tip)

    def guarded(contract: Optional[Contract]) -> bool:
        return update.ref == rules_ref or matches_any(update.ref, _protected_refs(contract))

    if update.ref.startswith(REPLACE_REFS):
        return _replace_ref(update, env, _contract_for(session, update, default, None), trusted)
    if update.deleted:
        contract = _contract_for(session, update, default, None)
        if not guarded(contract):
            return None
        return _deletion(session, update, env, contract, trusted, rules_ref)
    provisional = _contract_for(session, update, default, None)
    if provisional is not None and not guarded(provisional):
        return None  # not judged, whatever it points at
    new_commit = git.resolve_commit(update.new)
    if new_commit is None:
        if not guarded(provisional):
            return None
        raise GitError(f"{update.ref}: {update.new[:12]} does not point to a commit")
    candidate = Snapshot.of_commit(git, new_commit, f"the pushed tip of {update.ref}")
    contract = provisional or _contract_for(session, update, default, candidate)
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
    new_ids: Set[str] = set()
    old_commit: Optional[str] = None  # read only when pending is set, which sets it
    if contract is not None and contract.from_base:
        # git lists the new commits while the hooks judge the tip; commits the
        # default branch already has were judged when they landed there
        old_commit = None if update.created else git.resolve_commit(update.old)
        pending = git.history(new_commit, [c for c in (old_commit, default_tip) if c])
    if update.created and not owner:
        old_commit_finding = _at_old_commit(
            session, update, new_commit, default_tip, rules_ref, contract
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
    if pending is not None and contract is not None:
        # deferred: only a push under a contract of its own judges each new commit
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
            contract, session, commits, net, linear, undone=not owner
        )
        notes.extend([note] if note else [])
        if not owner:
            standing = [f for _, f in findings] + net + [f for _, f in per_commit]
            per_commit += history.undone_by_checks(
                contract,
                session,
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
        net += next_contract_findings(session, contract, candidate, now)
    findings.extend((new_commit[:12], f) for f in net)
    findings.extend((commit[:12] or None, f) for commit, f in per_commit)
    sections = None if contract is None else tuple(k for k in contract.data if k != "version")
    return RefVerdict(update, findings, notes, base.commit, sections)


def _deletion(
    session: Session,
    update: RefUpdate,
    env: Mapping[str, str],
    contract: Optional[Contract],
    trusted: Optional[str],
    rules_ref: Optional[str],
) -> RefVerdict:
    """A protected ref may go when the contract's deletable (or deletable_refs)
    lists it: for everyone, or for owners, an owner being one by identity_env or
    the signer of the push's certificate (git push --signed) with an owner's key.
    The default branch and the rules branch never go: every push is judged by
    them."""
    git = session.git
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
        # deferred: only an owner's deletion reads a push certificate (and ssh keys)
        from oracle_guard.authority import push_certificate

        command = f"{update.old} {update.new} {update.ref}"
        signer, why = push_certificate.signer(session, env, contract, command)
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


def _oracle_paths(git: Git, contract: Contract, default_tip: str, new_commit: str) -> List[str]:
    """The files that differ between the default branch's tip and the pushed tip
    and that the contract guards: what the write set protects, the scoring tree
    test-tamper reads (tamper.paths, conftest.py files and pytest's config)."""
    # deferred: judge imports each check as it runs it, and only a ref that differs
    # from the default branch's tip asks for these
    from oracle_guard.checks.write_set import WriteSet

    write_set = WriteSet.of(contract)
    scoring: Callable[[str], bool] = lambda path: False  # noqa: E731
    if contract.section("tamper") is not None:
        from oracle_guard.checks.test_tamper import Scope, options  # as WriteSet above

        scope = Scope.of(contract)

        def scoring(path: str) -> bool:
            return scope.tree(path) or scope.is_python(path) or options.is_config(path)

    # diff_paths: a push to the default branch asked it already for its own change
    changed, _ = git.diff_paths(default_tip, new_commit)
    return [path for path in map(decode_path, changed) if write_set.protects(path) or scoring(path)]


def _inherited(
    git: Git,
    contract: Contract,
    new_commit: str,
    default_tip: Optional[str],
    new_ids: AbstractSet[str],
    now: dt.datetime,
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
    hooks = [check.id for check in CHECKS if check.id != "write-set"]
    by_change: Dict[Tuple[str, Tuple[str, ...]], List[str]] = {}
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
    session: Session,
    update: RefUpdate,
    new_commit: str,
    default_tip: Optional[str],
    rules_ref: Optional[str],
    contract: Optional[Contract],
) -> Optional[Finding]:
    """A new ref at an older commit of the default branch is compared with its
    merge-base, which is that commit: nothing is judged. Its tree was judged only
    as part of a range whose tip may have undone it (an oracle edit, then its
    revert), so only an owner (an owner-signed commit, or an owner by variable)
    points a new protected ref there."""
    git = session.git
    if (
        default_tip is None
        or new_commit == default_tip
        or not git.is_ancestor(new_commit, default_tip)
    ):
        return None
    # deferred: only a new ref at an older commit of the default branch asks for a signature
    from oracle_guard.authority.signatures import Authority

    authority = Authority.of(contract, session) if contract is not None else None
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
    contract: Optional[Contract],
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
    contract: Optional[Contract],
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


def _protected_refs(contract: Optional[Contract]) -> Tuple[str, ...]:
    return tuple((contract.section("protected_refs") if contract else None) or DEFAULT_PROTECTED)
