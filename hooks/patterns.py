"""gitignore-style path patterns, matched against repo-relative POSIX paths.

Semantics follow gitignore(5): a pattern with a slash at the start or middle is
anchored to the repository root, otherwise it matches a name at any depth; a
trailing slash matches folders only; ``**`` spans folders; a path also matches
when one of its parent folders does. Negation (``!``) is not supported: the
contract schema rejects it.
"""
from __future__ import annotations

import functools
import re
from typing import Iterable, List, Optional, Tuple


def _class(pattern: str, start: int) -> Tuple[Optional[str], int]:
    """Translate ``[...]`` starting at ``start``; (None, start) if unclosed."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    items = []
    first = True
    while i < len(pattern):
        ch = pattern[i]
        if ch == "]" and not first:
            body = "".join(items)
            return ("[^/" + body + "]" if negate else "[" + body + "]"), i + 1
        if ch == "\\" and i + 1 < len(pattern):
            i += 1
            ch = pattern[i]
        if ch == "-" and items and i + 1 < len(pattern) and pattern[i + 1] != "]":
            items.append("-")
        else:
            items.append(re.escape(ch) if ch != "/" else "")
        first = False
        i += 1
    return None, start


def _segment(part: str) -> str:
    out = []
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "\\" and i + 1 < len(part):
            out.append(re.escape(part[i + 1]))
            i += 2
            continue
        if ch == "*":
            while i + 1 < len(part) and part[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            translated, end = _class(part, i)
            if translated is not None:
                out.append(translated)
                i = end
                continue
            out.append(re.escape(ch))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


class Pattern:
    __slots__ = ("text", "dir_only", "_rx", "_rx_fold")

    def __init__(self, text: str) -> None:
        self.text = text
        body = text
        self.dir_only = body.endswith("/")
        body = body.rstrip("/")
        anchored = "/" in body
        body = body.lstrip("/")
        parts = body.split("/")
        rx = "" if anchored else "(?:.*/)?"
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if part == "**":
                rx += ".*" if last else "(?:.*/)?"
            else:
                rx += _segment(part) + ("" if last else "/")
        self._rx = re.compile(rx + r"\Z", re.DOTALL)
        self._rx_fold = re.compile(rx + r"\Z", re.DOTALL | re.IGNORECASE)

    def matches(self, path: str, fold_case: bool = False) -> bool:
        rx = self._rx_fold if fold_case else self._rx
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


class PatternSet:
    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns: List[Pattern] = [compile_pattern(p) for p in patterns]

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def first_match(self, path: str, fold_case: bool = False) -> Optional[str]:
        for pattern in self.patterns:
            if pattern.matches(path, fold_case):
                return pattern.text
        return None

    def select(self, paths: Iterable[str]) -> List[str]:
        return sorted(p for p in paths if self.first_match(p) is not None)
