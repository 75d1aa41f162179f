"""Loaded JSON and YAML values compared strictly: a seed 0, a seed 0.0 and a seed
false are three seeds, while an object's key order is no change."""

from __future__ import annotations

from typing import Any


def strict_key(value: Any) -> Any:
    """A hashable form where 0, 0.0 and false differ and key order does not matter."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, str):
        return ("str", value)
    if value is None:
        return ("null",)
    if isinstance(value, list):
        return ("list", tuple(strict_key(v) for v in value))
    return ("object", tuple(sorted((k, strict_key(v)) for k, v in value.items())))
