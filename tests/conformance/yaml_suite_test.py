"""yaml-test-suite (the public suites' data, testing/conformance.py) through the loader the checks
use: every error case is rejected with a line and column; every valid case the
strict loader accepts reads to the suite's value; the valid cases it refuses
are in one table, with the reason, and stay refused; no case ends in anything
but a LoadError. One error case, put in a freeze file, is a finding through the
CLI."""

import json
import math
import re
from collections import namedtuple

import pytest

from oracle_guard.parsing.strict_input import LoadError
from oracle_guard.parsing.strict_yaml import load_yaml
from testing import conformance
from testing.git import init_repo, run_guard, stage
from testing.samples import FLAKE_BUDGET_YAML

pytestmark = pytest.mark.needs("conformance")

SUITE = conformance.path("yaml-test-suite/cases.jsonl")
# without the data: one placeholder case, so the module collects and is not run
CASES = (
    [json.loads(line) for line in SUITE.read_text(encoding="utf-8").splitlines()]
    if SUITE.exists()
    else [{"id": "(data missing)", "name": "", "yaml": "", "fail": True}]
)
ERRORS = [case for case in CASES if case.get("fail")]
VALID = [case for case in CASES if not case.get("fail")]

Reason = namedtuple("Reason", "why message")
# by design (docs/reference/strict-input.md)
ANCHORS = Reason(
    "anchors and aliases are refused, so no alias bomb expands (PyYAML "
    "also refuses some anchor names)",
    r"^(anchor|alias) |expected alphabetic or numeric character",
)
TAGS = Reason(
    "tags other than !!str, !!int, !!float, !!bool, !!null, !!seq, !!map and ! are refused",
    r"^tag \S+ is not allowed$",
)
DOCUMENTS = Reason(
    "one document per file (a second document, or a directive after the first)",
    r"more than one YAML document|expected '<document start>'"
    r"|expected alphabetic or numeric character, but found '!'",
)
COMPLEX_KEYS = Reason(
    "keys are scalars: a sequence or mapping as a key is refused", r"^only plain keys are allowed$"
)
NULL_KEYS = Reason(
    "keys are strings: an empty (null) key is refused (PyYAML cannot parse most of these)",
    r"^key '' must be a string|found ':'",
)
EMPTY = Reason(
    "a file with no document (only comments, or nothing) is an error",
    r"^empty document$|found '<document end>'",
)
# PyYAML's scanner does not read these valid forms; the loader does not guess
TABS = Reason("PyYAML: a tab as separating white space or on an otherwise empty line", r"'\\t'")
FLOW_KEY_LINES = Reason(
    "PyYAML: an implicit key of a flow mapping on several lines, or its ':' on the next line",
    r"expected ',' or '}', but got ':'",
)
COLON_START = Reason(
    "PyYAML: a plain scalar or an empty key starting with ':' in a flow collection",
    r"expected the node content, but found ':'",
)
COLUMN_ZERO = Reason(
    "PyYAML: a top-level block scalar's content at column 0",
    r"expected '<document start>', but found '<scalar>'",
)
FLOW_EMPTY_TAGGED = Reason("PyYAML: an empty tagged scalar in a flow mapping", r"but got '<tag>'")

REJECTED = {
    case_id: reason
    for reason, ids in [
        (
            ANCHORS,
            [
                "26DV",
                "2SXE",
                "3GZX",
                "3R3P",
                "6BFJ",
                "6KGN",
                "6M2F",
                "7BMT",
                "7BUB",
                "8XYN",
                "9KAX",
                "BU8L",
                "C4HZ",
                "CN3R",
                "CUP7",
                "E76Z",
                "F2C7",
                "FTA2",
                "HMQ5",
                "JS2J",
                "LE5A",
                "PW8X",
                "RZP5",
                "SKE5",
                "U3XV",
                "UGM3",
                "V55R",
                "W5VH",
                "X38W",
                "XW4D",
                "Y2GN",
                "ZH7C",
                "ZWK4",
            ],
        ),
        (
            TAGS,
            [
                "2XXW",
                "565N",
                "6CK3",
                "7FWL",
                "CC74",
                "J7PZ",
                "M5C3",
                "P76L",
                "Z67P",
                "Z9M4",
            ],
        ),
        (
            DOCUMENTS,
            [
                "35KP",
                "5TYM",
                "6WLZ",
                "6XDY",
                "6ZKB",
                "7Z25",
                "9DXL",
                "9WXW",
                "JHB9",
                "KSS4",
                "L383",
                "M7A3",
                "PUW8",
                "RZT7",
                "U9NS",
                "W4TN",
            ],
        ),
        (
            COMPLEX_KEYS,
            [
                "4FJ6",
                "6PBE",
                "9MMW",
                "KK5P",
                "LX3P",
                "M2N8-01",
                "M5DY",
                "Q9WF",
                "SBG9",
                "V9D5",
            ],
        ),
        (
            NULL_KEYS,
            [
                "2JQS",
                "CFD4",
                "DFF7",
                "FH7J",
                "FRK4",
                "M2N8-00",
                "NHX8",
                "NKF9",
                "S3PD",
                "SM9W-01",
                "UKK6-00",
            ],
        ),
        (EMPTY, ["8G76", "98YD", "AVM7", "HWV9", "QT73"]),
        (
            TABS,
            [
                "6BCT",
                "6CA3",
                "6HB6",
                "A2M4",
                "DC7X",
                "DK95-00",
                "DK95-03",
                "DK95-04",
                "DK95-05",
                "DK95-07",
                "HS5T",
                "J3BT",
                "K54U",
                "MUS6-03",
                "NB6Z",
                "Q5MG",
                "UV7Q",
                "Y79Y-002",
                "Y79Y-010",
            ],
        ),
        (
            FLOW_KEY_LINES,
            [
                "4MUZ-00",
                "4MUZ-01",
                "4MUZ-02",
                "5MUD",
                "9SA2",
                "K3WX",
                "NJ66",
                "UT92",
                "VJP3-01",
            ],
        ),
        (COLON_START, ["58MP", "5T43", "DBG4", "HM87-00"]),
        (COLUMN_ZERO, ["DK3J", "FP8R"]),
        (FLOW_EMPTY_TAGGED, ["WZ62"]),
    ]
    for case_id in ids
}

# valid cases the suite gives no JSON for: the value its event tree describes
NO_JSON = {
    "4ABK": {"unquoted": "separate", "http://foo.com": None, "omitted value": None},
    "UKK6-02": "",  # '!' alone: an empty scalar with the non-specific tag, a string
}


def same(value, expected) -> bool:
    """Equal and of the same JSON type: 1 is not 1.0 nor true; key order aside."""
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        return type(value) is type(expected) and value == expected
    if isinstance(expected, (int, float)):
        return type(value) is type(expected) and (
            value == expected or math.isclose(value, expected, rel_tol=1e-15)
        )
    if isinstance(expected, list):
        return (
            isinstance(value, list)
            and len(value) == len(expected)
            and all(same(v, e) for v, e in zip(value, expected))
        )
    return (
        isinstance(value, dict)
        and value.keys() == expected.keys()
        and all(same(value[k], expected[k]) for k in expected)
    )


def test_the_vendored_suite_is_whole():
    assert (len(CASES), len(ERRORS), sum("json" in case for case in CASES)) == (402, 94, 279)
    valid_ids = {case["id"] for case in VALID}
    assert set(REJECTED) <= valid_ids
    assert set(NO_JSON) <= valid_ids and not set(NO_JSON) & set(REJECTED)


@pytest.mark.parametrize("case", ERRORS, ids=[case["id"] for case in ERRORS])
def test_error_case_is_rejected(case):
    with pytest.raises(LoadError) as info:
        load_yaml(case["yaml"].encode("utf-8"))
    assert info.value.line and info.value.column, str(info.value)


@pytest.mark.parametrize("case", VALID, ids=[case["id"] for case in VALID])
def test_valid_case(case):
    try:
        value = load_yaml(case["yaml"].encode("utf-8")).value
    except LoadError as exc:
        assert case["id"] in REJECTED, f"{case['name']!r} is valid YAML, refused: {exc}"
        reason = REJECTED[case["id"]]
        assert re.search(reason.message, exc.message), (
            f"refused for another reason than {reason.why!r}: {exc}"
        )
        assert exc.line and exc.column, str(exc)
        return
    assert case["id"] not in REJECTED, (
        f"now accepted: take it off the table ({REJECTED[case['id']].why})"
    )
    if "json" in case:
        expected = json.loads(case["json"])
    else:
        assert case["id"] in NO_JSON, f"accepted, and the suite gives no JSON: {value!r}"
        expected = NO_JSON[case["id"]]
    assert same(value, expected), (value, expected)


# error cases that read as a top-level mapping, so they can end a budget file
IN_A_FREEZE_FILE = ["SU5Z", "9C9N", "DK95-01", "CVW2"]


@pytest.mark.parametrize("case_id", IN_A_FREEZE_FILE)
def test_an_error_case_in_a_freeze_file_is_a_finding(capsys, tmp_path, case_id):
    case = next(case for case in ERRORS if case["id"] == case_id)
    text = case["yaml"].removeprefix("---\n")
    with pytest.raises(LoadError) as info:
        load_yaml(text.encode("utf-8"))
    line = FLAKE_BUDGET_YAML.count("\n") + info.value.line
    repo = init_repo(tmp_path / "repo")
    stage(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nfreeze:\n"
            '  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}\n',
            "oracle/flake_budget.yaml": FLAKE_BUDGET_YAML + text,
        },
    )
    rc, out, err = run_guard(
        capsys, repo, "check", "--only", "freeze-schema", "--now", "2026-09-25"
    )
    assert rc == 1, out + err
    assert (
        f"oracle/flake_budget.yaml:{line}: freeze-invalid: does not parse: "
        f"{info.value.message} (column {info.value.column})" in out.splitlines()
    ), out
    assert "internal error" not in out + err
