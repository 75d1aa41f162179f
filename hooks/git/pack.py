"""The SHA-256 of blobs read straight from a repository's pack files.

Only the common case is read here: version-2 ``.idx`` files of a SHA-1
repository and blobs stored whole. Anything else (a delta, a loose object, an
object of an alternate, a pack it cannot open) is left to ``git cat-file
--batch``. A pack it does read that proves corrupt is an error, never a
fallback: ``git cat-file`` reads the same bytes.

Why not git: piping a gigabyte out of ``cat-file`` costs more CPU in this
process than git spends inflating it. Here hashlib and zlib run over a mapped
pack in threads, which they let go of the GIL, one per core; the blocks deflate
stores as they are (incompressible data: most binary fixtures) are hashed where
they lie, not inflated.

Integrity: each ``.idx`` is checked against its own SHA-1 trailer and must
name the pack beside it (the pack's trailer); each blob must hold its stated
size, and its packed bytes must match the CRC32 the index holds for them unless
its SHA-256 is the one the caller expects (a lock's digest): no corruption makes
those bytes, and the CRC32 pass costs a third of the hashing.
"""

from __future__ import annotations

import glob
import hashlib
import mmap
import os
import struct
import threading
import zlib
from typing import Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from oracle_guard.errors import GitError

_IDX_MAGIC = b"\377tOc"
_HEADER = 8 + 256 * 4  # magic, version, fan-out table
_BLOB = 3
_CHUNK = 1 << 20  # compressed bytes fed to zlib at a time
_OUT = 2 << 20  # inflated bytes handed to the hash at a time
_DROP_AFTER = 8 << 20  # mapped bytes read before they are dropped from memory


class _Unreadable(Exception):
    """A pack or index this reader does not read (git may): cat-file is asked."""


class _Window:
    """What one thread has read of a mapped pack since it last let go: mapped
    pages count in the process's resident size until dropped (the page cache
    keeps them), and a pack can be larger than memory."""

    def __init__(self) -> None:
        self.mapped: Optional[mmap.mmap] = None
        self.start = self.end = 0

    def read(self, mapped: mmap.mmap, start: int, end: int) -> None:
        if mapped is not self.mapped:
            self.drop()
            self.mapped, self.start = mapped, start
        self.end = end
        if self.end - self.start >= _DROP_AFTER:
            self.drop()
            self.start = end

    def drop(self) -> None:
        if self.mapped is None or not hasattr(self.mapped, "madvise"):
            return
        page = mmap.PAGESIZE
        first = self.start // page * page
        if self.end > first:
            try:
                self.mapped.madvise(mmap.MADV_DONTNEED, first, self.end - first)
            except (OSError, ValueError):
                pass  # memory only; the bytes were read
        self.start = self.end


class Located(NamedTuple):
    oid: str
    pack: Pack
    offset: int
    crc: int  # of the object's packed bytes, from the index


class Pack:
    """One ``.pack`` and its version-2 ``.idx``, both mapped."""

    def __init__(self, idx_path: str) -> None:
        self.name = os.path.basename(idx_path)
        self.path = idx_path[: -len(".idx")] + ".pack"
        self._idx = self._pack = None
        try:
            with open(idx_path, "rb") as f:
                self._idx = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            with open(self.path, "rb") as f:
                self._pack = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:  # gone, unreadable, empty, too big to map
            self.close()
            raise _Unreadable(str(exc)) from None
        try:
            self._check()
        except _Unreadable:
            self.close()
            raise
        self.size = len(self._pack)

    def _check(self) -> None:
        idx, pack = self._idx, self._pack
        assert idx is not None and pack is not None
        if len(idx) < _HEADER + 40 or idx[:8] != _IDX_MAGIC + b"\0\0\0\2":
            raise _Unreadable("not a version-2 index")  # version 1 has no magic
        self.count = count = struct.unpack_from(">I", idx, _HEADER - 4)[0]
        self._names = _HEADER
        self._crcs = _HEADER + 20 * count
        self._offsets = _HEADER + 24 * count
        self._large = _HEADER + 28 * count
        large = len(idx) - 40 - self._large
        if large < 0 or large % 8:
            raise _Unreadable("an index of the wrong size")  # or of SHA-256 names
        if hashlib.sha1(memoryview(idx)[:-20]).digest() != idx[-20:]:
            raise GitError(f"pack index {self.name} is corrupt: its checksum does not match")
        if hasattr(idx, "madvise"):
            idx.madvise(mmap.MADV_DONTNEED)  # read whole once; lookups touch a few pages
        if (
            len(pack) < 32
            or pack[:4] != b"PACK"
            or struct.unpack_from(">I", pack, 8)[0] != count
            or pack[-20:] != idx[-40:-20]
        ):
            raise GitError(
                f"pack {os.path.basename(self.path)} does not match its index "
                f"{self.name} (truncated or replaced)"
            )

    def close(self) -> None:
        for mapped in (self._idx, self._pack):
            if mapped is not None:
                try:
                    mapped.close()
                except BufferError:  # a view in a traceback: unmapped once collected
                    pass
        self._idx = self._pack = None

    def find(self, name: bytes) -> Optional[Tuple[int, int]]:
        """(offset in the pack, CRC32 of its packed bytes) of the object ``name``
        (20 bytes), or None when this pack lacks it."""
        idx = self._idx
        assert idx is not None
        first = name[0]
        low = struct.unpack_from(">I", idx, 8 + 4 * (first - 1))[0] if first else 0
        high = struct.unpack_from(">I", idx, 8 + 4 * first)[0]
        while low < high:
            middle = (low + high) // 2
            at = self._names + 20 * middle
            found = idx[at : at + 20]
            if found == name:
                crc = struct.unpack_from(">I", idx, self._crcs + 4 * middle)[0]
                offset = struct.unpack_from(">I", idx, self._offsets + 4 * middle)[0]
                if offset & 0x80000000:  # an index into the 8-byte offsets
                    at = self._large + 8 * (offset & 0x7FFFFFFF)
                    if at + 8 > len(idx) - 40:
                        raise GitError(f"pack index {self.name} is corrupt: a bad offset")
                    offset = struct.unpack_from(">Q", idx, at)[0]
                return offset, crc
            if found < name:
                low = middle + 1
            else:
                high = middle
        return None

    def view(self) -> memoryview:
        assert self._pack is not None
        return memoryview(self._pack)

    def sha256_of(
        self, item: Located, view: memoryview, window: _Window, expected: Optional[str] = None
    ) -> Optional[str]:
        """The blob's SHA-256, or None when it is stored otherwise (a delta, not a
        blob): cat-file reads it. Corrupt bytes raise GitError; the CRC32 is
        checked unless the digest is ``expected``."""
        end = self.size - 20  # the trailer
        at = item.offset
        if not 12 <= at < end:
            raise self._corrupt(item.oid, "its offset lies outside the pack")
        byte = view[at]
        kind, size, shift = (byte >> 4) & 7, byte & 15, 4
        at += 1
        while byte & 0x80:
            if at >= end or shift > 63:
                raise self._corrupt(item.oid, "a bad object header")
            byte = view[at]
            size |= (byte & 0x7F) << shift
            shift += 7
            at += 1
        if kind != _BLOB:
            return None
        read = self._stored(item, at, size, view, window)
        if read is None:
            read = self._inflated(item, at, size, view, window)
        digest, packed_end = read
        if digest != expected and self._crc(view, item.offset, packed_end) != item.crc:
            raise self._corrupt(item.oid, "its packed bytes do not match their CRC32 in the index")
        return digest

    def _crc(self, view: memoryview, start: int, end: int) -> int:
        """A second pass over bytes read before, with a window of its own: the
        thread's window has moved past them."""
        crc, window = 0, _Window()
        while start < end:
            upto = min(end, start + _DROP_AFTER)
            crc = zlib.crc32(view[start:upto], crc)
            window.read(self._pack, start, upto)  # type: ignore[arg-type]
            start = upto
        window.drop()
        return crc

    def _stored(
        self, item: Located, at: int, size: int, view: memoryview, window: _Window
    ) -> Optional[Tuple[str, int]]:
        """(digest, where its packed bytes end) of a zlib stream of stored
        (uncompressed) blocks only, as deflate writes incompressible data: hashed
        where it lies, no inflating, and no adler32 (the CRC32 stands for it).
        None for a stream with a compressed block: zlib inflates it."""
        end = self.size - 20
        if at + 2 > end or view[at] != 0x78 or (view[at] << 8 | view[at + 1]) % 31:
            return None  # not a plain zlib header (a preset dictionary, say)
        if view[at + 1] & 0x20:
            return None
        at += 2
        digest = hashlib.sha256()
        blocks: List[memoryview] = []
        since = at  # the packed bytes not yet hashed
        total = 0
        while True:
            if at + 5 > end:
                return None  # zlib names the fault
            header = view[at]
            if header & 6:  # BTYPE is not 00: a compressed block
                return None
            length = view[at + 1] | view[at + 2] << 8
            if length ^ (view[at + 3] | view[at + 4] << 8) != 0xFFFF or at + 5 + length > end:
                return None
            total += length
            if total > size:
                return None
            blocks.append(view[at + 5 : at + 5 + length])
            at += 5 + length
            final = header & 1
            if final:
                at += 4  # the adler32
                if at > end:
                    return None
            # a few large calls, not one per block: each lets go of the GIL and
            # takes it back, and a thread waits for it when another holds it
            if final or at - since >= _DROP_AFTER:
                # one copy and one call, not one call a block: each call lets go
                # of the GIL and waits to take it back from the other thread
                digest.update(blocks[0] if len(blocks) == 1 else b"".join(blocks))
                blocks.clear()
                window.read(self._pack, since, at)  # type: ignore[arg-type]
                since = at
            if final:
                break
        if total != size:
            raise self._corrupt(item.oid, f"it holds other than its {size:,} bytes")
        return digest.hexdigest(), at

    def _inflated(
        self, item: Located, at: int, size: int, view: memoryview, window: _Window
    ) -> Tuple[str, int]:
        """(digest, where its packed bytes end) of a compressed blob, inflated by
        zlib, which checks the adler32."""
        end = self.size - 20
        digest = hashlib.sha256()
        inflate = zlib.decompressobj()
        inflated = 0
        used = at
        # zlib copies what it is fed past the stream's end: feed at most what
        # deflate makes of ``size`` bytes (zlib's compressBound) at first
        feed = size + (size >> 12) + (size >> 14) + (size >> 25) + 64
        fed = at  # where the chunk being inflated starts
        try:
            while True:
                if inflate.unconsumed_tail:
                    data = inflate.decompress(inflate.unconsumed_tail, _OUT)
                else:
                    if at >= end:
                        raise self._corrupt(item.oid, "it ends past the end of the pack")
                    fed, at = at, min(at + min(_CHUNK, feed), end)
                    feed = _CHUNK
                    data = inflate.decompress(view[fed:at], _OUT)
                ended = inflate.eof
                if ended or not inflate.unconsumed_tail:  # the chunk is used up
                    used = at - len(inflate.unused_data)
                    window.read(self._pack, fed, used)  # type: ignore[arg-type]
                inflated += len(data)
                if inflated > size:
                    break
                digest.update(data)
                if ended:
                    break
        except zlib.error as exc:
            raise self._corrupt(item.oid, f"zlib: {exc}") from None
        if inflated != size:
            raise self._corrupt(item.oid, f"it inflates to other than its {size:,} bytes")
        return digest.hexdigest(), used

    def _corrupt(self, oid: str, why: str) -> GitError:
        return GitError(
            f"cannot read object {oid}: corrupt in {os.path.basename(self.path)} ({why})"
        )


def open_packs(objects: str) -> List[Pack]:
    packs = []
    for idx in sorted(glob.glob(os.path.join(glob.escape(objects), "pack", "*.idx"))):
        try:
            packs.append(Pack(idx))
        except _Unreadable:
            continue  # cat-file reads what it holds, or reports why not
        except GitError:
            for pack in packs:
                pack.close()
            raise
    return packs


def locate(packs: Sequence[Pack], oids: Sequence[str]) -> Tuple[List[Located], List[str]]:
    """The objects found in a pack, in pack order, and the ids of the rest."""
    found: List[Located] = []
    rest: List[str] = []
    for oid in oids:
        if len(oid) == 40:
            name = bytes.fromhex(oid)
            for pack in packs:
                place = pack.find(name)
                if place is not None:
                    found.append(Located(oid, pack, *place))
                    break
            else:
                rest.append(oid)
        else:
            rest.append(oid)
    found.sort(key=lambda item: (id(item.pack), item.offset))
    return found, rest


def sha256_packed(
    objects: str,
    oids: Sequence[str],
    threads: int = 2,
    expected: Optional[Mapping[str, str]] = None,
    advance: Callable[[int], None] = lambda n: None,
) -> Tuple[Dict[str, str], List[str]]:
    """(digests of the blobs read from packs, ids left for cat-file). Pack order
    keeps reads sequential; ``threads`` workers take the next blob in turn.
    ``expected``: the digest the caller expects of an id, which spares it the
    CRC32 pass when it is the digest found. ``advance(1)`` after each blob hashed."""
    expected = expected or {}
    packs = open_packs(objects)
    try:
        found, rest = locate(packs, oids)
        digests: Dict[str, str] = {}
        if not found:
            return digests, rest
        views = {id(pack): pack.view() for pack in packs}
        work: Iterator[Located] = iter(found)
        failures: List[BaseException] = []
        declined: List[str] = []

        def worker() -> None:
            window = _Window()
            try:
                for item in work:  # next() on one iterator: each item is taken once
                    if failures:
                        return
                    view = views[id(item.pack)]
                    digest = item.pack.sha256_of(item, view, window, expected.get(item.oid))
                    if digest is None:
                        declined.append(item.oid)
                    else:
                        digests[item.oid] = digest
                        advance(1)
            except BaseException as exc:  # the caller raises it
                failures.append(exc.with_traceback(None))  # its frames hold views of the pack
            finally:
                window.drop()

        running = [threading.Thread(target=worker, daemon=True) for _ in range(threads - 1)]
        for thread in running:
            thread.start()
        worker()
        for thread in running:
            thread.join()
        for view in views.values():
            try:
                view.release()
            except BufferError:  # a slice in a traceback: released once collected
                pass
        if failures:
            raise failures[0]
        return digests, rest + declined
    finally:
        for pack in packs:
            pack.close()
