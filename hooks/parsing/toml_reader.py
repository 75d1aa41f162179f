"""TOML, read as pytest reads it: tomllib, or before Python 3.11 the tomli backport
it was made from."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Dict


def toml_module() -> Any:
    if sys.version_info >= (3, 11):
        # deferred: tomllib: 3 ms to import, only for toml_module()
        import tomllib

        return tomllib
    return importlib.import_module("tomli")


def load_toml(data: bytes) -> Dict[str, Any]:
    """The document; ValueError (tomllib's TOMLDecodeError, or bad UTF-8) when it is not TOML."""
    return toml_module().loads(data.decode("utf-8"))
