"""nst/JSONTestSuite's parsing cases through the strict JSON loader the checks use.

The files are read, unchanged, from the public suites' data (testing/conformance.py):
JSONTestSuite/test_parsing/ (MIT, its LICENSE beside them; from
https://github.com/nst/JSONTestSuite, commit 1ef36fa01286573e846ac449e8683f8833c5b26a). Each file runs through
``strict_json.load_json`` both ways the checks call it (the fast path, and with
positions, as locks and seeds with lines are read):

- ``y_``: accepted, to the value Python's own decoder reads, except where
  docs/reference/strict-input.md says it rejects on purpose (``Y_REJECTED``);
- ``n_``: rejected with a LoadError;
- ``i_`` (the RFC leaves them to the parser): as ``I_CHOICES`` says, and why.

No file may end in any exception other than LoadError, and every LoadError has a
line, so a finding can name it. One case per kind of error then goes through
``oracle-guard check`` as a seed file in a real repository.
"""

from __future__ import annotations

import json
import math
from typing import Dict, Tuple

import pytest

from oracle_guard.parsing import strict_input, strict_json
from testing import conformance
from testing.git import commit, init_repo, run_guard, stage

pytestmark = pytest.mark.needs("conformance")

SUITE = conformance.path("JSONTestSuite")
CASES = SUITE / "test_parsing"
FILES = conformance.names("JSONTestSuite/test_parsing")

# y_ cases docs/reference/strict-input.md rejects on purpose.
Y_REJECTED: Dict[str, str] = {
    "y_object_duplicated_key.json": "duplicate keys are errors: two readers could keep "
    "different values",
    "y_object_duplicated_key_and_value.json": "duplicate keys are errors, even with the same value",
}

_OVERFLOW = "numbers that overflow or underflow a double are errors: 1e999 would read as inf"
_UNDERFLOW = "numbers that underflow a double are errors: 1e-400 would read as 0.0 and equal 0"
_SURROGATE = "a lone surrogate escape is not text in any encoding: an error"
_UTF8 = "input must be valid UTF-8: other bytes are errors, never guessed"
I_CHOICES: Dict[str, Tuple[str, str]] = {
    "i_number_double_huge_neg_exp.json": ("reject", _UNDERFLOW),
    "i_number_huge_exp.json": ("reject", _OVERFLOW),
    "i_number_neg_int_huge_exp.json": ("reject", _OVERFLOW),
    "i_number_pos_double_huge_exp.json": ("reject", _OVERFLOW),
    "i_number_real_neg_overflow.json": ("reject", _OVERFLOW),
    "i_number_real_pos_overflow.json": ("reject", _OVERFLOW),
    "i_number_real_underflow.json": ("reject", _UNDERFLOW),
    "i_number_too_big_neg_int.json": ("accept", "integers are exact up to 4,000 digits"),
    "i_number_too_big_pos_int.json": ("accept", "integers are exact up to 4,000 digits"),
    "i_number_very_big_negative_int.json": ("accept", "integers are exact up to 4,000 digits"),
    "i_object_key_lone_2nd_surrogate.json": ("reject", _SURROGATE),
    "i_string_1st_surrogate_but_2nd_missing.json": ("reject", _SURROGATE),
    "i_string_1st_valid_surrogate_2nd_invalid.json": ("reject", _SURROGATE),
    "i_string_UTF-16LE_with_BOM.json": ("reject", _UTF8),
    "i_string_UTF-8_invalid_sequence.json": ("reject", _UTF8),
    "i_string_UTF8_surrogate_U+D800.json": ("reject", _UTF8),
    "i_string_incomplete_surrogate_and_escape_valid.json": ("reject", _SURROGATE),
    "i_string_incomplete_surrogate_pair.json": ("reject", _SURROGATE),
    "i_string_incomplete_surrogates_escape_valid.json": ("reject", _SURROGATE),
    "i_string_invalid_lonely_surrogate.json": ("reject", _SURROGATE),
    "i_string_invalid_surrogate.json": ("reject", _SURROGATE),
    "i_string_invalid_utf-8.json": ("reject", _UTF8),
    "i_string_inverted_surrogates_U+1D11E.json": ("reject", _SURROGATE),
    "i_string_iso_latin_1.json": ("reject", _UTF8),
    "i_string_lone_second_surrogate.json": ("reject", _SURROGATE),
    "i_string_lone_utf8_continuation_byte.json": ("reject", _UTF8),
    "i_string_not_in_unicode_range.json": ("reject", _UTF8),
    "i_string_overlong_sequence_2_bytes.json": ("reject", _UTF8),
    "i_string_overlong_sequence_6_bytes.json": ("reject", _UTF8),
    "i_string_overlong_sequence_6_bytes_null.json": ("reject", _UTF8),
    "i_string_truncated-utf-8.json": ("reject", _UTF8),
    "i_string_utf16BE_no_BOM.json": ("reject", _UTF8),
    "i_string_utf16LE_no_BOM.json": ("reject", _UTF8),
    "i_structure_500_nested_arrays.json": (
        "reject",
        "nesting deeper than 200 levels is an error (no reader's stack is at risk)",
    ),
    "i_structure_UTF-8_BOM_empty_object.json": ("reject", "a UTF-8 byte-order mark is an error"),
}


def verdict(data: bytes, positions: bool):
    """('accept', value) or ('reject', LoadError); any other exception propagates."""
    try:
        return "accept", strict_json.load_json(data, positions=positions).value
    except strict_input.LoadError as exc:
        return "reject", exc


def same(a, b) -> bool:
    """Equal and of the same types all the way down (1 and 1.0 differ, -0.0 and 0.0 too)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def test_the_vendored_suite_is_whole():
    assert (SUITE / "LICENSE").read_text().startswith("MIT License")
    kinds = [name[:2] for name in FILES]
    assert (kinds.count("y_"), kinds.count("n_"), kinds.count("i_")) == (95, 188, 35)
    assert len(FILES) == 318
    assert sorted(n for n in FILES if n.startswith("i_")) == sorted(I_CHOICES)
    assert set(Y_REJECTED) <= set(FILES)


@pytest.mark.parametrize("positions", [False, True], ids=["fast", "positions"])
@pytest.mark.parametrize("name", FILES)
def test_each_case(name, positions):
    data = (CASES / name).read_bytes()
    got, value = verdict(data, positions)
    if got == "reject":
        assert value.line is not None and value.line >= 1, (name, value)
    if name.startswith("n_"):
        assert got == "reject", f"{name} accepted as {value!r}"
    elif name.startswith("i_"):
        wanted, why = I_CHOICES[name]
        assert got == wanted, f"{name}: {got} ({value}), the choice is {wanted}: {why}"
        if got == "accept":
            assert same(value, json.loads(data)), name
    elif name in Y_REJECTED:
        assert got == "reject", f"{name}: accepted, but {Y_REJECTED[name]}"
    else:
        assert got == "accept", f"{name} rejected: {value}"
        assert same(value, json.loads(data.decode("utf-8"))), name


@pytest.mark.parametrize(
    "name, value",
    [
        ("y_array_empty.json", []),
        ("y_object_empty_key.json", {"": 0}),
        ("y_number_negative_zero.json", [-0]),  # an integer zero, not -0.0
        ("y_number_minus_zero.json", [-0]),
        ("y_number_real_capital_e.json", [1e22]),
        ("y_number_real_neg_exp.json", [1e-2]),
        ("y_number_int_with_exp.json", [200.0]),  # 20e1: an exponent makes a double
        ("y_string_null_escape.json", ["\x00"]),
        ("y_string_surrogates_U+1D11E_MUSICAL_SYMBOL_G_CLEF.json", ["\U0001d11e"]),
        ("y_string_utf8.json", ["\u20ac\U0001d11e"]),
        ("y_structure_lonely_null.json", None),
        ("y_structure_whitespace_array.json", []),
        ("y_object_duplicated_key.json", None),
    ],
)
def test_values(name, value):
    """Values read by hand from the files, not from Python's decoder."""
    data = (CASES / name).read_bytes()
    for positions in (False, True):
        got, read = verdict(data, positions)
        if name in Y_REJECTED:
            assert got == "reject" and "duplicate key 'a'" in read.message
        else:
            assert got == "accept" and same(read, value), (name, read)


# -- through the CLI: a seed file in a real repository ------------------------------

CONTRACT = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
"""


@pytest.mark.parametrize(
    "name",
    [
        "n_array_extra_comma.json",  # syntax
        "n_object_trailing_comment.json",  # a comment
        "n_structure_100000_opening_arrays.json",  # depth
        "i_string_iso_latin_1.json",  # encoding
        "i_number_real_pos_overflow.json",  # a number out of range
        "y_object_duplicated_key.json",  # a strict choice
    ],
)
def test_a_suite_file_as_a_seed_is_a_finding_on_its_line(capsys, tmp_path, name):
    data = (CASES / name).read_bytes()
    got, error = verdict(data, True)
    assert got == "reject"
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": CONTRACT, "seeds/a.json": [1]}, "base")
    stage(repo, {"seeds/a.json": data})
    rc, out, err = run_guard(capsys, repo, "check", "--only", "seed-append-only")
    assert (rc, err) == (1, ""), (rc, out, err)
    finding = f"seeds/a.json:{error.line}: seed-invalid: {error.message}"
    assert finding in out.splitlines(), out
