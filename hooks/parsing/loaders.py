"""Loading a file by its name's suffix: strict YAML for .yaml/.yml, strict JSON otherwise."""

from __future__ import annotations

from oracle_guard.parsing.strict_input import Document
from oracle_guard.parsing.strict_json import load_json
from oracle_guard.parsing.strict_yaml import load_yaml


def loader_for(path: str) -> str:
    """The loader ``load_by_name`` picks for ``path``: "yaml" for ``.yaml``/``.yml``,
    "json" otherwise. A verdict on a file's bytes depends on it, so caches key by it."""
    return "yaml" if path.endswith((".yaml", ".yml")) else "json"


def load_by_name(path: str, data: bytes) -> Document:
    """YAML for ``.yaml``/``.yml``, JSON otherwise."""
    if loader_for(path) == "yaml":
        return load_yaml(data)
    return load_json(data, positions=True)
