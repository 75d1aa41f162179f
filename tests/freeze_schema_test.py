"""freeze-schema: every freeze, quarantine and budget file parses strictly and
validates; real-shaped samples pass as they are."""

import json

import pytest

from testing.git import init_repo, run_guard, stage
from testing.oracle import NOW
from testing.samples import (
    FLAKE_BUDGET_YAML,
    FREEZE_JSON,
    QUARANTINE_ENTRY_YAML,
    QUARANTINE_LIST_JSON,
)
from testing.trees import MemoryRepo, link

CONTRACT = """\
version: 1
freeze:
  - {paths: ["freeze.json"], schema: freeze}
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
  - {paths: ["quarantine/active/*.yaml"], schema: quarantine-entry}
  - {paths: ["oracle/quarantine.json"], schema: quarantine-list}
"""

SAMPLES = {
    "freeze.json": FREEZE_JSON,
    "oracle/flake_budget.yaml": FLAKE_BUDGET_YAML,
    "quarantine/active/retry_budget.yaml": QUARANTINE_ENTRY_YAML,
    "oracle/quarantine.json": QUARANTINE_LIST_JSON,
}


def check(repo):
    return repo.check("freeze-schema", now=NOW)


def staged_repo(files, contract=CONTRACT):
    """A first commit being made: the contract and ``files`` staged, no commits yet."""
    return MemoryRepo({".oracle-guard.yaml": contract, **files})


def assert_invalid(files, expected):
    """The hook fails and prints exactly the ``path:line: freeze-invalid: ...`` line."""
    repo = staged_repo(files)
    rc, out, err = check(repo)
    assert rc == 1, out + err
    assert expected in out.splitlines(), out
    assert "freeze-schema: failed" in out


def assert_valid(files):
    repo = staged_repo(files)
    rc, out, err = check(repo)
    assert rc == 0, out + err
    assert "freeze-invalid" not in out
    assert "freeze-schema: passed" in out


def budget_yaml(*entries, max_frozen=3):
    lines = [f"max_frozen: {max_frozen}", "frozen:"]
    for entry in entries:
        lines.append("  - " + "\n    ".join(f"{k}: {v}" for k, v in entry.items()))
    return "\n".join(lines) + "\n"


def entry(ident="a", **fields):
    return {"id": ident, "owner": "team", "expires": '"2026-09-30"', "reason": "flaky", **fields}


def quarantine_entry(**fields):
    values = {
        "id": "case_1",
        "seed": "1729",
        "command": "pytest -q",
        "runs": "7",
        "pass_count": "4",
        "fail_count": "3",
        "expires_at": "2026-10-07T00:00:00Z",
        "repro": "python replay.py",
        "owner": "humans-only",
        **fields,
    }
    return "".join(f"{k}: {v}\n" for k, v in values.items() if v is not None)


# -- near-misses: the samples as they are ------------------------------------
def test_all_samples_pass():
    assert_valid(SAMPLES)


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_each_sample_passes_alone(path):
    assert_valid({path: SAMPLES[path]})


def test_freeze_with_owner_and_expires_maps_passes():
    doc = json.loads(FREEZE_JSON)
    doc["owner"] = {"prop.http.retry_after_parse": "platform"}
    doc["expires"] = {"prop.http.retry_after_parse": "2026-10-01T12:00:00+02:00"}
    assert_valid({"freeze.json": doc})


def test_files_outside_the_patterns_are_not_read():
    assert_valid({"quarantine/proposed/x.yaml": "not: [valid", "notes/frozen.json": "{"})


def test_only_staged_content_counts(tmp_path, capsys):
    repo = init_repo(tmp_path / "repo")
    stage(repo, {".oracle-guard.yaml": CONTRACT, **SAMPLES})
    (repo / "freeze.json").write_text("{ broken", encoding="utf-8")  # unstaged
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "freeze-schema", "--now", NOW)
    assert rc == 0, out


def test_no_freeze_section_passes_with_a_note():
    repo = staged_repo({"freeze.json": "{"}, contract="version: 1\n")
    rc, out, _ = check(repo)
    assert rc == 0, out
    assert "freeze-schema: passed (nothing to check: the contract has no 'freeze' section)" in out


# -- parse errors ------------------------------------------------------------
# (file, its text, the finding line)
PARSE_ERRORS = {
    "json duplicate key": (
        "freeze.json",
        FREEZE_JSON.replace('  "reason": {', '  "reason": {"x": "y"},\n  "reason": {'),
        "freeze.json:6: freeze-invalid: does not parse: duplicate key 'reason' (column 3)",
    ),
    "yaml duplicate key": (
        "oracle/flake_budget.yaml",
        FLAKE_BUDGET_YAML.replace(
            "    owner: billing\n", "    owner: billing\n    owner: platform\n"
        ),
        "oracle/flake_budget.yaml:9: freeze-invalid: does not parse: "
        "duplicate key 'owner' (column 5)",
    ),
    "yaml control character": (
        "oracle/flake_budget.yaml",
        FLAKE_BUDGET_YAML.replace("    owner: billing\n", "    owner: bill\x1bing\n"),
        "oracle/flake_budget.yaml:8: freeze-invalid: does not parse: "
        "control character U+001B is not allowed in YAML (column 16)",
    ),
    "yaml anchor and alias": (
        "oracle/flake_budget.yaml",
        (budget_yaml(entry()) + "  - *first\n").replace("  - id: a", "  - &first\n    id: a"),
        "oracle/flake_budget.yaml:3: freeze-invalid: does not parse: "
        "anchor &first is not allowed (column 5)",
    ),
    "yaml alias alone": (
        "quarantine/active/a.yaml",
        quarantine_entry(owner="*who"),
        "quarantine/active/a.yaml:9: freeze-invalid: does not parse: "
        "alias *who is not allowed (column 8)",
    ),
    "yaml custom tag": (
        "quarantine/active/a.yaml",
        quarantine_entry(seed="!seed 1729"),
        "quarantine/active/a.yaml:2: freeze-invalid: does not parse: "
        "tag !seed is not allowed (column 7)",
    ),
    "json nan": (
        "oracle/quarantine.json",
        '[\n  {"test": "t", "reason": NaN}\n]\n',
        "oracle/quarantine.json:2: freeze-invalid: does not parse: "
        "NaN is not valid JSON (column 27)",
    ),
    "invalid utf8": (
        "oracle/quarantine.json",
        b'[\n  {"test": "caf\xe9"}\n]\n',
        "oracle/quarantine.json:2: freeze-invalid: does not parse: "
        "invalid UTF-8 (byte 0xe9) (column 16)",
    ),
    "yaml two documents": (
        "quarantine/active/a.yaml",
        quarantine_entry() + "---\n" + quarantine_entry(id="case_2"),
        "quarantine/active/a.yaml:10: freeze-invalid: does not parse: "
        "more than one YAML document in the file (column 1)",
    ),
}


@pytest.mark.parametrize("path, text, expected", PARSE_ERRORS.values(), ids=list(PARSE_ERRORS))
def test_a_file_that_does_not_parse_is_invalid(path, text, expected):
    assert_invalid({path: text}, expected)


# -- schema violations -------------------------------------------------------
SCHEMA_VIOLATIONS = {
    "missing field": (
        "oracle/flake_budget.yaml",
        FLAKE_BUDGET_YAML.replace('    expires: "2026-10-07"\n', ""),
        "oracle/flake_budget.yaml:7: freeze-invalid: $.frozen[1]: 'expires' is a required property",
    ),
    "missing field in quarantine entry": (
        "quarantine/active/a.yaml",
        quarantine_entry(repro=None),
        "quarantine/active/a.yaml:1: freeze-invalid: $: 'repro' is a required property",
    ),
    "wrong type": (
        "quarantine/active/a.yaml",
        quarantine_entry(runs='"7"'),
        "quarantine/active/a.yaml:4: freeze-invalid: $.runs: '7' is not of type 'integer'",
    ),
    # `yes` stays a string, so a list is expected and a string is found
    "wrong type yes is not a boolean": (
        "freeze.json",
        '{"excluded_property_ids": "yes", "reason": {}}',
        "freeze.json:1: freeze-invalid: $.excluded_property_ids: 'yes' is not of type 'array'",
    ),
    "unknown key": (
        "oracle/flake_budget.yaml",
        FLAKE_BUDGET_YAML.replace("    owner: billing\n", "    owner: billing\n    ownr: x\n"),
        "oracle/flake_budget.yaml:7: freeze-invalid: $.frozen[1]: "
        "Additional properties are not allowed ('ownr' was unexpected)",
    ),
    "unknown key in quarantine list": (
        "oracle/quarantine.json",
        '[\n  {"test": "t"},\n  {"test": "u", "tset": 1}\n]',
        "oracle/quarantine.json:3: freeze-invalid: $[1]: "
        "Additional properties are not allowed ('tset' was unexpected)",
    ),
    "quarantine list entry without test": (
        "oracle/quarantine.json",
        '[\n  {"owner": "x"}\n]',
        "oracle/quarantine.json:2: freeze-invalid: $[0]: 'test' is a required property",
    ),
    "date time without offset": (
        "quarantine/active/a.yaml",
        quarantine_entry(expires_at="2026-10-07T00:00:00"),
        "quarantine/active/a.yaml:7: freeze-invalid: $.expires_at: "
        "'2026-10-07T00:00:00' does not match "
        "'^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\\\.[0-9]+)?)?"
        "(Z|[+-][0-9]{2}:[0-9]{2}))?$'",
    ),
}


@pytest.mark.parametrize(
    "path, text, expected", SCHEMA_VIOLATIONS.values(), ids=list(SCHEMA_VIOLATIONS)
)
def test_a_file_its_schema_refuses_is_invalid(path, text, expected):
    assert_invalid({path: text}, expected)


# -- rules beyond the schema -------------------------------------------------
@pytest.mark.parametrize(
    "files, expected",
    [
        (
            {"oracle/flake_budget.yaml": budget_yaml(entry("a"), entry("b"), entry("a"))},
            "oracle/flake_budget.yaml:11: freeze-invalid: $.frozen[2].id: duplicate id 'a'",
        ),
        (
            {"freeze.json": {"excluded_property_ids": ["p1", "p1"], "reason": {"p1": "flaky"}}},
            "freeze.json:4: freeze-invalid: $.excluded_property_ids[1]: duplicate id 'p1'",
        ),
        (
            {"oracle/quarantine.json": '[\n  {"test": "t"},\n  {"test": "t"}\n]'},
            "oracle/quarantine.json:3: freeze-invalid: $[1].test: duplicate test 't'",
        ),
        (
            {
                "quarantine/active/a.yaml": quarantine_entry(),
                "quarantine/active/b.yaml": quarantine_entry(),
            },
            "quarantine/active/b.yaml:1: freeze-invalid: duplicate id 'case_1' "
            "(also in quarantine/active/a.yaml)",
        ),
    ],
    ids=[
        "fires-duplicate-id-in-flake-budget",
        "fires-duplicate-id-in-freeze",
        "fires-duplicate-test-in-quarantine-list",
        "fires-duplicate-id-across-quarantine-entries",
    ],
)
def test_a_duplicate_id_is_invalid(files, expected):
    assert_invalid(files, expected)


def test_distinct_ids_in_flake_budget_pass():  # near miss of fires-duplicate-id-in-flake-budget
    assert_valid({"oracle/flake_budget.yaml": budget_yaml(entry("a"), entry("b"), entry("c"))})


# near miss of fires-duplicate-id-across-quarantine-entries
def test_distinct_ids_across_quarantine_entries_pass():
    assert_valid(
        {
            "quarantine/active/a.yaml": quarantine_entry(),
            "quarantine/active/b.yaml": quarantine_entry(id="case_2"),
        }
    )


@pytest.mark.parametrize(
    "doc, expected",
    [
        (
            {"excluded_property_ids": ["p1", "p2"], "reason": {"p1": "flaky"}},
            "freeze.json:4: freeze-invalid: $.excluded_property_ids[1]: "
            "excluded id 'p2' has no reason",
        ),
        (
            {"excluded_property_ids": ["p1"], "reason": {"p1": "flaky", "p9": "stale"}},
            "freeze.json:7: freeze-invalid: $.reason.p9: reason names 'p9', which is not excluded",
        ),
        (
            {
                "excluded_property_ids": ["p1"],
                "reason": {"p1": "flaky"},
                "owner": {"p1": "a", "p.x": "b"},
            },
            'freeze.json:10: freeze-invalid: $.owner["p.x"]: '
            "owner names 'p.x', which is not excluded",
        ),
        (
            {"excluded_property_ids": ["p1"], "reason": {"p1": ""}},
            "freeze.json:6: freeze-invalid: $.reason.p1: '' should be non-empty",
        ),
    ],
    ids=[
        "excluded-id-without-reason",
        "reason-for-an-id-not-excluded",
        "owner-for-an-id-not-excluded",
        "empty-reason",
    ],
)
def test_a_freeze_json_map_that_breaks_a_rule_is_invalid(doc, expected):
    assert_invalid({"freeze.json": doc}, expected)


def test_counts_do_not_add_up_to_runs():
    assert_invalid(
        {"quarantine/active/a.yaml": quarantine_entry(fail_count="2")},
        "quarantine/active/a.yaml:4: freeze-invalid: "
        "$.runs: pass_count + fail_count = 6, but runs is 7",
    )


@pytest.mark.parametrize(
    "field, other, line", [("pass_count", "fail_count", 5), ("fail_count", "pass_count", 6)]
)
def test_count_of_zero_is_not_flaky(field, other, line):
    text = quarantine_entry(**{field: "0", other: "7"})
    assert_invalid(
        {"quarantine/active/a.yaml": text},
        f"quarantine/active/a.yaml:{line}: freeze-invalid: "
        f"${'.' + field}: {field} must be above zero for a flaky case",
    )


def test_counts_of_one_pass():
    assert_valid(
        {"quarantine/active/a.yaml": quarantine_entry(runs="2", pass_count="1", fail_count="1")}
    )


def test_impossible_date():
    text = budget_yaml(entry("a"), entry("b", expires="2026-02-30"))
    assert_invalid(
        {"oracle/flake_budget.yaml": text},
        "oracle/flake_budget.yaml:9: freeze-invalid: $.frozen[1].expires: "
        "'2026-02-30' is not a valid date: day is out of range for month",
    )


def test_impossible_date_in_freeze_expires():
    doc = {
        "excluded_property_ids": ["p1"],
        "reason": {"p1": "flaky"},
        "expires": {"p1": "2026-09-31"},
    }
    assert_invalid(
        {"freeze.json": doc},
        "freeze.json:9: freeze-invalid: $.expires.p1: "
        "'2026-09-31' is not a valid date: day is out of range for month",
    )


def test_unquoted_yaml_date_and_yes_stay_strings_and_pass():
    text = budget_yaml(entry("a", expires="2026-09-30", owner="no"))
    assert_valid({"oracle/flake_budget.yaml": text})


def test_unquoted_impossible_yaml_date():
    text = budget_yaml(entry("a", expires="2026-02-30"))
    assert_invalid(
        {"oracle/flake_budget.yaml": text},
        "oracle/flake_budget.yaml:5: freeze-invalid: $.frozen[0].expires: "
        "'2026-02-30' is not a valid date: day is out of range for month",
    )


def test_leap_day_passes():
    text = budget_yaml(entry("a", expires="2028-02-29"))
    assert_valid({"oracle/flake_budget.yaml": text})


def test_impossible_time():
    assert_invalid(
        {"quarantine/active/a.yaml": quarantine_entry(expires_at="2026-10-07T25:00:00Z")},
        "quarantine/active/a.yaml:7: freeze-invalid: $.expires_at: "
        "'2026-10-07T25:00:00Z' is not a valid date: hour must be in 0..23",
    )


def test_every_bad_file_is_reported():
    repo = staged_repo({"freeze.json": "{", "oracle/quarantine.json": "[{}]"})
    rc, out, _ = check(repo)
    assert rc == 1
    assert (
        "freeze.json:1: freeze-invalid: does not parse: unexpected end of file "
        "(expected a string key) (column 2)" in out.splitlines()
    )
    assert (
        "oracle/quarantine.json:1: freeze-invalid: $[0]: 'test' is a required property"
        in out.splitlines()
    )
    assert "freeze-schema: failed (2 errors)" in out


def test_symlink_is_invalid():
    repo = staged_repo({"target.json": FREEZE_JSON, "freeze.json": link("target.json")})
    rc, out, _ = check(repo)
    assert rc == 1
    assert "freeze.json: freeze-invalid: is not a regular file (mode 120000)" in out.splitlines()


# -- a custom JSON Schema from the repository --------------------------------
CUSTOM_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["skipped"],
    "additionalProperties": False,
    "properties": {"skipped": {"type": "array", "items": {"type": "string"}}},
}
CUSTOM_CONTRACT = """\
version: 1
freeze:
  - {paths: ["oracle/skips.json"], schema: oracle/skips.schema.json}
"""


def test_custom_schema_violation():
    repo = staged_repo(
        {
            "oracle/skips.schema.json": CUSTOM_SCHEMA,
            "oracle/skips.json": '{\n  "skipped": ["a", 2]\n}\n',
        },
        contract=CUSTOM_CONTRACT,
    )
    rc, out, _ = check(repo)
    assert rc == 1, out
    assert (
        "oracle/skips.json:2: freeze-invalid: $.skipped[1]: 2 is not of type 'string'"
        in out.splitlines()
    )


def test_custom_schema_near_miss_passes():
    repo = staged_repo(
        {
            "oracle/skips.schema.json": CUSTOM_SCHEMA,
            "oracle/skips.json": '{"skipped": ["a", "b"]}\n',
        },
        contract=CUSTOM_CONTRACT,
    )
    rc, out, _ = check(repo)
    assert rc == 0, out


def test_custom_schema_is_read_from_the_base():
    """Loosening the schema in the same change does not loosen the check."""
    repo = MemoryRepo()
    repo.commit(
        {
            ".oracle-guard.yaml": CUSTOM_CONTRACT,
            "oracle/skips.schema.json": CUSTOM_SCHEMA,
            "oracle/skips.json": '{"skipped": []}\n',
        }
    )
    repo.stage(
        {
            "oracle/skips.schema.json": {"type": "object"},
            "oracle/skips.json": '{"skipped": [], "extra": 1}\n',
        }
    )
    rc, out, _ = check(repo)
    assert rc == 1, out
    assert (
        "oracle/skips.json:1: freeze-invalid: $: Additional properties are not allowed "
        "('extra' was unexpected)" in out.splitlines()
    )


def test_custom_schema_missing_is_a_contract_error():
    repo = staged_repo({"oracle/skips.json": '{"skipped": []}\n'}, contract=CUSTOM_CONTRACT)
    rc, out, err = check(repo)
    assert rc == 2
    assert err == (
        "oracle-guard: error: schema file 'oracle/skips.schema.json' named by the "
        "contract is missing from the index\n"
    )


@pytest.mark.parametrize(
    "schema, error",
    [
        (
            {"type": 12},
            "oracle-guard: error: schema file 'oracle/skips.schema.json' "
            "(the index): not a valid JSON Schema:",
        ),
        (
            dict(
                CUSTOM_SCHEMA,
                properties={"skipped": {"$ref": "https://schemas.example.invalid/skipped.json"}},
            ),
            "oracle-guard: error: schema file 'oracle/skips.schema.json': "
            "cannot resolve $ref 'https://schemas.example.invalid/skipped.json'",
        ),
    ],
    ids=["not-a-schema", "remote-ref-is-not-fetched"],
)
def test_custom_schema_that_cannot_be_used_is_a_contract_error(schema, error):
    repo = staged_repo(
        {"oracle/skips.schema.json": schema, "oracle/skips.json": '{"skipped": []}\n'},
        contract=CUSTOM_CONTRACT,
    )
    rc, out, err = check(repo)
    assert rc == 2
    assert err.startswith(error)


def test_custom_schema_with_a_local_ref_works():
    local = dict(
        CUSTOM_SCHEMA,
        properties={"skipped": {"$ref": "#/$defs/names"}},
        **{"$defs": {"names": {"type": "array", "items": {"type": "string"}}}},
    )
    repo = staged_repo(
        {"oracle/skips.schema.json": local, "oracle/skips.json": '{"skipped": [1]}\n'},
        contract=CUSTOM_CONTRACT,
    )
    rc, out, _ = check(repo)
    assert rc == 1
    assert "freeze-invalid: $.skipped[0]: 1 is not of type 'string'" in out
