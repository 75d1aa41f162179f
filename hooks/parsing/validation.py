"""JSON Schema validation with the schemas shipped in ``schemas/``.

jsonschema is imported on first use only.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any, List, Optional, Tuple

BUILTIN = ("freeze", "flake-budget", "quarantine-entry", "quarantine-list")


@functools.cache
def schema_dir() -> str:
    """Where ``schemas/`` was installed (package data ``oracle_guard.schemas``)."""
    import importlib.util

    spec = importlib.util.find_spec("oracle_guard.schemas")
    assert spec is not None and spec.submodule_search_locations is not None  # a package
    return list(spec.submodule_search_locations)[0]


Problem = Tuple[Tuple[Any, ...], str]


def schema_path(name: str) -> str:
    return os.path.join(schema_dir(), f"{name}.schema.json")


@functools.cache
def builtin_schema(name: str) -> dict:
    with open(schema_path(name), encoding="utf-8") as f:
        return json.load(f)


@functools.cache
def _registry():
    from referencing import Registry, Resource

    names = [
        n[: -len(".schema.json")] for n in os.listdir(schema_dir()) if n.endswith(".schema.json")
    ]
    resources = []
    for name in names:
        schema = builtin_schema(name)
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@functools.cache
def _builtin_validator(name: str):
    from jsonschema import Draft202012Validator

    return Draft202012Validator(builtin_schema(name), registry=_registry())


class SchemaError(Exception):
    """A schema file itself is unusable."""


def custom_validator(schema: Any):
    import jsonschema
    from jsonschema import validators

    if not isinstance(schema, dict):
        raise SchemaError("a JSON Schema must be an object")
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise SchemaError(f"not a valid JSON Schema: {exc.message}") from None
    return cls(schema)


def problems(instance: Any, name: Optional[str] = None, validator=None) -> List[Problem]:
    """(json path, message) for each schema violation, in document order."""
    from jsonschema.exceptions import best_match
    from referencing.exceptions import Unresolvable

    if validator is None:
        validator = _builtin_validator(name)
    out = []
    try:
        for error in validator.iter_errors(instance):
            if error.context:
                error = best_match(error.context) or error
            out.append((tuple(error.absolute_path), error.message))
    except Unresolvable as exc:  # never fetched: schemas are judged offline
        raise SchemaError(
            f"cannot resolve $ref {getattr(exc, 'ref', exc)!r}; "
            "only references inside the schema file are supported"
        ) from None
    out.sort(key=lambda p: [str(x) for x in p[0]])
    return out
