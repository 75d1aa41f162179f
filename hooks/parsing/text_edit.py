"""Comment- and layout-preserving edits of JSON and YAML oracle files.

Nothing is round-tripped through a serializer: an edit changes only the text of
the element it touches, and a new element copies the layout of its neighbour
(indentation, separators, quoting, key order). After every edit the whole text
is parsed again with the strict loaders and must equal the intended value; a
layout this cannot do safely (a flow-style list, a list item whose ``-`` stands
on its own line, ...) raises Unsafe instead of being reformatted.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple, Union

from oracle_guard.parsing.strict_equality import strict_key
from oracle_guard.parsing.strict_input import LoadError, decode_text, json_pointer
from oracle_guard.parsing.strict_json import load_json
from oracle_guard.parsing.strict_yaml import load_yaml

DocPath = Tuple[Union[str, int], ...]


class Unsafe(Exception):
    """The file's layout cannot be edited safely by a program."""


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_end(text: str, pos: int) -> int:
    """The position of the newline ending the line at ``pos`` (or the end of the text),
    before a CR of a CRLF ending."""
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    return end - 1 if end > 0 and text[end - 1] == "\r" and end - 1 >= pos else end


def _line_after(text: str, pos: int) -> int:
    """The start of the line after the one holding ``pos``."""
    end = text.find("\n", pos)
    return len(text) if end < 0 else end + 1


def _get(value: Any, path: DocPath) -> Any:
    for part in path:
        value = value[part]
    return value


class Editor:
    """One document: ``text`` and the value it must parse to after each edit."""

    def __init__(self, label: str, text: str) -> None:
        if re.search("\r(?!\n)", text):
            raise Unsafe("it has CR line endings without LF")
        self.label = label
        self.text = text
        self.nl = newline_of(text)
        self.value = self.load(text)

    # -- subclass API ----------------------------------------------------
    def load(self, text: str) -> Any:
        raise NotImplementedError

    def _append(self, path: DocPath, item: Any) -> str:
        raise NotImplementedError

    def _delete(self, path: DocPath) -> str:
        raise NotImplementedError

    def _set(self, path: DocPath, value: Any) -> str:
        raise NotImplementedError

    # -- edits -------------------------------------------------------------
    def append(self, path: DocPath, item: Any) -> None:
        """Append ``item`` to the list at ``path``."""
        intended = copy.deepcopy(self.value)
        _get(intended, path).append(copy.deepcopy(item))
        self._commit(self._append(path, item), intended)

    def delete(self, path: DocPath) -> None:
        """Delete a list item (``path`` ends in an index) or a mapping member (a key)."""
        intended = copy.deepcopy(self.value)
        del _get(intended, path[:-1])[path[-1]]
        self._commit(self._delete(path), intended)

    def set(self, path: DocPath, value: Any) -> None:
        """Replace a mapping member's value, or add the member after the last one."""
        intended = copy.deepcopy(self.value)
        _get(intended, path[:-1])[path[-1]] = copy.deepcopy(value)
        self._commit(self._set(path, value), intended)

    def _commit(self, text: str, intended: Any) -> None:
        try:
            got = self.load(text)
        except LoadError as exc:
            raise Unsafe(f"the edited text does not parse ({exc})") from None
        if strict_key(got) != strict_key(intended):
            raise Unsafe("the edited text does not read back as the intended value")
        self.text, self.value = text, got


# -- JSON ----------------------------------------------------------------------
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
        return load_json(text.encode("utf-8")).value

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
        line = self.text[_line_start(self.text, pos) : pos]
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
        container = _get(intended, path)
        if key is None:
            container.insert(index, copy.deepcopy(value))
        else:
            container[key] = copy.deepcopy(value)
        span = self._span(path)
        if span.kind != ("array" if key is None else "object"):
            raise Unsafe(f"{json_pointer(path)} is not a {'list' if key is None else 'object'}")
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
            raise Unsafe(f"{json_pointer(path)} is not a list")
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
            raise Unsafe(f"{json_pointer(path[:-1])} is not an object")
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


# -- YAML ----------------------------------------------------------------------
_ITEM_PREFIX = re.compile(r"( *)- +")
# characters a YAML scalar may hold raw: PyYAML's printable set without the
# line breaks NEL, LS and PS (which a double-quoted scalar would fold)
_YAML_RAW = re.compile("[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def yaml_double_quoted(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif _YAML_RAW.fullmatch(ch):
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


AUTO = "auto"  # no neighbour to copy the quoting from


def _plain_ok(text: str, flow: bool, portable: bool = False) -> bool:
    """Does ``text`` read back as this very string when written plain? ``portable``:
    with PyYAML's own safe loader too (which reads 2026-10-01 as a date, yes as true)."""
    import yaml

    if not text or text != text.strip() or "\n" in text or "\r" in text:
        return False
    probe = ("{k: %s}" % text if flow else "k: %s" % text).encode("utf-8", "surrogatepass")
    try:
        if load_yaml(probe).value != {"k": text}:
            return False
        return not portable or yaml.safe_load(probe) == {"k": text}
    except (LoadError, yaml.YAMLError, UnicodeDecodeError):
        return False


def _literal_block(text: str, indent: str) -> Optional[List[str]]:
    """``|`` (or ``|-``) block lines for a multi-line string, None when its shape
    needs more than that (leading spaces, several trailing newlines, odd characters)."""
    if "\r" in text or text.endswith("\n\n") or text.startswith((" ", "\n")):
        return None
    if not all(_YAML_RAW.fullmatch(ch) or ch in "\t\n" for ch in text):
        return None
    header = "|" if text.endswith("\n") else "|-"
    body = text[:-1] if text.endswith("\n") else text
    return [header] + [(indent + line) if line else "" for line in body.split("\n")]


def yaml_scalar(value: Any, style: Optional[str], flow: bool = False) -> str:
    """A one-line YAML scalar; ``style`` is the quoting to copy ('"', "'", None for
    plain where plain reads back the same, AUTO for plain where any loader agrees)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value is None:
        return "null"
    if not isinstance(value, str):
        raise Unsafe(f"cannot write a {type(value).__name__} into YAML")
    if style == "'" and "\n" not in value and all(_YAML_RAW.fullmatch(c) for c in value):
        return "'" + value.replace("'", "''") + "'"
    if style in (None, AUTO) and _plain_ok(value, flow, portable=style == AUTO):
        return value
    return yaml_double_quoted(value)


def mapping_lines(value: dict, column: int, example=None) -> List[str]:
    """Block mapping lines for ``value``, the mapping's first key at ``column``: the
    first line without its indentation (it may follow a '- '), the others indented.
    Copies ``example``'s (a mapping node's) key order, quoting and value alignment."""
    import yaml

    styles, order, align = {}, [], 0
    if example is not None:
        order = [k.value for k, _ in example.value]
        styles = {k.value: v.style for k, v in example.value if isinstance(v, yaml.ScalarNode)}
        starts = {
            v.start_mark.column - k.start_mark.column
            for k, v in example.value
            if isinstance(v, yaml.ScalarNode)
            and v.style not in ("|", ">")
            and v.start_mark.line == k.start_mark.line
        }
        if len(starts) == 1 and len(example.value) > 1:
            align = starts.pop()  # values start this far from their key
    lines: List[str] = []
    for number, key in enumerate(
        [k for k in order if k in value] + [k for k in value if k not in order]
    ):
        if not _plain_ok(key, False):
            raise Unsafe(f"key {key!r} cannot be written plain")
        item, style = value[key], styles.get(key, AUTO)
        if isinstance(item, (dict, list)):
            raise Unsafe(f"cannot write a nested {type(item).__name__} under {key!r}")
        indent = "" if number == 0 else " " * column
        block = None
        if isinstance(item, str) and "\n" in item and style in ("|", ">", None, AUTO):
            block = _literal_block(item, " " * (column + 2))
        if block is not None:
            lines.append(f"{indent}{key}: {block[0]}")
            lines.extend(block[1:])
        else:
            pad = " " * max(1, align - len(key) - 1)
            lines.append(f"{indent}{key}:{pad}{yaml_scalar(item, style)}")
    return lines


class YamlEditor(Editor):
    def load(self, text: str) -> Any:
        return load_yaml(text.encode("utf-8")).value

    def _root(self):
        import yaml

        return yaml.compose(self.text, Loader=yaml.SafeLoader)

    def _node(self, path: DocPath, root=None):
        node = self._root() if root is None else root
        for part in path:
            if isinstance(part, int):
                node = node.value[part]
            else:
                node = next(v for k, v in node.value if k.value == part)
        return node

    def _key_node(self, path: DocPath):
        """The key node whose value lies at ``path`` (None for the root)."""
        if not path or isinstance(path[-1], int):
            return None
        parent = self._node(path[:-1])
        return next(k for k, _ in parent.value if k.value == path[-1])

    def _end(self, node) -> int:
        """Just past the last character of ``node``'s content (comments and the
        blank lines a block scalar's end mark runs over are not content)."""
        import yaml

        if isinstance(node, yaml.ScalarNode):
            end = node.end_mark.index
            if node.style in ("|", ">"):
                while end > node.start_mark.index and self.text[end - 1] in " \t\r\n":
                    end -= 1
            return end
        if node.flow_style or not node.value:
            return node.end_mark.index
        last = node.value[-1]
        return self._end(last[1] if isinstance(node, yaml.MappingNode) else last)

    def _item_columns(self, item) -> Tuple[int, int]:
        """(column of '-', column of the content) of a block list item."""
        start = item.start_mark.index
        head = self.text[_line_start(self.text, start) : start]
        match = _ITEM_PREFIX.fullmatch(head)
        if not match:
            raise Unsafe("a list item does not start on the line of its '-'")
        return len(match.group(1)), len(head)

    def _colon_after(self, key) -> int:
        pos = key.end_mark.index
        while self.text[pos] in " \t":
            pos += 1
        if self.text[pos] != ":":
            raise Unsafe(f"no ':' after the key {key.value!r}")
        return pos + 1

    # -- rendering ---------------------------------------------------------
    def _item_lines(self, item: Any, column: int, example) -> List[str]:
        import yaml

        if isinstance(item, dict):
            if isinstance(example, yaml.MappingNode) and example.flow_style:
                pairs = [
                    f"{k}: {yaml_scalar(v, _style_of(example, k), flow=True)}"
                    for k, v in _ordered(item, example)
                ]
                return ["{" + ", ".join(pairs) + "}"]
            if example is not None and not isinstance(example, yaml.MappingNode):
                raise Unsafe("the list's items are not mappings")
            return mapping_lines(item, column, example)
        if isinstance(item, (list, dict)):
            raise Unsafe("cannot write a nested list item")
        style = example.style if isinstance(example, yaml.ScalarNode) else AUTO
        return [yaml_scalar(item, style if style in ("'", '"', None) else AUTO)]

    # -- edits -------------------------------------------------------------
    def _append(self, path: DocPath, item: Any) -> str:
        import yaml

        seq, text = self._node(path), self.text
        if not isinstance(seq, yaml.SequenceNode):
            raise Unsafe(f"{json_pointer(path)} is not a list")
        if seq.flow_style:
            if seq.value:
                raise Unsafe(f"{json_pointer(path)} is a flow-style list [...]")
            return self._append_to_empty(path, seq, item)
        last = seq.value[-1]
        dash, column = self._item_columns(last)
        lines = self._item_lines(item, column, last)
        first = " " * dash + "-" + " " * (column - dash - 1) + lines[0]
        at = _line_end(text, self._end(last))
        rest = "".join(self.nl + line for line in lines[1:])
        return text[:at] + self.nl + first + rest + text[at:]

    def _append_to_empty(self, path: DocPath, seq, item: Any) -> str:
        """``key: []`` becomes a block list under ``key``."""
        key = self._key_node(path)
        if key is None:
            raise Unsafe("the whole document is an empty flow-style list")
        text = self.text
        dash = key.start_mark.column + 2
        lines = self._item_lines(item, dash + 2, None)
        colon = self._colon_after(key)
        if text[colon : seq.start_mark.index].strip():
            raise Unsafe(f"something stands between {key.value!r} and its []")
        # drop " []" and keep what follows on the line (a comment)
        text = text[:colon] + text[seq.end_mark.index :]
        at = _line_end(text, colon)
        body = (
            self.nl + " " * dash + "- " + lines[0] + "".join(self.nl + line for line in lines[1:])
        )
        return text[:at] + body + text[at:]

    def _delete(self, path: DocPath) -> str:
        import yaml

        parent, text = self._node(path[:-1]), self.text
        if parent.flow_style:
            raise Unsafe(f"{json_pointer(path[:-1])} is written in flow style")
        if isinstance(parent, yaml.SequenceNode):
            item = parent.value[path[-1]]
            self._item_columns(item)
            start = _line_start(text, item.start_mark.index)
            end = _line_after(text, self._end(item))
            if len(parent.value) > 1:
                return text[:start] + text[end:]
            key = self._key_node(path[:-1])
            if key is None:
                raise Unsafe("the document would be an empty list")
            colon = self._colon_after(key)
            return text[:colon] + " []" + text[colon:start] + text[end:]
        pairs = parent.value
        index = [k.value for k, _ in pairs].index(path[-1])
        key, value = pairs[index]
        head = text[_line_start(text, key.start_mark.index) : key.start_mark.index]
        if head.strip() or len(pairs) == 1:
            raise Unsafe(f"cannot delete the line(s) of {path[-1]!r} alone")
        start = _line_start(text, key.start_mark.index)
        return text[:start] + text[_line_after(text, self._end(value)) :]

    def _set(self, path: DocPath, value: Any) -> str:
        import yaml

        parent, text = self._node(path[:-1]), self.text
        if not isinstance(parent, yaml.MappingNode):
            raise Unsafe(f"{json_pointer(path[:-1])} is not a mapping")
        for key, node in parent.value:
            if key.value == path[-1]:
                if (
                    not isinstance(node, yaml.ScalarNode)
                    or node.style not in (None, "'", '"')
                    or node.start_mark.line != node.end_mark.line
                ):
                    raise Unsafe(f"the value of {path[-1]!r} is not a one-line scalar")
                new = yaml_scalar(value, node.style, flow=bool(parent.flow_style))
                # keep the tag the author wrote (``!!str 2026-09-30``): YAML 1.1 tools
                # read the plain value without it as a date
                tag = re.match(r"![^ \t]*[ \t]+", text[node.start_mark.index : node.end_mark.index])
                if tag and not isinstance(value, str):
                    raise Unsafe(f"the value of {path[-1]!r} has a tag; edit it by hand")
                new = (tag.group(0) if tag else "") + new
                return text[: node.start_mark.index] + new + text[node.end_mark.index :]
        if isinstance(value, (dict, list)):
            raise Unsafe(f"cannot add a nested {type(value).__name__} as {path[-1]!r}")
        if not parent.value:
            raise Unsafe(f"{json_pointer(path[:-1])} is an empty mapping")
        last_key, last = parent.value[-1]
        if parent.flow_style:
            at = self._end(last)
            pair = f", {path[-1]}: {yaml_scalar(value, AUTO, flow=True)}"
            return text[:at] + pair + text[at:]
        column = parent.value[0][0].start_mark.column
        lines = mapping_lines({path[-1]: value}, column, parent)
        at = _line_end(text, self._end(last))
        body = " " * column + lines[0] + "".join(self.nl + line for line in lines[1:])
        return text[:at] + self.nl + body + text[at:]


def _style_of(example, key: str) -> Optional[str]:
    for k, v in example.value:
        if k.value == key:
            return getattr(v, "style", AUTO)
    return AUTO


def _ordered(value: dict, example) -> List[Tuple[str, Any]]:
    order = [k.value for k, _ in example.value] if example is not None else []
    keys = [k for k in order if k in value] + [k for k in value if k not in order]
    return [(k, value[k]) for k in keys]


def editor_for(path: str, data: bytes) -> Editor:
    """A YAML editor for ``.yaml``/``.yml``, a JSON one otherwise (as the hooks read them)."""
    text = decode_text(data)
    if path.endswith((".yaml", ".yml")):
        return YamlEditor(path, text)
    return JsonEditor(path, text)


def new_yaml_mapping(value: dict, example_text: Optional[str] = None, nl: str = "\n") -> str:
    """A new YAML file holding the mapping ``value``, in the style of ``example_text``
    (another file of the same kind) when given."""
    import yaml

    example = None
    if example_text is not None:
        node = yaml.compose(example_text, Loader=yaml.SafeLoader)
        if isinstance(node, yaml.MappingNode) and not node.flow_style:
            example = node
    text = nl.join(mapping_lines(value, 0, example)) + nl
    if strict_key(load_yaml(text.encode("utf-8")).value) != strict_key(value):
        raise Unsafe("the new file does not read back as the intended value")
    return text


def same_value(a: Any, b: Any) -> bool:
    return strict_key(a) == strict_key(b)
