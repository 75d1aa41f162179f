"""gitignore-style path patterns, matched against repo-relative POSIX paths.

Semantics follow gitignore(5) and git's wildmatch (``git ls-files -i -c
--exclude=PATTERN``), byte for byte: a pattern with a slash at the start or
middle is anchored to the repository root, otherwise it matches a name at any
depth; a trailing slash matches folders only; ``**`` spans folders; ``*``,
``?`` and ``[...]`` never match ``/``; a path also matches when one of its
parent folders does. Negation (``!``) is not supported: the contract schema
rejects it. ``parsing/wildmatch.py`` turns one pattern into a regex over git's
bytes; this module matches a pattern against a path and its parent folders, and
holds the sets of patterns a contract names and batches of paths matched at once.

``fold_case`` is oracle-guard's rule for names that are one file on macOS and
Windows: a name matches when one of its case twins matches as written. On
ASCII that is git's own matching with core.ignoreCase, except in classes: a
class holds a letter when it holds either case, and ``[!...]`` negates before
that (``t[!a-g]n`` matches 'tEn', so it takes 'ten' too; git's does not);
beyond ASCII, path and pattern are also compared in their NFC and NFD forms
with letters folded by Unicode simple case folding ('É' is 'é', KELVIN SIGN is
'k', 'ß' stays 'ß'). Wildcards still count bytes.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from oracle_guard.parsing.wildmatch import (
    NEVER,
    ONE,
    TWIN,
    Malformed,
    git_bytes,
    pattern_regex,
    tokenize,
)

# -- fold_case: twins on case-insensitive, normalizing file systems -----------


@functools.lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    folded = ch.casefold()
    if len(folded) == 1:
        return folded
    lower = ch.lower()
    return lower if len(lower) == 1 else ch  # 'ß' stays 'ß', as in a case-insensitive regex


def _fold(text: str) -> str:
    """Non-ASCII letters folded (ASCII is left to the regex engine)."""
    return "".join([ch if ch < "\x80" else _fold_char(ch) for ch in text])


def _fold_forms(text: str) -> Tuple[str, ...]:
    """``text`` as written, then folded as written, in NFC and in NFD (one form
    for ASCII). The first keeps a name's bytes where folding would change its
    length (KELVIN SIGN, three bytes, folds to 'k')."""
    if text.isascii():
        return (text,)
    forms = [text, _fold(text)]
    for form in ("NFC", "NFD"):
        forms.append(unicodedata.normalize(form, _fold(unicodedata.normalize(form, text))))
    return tuple(dict.fromkeys(forms))


def _path_forms(path: str) -> Tuple[bytes, ...]:
    return tuple(git_bytes(form) for form in _fold_forms(path))


# -- patterns ------------------------------------------------------------------

_FLAGS = re.DOTALL
_FOLD_FLAGS = re.DOTALL | re.IGNORECASE


class Pattern:
    """One pattern: ``_full`` matches a whole path, ``_reach`` a path or (the
    only choice for a folder pattern) one of its parent folders, in one call."""

    __slots__ = ("text", "dir_only", "_full", "_reach", "_full_fold", "_reach_fold", "_batch")

    def __init__(self, text: str) -> None:
        self.text = text
        rx, self.dir_only = pattern_regex(text, fold=False)
        reach = b"(?=/)" if self.dir_only else b"(?=/|\\Z)"
        self._full = re.compile(rx + b"\\Z", _FLAGS)
        self._reach = re.compile(rx + reach, _FLAGS)
        folds = [pattern_regex(form, fold=TWIN)[0] for form in _fold_forms(text)]
        self._full_fold = tuple(re.compile(f + b"\\Z", _FOLD_FLAGS) for f in folds)
        self._reach_fold = tuple(re.compile(f + reach, _FOLD_FLAGS) for f in folds)
        self._batch: Optional[Tuple[Tuple[_InBatch, ...], Tuple[_InBatch, ...]]] = None

    def in_batch(self, fold_case: bool = False) -> Tuple[_InBatch, ...]:
        """The pattern as regexes over a batch of paths (``AnyOf.batch``): one,
        or with ``fold_case`` one per form of the pattern (none when it is one
        git rejects)."""
        if self._batch is None:
            exact = _in_batch(self.text, self.dir_only, False)
            folds = [_in_batch(form, self.dir_only, True) for form in _fold_forms(self.text)]
            self._batch = (
                tuple(b for b in (exact,) if b is not None),
                tuple(b for b in folds if b is not None),
            )
        return self._batch[fold_case]

    @property
    def folder(self) -> Optional[str]:
        """The literal path every match lies at or below: the text before the
        first wildcard, cut back to a whole folder (all of it when there is no
        wildcard). None when a match could lie anywhere: an unanchored pattern,
        or a wildcard in the first part."""
        body = self.text[:-1] if self.dir_only else self.text
        if "/" not in body:
            return None
        body = body[1:] if body.startswith("/") else body
        first = next((i for i, ch in enumerate(body) if ch in "*?[\\"), None)
        folder = body if first is None else body[:first].rpartition("/")[0]
        # git takes such text as a path of its own ('..', '/x'): list everything instead
        odd = "\0" in folder or any(part in ("", ".", "..") for part in folder.split("/"))
        return None if odd else folder

    def matches(self, path: str, fold_case: bool = False) -> bool:
        """With ``fold_case``, compare as macOS and Windows file systems do:
        ignoring letter case and Unicode normalization (NFC vs NFD)."""
        if fold_case:
            return any(rx.match(form) for form in _path_forms(path) for rx in self._reach_fold)
        return self._reach.match(git_bytes(path)) is not None

    def __repr__(self) -> str:
        return f"Pattern({self.text!r})"


@functools.cache
def compile_pattern(text: str) -> Pattern:
    return Pattern(text)


# -- batches: many paths in one string, each after a NUL, matched in C ---------


class _InBatch(NamedTuple):
    """One pattern (or one fold form of it) over a batch ``\0p1\0p2...\0``."""

    source: bytes  # matches at a path's start, never past its end
    needle: Optional[bytes]  # bytes in the batch near every match (lower case for fold)
    anchored: bool  # the needle is the NUL and the text every match starts with
    flags: int


def _in_batch(text: str, dir_only: bool, fold: bool) -> Optional[_InBatch]:
    rx = pattern_regex(text, TWIN if fold else False, sep=True)[0]
    if rx == NEVER:
        return None
    needle, anchored = _needle(text)
    if needle is not None:
        if b"\0" in (needle[1:] if anchored else needle):  # no path holds a NUL
            return None
        needle = needle.lower() if fold else needle  # bytes.lower: ASCII, as IGNORECASE
    source = rx + (b"(?=/)" if dir_only else b"(?=[/\x00])")
    return _InBatch(source, needle, anchored, _FOLD_FLAGS if fold else _FLAGS)


def _needle(text: str) -> Tuple[Optional[bytes], bool]:
    """(bytes every path the pattern matches holds, whether they are a NUL and
    the path's start): its literal text before the first wildcard when it is
    anchored, else its longest literal run; None when it has none."""
    body = git_bytes(text)
    if body.endswith(b"/"):
        body = body[:-1]
    pathname = b"/" in body
    if pathname:
        body = body[1:] if body.startswith(b"/") else body
        k = next((i for i, ch in enumerate(body) if ch in b"*?[\\"), len(body))
        if k:
            return b"\0" + body[:k], True
    try:
        tokens = tokenize(body, pathname, False)
    except Malformed:
        return None, False
    runs = [b""]
    for kind, members in tokens:
        if kind == ONE and len(members) == 1:
            runs[-1] += bytes(members)
        else:
            runs.append(b"")
    longest = max(runs, key=len)
    return (longest or None), False


def _nul_joined(paths: Sequence[bytes]) -> bytes:
    return b"\0" + b"\0".join(paths) + b"\0"  # git's names never hold a NUL


def _union(rxs: Sequence[re.Pattern[bytes]], flags: int) -> re.Pattern[bytes]:
    sources = list(dict.fromkeys(rx.pattern for rx in rxs))  # a group name once
    return re.compile(b"|".join(b"(?:" + s + b")" for s in sources) or NEVER, flags)


def _holding(batch: bytes, hay: bytes, needle: bytes) -> List[bytes]:
    """The paths of ``batch`` whose text in ``hay`` (the batch or its lower
    case) holds ``needle``."""
    out = []
    at = hay.find(needle)
    while at != -1:
        start = hay.rfind(b"\0", 0, at + 1)
        end = hay.find(b"\0", at + len(needle))
        if end == -1:  # a needle that ends at a NUL: no path holds it
            break
        out.append(batch[start + 1 : end])
        at = hay.find(needle, end)
    return out


@functools.lru_cache(maxsize=256)
def _union_of(sources: Tuple[bytes, ...], flags: int) -> re.Pattern[bytes]:
    union = b"|".join(b"(?:" + s + b")" for s in dict.fromkeys(sources))
    return re.compile(b"\x00(?P<path>(?:" + union + b")[^\x00]*)(?=\x00)", flags)


def _batch_union(ones: Sequence[_InBatch]) -> re.Pattern[bytes]:
    """One regex for many: findall names each path any of them matches."""
    return _union_of(tuple(one.source for one in ones), ones[0].flags)


def _named(rx: re.Pattern[bytes], batch: bytes) -> List[bytes]:
    """The paths ``rx``'s group 'path' names, in order: findall's list, in C,
    when that is its only group (before Python 3.11 atomic groups add groups
    of their own, and findall would name them all)."""
    if rx.groups == 1:
        return rx.findall(batch)
    return [match.group("path") for match in rx.finditer(batch)]


@functools.lru_cache(maxsize=256)
def _missed_by(sources: Tuple[bytes, ...]) -> re.Pattern[bytes]:
    """A regex whose findall names each path none of ``sources`` matches."""
    union = b"|".join(b"(?:" + s + b")" for s in dict.fromkeys(sources))
    return re.compile(b"\x00(?!" + union + b")(?P<path>[^\x00]+)", _FLAGS)


class AnyOf:
    """Does any of ``patterns`` match? One regex call per path and parent folder,
    instead of one per pattern: most paths match nothing, and this says so fast."""

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        files = [p for p in patterns if not p.dir_only]
        self._patterns = list(patterns)
        # does a folder or one of its parents match? paths share folders, so ask once
        self._folders: Dict[Tuple[bytes, bool], bool] = {}
        self._full = _union([p._full for p in files], _FLAGS)
        self._prefix = _union([p._full for p in patterns], _FLAGS)
        self._full_fold = _union([rx for p in files for rx in p._full_fold], _FOLD_FLAGS)
        self._prefix_fold = _union([rx for p in patterns for rx in p._full_fold], _FOLD_FLAGS)

    def hits(self, paths: Sequence[bytes], fold_case: bool = False) -> Set[bytes]:
        """The paths (git's bytes, never empty) any pattern matches: ``matches``
        for many at once, in C. A pattern whose literal text the batch lacks is
        skipped; one with text few paths hold is matched on those alone."""
        if not paths:
            return set()
        batch = _nul_joined(paths)
        if fold_case and not batch.isascii():  # a name's other forms: one by one
            odd = [p for p in paths if not p.isascii()]
            found = self.hits([p for p in paths if p.isascii()], True)
            found.update(p for p in odd if self.matches(p.decode("utf-8", "surrogateescape"), True))
            return found
        hay = batch.lower() if fold_case else batch
        found = set()
        everywhere: List[_InBatch] = []  # matched on every path
        few: List[_InBatch] = []  # matched on the paths that hold their needle
        candidates: Set[bytes] = set()
        for one in self._in_batch(fold_case):
            if one.needle is None:
                everywhere.append(one)
            elif one.anchored:  # findall looks for the needle itself, fast
                if one.needle in hay:  # compiled only now: most never are
                    found.update(_named(_batch_union([one]), batch))
            else:
                count = hay.count(one.needle)
                if count * 8 > len(paths):
                    everywhere.append(one)
                elif count:
                    few.append(one)
                    candidates.update(_holding(batch, hay, one.needle))
        if few:
            found.update(_named(_batch_union(few), _nul_joined(list(candidates))))
        if everywhere:
            found.update(_named(_batch_union(everywhere), batch))
        return found

    def misses(self, paths: Sequence[bytes]) -> List[bytes]:
        """The paths (git's bytes, never empty) no pattern matches, in their
        order, from one findall: a pattern whose literal text the batch lacks
        takes no path, so it is left out."""
        if not paths:
            return []
        batch = _nul_joined(paths)
        sources = tuple(
            one.source for one in self._in_batch(False) if one.needle is None or one.needle in batch
        )
        return _named(_missed_by(sources), batch) if sources else list(paths)

    def _in_batch(self, fold_case: bool) -> List[_InBatch]:
        return [one for p in self._patterns for one in p.in_batch(fold_case)]

    def matches(self, path: str, fold_case: bool = False) -> bool:
        if fold_case:
            full = self._full_fold
            forms = _path_forms(path)
        else:
            full = self._full
            forms = (git_bytes(path),)
        for raw in forms:
            if full.match(raw):
                return True
            folder = raw.rpartition(b"/")[0]
            if folder and self._folder_matches(folder, fold_case):
                return True
        return False

    def _folder_matches(self, folder: bytes, fold_case: bool) -> bool:
        """Does ``folder`` or a parent of it match? Remembered per folder."""
        prefix = self._prefix_fold if fold_case else self._prefix
        unknown = []  # from ``folder`` up to the nearest folder already asked
        known = False
        while folder:
            answer = self._folders.get((folder, fold_case))
            if answer is not None:
                known = answer
                break
            unknown.append(folder)
            folder = folder.rpartition(b"/")[0]
        if len(self._folders) > 100_000:
            self._folders.clear()
        for folder in reversed(unknown):  # downwards: a match above holds below
            known = known or bool(prefix.match(folder))
            self._folders[(folder, fold_case)] = known
        return known


class PatternSet:
    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns: List[Pattern] = [compile_pattern(p) for p in patterns]
        self._any = AnyOf(self.patterns)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def folders(self) -> Optional[List[str]]:
        """Folders that hold every match (``Pattern.folder``), or None."""
        folders = [pattern.folder for pattern in self.patterns]
        if None in folders:
            return None
        return sorted(set(folders))  # type: ignore[arg-type]

    def matches(self, path: str) -> bool:
        """Does any pattern match? (``first_match`` also says which.)"""
        return self._any.matches(path)

    def first_match(self, path: str, fold_case: bool = False) -> Optional[str]:
        if not self._any.matches(path, fold_case):
            return None
        for pattern in self.patterns:
            if pattern.matches(path, fold_case):
                return pattern.text
        return None

    def misses(self, paths: Sequence[bytes]) -> List[bytes]:
        """The paths (git's bytes) no pattern matches: ``AnyOf.misses``."""
        return self._any.misses(paths)

    def select(self, paths: Iterable[str]) -> List[str]:
        return sorted(p for p in paths if self.first_match(p) is not None)
