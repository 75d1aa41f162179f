"""The layout-preserving editor of JSON files: spans of the text, edited in place."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

from oracle_guard.parsing import strict_input, strict_json
from oracle_guard.parsing.text_edit import DocPath, Editor, Unsafe, line_start, value_at

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass
class _Span:
    """Where a JSON value lies in the text; containers list their elements as
    (key or None, start of the element including its key, key end, value span)."""

    start: int
    end: int = -1
    kind: str = "scalar"
    elements: List[Tuple[Optional[str], int, int, _Span]] = field(default_factory=list)


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]  # '*' always matches


def _json_spans(text: str, pos: int) -> _Span:
    """The span of the (already strictly validated) JSON value at ``pos``, with the
    spans of its elements, one level deep (``JsonEditor._span`` descends)."""
    pos = _skip(text, pos)
    opener = text[pos]
    if opener not in "[{":
        _, end = _DECODER.raw_decode(text, pos)
        return _Span(pos, end)
    closer = "]" if opener == "[" else "}"
    span = _Span(pos, kind="array" if opener == "[" else "object")
    pos = _skip(text, pos + 1)
    while text[pos] != closer:
        start = pos
        key, key_end = None, pos
        if opener == "{":
            key, key_end = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
            pos = _skip(text, key_end) + 1  # past ':'
            pos = _skip(text, pos)
        _, end = _DECODER.raw_decode(text, pos)
        span.elements.append((key, start, key_end, _Span(pos, end)))
        pos = _skip(text, end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
    span.end = pos + 1
    return span


class JsonEditor(Editor):
    def __init__(self, label: str, text: str) -> None:
        super().__init__(label, text)
        # \u escapes and no raw non-ASCII text: the file was written with ensure_ascii
        self.ascii = bool(re.search(r"\\u[0-9a-fA-F]{4}", text)) and text.isascii()
        indented = re.search(r"\n([ \t]+)\S", text)
        self.unit = indented.group(1) if indented else None
        # separators outside strings: ", " and ": " spaced, "," and ":" compact, none known
        bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
        self.spaced = bool(re.search(r"[,:][ \t]", bare)) if re.search("[,:]", bare) else None

    def load(self, text: str) -> Any:
        return strict_json.load_json(text.encode("utf-8")).value

    def _span(self, path: DocPath) -> _Span:
        span = _json_spans(self.text, 0)
        for part in path:
            if isinstance(part, int):
                child = span.elements[part][3]
            else:
                child = next(e[3] for e in span.elements if e[0] == part)
            span = _json_spans(self.text, child.start)
        return span

    def _prefix(self, pos: int) -> str:
        """The indentation of the line holding ``pos``."""
        line = self.text[line_start(self.text, pos) : pos]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def _example(self, span: _Span) -> Tuple[str, Any]:
        """An element's text and value (its text is valid JSON on its own)."""
        text = self.text[span.start : span.end]
        return text, self.load(text)

    def _styles(self) -> List[Tuple[str, Any]]:
        units = []
        for unit in (self.unit, "  ", "    ", "\t"):
            if unit and unit not in units:
                units.append(unit)
        return [("indent", u) for u in units] + [("line", (", ", ": ")), ("line", (",", ":"))]

    def _dump(self, value: Any, style: Tuple[str, Any], prefix: str) -> str:
        kind, arg = style
        if kind == "indent":
            indent = arg if arg == "\t" else len(arg)
            out = json.dumps(value, indent=indent, ensure_ascii=self.ascii)
            return out.replace("\n", self.nl + prefix)
        return json.dumps(value, separators=arg, ensure_ascii=self.ascii)

    def render(self, value: Any, prefix: str, example: Optional[Tuple[str, Any]] = None) -> str:
        """``value`` in the layout of ``example`` (its text and value) when one
        of the usual layouts reproduces that text, else in the file's own layout."""
        if example is not None and _same_shape(example[1], value):
            for style in self._styles():
                if self._dump(example[1], style, prefix) == example[0]:
                    return self._dump(value, style, prefix)
        default = (
            ("indent", self.unit)
            if self.unit
            else ("line", (",", ":") if self.spaced is False else (", ", ": "))
        )
        return self._dump(value, default, prefix)

    def _first_separator(self, gap: str) -> str:
        """The separator after a list's only element: its gap after the opening bracket
        (a newline and indentation), else a space where the file's separators have one."""
        return "," + (gap or (" " if self.spaced else ""))

    def _insert(self, container: _Span, key: Optional[str], value: Any) -> str:
        """The text with a new last element (``key``: ``value`` for an object)."""
        text, elements = self.text, container.elements
        if not elements:
            prefix = self._prefix(container.start)
            # one element a line when the file indents or the empty list spans lines ("[\n]")
            unit = self.unit or ("  " if "\n" in text[container.start : container.end] else None)
            if unit:
                body = (
                    self._dump(value, ("indent", unit), prefix + unit)
                    if self.unit is None
                    else self.render(value, prefix + unit)
                )
            else:
                body = self.render(value, prefix)
            if key is not None:
                colon = ": " if self.spaced is not False else ":"
                body = json.dumps(key, ensure_ascii=self.ascii) + colon + body
            inner = (self.nl + prefix + unit + body + self.nl + prefix) if unit else body
            return text[: container.start + 1] + inner + text[container.end - 1 :]
        _, last_start, last_key_end, last = elements[-1]
        if len(elements) > 1:
            separator = text[elements[-2][3].end : last_start]
        else:
            separator = self._first_separator(text[container.start + 1 : elements[0][1]])
        prefix = self._prefix(last_start)
        body = self.render(value, prefix, self._example(last))
        if key is not None:
            colon = text[last_key_end : last.start]
            body = json.dumps(key, ensure_ascii=self.ascii) + colon + body
        return text[: last.end] + separator + body + text[last.end :]

    def insert(self, path: DocPath, index: int, key: Optional[str], value: Any) -> None:
        """Insert an element before the ``index``-th one of the list (``key`` None)
        or object at ``path``."""
        intended = copy.deepcopy(self.value)
        container = value_at(intended, path)
        if key is None:
            container.insert(index, copy.deepcopy(value))
        else:
            container[key] = copy.deepcopy(value)
        span = self._span(path)
        if span.kind != ("array" if key is None else "object"):
            raise Unsafe(
                f"{strict_input.json_pointer(path)} is not a {'list' if key is None else 'object'}"
            )
        self._commit(self._insert_at(span, index, key, value), intended)

    def _insert_at(self, container: _Span, index: int, key: Optional[str], value: Any) -> str:
        elements, text = container.elements, self.text
        if index >= len(elements):
            return self._insert(container, key, value)
        _, start, key_end, span = elements[index]
        if len(elements) > 1:
            after = max(index, 1)
            separator = text[elements[after - 1][3].end : elements[after][1]]
        else:
            separator = self._first_separator(text[container.start + 1 : start])
        body = self.render(value, self._prefix(start), self._example(span))
        if key is not None:
            body = json.dumps(key, ensure_ascii=self.ascii) + text[key_end : span.start] + body
        return text[:start] + body + separator + text[start:]

    def _append(self, path: DocPath, item: Any) -> str:
        span = self._span(path)
        if span.kind != "array":
            raise Unsafe(f"{strict_input.json_pointer(path)} is not a list")
        return self._insert(span, None, item)

    def _delete(self, path: DocPath) -> str:
        container = self._span(path[:-1])
        index = (
            path[-1]
            if isinstance(path[-1], int)
            else [e[0] for e in container.elements].index(path[-1])
        )
        elements, text = container.elements, self.text
        if len(elements) == 1:
            return text[: container.start + 1] + text[container.end - 1 :]
        if index > 0:  # from the end of the one before: drops ",<ws>element"
            return text[: elements[index - 1][3].end] + text[elements[index][3].end :]
        return text[: elements[0][1]] + text[elements[1][1] :]

    def _set(self, path: DocPath, value: Any) -> str:
        container = self._span(path[:-1])
        if container.kind != "object":
            raise Unsafe(f"{strict_input.json_pointer(path[:-1])} is not an object")
        for key, _, _, child in container.elements:
            if key == path[-1]:
                text = self.text
                new = self.render(value, self._prefix(child.start), self._example(child))
                return text[: child.start] + new + text[child.end :]
        return self._insert(container, str(path[-1]), value)


def _same_shape(a: Any, b: Any) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict)
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list)
    return True
