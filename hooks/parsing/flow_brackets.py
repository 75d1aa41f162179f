"""Whether a YAML flow collection's opening bracket is ever closed: read from the
raw text, so that a line below the block's indent inside it is reported as the
bracket left open (its usual cause) rather than as an indentation rule."""

from __future__ import annotations

CLOSERS = {"[": "]", "{": "}"}


def closes(text: str, start: int) -> bool:
    """Does the bracket at ``text[start]`` have its closer later in ``text``?
    Quoted strings and comments are skipped as YAML reads them; this is a
    diagnosis only, never what decides whether the file loads."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return True
        elif ch == "#" and (i == 0 or text[i - 1] in " \t\r\n"):
            while i < len(text) and text[i] not in "\r\n":
                i += 1
        elif ch == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == "'" and (i == 0 or text[i - 1] in " \t\r\n[{,:"):
            i += 1
            while i < len(text) and not (text[i] == "'" and text[i + 1 : i + 2] != "'"):
                i += 2 if text[i] == "'" else 1
        i += 1
    return False
