"""flake-budget: every frozen entry is owned, unexpired, known and within the cap."""

import json

import pytest

from testing.oracle import NOW
from testing.samples import FLAKE_BUDGET_YAML, QUARANTINE_ENTRY_YAML
from testing.trees import MemoryRepo

CONTRACT = """\
version: 1
freeze:
  - {paths: ["freeze.json"], schema: freeze}
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
  - {paths: ["quarantine/active/*.yaml"], schema: quarantine-entry}
  - {paths: ["oracle/quarantine.json"], schema: quarantine-list}
budget:
  max_frozen: 3
  max_days: 14
  warn_days: 3
"""
BUDGET = "oracle/flake_budget.yaml"

FREEZE_JSON = {
    "excluded_property_ids": ["prop.http.retry_after_parse"],
    "reason": {
        "prop.http.retry_after_parse": "intermittent under parallel workers; excluded from scoring until retimed"
    },
}


def budget_file(*entries, max_frozen=10):
    """A flake_budget.yaml: entry N starts on line 3 + 4 * N."""
    lines = [f"max_frozen: {max_frozen}", "frozen:" if entries else "frozen: []"]
    for e in entries:
        lines.append(f"  - id: {e['id']}")
        lines += [f"    {key}: {json.dumps(e[key])}" for key in ("owner", "expires", "reason")]
    return "\n".join(lines) + "\n"


def frozen(ident, owner="team", expires="2026-10-01", reason="flaky on CI"):
    return {"id": ident, "owner": owner, "expires": expires, "reason": reason}


def contract(**budget):
    """CONTRACT with its budget section replaced by ``budget``."""
    head = CONTRACT.split("budget:")[0]
    lines = [f"  {key}: {json.dumps(value)}" for key, value in budget.items()]
    return head + "budget:\n" + "\n".join(lines) + "\n"


def run(files, *, now=NOW, contract_text=CONTRACT):
    """Judge a first commit being made: ``files`` staged, no commits yet."""
    repo = MemoryRepo({".oracle-guard.yaml": contract_text, **files})
    rc, out, err = repo.check("flake-budget", now=now)
    assert not err or rc == 2, err
    return rc, out


def assert_fires(result, line):
    rc, out = result
    assert rc == 1, out
    assert line in out.splitlines(), out
    assert "flake-budget: failed" in out


def assert_passes(result):
    rc, out = result
    assert rc == 0, out
    assert "flake-budget: passed" in out
    return out


# -- the samples -------------------------------------------------------------
def test_samples_pass():
    # three entries: exactly at the contract's cap and at the file's own max_frozen
    out = assert_passes(
        run(
            {
                BUDGET: FLAKE_BUDGET_YAML,
                "quarantine/active/retry_budget.yaml": QUARANTINE_ENTRY_YAML,
            }
        )
    )
    assert "budget-" not in out


def test_freeze_sample_with_owner_and_expires_maps_passes():
    freeze = dict(
        FREEZE_JSON,
        owner={"prop.http.retry_after_parse": "platform"},
        expires={"prop.http.retry_after_parse": "2026-10-01"},
    )
    out = assert_passes(run({"freeze.json": freeze}))
    assert "budget-" not in out


def test_file_cap_counts_entries_from_every_file():
    freeze = dict(
        FREEZE_JSON,
        owner={"prop.http.retry_after_parse": "platform"},
        expires={"prop.http.retry_after_parse": "2026-10-01"},
    )
    assert_fires(
        run(
            {
                BUDGET: FLAKE_BUDGET_YAML,
                "freeze.json": freeze,
                "quarantine/active/retry_budget.yaml": QUARANTINE_ENTRY_YAML,
            },
            contract_text=contract(max_frozen=4),
        ),
        "oracle/flake_budget.yaml:1: budget-exceeded: 4 entries frozen, "
        "max_frozen in oracle/flake_budget.yaml allows 3",
    )


# -- budget-exceeded ---------------------------------------------------------
def test_exceeded_contract_cap():
    entries = [frozen(f"t{n}") for n in range(4)]
    assert_fires(
        run({BUDGET: budget_file(*entries)}),
        ".oracle-guard.yaml: budget-exceeded: 4 entries frozen, "
        "budget.max_frozen in the contract allows 3",
    )


def test_exactly_at_contract_cap_passes():
    entries = [frozen(f"t{n}") for n in range(3)]
    assert_passes(run({BUDGET: budget_file(*entries)}))


def test_entries_from_every_file_count_together():
    assert_fires(
        run(
            {
                BUDGET: FLAKE_BUDGET_YAML,
                "quarantine/active/retry_budget.yaml": QUARANTINE_ENTRY_YAML,
                "oracle/quarantine.json": [
                    {"test": "tests/t.py::x", "owner": "qa", "expires": "2026-10-01"}
                ],
            }
        ),
        ".oracle-guard.yaml: budget-exceeded: 4 entries frozen, "
        "budget.max_frozen in the contract allows 3",
    )


def test_exceeded_file_cap_when_smaller():
    entries = [frozen(f"t{n}") for n in range(3)]
    assert_fires(
        run({BUDGET: budget_file(*entries, max_frozen=2)}),
        "oracle/flake_budget.yaml:1: budget-exceeded: 3 entries frozen, "
        "max_frozen in oracle/flake_budget.yaml allows 2",
    )


def test_exactly_at_file_cap_passes():
    entries = [frozen(f"t{n}") for n in range(2)]
    assert_passes(run({BUDGET: budget_file(*entries, max_frozen=2)}))


def test_larger_file_cap_does_not_raise_the_contract_cap():
    entries = [frozen(f"t{n}") for n in range(4)]
    assert_fires(
        run({BUDGET: budget_file(*entries, max_frozen=5)}),
        ".oracle-guard.yaml: budget-exceeded: 4 entries frozen, "
        "budget.max_frozen in the contract allows 3",
    )


def test_zero_cap_with_nothing_frozen_passes():
    assert_passes(run({BUDGET: budget_file(max_frozen=0)}, contract_text=contract(max_frozen=0)))


# -- budget-no-owner ---------------------------------------------------------
@pytest.mark.parametrize("owner", ["", "   ", "\t"])
def test_empty_or_blank_owner(owner):
    assert_fires(
        run({BUDGET: budget_file(frozen("a"), frozen("b", owner))}),
        "oracle/flake_budget.yaml:7: budget-no-owner: 'b' has no owner",
    )


def test_quarantine_list_entry_without_owner():
    result = run(
        {
            "oracle/quarantine.json": [
                {"test": "tests/t.py::x", "owner": "qa", "expires": "2026-10-01"},
                {"test": "tests/t.py::y", "expires": "2026-10-01"},
            ]
        }
    )
    assert_fires(result, "oracle/quarantine.json:7: budget-no-owner: 'tests/t.py::y' has no owner")
    assert "'tests/t.py::x' has no owner" not in result[1]


def test_quarantine_list_entry_with_owner_passes():
    assert_passes(
        run(
            {
                "oracle/quarantine.json": [
                    {"test": "tests/t.py::x", "owner": "qa", "expires": "2026-10-01"}
                ]
            }
        )
    )


def test_freeze_json_without_owner_map():
    freeze = dict(FREEZE_JSON, expires={"prop.http.retry_after_parse": "2026-10-01"})
    assert_fires(
        run({"freeze.json": freeze}),
        "freeze.json:3: budget-no-owner: 'prop.http.retry_after_parse' has no owner",
    )


def test_freeze_json_with_owner_map_passes():
    freeze = dict(
        FREEZE_JSON,
        owner={"prop.http.retry_after_parse": "platform"},
        expires={"prop.http.retry_after_parse": "2026-10-01"},
    )
    assert_passes(run({"freeze.json": freeze}))


def test_quarantine_entry_blank_owner():
    text = QUARANTINE_ENTRY_YAML.replace("owner: humans-only", 'owner: " "')
    assert_fires(
        run({"quarantine/active/retry_budget.yaml": text}),
        "quarantine/active/retry_budget.yaml:1: budget-no-owner: 'retry_budget_9c2' has no owner",
    )


# -- budget-no-expiry --------------------------------------------------------
def test_quarantine_list_entry_without_expiry():
    assert_fires(
        run({"oracle/quarantine.json": [{"test": "tests/t.py::x", "owner": "qa"}]}),
        "oracle/quarantine.json:2: budget-no-expiry: 'tests/t.py::x' has no expiry",
    )


def test_freeze_json_without_expires_map():
    freeze = dict(FREEZE_JSON, owner={"prop.http.retry_after_parse": "platform"})
    assert_fires(
        run({"freeze.json": freeze}),
        "freeze.json:3: budget-no-expiry: 'prop.http.retry_after_parse' has no expiry",
    )


def test_freeze_sample_without_maps_has_no_owner_and_no_expiry():
    rc, out = run({"freeze.json": FREEZE_JSON})
    assert rc == 1
    assert out.splitlines()[:2] == [
        "freeze.json:3: budget-no-expiry: 'prop.http.retry_after_parse' has no expiry",
        "freeze.json:3: budget-no-owner: 'prop.http.retry_after_parse' has no owner",
    ]


# -- budget-expired ----------------------------------------------------------
EXPIRES_DATE = {BUDGET: budget_file(frozen("a", expires="2026-09-30"))}


def test_date_lasts_through_its_day():
    assert_passes(run(EXPIRES_DATE, now="2026-09-30T23:59:59Z"))


def test_date_expired_the_next_day():
    assert_fires(
        run(EXPIRES_DATE, now="2026-10-01T00:00:00Z"),
        "oracle/flake_budget.yaml:3: budget-expired: 'a' expired 2026-09-30",
    )


def test_date_judged_in_utc_whatever_the_offset_of_now():
    # 2026-10-01T01:00+02:00 is still 2026-09-30 in UTC
    assert_passes(run(EXPIRES_DATE, now="2026-10-01T01:00:00+02:00"))


def test_date_time_with_offset_compared_exactly():
    files = {BUDGET: budget_file(frozen("a", expires="2026-10-01T12:00:00+02:00"))}
    assert_passes(run(files, now="2026-10-01T09:59:59Z"))


def test_date_time_with_offset_expired():
    files = {BUDGET: budget_file(frozen("a", expires="2026-10-01T12:00:00+02:00"))}
    assert_fires(
        run(files, now="2026-10-01T10:00:00Z"),
        "oracle/flake_budget.yaml:3: budget-expired: 'a' expired 2026-10-01T12:00:00+02:00",
    )


def test_quarantine_entry_timestamp_expired():
    files = {"quarantine/active/retry_budget.yaml": QUARANTINE_ENTRY_YAML}
    assert_passes(run(files, now="2026-10-06T23:59:59Z"))
    assert_fires(
        run(files, now="2026-10-07T00:00:00Z"),
        "quarantine/active/retry_budget.yaml:1: budget-expired: "
        "'retry_budget_9c2' expired 2026-10-07T00:00:00Z",
    )


# -- budget-too-far ----------------------------------------------------------
def test_date_beyond_max_days():
    # now 2026-09-25 + 14 days = 2026-10-09
    files = {BUDGET: budget_file(frozen("a", expires="2026-10-10"))}
    assert_fires(
        run(files),
        "oracle/flake_budget.yaml:3: budget-too-far: "
        "'a' expires 2026-10-10, beyond 14 days from now",
    )


def test_date_on_the_last_allowed_day_passes():
    assert_passes(run({BUDGET: budget_file(frozen("a", expires="2026-10-09"))}))


def test_date_time_beyond_max_days():
    files = {BUDGET: budget_file(frozen("a", expires="2026-10-09T00:00:01Z"))}
    assert_fires(
        run(files),
        "oracle/flake_budget.yaml:3: budget-too-far: "
        "'a' expires 2026-10-09T00:00:01Z, beyond 14 days from now",
    )


def test_date_time_exactly_max_days_passes():
    files = {BUDGET: budget_file(frozen("a", expires="2026-10-09T02:00:00+02:00"))}
    assert_passes(run(files))


def test_no_max_days_means_no_limit():
    files = {BUDGET: budget_file(frozen("a", expires="2030-01-01"))}
    assert_passes(run(files, contract_text=contract(max_frozen=3)))


# -- budget-unknown-id -------------------------------------------------------
KNOWN = contract(max_frozen=3, known_ids=["seeds/*.json"])


def test_unknown_id():
    files = {
        "seeds/prop.alpha.json": [1],
        "seeds/prop.beta.json": [2],
        BUDGET: budget_file(frozen("prop.alpha"), frozen("prop.gamma")),
    }
    assert_fires(
        run(files, contract_text=KNOWN),
        "oracle/flake_budget.yaml:7: budget-unknown-id: "
        "'prop.gamma' is not a known id (stems of seeds/*.json)",
    )


def test_known_ids_are_file_stems():
    files = {
        "seeds/prop.alpha.json": [1],
        "seeds/prop.beta.json": [2],
        BUDGET: budget_file(frozen("prop.alpha"), frozen("prop.beta")),
    }
    assert_passes(run(files, contract_text=KNOWN))


def test_known_ids_come_from_the_candidate():
    """A seed file deleted in the index no longer makes its id known."""
    repo = MemoryRepo()
    repo.commit(
        {
            ".oracle-guard.yaml": KNOWN,
            "seeds/prop.alpha.json": [1],
            BUDGET: budget_file(frozen("prop.alpha")),
        }
    )
    rc, out, _ = repo.check("flake-budget", now=NOW)
    assert rc == 0, out
    repo.remove("seeds/prop.alpha.json")
    rc, out, _ = repo.check("flake-budget", now=NOW)
    assert rc == 1, out
    assert (
        "oracle/flake_budget.yaml:3: budget-unknown-id: 'prop.alpha' is not a known id "
        "(stems of seeds/*.json)" in out.splitlines()
    )


# -- budget-expiring (a warning) ---------------------------------------------
def test_expiring_is_a_warning():
    # 2026-09-27 lasts until 2026-09-28T00:00Z: three days after now
    out = assert_passes(run({BUDGET: budget_file(frozen("a", expires="2026-09-27"))}))
    assert (
        "oracle/flake_budget.yaml:3: budget-expiring (warning): "
        "'a' expires 2026-09-27, within 3 days" in out.splitlines()
    )
    assert "flake-budget: passed (1 warning)" in out.splitlines()


def test_expiring_outside_warn_days_says_nothing():
    out = assert_passes(run({BUDGET: budget_file(frozen("a", expires="2026-09-28"))}))
    assert "budget-expiring" not in out


def test_expiring_in_json_output():
    repo = MemoryRepo(
        {".oracle-guard.yaml": CONTRACT, BUDGET: budget_file(frozen("a", expires="2026-09-27"))}
    )
    rc, out, _ = repo.check("flake-budget", now=NOW, fmt="json")
    assert rc == 0
    doc = json.loads(out)
    assert [(f["code"], f["severity"], f["path"], f["line"]) for f in doc["findings"]] == [
        ("budget-expiring", "warning", BUDGET, 3)
    ]
    assert doc["checks"]["flake-budget"]["status"] == "passed"


# -- unreadable freeze files and absent sections -----------------------------
def test_unparsable_freeze_file_fails_flake_budget():
    rc, out = run({BUDGET: FLAKE_BUDGET_YAML, "freeze.json": '{"excluded_property_ids": [NaN]}'})
    assert rc == 1, out
    assert (
        "freeze.json:1: freeze-invalid: not counted: does not parse: NaN is not valid JSON "
        "(column 28)" in out.splitlines()
    )
    assert "flake-budget: failed (1 error)" in out.splitlines()


def test_invalid_freeze_file_is_never_counted_as_empty():
    # The broken file would hold the fourth entry; failing on it is what matters.
    text = budget_file(frozen("a"), frozen("b"), frozen("c"), frozen("d")).replace(
        "max_frozen: 10", "max_frozen: ten"
    )
    rc, out = run({BUDGET: text})
    assert rc == 1, out
    assert (
        "oracle/flake_budget.yaml:1: freeze-invalid: not counted: $.max_frozen: "
        "'ten' is not of type 'integer'" in out.splitlines()
    )


def test_no_budget_section_passes_with_a_note():
    text = CONTRACT.split("budget:")[0]
    rc, out = run(
        {BUDGET: budget_file(*[frozen(f"t{n}", owner="") for n in range(9)])}, contract_text=text
    )
    assert rc == 0, out
    assert out.splitlines() == [
        "flake-budget: passed (nothing to check: the contract has no 'budget' section)"
    ]


def test_budget_without_freeze_section_passes():
    assert_passes(run({}, contract_text="version: 1\nbudget:\n  max_frozen: 0\n"))


def test_contract_is_read_from_the_base():
    """Raising the cap in the same change does not raise it."""
    repo = MemoryRepo()
    repo.commit(
        {".oracle-guard.yaml": CONTRACT, BUDGET: budget_file(*[frozen(f"t{n}") for n in range(3)])}
    )
    repo.stage(
        {
            ".oracle-guard.yaml": contract(max_frozen=9),
            BUDGET: budget_file(*[frozen(f"t{n}") for n in range(4)]),
        }
    )
    rc, out, _ = repo.check("flake-budget", now=NOW)
    assert rc == 1, out
    assert (
        ".oracle-guard.yaml: budget-exceeded: 4 entries frozen, "
        "budget.max_frozen in the contract allows 3" in out.splitlines()
    )
