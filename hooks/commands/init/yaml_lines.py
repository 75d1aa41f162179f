"""YAML written a line at a time, each with its comment in one column: how init
writes the contract and the pre-commit entry."""

from __future__ import annotations

import json
import re
from typing import Any

COMMENT_COLUMN = 40


def scalar(value: Any) -> str:
    """A YAML scalar (or flow list or mapping, as JSON) that reads back as ``value``."""
    # deferred: PyYAML: 10 ms to import, only for scalar()
    import yaml

    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, (str, int, float, list, dict)):
        raise TypeError(f"cannot write {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):  # a float YAML reads back: digits on both sides of a dot
        if not re.fullmatch(r"-?[0-9]+\.[0-9]+", repr(value)):
            raise TypeError(f"cannot write {value!r}")
        return repr(value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
    plain = value
    try:
        if yaml.safe_load(f"k: {plain}\n") == {"k": value} and "#" not in plain:
            return plain
    except yaml.YAMLError:
        pass
    return json.dumps(value, ensure_ascii=False)


def line(text: str, note: str = "") -> str:
    if not note:
        return text
    return f"{text.ljust(COMMENT_COLUMN - 1)} # {note}"
