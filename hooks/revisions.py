"""Which revisions are judged: the candidate, the base, and their snapshots."""
from __future__ import annotations

from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from oracle_guard.gitio import Entry, Git
from oracle_guard.patterns import PatternSet


Change = Tuple[str, Optional[Entry], Optional[Entry]]  # path, before, after


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + "/")


def changes(base: Snapshot, candidate: Snapshot) -> List[Change]:
    """Each file added, deleted, modified or changed in type or mode, by path
    (a rename is both sides); between two commits from one diff-tree."""
    git = base._git
    if base.commit and candidate.commit and git is not None and git is candidate._git \
            and (base._entries is None or candidate._entries is None):
        return sorted(git.diff_trees(base.commit, candidate.commit))
    old, new = base.entries, candidate.entries
    found = [(p, old.get(p), e) for p, e in new.items() if old.get(p) != e]
    found.extend((p, e, None) for p, e in old.items() if p not in new)
    return sorted(found)


class RevisionError(Exception):
    """The base or candidate cannot be determined (exit 2)."""


class Snapshot:
    """A tree of files as git objects: a commit, the index, or nothing.

    A commit's tree is listed in full only when something needs all of it: one
    file is found by walking trees, the files matching anchored patterns by
    listing just their folders, and a change between two commits by diff-tree,
    so the cost follows the oracle and the change, not the repository."""

    def __init__(self, git: Optional[Git], label: str, entries: Optional[Dict[str, Entry]],
                 commit: Optional[str] = None) -> None:
        self._git = git
        self.label = label
        self._entries = entries  # None: a commit not listed yet
        self.commit = commit
        self._known: Dict[str, Entry] = {}  # files found without listing everything
        self._listed: List[str] = []  # folders listed in full into _known
        self._digests: Dict[str, str] = {}  # by blob id, for when the cache is off

    @property
    def entries(self) -> Dict[str, Entry]:
        """Every file, by path."""
        if self._entries is None:
            assert self._git is not None and self.commit is not None
            self._entries = self._git.tree_entries(self.commit)
        return self._entries

    def entry(self, path: str) -> Optional[Entry]:
        if self._entries is not None:
            return self._entries.get(path)
        if path in self._known:
            return self._known[path]
        if any(_inside(path, folder) for folder in self._listed):
            return None
        assert self._git is not None and self.commit is not None
        found = self._git.tree_entry(self.commit, path)
        if found is not None:
            self._known[path] = found
        return found

    def __contains__(self, path: str) -> bool:
        return self.entry(path) is not None

    def select(self, patterns: PatternSet) -> List[str]:
        """The files any of ``patterns`` matches, sorted."""
        folders = patterns.folders() if self._entries is None else None
        if folders is None:
            return patterns.select(self.entries)
        unlisted = [f for f in folders if not any(_inside(f, done) for done in self._listed)]
        if unlisted:
            assert self._git is not None and self.commit is not None
            self._known.update(self._git.tree_entries_under(self.commit, unlisted))
            self._listed.extend(unlisted)
        # every match lies in a listed folder, so what is known holds them all
        return patterns.select(self._known)

    def same_files(self, other: "Snapshot") -> bool:
        if self.commit and other.commit and self._git is other._git and self._git is not None:
            return self._git.root_tree(self.commit) == self._git.root_tree(other.commit)
        return self.entries == other.entries

    def read(self, path: str, limit: Optional[int] = None) -> bytes:
        assert self._git is not None
        return self._git.read_blob(self._entry_of(path).oid, limit)

    def sha256_of(self, paths: Sequence[str]) -> Dict[str, str]:
        """The SHA-256 of each file; the ones the cache lacks are hashed in one
        streamed batch."""
        oids = {path: self._entry_of(path).oid for path in paths}
        known = {oid: self._digests.get(oid) or self.cache.get("sha256", oid)
                 for oid in oids.values()}
        missing = [oid for oid, digest in known.items() if digest is None]
        if missing:
            for oid, digest in self._hash_blobs(missing, oids).items():
                known[oid] = self._digests[oid] = digest
                self.cache.put("sha256", oid, digest)
        return {path: known[oid] for path, oid in oids.items()}

    def _entry_of(self, path: str) -> Entry:
        entry = self.entry(path)
        if entry is None:
            raise KeyError(path)
        return entry

    def _hash_blobs(self, missing: Sequence[str], oids: Dict[str, str]) -> Dict[str, str]:
        if self._git is not None:
            return self._git.sha256_blobs(missing)
        import hashlib  # a snapshot not backed by git (built in memory) reads its own

        wanted = set(missing)
        return {oid: hashlib.sha256(self.read(path)).hexdigest()
                for path, oid in oids.items() if oid in wanted}

    @property
    def cache(self):
        """The repository's cache; one that holds nothing for a snapshot of no repository."""
        if self._git is not None:
            return self._git.cache
        from oracle_guard.cache import Cache

        return Cache(None)

    @classmethod
    def empty(cls, label: str = "the empty tree") -> "Snapshot":
        return cls(None, label, {})

    @classmethod
    def of_commit(cls, git: Git, commit: str, label: str) -> "Snapshot":
        return cls(git, label, None, commit=commit)

    @classmethod
    def of_index(cls, git: Git) -> "Snapshot":
        return cls(git, "the index", git.index_entries())


class Revisions:
    """The candidate, the base it is compared with, and ``rules``: the revision
    the contract is read from (the base itself, or in CI the tip of the branch
    the change targets, which a change cannot pick)."""

    def __init__(self, base: Snapshot, candidate: Snapshot, base_reason: str,
                 rules: Optional[Snapshot] = None) -> None:
        self.base = base
        self.candidate = candidate
        self.base_reason = base_reason
        self.rules = rules if rules is not None else base


CONTRACT_BASE = "the contract's 'base'"
SHALLOW_HINT = (
    "fetch full history (actions/checkout with 'fetch-depth: 0', or "
    "'git fetch --unshallow origin' / 'git fetch origin main')"
)


def _commit_or_fail(git: Git, rev: str, what: str) -> str:
    oid = git.resolve_commit(rev)
    if oid is None:
        hint = f"; {SHALLOW_HINT}" if git.is_shallow() else ""
        raise RevisionError(f"{what} {rev!r} does not name a commit in this repository{hint}")
    return oid


def resolve(git: Git, base: Optional[str], head: Optional[str],
            env: Mapping[str, str],
            contract_base: Callable[[Snapshot], Optional[str]] = lambda s: None,
            target: Optional[str] = None) -> Revisions:
    """Apply the revision model (README: "The revision model")."""
    target = target or env.get("ORACLE_GUARD_TARGET") or None
    from_ref = env.get("PRE_COMMIT_FROM_REF") or None
    to_ref = env.get("PRE_COMMIT_TO_REF") or None
    use_pre_commit = base is None and head is None and bool(from_ref and to_ref)

    if use_pre_commit:
        head = to_ref
    if head is not None:
        head_oid = _commit_or_fail(git, head, "PRE_COMMIT_TO_REF" if use_pre_commit
                                   else "--head")
        candidate = Snapshot.of_commit(git, head_oid, head)
    else:
        head_oid = None
        if git.is_bare():
            raise RevisionError(
                "a bare repository has no index to judge: name the commit with --head REV "
                "(and what it started from with --base REV)")
        candidate = Snapshot.of_index(git)

    rules = None
    if target is not None:
        # the branch the change merges into: its tip's contract judges the change,
        # so a branch cut from before the contract is not judged by no rules at all
        target, target_oid = _target(git, target)
        rules = Snapshot.of_commit(git, target_oid, target)
    if base is not None or use_pre_commit:
        rev, what = (base, "--base") if base is not None else (from_ref, "PRE_COMMIT_FROM_REF")
        oid = _commit_or_fail(git, rev, what)
        if oid == head_oid:
            raise RevisionError(
                f"{what} {rev!r} is the candidate commit itself: nothing to compare; "
                "name the commit the change started from")
        return Revisions(Snapshot.of_commit(git, oid, rev), candidate, what, rules)
    if env.get("PRE_COMMIT_REMOTE_BRANCH") and head_oid is None:
        # pre-push, but pre-commit passed no range: it does so for a history
        # that shares no commit with the remote, and the index says nothing of it
        raise RevisionError(
            "pre-commit gave this push no range to judge (its history shares no commit "
            "with the remote); judge it with 'oracle-guard check --base REMOTE/BRANCH "
            "--head HEAD'")
    if rules is not None and head_oid is None:
        # a commit being made (a local hook): its change is the index against HEAD,
        # judged by the target's rules; HEAD may well be in the target already
        head_commit = git.resolve_commit("HEAD")
        base_snapshot = (Snapshot.of_commit(git, head_commit, "HEAD") if head_commit
                         else Snapshot.empty("no commits yet"))
        return Revisions(base_snapshot, candidate, "HEAD, rules from --target", rules)
    if rules is not None:
        return _from_merge_base(git, candidate, head_oid, target, target_oid,
                                "--target/ORACLE_GUARD_TARGET", rules)
    if env.get("CI"):
        return _ci_base(git, candidate, head_oid, env, contract_base)
    if head_oid is not None:
        # a commit alone is judged as its own change: against its first parent
        parent = git.resolve_commit(f"{head_oid}^1")
        if parent is None and git.records_a_parent(head_oid):
            raise RevisionError(
                f"--head {head!r}: its parent is not in this clone (a shallow clone); "
                f"pass --base REV or {SHALLOW_HINT}")
        if parent is None:
            return Revisions(Snapshot.empty("the empty tree (a root commit)"), candidate,
                             "--head without a base")
        return Revisions(Snapshot.of_commit(git, parent, f"{head}^1"), candidate,
                         "--head without a base")
    head_commit = git.resolve_commit("HEAD")
    if head_commit is None:
        return Revisions(Snapshot.empty("no commits yet"), candidate, "no commits yet")
    return Revisions(Snapshot.of_commit(git, head_commit, "HEAD"), candidate, "HEAD")


def _target(git: Git, name: str) -> Tuple[str, str]:
    """(what it resolved as, commit) for --target: a branch by that name first
    (refs/heads/NAME, then refs/remotes/NAME), so a tag called 'origin/main' cannot
    stand in for the branch; otherwise whatever the name means to git (a full ref,
    a tag or commit the job names on purpose)."""
    candidates = [] if name.startswith("refs/") else [f"refs/heads/{name}",
                                                      f"refs/remotes/{name}"]
    for ref in candidates:
        oid = git.resolve_commit(ref)
        if oid is not None:
            return ref, oid
    return name, _commit_or_fail(git, name, "--target/ORACLE_GUARD_TARGET")


def _ci_base(git: Git, candidate: Snapshot, head_oid: Optional[str],
             env: Mapping[str, str],
             contract_base_of: Callable[[Snapshot], Optional[str]]) -> Revisions:
    """In CI the base is the merge-base with the branch the change targets, and
    the rules come from that branch's tip.

    Names are resolved as full ref names (refs/remotes/origin/X), so a tag
    cannot stand in for a branch. A base the CI system names must resolve: no
    falling through to a base the change itself could name. The contract's own
    'base' is read from the candidate, so it is used only when CI names
    nothing, must name a branch, and the contract at that branch's tip must
    name it too."""
    if env.get("GITHUB_BASE_REF"):
        source = "GITHUB_BASE_REF"
        named = f"GITHUB_BASE_REF={env['GITHUB_BASE_REF']}"
        target_ref = f"refs/remotes/origin/{env['GITHUB_BASE_REF']}"
        base_rev = target_ref
    elif env.get("CI_MERGE_REQUEST_DIFF_BASE_SHA"):
        source = named = "CI_MERGE_REQUEST_DIFF_BASE_SHA"
        base_rev = env["CI_MERGE_REQUEST_DIFF_BASE_SHA"]
        branch = env.get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME")
        if not branch:
            raise RevisionError(
                "CI_MERGE_REQUEST_DIFF_BASE_SHA is set but CI_MERGE_REQUEST_TARGET_BRANCH_NAME "
                "is not: the rules come from the target branch's tip, so both are needed")
        target_ref = f"refs/remotes/origin/{branch}"
    else:
        source = named = CONTRACT_BASE
        wanted = contract_base_of(candidate)
        if not wanted:
            raise RevisionError(
                "CI is set but no base is named: set GITHUB_BASE_REF or "
                "CI_MERGE_REQUEST_DIFF_BASE_SHA, pass --base REV, or give the contract a "
                "'base' branch such as origin/main")
        target_ref = git.full_ref_name(wanted) or ""
        if not target_ref.startswith(("refs/heads/", "refs/remotes/")):
            raise RevisionError(
                f"the contract's 'base' {wanted!r} is not a branch in this clone: it must name "
                f"a branch, not a tag, a commit or a relative revision, and the clone must "
                f"have it ({SHALLOW_HINT})")
        base_rev = target_ref
    target_oid = git.resolve_commit(target_ref)
    if target_oid is None:
        branch = target_ref[len("refs/remotes/origin/"):] \
            if target_ref.startswith("refs/remotes/origin/") else None
        hint = (f"fetch it (git fetch origin '+refs/heads/{branch}:{target_ref}') with full "
                "history (actions/checkout with 'fetch-depth: 0', GitLab's GIT_DEPTH: 0, or "
                "'git fetch --unshallow')") if branch else SHALLOW_HINT
        raise RevisionError(f"{named}: {target_ref} is not in this clone; {hint}")
    base_oid = git.resolve_commit(base_rev)
    if base_oid is None:
        raise RevisionError(f"{named}: {base_rev} is not in this clone; {SHALLOW_HINT}")
    rules = Snapshot.of_commit(git, target_oid, target_ref)
    if source == CONTRACT_BASE and contract_base_of(rules) != wanted:
        raise RevisionError(
            f"the candidate's contract names base {wanted!r}, but the contract at {target_ref} "
            f"names {contract_base_of(rules)!r}: a change cannot choose its own base; "
            "pass --base REV")
    return _from_merge_base(git, candidate, head_oid, base_rev, base_oid, source, rules)


def _from_merge_base(git: Git, candidate: Snapshot, head_oid: Optional[str], base_rev: str,
                     base_oid: str, source: str, rules: Snapshot) -> Revisions:
    """The candidate compared with its merge-base with ``base_rev``, under ``rules``."""
    candidate_oid = head_oid or git.resolve_commit("HEAD")
    if candidate_oid is None:
        raise RevisionError(f"{source} names a base, but the repository has no commits "
                            "to judge")
    merge_base = git.merge_base(base_oid, candidate_oid)
    if merge_base is None:
        raise RevisionError(
            f"no merge-base between {base_rev} ({source}) and the candidate; {SHALLOW_HINT}")
    if merge_base == candidate_oid:
        raise RevisionError(
            f"the base {base_rev} ({source}) already contains the candidate "
            f"{candidate_oid[:12]}: nothing to compare; pass --base with the previous tip "
            "(for a push build, the 'before' commit of the push)")
    label = f"merge-base of {base_rev} and the candidate"
    return Revisions(Snapshot.of_commit(git, merge_base, label), candidate, source, rules)
