"""Text as it is printed: a path or message from the repository (which git lets
hold any byte but NUL) can neither drive the terminal nor act as a CI command."""

from __future__ import annotations

from typing import Optional


def _escaped(text: str, backslash: bool) -> str:
    out = []
    for ch in text:
        if "\udc80" <= ch <= "\udcff":
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif ch == "\\":
            out.append("\\\\" if backslash else ch)
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 or ch in "\u2028\u2029":
            out.append(ch.encode("unicode_escape").decode())
        else:
            out.append(ch)
    return "".join(out)


def show_path(path: Optional[str]) -> str:
    """Printable path: control characters and undecodable bytes escaped."""
    return "." if path is None else _escaped(path, backslash=True)


def show_text(text: str) -> str:
    """A message as printed: control characters and undecodable bytes escaped, so
    a file name inside it can neither start a line nor drive the terminal."""
    return _escaped(text, backslash=False)


def inert(line: str) -> str:
    """A printed line that no CI log reads as a command: GitHub's runner acts on a
    line starting '::' after any white space, and on '##[' anywhere in it. Finding
    lines start with a path, which git never starts with './'."""
    if line.lstrip().startswith("::"):
        line = "./" + line
    return line.replace("##[", "##\\[")


def printable(text: str) -> str:
    """Undecodable bytes (kept as surrogates by git's -z plumbing) as ``\\xNN``,
    everything else as is: the machine formats escape the rest themselves."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
