"""gitignore-style path patterns, matched against repo-relative POSIX paths.

Semantics follow gitignore(5) and git's wildmatch (``git ls-files -i -c
--exclude=PATTERN``), byte for byte: a pattern with a slash at the start or
middle is anchored to the repository root, otherwise it matches a name at any
depth; a trailing slash matches folders only; ``**`` spans folders; ``*``,
``?`` and ``[...]`` never match ``/``; a path also matches when one of its
parent folders does. A pattern git would reject (an unclosed ``[``, a trailing
``\\``, an unknown ``[:class:]``) matches nothing, as in git.
Negation (``!``) is not supported: the contract schema rejects it.

Matching is on bytes, as in git: a path (a str decoded from git's bytes with
``surrogateescape``) and a pattern are encoded back to UTF-8 first, so ``?``
and ``[...]`` match one byte (``é`` is two, ``??``), ranges and ``[^...]``
compare bytes, and a non-UTF-8 name matches as its raw bytes. The POSIX classes
are ASCII only, as in git.

``fold_case`` is oracle-guard's rule for names that are one file on macOS and
Windows: a name matches when one of its case twins matches as written. On
ASCII that is git's own matching with core.ignoreCase, except in classes: a
class holds a letter when it holds either case, and ``[!...]`` negates before
that (``t[!a-g]n`` matches 'tEn', so it takes 'ten' too; git's does not);
beyond ASCII, path and pattern are also compared in their NFC and NFD forms
with letters folded by Unicode simple case folding ('É' is 'é', KELVIN SIGN is
'k', 'ß' stays 'ß'). Wildcards still count bytes.

Patterns become Python regexes over bytes that cannot backtrack without bound:
in every part of a name, the text between two ``*`` is taken at its leftmost
place and never given back, and between two ``**`` the folders are too (an
atomic group: a glob between wildcards is best matched as early as possible).
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from typing import (
    Dict,
    FrozenSet,
    Iterable,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

_NEVER = b"(?!)"
_SLASH = ord("/")
_ALL = frozenset(range(256))
_ANY_BUT_SLASH = _ALL - {_SLASH}
_NUL = frozenset((0,))
# a name's bytes, as one regex class: in a batch (``sep``) NUL ends a path too
_NAME = {False: b"[^/]", True: b"[^/\\x00]"}


def _ascii(test) -> FrozenSet[int]:
    return frozenset(b for b in range(128) if test(chr(b)))


# POSIX classes as git's wildmatch defines them: ASCII bytes only, C locale.
_POSIX: Dict[bytes, FrozenSet[int]] = {
    b"alnum": _ascii(str.isalnum),
    b"alpha": _ascii(str.isalpha),
    b"blank": frozenset(b" \t"),
    b"cntrl": frozenset(list(range(32)) + [127]),
    b"digit": _ascii(str.isdigit),
    b"graph": frozenset(range(33, 127)),
    b"lower": _ascii(str.islower),
    b"print": frozenset(range(32, 127)),
    b"punct": frozenset(range(33, 127)) - _ascii(str.isalnum),
    b"space": frozenset(b" \t\n\v\f\r"),
    b"upper": _ascii(str.isupper),
    b"xdigit": frozenset(b"0123456789abcdefABCDEF"),
}
_SWAP = {b: b ^ 0x20 for b in range(256) if 65 <= b <= 90 or 97 <= b <= 122}


class _Malformed(Exception):
    """git's wildmatch aborts on this pattern: it matches nothing."""


def _encode(text: str) -> bytes:
    """The bytes git has for ``text``: UTF-8, a surrogate escape as its byte."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate no git name decodes to
        return b"".join(
            ch.encode("utf-8", "surrogateescape")
            if not 0xD800 <= ord(ch) < 0xDC80
            else ch.encode("utf-8", "surrogatepass")
            for ch in text
        )


# -- translation: git's dowild() with WM_PATHNAME, as a regex over bytes -------

# fold_case's classes: a name is protected when any case twin of it matches as
# written, so '[!a-g]' (which matches 'E' in 'tEn') also takes 'e' ('ten', the
# same file on macOS); git's WM_CASEFOLD negates after folding and would not
TWIN = "twin"
Fold = Union[bool, str]  # False, True (WM_CASEFOLD) or TWIN


def _class(pattern: bytes, i: int, fold: Fold = False) -> Tuple[FrozenSet[int], int]:
    """The bytes the ``[...]`` at ``pattern[i]`` matches, and the index after its
    ``]``: git's wildmatch.c, step for step (before removing '/'). With ``fold``
    a letter is in the class when either of its cases is, before ``[!...]``
    negates it, as WM_CASEFOLD has it (``[!a]`` matches neither 'a' nor 'A')."""
    n = len(pattern)
    i += 1
    if i >= n:
        raise _Malformed("unclosed '['")
    negated = pattern[i] in b"!^"
    if negated:
        i += 1
    members = set()
    prev = 0  # the last single byte, a possible range start (0: none)
    while True:
        if i >= n:
            raise _Malformed("unclosed '['")
        ch = pattern[i]
        if ch == 0x5C:  # '\\'
            i += 1
            if i >= n:
                raise _Malformed("trailing '\\'")
            ch = pattern[i]
            members.add(ch)
        elif ch == 0x2D and prev and i + 1 < n and pattern[i + 1] != 0x5D:  # '-', not before ']'
            i += 1
            ch = pattern[i]
            if ch == 0x5C:
                i += 1
                if i >= n:
                    raise _Malformed("trailing '\\'")
                ch = pattern[i]
            members.update(range(prev, ch + 1))  # reversed: nothing (its start matched already)
            ch = 0
        elif ch == 0x5B and pattern[i + 1 : i + 2] == b":":  # '[:'
            start = i + 2
            close = pattern.find(b"]", start)
            if close == -1:
                raise _Malformed("unclosed '['")
            if close - start - 1 < 0 or pattern[close - 1] != 0x3A:
                members.add(ch)  # no ':]': a literal '['
            else:
                name = pattern[start : close - 1]
                if name not in _POSIX:
                    raise _Malformed(f"unknown character class [:{name.decode('latin-1')}:]")
                members |= _POSIX[name]
                i = close
                ch = 0
        else:
            members.add(ch)
        prev = ch
        i += 1
        if i >= n:
            raise _Malformed("unclosed '['")
        if pattern[i] == 0x5D:  # ']'
            break
    found = frozenset(members)
    if fold == TWIN:  # a case twin of the name matches: negate, then take either case
        matched = _ALL - found if negated else found
        return matched | {_SWAP[b] for b in matched if b in _SWAP}, i + 1
    if fold:
        found |= {_SWAP[b] for b in found if b in _SWAP}
    return (_ALL - found if negated else found), i + 1


# Tokens: (ONE, bytes) consumes one byte of the set; STAR is '*' inside a name;
# FOLDERS is '**/' (no folders or any number); FOLDERS1 is '**\/' (at least
# one folder: git has no empty shortcut for an escaped slash); TAIL is a last
# '**' (anything at all).
ONE, STAR, FOLDERS, FOLDERS1, TAIL = range(5)


def _tokens(
    body: bytes, pathname: bool, fold: Fold, sep: bool = False
) -> List[Tuple[int, FrozenSet[int]]]:
    """``body`` as tokens. With ``pathname`` (git's WM_PATHNAME), a run of two or
    more stars that makes a whole folder part is '**'; otherwise (a name
    matched alone) every run of stars is '*'. With ``sep`` no token takes a NUL,
    the byte that ends each path of a batch."""
    tokens: List[Tuple[int, FrozenSet[int]]] = []
    n = len(body)
    i = 0
    while i < n:
        ch = body[i]
        if ch == 0x5C:  # '\\'
            if i + 1 >= n:
                raise _Malformed("trailing '\\'")
            tokens.append((ONE, frozenset((body[i + 1],))))
            i += 2
        elif ch == 0x3F:  # '?'
            tokens.append((ONE, _ANY_BUT_SLASH))
            i += 1
        elif ch == 0x5B:  # '['
            members, i = _class(body, i, fold)
            tokens.append((ONE, members - {_SLASH}))
        elif ch == 0x2A:  # '*'
            j = i
            while j < n and body[j] == 0x2A:
                j += 1
            kind = STAR
            if pathname and j - i >= 2 and (i == 0 or body[i - 1] == _SLASH):
                if j == n:
                    kind = TAIL
                elif body[j] == _SLASH:
                    kind, j = FOLDERS, j + 1
                elif body[j : j + 2] == b"\\/":
                    kind, j = FOLDERS1, j + 2
            if not (kind == STAR and tokens and tokens[-1][0] == STAR):
                tokens.append((kind, frozenset()))
            i = j
        else:
            tokens.append((ONE, frozenset((ch,))))
            i += 1
    if sep:
        return [
            (kind, members - _NUL) if kind == ONE else (kind, members) for kind, members in tokens
        ]
    return tokens


@functools.lru_cache(maxsize=4096)
def _byte_set(members: FrozenSet[int]) -> bytes:
    """A regex for one byte of ``members``."""
    if not members:
        return _NEVER
    if members == _ANY_BUT_SLASH:
        return b"[^/]"
    if len(members) == 1:
        return re.escape(bytes(members))
    negate = len(members) > 128
    chosen = sorted(_ALL - members if negate else members)
    parts = []
    k = 0
    while k < len(chosen):
        end = k
        while end + 1 < len(chosen) and chosen[end + 1] == chosen[end] + 1:
            end += 1
        parts.append(b"\\x%02x" % chosen[k] + (b"-\\x%02x" % chosen[end] if end > k else b""))
        k = end + 1
    return b"[" + (b"^" if negate else b"") + b"".join(parts) + b"]"


if sys.version_info >= (3, 11):

    def _atomic(rx: bytes, names: List[int]) -> bytes:
        return b"(?>" + rx + b")"
else:  # no atomic groups before 3.11: a lookahead is atomic, a backreference takes its text

    def _atomic(rx: bytes, names: List[int]) -> bytes:
        return _emulated_atomic(rx, names)


def _emulated_atomic(rx: bytes, names: List[int]) -> bytes:
    names[0] += 1
    name = b"a%d" % names[0]
    return b"(?=(?P<" + name + b">" + rx + b"))(?P=" + name + b")"


_group_names = [0]  # a counter for the emulated atomic groups' names


def _name_part(atoms: List[Tuple[int, FrozenSet[int]]], sep: bool = False) -> bytes:
    """One folder part's ONE and STAR atoms: the text between two stars at its
    leftmost place, kept there (first and last pieces sit at the ends)."""
    pieces: List[List[bytes]] = [[]]
    for kind, members in atoms:
        if kind == STAR:
            pieces.append([])
        else:
            pieces[-1].append(_byte_set(members))
    if len(pieces) == 1:
        return b"".join(pieces[0])
    name = _NAME[sep]
    rx = b"".join(pieces[0])
    for middle in pieces[1:-1]:
        if middle:
            rx += _atomic(name + b"*?" + b"".join(middle), _group_names)
    return rx + name + b"*" + b"".join(pieces[-1])


def _block(tokens: List[Tuple[int, FrozenSet[int]]], sep: bool = False) -> bytes:
    """ONE and STAR tokens, split into folder parts at each literal '/'."""
    out = []
    atoms: List[Tuple[int, FrozenSet[int]]] = []
    for token in tokens:
        if token[0] == ONE and token[1] == {_SLASH}:
            out.append(_name_part(atoms, sep) + b"/")
            atoms = []
        else:
            atoms.append(token)
    out.append(_name_part(atoms, sep))
    return b"".join(out)


def _translate(prefix: bytes, body: bytes, pathname: bool, fold: Fold, sep: bool = False) -> bytes:
    """The regex (without its end) for the literal ``prefix`` followed by the
    wildmatch pattern ``body``; with ``sep``, one that never takes a NUL."""
    if sep and 0 in prefix:  # no path git lists holds a NUL
        raise _Malformed("NUL")
    tokens = _tokens(body, pathname, fold, sep)
    # blocks of ONE/STAR between '**/' parts (a run of them is one)
    blocks: List[List[Tuple[int, FrozenSet[int]]]] = [[]]
    skips: List[int] = []
    tail = False
    for kind, members in tokens:
        if kind in (FOLDERS, FOLDERS1):
            if not blocks[-1] and skips:  # '**/**/': the same as one
                skips[-1] = max(skips[-1], kind)
                continue
            skips.append(kind)
            blocks.append([])
        elif kind == TAIL:
            tail = True
        else:
            blocks[-1].append((kind, members))
    name = _NAME[sep]
    rx = re.escape(prefix) + _block(blocks[0], sep)
    for k, skip in enumerate(skips):
        folders = b"(?:" + name + (b"*/)*?" if skip == FOLDERS else b"*/)+?")
        part = folders + _block(blocks[k + 1], sep)
        # a block between two '**' matches where it first can, and stays
        rx += _atomic(part, _group_names) if k + 1 < len(skips) else part
    return rx + ((b"[^\\x00]*" if sep else b".*") if tail else b"")


def _compile(text: str, fold: Fold, sep: bool = False) -> Tuple[bytes, bool]:
    """(regex source without its end, dir_only) for the pattern ``text``,
    as dir.c reads it: one trailing '/' is folders only; a '/' anywhere else
    anchors it at the root; an anchored pattern's text before its first
    wildcard is compared as it is, and the rest wildmatched on its own (so a
    '**' right after it starts a folder part: 'a**/b' matches 'ab')."""
    body = _encode(text)
    dir_only = body.endswith(b"/")
    if dir_only:  # git strips one slash at either end, never more
        body = body[:-1]
    try:
        if _SLASH not in body:  # a name at any depth
            return b"(?:" + _NAME[sep] + b"*/)*?" + _translate(
                b"", body, False, fold, sep
            ), dir_only
        if body.startswith(b"/"):
            body = body[1:]
        k = next((i for i, ch in enumerate(body) if ch in b"*?[\\"), len(body))
        return _translate(body[:k], body[k:], True, fold, sep), dir_only
    except _Malformed:
        return _NEVER, dir_only


def wildmatch(pattern: bytes, text: bytes, casefold: bool = False) -> bool:
    """git's ``wildmatch(pattern, text, WM_PATHNAME [| WM_CASEFOLD])``, without
    gitignore's rules around it (t3070's 'wildmatch' and 'iwildmatch' columns).
    With ``casefold``, a class holds a letter when it holds either case (git
    lowers the text but compares a class's letters as written, so its ``[A]``
    matches nothing; here it matches 'a' and 'A')."""
    try:
        rx = _translate(b"", pattern, True, casefold)
    except _Malformed:
        return False
    flags = re.DOTALL | (re.IGNORECASE if casefold else 0)
    return re.match(rx + b"\\Z", text, flags) is not None


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
    return tuple(_encode(form) for form in _fold_forms(path))


# -- patterns ------------------------------------------------------------------

_FLAGS = re.DOTALL
_FOLD_FLAGS = re.DOTALL | re.IGNORECASE


class Pattern:
    """One pattern: ``_full`` matches a whole path, ``_reach`` a path or (the
    only choice for a folder pattern) one of its parent folders, in one call."""

    __slots__ = ("text", "dir_only", "_full", "_reach", "_full_fold", "_reach_fold", "_batch")

    def __init__(self, text: str) -> None:
        self.text = text
        rx, self.dir_only = _compile(text, fold=False)
        reach = b"(?=/)" if self.dir_only else b"(?=/|\\Z)"
        self._full = re.compile(rx + b"\\Z", _FLAGS)
        self._reach = re.compile(rx + reach, _FLAGS)
        folds = [_compile(form, fold=TWIN)[0] for form in _fold_forms(text)]
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
        return self._reach.match(_encode(path)) is not None

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
    rx = _compile(text, TWIN if fold else False, sep=True)[0]
    if rx == _NEVER:
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
    body = _encode(text)
    if body.endswith(b"/"):
        body = body[:-1]
    pathname = _SLASH in body
    if pathname:
        body = body[1:] if body.startswith(b"/") else body
        k = next((i for i, ch in enumerate(body) if ch in b"*?[\\"), len(body))
        if k:
            return b"\0" + body[:k], True
    try:
        tokens = _tokens(body, pathname, False)
    except _Malformed:
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
    return re.compile(b"|".join(b"(?:" + s + b")" for s in sources) or _NEVER, flags)


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
            forms = (_encode(path),)
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
