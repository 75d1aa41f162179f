"""Writes ``_generated/validators.py``: for each built-in schema, a predicate that
is True exactly where jsonschema's Draft 2020-12 validator finds no error, in
plain Python, so a valid document costs neither jsonschema's import nor its
schema walk. An invalid one still goes to jsonschema, for its messages.

    python -m oracle_guard.parsing.codegen          # rewrite the module
    python -m oracle_guard.parsing.codegen --check  # exit 1 if it is stale

Only the keywords the schemas use are known; any other makes this refuse
(GenerationError), so a new keyword is ported on purpose, never skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

# fixtures-lock is left out: how a lock is validated is the fixture-lock check's
# to choose (generate(names=...) can write its predicate too)
GENERATED = (
    "contract",
    "freeze",
    "flake-budget",
    "quarantine-entry",
    "quarantine-list",
    "corpus-line",
    "replay-case",
)
DRAFT = "https://json-schema.org/draft/2020-12/schema"
MODULE = os.path.join("_generated", "validators.py")  # beside parsing/, under the package

# keywords that assert nothing (jsonschema without a format checker)
_ANNOTATIONS = {
    "title",
    "description",
    "$comment",
    "$defs",
    "$schema",
    "$id",
    "default",
    "examples",
}
_TYPE_TESTS = {
    "object": "isinstance(x, dict)",
    "array": "isinstance(x, list)",
    "string": "isinstance(x, str)",
    "boolean": "isinstance(x, bool)",
    "null": "x is None",
    "integer": "_is_integer(x)",
    "number": "_is_number(x)",
}
# the instance type a keyword asserts on; any other type passes it
_APPLIES_TO = {
    "required": "object",
    "properties": "object",
    "additionalProperties": "object",
    "propertyNames": "object",
    "items": "array",
    "minItems": "array",
    "uniqueItems": "array",
    "minLength": "string",
    "pattern": "string",
    "minimum": "number",
    "maximum": "number",
    "exclusiveMinimum": "number",
}
_TYPE_GUARD = {"object": "dict", "array": "list", "string": "str"}


class GenerationError(Exception):
    """A schema uses what the generator does not translate."""


def _escape(key: str) -> str:
    """A property name as a JSON pointer part."""
    return key.replace("~", "~0").replace("/", "~1")


def _count(schema: dict, keyword: str, doc_id: str, pointer: str) -> int:
    value = schema[keyword]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GenerationError(f"{doc_id}#{pointer}: {keyword} must be a count")
    return value


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool, int, float))


class _Generator:
    def __init__(self, documents: Dict[str, dict]) -> None:
        self.documents = documents  # by $id
        self.functions: Dict[Tuple[str, str], str] = {}  # (document id, pointer) -> name
        self.queue: List[Tuple[str, str, Any]] = []
        self.chunks: List[str] = []
        self.patterns: Dict[str, str] = {}  # regex -> constant name
        self.tables: List[str] = []  # module-level property tables

    def function(self, doc_id: str, pointer: str) -> str:
        key = (doc_id, pointer)
        if key not in self.functions:
            short = doc_id.rsplit(":", 1)[-1]
            tail = re.sub(r"[^A-Za-z0-9]+", "_", pointer).strip("_")
            name = "_" + re.sub(r"[^A-Za-z0-9]+", "_", short) + ("_" + tail if tail else "")
            taken = set(self.functions.values())
            base, n = name, 1
            while name in taken:  # two pointers that read alike
                n += 1
                name = f"{base}_{n}"
            self.functions[key] = name
            self.queue.append((doc_id, pointer, self.resolve(doc_id, pointer)))
        return self.functions[key]

    def resolve(self, doc_id: str, pointer: str) -> Any:
        node: Any = self.documents[doc_id]
        for part in [p for p in pointer.split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise GenerationError(f"{doc_id}#{pointer} does not exist")
        return node

    def ref(self, doc_id: str, ref: str) -> str:
        target, _, pointer = ref.partition("#")
        target = target or doc_id
        if target not in self.documents:
            raise GenerationError(f"$ref {ref!r} names no built-in schema")
        return self.function(target, pointer)

    def pattern(self, regex: str) -> str:
        if regex not in self.patterns:
            re.compile(regex)  # a bad pattern fails here, not at import
            self.patterns[regex] = f"_PATTERN_{len(self.patterns)}"
        return self.patterns[regex]

    def run(self) -> None:
        while self.queue:
            doc_id, pointer, schema = self.queue.pop(0)
            name = self.functions[(doc_id, pointer)]
            body = self.body(schema, doc_id, pointer)
            self.chunks.append(
                f"def {name}(x: Any) -> bool:\n    # {doc_id}#{pointer}\n"
                + "".join(f"    {line}\n" for line in body)
            )

    def body(self, schema: Any, doc_id: str, pointer: str) -> List[str]:
        if schema is True or schema is False:
            return [f"return {schema}"]
        if not isinstance(schema, dict):
            raise GenerationError(f"{doc_id}#{pointer}: a schema must be an object or boolean")
        unknown = set(schema) - _ANNOTATIONS - set(_APPLIES_TO) - {"type", "const", "enum"}
        unknown -= {"$ref", "anyOf", "allOf"}
        if unknown:
            raise GenerationError(f"{doc_id}#{pointer}: keywords {sorted(unknown)} not supported")
        if pointer and ("$schema" in schema or "$id" in schema):
            raise GenerationError(f"{doc_id}#{pointer}: $schema or $id below the root")

        lines: List[str] = []
        known: Optional[str] = None  # the one type "type" leaves, if it leaves one
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not types or any(t not in _TYPE_TESTS for t in types):
                raise GenerationError(f"{doc_id}#{pointer}: type {schema['type']!r}")
            tests = " or ".join(_TYPE_TESTS[t] for t in types)
            lines += [f"if not ({tests}):", "    return False"]
            if len(types) == 1:
                known = {"integer": "number"}.get(types[0], types[0])

        if "const" in schema:
            lines += self.equal_to([schema["const"]], doc_id, pointer)
        if "enum" in schema:
            if not isinstance(schema["enum"], list) or not schema["enum"]:
                raise GenerationError(f"{doc_id}#{pointer}: enum must be a non-empty list")
            lines += self.equal_to(schema["enum"], doc_id, pointer)
        if "$ref" in schema:
            lines += [f"if not {self.ref(doc_id, schema['$ref'])}(x):", "    return False"]
        for keyword, joiner in (("allOf", " and "), ("anyOf", " or ")):
            if keyword in schema:
                subs = schema[keyword]
                if not isinstance(subs, list) or not subs:
                    raise GenerationError(f"{doc_id}#{pointer}: {keyword} must be a non-empty list")
                calls = [
                    f"{self.function(doc_id, f'{pointer}/{keyword}/{i}')}(x)"
                    for i in range(len(subs))
                ]
                lines += [f"if not ({joiner.join(calls)}):", "    return False"]

        for kind in ("object", "array", "string", "number"):
            checks = self.checks(kind, schema, doc_id, pointer)
            if not checks:
                continue
            if known == kind:
                lines += checks
            else:
                guard = _TYPE_GUARD.get(kind) and f"isinstance(x, {_TYPE_GUARD[kind]})"
                lines += [f"if {guard or '_is_number(x)'}:"] + [f"    {c}" for c in checks]
        return lines + ["return True"]

    def equal_to(self, values: Sequence[Any], doc_id: str, pointer: str) -> List[str]:
        """const and enum by jsonschema's equality (True is not 1), for scalar values."""
        if not all(_scalar(v) for v in values):
            raise GenerationError(f"{doc_id}#{pointer}: const or enum beyond scalars")
        if all(isinstance(v, str) for v in values):
            members = ", ".join(json.dumps(v) for v in sorted(set(values)))
            return [f"if not (isinstance(x, str) and x in ({members},)):", "    return False"]
        tests = " or ".join(f"_equal_scalar(x, {v!r})" for v in values)
        return [f"if not ({tests}):", "    return False"]

    def checks(self, kind: str, schema: dict, doc_id: str, pointer: str) -> List[str]:
        out: List[str] = []
        if kind == "object":
            for name in schema.get("required", []):
                out += [f"if {json.dumps(name)} not in x:", "    return False"]
            if "propertyNames" in schema:  # each key, as an instance of its own
                names = self.function(doc_id, f"{pointer}/propertyNames")
                out += ["for key in x:", f"    if not {names}(key):", "        return False"]
            properties = schema.get("properties", {})
            if not isinstance(properties, dict):
                raise GenerationError(f"{doc_id}#{pointer}: properties must be an object")
            table = f"_PROPERTIES_{len(self.tables)}"
            entries = [
                f"    {json.dumps(key)}: {self.function(doc_id, f'{pointer}/properties/{_escape(key)}')},\n"
                for key in properties
            ]
            extra = schema.get("additionalProperties", True)
            if extra is True and not properties:
                return out
            self.tables.append(
                f"{table}: Dict[str, Callable[[Any], bool]] = {{\n{''.join(entries)}}}\n"
            )
            if extra is True:
                out += [
                    f"for key, check in {table}.items():",
                    "    if key in x and not check(x[key]):",
                    "        return False",
                ]
                return out
            out += ["for key, value in x.items():", f"    check = {table}.get(key)"]
            if extra is False:
                out += ["    if check is None:", "        return False"]
            else:
                other = self.function(doc_id, f"{pointer}/additionalProperties")
                out += ["    if check is None:", f"        check = {other}"]
            out += ["    if not check(value):", "        return False"]
        elif kind == "array":
            if "items" in schema:
                if not isinstance(schema["items"], (dict, bool)):
                    raise GenerationError(f"{doc_id}#{pointer}: items must be one schema")
                item = self.function(doc_id, f"{pointer}/items")
                out += ["for item in x:", f"    if not {item}(item):", "        return False"]
            if "minItems" in schema:
                out += [
                    f"if len(x) < {_count(schema, 'minItems', doc_id, pointer)}:",
                    "    return False",
                ]
            if schema.get("uniqueItems") is True:
                # items checked above: all strings, so set() is jsonschema's equality
                if (schema.get("items") or {}).get("type") != "string":
                    raise GenerationError(f"{doc_id}#{pointer}: uniqueItems beyond strings")
                out += ["if len(set(x)) != len(x):", "    return False"]
        elif kind == "string":
            if "minLength" in schema:
                out += [
                    f"if len(x) < {_count(schema, 'minLength', doc_id, pointer)}:",
                    "    return False",
                ]
            if "pattern" in schema:
                constant = self.pattern(schema["pattern"])
                out += [f"if {constant}.search(x) is None:", "    return False"]
        else:
            for keyword, fails in (("minimum", "<"), ("maximum", ">"), ("exclusiveMinimum", "<=")):
                if keyword in schema:
                    bound = schema[keyword]
                    if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                        raise GenerationError(f"{doc_id}#{pointer}: {keyword} must be a number")
                    out += [f"if x {fails} {bound!r}:", "    return False"]
        return out


HEADER = '''"""Generated by oracle_guard.parsing.codegen from schemas/*.schema.json: do not
edit; rerun ``python -m oracle_guard.parsing.codegen``. tests/generated_validators_test.py
fails while it is stale. VALID[name](document) is True exactly where jsonschema's
Draft 2020-12 validator finds no error."""

from __future__ import annotations

import re
from typing import Any, Callable, Dict

# the SHA-256 of each schema file this was generated from
SOURCES = {
%s}


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _equal_scalar(x: Any, value: Any) -> bool:
    """jsonschema's equal() against a str, number, bool or None: True is not 1."""
    if x is value:
        return True
    if isinstance(x, str) or isinstance(value, str):
        return bool(x == value)
    if isinstance(x, bool) or isinstance(value, bool) or not _is_number(x):
        return False
    return bool(x == value)


'''


def schema_files(folder: str) -> Dict[str, bytes]:
    names = sorted(n for n in os.listdir(folder) if n.endswith(".schema.json"))
    out = {}
    for name in names:
        with open(os.path.join(folder, name), "rb") as f:
            out[name] = f.read()
    return out


def generate(folder: str, names: Sequence[str] = GENERATED) -> str:
    """The module's text for the schemas ``names`` (file names less
    ``.schema.json``) of those in ``folder``."""
    files = schema_files(folder)
    documents: Dict[str, dict] = {}
    ids: Dict[str, str] = {}
    for filename, data in files.items():
        try:
            schema = json.loads(data)
        except ValueError as exc:
            raise GenerationError(f"{filename}: not JSON ({exc})") from None
        if not isinstance(schema, dict) or schema.get("$schema") != DRAFT:
            raise GenerationError(f"{filename}: $schema is not {DRAFT}")
        if not isinstance(schema.get("$id"), str):
            raise GenerationError(f"{filename}: no $id")
        documents[schema["$id"]] = schema
        ids[filename[: -len(".schema.json")]] = schema["$id"]
    missing = [name for name in names if name not in ids]
    if missing:
        raise GenerationError(f"no schema file for {', '.join(missing)}")
    gen = _Generator(documents)
    roots = {name: gen.function(ids[name], "") for name in names}
    gen.run()
    sources = "".join(
        f"    {json.dumps(n)}: {json.dumps(hashlib.sha256(d).hexdigest())},\n"
        for n, d in files.items()
    )
    patterns = "".join(f"{c} = re.compile({r!r})\n" for r, c in gen.patterns.items())
    valid = "".join(f"    {json.dumps(n)}: {f},\n" for n, f in roots.items())
    return (
        HEADER % sources
        + patterns
        + "\n\n"
        + "\n\n".join(gen.chunks)
        + "\n\n"
        + "\n".join(gen.tables)
        + f"\nVALID: Dict[str, Callable[[Any], bool]] = {{\n{valid}}}\n"
    )


def module_path() -> str:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(package, MODULE)


def main(argv: Optional[Sequence[str]] = None) -> int:
    # deferred: under 1 ms to import, only for main()
    from oracle_guard.parsing.validation import schema_dir

    args = list(sys.argv[1:] if argv is None else argv)
    if args not in ([], ["--check"]):
        print("usage: python -m oracle_guard.parsing.codegen [--check]", file=sys.stderr)
        return 2
    try:
        text = generate(schema_dir())
    except (GenerationError, OSError) as exc:
        print(f"codegen: error: {exc}", file=sys.stderr)
        return 2
    path = module_path()
    try:
        with open(path, encoding="utf-8") as f:
            current: Optional[str] = f.read()
    except FileNotFoundError:
        current = None
    if args == ["--check"]:
        if current != text:
            print(f"{path} is stale: run python -m oracle_guard.parsing.codegen", file=sys.stderr)
            return 1
        return 0
    if current != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
