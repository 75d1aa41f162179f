"""All git access. Nothing else in oracle_guard runs git.

Paths are kept as ``str`` decoded with ``surrogateescape`` so names that are
not UTF-8 survive a round trip; every listing uses ``-z``.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    cast,
)

if TYPE_CHECKING:
    from oracle_guard.cache import Cache

from oracle_guard.errors import GitError

EMPTY = "empty"
INDEX = "index"

MODE_SYMLINK = "120000"
MODE_GITLINK = "160000"


class BlobTooLarge(Exception):
    """A blob is larger than the reader allows; it was skipped, not loaded."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"is {size:,} bytes, above the limit of {limit:,}")
        self.size = size
        self.limit = limit


CACHE_BLOBS_UP_TO = 64 << 10  # larger blobs are read once; keeping them costs memory
# Fewer blobs are streamed from cat-file alone: reading packs costs a process
# (rev-parse) and opening every index, and few blobs are small work.
READ_PACKS_FROM = 16


def _threads() -> int:
    """One hashing thread per core, up to four (memory grows with each)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


def decode_path(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def encode_path(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def _widen_pipe(pipe) -> None:
    """A 1 MiB pipe (Linux): fewer wake-ups between git and the reader."""
    try:
        import fcntl

        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass  # elsewhere, or above /proc/sys/fs/pipe-max-size: the default works


class _Stream:
    """Lines and counted bytes from a raw pipe, through one reused buffer."""

    def __init__(self, raw) -> None:
        self._raw = raw
        self._buf = bytearray(1 << 20)
        self._view = memoryview(self._buf)
        self._start = self._end = 0

    def _fill(self) -> bool:
        if self._start == self._end:
            self._start = 0
            self._end = self._raw.readinto(self._view) or 0
            return self._end > 0
        return True

    def line(self) -> bytes:
        """One line without its newline; b"" at the end of the stream."""
        parts = []
        while self._fill():
            at = self._buf.find(b"\n", self._start, self._end)
            if at >= 0:
                parts.append(bytes(self._view[self._start : at]))
                self._start = at + 1
                return b"".join(parts)
            parts.append(bytes(self._view[self._start : self._end]))
            self._start = self._end
        return b"".join(parts)

    def newline(self) -> bool:
        if not self._fill() or self._buf[self._start] != 10:
            return False
        self._start += 1
        return True

    def copy_to(self, size: int, sink) -> bool:
        """Hand ``size`` bytes to ``sink`` in slices; False when the stream ends first."""
        while size:
            if not self._fill():
                return False
            take = min(size, self._end - self._start)
            sink(self._view[self._start : self._start + take])
            self._start += take
            size -= take
        return True


# What the caller's environment may not change in how git reads objects and
# paths: replace refs could swap a base's objects for others (refs/replace/* can
# be pushed), grafts rewrite parents and so merge-bases, and pathspec variables
# change what a folder listing returns. Everything else (GIT_DIR, a server's
# quarantine GIT_OBJECT_DIRECTORY) is kept.
_PATHSPEC_VARIABLES = (
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
)


def git_environment() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _PATHSPEC_VARIABLES}
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    env["GIT_GRAFT_FILE"] = os.devnull  # neither $GIT_GRAFT_FILE nor info/grafts
    return env


def trust_repository_owner() -> None:
    """An admin inspects a repository another account owns (doctor, the
    installer run as root): git refuses it (safe.directory) unless told. These
    commands only read it."""
    count = int(os.environ.get("GIT_CONFIG_COUNT") or 0)
    os.environ[f"GIT_CONFIG_KEY_{count}"] = "safe.directory"
    os.environ[f"GIT_CONFIG_VALUE_{count}"] = "*"
    os.environ["GIT_CONFIG_COUNT"] = str(count + 1)


MERGE_TREE_VERSION = (2, 38)  # git merge-tree --write-tree
# How the platform merges: git's defaults, whatever the configuration says. No
# attributes file of the caller's choosing, and the built-in text driver for every
# path without a merge attribute: a driver could hide a change (the trees'
# .gitattributes are protected files). Global and system configuration still
# count for the rest: CI runners keep safe.directory there.
_MERGE_CONFIG = (
    "-c",
    "merge.renames=true",
    "-c",
    "diff.renames=true",
    "-c",
    "merge.directoryRenames=conflict",
    "-c",
    "merge.default=text",
    "-c",
    "merge.renormalize=false",
    "-c",
    f"core.attributesFile={os.devnull}",
)


_FULL_ID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def _duplicate(commit: str, path: str) -> GitError:
    # git fsck calls this duplicateEntries; checkouts and `git show` then
    # disagree on which copy is the file, so it is never judged
    return GitError(
        f"the tree of {commit[:12]} lists {path!r} twice (git fsck: "
        "duplicateEntries); a malformed tree is never judged"
    )


# diff-tree's arguments for a change between two trees, file by file
_DIFF_TREE = ("-r", "-z", "--raw", "--no-renames", "--full-index", "--ignore-submodules=none")
_PLAIN_MODES = (b"000000", b"100644", b"100755")  # none, a file, an executable file
# a record with a mode of neither kind, in records joined by NULs
_ODD_MODE = re.compile(rb"\0:(?!(?:000000|100644|100755) (?:000000|100644|100755) )")


def _canonical_mode(raw: bytes) -> str:
    """A tree entry's mode as ls-tree prints it (git's canon_mode)."""
    mode = int(raw, 8)
    kind = mode & 0o170000
    if kind == 0o100000:
        return "100755" if mode & 0o100 else "100644"
    if kind == 0o120000:
        return "120000"
    if kind == 0o040000:
        return "040000"
    return "160000"  # anything else git reads as a submodule


def _chunks(stream) -> Iterator[bytes]:
    """What a pipe holds, a MiB at most at a time, as it comes."""
    _widen_pipe(stream)
    fd = stream.fileno()
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return
        yield chunk


def _changed_paths(chunks: Iterable[bytes], commit: str) -> Tuple[List[bytes], List[bytes]]:
    """Parse ``diff-tree -z --raw`` as git writes it, cut anywhere: only the
    paths are kept (the opaque ones apart), so git's output is never held whole
    and is parsed while git still writes."""
    paths: List[bytes] = []
    opaque: List[bytes] = []
    carry = b""  # the end of a token the next read completes
    held: List[bytes] = []  # a record's modes and ids, its path still to come
    for chunk in chunks:
        tokens = (carry + chunk).split(b"\0")
        carry = tokens.pop()
        if held:
            tokens = held + tokens
        held = [tokens.pop()] if len(tokens) % 2 else []
        records = tokens[0::2]
        named = tokens[1::2]
        joined = b"\0" + b"\0".join(records)
        if joined.count(b"\0:") != len(records):
            raise GitError(f"git diff-tree printed a change it does not document: {joined[:80]!r}")
        if _ODD_MODE.search(joined):  # rare: a symlink or submodule on either side
            for record, path in zip(records, named):
                if record[1:7] not in _PLAIN_MODES or record[8:14] not in _PLAIN_MODES:
                    opaque.append(path)
        paths.extend(named)
    if carry or held:
        raise GitError("git diff-tree stopped in the middle of a change")
    if len(set(paths)) != len(paths):
        seen = set()
        for raw in paths:
            if raw in seen:
                raise _duplicate(commit, decode_path(raw))
            seen.add(raw)
    return paths, opaque


def _one_commit_one_parent(listing: bytes) -> bool:
    """Does ``rev-list --parents`` list one commit, with one parent?"""
    return listing.count(b"\n") == 1 and listing.count(b" ") == 1


def _paths_by_commit(out: bytes) -> Dict[str, List[bytes]]:
    """Parse ``diff-tree --stdin -z --raw``: a commit id, then its changes (a
    record of modes and ids, then a path), as git's bytes."""
    result: Dict[str, List[bytes]] = {}
    tokens = out.split(b"\0")
    if tokens.pop() != b"":
        raise GitError(f"git diff-tree printed {out[-80:]!r} at its end")
    at = 0
    while at < len(tokens):
        header = tokens[at].decode("ascii", "replace")
        if not _FULL_ID.match(header):
            raise GitError(f"git diff-tree printed {tokens[at][:80]!r} where a commit id belongs")
        start = at = at + 1
        while at < len(tokens) and tokens[at][:1] == b":":
            at += 2
        if at > len(tokens):
            raise GitError("git diff-tree printed a change without its path")
        result.setdefault(header, []).extend(tokens[start + 1 : at : 2])
    return result


class Commit(NamedTuple):
    id: str
    parents: Tuple[str, ...]
    paths: List[bytes]  # what it changes against its parent, as git's bytes; empty for a merge

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


class Entry(NamedTuple):  # a tuple: trees of 100,000 files build one per path
    mode: str
    oid: str

    @property
    def is_regular(self) -> bool:
        return self.mode in ("100644", "100755")


class Git:
    """One repository; runs ``git -C <dir>`` and keeps one ``cat-file --batch``."""

    def __init__(self, directory: str = ".", use_cache: bool = True) -> None:
        self.directory = directory
        self.use_cache = use_cache
        self._cache: Optional[Cache] = None
        self._batch: Optional[subprocess.Popen[bytes]] = None
        self._blobs: Dict[str, bytes] = {}
        self._trees: Dict[str, Dict[str, Entry]] = {}
        self._tree_objects: Dict[str, Dict[bytes, Tuple[str, str]]] = {}
        self._root_trees: Dict[str, str] = {}
        self._version: Optional[Tuple[int, ...]] = None
        self._git_dir: Optional[str] = None
        self._facts_found: Optional[Tuple[str, bool]] = None  # by check_repository
        self._remerged: Dict[str, List[str]] = {}
        self._commits: Dict[str, Optional[str]] = {}  # by object id
        self._diffs: Dict[Tuple[str, str], Tuple[List[bytes], List[bytes]]] = {}
        # (object format, common git dir, objects directory) from one rev-parse
        self._layout_found: Optional[Tuple[bytes, str, str]] = None
        # resolve revisions through the open cat-file --batch, not a rev-parse
        # each (pre-receive: HEAD, then every pushed old and new id)
        self.resolve_in_batch = False

    # -- processes -----------------------------------------------------
    def run(self, *args: str, check: bool = True, stdin: Optional[bytes] = None) -> bytes:
        cmd = ["git", "-C", self.directory, *args]
        try:
            proc = subprocess.run(
                cmd,
                input=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=git_environment(),
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from None
        if check and proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = msg[-1] if msg else f"exit {proc.returncode}"
            raise GitError(f"git {' '.join(args[:2])} failed: {detail}")
        return proc.stdout if check or proc.returncode == 0 else b""

    def ok(self, *args: str) -> bool:
        try:
            proc = subprocess.run(
                ["git", "-C", self.directory, *args],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=git_environment(),
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from None
        return proc.returncode == 0

    @property
    def cache(self):
        """The content-addressed cache in this repository's git directory."""
        if self._cache is None:
            from oracle_guard.cache import Cache

            path = None
            if self.use_cache:
                common = self._facts()[0] or self._layout()[1]
                path = os.path.join(self.directory, common, "oracle-guard", "cache.json")
            self._cache = Cache(path)
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.save()
        if self._batch is not None:
            batch, self._batch = self._batch, None
            assert batch.stdin is not None  # made with stdin=PIPE
            try:
                batch.stdin.close()  # flushes: the process may be gone already
            except OSError:
                pass
            batch.wait()

    def _answer(self, *args: str) -> Optional[bytes]:
        """stdout when git answers yes (exit 0), None when it answers no (exit 1);
        a git that dies or fails otherwise is a GitError, never a "no"."""
        try:
            proc = subprocess.run(
                ["git", "-C", self.directory, *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=git_environment(),
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from None
        if proc.returncode == 1:
            return None
        if proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = msg[-1] if msg else f"exit {proc.returncode}"
            raise GitError(f"git {' '.join(args[:2])} failed: {detail}")
        return proc.stdout

    # -- repository facts ----------------------------------------------
    def toplevel(self) -> Optional[str]:
        out = self.run("rev-parse", "--show-toplevel", check=False).rstrip(b"\n")
        return os.fsdecode(out) if out else None

    def check_repository(self) -> None:
        """Is this a repository? One rev-parse also answers where its common git
        directory is and whether it is bare, which a run asks later."""
        out = self.run(
            "rev-parse", "--git-dir", "--git-common-dir", "--is-bare-repository", check=False
        )
        paths, _, bare = out.rstrip(b"\n").rpartition(b"\n")
        if not paths or bare not in (b"true", b"false"):
            where = os.path.abspath(self.directory)
            if not os.path.isdir(where):  # a typo in -C is not a repository question
                what = "is not a folder" if os.path.exists(where) else "does not exist"
                raise GitError(f"{where} {what}, so it is not a git repository")
            raise GitError(f"not a git repository: {where}")
        if paths.count(b"\n") == 1:
            git_dir, common = paths.split(b"\n")
            self._facts_found = (os.fsdecode(common), bare == b"true")
        else:  # a path holds a newline: which one is ambiguous, so ask for it alone
            git_dir = self.run("rev-parse", "--git-dir").rstrip(b"\n")
        self._git_dir = os.path.join(self.directory, os.fsdecode(git_dir))

    def _facts(self) -> Tuple[Optional[str], Optional[bool]]:
        """(common git directory, bare) as check_repository found them, else Nones."""
        return self._facts_found or (None, None)

    def _layout(self) -> Tuple[bytes, str, str]:
        """(object format, common git dir, objects directory, a quarantine's
        GIT_OBJECT_DIRECTORY included) from one rev-parse; each alone when a
        path holds a newline (which line is which would be ambiguous)."""
        if self._layout_found is None:
            out = self.run(
                "rev-parse", "--show-object-format", "--git-common-dir", "--git-path", "objects"
            )
            lines = out.split(b"\n")
            if len(lines) == 4 and lines[3] == b"":
                form, common, objects = lines[0], lines[1], lines[2]
            else:
                form = self.run("rev-parse", "--show-object-format").strip()
                common = self.run("rev-parse", "--git-common-dir").rstrip(b"\n")
                objects = self.run("rev-parse", "--git-path", "objects").rstrip(b"\n")
            self._layout_found = (form.strip(), os.fsdecode(common), os.fsdecode(objects))
        return self._layout_found

    def git_dir(self) -> str:
        """This work tree's git directory (where MERGE_HEAD lives)."""
        if self._git_dir is None:
            self.check_repository()
        assert self._git_dir is not None
        return self._git_dir

    def is_shallow(self) -> bool:
        return self.run("rev-parse", "--is-shallow-repository").strip() == b"true"

    def resolve_commit(self, rev: str) -> Optional[str]:
        """Full commit id of ``rev``, or None when it does not name a commit here.
        An object id's answer is kept: objects do not change, refs may."""
        if rev in self._commits:
            return self._commits[rev]
        if self.resolve_in_batch and rev and not any(c in rev for c in "\n\r\0"):
            # cat-file reads a line as one name (no option, spaces kept) and
            # strips a CR at its end: those names, and a newline, go to rev-parse
            oid = self._resolve_by_batch(rev)
        else:
            out = self._answer(
                "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
            )
            oid = (out or b"").decode().strip() or None
        if _FULL_ID.match(rev):
            self._commits[rev] = oid
        return oid

    def has_refs(self) -> bool:
        """Does the repository hold any branch or tag yet?"""
        return bool(
            self.run(
                "for-each-ref", "--count=1", "--format=%(refname)", "refs/heads", "refs/tags"
            ).strip()
        )

    def tag_names(self, count: int) -> List[str]:
        """Up to ``count`` tag names, the newest first."""
        out = self.run(
            "for-each-ref", f"--count={count}", "--sort=-creatordate", "--format=%(refname:short)",
            "refs/tags",
        )  # fmt: skip
        return out.decode("utf-8", "replace").split()

    def head_target(self) -> Optional[str]:
        """The branch HEAD names (``refs/heads/main``), or None when detached."""
        out = self._answer("symbolic-ref", "-q", "HEAD")  # exit 1: detached; a dying git fails
        return (out or b"").decode("utf-8", "surrogateescape").strip() or None

    def full_ref_name(self, name: str) -> Optional[str]:
        """``refs/...`` when ``name`` names a branch or tag, else None (a commit id,
        ``HEAD~1`` and the like)."""
        if name.startswith("-"):
            return None
        out = self.run("rev-parse", "--symbolic-full-name", name, check=False)
        full = out.decode("utf-8", "replace").strip()
        return full if full.startswith("refs/") else None

    def merge_base(self, a: str, b: str) -> Optional[str]:
        out = self._answer("merge-base", a, b)
        return (out or b"").decode().strip() or None

    def config(self, key: str, kind: Optional[str] = None) -> Optional[str]:
        """A configuration value as git reads it here (``kind``: bool, path), or None."""
        typed = [f"--type={kind}"] if kind else []
        out = self._answer("config", *typed, "--get", key)
        return None if out is None else out.decode("utf-8", "surrogateescape").rstrip("\n")

    def merge_bases(self, a: str, b: str) -> List[str]:
        """Every best common ancestor: a criss-cross history has several."""
        return (self._answer("merge-base", "--all", a, b) or b"").decode().split()

    def merge_heads(self) -> List[str]:
        """The commits a merge in progress brings (MERGE_HEAD), none outside a merge."""
        try:
            with open(os.path.join(self.git_dir(), "MERGE_HEAD"), encoding="ascii") as f:
                names = f.read().split()
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise GitError(f"cannot read MERGE_HEAD: {exc}") from None
        commits = [self.resolve_commit(name) for name in names]
        if None in commits:
            raise GitError("MERGE_HEAD names an object that is not a commit")
        return cast(List[str], commits)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self._answer("merge-base", "--is-ancestor", ancestor, descendant) is not None

    def version(self) -> Tuple[int, ...]:
        if self._version is None:
            words = self.run("version").decode("utf-8", "replace").split()
            numbers = words[2].split(".") if len(words) > 2 else []
            self._version = tuple(int(n) for n in numbers[:3] if n.isdigit())
        return self._version

    def object_id_length(self) -> int:
        """40 hex digits in a SHA-1 repository, 64 in a SHA-256 one."""
        return 64 if self._layout()[0] == b"sha256" else 40

    def merge_tree(self, ours: str, theirs: str, unrelated: bool = False) -> Tuple[str, List[str]]:
        """(tree, conflicted paths) of git's 3-way merge of two commits, as
        ``git merge`` makes it (merge-ort, virtual bases for criss-cross
        histories, renames followed). The tree is written to the object store;
        a conflicted path holds conflict markers there."""
        if self.version() < MERGE_TREE_VERSION:
            have = ".".join(map(str, self.version())) or "unknown"
            raise GitError(
                f"judging a merge needs git {'.'.join(map(str, MERGE_TREE_VERSION))}"
                f" or later (git merge-tree --write-tree); this git is {have}"
            )
        try:
            proc = subprocess.run(
                [
                    "git",
                    "-C",
                    self.directory,
                    *_MERGE_CONFIG,
                    "merge-tree",
                    "--write-tree",
                    "--name-only",
                    "--no-messages",
                    "-z",
                    *(["--allow-unrelated-histories"] if unrelated else []),
                    ours,
                    theirs,
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=git_environment(),
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from None
        if proc.returncode not in (0, 1):
            lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = lines[-1] if lines else f"exit {proc.returncode}"
            raise GitError(f"git merge-tree failed: {detail}")
        tree, *rest = proc.stdout.split(b"\0")
        conflicts: List[str] = []
        # a file/folder conflict moves the file aside as PATH~<the side's name>
        asides = tuple(f"~{side}" for side in (ours, theirs))
        for raw in rest:
            if not raw:  # the end of the conflicted paths
                break
            path = decode_path(raw)
            for aside in asides:
                if path.endswith(aside):
                    path = path[: -len(aside)]
            if path not in conflicts:
                conflicts.append(path)
        if proc.returncode == 1 and not conflicts:
            raise GitError("git merge-tree reported a conflict but named no path")
        return self.known_tree(tree.decode()), conflicts

    def known_tree(self, tree: str) -> str:
        """Let a tree id stand where a commit is read for its tree."""
        self._root_trees[tree] = tree
        return tree

    def differing_paths(self, old: str, new: str) -> List[str]:
        """The files that differ between two trees or commits."""
        return [path for path, _, _ in self.diff_trees(old, new)]

    def is_bare(self) -> bool:
        bare = self._facts()[1]
        if bare is not None:
            return bare
        return self.run("rev-parse", "--is-bare-repository").strip() == b"true"

    def records_a_parent(self, commit: str) -> bool:
        """True when the commit object names a parent (a shallow clone may lack it)."""
        header = self.read_commit(commit).split(b"\n\n", 1)[0]  # the open batch
        return any(line.startswith(b"parent ") for line in header.split(b"\n"))

    # -- snapshots -------------------------------------------------------
    def tree_entries(self, commit: str) -> Dict[str, Entry]:
        if commit not in self._trees:
            self._trees[commit] = self._list_tree(commit)
        return self._trees[commit]

    def _list_tree(
        self, treeish: str, within: Optional[str] = None, prefix: str = ""
    ) -> Dict[str, Entry]:
        """Every file of a commit's tree, or of the tree object of its folder
        ``prefix`` (``within``: the commit). No pathspec, so nothing in the caller's
        environment can change what is listed."""
        out = self.run("ls-tree", "-r", "-z", "--full-tree", treeish)
        entries = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            mode, _type, oid = meta.decode().split(" ")
            path = prefix + raw_path.decode("utf-8", "surrogateescape")
            if path in entries:
                raise _duplicate(within or treeish, path)
            entries[path] = Entry(mode, oid)
        return entries

    def tree_entries_under(self, commit: str, folders: Sequence[str]) -> Dict[str, Entry]:
        """The files at or below each folder: its tree is found by walking and its
        trees read through the ``cat-file --batch`` already open, in the order
        ``ls-tree -r`` lists them. A folder that is a file, link or submodule is
        that entry."""
        entries: Dict[str, Entry] = {}
        for folder in folders:
            found = self._walk(commit, folder)
            if found is None:
                continue
            mode, oid = found
            if mode != "040000":
                entries[folder] = Entry(mode, oid)
                continue
            # depth first without recursion: a tree may nest deeper than Python's stack
            stack = [(folder + "/", iter(self._tree(oid, commit, folder + "/").items()))]
            while stack:
                prefix, items = stack[-1]
                for name, (mode, oid) in items:
                    path = prefix + decode_path(name)
                    if mode == "040000":
                        subtree = self._tree(oid, commit, path + "/")
                        stack.append((path + "/", iter(subtree.items())))
                        break
                    entries[path] = Entry(mode, oid)
                else:
                    stack.pop()
        return entries

    def tree_entry(self, commit: str, path: str) -> Optional[Entry]:
        """One file of a commit's tree, found by walking trees through the
        ``cat-file --batch`` already open: no listing, no process."""
        found = self._walk(commit, path)
        if found is None or found[0] == "040000":
            return None
        return Entry(*found)

    def object_at(self, commit: str, path: str) -> Optional[Tuple[str, str]]:
        """(mode, id) of what ``path`` names in the commit's tree (a folder's tree
        included), None when nothing: found by walking, no process."""
        return self._walk(commit, path)

    def _walk(self, commit: str, path: str) -> Optional[Tuple[str, str]]:
        """(mode, id) of whatever ``path`` names in the commit's tree, a folder included."""
        tree = self.root_tree(commit)
        *folders, name = encode_path(path).split(b"/")
        for folder in folders:
            found = self._tree(tree, commit).get(folder)
            if found is None or found[0] != "040000":
                return None
            tree = found[1]
        return self._tree(tree, commit).get(name)

    def root_tree(self, commit: str) -> str:
        """The commit's tree id, read once: every walked lookup starts here."""
        if commit not in self._root_trees:
            header = self._read_object(commit, "commit").split(b"\n", 1)[0]
            if not header.startswith(b"tree "):
                raise GitError(f"commit {commit[:12]} names no tree")
            self._root_trees[commit] = header[5:].decode()
        return self._root_trees[commit]

    def _tree(self, oid: str, commit: str, prefix: str = "") -> Dict[bytes, Tuple[str, str]]:
        """A tree object's entries by name: (mode as ls-tree prints it, id);
        ``prefix``: the tree's folder, which a duplicate's message names."""
        if oid in self._tree_objects:
            return self._tree_objects[oid]
        data = self._read_object(oid, "tree")
        width = len(oid) // 2  # 20 bytes for SHA-1, 32 for SHA-256
        entries: Dict[bytes, Tuple[str, str]] = {}
        at = 0
        try:
            while at < len(data):
                space = data.index(b" ", at)
                nul = data.index(b"\0", space)
                name = data[space + 1 : nul]
                if name in entries:
                    raise _duplicate(commit, prefix + decode_path(name))
                if nul + 1 + width > len(data) or not name or b"/" in name:
                    raise ValueError(name)
                entries[name] = (
                    _canonical_mode(data[at:space]),
                    data[nul + 1 : nul + 1 + width].hex(),
                )
                at = nul + 1 + width
        except ValueError:
            raise GitError(
                f"tree {oid} (in {commit[:12]}) is malformed (git fsck: "
                "badTree); a malformed tree is never judged"
            ) from None
        self._tree_objects[oid] = entries
        return entries

    def diff_trees(self, old: str, new: str) -> List[Tuple[str, Optional[Entry], Optional[Entry]]]:
        """(path, entry before, entry after) for each file that differs between two
        commits, from one ``diff-tree``: the cost grows with the change, not the tree.
        A path listed twice comes from a tree with duplicate entries: never judged."""
        # --ignore-submodules=none: .gitmodules' 'ignore = all' would hide a gitlink change
        out = self.run(
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "--no-renames",
            "--full-index",
            "--ignore-submodules=none",
            old,
            new,
        )
        tokens = out.split(b"\0")
        changes = []
        seen = set()
        for at in range(0, len(tokens) - 1, 2):
            old_mode, new_mode, old_oid, new_oid, _status = tokens[at][1:].decode().split(" ")
            path = decode_path(tokens[at + 1])
            if path in seen:
                raise _duplicate(new, path)
            seen.add(path)
            changes.append(
                (
                    path,
                    None if old_mode == "000000" else Entry(old_mode, old_oid),
                    None if new_mode == "000000" else Entry(new_mode, new_oid),
                )
            )
        return changes

    def diff_paths(self, old: str, new: str) -> Tuple[List[bytes], List[bytes]]:
        """(every path that differs between two commits, the ones among them
        that are or were a symlink or submodule), as git's bytes in its order:
        ``diff_trees`` without an object per path, for changes of any size."""
        known = self._diffs.get((old, new))
        if known is not None:
            return known
        import threading

        try:
            proc = subprocess.Popen(
                ["git", "-C", self.directory, "diff-tree", *_DIFF_TREE, old, new],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=git_environment(),
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from None
        said: List[bytes] = []
        reader = threading.Thread(target=lambda: said.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
        reader.start()  # drained beside: git never waits on it
        unparsed: Optional[GitError] = None
        paths: List[bytes] = []
        opaque: List[bytes] = []
        try:
            paths, opaque = _changed_paths(_chunks(proc.stdout), new)
        except GitError as exc:
            unparsed = exc
        finally:
            proc.stdout.close()  # type: ignore[union-attr]
            code = proc.wait()
            reader.join()
        if code != 0:  # git's own reason first: what it printed may be cut short
            lines = b"".join(said).decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git diff-tree -r failed: {lines[-1] if lines else f'exit {code}'}")
        if unparsed is not None:
            raise unparsed
        self._diffs = {(old, new): (paths, opaque)}  # the last: a range of one commit asks again
        return paths, opaque

    def index_listing(self) -> bytes:
        """What ``ls-files --stage -z`` prints for the whole index, read no further
        than to refuse an unmerged one (as index_entries does)."""
        # ':(top)' and --full-name: the whole index, repo-relative, from any subfolder
        out = self.run("ls-files", "--stage", "-z", "--full-name", "--", ":(top)")
        # ' 1\t' to ' 3\t' end an unmerged record's meta; a hit inside a path parses
        # for nothing, once
        if any(stage in out for stage in (b" 1\t", b" 2\t", b" 3\t")):
            parse_index(out)  # names the paths
        return out

    def index_entries(self) -> Dict[str, Entry]:
        return parse_index(self.index_listing())

    def read_blob(self, oid: str, limit: Optional[int] = None) -> bytes:
        """Blob bytes via one long-lived ``git cat-file --batch``; a blob above
        ``limit`` bytes is skipped without being held in memory (BlobTooLarge)."""
        cached = self._blobs.get(oid)
        if cached is not None:
            if limit is not None and len(cached) > limit:
                raise BlobTooLarge(len(cached), limit)
            return cached
        data = self._read_object(oid, "blob", limit)
        if len(data) <= CACHE_BLOBS_UP_TO:
            self._blobs[oid] = data
        return data

    def _batch_command(self) -> List[str]:
        # small pack windows: git maps packs lazily instead of whole
        return [
            "git",
            "-C",
            self.directory,
            "-c",
            "core.packedGitWindowSize=32m",
            "-c",
            "core.packedGitLimit=64m",
            "cat-file",
            "--batch",
        ]

    def peeled_commit(self, rev: str) -> Optional[str]:
        """``resolve_commit``'s answer asked of the cat-file --batch (which the
        run opens anyway) instead of one more rev-parse; the commit's tree is
        kept for ``root_tree``. A name a batch line could not carry as rev-parse
        reads it goes to rev-parse."""
        if not rev or rev.startswith("-") or any(c in rev for c in "\n\r\0 \t"):
            return self.resolve_commit(rev)
        return self._resolve_by_batch(rev)

    def _resolve_by_batch(self, rev: str) -> Optional[str]:
        """The commit ``rev`` names, through the open batch, None when it names
        none; the commit is read, and its tree kept."""
        header = self._batch_header(f"{rev}^{{commit}}")
        if header.endswith((b" missing\n", b" ambiguous\n")):
            return None  # no such commit, or an unborn HEAD: rev-parse's "no" too
        parts = header.split()
        oid = parts[0].decode("ascii", "replace") if parts else ""
        if len(parts) != 3 or parts[1] != b"commit" or not _FULL_ID.match(oid):
            self.close()
            what = header.decode("utf-8", "replace").strip() or "git cat-file exited"
            raise GitError(f"cannot resolve {rev}: {what}")
        data = self._batch_body(oid, int(parts[2]))
        first = data.split(b"\n", 1)[0]
        if first.startswith(b"tree "):
            self._root_trees.setdefault(oid, first[5:].decode("ascii", "replace"))
        return oid

    def _open_batch(self) -> subprocess.Popen[bytes]:
        if self._batch is None:
            try:
                self._batch = subprocess.Popen(
                    self._batch_command(),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=git_environment(),
                )
            except OSError as exc:
                raise GitError(f"cannot run git: {exc.strerror or exc}") from None
        return self._batch

    def _batch_header(self, name: str) -> bytes:
        """Ask the batch for one object; its header line, b"" when git is gone."""
        proc = self._open_batch()
        assert proc.stdin is not None and proc.stdout is not None  # made with PIPEs
        try:
            proc.stdin.write(encode_path(name) + b"\n")
            proc.stdin.flush()
            return proc.stdout.readline()
        except (BrokenPipeError, OSError):
            return b""

    def _batch_body(self, oid: str, size: int) -> bytes:
        """The object the header announced, and its trailing newline."""
        assert self._batch is not None and self._batch.stdout is not None
        data = self._batch.stdout.read(size)
        self._batch.stdout.read(1)
        if len(data) != size:
            self.close()
            raise GitError(f"cannot read object {oid}: truncated")
        return data

    def _read_object(self, oid: str, kind: str, limit: Optional[int] = None) -> bytes:
        header = self._batch_header(oid)
        parts = header.split()
        if len(parts) != 3 or parts[1] != kind.encode():
            self.close()
            what = header.decode("utf-8", "replace").strip() or "git cat-file exited"
            raise GitError(f"cannot read object {oid}: {what}")
        proc = self._batch
        assert proc is not None and proc.stdout is not None  # it answered
        size = int(parts[2])
        if limit is not None and size > limit:
            left = size + 1  # the data and its trailing newline
            while left:
                chunk = proc.stdout.read(min(left, 1 << 20))
                if not chunk:
                    self.close()
                    raise GitError(f"cannot read object {oid}: truncated")
                left -= len(chunk)
            raise BlobTooLarge(size, limit)
        return self._batch_body(oid, size)

    def sha256_blobs(
        self, oids: Sequence[str], expected: Optional[Mapping[str, str]] = None
    ) -> Dict[str, str]:
        """The SHA-256 of each blob, in the order asked. Many blobs are read from
        the packs in this process (pack.py); what it leaves, and a few blobs, are
        streamed from ``cat-file --batch``. ``expected``: pack.sha256_packed's."""
        from oracle_guard import progress

        wanted = list(dict.fromkeys(oids))
        if not wanted:
            return {}
        counter = progress.counting("hashing", len(wanted))  # shown on a terminal only
        digests: Dict[str, str] = {}
        rest = wanted
        if len(wanted) >= READ_PACKS_FROM:
            from oracle_guard.git import pack

            digests, rest = pack.sha256_packed(
                self.objects_directory(), wanted, _threads(), expected, counter.advance
            )
        if rest:
            digests.update(self._sha256_streamed(rest, counter.advance))
        return {oid: digests[oid] for oid in wanted}

    def objects_directory(self) -> str:
        """Where git reads objects here: a server's quarantine (GIT_OBJECT_DIRECTORY)
        included, as git itself resolves it."""
        return os.path.join(self.directory, self._layout()[2])

    def _sha256_streamed(
        self, wanted: Sequence[str], advance: Callable[[int], None] = lambda n: None
    ) -> Dict[str, str]:
        """A second ``cat-file --batch`` is fed every id at once by a thread while
        this one hashes what it prints, so git inflates the next blob while the
        last is hashed, and no blob is held whole."""
        import hashlib
        import threading

        try:
            proc = subprocess.Popen(
                self._batch_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
                env=git_environment(),
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from None
        requests = proc.stdin
        assert requests is not None and proc.stdout is not None  # made with PIPEs
        _widen_pipe(proc.stdout)
        request = b"".join(oid.encode() + b"\n" for oid in wanted)

        def feed() -> None:
            try:
                requests.write(request)
                requests.close()
            except OSError:  # git died; the reader reports it
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        digests: Dict[str, str] = {}
        out = _Stream(proc.stdout)
        try:
            for oid in wanted:
                header = out.line()
                parts = header.split()
                if len(parts) != 3 or parts[1] != b"blob":
                    what = header.decode("utf-8", "replace").strip() or "git cat-file exited"
                    raise GitError(f"cannot read object {oid}: {what}")
                digest = hashlib.sha256()
                if not out.copy_to(int(parts[2]), digest.update) or not out.newline():
                    raise GitError(f"cannot read object {oid}: truncated")
                digests[oid] = digest.hexdigest()
                advance(1)
        finally:
            proc.stdout.close()
            proc.kill()
            proc.wait()
            writer.join()
        return digests

    def history(self, tip: str, exclude: Sequence[str]) -> Callable[[], List[Commit]]:
        """Each commit reachable from ``tip`` and not from ``exclude``, with its
        parents and, unless it is a merge, the paths it changes: ``rev-list
        --parents`` fed to one ``diff-tree --stdin`` whatever the number of
        commits. They start now and run beside this process; the returned
        function waits for them and parses. A merge lists no paths: what it
        changes is judged against a remerge of its parents. A range of one
        commit with one parent runs no diff-tree of its own: its paths are the
        change between the two (``diff_paths``), which the write set has
        usually asked for already."""
        import threading

        try:
            listing = subprocess.Popen(
                [
                    "git",
                    "-C",
                    self.directory,
                    "rev-list",
                    "--parents",
                    tip,
                    "--not",
                    *exclude,
                    "--",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=git_environment(),
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from None
        listed = listing.stdout
        assert listed is not None  # made with a PIPE
        outputs: Dict[str, bytes] = {}
        diffs: List[subprocess.Popen[bytes]] = []
        failed: List[GitError] = []

        def drain(name: str, stream) -> None:
            outputs[name] = stream.read()

        def feed() -> None:  # keep rev-list's lines: merges print nothing in diff-tree
            outputs["listing"] = listed.read()
            if _one_commit_one_parent(outputs["listing"]):
                return
            try:
                diffing = subprocess.Popen(
                    [
                        "git",
                        "-C",
                        self.directory,
                        "diff-tree",
                        "--stdin",
                        "-r",
                        "-z",
                        "--no-renames",
                        "--raw",
                        "--root",
                        "--ignore-submodules=none",
                    ],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=git_environment(),
                )
            except OSError as exc:
                failed.append(GitError(f"cannot run git: {exc.strerror or exc}"))
                return
            diffs.append(diffing)
            readers = [
                threading.Thread(target=drain, args=(name, stream), daemon=True)
                for name, stream in (("out", diffing.stdout), ("err", diffing.stderr))
            ]
            for reader in readers:
                reader.start()
            to_diff = diffing.stdin
            assert to_diff is not None  # made with a PIPE
            try:
                to_diff.write(outputs["listing"])
                to_diff.close()
            except OSError:
                pass  # diff-tree died: collect() reports its exit
            for reader in readers:
                reader.join()

        threads = [
            threading.Thread(target=feed, daemon=True),
            threading.Thread(target=drain, args=("listing_err", listing.stderr), daemon=True),
        ]
        for thread in threads:
            thread.start()

        def collect() -> List[Commit]:
            for thread in threads:
                thread.join()
            ran = [("rev-list", listing, outputs["listing_err"])]
            ran += [("diff-tree", diffing, outputs["err"]) for diffing in diffs]
            for what, proc, err in ran:
                if proc.wait() != 0:
                    lines = err.decode("utf-8", "replace").strip().splitlines()
                    detail = lines[-1] if lines else f"exit {proc.returncode}"
                    raise GitError(f"git {what} failed: {detail}")
            if failed:
                raise failed[0]
            rows = [line.split(" ") for line in outputs["listing"].decode().splitlines()]
            if diffs:
                paths = _paths_by_commit(outputs["out"])
            else:  # one commit, one parent
                paths = {rows[0][0]: self.diff_paths(rows[0][1], rows[0][0])[0]}
            return [Commit(row[0], tuple(row[1:]), paths.get(row[0], [])) for row in rows]

        return collect

    def remerge_differences(self, merge: str, parents: Sequence[str]) -> List[str]:
        """The files where a two-parent merge commit differs from git's clean
        remerge of its parents, and every file that remerge conflicts at (a
        conflict committed as is, markers and all, is the merge's own doing):
        what the merge commit changed itself."""
        if merge not in self._remerged:
            remerged, conflicts = self.merge_tree(parents[0], parents[1], unrelated=True)
            self._remerged[merge] = sorted(
                set(self.differing_paths(remerged, merge)) | set(conflicts)
            )
        return self._remerged[merge]

    def last_change(self, tip: str, path: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """(the commit, its parents) of ``tip``'s history that last changed
        ``path``, as ``git log -1 -- PATH`` finds it; None when none did."""
        out = self.run(
            "rev-list",
            "-1",
            "--parents",
            tip,
            "--",
            f":(literal,top){path}",
        )
        words = out.decode("ascii").split()
        return (words[0], tuple(words[1:])) if words else None

    def same_change_in_history(
        self, tip: str, parents: Tuple[str, ...], tree: str, other_than: str
    ) -> Optional[str]:
        """A commit reachable from ``tip``, other than ``other_than``, with these
        parents and this tree: the same change from the same state. Only the
        commits that descend from the first parent are listed, so the cost is
        the history since it."""
        if parents:
            if not self.is_ancestor(parents[0], tip):
                return None
            scope = ["--ancestry-path", f"{parents[0]}..{tip}"]
        else:
            scope = ["--max-parents=0", tip]
        out = self.run("rev-list", "--no-commit-header", "--format=%H %T %P", *scope, "--")
        for line in out.decode("ascii").splitlines():
            oid, commit_tree, *commit_parents = line.split()
            if commit_tree == tree and tuple(commit_parents) == parents and oid != other_than:
                return oid
        return None

    def outside_history(self, oids: Sequence[str], tip: str) -> Set[str]:
        """Those of ``oids`` that are not ancestors of ``tip``, in one rev-list
        (``is_ancestor`` would start a git for each)."""
        if not oids:
            return set()
        listing = "".join(f"{oid}\n" for oid in oids) + f"^{tip}\n"
        out = self.run("rev-list", "--stdin", stdin=listing.encode("ascii"))
        return set(oids) & set(out.decode("ascii").split())

    def read_commit(self, oid: str) -> bytes:
        """A commit object's raw bytes, as ``git cat-file commit`` prints them."""
        return self._read_object(oid, "commit")

    # -- working tree (only for `oracle-guard lock`, which writes files) --
    def unstaged_paths(self) -> List[str]:
        out = self.run("diff", "--name-only", "-z", "--no-renames")
        out += self.run(
            "ls-files", "--others", "--exclude-standard", "-z", "--full-name", "--", ":(top)"
        )
        return [decode_path(p) for p in out.split(b"\0") if p]


def parse_index(out: bytes) -> Dict[str, Entry]:
    """Every stage-0 entry of an ``ls-files --stage -z`` listing, by path; an
    unmerged index is a GitError naming a path."""
    entries: Dict[str, Entry] = {}
    unmerged: List[str] = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, oid, stage = meta.decode().split()
        path = decode_path(raw_path)
        if stage != "0":  # stages 1-3 of one path: name it once
            if path not in unmerged:
                unmerged.append(path)
            continue
        entries[path] = Entry(mode, oid)
    if unmerged:
        raise GitError(
            f"the index has unmerged entries ({unmerged[0]!r}"
            f"{' and more' if len(unmerged) > 1 else ''}): finish or abort the merge first"
        )
    return entries
