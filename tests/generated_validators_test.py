"""The predicates codegen.py generates from the built-in schemas: fresh, and
agreeing with jsonschema (valid or not) on every document the tests, the
examples and Hypothesis can give them; and a valid document needs no jsonschema."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from oracle_guard._generated import validators as generated_validators
from oracle_guard.parsing import (
    codegen,
    loaders,
    strict_input,
    strict_json,
    strict_yaml,
    validation,
)

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = {name: validation.builtin_schema(name) for name in codegen.GENERATED}


def _registry() -> Registry:
    folder = Path(validation.schema_dir())
    resources = []
    for path in sorted(folder.glob("*.schema.json")):
        schema = json.loads(path.read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


REGISTRY = _registry()
REFERENCE = {name: Draft202012Validator(SCHEMAS[name], registry=REGISTRY) for name in SCHEMAS}


def agree(name: str, document: Any) -> bool:
    """The generated predicate's verdict, asserted to be jsonschema's."""
    fast = generated_validators.VALID[name](document)
    assert fast == REFERENCE[name].is_valid(document), (name, document)
    return fast


# -- fresh ---------------------------------------------------------------------------


def test_the_generated_module_is_what_codegen_writes_from_the_schemas():
    assert codegen.generate(validation.schema_dir()) == Path(codegen.module_path()).read_text(
        encoding="utf-8"
    ), "stale: run python -m oracle_guard.parsing.codegen"
    assert codegen.main(["--check"]) == 0


def copy_schemas(tmp_path: Path) -> Path:
    folder = tmp_path / "schemas"
    shutil.copytree(validation.schema_dir(), folder, ignore=shutil.ignore_patterns("*.py*"))
    return folder


def test_an_edited_schema_changes_the_generated_text(tmp_path):
    folder = copy_schemas(tmp_path)
    assert codegen.generate(str(folder)) == codegen.generate(validation.schema_dir())  # near miss
    path = folder / "freeze.schema.json"
    path.write_text(path.read_text().replace('"minLength": 1', '"minLength": 2', 1))
    assert codegen.generate(str(folder)) != codegen.generate(validation.schema_dir())


def test_predicates_are_used_only_with_the_schema_files_they_were_generated_from(tmp_path):
    folder = copy_schemas(tmp_path)
    assert validation.generated_matches(str(folder))  # near miss: the shipped files
    path = folder / "flake-budget.schema.json"
    path.write_bytes(path.read_bytes() + b" ")  # any byte: the digest decides
    assert not validation.generated_matches(str(folder))
    path.unlink()  # unreadable: jsonschema judges alone
    assert not validation.generated_matches(str(folder))


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("oneOf", [{"type": "string"}]),
        ("format", "date"),
        ("patternProperties", {"^a": {}}),
        ("uniqueItems", True),  # only over string items
        ("const", [1]),  # only scalars
        ("items", [{"type": "string"}]),  # the pre-2020 tuple form
        ("$ref", "urn:elsewhere#/x"),
        ("type", "float"),
        ("minLength", 1.5),
        ("minItems", True),
    ],
)
def test_a_keyword_the_generator_does_not_translate_is_refused(tmp_path, keyword, value):
    folder = copy_schemas(tmp_path)
    path = folder / "freeze.schema.json"
    schema = json.loads(path.read_text())
    schema["properties"]["owner"]["description"] = "an annotation passes"  # near miss
    path.write_text(json.dumps(schema))
    codegen.generate(str(folder))
    schema["properties"]["owner"][keyword] = value
    path.write_text(json.dumps(schema))
    with pytest.raises(codegen.GenerationError):
        codegen.generate(str(folder))


def test_another_draft_is_refused(tmp_path):
    folder = copy_schemas(tmp_path)
    path = folder / "freeze.schema.json"
    path.write_text(path.read_text().replace("draft/2020-12", "draft-07"))
    with pytest.raises(codegen.GenerationError, match=r"freeze.schema.json: \$schema"):
        codegen.generate(str(folder))


def test_the_command_says_stale_in_one_line_and_exits_1(tmp_path):
    """Run on a copy of the package whose module is stale (the real one is not
    touched); a malformed schema is one clear line too."""
    package = tmp_path / "oracle_guard"
    shutil.copytree(ROOT / "hooks", package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "schemas", package / "schemas", ignore=shutil.ignore_patterns("*.py*"))
    (package / "schemas" / "__init__.py").write_text("")
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def codegen_run(*args):
        return subprocess.run(
            [sys.executable, "-m", "oracle_guard.parsing.codegen", *args],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    usage = codegen_run("--bogus")
    assert usage.returncode == 2 and usage.stderr.startswith("usage:")
    fresh = codegen_run("--check")
    assert fresh.returncode == 0, fresh.stderr
    module = package / "_generated" / "validators.py"
    module.write_text(module.read_text() + "# edited\n")
    stale = codegen_run("--check")
    assert stale.returncode == 1
    assert stale.stderr.count("\n") == 1 and "is stale" in stale.stderr
    assert codegen_run().returncode == 0  # rewrites it
    assert codegen_run("--check").returncode == 0
    schema = package / "schemas" / "freeze.schema.json"
    schema.write_text(schema.read_text().replace('"minLength"', '"maxLength"', 1))
    broken = codegen_run("--check")
    assert broken.returncode == 2
    assert broken.stderr.count("\n") == 1 and "maxLength" in broken.stderr
    schema.write_text("{not json")
    corrupt = codegen_run("--check")
    assert corrupt.returncode == 2
    assert corrupt.stderr.count("\n") == 1 and "freeze.schema.json" in corrupt.stderr


# -- the catalogue: every document the tests and the examples hold ---------------------


def _literals() -> Iterator[Any]:
    """Each string literal of tests/ and testing/ that loads as JSON or YAML, and
    each dict or list literal, as a document."""
    for path in sorted([*(ROOT / "tests").rglob("*.py"), *(ROOT / "testing").rglob("*.py")]):
        if "data" in path.relative_to(ROOT).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Dict, ast.List)):
                try:
                    yield ast.literal_eval(node)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    pass
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                if ":" not in text and "[" not in text:
                    continue
                for load in (strict_json.load_json, strict_yaml.load_yaml):
                    try:
                        yield load(text.encode("utf-8", "surrogatepass")).value
                        break
                    except Exception:
                        pass


def _examples() -> Iterator[Any]:
    for path in sorted((ROOT / "examples").rglob("*")):
        if path.is_file() and path.suffix in (".json", ".yaml", ".yml", ".lock"):
            try:
                yield loaders.load_by_name(path.name, path.read_bytes()).value
            except strict_input.LoadError:
                pass
    from oracle_guard.commands import demo

    for text in (demo.CONTRACT, demo.BUDGET):
        yield strict_yaml.load_yaml(text.encode()).value


def _catalogue() -> List[Any]:
    documents: List[Any] = []
    seen = set()
    for document in [*_examples(), *_literals()]:
        if isinstance(document, (dict, list)):
            key = repr(document)
            if key not in seen:
                seen.add(key)
                documents.append(document)
    return documents


CORPUS_LINE = {
    "id": "inv-1",
    "test": "t",
    "payload": {"a": [1]},
    "payload_sha256": "0" * 64,
    "expect": "fail",
}
REPLAY_CASE = {
    "id": "case-1",
    "command": ["pytest", "-q"],
    "seed": 1729,
    "input_sha256": "0" * 64,
    "payload": None,
    "observed": {"status": 500},
    "expected": None,
    "promoted_to": None,
}
# near misses jsonschema's equality and types tell apart from what they resemble
EDGES = [
    {"version": 1},
    {"version": 1.0},
    {"version": True},
    {"version": "1"},
    {"version": 1, "timeout_s": 0},
    {"version": 1, "timeout_s": True},
    {"version": 1, "timeout_s": 600.0},
    {"version": 1, "timeout_s": 600.5},
    {"version": 1, "timeout_s": 1e-9},
    {"version": 1, "limits": {"seed_bytes": 1024.0}},
    {"version": 1, "limits": {"seed_bytes": 1023}},
    {"version": 1, "limits": {"seed_bytes": 2048.5}},
    {"version": 1, "base": "origin/main\n"},  # '$' matches before a final newline
    {"version": 1, "base": "origin/main/"},
    {"version": 1, "write_set": {"owners": ["a", "a"]}},
    {"version": 1, "write_set": {"owners": ["a", 1]}},
    {"version": 1, "write_set": {"owners": []}},
    {"version": 1, "freeze": [{"paths": ["f.json"], "schema": "x/y.json"}]},
    {"version": 1, "freeze": [{"paths": ["f.json"], "schema": "x/y.yaml"}]},
    {"version": 1, "freeze": [{"paths": ["f.json"], "schema": "../y.json"}]},
    {"version": 1, "freeze": [{"paths": ["f.json"], "schema": "freeze"}]},
    {"version": 1, "seeds": [{"paths": ["!a"], "format": "jsonl"}]},
    {"version": 1, "protected_refs": []},
    {"version": 1, 1: "x"},
    {"excluded_property_ids": [], "reason": {}},
    {"excluded_property_ids": [""], "reason": {}},
    {"excluded_property_ids": ["a"], "reason": {"a": ""}},
    {"excluded_property_ids": [], "reason": {}, "expires": {"a": "2026-10-07T10:00Z"}},
    {"excluded_property_ids": [], "reason": {}, "expires": {"a": "2026-10-07T10:00"}},
    {"excluded_property_ids": [], "reason": {}, "expires": {"a": "2026-10-07\n"}},
    {"max_frozen": 0, "frozen": []},
    {"max_frozen": -1, "frozen": []},
    {"max_frozen": False, "frozen": []},
    {"max_frozen": 1.0, "frozen": []},
    [],
    [{"test": "t"}],
    [{"test": ""}],
    [{"test": "t", "expires": "2026-13-99"}],
    *[
        {**CORPUS_LINE, **change}
        for change in [
            {},
            {"fixed_by": None},
            {"fixed_by": "abc"},
            {"fixed_by": 1},
            {"expect": "flaky"},
            {"payload_sha256": "A" * 64},
            {"payload_sha256": "a" * 64 + "\n"},
            {"id": ""},
            {"extra": 1},
        ]
    ],
    {k: v for k, v in CORPUS_LINE.items() if k != "payload"},
    *[
        {**REPLAY_CASE, **change}
        for change in [
            {},
            {"expected": 1, "promoted_to": "tests/t.py"},
            {"command": []},
            {"command": [""]},
            {"command": "pytest -q"},
            {"command": ["pytest", 1]},
            {"seed": 1.0},
            {"seed": True},
            {"seed": "1729"},
            {"promoted_to": 1},
        ]
    ],
    {k: v for k, v in REPLAY_CASE.items() if k != "expected"},
]


def test_the_generated_predicates_agree_with_jsonschema_on_the_catalogue():
    catalogue = _catalogue() + EDGES
    tally: Dict[str, List[int]] = {name: [0, 0] for name in SCHEMAS}
    for document in catalogue:
        for name in SCHEMAS:
            tally[name][agree(name, document)] += 1
    # not vacuous: each schema meets documents it accepts and documents it rejects
    assert all(invalid and valid for invalid, valid in tally.values()), tally
    assert len(catalogue) > 300


# -- property-generated documents ------------------------------------------------------

JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 2000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, 1.0, 1024.0, 600.0, 600.5]),
    st.text(max_size=6),
)
JUNK = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _resolve(ref: str, document: dict) -> Any:
    target, _, pointer = ref.partition("#")
    node: Any = REGISTRY.contents(target) if target else document
    for part in [p for p in pointer.split("/") if p]:
        node = node[part]
    return node


def _mostly(good: st.SearchStrategy, near: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(good, good, good, near)


def _strings(schema: dict) -> st.SearchStrategy:
    if "pattern" in schema:
        good = st.from_regex(schema["pattern"], fullmatch=False).filter(lambda s: "\x00" not in s)
        near = st.one_of(good.map(lambda s: s + "\n"), good.map(lambda s: "/" + s))
        return _mostly(good, near)
    shortest = schema.get("minLength", 0)
    return _mostly(st.text(min_size=shortest, max_size=5), st.text(max_size=shortest))


def _numbers(schema: dict) -> st.SearchStrategy:
    low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
    good = st.integers(low + ("exclusiveMinimum" in schema), low + 3)
    return _mostly(good, st.sampled_from([low - 1, low, float(low), low + 0.5, True, False]))


def shaped_like(schema: Any, document: dict, depth: int = 0) -> st.SearchStrategy:
    """Documents close to ``schema``: mostly its shape, sometimes junk anywhere."""
    if not isinstance(schema, dict) or depth > 8:
        return JUNK
    if "$ref" in schema:
        target, _, _ = schema["$ref"].partition("#")
        root = REGISTRY.contents(target) if target else document
        return shaped_like(_resolve(schema["$ref"], document), root, depth + 1)
    if "anyOf" in schema:
        return st.one_of([shaped_like(s, document, depth + 1) for s in schema["anyOf"]])
    if "allOf" in schema:
        return st.one_of([shaped_like(s, document, depth + 1) for s in schema["allOf"]])
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        good = st.sampled_from(values)
    else:
        kind = schema.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        options = []
        for kind in kinds:
            if kind == "object":
                properties = {
                    key: shaped_like(sub, document, depth + 1)
                    for key, sub in schema.get("properties", {}).items()
                }
                required = {k: v for k, v in properties.items() if k in schema.get("required", [])}
                optional = {k: v for k, v in properties.items() if k not in required}
                extra = schema.get("additionalProperties", True)
                shaped = st.fixed_dictionaries(required, optional=optional)
                if isinstance(extra, dict):
                    shaped = st.dictionaries(
                        st.text(max_size=4), shaped_like(extra, document, depth + 1), max_size=3
                    )
                options.append(shaped)
            elif kind == "array":
                items = shaped_like(schema.get("items", {}), document, depth + 1)
                options.append(st.lists(items, max_size=3))
            elif kind == "string":
                options.append(_strings(schema))
            elif kind in ("integer", "number"):
                options.append(_numbers(schema))
            elif kind == "boolean":
                options.append(st.booleans())
        good = st.one_of(options) if options else JUNK
    return st.one_of(good, good, good, good, good, good, JUNK)  # mostly the shape


STRATEGIES = {name: shaped_like(schema, schema) for name, schema in SCHEMAS.items()}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_generated_predicates_agree_with_jsonschema_on_generated_documents(name, data):
    agree(name, data.draw(STRATEGIES[name]))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_generation_reaches_documents_of_both_verdicts(name):
    """Not vacuous: the strategy finds documents each schema accepts and rejects."""
    quick = settings(max_examples=2000, deadline=None, database=None)
    find(STRATEGIES[name], generated_validators.VALID[name], settings=quick)
    find(STRATEGIES[name], lambda d: not generated_validators.VALID[name](d), settings=quick)


# -- the path a run takes -----------------------------------------------------------------


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_valid_document_is_judged_without_importing_jsonschema():
    valid = run_python(
        "import sys\n"
        "from oracle_guard.parsing import validation\n"
        "assert validation.problems({'excluded_property_ids': [], 'reason': {}}, 'freeze') == []\n"
        "assert validation.problems({'version': 1}, 'contract') == []\n"
        "assert 'jsonschema' not in sys.modules, 'imported'\n"
    )
    assert valid.returncode == 0, valid.stderr
    # fire: an invalid one gets jsonschema's own messages
    invalid = run_python(
        "import sys\n"
        "from oracle_guard.parsing import validation\n"
        "print(validation.problems({'version': True}, 'contract'))\n"
        "assert 'jsonschema' in sys.modules\n"
    )
    assert invalid.returncode == 0, invalid.stderr
    assert invalid.stdout.strip() == "[(('version',), '1 was expected')]"


def test_a_custom_schema_and_the_lock_schema_are_judged_by_jsonschema():
    assert validation.problems({}, "fixtures-lock") == []
    assert validation._fast_validator("fixtures-lock") is None
    custom = validation.custom_validator({"type": "object", "required": ["a"]})
    assert validation.problems({}, validator=custom) == [((), "'a' is a required property")]
    assert validation.problems({"a": 1}, validator=custom) == []


# -- the lock schema, should the fixture-lock check ask for its predicate --------------

LOCK_SCHEMA = validation.builtin_schema("fixtures-lock")
LOCK_REFERENCE = Draft202012Validator(LOCK_SCHEMA, registry=REGISTRY)


def _lock_predicate():
    text = codegen.generate(validation.schema_dir(), names=("fixtures-lock",))
    namespace: Dict[str, Any] = {}
    exec(compile(text, "generated_lock", "exec"), namespace)
    return namespace["VALID"]["fixtures-lock"]


LOCK_VALID = _lock_predicate()
HEX = st.text("0123456789abcdef", min_size=64, max_size=64)
LOCK_KEYS = st.one_of(
    st.from_regex(LOCK_SCHEMA["propertyNames"]["pattern"], fullmatch=True).filter(
        lambda s: "\x00" not in s
    ),
    st.sampled_from(["a/b", "/a", "a//b", "a/", "./a", "a/..", "..", ".a", "a\n", ""]),
    st.text(max_size=4),
)


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(
        LOCK_KEYS,
        st.one_of(HEX, HEX.map(str.upper), HEX.map(lambda h: h + "\n"), JSON_LEAF),
        max_size=4,
    )
)
def test_the_lock_predicate_agrees_with_jsonschema(lock):
    assert LOCK_VALID(lock) == LOCK_REFERENCE.is_valid(lock), lock


def test_the_lock_predicate_checks_each_key_as_a_path():
    digest = "0a" * 32
    assert LOCK_VALID({"a/b.json": digest})  # near miss
    for key in ("/a", "a//b", "a/../b", "a/", "a\x00"):
        assert not LOCK_VALID({key: digest}) and not LOCK_REFERENCE.is_valid({key: digest})
    assert not LOCK_VALID({"a": digest.upper()})
    assert not LOCK_VALID([])
    assert "fixtures-lock" not in generated_validators.VALID  # left to the fixture-lock check
