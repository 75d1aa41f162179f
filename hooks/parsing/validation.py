"""JSON Schema validation with the schemas shipped in ``schemas/``.

A document a built-in schema accepts is told so by the predicates codegen.py
generated from it, without importing jsonschema; jsonschema (imported on first
use only) judges every other document, so each message is its own.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from referencing import Registry

BUILTIN = ("freeze", "flake-budget", "quarantine-entry", "quarantine-list")


@functools.cache
def schema_dir() -> str:
    """Where ``schemas/`` was installed (package data ``oracle_guard.schemas``)."""

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
def _registry() -> Registry[Any]:
    # deferred: referencing: 29 ms to import, only for _registry()
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
def _fast_validator(name: str) -> Optional[Callable[[Any], bool]]:
    """The generated predicate for a built-in schema, or None where there is none
    or the schema files are not the ones it was generated from (then jsonschema
    judges alone: an edited schema is never judged by a stale predicate)."""
    # deferred: 1 ms to import, only for _fast_validator()
    from oracle_guard._generated import validators as generated

    if name not in generated.VALID or not _shipped_schemas_match():
        return None
    return generated.VALID[name]


@functools.cache
def _shipped_schemas_match() -> bool:
    return generated_matches(schema_dir())


def generated_matches(folder: str) -> bool:
    """Whether the schema files in ``folder`` are those the predicates were generated from."""
    # deferred: hashlib: 3 ms to import, only for generated_matches()
    import hashlib

    # deferred: 2 ms to import, only for generated_matches()
    from oracle_guard._generated import validators as generated

    for filename, digest in generated.SOURCES.items():
        try:
            with open(os.path.join(folder, filename), "rb") as f:
                data = f.read()
        except OSError:
            return False
        if hashlib.sha256(data).hexdigest() != digest:
            return False
    return True


@functools.cache
def _builtin_validator(name: str) -> Validator:
    # deferred: jsonschema: 52 ms to import, only for _builtin_validator()
    from jsonschema import Draft202012Validator

    return Draft202012Validator(builtin_schema(name), registry=_registry())


class SchemaError(Exception):
    """A schema file itself is unusable."""


def custom_validator(schema: Any) -> Validator:
    # deferred: jsonschema: 53 ms to import, only for custom_validator()
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


def problems(
    instance: Any, name: Optional[str] = None, validator: Optional[Validator] = None
) -> List[Problem]:
    """(json path, message) for each schema violation, in document order."""
    if validator is None and name is not None:
        fast = _fast_validator(name)
        if fast is not None and fast(instance):
            return []
    # deferred: jsonschema, referencing: 52 ms to import, only for problems()
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
