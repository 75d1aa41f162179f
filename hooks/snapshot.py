"""Snapshots: a tree of files as git objects (a commit, the index, a merge
result, or nothing), and an overlay of files being edited on top of one."""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from oracle_guard.git.plumbing import BlobTooLarge, Entry, Git
from oracle_guard.parsing.patterns import PatternSet

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
    def of_tree(cls, git: Git, tree: str, label: str) -> "Snapshot":
        """A tree no commit records yet (a merge result)."""
        return cls(git, label, None, commit=git.known_tree(tree))

    @classmethod
    def of_index(cls, git: Git) -> "Snapshot":
        return cls(git, "the index", git.index_entries())


class Overlay(Snapshot):
    """A snapshot with some files replaced (bytes) or removed (None); it is
    never cached, since its files are no git objects."""

    def __init__(self, base: Snapshot, files: Mapping[str, Optional[bytes]], label: str) -> None:
        import hashlib  # here: cli imports this module for its parser on every run

        entries = dict(base.entries)
        self._files: Dict[str, bytes] = {}
        for path, data in files.items():
            if data is None:
                entries.pop(path, None)
                continue
            old = entries.get(path)
            mode = old.mode if old is not None and old.is_regular else "100644"
            entries[path] = Entry(mode, "overlay:" + hashlib.sha256(data).hexdigest())
            self._files[path] = data
        super().__init__(base._git, label, entries)
        self._base = base

    def read(self, path: str, limit: Optional[int] = None) -> bytes:
        if path in self._files:
            data = self._files[path]
            if limit is not None and len(data) > limit:
                raise BlobTooLarge(len(data), limit)
            return data
        return self._base.read(path, limit)

    def sha256_of(self, paths: Sequence[str]) -> Dict[str, str]:
        import hashlib

        out = {p: hashlib.sha256(self._files[p]).hexdigest() for p in paths if p in self._files}
        out.update(self._base.sha256_of([p for p in paths if p not in self._files]))
        return out

    @property
    def cache(self):
        from oracle_guard.cache import Cache

        return Cache(None)
