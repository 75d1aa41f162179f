"""Strict JSON and YAML loading: each rejection, with its line and column."""
import pytest

from oracle_guard import loaders
from oracle_guard.loaders import LoadError, load_by_name, load_json, load_yaml


def rejects(load, data: bytes) -> LoadError:
    with pytest.raises(LoadError) as info:
        load(data)
    return info.value


def load_json_positions(data: bytes):
    return load_json(data, positions=True)


# -- JSON --------------------------------------------------------------------
@pytest.mark.parametrize("load", [load_json, load_json_positions])
def test_json_duplicate_key_at_depth(load):
    err = rejects(load, b'{\n  "a": {\n    "b": 1,\n    "b": 2\n  }\n}\n')
    assert err.message == "duplicate key 'b'"
    assert (err.line, err.column) == (4, 5)


def test_json_same_key_in_different_objects_passes():
    doc = load_json(b'{"a": {"b": 1}, "c": {"b": 2}}')
    assert doc.value == {"a": {"b": 1}, "c": {"b": 2}}


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_json_non_finite_constants(literal):
    err = rejects(load_json, f'{{\n  "x": [1, {literal}]\n}}'.encode())
    assert err.message == f"{literal} is not valid JSON"
    assert (err.line, err.column) == (2, 12)


def test_json_number_overflowing_to_infinity():
    err = rejects(load_json, b"[1e999]")
    assert "out of range" in err.message
    assert (err.line, err.column) == (1, 2)


def test_json_trailing_data():
    err = rejects(load_json, b'{"a": 1}\n{"b": 2}\n')
    assert err.message == "unexpected data after the JSON value"
    assert (err.line, err.column) == (2, 1)


def test_json_trailing_whitespace_passes():
    assert load_json(b'{"a": 1}\n\n  \n').value == {"a": 1}


@pytest.mark.parametrize("comment", [b"// note", b"/* note */"])
def test_json_comments(comment):
    err = rejects(load_json, b'[\n  1,\n  ' + comment + b'\n  2\n]')
    assert err.message == "comments are not valid JSON"
    assert (err.line, err.column) == (3, 3)


def test_json_byte_order_mark():
    err = rejects(load_json, b'\xef\xbb\xbf{"a": 1}')
    assert err.message == "starts with a UTF-8 byte-order mark"
    assert (err.line, err.column) == (1, 1)


def test_json_invalid_utf8():
    err = rejects(load_json, b'{\n  "a": "caf\xe9"\n}')
    assert err.message == "invalid UTF-8 (byte 0xe9)"
    assert (err.line, err.column) == (2, 12)


def test_json_valid_utf8_passes():
    assert load_json('{"a": "café"}'.encode()).value == {"a": "café"}


def test_json_too_deep():
    depth = loaders.MAX_DEPTH + 1
    err = rejects(load_json, b"[" * (depth + 1) + b"]" * (depth + 1))
    assert err.message == f"nested deeper than {loaders.MAX_DEPTH} levels"
    assert (err.line, err.column) == (1, depth + 1)


def test_json_at_max_depth_passes():
    depth = loaders.MAX_DEPTH
    value = load_json(b"[" * (depth + 1) + b"]" * (depth + 1)).value
    for _ in range(depth):
        value = value[0]
    assert value == []


def test_json_empty_document():
    err = rejects(load_json, b"  \n")
    assert err.message == "empty document"


def test_json_lines_of_paths():
    doc = load_json(b'{\n  "frozen": [\n    {"id": "a"},\n    {\n      "id": "b"\n    }\n  ]\n}',
                    positions=True)
    assert doc.line_of(("frozen", 0)) == 3
    assert doc.line_of(("frozen", 1, "id")) == 5
    # a path that does not exist falls back to its nearest existing parent
    assert doc.line_of(("frozen", 1, "owner")) == 4


# -- YAML --------------------------------------------------------------------
def test_yaml_duplicate_key_at_depth():
    err = rejects(load_yaml, b"frozen:\n  - id: a\n    owner: x\n    id: b\n")
    assert err.message == "duplicate key 'id'"
    assert (err.line, err.column) == (4, 5)


def test_yaml_duplicate_key_quoted_and_plain():
    err = rejects(load_yaml, b'a: 1\n"a": 2\n')
    assert err.message == "duplicate key 'a'"
    assert (err.line, err.column) == (2, 1)


def test_yaml_anchor():
    err = rejects(load_yaml, b"base: &b\n  owner: x\n")
    assert err.message == "anchor &b is not allowed"
    assert (err.line, err.column) == (1, 7)


def test_yaml_alias():
    # the anchor comes first in the file, so it is the one reported
    err = rejects(load_yaml, b"a: &x 1\nb: *x\n")
    assert err.message == "anchor &x is not allowed"
    assert err.line == 1


def test_yaml_alias_without_anchor():
    err = rejects(load_yaml, b"a: 1\nb: *x\n")
    assert "alias" in err.message or "anchor" in err.message
    assert err.line == 2


def test_yaml_merge_key():
    err = rejects(load_yaml, b"a:\n  <<: {owner: x}\n  id: y\n")
    assert err.message == "merge keys (<<) are not allowed"
    assert (err.line, err.column) == (2, 3)


def test_yaml_quoted_merge_key_is_a_plain_key():
    assert load_yaml(b'"<<": 1\n').value == {"<<": 1}


@pytest.mark.parametrize("data, tag, line, column", [
    (b"a: !!python/object:os.system {}\n", "tag:yaml.org,2002:python/object:os.system", 1, 4),
    (b"a:\n  - !!python/name:os.system ''\n", "tag:yaml.org,2002:python/name:os.system", 2, 5),
    (b"a: !custom 1\n", "!custom", 1, 4),
    (b"a: !!binary aGVsbG8=\n", "tag:yaml.org,2002:binary", 1, 4),
    (b"a: !!timestamp 2026-09-30\n", "tag:yaml.org,2002:timestamp", 1, 4),
    (b"a: !!set {x: null}\n", "tag:yaml.org,2002:set", 1, 4),
    (b"a: !thing [1]\n", "!thing", 1, 4),
])
def test_yaml_tags(data, tag, line, column):
    err = rejects(load_yaml, data)
    assert err.message == f"tag {tag} is not allowed"
    assert (err.line, err.column) == (line, column)


def test_yaml_standard_str_tag_passes():
    assert load_yaml(b"a: !!str 1\n").value == {"a": "1"}


def test_yaml_several_documents():
    err = rejects(load_yaml, b"a: 1\n---\nb: 2\n")
    assert err.message == "more than one YAML document in the file"
    assert err.line == 2


def test_yaml_one_document_with_markers_passes():
    assert load_yaml(b"---\na: 1\n...\n").value == {"a": 1}


def test_yaml_nan_and_infinity():
    err = rejects(load_yaml, b"a: 1\nb: .nan\n")
    assert err.message == ".nan is not allowed"
    assert (err.line, err.column) == (2, 4)
    assert rejects(load_yaml, b"b: -.inf\n").message == "-.inf is not allowed"


def test_yaml_invalid_utf8():
    err = rejects(load_yaml, b"a: ok\nb: caf\xe9\n")
    assert err.message == "invalid UTF-8 (byte 0xe9)"
    assert (err.line, err.column) == (2, 7)


def test_yaml_byte_order_mark():
    assert rejects(load_yaml, b"\xef\xbb\xbfa: 1\n").message == \
        "starts with a UTF-8 byte-order mark"


def test_yaml_syntax_error_has_position():
    err = rejects(load_yaml, b"a: [1, 2\nb: 3\n")
    assert err.line == 2


def test_yaml_non_string_key():
    err = rejects(load_yaml, b"a: 1\n2: b\n")
    assert err.message == "key '2' must be a string (quote it)"
    assert (err.line, err.column) == (2, 1)


def test_yaml_empty_document():
    assert rejects(load_yaml, b"# only a comment\n").message == "empty document"


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "y", "n", "Yes", "NO", "On"])
def test_yaml_yes_no_on_off_stay_strings(word):
    assert load_yaml(f"a: {word}\n{word}: 1\n".encode()).value == {"a": word, word: 1}


def test_yaml_true_false_are_booleans():
    assert load_yaml(b"a: true\nb: False\n").value == {"a": True, "b": False}


@pytest.mark.parametrize("text", ["2026-09-30", "2026-10-07T00:00:00Z",
                                  "2026-10-07 00:00:00", "2026-10-07T12:00:00+02:00"])
def test_yaml_unquoted_dates_stay_strings(text):
    assert load_yaml(f"expires_at: {text}\n".encode()).value == {"expires_at": text}


@pytest.mark.parametrize("text, value", [
    ("7", 7), ("-3", -3), ("+5", 5), ("0", 0), ("0x1F", 31), ("1.5", 1.5), ("1e3", 1000.0),
    ("~", None), ("null", None), ("", None),
    # YAML 1.1 number forms that PyYAML would guess: kept as written
    ("010", "010"), ("1:30", "1:30"), ("1_000", "1_000"), ("0o17", "0o17"),
])
def test_yaml_scalars(text, value):
    loaded = load_yaml(f"a: {text}\n".encode()).value["a"]
    assert loaded == value and type(loaded) is type(value)


def test_yaml_lines_of_paths():
    doc = load_yaml(b"max_frozen: 3\nfrozen:\n  - id: a\n    expires: x\n  - id: b\n"
                    b"    expires: y\n")
    assert doc.line_of(("max_frozen",)) == 1
    assert doc.line_of(("frozen", 1)) == 5
    assert doc.line_of(("frozen", 1, "expires")) == 6
    assert doc.line_of(("frozen", 1, "missing")) == 5


def test_yaml_too_deep():
    depth = loaders.MAX_DEPTH + 1
    err = rejects(load_yaml, b"[" * (depth + 1) + b"]" * (depth + 1))
    assert err.message == f"nested deeper than {loaders.MAX_DEPTH} levels"
    assert err.line == 1


# -- choosing a loader, printing a path -------------------------------------
def test_load_by_name_picks_by_extension():
    assert load_by_name("x.yml", b"a: yes\n").value == {"a": "yes"}
    assert load_by_name("x.yaml", b"a: 1\n").value == {"a": 1}
    assert rejects(lambda data: load_by_name("x.json", data), b"a: 1\n").line == 1


def test_json_pointer():
    assert loaders.json_pointer(()) == "$"
    assert loaders.json_pointer(("frozen", 1, "expires")) == "$.frozen[1].expires"
    assert loaders.json_pointer(("reason", "prop.http.x")) == '$.reason["prop.http.x"]'


def test_load_error_text():
    assert str(LoadError("bad", 3, 7)) == "bad (line 3, column 7)"
    assert str(LoadError("bad")) == "bad"


@pytest.mark.parametrize("data", [b'{"a": 1', b"[1, 2", b'{"a"'])
def test_json_truncated(data):
    err = rejects(load_json, data)
    assert err.message.startswith("unexpected end of file")
    assert (err.line, err.column) == (1, len(data) + 1)


@pytest.mark.parametrize("literal", ["1e-400", "-2.5e-999", "1e999"])
def test_json_number_that_underflows_or_overflows_is_rejected(literal):
    with pytest.raises(loaders.LoadError, match="out of range"):
        loaders.load_json(f"[{literal}]".encode())


@pytest.mark.parametrize("literal", ["0.0", "-0.0", "0e5", "0.000e-3", "1e-300"])
def test_json_zero_and_small_numbers_load(literal):
    assert loaders.load_json(f"[{literal}]".encode()).value == [float(literal)]
