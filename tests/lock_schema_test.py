"""The lock's fast path (the C JSON decoder and the built-in schema's two patterns)
against the reference: the line-tracking parser and jsonschema on every entry. They
must agree on every lock, valid or not: the same digests, the same lines, the same
findings with the same messages and lines."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle_guard.checks import fixture_lock
from oracle_guard.parsing import strict_json, validation
from testing.bounds import property_settings

GOOD = hashlib.sha256(b"a").hexdigest()


def outcome(data: bytes, fixtures=(), root=""):
    """What parse_lock makes of ``data``: the lock (digests and lines) or its problems."""
    try:
        lock = fixture_lock.parse_lock(data, list(fixtures), root)
    except fixture_lock.LockInvalid as exc:
        return ("invalid", exc.problems)
    return (lock.style, lock.digests, lock.lines)


def reference(data: bytes, fixtures=(), root=""):
    """The same through the slow path alone: no pattern shortcut, every JSON read
    by the line-tracking parser."""
    mp = pytest.MonkeyPatch()
    plain_load = strict_json.load_json
    try:
        mp.setattr(fixture_lock, "_schema_patterns", lambda: None)
        mp.setattr(
            strict_json, "load_json", lambda data, positions=False: plain_load(data, positions=True)
        )
        return outcome(data, fixtures, root)
    finally:
        mp.undo()


def agree(data: bytes, fixtures=(), root=""):
    fast = outcome(data, fixtures, root)
    assert fast == reference(data, fixtures, root), data
    return fast


CASES = {
    "valid": json.dumps({"a.txt": GOOD, "b/c.txt": GOOD}, indent=2),
    "empty object": "{}",
    "uppercase": json.dumps({"a.txt": GOOD.upper()}, indent=2),
    "digest ending in LF": json.dumps({"a.txt": GOOD + "\n"}),  # '$' matches before it
    "not a string": '{\n  "a.txt": 7,\n  "b": "%s"\n}' % GOOD,
    "null": '{"a.txt": null}',
    "list value": '{"a.txt": ["%s"]}' % GOOD,
    "nested": '{"a": {"b": "%s"}}' % GOOD,
    "parent key": json.dumps({"../x": GOOD}),
    "dot key": json.dumps({"./x": GOOD}),
    "absolute key": json.dumps({"/x": GOOD}),
    "double slash": json.dumps({"a//b": GOOD}),
    "trailing slash": json.dumps({"a/": GOOD}),
    "NUL in key": json.dumps({"a\x00b": GOOD}),
    "empty key": json.dumps({"": GOOD}),
    "duplicate key": '{\n"a": "%s",\n"a": "%s"\n}' % (GOOD, GOOD),
    "NaN": '{"a": NaN}',
    "Infinity": '{"a": -Infinity}',
    "huge number": '{"a": 1e999}',
    "lone surrogate key": '{"\\ud800": "%s"}' % GOOD,
    "lone surrogate value": '{"a": "\\udfff"}',
    "trailing data": '{"a": "%s"} x' % GOOD,
    "comment": '{"a": "%s"} // no' % GOOD,
    "control character": '{"a\tb": "%s"}' % GOOD,
    "array": '["%s"]' % GOOD,
    "truncated": '{"a": "%s"' % GOOD,
    "deep": "{" + '"a": [' * 300 + "]" * 300 + "}",
}


@pytest.mark.parametrize("text", CASES.values(), ids=list(CASES))
def test_json_locks_agree_with_the_reference(text):
    agree(text.encode())


@pytest.mark.parametrize(
    "data",
    [b"\xef\xbb\xbf{}", b'{"a": "\xff"}', b"\xef\xbb\xbf" + GOOD.encode() + b"  a\n"],
    ids=["BOM", "bad UTF-8", "BOM before a sum line"],
)
def test_undecodable_locks_agree(data):
    assert agree(data)[0] == "invalid"


def test_the_fast_path_keeps_the_line_of_each_key():
    lock = agree(b'{\n  "a": "%s",\n\n  "b/c": "%s"\n}\n' % (GOOD.encode(), GOOD.encode()))
    assert lock[2] == {"a": 2, "b/c": 4}


SUM_CASES = {
    "valid": f"{GOOD}  a\n{GOOD} *b/c\nSHA256 (d) = {GOOD}\n",
    "uppercase": f"{GOOD.upper()}  a\n",
    "parent": f"{GOOD}  ../a\n",
    "escaped": f"\\{GOOD}  a\\nb\n",
    "empty": "",
}


@pytest.mark.parametrize("text", SUM_CASES.values(), ids=list(SUM_CASES))
def test_sum_locks_agree_with_the_reference(text):
    agree(text.encode())


@pytest.mark.parametrize("digest", [GOOD, GOOD.upper(), "0" * 63 + "g"])
@pytest.mark.parametrize("fixtures", [(), ("fx/a",)])
def test_digest_locks_agree_with_the_reference(digest, fixtures):
    agree(digest.encode() + b"\n", fixtures, "fx")


def test_a_schema_of_another_shape_leaves_judging_to_jsonschema(monkeypatch):
    # the near-miss of the shortcut: one keyword more and the patterns alone do not judge
    schema = dict(validation.builtin_schema("fixtures-lock"), maxProperties=1)
    monkeypatch.setattr(validation, "builtin_schema", lambda name: schema)
    assert fixture_lock._schema_patterns.__wrapped__() is None
    monkeypatch.setattr(fixture_lock, "_schema_patterns", fixture_lock._schema_patterns.__wrapped__)
    assert not fixture_lock._passes_schema({"a": GOOD})


def test_the_built_in_schema_has_the_shape_the_shortcut_reads():
    assert fixture_lock._schema_patterns() is not None
    assert fixture_lock._passes_schema({"a/b.txt": GOOD})


# -- generated locks -------------------------------------------------------------

_key = st.text(alphabet=list("ab./\\ \n\x00é"), max_size=6)
_hexish = st.text(alphabet=list("0123456789abcdefAG\n"), min_size=62, max_size=66)
_value = st.one_of(
    st.just(GOOD),
    st.just(GOOD + "\n"),
    _hexish,
    st.integers(),
    st.none(),
    st.booleans(),
    st.lists(st.just(GOOD), max_size=1),
)


@property_settings(300)
@given(st.dictionaries(_key, _value, max_size=5))
def test_generated_values_agree_with_jsonschema(value):
    assert fixture_lock._passes_schema(value) == (not validation.problems(value, "fixtures-lock"))


_spoil = st.sampled_from(
    [
        lambda t: t,
        lambda t: t.replace('": "', '": NaN, "x": "', 1),
        lambda t: t.replace("{", '{"dup": 1, "dup": 2, ', 1),
        lambda t: t + " trailing",
        lambda t: t.replace('"', "'", 2),
        lambda t: t[: len(t) // 2],
        lambda t: t.replace("a", "\\ud800", 1),
        lambda t: t.replace("\n", "\r\n"),
    ]
)


@property_settings(200)
@given(st.dictionaries(_key, _value, max_size=5), st.sampled_from([None, 1, 2]), _spoil)
def test_generated_json_locks_agree_with_the_reference(value, indent, spoil):
    agree(spoil(json.dumps(value, indent=indent, ensure_ascii=False)).encode())


_line = st.one_of(
    st.builds(lambda d, k: f"{d}  {k}", _hexish | st.just(GOOD), _key),
    st.builds(lambda d, k: f"SHA256 ({k}) = {d}", _hexish | st.just(GOOD), _key),
    st.builds(lambda d, k: f"\\{d} *{k}", st.just(GOOD), _key),
)


@property_settings(200)
@given(st.lists(_line, max_size=4))
def test_generated_sum_locks_agree_with_the_reference(lines):
    agree("".join(line + "\n" for line in lines).encode())


def _imports_jsonschema(lock: bytes) -> bool:
    import subprocess
    import sys

    code = (
        "import sys\nfrom oracle_guard.checks import fixture_lock\n"
        "try:\n    fixture_lock.parse_lock(sys.stdin.buffer.read(), [], '')\n"
        "except fixture_lock.LockInvalid:\n    pass\n"
        "print('jsonschema' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], input=lock, stdout=subprocess.PIPE, check=True
    )
    return proc.stdout.strip() == b"True"


@pytest.mark.parametrize(
    "lock, judged_by_jsonschema",
    [
        (json.dumps({"a": GOOD, "b/c": GOOD}).encode(), False),
        (f"{GOOD}  a\n{GOOD}  b/c\n".encode(), False),
        (GOOD.encode() + b"\n", False),
        (json.dumps({"a": GOOD.upper()}).encode(), True),  # the near-miss: a finding
        (f"{GOOD}  ../a\n".encode(), True),
    ],
)
def test_a_valid_lock_is_judged_without_jsonschema(lock, judged_by_jsonschema):
    assert _imports_jsonschema(lock) is judged_by_jsonschema
