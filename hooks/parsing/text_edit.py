"""Comment- and layout-preserving edits of JSON and YAML oracle files.

Nothing is round-tripped through a serializer: an edit changes only the text of
the element it touches, and a new element copies the layout of its neighbour
(indentation, separators, quoting, key order). After every edit the whole text
is parsed again with the strict loaders and must equal the intended value; a
layout this cannot do safely (a flow-style list, a list item whose ``-`` stands
on its own line, ...) raises Unsafe instead of being reformatted.

This module is what every editor shares: the Editor base, Unsafe and the line
arithmetic; ``parsing/json_edit.py`` and ``parsing/yaml_edit.py`` hold the
editors, ``parsing/file_editor.py`` picks one by a file's name.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Tuple, Union

from oracle_guard.parsing import strict_input
from oracle_guard.parsing.strict_equality import strict_key

DocPath = Tuple[Union[str, int], ...]


class Unsafe(Exception):
    """The file's layout cannot be edited safely by a program."""


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def line_end(text: str, pos: int) -> int:
    """The position of the newline ending the line at ``pos`` (or the end of the text),
    before a CR of a CRLF ending."""
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    return end - 1 if end > 0 and text[end - 1] == "\r" and end - 1 >= pos else end


def line_after(text: str, pos: int) -> int:
    """The start of the line after the one holding ``pos``."""
    end = text.find("\n", pos)
    return len(text) if end < 0 else end + 1


def value_at(value: Any, path: DocPath) -> Any:
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
        value_at(intended, path).append(copy.deepcopy(item))
        self._commit(self._append(path, item), intended)

    def delete(self, path: DocPath) -> None:
        """Delete a list item (``path`` ends in an index) or a mapping member (a key)."""
        intended = copy.deepcopy(self.value)
        del value_at(intended, path[:-1])[path[-1]]
        self._commit(self._delete(path), intended)

    def set(self, path: DocPath, value: Any) -> None:
        """Replace a mapping member's value, or add the member after the last one."""
        intended = copy.deepcopy(self.value)
        value_at(intended, path[:-1])[path[-1]] = copy.deepcopy(value)
        self._commit(self._set(path, value), intended)

    def _commit(self, text: str, intended: Any) -> None:
        try:
            got = self.load(text)
        except strict_input.LoadError as exc:
            raise Unsafe(f"the edited text does not parse ({exc})") from None
        if strict_key(got) != strict_key(intended):
            raise Unsafe("the edited text does not read back as the intended value")
        self.text, self.value = text, got


def same_value(a: Any, b: Any) -> bool:
    return strict_key(a) == strict_key(b)
