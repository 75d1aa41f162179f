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
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

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


# Tokens of the same translation, for the matcher that cannot backtrack:
# (ONE, regex) consumes one character; STAR is [^/]*, ANYTHING is .*, and
# FOLDERS is (?:.*/)? (the '**/' of a pattern).
ONE, STAR, ANYTHING, FOLDERS = range(4)
Token = Tuple[int, str]


def _segments(body: str) -> List[Tuple[str, str, List[Token]]]:
    """Split at each '/' outside ``[...]``: (raw text, regex, tokens) per segment."""
    segments = []
    raw_start = 0
    out: List[str] = []
    tokens: List[Token] = []

    def one(piece: str) -> None:
        out.append(piece)
        tokens.append((ONE, piece))

    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "/":
            segments.append((body[raw_start:i], "".join(out), tokens))
            out, tokens = [], []
            raw_start = i + 1
        elif ch == "\\":
            if i + 1 >= len(body):
                raise _Malformed("trailing '\\'")
            one(re.escape(body[i + 1]))
            i += 1
        elif ch == "*":
            while i + 1 < len(body) and body[i + 1] == "*":
                i += 1
            out.append("[^/]*")
            tokens.append((STAR, ""))
        elif ch == "?":
            one("[^/]")
        elif ch == "[":
            translated, i = _class(body, i)
            one(translated)
            continue
        else:
            one(re.escape(ch))
        i += 1
    segments.append((body[raw_start:], "".join(out), tokens))
    return segments


def _regex(body: str, anchored: bool) -> Tuple[str, List[Token]]:
    """The regex for ``body`` and the same as tokens."""
    rx = "" if anchored else "(?:.*/)?"
    tokens: List[Token] = [] if anchored else [(FOLDERS, "")]
    if anchored:
        # git compares the literal text before the first wildcard on its own and
        # wildmatches the rest, where a leading '**' starts a segment: so in git
        # 'a**/b' matches 'ab' and 'a/x/b' (what `git check-ignore` reports).
        k = next((i for i, ch in enumerate(body) if ch in "*?[\\"), len(body))
        stars = len(body[k:]) - len(body[k:].lstrip("*"))
        ends_segment = body[k + stars:k + stars + 1] in ("", "/")
        if k > 0 and body[k - 1] != "/" and stars >= 2 and ends_segment:
            prefix = body[:k]
            rx, body = re.escape(prefix), body[k:]
            tokens = [(ONE, re.escape(ch)) for ch in prefix]
    parts = _segments(body)
    for i, (raw, part, part_tokens) in enumerate(parts):
        last = i == len(parts) - 1
        if len(raw) >= 2 and raw.strip("*") == "":  # a whole segment of stars is '**'
            rx += ".*" if last else "(?:.*/)?"
            tokens.append((ANYTHING if last else FOLDERS, ""))
        else:
            rx += part + ("" if last else "/")
            tokens.extend(part_tokens)
            if not last:
                tokens.append((ONE, "/"))
    return rx, tokens


class Pattern:
    __slots__ = ("text", "dir_only", "_rx", "_rx_fold", "_nfa", "_nfa_fold")

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
            rx, tokens = _regex(body, anchored)
            rx_fold, tokens_fold = _regex(unicodedata.normalize("NFC", body), anchored)
        except _Malformed:
            rx = rx_fold = _NEVER
            tokens = tokens_fold = [(ONE, _NEVER)]
        self._rx = re.compile(rx + r"\Z", re.DOTALL)
        self._rx_fold = re.compile(rx_fold + r"\Z", re.DOTALL | re.IGNORECASE)
        # Two or more unbounded parts ('a/**/b/**/c', 'a*a*b') make a regex
        # backtrack for as long as an attacker's path is deep: those patterns
        # run on a matcher that cannot backtrack, in time path x pattern.
        risky = sum(kind != ONE for kind, _ in tokens) >= 2
        self._nfa = _Nfa(tokens, 0) if risky else None
        self._nfa_fold = _Nfa(tokens_fold, re.IGNORECASE) if risky else None

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

    @property
    def risky(self) -> bool:
        return self._nfa is not None

    def matches(self, path: str, fold_case: bool = False) -> bool:
        """With ``fold_case``, compare as macOS and Windows file systems do:
        ignoring letter case and Unicode normalization (NFC vs NFD)."""
        if fold_case:
            rx, nfa = self._rx_fold, self._nfa_fold
            path = _nfc(path)
        else:
            rx, nfa = self._rx, self._nfa
        if nfa is not None:
            return nfa.matches(path, self.dir_only)
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


class _Nfa:
    """The tokens of a pattern run as a set of states over the path's
    characters (Thompson's construction): no backtracking, and one pass tells
    whether the path or any of its parent folders matches."""

    def __init__(self, tokens: List[Token], flags: int) -> None:
        self.kinds = [kind for kind, _ in tokens]
        self.one = [re.compile(piece, re.DOTALL | flags) if kind == ONE else None
                    for kind, piece in tokens]
        self.end = len(tokens)

    def _close(self, states: set) -> set:
        """Add every state reachable without a character: skipping an
        unbounded part. Inside-FOLDERS states are stored as -1 - index."""
        todo = list(states)
        while todo:
            state = todo.pop()
            if 0 <= state < self.end and self.kinds[state] != ONE and state + 1 not in states:
                states.add(state + 1)
                todo.append(state + 1)
        return states

    def _step(self, states: set, ch: str) -> set:
        new = set()
        for state in states:
            if state < 0:  # inside '(?:.*/)?' of token -1 - state
                new.add(state)
                if ch == "/":
                    new.add(-state)  # -1 - state + 1: the token after it
                continue
            if state == self.end:
                continue
            kind = self.kinds[state]
            if kind == ONE:
                if self.one[state].match(ch):
                    new.add(state + 1)
            elif kind == STAR:
                if ch != "/":
                    new.add(state)
            elif kind == ANYTHING:
                new.add(state)
            else:  # FOLDERS
                new.add(-1 - state)
                if ch == "/":
                    new.add(state + 1)
        return self._close(new)

    def matches(self, path: str, dir_only: bool) -> bool:
        states = self._close({0})
        for i, ch in enumerate(path):
            if ch == "/" and i and self.end in states:
                return True  # the parent folder path[:i] matches
            states = self._step(states, ch)
            if not states:
                return False
        return not dir_only and self.end in states


def _nfc(path: str) -> str:
    # ASCII is already in every normal form: skip the work for most paths
    return path if path.isascii() else unicodedata.normalize("NFC", path)


@functools.lru_cache(maxsize=None)
def compile_pattern(text: str) -> Pattern:
    return Pattern(text)


class AnyOf:
    """Does any of ``patterns`` match? One regex call per path and parent folder,
    instead of one per pattern: most paths match nothing, and this says so fast.
    Patterns that would backtrack are asked one by one."""

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        def union(rxs) -> "re.Pattern[str]":
            body = "|".join(f"(?:{rx.pattern})" for rx in rxs) or r"(?!)"
            return re.compile(body, rxs[0].flags if rxs else re.DOTALL)

        plain = [p for p in patterns if not p.risky]
        self._risky = [p for p in patterns if p.risky]
        # does a folder or one of its parents match? paths share folders, so ask once
        self._folders: Dict[Tuple[str, bool], bool] = {}
        self._full = union([p._rx for p in plain if not p.dir_only])
        self._prefix = union([p._rx for p in plain])
        self._full_fold = union([p._rx_fold for p in plain if not p.dir_only])
        self._prefix_fold = union([p._rx_fold for p in plain])

    def matches(self, path: str, fold_case: bool = False) -> bool:
        if self._risky and any(p.matches(path, fold_case) for p in self._risky):
            return True
        if fold_case:
            full = self._full_fold
            path = _nfc(path)
        else:
            full = self._full
        if full.match(path):
            return True
        folder = path.rpartition("/")[0]
        return bool(folder) and self._folder_matches(folder, fold_case)

    def _folder_matches(self, folder: str, fold_case: bool) -> bool:
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
            folder = folder.rpartition("/")[0]
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

    def select(self, paths: Iterable[str]) -> List[str]:
        return sorted(p for p in paths if self.first_match(p) is not None)
