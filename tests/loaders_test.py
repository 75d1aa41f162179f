"""Strict JSON and YAML loading: each rejection, with its line and column."""

import pytest

from oracle_guard.parsing import strict_input, strict_json
from oracle_guard.parsing.loaders import load_by_name
from oracle_guard.parsing.strict_input import LoadError
from oracle_guard.parsing.strict_json import load_json
from oracle_guard.parsing.strict_yaml import load_yaml


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
    err = rejects(load_json, b"[\n  1,\n  " + comment + b"\n  2\n]")
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
    depth = strict_input.MAX_DEPTH + 1
    err = rejects(load_json, b"[" * (depth + 1) + b"]" * (depth + 1))
    assert err.message == f"nested deeper than {strict_input.MAX_DEPTH} levels"
    assert (err.line, err.column) == (1, depth + 1)


def test_json_at_max_depth_passes():
    depth = strict_input.MAX_DEPTH
    value = load_json(b"[" * (depth + 1) + b"]" * (depth + 1)).value
    for _ in range(depth):
        value = value[0]
    assert value == []


def test_json_empty_document():
    err = rejects(load_json, b"  \n")
    assert err.message == "empty document"


def test_json_lines_of_paths():
    doc = load_json(
        b'{\n  "frozen": [\n    {"id": "a"},\n    {\n      "id": "b"\n    }\n  ]\n}', positions=True
    )
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


@pytest.mark.parametrize(
    "data, tag, line, column",
    [
        (b"a: !!python/object:os.system {}\n", "tag:yaml.org,2002:python/object:os.system", 1, 4),
        (b"a:\n  - !!python/name:os.system ''\n", "tag:yaml.org,2002:python/name:os.system", 2, 5),
        (b"a: !custom 1\n", "!custom", 1, 4),
        (b"a: !!binary aGVsbG8=\n", "tag:yaml.org,2002:binary", 1, 4),
        (b"a: !!timestamp 2026-09-30\n", "tag:yaml.org,2002:timestamp", 1, 4),
        (b"a: !!set {x: null}\n", "tag:yaml.org,2002:set", 1, 4),
        (b"a: !thing [1]\n", "!thing", 1, 4),
    ],
)
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


def test_yaml_control_character_has_position():
    err = rejects(load_yaml, b"a: ok\nb: x\x1by\n")
    assert err.message == "control character U+001B is not allowed in YAML"
    assert (err.line, err.column) == (2, 5)


def test_yaml_tab_and_newlines_are_not_control_characters():
    assert load_yaml(b"a: 'x\ty'\r\nb: 2\n").value == {"a": "x\ty", "b": 2}


def test_yaml_byte_order_mark():
    assert (
        rejects(load_yaml, b"\xef\xbb\xbfa: 1\n").message == "starts with a UTF-8 byte-order mark"
    )


def test_yaml_syntax_error_has_position():
    # an unclosed bracket: placed where it opened, naming the line that left it
    err = rejects(load_yaml, b"a: [1, 2\nb: 3\n")
    assert (err.line, err.column) == (1, 4) and "(line 2 is indented" in err.message


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


@pytest.mark.parametrize(
    "text",
    ["2026-09-30", "2026-10-07T00:00:00Z", "2026-10-07 00:00:00", "2026-10-07T12:00:00+02:00"],
)
def test_yaml_unquoted_dates_stay_strings(text):
    assert load_yaml(f"expires_at: {text}\n".encode()).value == {"expires_at": text}


@pytest.mark.parametrize(
    "text, value",
    [
        ("7", 7),
        ("-3", -3),
        ("+5", 5),
        ("0", 0),
        ("0x1F", 31),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        ("~", None),
        ("null", None),
        ("", None),
        # YAML 1.1 number forms that PyYAML would guess: kept as written
        ("010", "010"),
        ("1:30", "1:30"),
        ("1_000", "1_000"),
        ("0o17", "0o17"),
    ],
)
def test_yaml_scalars(text, value):
    loaded = load_yaml(f"a: {text}\n".encode()).value["a"]
    assert loaded == value and type(loaded) is type(value)


def test_yaml_lines_of_paths():
    doc = load_yaml(
        b"max_frozen: 3\nfrozen:\n  - id: a\n    expires: x\n  - id: b\n    expires: y\n"
    )
    assert doc.line_of(("max_frozen",)) == 1
    assert doc.line_of(("frozen", 1)) == 5
    assert doc.line_of(("frozen", 1, "expires")) == 6
    assert doc.line_of(("frozen", 1, "missing")) == 5


def test_yaml_too_deep():
    depth = strict_input.MAX_DEPTH + 1
    err = rejects(load_yaml, b"[" * (depth + 1) + b"]" * (depth + 1))
    assert err.message == f"nested deeper than {strict_input.MAX_DEPTH} levels"
    assert err.line == 1


# explicit standard tags: held to the forms the same value reads as untagged
@pytest.mark.parametrize(
    "text, tag, column",
    [
        ("!!int abc", "!!int 'abc'", 4),
        ("!!int ''", "!!int ''", 4),
        ("!!float abc", "!!float 'abc'", 4),
        ("!!bool maybe", "!!bool 'maybe'", 4),
        # YAML 1.1 readings PyYAML gives them: octal 8, sexagesimal 90, true, null
        ("!!int 010", "!!int '010'", 4),
        ("!!int 1:30", "!!int '1:30'", 4),
        ("!!int 1_000", "!!int '1_000'", 4),
        ("!!bool yes", "!!bool 'yes'", 4),
        ("!!null foo", "!!null 'foo'", 4),
        ("[1, !!int x]", "!!int 'x'", 8),
    ],
)
def test_yaml_standard_tag_on_a_value_of_another_type(text, tag, column):
    err = rejects(load_yaml, f"b: 1\na: {text}\n".encode())
    assert err.message.startswith(f"{tag} is not ") and "YAML 1.2 core schema" in err.message
    assert (err.line, err.column) == (2, column)


@pytest.mark.parametrize(
    "text, value",
    [
        ("!!int 7", 7),
        ("!!int -3", -3),
        ("!!int 0x1F", 31),
        ('!!int "12"', 12),
        ("!!float 1.5", 1.5),
        ("!!float 1", 1.0),
        ("!!float -2", -2.0),
        ("!!bool true", True),
        ("!!bool False", False),
        ("!!null ~", None),
        ("!!null ''", None),
        ("!!null", None),
        ("!!str 010", "010"),
        ("! 12", "12"),
        ("! true", "true"),
        ("!", ""),
    ],
)
def test_yaml_standard_and_non_specific_tags(text, value):
    loaded = load_yaml(f"a: {text}\n".encode()).value["a"]
    assert loaded == value and type(loaded) is type(value)


# yaml-test-suite error cases PyYAML accepts (each with its suite id)
@pytest.mark.parametrize(
    "data, message, line, column",
    [
        (b"a: [1]#c\n", "a comment needs a space before '#'", 1, 7),  # 9JBA
        (b"a: [1,#c\n  2]\n", "a comment needs a space before '#'", 1, 7),  # CVW2
        (b'a: "v"#c\n', "a comment needs a space before '#'", 1, 7),  # SU5Z
        (b"a: 'v'#c\n", "a comment needs a space before '#'", 1, 7),
        (b"a: [-, x]\n", "found character '-' that cannot start any token", 1, 5),  # G5U8
        (b"a: [-]\n", "found character '-' that cannot start any token", 1, 5),  # YJV2
        (b"a: [- x]\n", "a '-' entry is not allowed inside a flow collection (quote it)", 1, 5),
        (
            b"flow: [a,\nb]\n",
            "a line inside a flow collection must be indented by more "
            "than 0 space(s), the block it is in",
            2,
            1,
        ),  # 9C9N
        (b"a: [x\ny]\n", "a line inside a flow collection must be indented", 2, 1),
        (
            b"a:\n  b: {c: 1,\n  d: 2}\n",
            "a line inside a flow collection must be indented by more than 2",
            3,
            3,
        ),
        (
            b"- - [a,\n  b]\n",
            "a line inside a flow collection must be indented by more than 2",
            2,
            3,
        ),
        (b'q: "a\nb"\n', "a line inside a quoted scalar must be indented", 2, 1),  # QB6E
        (b'q: "a\n\tb"\n', "a line inside a quoted scalar must be indented", 2, 1),  # DK95-01
        (b"q: 'a\n  b\n c\nd'\n", "a line inside a quoted scalar must be indented", 4, 1),
        (
            b"s: >\n \n  \n   \n # c\n",
            "a leading empty line of this block scalar has 3 spaces, more than its first line (1)",
            5,
            2,
        ),  # S98Z
    ],
)
def test_yaml_suite_errors_pyyaml_lets_through(data, message, line, column):
    err = rejects(load_yaml, data)
    assert err.message.startswith(message)
    assert (err.line, err.column) == (line, column)


@pytest.mark.parametrize(
    "data, value",
    [
        (b"[?x]\n", ["?x"]),  # HM87-01: '?' before a non-space is no key indicator
        (b"{?x: 1, ? y: 2}\n", {"?x": 1, "y": 2}),
        (b"[a?b, c ? d]\n", ["a?b", "c ? d"]),
        (b"a: [-1, -x]\n", {"a": [-1, "-x"]}),
        (b"- ! 12\n", ["12"]),  # S4JQ
        (b"a: |\n  x\n   ", {"a": "x\n \n"}),  # L24T-01: the last line of spaces is a line
        (b"- |+\n   ", ["\n"]),  # JEF9-02
        (b"a: |\n  x", {"a": "x\n"}),
        (b"a: |\n   \nb: 1\n", {"a": "", "b": 1}),  # only empty lines: no first line to exceed
        (b"a: [1,\n  2]\nb: \"x\n  y\"\nc: 'x\n \ty'\n", {"a": [1, 2], "b": "x y", "c": "x y"}),
        (b"[1,\n2]\n", [1, 2]),  # top level: no block to indent from
        (b"a: b#c\n", {"a": "b#c"}),  # a '#' inside a plain scalar is no comment
        (b"a: [\n  # a comment at any column\n# is fine\n  1]\n", {"a": [1]}),
        # the closing bracket alone at the block's column: not YAML 1.2, kept on purpose
        (b"a: [\n  1\n]\nb: {\n  c: 1\n}\n", {"a": [1], "b": {"c": 1}}),
    ],
)
def test_yaml_read_as_yaml_1_2(data, value):
    assert load_yaml(data).value == value


@pytest.mark.parametrize(
    "data, line, column",
    [
        (b"a: [1, 2", 1, 9),
        (b'a: "x', 1, 6),
        (b"a: 1\nb: [", 2, 5),
        (b"a: [1, 2\n", 2, 1),
    ],
)
def test_yaml_error_at_the_end_of_a_file_without_a_last_newline(data, line, column):
    # the loader ends the last line itself: an error there stays on that line
    assert (rejects(load_yaml, data).line, rejects(load_yaml, data).column) == (line, column)


@pytest.mark.parametrize(
    "data, message, line, column",
    [
        (
            b"version: 1\nwrite_set:\n  allow: [src/**, tests/**\n  deny: [x]\n",
            "the list opened by '[' at line 3, column 10 is never closed: add its ']' "
            "(line 4 is indented no deeper than the block around it, so it cannot "
            "continue the list)",
            3,
            10,
        ),
        (b"a:\n  b: {c: [1, 2]\n  d: 2\n", "the mapping opened by '{' at line 2, column 6", 2, 6),
        # the inner list closes, the outer does not; quotes and comments hold no bracket
        (
            b"a:\n  b: [[1], ']', \"]\" # ]\n  c: 1\n",
            "the list opened by '[' at line 2, column 6",
            2,
            6,
        ),
    ],
)
def test_an_unclosed_bracket_is_reported_where_it_opened(data, message, line, column):
    err = rejects(load_yaml, data)
    assert err.message.startswith(message), err.message
    assert "tab" not in err.message
    assert (err.line, err.column) == (line, column)


def test_a_closed_bracket_with_an_under_indented_line_keeps_the_indent_message():
    # near miss: the bracket closes on the under-indented line
    err = rejects(load_yaml, b"a:\n  b: [1,\n  2]\n")
    assert err.message == (
        "a line inside a flow collection must be indented by more than 2 space(s), "
        "the block it is in"
    )
    assert (err.line, err.column) == (3, 3)


def test_yaml_closing_bracket_below_the_block_is_an_error():
    err = rejects(load_yaml, b"a:\n  b: [\n    1\n]\n")
    assert err.message.startswith("a line inside a flow collection must be indented by more than 2")
    assert (err.line, err.column) == (4, 1)


# -- choosing a loader, printing a path -------------------------------------
def test_load_by_name_picks_by_extension():
    assert load_by_name("x.yml", b"a: yes\n").value == {"a": "yes"}
    assert load_by_name("x.yaml", b"a: 1\n").value == {"a": 1}
    assert rejects(lambda data: load_by_name("x.json", data), b"a: 1\n").line == 1


def test_json_pointer():
    assert strict_input.json_pointer(()) == "$"
    assert strict_input.json_pointer(("frozen", 1, "expires")) == "$.frozen[1].expires"
    assert strict_input.json_pointer(("reason", "prop.http.x")) == '$.reason["prop.http.x"]'


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
    with pytest.raises(strict_input.LoadError, match="out of range"):
        strict_json.load_json(f"[{literal}]".encode())


@pytest.mark.parametrize("literal", ["0.0", "-0.0", "0e5", "0.000e-3", "1e-300"])
def test_json_zero_and_small_numbers_load(literal):
    assert strict_json.load_json(f"[{literal}]".encode()).value == [float(literal)]
