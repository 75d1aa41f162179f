"""Snapshots: a tree of files as the checks and the revision model read it.

``Snapshot`` is what they may ask of one; three kinds answer: ``GitSnapshot``
(a commit, the index, a merge result, or nothing), ``Overlay`` (files being
edited on top of another snapshot) and ``MemorySnapshot`` (files held as bytes,
for tests and for trees no repository holds)."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from oracle_guard.errors import GitError
from oracle_guard.git.objects import MODE_GITLINK, MODE_SYMLINK, BlobTooLarge, Entry
from oracle_guard.git.plumbing import Git
from oracle_guard.git.process import encode_path
from oracle_guard.git.trees import parse_index
from oracle_guard.parsing.patterns import PatternSet

if TYPE_CHECKING:
    from oracle_guard.cache import Cache

Change = Tuple[str, Optional[Entry], Optional[Entry]]  # path, before, after


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + "/")


def _diffable(base: Snapshot, candidate: Snapshot) -> Optional[Git]:
    """The repository, when git can diff the two as commits (and they were not
    both listed whole already, when comparing the listings costs less)."""
    git = base.repository
    if (
        base.commit
        and candidate.commit
        and git is not None
        and git is candidate.repository
        and not (base.listed and candidate.listed)
    ):
        return git
    return None


def changes(base: Snapshot, candidate: Snapshot) -> List[Change]:
    """Each file added, deleted, modified or changed in type or mode, by path
    (a rename is both sides); between two commits from one diff-tree."""
    git = _diffable(base, candidate)
    if git is not None:
        assert base.commit and candidate.commit  # _diffable says so
        return sorted(git.diff_trees(base.commit, candidate.commit))
    old, new = base.entries, candidate.entries
    found: List[Change] = [(p, old.get(p), e) for p, e in new.items() if old.get(p) != e]
    found.extend((p, e, None) for p, e in old.items() if p not in new)
    return sorted(found)


def changed_paths(base: Snapshot, candidate: Snapshot) -> Tuple[List[bytes], List[bytes]]:
    """(the paths ``changes`` lists, the ones among them that are or were not a
    regular file), as git's bytes: between two commits straight from git, with
    no object per path but its name."""
    git = _diffable(base, candidate)
    if git is not None:
        assert base.commit and candidate.commit  # _diffable says so
        return git.diff_paths(base.commit, candidate.commit)
    paths: List[bytes] = []
    opaque: List[bytes] = []
    for path, before, after in changes(base, candidate):
        paths.append(encode_path(path))
        if (before is not None and not before.is_regular) or (
            after is not None and not after.is_regular
        ):
            opaque.append(paths[-1])
    return paths, opaque


class Snapshot(ABC):
    """A tree of files: what a check may ask of the revision it judges.

    ``label`` names it in messages; ``commit`` is the commit (or tree) id git
    knows it by, None for the index, an overlay or a tree held in memory.
    ``repository`` is the git repository ``commit`` is in (None when it is in
    none), and ``listed`` says whether every entry is already at hand, so
    ``changes`` knows when one git diff-tree is the cheaper way.

    The constructors of git snapshots (``of_commit``, ``of_index``, ``of_tree``,
    ``empty``) are here, so callers need not know the classes."""

    label: str
    commit: Optional[str]

    @property
    @abstractmethod
    def entries(self) -> Dict[str, Entry]:
        """Every file, by path."""

    @abstractmethod
    def read(self, path: str, limit: Optional[int] = None) -> bytes:
        """The file's bytes (a symlink's target); BlobTooLarge above ``limit``."""

    @abstractmethod
    def sha256_of(
        self, paths: Sequence[str], expected: Optional[Mapping[str, str]] = None
    ) -> Dict[str, str]:
        """The SHA-256 of each file's bytes, by path. ``expected``: the digest the
        caller expects of a path (a lock's), which spares a matching blob read
        from a pack its CRC32 pass."""

    def entry(self, path: str) -> Optional[Entry]:
        return self.entries.get(path)

    def read_ahead(self, paths: Sequence[str], limit: Optional[int] = None) -> None:
        """A hint: these files will be read (at most ``limit`` bytes each). A git
        snapshot reads the small ones at once; the others need not."""
        return None

    def __contains__(self, path: str) -> bool:
        return self.entry(path) is not None

    def select(self, patterns: PatternSet) -> List[str]:
        """The files any of ``patterns`` matches, sorted."""
        return patterns.select(self.entries)

    def same_files(self, other: Snapshot) -> bool:
        return self.entries == other.entries

    def files_key(self, patterns: PatternSet) -> Optional[str]:
        """What names every file ``patterns`` can match here, for keying a cached
        verdict on them; None when no verdict on this snapshot is cached."""
        return None

    @property
    def cache(self) -> Cache:
        """Where verdicts on blobs are kept: here, a cache that holds nothing."""
        # deferred: 5 ms to import, only for cache()
        from oracle_guard.cache import Cache

        return Cache(None)

    @property
    def repository(self) -> Optional[Git]:
        return None

    @property
    def listed(self) -> bool:
        return True

    @staticmethod
    def empty(label: str = "the empty tree") -> GitSnapshot:
        return GitSnapshot(None, label, {})

    @staticmethod
    def of_commit(git: Git, commit: str, label: str) -> GitSnapshot:
        return GitSnapshot(git, label, None, commit=commit)

    @staticmethod
    def of_tree(git: Git, tree: str, label: str) -> GitSnapshot:
        """A tree no commit records yet (a merge result)."""
        return GitSnapshot(git, label, None, commit=git.known_tree(tree))

    @staticmethod
    def of_index(git: Git) -> GitSnapshot:
        """The index, its listing parsed only when every entry is asked for."""
        return GitSnapshot(git, "the index", None, listing=git.index_listing())


class GitSnapshot(Snapshot):
    """A tree of files as git objects: a commit, the index, or nothing.

    A commit's tree is listed in full only when something needs all of it: one
    file is found by walking trees, the files matching anchored patterns by
    listing just their folders, and a change between two commits by diff-tree,
    so the cost follows the oracle and the change, not the repository."""

    def __init__(
        self,
        git: Optional[Git],
        label: str,
        entries: Optional[Dict[str, Entry]],
        commit: Optional[str] = None,
        listing: Optional[bytes] = None,
    ) -> None:
        self._git = git
        self._listing = listing  # the index: what `ls-files --stage -z` printed
        self.label = label
        self._entries = entries  # None: a commit not listed yet
        self.commit = commit
        self._known: Dict[str, Entry] = {}  # files found without listing everything
        self._listed: List[str] = []  # folders listed in full into _known
        self._digests: Dict[str, str] = {}  # by blob id, for when the cache is off

    @property
    def entries(self) -> Dict[str, Entry]:
        if self._entries is None:
            if self._listing is not None:
                self._entries = parse_index(self._listing)
            else:
                assert self._git is not None and self.commit is not None
                self._entries = self._git.tree_entries(self.commit)
        return self._entries

    @property
    def repository(self) -> Optional[Git]:
        return self._git

    @property
    def listed(self) -> bool:
        return self._entries is not None or self._listing is not None

    def entry(self, path: str) -> Optional[Entry]:
        if self._entries is not None:
            return self._entries.get(path)
        if self._listing is not None:
            return _index_entry(self._listing, path)
        if path in self._known:
            return self._known[path]
        if any(_inside(path, folder) for folder in self._listed):
            return None
        assert self._git is not None and self.commit is not None
        found = self._git.tree_entry(self.commit, path)
        if found is not None:
            self._known[path] = found
        return found

    def select(self, patterns: PatternSet) -> List[str]:
        folders = patterns.folders() if self._entries is None and self.commit else None
        if folders is None:
            return patterns.select(self.entries)
        unlisted = [f for f in folders if not any(_inside(f, done) for done in self._listed)]
        if unlisted:
            assert self._git is not None and self.commit is not None
            self._known.update(self._git.tree_entries_under(self.commit, unlisted))
            self._listed.extend(unlisted)
        # every match lies in a listed folder, so what is known holds them all
        return patterns.select(self._known)

    def same_files(self, other: Snapshot) -> bool:
        if self.commit and other.commit and self._git is not None and other.repository is self._git:
            return self._git.root_tree(self.commit) == self._git.root_tree(other.commit)
        return self.entries == other.entries

    def files_key(self, patterns: PatternSet) -> Optional[str]:
        """A commit: the ids of the trees of the patterns' folders (of the root tree
        when a match could lie anywhere), found by walking, nothing listed. The
        index: a digest of its entries in those folders (of all of them). Both
        change whenever a file a pattern can match does."""
        # deferred: hashlib, json: 3 ms to import, only for files_key()
        import hashlib
        import json

        if self._git is None:
            return None
        folders = patterns.folders()
        if self.commit is not None:
            if folders is None:
                return f"tree {self._git.root_tree(self.commit)}"
            found = [self._git.object_at(self.commit, folder) for folder in folders]
            return json.dumps(["trees", folders, found])
        if self._listing is None:
            return None
        digest = hashlib.sha256()
        for block in _index_blocks(self._listing, folders):
            digest.update(b"%d\0" % len(block) + block)
        return f"index {json.dumps(folders)} {digest.hexdigest()}"

    def read(self, path: str, limit: Optional[int] = None) -> bytes:
        assert self._git is not None
        return self._git.read_blob(self._entry_of(path).oid, limit)

    def read_ahead(self, paths: Sequence[str], limit: Optional[int] = None) -> None:
        if self._git is not None:
            entries = (self.entry(path) for path in paths)
            self._git.read_ahead([e.oid for e in entries if e is not None and e.is_regular], limit)

    def sha256_of(
        self, paths: Sequence[str], expected: Optional[Mapping[str, str]] = None
    ) -> Dict[str, str]:
        """The ones the cache lacks are hashed in one streamed batch."""
        oids = {path: self._entry_of(path).oid for path in paths}
        known = {
            oid: self._digests.get(oid) or self.cache.get("sha256", oid) for oid in oids.values()
        }
        missing = [oid for oid, digest in known.items() if digest is None]
        if missing:
            assert self._git is not None  # the empty tree has no paths to ask for
            by_oid = {oids[p]: d for p, d in (expected or {}).items() if p in oids}
            for oid, digest in self._git.sha256_blobs(missing, by_oid).items():
                known[oid] = self._digests[oid] = digest
                self.cache.put("sha256", oid, digest)
        return {path: known[oid] for path, oid in oids.items()}

    def _entry_of(self, path: str) -> Entry:
        entry = self.entry(path)
        if entry is None:
            raise KeyError(path)
        return entry

    @property
    def cache(self) -> Cache:
        """The repository's cache; one that holds nothing for a snapshot of no repository."""
        if self._git is not None:
            return self._git.cache
        return super().cache


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
        self._entries = entries
        self._base = base
        self.label = label
        self.commit: Optional[str] = None

    @property
    def entries(self) -> Dict[str, Entry]:
        return self._entries

    def read(self, path: str, limit: Optional[int] = None) -> bytes:
        if path in self._files:
            return _within(self._files[path], limit)
        if path not in self._entries:
            raise KeyError(path)
        return self._base.read(path, limit)

    def sha256_of(
        self, paths: Sequence[str], expected: Optional[Mapping[str, str]] = None
    ) -> Dict[str, str]:
        # deferred: hashlib: 3 ms to import, only for sha256_of()
        import hashlib

        missing = [p for p in paths if p not in self._entries]
        if missing:
            raise KeyError(missing[0])
        out = {p: hashlib.sha256(self._files[p]).hexdigest() for p in paths if p in self._files}
        out.update(self._base.sha256_of([p for p in paths if p not in self._files], expected))
        return out


# The index's listing (``ls-files --stage -z``) is searched for literal text, in C:
# a record is '<mode> <id> <stage>\t<path>\0' and no path holds a NUL, so a hit on
# '\t<path>' is a record's own when the text from the NUL before it is a record's meta.
def _record_start(listing: bytes, tab: int) -> Optional[int]:
    """Where the record whose meta ends at ``tab`` starts; None when that tab lies
    inside a path."""

    start = listing.rfind(b"\0", 0, tab) + 1
    return start if re.fullmatch(rb"[0-7]+ [0-9a-f]+ [0-3]", listing[start:tab]) else None


def _records(listing: bytes, tail: bytes, last: bool = False) -> Iterator[Tuple[int, int]]:
    """(start, tab) of each record whose text from its tab begins with ``tail``,
    in order (from the end with ``last``)."""
    at = len(listing) if last else 0
    while True:
        tab = listing.rfind(tail, 0, at) if last else listing.find(tail, at)
        if tab < 0:
            return
        start = _record_start(listing, tab)
        if start is not None:
            yield start, tab
        at = tab if last else tab + 1


def _index_entry(listing: bytes, path: str) -> Optional[Entry]:
    """One path's entry in an ``ls-files --stage -z`` listing of stage-0 records."""
    for start, tab in _records(listing, b"\t" + encode_path(path) + b"\0"):
        mode, oid, _ = listing[start:tab].decode().split(" ")
        return Entry(mode, oid)
    return None


def _index_blocks(listing: bytes, folders: Optional[List[str]]) -> List[bytes]:
    """The stretch of ``ls-files --stage -z`` output that holds every entry at or
    below each folder (all of it for None): from its first record to its last. Git
    sorts the index, so nothing else lies between; were anything to, it would only
    make the key stricter."""
    if folders is None:
        return [listing]
    blocks = []
    for folder in folders:
        tails = [b"\t" + encode_path(folder) + end for end in (b"/", b"\0")]
        firsts = [next(_records(listing, tail), None) for tail in tails]
        lasts = [next(_records(listing, tail, last=True), None) for tail in tails]
        starts = [found[0] for found in firsts if found is not None]
        if not starts:
            blocks.append(b"")
            continue
        end = max(found[1] for found in lasts if found is not None)
        blocks.append(listing[min(starts) : listing.index(b"\0", end + 1) + 1])
    return blocks


def _within(data: bytes, limit: Optional[int]) -> bytes:
    if limit is not None and len(data) > limit:
        raise BlobTooLarge(len(data), limit)
    return data


MODE_FILE = "100644"
MODE_EXECUTABLE = "100755"
File = Union[bytes, Tuple[str, bytes]]  # bytes: a regular file; else (mode, bytes)


class MemorySnapshot(Snapshot):
    """A tree of files held as bytes, as git would store them: ``files`` maps a
    path to its bytes (a regular file) or to (mode, bytes): MODE_EXECUTABLE,
    MODE_SYMLINK (the bytes are the target) or MODE_GITLINK (the bytes are the
    submodule's commit id). Entries carry git's SHA-1 blob ids, so they equal
    those of a git snapshot of the same tree."""

    def __init__(
        self,
        files: Mapping[str, File],
        label: str = "the tree in memory",
        commit: Optional[str] = None,
    ) -> None:
        self.label = label
        self.commit = commit
        self._entries: Dict[str, Entry] = {}
        self._files: Dict[str, bytes] = {}
        for path, file in files.items():
            mode, data = (MODE_FILE, file) if isinstance(file, bytes) else file
            self._entries[path] = _memory_entry(path, mode, data)
            if mode != MODE_GITLINK:
                self._files[path] = data
        for path in self._entries:
            _no_folder_is_a_file(path, self._entries)

    @property
    def entries(self) -> Dict[str, Entry]:
        return self._entries

    def read(self, path: str, limit: Optional[int] = None) -> bytes:
        entry = self._entries[path]
        if path not in self._files:
            raise GitError(f"cannot read object {entry.oid}: a submodule's commit, not a blob")
        return _within(self._files[path], limit)

    def sha256_of(
        self, paths: Sequence[str], expected: Optional[Mapping[str, str]] = None
    ) -> Dict[str, str]:
        # deferred: hashlib: 3 ms to import, only for sha256_of()
        import hashlib

        return {path: hashlib.sha256(self.read(path)).hexdigest() for path in paths}


def _memory_entry(path: str, mode: str, data: bytes) -> Entry:
    if mode == MODE_GITLINK:
        return Entry(mode, data.decode("ascii"))
    if mode not in (MODE_FILE, MODE_EXECUTABLE, MODE_SYMLINK):
        raise ValueError(f"{path!r}: mode {mode} is none git stores for a file")
    # deferred: hashlib: 3 ms to import, only for _memory_entry()
    import hashlib

    return Entry(mode, hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest())


def _no_folder_is_a_file(path: str, entries: Mapping[str, Entry]) -> None:
    """A tree cannot hold 'a' and 'a/b' both: git would not store it."""
    parts = path.split("/")
    for end in range(1, len(parts)):
        if "/".join(parts[:end]) in entries:
            raise ValueError(f"{path!r} lies in {'/'.join(parts[:end])!r}, which is a file")
