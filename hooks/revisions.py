"""Which revisions are judged: the candidate, the base, and their snapshots."""

from __future__ import annotations

from typing import Callable, List, Mapping, Optional, Sequence, Tuple, cast

from oracle_guard.contract import CONTRACT_PATH, Contract, choose, read
from oracle_guard.contract import read as read_contract
from oracle_guard.errors import ProtocolError, RevisionError
from oracle_guard.git.plumbing import Git
from oracle_guard.session import Session
from oracle_guard.snapshot import Snapshot


class Revisions:
    """The candidate, the base it is compared with, and ``rules``: the revision
    the contract is read from (the base itself, or the tip of the branch the
    change targets, which a change cannot pick). ``history`` is (tip, exclude):
    the commits that lead to the candidate, each judged on its own (None for
    a commit being made). ``conflicts``: the paths a merge candidate could not
    merge, which are never judged as one side."""

    def __init__(
        self,
        base: Snapshot,
        candidate: Snapshot,
        base_reason: str,
        rules: Optional[Snapshot] = None,
        history: Optional[Tuple[str, List[str]]] = None,
        head: Optional[str] = None,
        conflicts: Sequence[str] = (),
        linear: bool = True,
        notice: Optional[str] = None,
        pushed: bool = False,
    ) -> None:
        self.base = base
        self.candidate = candidate
        self.base_reason = base_reason
        self.rules = rules if rules is not None else base
        self.history = history
        self.head = head or candidate.commit
        self.conflicts = list(conflicts)
        self.linear = linear  # the base is an ancestor of the head: no history replaced
        self.notice = notice  # how this run was judged, when it is out of the ordinary
        self.pushed = pushed  # a pre-push run: judged as the server will judge the push


CONTRACT_BASE = "the contract's 'base'"
SHALLOW_HINT = (
    "fetch full history (actions/checkout with 'fetch-depth: 0', or "
    "'git fetch --unshallow origin' / 'git fetch origin main')"
)
TARGET_SOURCE = "--target/ORACLE_GUARD_TARGET"


def runner_name(env: Mapping[str, str]) -> str:
    """The hook runner that ran us, for messages: prek sets PREK_HOOK_STAGE for every
    hook it runs (and PRE_COMMIT=1, as pre-commit does), pre-commit nothing of its own."""
    return "prek" if env.get("PREK_HOOK_STAGE") else "pre-commit"


def _commit_or_fail(git: Git, rev: str, what: str) -> str:
    oid = git.resolve_commit(rev)
    if oid is None:
        hint = f"; {SHALLOW_HINT}" if git.is_shallow() else ""
        raise RevisionError(f"{what} {rev!r} does not name a commit in this repository{hint}")
    return oid


def _history(head: str, *exclude: Optional[str]) -> Tuple[str, List[str]]:
    return head, [oid for oid in exclude if oid]


def resolve(
    git: Git,
    base: Optional[str],
    head: Optional[str],
    env: Mapping[str, str],
    contract_base: Callable[[Snapshot], Optional[str]] = lambda s: None,
    target: Optional[str] = None,
    session: Optional[Session] = None,
) -> Revisions:
    """Apply the revision model (docs: explanation/revision-model.md); a contract
    it reads (the default branch's, for a pre-push) is read in ``session``."""
    from_ref = env.get("PRE_COMMIT_FROM_REF") or None
    to_ref = env.get("PRE_COMMIT_TO_REF") or None
    use_pre_commit = base is None and head is None and bool(from_ref and to_ref)
    head_oid: Optional[str]  # None: a commit being made (the index)
    rules: Optional[Snapshot]
    if base is not None and target is not None:
        raise RevisionError(
            "--base and --target both name what the change is compared with: --target "
            "judges the merge into the target's tip; drop --base"
        )
    if target is None and base is None and env.get("CI"):
        platform = _platform_target(git, env, contract_base, head, to_ref)
        if platform is not None:
            ref, oid, source = platform
            _agrees_with_platform(git, env, ref, oid, use_pre_commit, from_ref, to_ref)
            # use_pre_commit says to_ref is set
            head_rev = head or (cast(str, to_ref) if use_pre_commit else "HEAD")
            head_oid = _commit_or_fail(git, head_rev, "the commit to judge")
            return _merged(git, head_rev, head_oid, ref, oid, source)
    if target is None and base is None:
        target = env.get("ORACLE_GUARD_TARGET") or None

    if use_pre_commit:
        head = to_ref
    if head is not None:
        head_oid = _commit_or_fail(git, head, "PRE_COMMIT_TO_REF" if use_pre_commit else "--head")
        candidate = Snapshot.of_commit(git, head_oid, head)
    else:
        head_oid = None
        if git.is_bare():
            raise RevisionError(
                "a bare repository has no index to judge: name the commit with --head REV "
                "(and what it started from with --base REV)"
            )
        candidate = Snapshot.of_index(git)

    if env.get("PRE_COMMIT_REMOTE_BRANCH") and head_oid is None:
        # pre-push, but pre-commit passed no range: it does so for a history
        # that shares no commit with the remote, and the index says nothing of it
        return _unrelated_push(git, env)
    if target is not None:
        # the branch the change merges into: its tip's contract judges the change,
        # so a branch cut from before the contract is not judged by no rules at all
        target, target_oid = _target(git, target)
        if head_oid is not None:
            assert head is not None  # head_oid is head's commit
            return _merged(git, head, head_oid, target, target_oid, TARGET_SOURCE)
        # a commit being made (a local hook): its change is the index against HEAD,
        # judged by the target's rules; HEAD may well be in the target already
        rules = Snapshot.of_commit(git, target_oid, target)
        return Revisions(
            _head(git) or Snapshot.empty("no commits yet"),
            candidate,
            "HEAD, rules from --target",
            rules,
        )
    if base is not None or use_pre_commit:
        # use_pre_commit says from_ref is set
        rev, what = (
            (base, "--base") if base is not None else (cast(str, from_ref), "PRE_COMMIT_FROM_REF")
        )
        oid = _commit_or_fail(git, rev, what)
        if oid == head_oid:
            raise RevisionError(
                f"{what} {rev!r} is the candidate commit itself: nothing to compare; "
                "name the commit the change started from"
            )
        base_snapshot: Snapshot = Snapshot.of_commit(git, oid, rev)
        rules = _remote_default(git, env) if use_pre_commit else None
        if rules is not None and head_oid is not None:  # as the server will compare it
            base_snapshot = caught_up(
                git, base_snapshot, rules.commit, head_oid, choose(rules, rules, session)
            )
        history = _history(head_oid, oid, rules.commit if rules else None) if head_oid else None
        linear = head_oid is None or git.is_ancestor(oid, head_oid)
        return Revisions(
            base_snapshot,
            candidate,
            what,
            rules,
            history,
            linear=linear,
            pushed=use_pre_commit and bool(env.get("PRE_COMMIT_REMOTE_NAME")),
        )
    if env.get("CI") and head_oid is None:
        raise RevisionError(
            "CI is set but no base is named: set GITHUB_BASE_REF or "
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME, pass --target BRANCH or --base REV, or "
            "give the contract a 'base' branch such as origin/main"
        )
    if head_oid is not None:
        # a commit alone is judged as its own change: against its first parent,
        # with every commit it brings (a merge's other side included)
        parent = git.peeled_commit(f"{head_oid}^1")  # through the batch
        if parent is None and git.records_a_parent(head_oid):
            raise RevisionError(
                f"--head {head!r}: its parent is not in this clone (a shallow clone); "
                f"pass --base REV or {SHALLOW_HINT}"
            )
        if parent is None:
            return Revisions(
                Snapshot.empty("the empty tree (a root commit)"),
                candidate,
                "--head without a base",
                history=_history(head_oid),
            )
        return Revisions(
            Snapshot.of_commit(git, parent, f"{head}^1"),
            candidate,
            "--head without a base",
            history=_history(head_oid, parent),
        )
    head_snapshot = _head(git)
    if head_snapshot is None:
        return Revisions(Snapshot.empty("no commits yet"), candidate, "no commits yet")
    return Revisions(head_snapshot, candidate, "HEAD")


def _unrelated_push(git: Git, env: Mapping[str, str]) -> Revisions:
    """A push whose history shares no commit with what this clone knows of the
    remote (a first push into an empty repository, say), judged as the server
    judges a new ref with no merge-base: against the empty tree, by the remote's
    default branch when this clone knows it, else by the pushed tip's contract."""
    local = env.get("PRE_COMMIT_LOCAL_BRANCH") or None
    if local is None:
        runner = runner_name(env)
        raise RevisionError(
            f"{runner} gave this push no range and no local branch to judge (its history "
            f"shares no commit with the remote): upgrade {runner}"
            f"{' to 2.21 or later' if runner == 'pre-commit' else ''}, or "
            "judge it with 'oracle-guard check --head BRANCH'"
        )
    head_oid = _commit_or_fail(git, local, "PRE_COMMIT_LOCAL_BRANCH")
    candidate = Snapshot.of_commit(git, head_oid, local)
    rules = _remote_default(git, env)
    remote = env.get("PRE_COMMIT_REMOTE_NAME") or "the remote"
    empty = Snapshot.empty("the empty tree")
    if rules is None:
        notice = (
            f"{remote} has no branch this clone knows of: {local} is judged against the "
            "empty tree by its own contract, as the server judges a first push "
            f"(if {remote} is not empty, run git fetch {remote} and push again)"
        )
        return Revisions(
            empty,
            candidate,
            "the empty tree (a first push)",
            history=_history(head_oid),
            notice=notice,
            pushed=True,
        )
    notice = (
        f"{local} shares no commit with {remote}: judged against the empty tree by "
        f"{rules.label}, as the server judges it"
    )
    return Revisions(
        empty,
        candidate,
        "the empty tree (no common history)",
        rules,
        _history(head_oid, rules.commit),
        notice=notice,
        pushed=True,
    )


def _head(git: Git) -> Optional[Snapshot]:
    """What a commit being made is compared with: HEAD; while a merge is being
    concluded, git's own merge of HEAD and MERGE_HEAD, so what the merge brings
    is not the committer's change, and what the committer changes in it is."""
    head = git.peeled_commit("HEAD")  # through the batch: one git process fewer
    if head is None:
        return None
    merging = git.merge_heads()
    if len(merging) != 1:  # none, or an octopus: git merges two at a time
        return Snapshot.of_commit(git, head, "HEAD")
    tree, _ = git.merge_tree(head, merging[0])  # conflicted paths keep their markers
    return Snapshot.of_tree(git, tree, f"git's merge of HEAD and MERGE_HEAD ({merging[0][:12]})")


def caught_up(
    git: Git, old: Snapshot, default_oid: Optional[str], new_oid: str, contract: Optional[Contract]
) -> Snapshot:
    """What a branch's update is compared with: its old tip, plus what it took
    from the default branch since (a merge of main into the branch), so changes
    that landed on main and were judged there are not the push's own. That is
    git's merge of the old tip with the default-branch commit the new tip
    holds; the old tip alone when there is nothing to add, it conflicts, more
    than one such commit is new to the branch, or the merge itself made a
    file ``contract`` protects that neither side had (a rename that carries the branch's
    edit into the oracle): then more is judged, never less."""
    if default_oid is None or old.commit is None or default_oid == old.commit:
        # the default branch's own update: every merge-base is the old tip or
        # its ancestor, so none is new to the branch (no merge-base to ask)
        return old
    new_to_branch = [
        oid
        for oid in git.merge_bases(default_oid, new_oid)
        if oid != old.commit and not git.is_ancestor(oid, old.commit)  # a commit is its own
    ]
    if len(new_to_branch) != 1:
        return old
    taken = new_to_branch[0]
    tree, conflicts = git.merge_tree(old.commit, taken)
    if conflicts:
        return old
    made = set(git.differing_paths(old.commit, tree)) & set(git.differing_paths(taken, tree))
    if contract is not None and made:
        # deferred: 2 ms to import, only for caught_up()
        from oracle_guard.checks.write_set import WriteSet

        if any(map(WriteSet.of(contract).protects, made)):
            return old
    return Snapshot.of_tree(
        git, tree, f"{old.commit[:12]} merged with {taken[:12]} of the default branch"
    )


def new_ref_base(git: Git, default_oid: str, new_oid: str) -> Snapshot:
    """What a new ref is compared with: its merge-base with the default branch;
    where the histories cross (two merge-bases), git's virtual merge-base, as
    ``git merge`` would build it; the default branch's tip when even that
    cannot be had (more is judged, never less)."""
    bases = git.merge_bases(default_oid, new_oid)
    if not bases:
        return Snapshot.empty("the empty tree")
    if len(bases) == 1:
        return Snapshot.of_commit(git, bases[0], "its merge-base with the default branch")
    if len(bases) == 2:
        tree, conflicts = git.merge_tree(bases[0], bases[1])
        if not conflicts:
            return Snapshot.of_tree(
                git, tree, "its virtual merge-base with the default branch (the histories cross)"
            )
    return Snapshot.of_commit(git, default_oid, "the default branch tip (the histories cross)")


def _remote_default(git: Git, env: Mapping[str, str]) -> Optional[Snapshot]:
    """In a pre-push run, the remote's default branch as this clone last saw it
    (refs/remotes/REMOTE/HEAD), when it has a contract: the server takes its
    rules from there, whatever branch is pushed."""

    remote = env.get("PRE_COMMIT_REMOTE_NAME")
    if not remote or remote.startswith("-"):
        return None
    oid = git.resolve_commit(f"refs/remotes/{remote}/HEAD")
    if oid is None:
        return None
    rules = Snapshot.of_commit(git, oid, f"refs/remotes/{remote}/HEAD")
    if CONTRACT_PATH not in rules:
        return None

    named = (read(rules) or {}).get("rules_ref")  # as the server reads it: refs/heads/X
    if named:
        ref = f"refs/remotes/{remote}/{named[len('refs/heads/') :]}"
        oid = git.resolve_commit(ref)
        if oid is None:
            raise RevisionError(
                f"the remote's contract takes its rules from {named}, which "
                f"this clone does not have as {ref}: fetch it first"
            )
        rules = Snapshot.of_commit(git, oid, ref)
    return rules


def _merged(
    git: Git, head: str, head_oid: str, target: str, target_oid: str, source: str
) -> Revisions:
    """The merge the platform will record: ``head`` merged into ``target``'s tip,
    by git's own 3-way merge. The target's tip is the base and the rules; every
    commit the merge brings is judged too."""
    merge_base = git.merge_base(target_oid, head_oid)
    if merge_base is None:
        raise RevisionError(f"no merge-base between {target} ({source}) and {head}; {SHALLOW_HINT}")
    if merge_base == head_oid:
        raise RevisionError(
            f"the target {target} ({source}) already contains {head} "
            f"({head_oid[:12]}): merging it changes nothing, so there is nothing to judge"
        )
    tree, conflicts = git.merge_tree(target_oid, head_oid)
    rules = Snapshot.of_commit(git, target_oid, target)
    candidate = Snapshot.of_tree(git, tree, f"the merge of {head} into {target}")
    return Revisions(
        rules,
        candidate,
        source,
        rules,
        _history(head_oid, target_oid),
        head=head_oid,
        conflicts=conflicts,
    )


def _target(git: Git, name: str) -> Tuple[str, str]:
    """(what it resolved as, commit) for --target: a branch by that name first
    (refs/heads/NAME, then refs/remotes/NAME), so a tag called 'origin/main' cannot
    stand in for the branch; otherwise whatever the name means to git (a full ref,
    a tag or commit the job names on purpose)."""
    candidates = [] if name.startswith("refs/") else [f"refs/heads/{name}", f"refs/remotes/{name}"]
    for ref in candidates:
        oid = git.resolve_commit(ref)
        if oid is not None:
            return ref, oid
    oid = git.resolve_commit(name)
    if oid is None:
        remote, _, branch = name.partition("/")
        hint = (
            f"; fetch it (git fetch {remote} '+refs/heads/{branch}:refs/remotes/{name}')"
            if branch and not name.startswith("refs/")
            else ""
        )
        raise RevisionError(
            f"{TARGET_SOURCE} {name!r} does not name a commit in this repository{hint}"
        )
    return name, oid


def _platform_target(
    git: Git,
    env: Mapping[str, str],
    contract_base_of: Callable[[Snapshot], Optional[str]],
    head: Optional[str],
    to_ref: Optional[str],
) -> Optional[Tuple[str, str, str]]:
    """(ref, commit, what named it) of the branch a CI run's change targets, or
    None when the CI system names none and the contract has no 'base'.

    Names are resolved as full ref names (refs/remotes/origin/X), so a tag
    cannot stand in for a branch. A target the CI system names must resolve:
    no falling through to one the change itself could name. The contract's own
    'base' is read from the candidate, so it is used only when CI names
    nothing, must name a branch, and the contract at that branch's tip must
    name it too."""
    wanted: Optional[str] = None  # the contract's 'base': read only when it is the source
    if env.get("GITHUB_BASE_REF"):
        named = f"GITHUB_BASE_REF={env['GITHUB_BASE_REF']}"
        source = "GITHUB_BASE_REF"
        target_ref = f"refs/remotes/origin/{env['GITHUB_BASE_REF']}"
    elif env.get("CI_MERGE_REQUEST_DIFF_BASE_SHA") or env.get(
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"
    ):
        branch = env.get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME")
        if not branch:
            raise RevisionError(
                "CI_MERGE_REQUEST_DIFF_BASE_SHA is set but CI_MERGE_REQUEST_TARGET_BRANCH_NAME "
                "is not: the change is judged as its merge into the target branch's tip, so "
                "the target branch is needed"
            )
        named = source = "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"
        target_ref = f"refs/remotes/origin/{branch}"
    else:
        rev = head or to_ref or "HEAD"
        oid = git.resolve_commit(rev)
        if oid is None:
            raise RevisionError(
                f"CI is set, but {rev!r} names no commit: CI judges a commit, "
                "and this repository has none"
                if rev == "HEAD"
                else f"CI is set, but {rev!r} does not name a commit here"
            )
        wanted = contract_base_of(Snapshot.of_commit(git, oid, rev))
        if not wanted:
            return None
        named = source = CONTRACT_BASE
        target_ref = git.full_ref_name(wanted) or ""
        if not target_ref.startswith(("refs/heads/", "refs/remotes/")):
            raise RevisionError(
                f"the contract's 'base' {wanted!r} is not a branch in this clone: it must name "
                f"a branch, not a tag, a commit or a relative revision, and the clone must "
                f"have it ({SHALLOW_HINT})"
            )
    target_oid = git.resolve_commit(target_ref)
    if target_oid is None:
        branch = (
            target_ref[len("refs/remotes/origin/") :]
            if target_ref.startswith("refs/remotes/origin/")
            else None
        )
        hint = (
            (
                f"fetch it (git fetch origin '+refs/heads/{branch}:{target_ref}') with full "
                "history (actions/checkout with 'fetch-depth: 0', GitLab's GIT_DEPTH: 0, or "
                "'git fetch --unshallow')"
            )
            if branch
            else SHALLOW_HINT
        )
        raise RevisionError(f"{named}: {target_ref} is not in this clone; {hint}")
    if source == CONTRACT_BASE:
        at_target = contract_base_of(Snapshot.of_commit(git, target_oid, target_ref))
        if at_target != wanted:
            raise RevisionError(
                f"the candidate's contract names base {wanted!r}, but the contract at "
                f"{target_ref} names {at_target!r}: a change cannot choose its own base; "
                "pass --target BRANCH"
            )
    return target_ref, target_oid, source


def _agrees_with_platform(
    git: Git,
    env: Mapping[str, str],
    ref: str,
    oid: str,
    use_pre_commit: bool,
    from_ref: Optional[str],
    to_ref: Optional[str],
) -> None:
    """In CI, what the job's environment says must agree with the target the CI
    system names: a variable is not a way to choose another base or range."""
    named = env.get("ORACLE_GUARD_TARGET")
    if named:
        named_ref, named_oid = _target(git, named)
        if named_oid != oid:
            raise RevisionError(
                f"ORACLE_GUARD_TARGET={named} ({named_ref} at {named_oid[:12]}) disagrees "
                f"with the target the CI system names ({ref} at {oid[:12]}): in CI the "
                "platform's target decides; pass --target on the command line to judge "
                "against another branch"
            )
    if not use_pre_commit:
        return
    assert from_ref is not None and to_ref is not None  # use_pre_commit says both are set
    head = git.resolve_commit("HEAD")
    to_oid = _commit_or_fail(git, to_ref, "PRE_COMMIT_TO_REF")
    from_oid = _commit_or_fail(git, from_ref, "PRE_COMMIT_FROM_REF")
    if to_oid != head or from_oid not in (oid, git.merge_base(oid, to_oid)):
        runner = runner_name(env)
        raise RevisionError(
            f"the {runner} range {from_ref}..{to_ref} disagrees with what the CI system "
            f"names (the merge of HEAD into {ref}): in CI the platform's target decides; "
            f"run {runner} on HEAD with --from-ref at the target or its merge-base"
        )


def rules_branch(
    git: Git, default_tip: Optional[str], session: Optional[Session] = None
) -> Tuple[Optional[str], Optional[str]]:
    """(branch, tip) every push is judged from: the default branch, or the
    branch its contract names as 'rules_ref' (one step, no chain); that
    contract is read in ``session``."""
    if default_tip is None:
        return None, None
    tip_snapshot = Snapshot.of_commit(git, default_tip, "the default branch tip")
    data = read_contract(tip_snapshot, session)
    named = (data or {}).get("rules_ref")
    if not named:
        return git.head_target(), default_tip
    tip = git.resolve_commit(named)
    if tip is None:
        raise ProtocolError(
            f"the default branch's contract names rules_ref {named}, which "
            "does not exist: no push can be judged until an admin creates it "
            "or an owner changes rules_ref"
        )
    return named, tip


def unresolved_head(git: Git) -> str:
    target = git.head_target() or "a detached commit"
    return (
        f"the repository's HEAD names {target}, which does not exist, so there is no "
        "default branch to take rules from; an admin sets it: "
        "git symbolic-ref HEAD refs/heads/main"
    )
