"""The strict YAML loader: safe scalars only, no tags, anchors or duplicate keys, one document."""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Dict, List, Optional, Tuple, Type

from oracle_guard.parsing.flow_brackets import CLOSERS, closes
from oracle_guard.parsing.strict_input import (
    MAX_DEPTH,
    MAX_INT_DIGITS,
    Document,
    JsonPath,
    LoadError,
    decode_text,
    line_col,
)

_yaml_loader: Optional[Tuple[Any, Type[Any]]] = None  # (yaml, StrictLoader), made once

# The scalars a plain (untagged) YAML value resolves to, as in the YAML 1.2 core
# schema minus its guesses: only true/false are booleans; ``010`` (YAML 1.1
# octal 8), ``1:30`` (sexagesimal 90), ``1_000`` and ``0o17`` stay strings.
# An explicit standard tag (``!!int 7``) is held to the same forms.
_CORE_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_CORE_INT = re.compile(r"^(?:[-+]?(?:0|[1-9][0-9]*)|0x[0-9a-fA-F]+)$")
_CORE_FLOAT = re.compile(
    r"^(?:[-+]?(?:(?:0|[1-9][0-9]*)\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?(?:0|[1-9][0-9]*)[eE][-+]?[0-9]+"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_CORE_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_DECIMAL_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_TAG_FORMS = {  # tag: (its short form, what it accepts, the patterns of that)
    "tag:yaml.org,2002:bool": ("!!bool", "true or false", (_CORE_BOOL,)),
    "tag:yaml.org,2002:int": (
        "!!int",
        "a decimal integer without leading zeros, or 0x hex",
        (_CORE_INT,),
    ),
    "tag:yaml.org,2002:float": ("!!float", "a decimal number", (_CORE_FLOAT, _DECIMAL_INT)),
    "tag:yaml.org,2002:null": ("!!null", "null, ~ or nothing", (_CORE_NULL,)),
}
_BREAKS = "\r\n\x85\u2028\u2029"
_BLANK_OR_END = "\0 \t" + _BREAKS


def _make_loader() -> Tuple[Any, Type[Any]]:
    # deferred: yaml costs about 11 ms to import, which a run reading only JSON never pays
    import yaml
    from yaml.scanner import ScannerError
    from yaml.tokens import ScalarToken

    class StrictResolver(yaml.resolver.BaseResolver):
        yaml_implicit_resolvers: Dict[Any, Any] = {}

    StrictResolver.add_implicit_resolver("tag:yaml.org,2002:bool", _CORE_BOOL, list("tTfF"))
    StrictResolver.add_implicit_resolver("tag:yaml.org,2002:int", _CORE_INT, list("-+0123456789"))
    StrictResolver.add_implicit_resolver(
        "tag:yaml.org,2002:float", _CORE_FLOAT, list("-+0123456789.")
    )
    StrictResolver.add_implicit_resolver("tag:yaml.org,2002:null", _CORE_NULL, ["~", "n", "N", ""])
    for key, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items():
        for res_tag, regexp in resolvers:
            if res_tag == "tag:yaml.org,2002:merge":
                StrictResolver.yaml_implicit_resolvers.setdefault(key, []).append((res_tag, regexp))

    class StrictScanner(yaml.scanner.Scanner):
        """PyYAML's scanner, held to YAML 1.2 where it lets errors through
        (yaml-test-suite): a comment needs white space before ``#``; ``-`` is no
        entry inside a flow collection; lines inside a flow collection or a
        quoted scalar are indented more than the block around them; a block
        scalar's leading empty lines hold no more spaces than its first line;
        ``?x`` in a flow collection is a plain scalar, not a key."""

        # the Reader's, which StrictLoader mixes in before this class
        buffer: str
        pointer: int
        index: int
        line: int
        column: int
        peek: Callable[..., str]
        prefix: Callable[..., str]
        forward: Callable[..., None]
        get_mark: Callable[[], Any]

        def no_comment_here(self) -> None:
            if self.column and self.buffer[self.pointer - 1] not in " \t":
                raise ScannerError(
                    None, None, "a comment needs a space before '#'", self.get_mark()
                )

        def fetch_flow_collection_start(self, TokenClass: Any) -> None:
            # where each open bracket is, for the message when a line leaves it
            self.__dict__.setdefault("flow_openings", []).append(self.get_mark())
            super().fetch_flow_collection_start(TokenClass)

        def fetch_flow_collection_end(self, TokenClass: Any) -> None:
            openings = self.__dict__.get("flow_openings")
            if openings:
                openings.pop()
            super().fetch_flow_collection_end(TokenClass)

        def unclosed(self) -> None:
            """A line under the block's indent inside a flow collection, whose bracket
            (the innermost such) is never closed: that bracket is the error."""
            for mark in reversed(self.__dict__.get("flow_openings", [])):
                if closes(self.buffer, mark.pointer):
                    continue
                bracket = self.buffer[mark.pointer]
                what = "list" if bracket == "[" else "mapping"
                line, column = mark.line + 1, mark.column + 1
                message = (
                    f"the {what} opened by '{bracket}' at line {line}, column {column} is "
                    f"never closed: add its '{CLOSERS[bracket]}' (line {self.line + 1} is "
                    f"indented no deeper than the block around it, so it cannot continue "
                    f"the {what})"
                )
                error = LoadError(message, line, column)
                error.explained = (line, column, message)
                raise error

        def under_indented(self, what: str, start_mark: Any = None) -> None:
            if what == "a flow collection":
                self.unclosed()
                raise ScannerError(
                    None,
                    None,
                    f"a line inside {what} must be indented by more than {self.indent} "
                    "space(s), the block it is in",
                    self.get_mark(),
                )
            raise ScannerError(
                f"while scanning {what}" if start_mark else None,
                start_mark,
                f"a line inside {what} must be indented by more than {self.indent} "
                "space(s), the block it is in (a tab does not indent)",
                self.get_mark(),
            )

        def flow_line_ok(self, ch: str) -> bool:
            """A new line inside a flow collection: indented more than the block
            around it, or blank, or a comment; or the closing bracket alone at
            the block's column: ``key: [`` ... ``]`` is not YAML 1.2, but it is
            unambiguous, common, and what PyYAML always read, so it stays."""
            return (
                self.column > self.indent
                or ch in "\0\t#" + _BREAKS
                or (ch in "]}" and self.column == self.indent)
            )

        def scan_to_next_token(self) -> None:
            if self.index == 0 and self.peek() == "\ufeff":
                self.forward()
            new_line = False
            while True:
                while self.peek() == " ":
                    self.forward()
                ch = self.peek()
                if ch == "#":
                    self.no_comment_here()
                    while self.peek() not in "\0" + _BREAKS:
                        self.forward()
                elif new_line and self.flow_level and not self.flow_line_ok(ch):
                    self.under_indented("a flow collection")
                if self.scan_line_break():
                    new_line = True
                    if not self.flow_level:
                        self.allow_simple_key = True
                else:
                    return

        def check_key(self) -> bool:
            # '?' is the key indicator only before white space, in flow too:
            # ``[?x]`` holds the string '?x' (YAML 1.2)
            return self.peek(1) in _BLANK_OR_END

        def check_plain(self) -> bool:
            ch = self.peek()
            if ch not in "\0 \t\r\n\x85\u2028\u2029-?:,[]{}#&*!|>'\"%@`":
                return True
            following = self.peek(1)
            if following in _BLANK_OR_END:
                return False
            if self.flow_level:
                return ch in "-?" and following not in ",[]{}"
            return ch in "-?:"

        def fetch_block_entry(self) -> None:
            if self.flow_level:
                raise ScannerError(
                    None,
                    None,
                    "a '-' entry is not allowed inside a flow collection (quote it)",
                    self.get_mark(),
                )
            super().fetch_block_entry()

        def scan_flow_scalar_breaks(self, double: bool, start_mark: Any) -> List[str]:
            chunks: List[str] = []
            while True:
                prefix = self.prefix(3)
                if prefix in ("---", "...") and self.peek(3) in _BLANK_OR_END:
                    raise ScannerError(
                        "while scanning a quoted scalar",
                        start_mark,
                        "found unexpected document separator",
                        self.get_mark(),
                    )
                while self.peek() == " ":
                    self.forward()
                if self.column <= self.indent and self.peek() not in "\0" + _BREAKS:
                    self.under_indented("a quoted scalar", start_mark)
                while self.peek() in " \t":
                    self.forward()
                if self.peek() in _BREAKS:
                    chunks.append(self.scan_line_break())
                else:
                    return chunks

        def scan_block_scalar_indentation(self) -> Tuple[List[str], int, Any]:
            chunks: List[str] = []
            max_indent = empty_max = 0
            end_mark = self.get_mark()
            while self.peek() in " " + _BREAKS:
                if self.peek() != " ":
                    chunks.append(self.scan_line_break())
                    end_mark = self.get_mark()
                    empty_max = max_indent
                else:
                    self.forward()
                    if self.column > max_indent:
                        max_indent = self.column
            if self.peek() != "\0" and max(self.indent + 1, 1) <= self.column < empty_max:
                raise ScannerError(
                    None,
                    None,
                    "a leading empty line of this block scalar "
                    f"has {empty_max} spaces, more than its first line "
                    f"({self.column})",
                    self.get_mark(),
                )
            return chunks, max_indent, end_mark

        def scan_plain(self) -> Any:
            # PyYAML's, except that in a flow collection '?' is a character of
            # the scalar (YAML 1.2) and its continuation lines are indented
            # more than the block around them
            chunks: List[str] = []
            start_mark = self.get_mark()
            end_mark = start_mark
            indent = self.indent + 1
            spaces: Optional[List[str]] = []
            flow = self.flow_level
            while True:
                length = 0
                if self.peek() == "#":
                    break
                while True:
                    ch = self.peek(length)
                    if (
                        ch in _BLANK_OR_END
                        or (
                            ch == ":"
                            and self.peek(length + 1) in _BLANK_OR_END + (",[]{}" if flow else "")
                        )
                        or (flow and ch in ",[]{}")
                    ):
                        break
                    length += 1
                if length == 0:
                    break
                self.allow_simple_key = False
                chunks.extend(spaces)  # type: ignore[arg-type]  # a list: the loop goes on only while it is one
                chunks.append(self.prefix(length))
                self.forward(length)
                end_mark = self.get_mark()
                line = self.line
                spaces = self.scan_plain_spaces(indent, start_mark)
                if not spaces or self.peek() == "#" or (not flow and self.column < indent):
                    break
                if flow and self.line != line and not self.flow_line_ok(self.peek()):
                    self.under_indented("a flow collection")
            return ScalarToken("".join(chunks), True, start_mark, end_mark)

    class StrictLoader(
        yaml.reader.Reader,
        StrictScanner,
        yaml.parser.Parser,
        yaml.composer.Composer,
        yaml.constructor.SafeConstructor,
        StrictResolver,
    ):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            StrictScanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            StrictResolver.__init__(self)

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                raise LoadError(f"alias *{event.anchor} is not allowed", *_place(event.start_mark))
            if getattr(event, "anchor", None):
                raise LoadError(f"anchor &{event.anchor} is not allowed", *_place(event.start_mark))
            if isinstance(event, yaml.ScalarEvent) and event.tag == "!":
                event.implicit = (False, False)  # '! 12' is the string "12" (YAML 1.2)
            # the composer recurses once a level: stop before Python's own limit
            self._depth = getattr(self, "_depth", 0) + 1
            try:
                if self._depth > MAX_DEPTH:
                    raise LoadError(
                        f"nested deeper than {MAX_DEPTH} levels", *_place(event.start_mark)
                    )
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    return yaml, StrictLoader


def _place(mark: Any) -> Tuple[int, int]:
    """(line, column), from 1, of a PyYAML mark (an event the parser made has one)."""
    return mark.line + 1, mark.column + 1


_SCALAR_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}


def load_yaml(data: bytes) -> Document:
    """Strict YAML: safe scalars only (YAML 1.2 core booleans ``true``/``false``;
    ``yes``, ``no``, ``on``, ``off`` stay strings; unquoted dates stay strings;
    ``010``, ``1:30`` and ``1_000`` stay strings rather than YAML 1.1 numbers; an
    explicit ``!!int``/``!!float``/``!!bool``/``!!null`` only on a value of that
    form), no anchors, aliases, merge keys or custom tags, one document per file,
    no duplicate keys; YAML 1.2 syntax errors PyYAML lets through are errors too
    (yaml-test-suite, tests/conformance/yaml_suite_test.py)."""
    global _yaml_loader
    if _yaml_loader is None:
        _yaml_loader = _make_loader()
    yaml, loader_cls = _yaml_loader
    text = decode_text(data)
    end = len(text)
    if text and text[-1] not in "\n\r":
        # the end of the file ends its last line: a block scalar's last line
        # of spaces is kept as a line, as in the YAML test suite
        text += "\n"
    try:
        # PyYAML's reader refuses non-printable characters when it is made
        loader = loader_cls(text)
    except yaml.reader.ReaderError as exc:
        code = ord(exc.character) if isinstance(exc.character, str) else exc.character
        raise LoadError(
            f"control character U+{code:04X} is not allowed in YAML",
            *line_col(text, exc.position),
        ) from None
    try:
        node = loader.get_single_node()
        if node is None:
            raise LoadError("empty document", 1, 1)
        lines: Dict[JsonPath, int] = {}
        columns: Dict[JsonPath, int] = {}
        value = _construct(loader, node, (), lines, 0, columns)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = exc.problem or exc.context or "invalid YAML"
        if "expected a single document" in str(exc):
            message = "more than one YAML document in the file"
        if mark and mark.index > end:  # past the line end added above
            error = LoadError(message, *line_col(text, end))
        else:
            error = LoadError(
                message, mark.line + 1 if mark else None, mark.column + 1 if mark else None
            )
        if error.line and error.column and message == (exc.problem or ""):
            error.explained = _explained(exc, error.line, error.column)
        raise error from None
    except yaml.YAMLError as exc:
        raise LoadError(f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()
    return Document(value, lines, columns)


# PyYAML's words for what it was reading, and for the tokens it names
_OPENED = {
    "while parsing a flow sequence": "the list opened by '['",
    "while parsing a flow mapping": "the mapping opened by '{'",
    "while scanning a quoted scalar": "the quoted string opened",
    "while parsing a block collection": "the list that starts",
    "while parsing a block mapping": "the mapping that starts",
    "while scanning a simple key": "the key that starts",
}
_TOKENS = {
    "'<scalar>'": "a value",
    "'<stream end>'": "the end of the file",
    "'?'": "a key",
    "'<block mapping start>'": "a mapping",
    "'<block sequence start>'": "a list",
    "'<block end>'": "the end of the block",
    "'-'": "a list item '-'",
}


def _explained(exc: Any, line: int, column: int) -> Tuple[int, int, str]:
    """(line, column, text): the problem in plain words, placed where the
    construct PyYAML was reading opened, when it says so."""
    problem = exc.problem or ""
    here = f"line {line}, column {column}"
    closer = re.fullmatch(r"expected ',' or '([\]}])', but got (.+)", problem)
    block_end = re.fullmatch(r"expected <block end>, but found (.+)", problem)
    content = re.fullmatch(r"expected the node content, but found (.+)", problem)
    if closer:
        found = _TOKENS.get(closer.group(2), closer.group(2))
        what = f"is not closed: a ',' or '{closer.group(1)}' was expected before {found} at {here}"
    elif problem == "found unexpected end of stream":
        what = "is not closed before the end of the file"
    elif block_end:
        found = _TOKENS.get(block_end.group(1), block_end.group(1))
        what = f"has {found} at {here} that is indented like none of its entries"
    elif content:
        what = f"needs a value at {here}, but has {content.group(1)} there"
    elif problem == "mapping values are not allowed here":
        return (
            line,
            column,
            f"a ':' at {here} starts a key inside a plain value: quote the value, "
            "or put the key on a line of its own",
        )
    elif problem == "could not find expected ':'":
        what = f"has no ':' after it (by {here})"
    elif "'\\t'" in problem:
        return line, column, f"a tab at {here}: YAML indents with spaces, never tabs"
    else:
        what = f"has a problem at {here}: {problem}"
    mark = exc.context_mark
    opened = _OPENED.get(exc.context or "")
    if mark is None or opened is None:
        if what.startswith("has a problem"):
            return line, column, f"{problem} ({here})"
        return line, column, f"the YAML {what}"
    at_line, at_column = mark.line + 1, mark.column + 1
    return at_line, at_column, f"{opened} at line {at_line}, column {at_column} {what}"


def _construct(
    loader: Any,
    node: Any,
    path: JsonPath,
    lines: Dict[JsonPath, int],
    depth: int,
    columns: Optional[Dict[JsonPath, int]] = None,
) -> Any:
    # deferred as in _make_loader, which has imported it by now: this is a lookup
    import yaml

    if columns is None:
        columns = {}
    line = node.start_mark.line + 1
    column = node.start_mark.column + 1
    if depth > MAX_DEPTH:
        raise LoadError(f"nested deeper than {MAX_DEPTH} levels", line, column)
    lines[path] = line
    columns.setdefault(path, column)
    if isinstance(node, yaml.ScalarNode):
        if node.tag == "tag:yaml.org,2002:merge":
            raise LoadError("merge keys (<<) are not allowed", line, column)
        if node.tag not in _SCALAR_TAGS:
            raise LoadError(f"tag {node.tag} is not allowed", line, column)
        if node.tag == "tag:yaml.org,2002:int" and len(node.value.lstrip("+-")) > MAX_INT_DIGITS:
            raise LoadError("integer has too many digits", line, column)
        forms = _TAG_FORMS.get(node.tag)
        if forms and not any(form.match(node.value) for form in forms[2]):
            # only an explicit tag gets here (!!int abc, !!bool yes, !!null foo)
            raise LoadError(
                f"{forms[0]} {node.value[:40]!r} is not {forms[1]} (YAML 1.2 core schema)",
                line,
                column,
            )
        value = loader.construct_object(node, deep=True)
        if isinstance(value, float) and not math.isfinite(value):
            raise LoadError(f"{node.value} is not allowed", line, column)
        return value
    if isinstance(node, yaml.SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            raise LoadError(f"tag {node.tag} is not allowed", line, column)
        return [
            _construct(loader, item, path + (i,), lines, depth + 1, columns)
            for i, item in enumerate(node.value)
        ]
    if node.tag != "tag:yaml.org,2002:map":
        raise LoadError(f"tag {node.tag} is not allowed", line, column)
    result: Dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key_line = key_node.start_mark.line + 1
        key_column = key_node.start_mark.column + 1
        if not isinstance(key_node, yaml.ScalarNode):
            raise LoadError("only plain keys are allowed", key_line, key_column)
        key = _construct(loader, key_node, (), {}, depth + 1)
        if not isinstance(key, str):
            raise LoadError(
                f"key {key_node.value!r} must be a string (quote it)", key_line, key_column
            )
        if key in result:
            raise LoadError(f"duplicate key {key!r}", key_line, key_column)
        columns[path + (key,)] = key_column  # a value is placed at its key
        result[key] = _construct(loader, value_node, path + (key,), lines, depth + 1, columns)
        lines[path + (key,)] = key_line
    return result
