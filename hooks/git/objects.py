"""The object reader: blobs, trees and commits through one cat-file --batch, blobs hashed from the packs."""

from __future__ import annotations

import io
import os
import re
import subprocess
import threading
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, cast

from oracle_guard import progress
from oracle_guard.errors import GitError
from oracle_guard.git.process import Runner, decode_path, encode_path, widen_pipe

MODE_SYMLINK = "120000"
MODE_GITLINK = "160000"

FULL_ID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")

CACHE_BLOBS_UP_TO = 64 << 10  # larger blobs are read once; keeping them costs memory
# ids read_ahead asks at once: 64 lines (2.6 kB) fit in any pipe, so the request
# is written whole before git answers, and neither side waits on the other
READ_AHEAD = 64
# Fewer blobs are streamed from cat-file alone: reading packs costs a process
# (rev-parse) and opening every index, and few blobs are small work.
READ_PACKS_FROM = 16


class BlobTooLarge(Exception):
    """A blob is larger than the reader allows; it was skipped, not loaded."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"is {size:,} bytes, above the limit of {limit:,}")
        self.size = size
        self.limit = limit


class Entry(NamedTuple):  # a tuple: trees of 100,000 files build one per path
    mode: str
    oid: str

    @property
    def is_regular(self) -> bool:
        return self.mode in ("100644", "100755")


def duplicate_entry(commit: str, path: str) -> GitError:
    # git fsck calls this duplicateEntries; checkouts and `git show` then
    # disagree on which copy is the file, so it is never judged
    return GitError(
        f"the tree of {commit[:12]} lists {path!r} twice (git fsck: "
        "duplicateEntries); a malformed tree is never judged"
    )


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


def parse_tree(
    data: bytes, oid: str, commit: str, prefix: str = ""
) -> Dict[bytes, Tuple[str, str]]:
    """A tree object's entries by name: (mode as ls-tree prints it, id);
    ``prefix``: the tree's folder, which a duplicate's message names."""
    width = len(oid) // 2  # 20 bytes for SHA-1, 32 for SHA-256
    entries: Dict[bytes, Tuple[str, str]] = {}
    at = 0
    try:
        while at < len(data):
            space = data.index(b" ", at)
            nul = data.index(b"\0", space)
            name = data[space + 1 : nul]
            if name in entries:
                raise duplicate_entry(commit, prefix + decode_path(name))
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
    return entries


def _threads() -> int:
    """One hashing thread per core, up to four (memory grows with each)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


class _Stream:
    """Lines and counted bytes from a raw pipe, through one reused buffer."""

    def __init__(self, raw: io.RawIOBase) -> None:
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

    def copy_to(self, size: int, sink: Callable[[memoryview], object]) -> bool:
        """Hand ``size`` bytes to ``sink`` in slices; False when the stream ends first."""
        while size:
            if not self._fill():
                return False
            take = min(size, self._end - self._start)
            sink(self._view[self._start : self._start + take])
            self._start += take
            size -= take
        return True


class ObjectReader:
    """One repository's objects through one long-lived ``cat-file --batch``;
    what objects say is kept, since objects do not change."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._batch: Optional[subprocess.Popen[bytes]] = None
        self._blobs: Dict[str, bytes] = {}
        self._trees: Dict[str, Dict[bytes, Tuple[str, str]]] = {}
        self._root_trees: Dict[str, str] = {}

    def close(self) -> None:
        if self._batch is not None:
            batch, self._batch = self._batch, None
            assert batch.stdin is not None  # made with stdin=PIPE
            try:
                batch.stdin.close()  # flushes: the process may be gone already
            except OSError:
                pass
            batch.wait()

    # -- the batch -------------------------------------------------------
    def _command(self) -> List[str]:
        # small pack windows: git maps packs lazily instead of whole
        return [
            "-c",
            "core.packedGitWindowSize=32m",
            "-c",
            "core.packedGitLimit=64m",
            "cat-file",
            "--batch",
        ]

    def _open(self) -> subprocess.Popen[bytes]:
        if self._batch is None:
            self._batch = self._runner.start(self._command(), stdin=True, stderr=subprocess.DEVNULL)
        return self._batch

    def _header(self, name: str) -> bytes:
        """Ask the batch for one object; its header line, b"" when git is gone."""
        proc = self._open()
        assert proc.stdin is not None and proc.stdout is not None  # made with PIPEs
        try:
            proc.stdin.write(encode_path(name) + b"\n")
            proc.stdin.flush()
            return proc.stdout.readline()
        except (BrokenPipeError, OSError):
            return b""

    def _body(self, oid: str, size: int) -> bytes:
        """The object the header announced, and its trailing newline."""
        assert self._batch is not None and self._batch.stdout is not None
        data = self._batch.stdout.read(size)
        self._batch.stdout.read(1)
        if len(data) != size:
            self.close()
            raise GitError(f"cannot read object {oid}: truncated")
        return data

    def read(self, oid: str, kind: str, limit: Optional[int] = None) -> bytes:
        """An object of ``kind`` (blob, tree, commit), whole; one above ``limit``
        bytes is read past, never held (BlobTooLarge)."""
        header = self._header(oid)
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
        return self._body(oid, size)

    def read_blob(self, oid: str, limit: Optional[int] = None) -> bytes:
        """Blob bytes; a blob above ``limit`` bytes is skipped without being
        held in memory (BlobTooLarge). Small blobs are kept."""
        cached = self._blobs.get(oid)
        if cached is not None:
            if limit is not None and len(cached) > limit:
                raise BlobTooLarge(len(cached), limit)
            return cached
        data = self.read(oid, "blob", limit)
        if len(data) <= CACHE_BLOBS_UP_TO:
            self._blobs[oid] = data
        return data

    def read_ahead(self, oids: Sequence[str], limit: Optional[int] = None) -> None:
        """Small blobs asked of the batch many ids a request, and kept: each
        read_blob of one is then a pipe round trip less. What read_blob would
        not keep (a large blob, another kind, a missing id) is passed over and
        left for it to meet as it does."""
        keep = CACHE_BLOBS_UP_TO if limit is None else min(limit, CACHE_BLOBS_UP_TO)
        wanted = [oid for oid in dict.fromkeys(oids) if oid not in self._blobs]
        for start in range(0, len(wanted), READ_AHEAD):
            if not self._read_ahead(wanted[start : start + READ_AHEAD], keep):
                return

    def _read_ahead(self, oids: Sequence[str], keep: int) -> bool:
        proc = self._open()
        assert proc.stdin is not None and proc.stdout is not None  # made with PIPEs
        out = proc.stdout
        try:
            proc.stdin.write(b"".join(encode_path(oid) + b"\n" for oid in oids))
            proc.stdin.flush()
            for oid in oids:
                parts = out.readline().split()
                if len(parts) == 2 and parts[1] == b"missing":
                    continue
                if len(parts) != 3:
                    break  # the batch is out of step, or gone
                size = int(parts[2])
                if parts[1] != b"blob" or size > keep:
                    left = size + 1  # read past, never held
                    while left:
                        chunk = out.read(min(left, 1 << 20))
                        if not chunk:
                            break
                        left -= len(chunk)
                    if left:
                        break
                    continue
                data = out.read(size + 1)
                if len(data) != size + 1 or data[-1:] != b"\n":
                    break
                self._blobs[oid] = data[:-1]
            else:
                return True
        except (OSError, ValueError):
            pass
        self.close()  # the next read opens a batch afresh, and meets what went wrong
        return False

    def resolve(self, rev: str) -> Optional[str]:
        """The commit ``rev`` names, through the batch, None when it names
        none; the commit is read, and its tree kept."""
        header = self._header(f"{rev}^{{commit}}")
        if header.endswith((b" missing\n", b" ambiguous\n")):
            return None  # no such commit, or an unborn HEAD: rev-parse's "no" too
        parts = header.split()
        oid = parts[0].decode("ascii", "replace") if parts else ""
        if len(parts) != 3 or parts[1] != b"commit" or not FULL_ID.match(oid):
            self.close()
            what = header.decode("utf-8", "replace").strip() or "git cat-file exited"
            raise GitError(f"cannot resolve {rev}: {what}")
        data = self._body(oid, int(parts[2]))
        first = data.split(b"\n", 1)[0]
        if first.startswith(b"tree "):
            self._root_trees.setdefault(oid, first[5:].decode("ascii", "replace"))
        return oid

    # -- trees, walked -----------------------------------------------------
    def known_tree(self, tree: str) -> str:
        """Let a tree id stand where a commit is read for its tree."""
        self._root_trees[tree] = tree
        return tree

    def root_tree(self, commit: str) -> str:
        """The commit's tree id, read once: every walked lookup starts here."""
        if commit not in self._root_trees:
            header = self.read(commit, "commit").split(b"\n", 1)[0]
            if not header.startswith(b"tree "):
                raise GitError(f"commit {commit[:12]} names no tree")
            self._root_trees[commit] = header[5:].decode()
        return self._root_trees[commit]

    def tree(self, oid: str, commit: str, prefix: str = "") -> Dict[bytes, Tuple[str, str]]:
        """A tree object's entries by name (``parse_tree``), read once."""
        if oid not in self._trees:
            self._trees[oid] = parse_tree(self.read(oid, "tree"), oid, commit, prefix)
        return self._trees[oid]

    def walk(self, commit: str, path: str) -> Optional[Tuple[str, str]]:
        """(mode, id) of whatever ``path`` names in the commit's tree, a folder included."""
        tree = self.root_tree(commit)
        *folders, name = encode_path(path).split(b"/")
        for folder in folders:
            found = self.tree(tree, commit).get(folder)
            if found is None or found[0] != "040000":
                return None
            tree = found[1]
        return self.tree(tree, commit).get(name)

    def entries_under(self, commit: str, folders: Sequence[str]) -> Dict[str, Entry]:
        """The files at or below each folder: its tree is found by walking and its
        trees read through the batch, in the order ``ls-tree -r`` lists them. A
        folder that is a file, link or submodule is that entry."""
        entries: Dict[str, Entry] = {}
        for folder in folders:
            found = self.walk(commit, folder)
            if found is None:
                continue
            mode, oid = found
            if mode != "040000":
                entries[folder] = Entry(mode, oid)
                continue
            # depth first without recursion: a tree may nest deeper than Python's stack
            stack = [(folder + "/", iter(self.tree(oid, commit, folder + "/").items()))]
            while stack:
                prefix, items = stack[-1]
                for name, (mode, oid) in items:
                    path = prefix + decode_path(name)
                    if mode == "040000":
                        subtree = self.tree(oid, commit, path + "/")
                        stack.append((path + "/", iter(subtree.items())))
                        break
                    entries[path] = Entry(mode, oid)
                else:
                    stack.pop()
        return entries

    # -- blobs, hashed ---------------------------------------------------
    def sha256_blobs(
        self,
        oids: Sequence[str],
        objects_directory: Callable[[], str],
        expected: Optional[Mapping[str, str]] = None,
    ) -> Dict[str, str]:
        """The SHA-256 of each blob, in the order asked. Many blobs are read from
        the packs in this process (pack.py, in ``objects_directory()``); what it
        leaves, and a few blobs, are streamed from a ``cat-file --batch`` of their
        own. ``expected``: pack.sha256_packed's."""
        wanted = list(dict.fromkeys(oids))
        if not wanted:
            return {}
        counter = progress.counting("hashing", len(wanted))  # shown on a terminal only
        digests: Dict[str, str] = {}
        rest = wanted
        if len(wanted) >= READ_PACKS_FROM:
            # deferred: only many blobs read the packs (zlib, mmap)
            from oracle_guard.git import pack

            digests, rest = pack.sha256_packed(
                objects_directory(), wanted, _threads(), expected, counter.advance
            )
        if rest:
            digests.update(self.sha256_streamed(rest, counter.advance))
        return {oid: digests[oid] for oid in wanted}

    def sha256_streamed(
        self, wanted: Sequence[str], advance: Callable[[int], None] = lambda n: None
    ) -> Dict[str, str]:
        """A second ``cat-file --batch`` is fed every id at once by a thread while
        this one hashes what it prints, so git inflates the next blob while the
        last is hashed, and no blob is held whole."""
        import hashlib  # deferred: it loads OpenSSL, which only hashing needs

        proc = self._runner.start(self._command(), stdin=True, stderr=subprocess.DEVNULL, bufsize=0)
        requests = proc.stdin
        assert requests is not None and proc.stdout is not None  # made with PIPEs
        widen_pipe(proc.stdout)
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
        out = _Stream(cast(io.RawIOBase, proc.stdout))  # bufsize=0: the pipe's own FileIO
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
