"""The layout-preserving editor of YAML files, and the YAML text of new scalars and mappings."""

from __future__ import annotations

import re
from typing import Any, List, Optional, Tuple, Union

import yaml

from oracle_guard.parsing import strict_input, strict_yaml
from oracle_guard.parsing.strict_equality import strict_key
from oracle_guard.parsing.text_edit import DocPath, Editor, Unsafe, line_after, line_end, line_start

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
    if not text or text != text.strip() or "\n" in text or "\r" in text:
        return False
    probe = ("{k: %s}" % text if flow else "k: %s" % text).encode("utf-8", "surrogatepass")
    try:
        if strict_yaml.load_yaml(probe).value != {"k": text}:
            return False
        return not portable or yaml.safe_load(probe) == {"k": text}
    except (strict_input.LoadError, yaml.YAMLError, UnicodeDecodeError):
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


def mapping_lines(
    value: dict, column: int, example: Optional[yaml.MappingNode] = None
) -> List[str]:
    """Block mapping lines for ``value``, the mapping's first key at ``column``: the
    first line without its indentation (it may follow a '- '), the others indented.
    Copies ``example``'s (a mapping node's) key order, quoting and value alignment."""
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
        return strict_yaml.load_yaml(text.encode("utf-8")).value

    def _root(self) -> Optional[yaml.Node]:
        return yaml.compose(self.text, Loader=yaml.SafeLoader)

    def _node(self, path: DocPath, root: Optional[yaml.Node] = None) -> Any:
        # Any: which kind each node is, the path says (the callers check it)
        node: Any = self._root() if root is None else root
        for part in path:
            if isinstance(part, int):
                node = node.value[part]
            else:
                node = next(v for k, v in node.value if k.value == part)
        return node

    def _key_node(self, path: DocPath) -> Optional[yaml.Node]:
        """The key node whose value lies at ``path`` (None for the root)."""
        if not path or isinstance(path[-1], int):
            return None
        parent = self._node(path[:-1])
        return next(k for k, _ in parent.value if k.value == path[-1])

    def _end(self, node: Union[yaml.ScalarNode, yaml.CollectionNode]) -> int:
        """Just past the last character of ``node``'s content (comments and the
        blank lines a block scalar's end mark runs over are not content)."""
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

    def _item_columns(self, item: yaml.Node) -> Tuple[int, int]:
        """(column of '-', column of the content) of a block list item."""
        start = item.start_mark.index
        head = self.text[line_start(self.text, start) : start]
        match = _ITEM_PREFIX.fullmatch(head)
        if not match:
            raise Unsafe("a list item does not start on the line of its '-'")
        return len(match.group(1)), len(head)

    def _colon_after(self, key: yaml.Node) -> int:
        pos = key.end_mark.index
        while self.text[pos] in " \t":
            pos += 1
        if self.text[pos] != ":":
            raise Unsafe(f"no ':' after the key {key.value!r}")
        return pos + 1

    # -- rendering ---------------------------------------------------------
    def _item_lines(self, item: Any, column: int, example: Optional[yaml.Node]) -> List[str]:
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
        seq, text = self._node(path), self.text
        if not isinstance(seq, yaml.SequenceNode):
            raise Unsafe(f"{strict_input.json_pointer(path)} is not a list")
        if seq.flow_style:
            if seq.value:
                raise Unsafe(f"{strict_input.json_pointer(path)} is a flow-style list [...]")
            return self._append_to_empty(path, seq, item)
        last = seq.value[-1]
        dash, column = self._item_columns(last)
        lines = self._item_lines(item, column, last)
        first = " " * dash + "-" + " " * (column - dash - 1) + lines[0]
        at = line_end(text, self._end(last))
        rest = "".join(self.nl + line for line in lines[1:])
        return text[:at] + self.nl + first + rest + text[at:]

    def _append_to_empty(self, path: DocPath, seq: yaml.SequenceNode, item: Any) -> str:
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
        at = line_end(text, colon)
        body = (
            self.nl + " " * dash + "- " + lines[0] + "".join(self.nl + line for line in lines[1:])
        )
        return text[:at] + body + text[at:]

    def _delete(self, path: DocPath) -> str:
        parent, text = self._node(path[:-1]), self.text
        if parent.flow_style:
            raise Unsafe(f"{strict_input.json_pointer(path[:-1])} is written in flow style")
        if isinstance(parent, yaml.SequenceNode):
            item = parent.value[path[-1]]
            self._item_columns(item)
            start = line_start(text, item.start_mark.index)
            end = line_after(text, self._end(item))
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
        head = text[line_start(text, key.start_mark.index) : key.start_mark.index]
        if head.strip() or len(pairs) == 1:
            raise Unsafe(f"cannot delete the line(s) of {path[-1]!r} alone")
        start = line_start(text, key.start_mark.index)
        return text[:start] + text[line_after(text, self._end(value)) :]

    def _set(self, path: DocPath, value: Any) -> str:
        parent, text = self._node(path[:-1]), self.text
        if not isinstance(parent, yaml.MappingNode):
            raise Unsafe(f"{strict_input.json_pointer(path[:-1])} is not a mapping")
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
            raise Unsafe(f"{strict_input.json_pointer(path[:-1])} is an empty mapping")
        last_key, last = parent.value[-1]
        if parent.flow_style:
            at = self._end(last)
            pair = f", {path[-1]}: {yaml_scalar(value, AUTO, flow=True)}"
            return text[:at] + pair + text[at:]
        column = parent.value[0][0].start_mark.column
        lines = mapping_lines({path[-1]: value}, column, parent)
        at = line_end(text, self._end(last))
        body = " " * column + lines[0] + "".join(self.nl + line for line in lines[1:])
        return text[:at] + self.nl + body + text[at:]


def _style_of(example: yaml.MappingNode, key: str) -> Optional[str]:
    for k, v in example.value:
        if k.value == key:
            return getattr(v, "style", AUTO)
    return AUTO


def _ordered(value: dict, example: Optional[yaml.MappingNode]) -> List[Tuple[str, Any]]:
    order = [k.value for k, _ in example.value] if example is not None else []
    keys = [k for k in order if k in value] + [k for k in value if k not in order]
    return [(k, value[k]) for k in keys]


def new_yaml_mapping(value: dict, example_text: Optional[str] = None, nl: str = "\n") -> str:
    """A new YAML file holding the mapping ``value``, in the style of ``example_text``
    (another file of the same kind) when given."""
    example = None
    if example_text is not None:
        node = yaml.compose(example_text, Loader=yaml.SafeLoader)
        if isinstance(node, yaml.MappingNode) and not node.flow_style:
            example = node
    text = nl.join(mapping_lines(value, 0, example)) + nl
    if strict_key(strict_yaml.load_yaml(text.encode("utf-8")).value) != strict_key(value):
        raise Unsafe("the new file does not read back as the intended value")
    return text
