"""The strict JSON loader: anything ambiguous (a duplicate key, NaN, bad UTF-8) is an error."""

from __future__ import annotations

import bisect
import json
import math
import re
from typing import Any, Dict, Iterable, List, NoReturn, Tuple

from oracle_guard.parsing.strict_input import (
    MAX_DEPTH,
    MAX_INT_DIGITS,
    Document,
    JsonPath,
    LoadError,
    decode_text,
    line_col,
)

_SURROGATE = re.compile("[\ud800-\udfff]")
_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_BAD_CONSTANTS = ("NaN", "Infinity", "-Infinity")


class _JsonParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lines: Dict[JsonPath, int] = {}
        # newline offsets, so a value's line is a binary search, not a count from 0
        self._newlines = [m.start() for m in re.finditer("\n", text)]

    def no_lone_surrogate(self, text: str, pos: int) -> None:
        if _SURROGATE.search(text):
            raise self.fail(
                "string holds a lone surrogate escape (\\ud800-\\udfff): not text in any encoding",
                pos,
            )

    def fail(self, message: str, pos: int) -> LoadError:
        if pos >= len(self.text) and self.text.strip() and not message.startswith("unexpected end"):
            message = f"unexpected end of file ({message})"
        return LoadError(message, *line_col(self.text, pos))

    def skip(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()  # type: ignore[union-attr]  # '*' always matches

    def parse(self) -> Any:
        pos = self.skip(0)
        if pos == len(self.text):
            raise self.fail("empty document", pos)
        value, pos = self.value(pos, (), 0)
        pos = self.skip(pos)
        if pos != len(self.text):
            raise self.fail("unexpected data after the JSON value", pos)
        return value

    def value(self, pos: int, path: JsonPath, depth: int) -> Tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels", pos)
        text = self.text
        self.lines[path] = bisect.bisect_left(self._newlines, pos) + 1
        ch = text[pos : pos + 1]
        if ch == '"':
            try:
                value, end = json.decoder.scanstring(text, pos + 1, True)  # type: ignore[attr-defined]
                self.no_lone_surrogate(value, pos)
                return value, end
            except json.JSONDecodeError as exc:
                raise self.fail(exc.msg.lower(), exc.pos) from None
        if ch == "{":
            return self.object(pos + 1, path, depth)
        if ch == "[":
            return self.array(pos + 1, path, depth)
        for word, val in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, pos):
                return val, pos + len(word)
        for word in _BAD_CONSTANTS:
            if text.startswith(word, pos):
                raise self.fail(f"{word} is not valid JSON", pos)
        match = _NUMBER.match(text, pos)
        if match and match.end() > pos:
            literal = match.group()
            if match.group(1) or match.group(2):
                number = float(literal)
                if not _representable(literal, number):
                    raise self.fail(f"number {literal[:20]} is out of range", pos)
                return number, match.end()
            if len(literal.lstrip("-")) > MAX_INT_DIGITS:
                raise self.fail("integer has too many digits", pos)
            return int(literal), match.end()
        if text.startswith("//", pos) or text.startswith("/*", pos):
            raise self.fail("comments are not valid JSON", pos)
        if pos >= len(text):
            raise self.fail("unexpected end of file", pos)
        raise self.fail(f"unexpected character {ch!r}", pos)

    def object(self, pos: int, path: JsonPath, depth: int) -> Tuple[Any, int]:
        result: Dict[str, Any] = {}
        pos = self.skip(pos)
        if self.text.startswith("}", pos):
            return result, pos + 1
        while True:
            if not self.text.startswith('"', pos):
                raise self.fail("expected a string key", pos)
            key_pos = pos
            try:
                key, end = json.decoder.scanstring(self.text, pos + 1, True)  # type: ignore[attr-defined]
                self.no_lone_surrogate(key, pos)
                pos = end
            except json.JSONDecodeError as exc:
                raise self.fail(exc.msg.lower(), exc.pos) from None
            if key in result:
                raise self.fail(f"duplicate key {key!r}", key_pos)
            pos = self.skip(pos)
            if not self.text.startswith(":", pos):
                raise self.fail("expected ':'", pos)
            pos = self.skip(pos + 1)
            result[key], pos = self.value(pos, path + (key,), depth + 1)
            pos = self.skip(pos)
            if self.text.startswith(",", pos):
                pos = self.skip(pos + 1)
                continue
            if self.text.startswith("}", pos):
                return result, pos + 1
            raise self.fail("expected ',' or '}'", pos)

    def array(self, pos: int, path: JsonPath, depth: int) -> Tuple[Any, int]:
        result: List[Any] = []
        pos = self.skip(pos)
        if self.text.startswith("]", pos):
            return result, pos + 1
        while True:
            item, pos = self.value(pos, path + (len(result),), depth + 1)
            result.append(item)
            pos = self.skip(pos)
            if self.text.startswith(",", pos):
                pos = self.skip(pos + 1)
                continue
            if self.text.startswith("]", pos):
                return result, pos + 1
            raise self.fail("expected ',' or ']'", pos)


def _no_duplicates(pairs: Iterable[Tuple[str, Any]]) -> Dict[str, Any]:
    result: Dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError("duplicate")
        result[key] = value
    return result


def _no_constant(name: str) -> NoReturn:
    raise ValueError(name)


def _representable(literal: str, number: float) -> bool:
    """False for overflow (1e999 -> inf) and underflow (1e-400 -> 0.0): both
    would make different seeds compare equal."""
    if not math.isfinite(number):
        return False
    return number != 0.0 or not re.search(r"[1-9]", literal.split("e")[0].split("E")[0])


def _finite_float(literal: str) -> float:
    number = float(literal)
    if not _representable(literal, number):
        raise ValueError(literal)
    return number


def load_json(data: bytes, *, positions: bool = False) -> Document:
    """Strict JSON: duplicate keys, NaN/Infinity, invalid UTF-8, a byte-order
    mark, trailing data and nesting deeper than MAX_DEPTH are rejected.

    The C decoder does the common case; the slow parser runs when positions
    are wanted or to locate an error precisely."""
    text = decode_text(data)
    if not positions:
        try:
            value = json.loads(
                text,
                object_pairs_hook=_no_duplicates,
                parse_constant=_no_constant,
                parse_float=_finite_float,
                parse_int=_bounded_int,
            )
        except (ValueError, RecursionError):
            pass  # re-parse below for a precise message
        else:
            if _depth_ok(value):
                return Document(value, {})
    parser = _JsonParser(text)
    return Document(parser.parse(), parser.lines)


def _depth_ok(value: Any) -> bool:
    """False when the C decoder's value needs the slow parser's verdict: too
    deep, or holding a lone surrogate (escapes the decoder lets through)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(item, dict):
            if any(_SURROGATE.search(k) for k in item):
                return False
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, str) and _SURROGATE.search(item):
            return False
    return True


def _bounded_int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(literal)
    return int(literal)
