"""gitignore-style path patterns, matched against repo-relative POSIX paths.

Semantics follow gitignore(5) and git's wildmatch: a pattern with a slash at
the start or middle is anchored to the repository root, otherwise it matches a
name at any depth; a trailing slash matches folders only; ``**`` spans
folders; ``*``, ``?`` and ``[...]`` never match ``/``; a path also matches
when one of its parent folders does. A pattern git would reject (an unclosed
``[``, a trailing ``\\``, an unknown ``[:class:]``) matches nothing, as in git.
Negation (``!``) is not supported: the contract schema rejects it.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from typing import Iterable, List, Optional, Sequence, Tuple

# POSIX classes as git's wildmatch defines them (ASCII only).
_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
    "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v", "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}
_NEVER = "(?!)"


class _Malformed(Exception):
    """git's wildmatch aborts on this pattern: it matches nothing."""


def _class(pattern: str, start: int) -> Tuple[str, int]:
    """Translate the ``[...]`` at ``start`` to a regex; return it and the index after ``]``."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    items: List[str] = []
    prev: Optional[str] = None  # the last single character, a possible range start
    first = True
    while True:
        if i >= len(pattern):
            raise _Malformed("unclosed '['")
        ch = pattern[i]
        if ch == "]" and not first:
            break
        first = False
        if ch == "\\":
            i += 1
            if i >= len(pattern):
                raise _Malformed("trailing '\\'")
            ch = pattern[i]
            items.append(re.escape(ch))
            prev = ch
        elif ch == "-" and prev is not None and i + 1 < len(pattern) and pattern[i + 1] != "]":
            i += 1
            end = pattern[i]
            if end == "\\":
                i += 1
                if i >= len(pattern):
                    raise _Malformed("trailing '\\'")
                end = pattern[i]
            if prev <= end:  # git matches the start of a reversed range only
                items.append(re.escape(prev) + "-" + re.escape(end))
            prev = None
        elif ch == "[" and pattern.startswith(":", i + 1):
            close = pattern.find("]", i + 2)
            if close == -1:
                raise _Malformed("unclosed '['")
            name = pattern[i + 2:close - 1] if pattern[close - 1] == ":" else None
            if name is None or close - 1 < i + 2:
                items.append(re.escape(ch))  # no ':]': a literal '['
                prev = ch
            elif name in _POSIX:
                items.append(_POSIX[name])
                prev = None
                i = close
            else:
                raise _Malformed(f"unknown character class [:{name}:]")
        else:
            items.append(re.escape(ch))
            prev = ch
        i += 1
    # a class never matches '/', not even through a range such as '.-0'
    body = "".join(items)
    if negate:
        return "[^/" + body + "]", i + 1
    return ("(?!/)[" + body + "]" if body else _NEVER), i + 1


def _segments(body: str) -> List[Tuple[str, str]]:
    """Split at each '/' outside ``[...]``: (raw text, regex) per segment."""
    segments = []
    raw_start = 0
    out: List[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "/":
            segments.append((body[raw_start:i], "".join(out)))
            out = []
            raw_start = i + 1
        elif ch == "\\":
            if i + 1 >= len(body):
                raise _Malformed("trailing '\\'")
            out.append(re.escape(body[i + 1]))
            i += 1
        elif ch == "*":
            while i + 1 < len(body) and body[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            translated, i = _class(body, i)
            out.append(translated)
            continue
        else:
            out.append(re.escape(ch))
        i += 1
    segments.append((body[raw_start:], "".join(out)))
    return segments


def _regex(body: str, anchored: bool) -> str:
    rx = "" if anchored else "(?:.*/)?"
    if anchored:
        # git compares the literal text before the first wildcard on its own and
        # wildmatches the rest, where a leading '**' starts a segment: so in git
        # 'a**/b' matches 'ab' and 'a/x/b' (what `git check-ignore` reports).
        k = next((i for i, ch in enumerate(body) if ch in "*?[\\"), len(body))
        stars = len(body[k:]) - len(body[k:].lstrip("*"))
        ends_segment = body[k + stars:k + stars + 1] in ("", "/")
        if k > 0 and body[k - 1] != "/" and stars >= 2 and ends_segment:
            rx, body = re.escape(body[:k]), body[k:]
    parts = _segments(body)
    for i, (raw, part) in enumerate(parts):
        last = i == len(parts) - 1
        if len(raw) >= 2 and raw.strip("*") == "":  # a whole segment of stars is '**'
            rx += ".*" if last else "(?:.*/)?"
        else:
            rx += part + ("" if last else "/")
    return rx


class Pattern:
    __slots__ = ("text", "dir_only", "_rx", "_rx_fold")

    def __init__(self, text: str) -> None:
        self.text = text
        body = text
        self.dir_only = body.endswith("/")
        if self.dir_only:  # git strips one slash at either end, never more
            body = body[:-1]
        anchored = "/" in body
        if body.startswith("/"):
            body = body[1:]
        try:
            rx = _regex(body, anchored)
            rx_fold = _regex(unicodedata.normalize("NFC", body), anchored)
        except _Malformed:
            rx = rx_fold = _NEVER
        self._rx = re.compile(rx + r"\Z", re.DOTALL)
        self._rx_fold = re.compile(rx_fold + r"\Z", re.DOTALL | re.IGNORECASE)

    def matches(self, path: str, fold_case: bool = False) -> bool:
        """With ``fold_case``, compare as macOS and Windows file systems do:
        ignoring letter case and Unicode normalization (NFC vs NFD)."""
        if fold_case:
            rx = self._rx_fold
            path = unicodedata.normalize("NFC", path)
        else:
            rx = self._rx
        if not self.dir_only and rx.match(path):
            return True
        # a path also matches when one of its parent folders does
        end = path.find("/")
        while end != -1:
            if rx.match(path, 0, end):
                return True
            end = path.find("/", end + 1)
        return False

    def __repr__(self) -> str:
        return f"Pattern({self.text!r})"


@functools.lru_cache(maxsize=None)
def compile_pattern(text: str) -> Pattern:
    return Pattern(text)


class AnyOf:
    """Does any of ``patterns`` match? One regex call per path and parent folder,
    instead of one per pattern: most paths match nothing, and this says so fast."""

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        def union(rxs) -> "re.Pattern[str]":
            body = "|".join(f"(?:{rx.pattern})" for rx in rxs) or r"(?!)"
            return re.compile(body, rxs[0].flags if rxs else re.DOTALL)

        self._full = union([p._rx for p in patterns if not p.dir_only])
        self._prefix = union([p._rx for p in patterns])
        self._full_fold = union([p._rx_fold for p in patterns if not p.dir_only])
        self._prefix_fold = union([p._rx_fold for p in patterns])

    def matches(self, path: str, fold_case: bool = False) -> bool:
        if fold_case:
            full, prefix = self._full_fold, self._prefix_fold
            path = unicodedata.normalize("NFC", path)
        else:
            full, prefix = self._full, self._prefix
        if full.match(path):
            return True
        end = path.find("/")
        while end != -1:
            if prefix.match(path, 0, end):
                return True
            end = path.find("/", end + 1)
        return False


class PatternSet:
    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns: List[Pattern] = [compile_pattern(p) for p in patterns]
        self._any = AnyOf(self.patterns)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def first_match(self, path: str, fold_case: bool = False) -> Optional[str]:
        if not self._any.matches(path, fold_case):
            return None
        for pattern in self.patterns:
            if pattern.matches(path, fold_case):
                return pattern.text
        return None

    def select(self, paths: Iterable[str]) -> List[str]:
        return sorted(p for p in paths if self.first_match(p) is not None)
