"""Record integrity (seeds[].records, digest, id_field, lock, promote): each rule
fires, and its near miss passes, on real repositories (the index judged against
HEAD, as `git commit` would); the property tests build records in the digest
form and change their payloads."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle_guard.checks import records
from oracle_guard.checks.records import digest_of, jsonl_ids
from oracle_guard.parsing import strict_json
from oracle_guard.parsing.strict_equality import strict_key
from testing.git import commit, init_repo, run_guard, stage, write
from testing.records import CORPUS_TEST, corpus_line, replay_case

CONTRACT = """\
version: 1
seeds:
  - paths: ["oracle/corpus.jsonl"]
    format: jsonl
    records: corpus-line
  - paths: ["replays/*.json"]
    format: immutable
    records: replay-case
    lock: seeds.lock
    promote: [expected, promoted_to]
  - {paths: ["seeds.lock"], format: json-object}
  - {paths: ["seeds/*.json"], format: json-array, records: schemas/case.json, id_field: name}
"""
CASE_SCHEMA = {
    "type": "object",
    "required": ["name", "value"],
    "properties": {"name": {"type": "string"}, "value": {"type": "integer"}},
}
TEST = CORPUS_TEST
CORPUS = "oracle/corpus.jsonl"
REPLAY = "replays/2026-09-23_parse_header.json"
NEW_REPLAY = "replays/2026-09-24_retry.json"


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n"


BASE = {
    ".oracle-guard.yaml": CONTRACT,
    "schemas/case.json": CASE_SCHEMA,
    CORPUS: compact(corpus_line("inv-014", {"items": [{"qty": 0, "price": "-0.01"}]}))
    + compact(corpus_line("inv-015", {"nested": {"id": "inv-099"}})),
    REPLAY: replay_case("parse_header_a3f1", {"raw": "X-Trace: 00-abc"}),
    "seeds.lock": {"parse_header_a3f1": 1729, "retry_budget_9c2": 42},
    "seeds/cases.json": [{"name": "one", "value": 1}],
}


@pytest.fixture
def repo(tmp_path):
    path = init_repo(tmp_path / "r")
    commit(path, BASE, "the oracle")
    return path


def judge(capsys, repo, files=None):
    """(exit code, ['path[:line]: code'], output) of seed-append-only on the index."""
    if files:
        stage(repo, files)
    rc, out, err = run_guard(
        capsys, repo, "check", "--only", "seed-append-only", "--now", "2026-09-25"
    )
    found = [
        line.split(": ", 2)[0] + ": " + line.split(": ", 2)[1]
        for line in out.splitlines()
        if not line.startswith(("seed-append-only:", "hint:"))
    ]
    return rc, found, out + err


def appended(*lines: Any) -> Dict[str, str]:
    return {CORPUS: BASE[CORPUS] + "".join(x if isinstance(x, str) else compact(x) for x in lines)}


# -- corpus lines: schema, digest, ids --------------------------------------------------
def test_a_valid_appended_line_passes(capsys, repo):
    rc, found, out = judge(capsys, repo, appended(corpus_line("inv-016", {"a": "é", "b": 1.5})))
    assert (rc, found) == (0, []), out


def test_a_reformatted_but_equal_payload_keeps_its_digest(capsys, repo):
    line = corpus_line("inv-016", {"b": [1.0, "ü"], "a": {"z": None, "y": True}})
    # spaced, keys in another order, non-ASCII escaped, 1.0 written 1.00: the same value
    text = (
        '{"expect": "fail", "payload": {"a": {"y": true, "z": null}, "b": [1.00, "\\u00fc"]}, '
        f'"payload_sha256": "{line["payload_sha256"]}", "test": "{TEST}", "id": "inv-016"}}\n'
    )
    rc, found, out = judge(capsys, repo, appended(text))
    assert (rc, found) == (0, []), out


def test_a_stale_digest_is_a_digest_mismatch(capsys, repo):
    line = corpus_line("inv-016", {"qty": 1})
    line["payload"] = {"qty": 2}  # the payload changed, the hash did not
    rc, found, out = judge(capsys, repo, appended(line))
    assert (rc, found) == (1, [f"{CORPUS}:3: record-digest-mismatch"]), out
    assert f'line 3: payload_sha256 "{line["payload_sha256"][:18]}' in out
    assert digest_of({"qty": 2}) in out  # the hash to write, for the human


def test_an_integer_payload_is_not_its_float(capsys, repo):
    line = corpus_line("inv-016", {"qty": 1})
    line["payload"] = {"qty": 1.0}
    assert judge(capsys, repo, appended(line))[1] == [f"{CORPUS}:3: record-digest-mismatch"]


def test_a_line_that_fails_the_schema_is_invalid(capsys, repo):
    line = corpus_line("inv-016", 1, expect="flaky")
    rc, found, out = judge(capsys, repo, appended(line))
    assert (rc, found) == (1, [f"{CORPUS}:3: record-invalid"]), out
    assert "fails corpus-line: $.expect: 'flaky' is not one of ['fail', 'pass']" in out


def test_a_line_with_an_unknown_field_or_no_hash_is_invalid(capsys, repo):
    extra = corpus_line("inv-016", 1, note="x")
    bare = {k: v for k, v in corpus_line("inv-017", 2).items() if k != "payload_sha256"}
    rc, found, out = judge(capsys, repo, appended(extra, bare))
    assert found == [f"{CORPUS}:3: record-invalid", f"{CORPUS}:4: record-invalid"], out
    assert "'payload_sha256' is a required property" in out


def test_a_fixed_by_may_be_null_or_text(capsys, repo):
    rc, found, out = judge(
        capsys,
        repo,
        appended(corpus_line("inv-016", 1, fixed_by=None), corpus_line("inv-017", 2, fixed_by="a")),
    )
    assert (rc, found) == (0, []), out


def test_an_id_the_base_holds_is_reused(capsys, repo):
    rc, found, out = judge(capsys, repo, appended(corpus_line("inv-014", {"other": 1})))
    assert (rc, found) == (1, [f"{CORPUS}:3: record-id-reused"]), out
    assert f'id "inv-014" is already held by {CORPUS} line 1' in out


def test_two_new_lines_with_one_id_are_a_reuse(capsys, repo):
    rc, found, out = judge(
        capsys, repo, appended(corpus_line("inv-016", 1), corpus_line("inv-016", 2))
    )
    assert found == [f"{CORPUS}:4: record-id-reused"], out
    assert f"already held by {CORPUS} line 3" in out


def test_an_id_only_nested_in_a_base_payload_is_new(capsys, repo):
    # inv-099 is a nested "id" of line 2's payload, not a record's id
    rc, found, out = judge(capsys, repo, appended(corpus_line("inv-099", 1)))
    assert (rc, found) == (0, []), out


def test_an_id_the_base_spells_with_escapes_is_still_found(capsys, repo):
    line = compact(corpus_line("inv-020", 1)).replace(
        '"id":"inv-020"', '"\\u0069d":"inv\\u002D020"'
    )
    commit(repo, appended(line), "an escaped id")
    rc, found, out = judge(
        capsys, repo, {CORPUS: (repo / CORPUS).read_text() + compact(corpus_line("inv-020", 2))}
    )
    assert (rc, found) == (1, [f"{CORPUS}:4: record-id-reused"]), out


def test_a_line_that_is_no_object_is_invalid(capsys, repo):
    rc, found, out = judge(capsys, repo, appended("[1, 2]\n"))
    assert found == [f"{CORPUS}:3: record-invalid"], out


def test_only_the_new_lines_are_judged(capsys, repo):
    # a base line that the rules would reject stays: it came before them
    commit(repo, appended('{"legacy": true}\n'), "before the rules")
    text = (repo / CORPUS).read_text()
    rc, found, out = judge(capsys, repo, {CORPUS: text + compact(corpus_line("inv-016", 1))})
    assert (rc, found) == (0, []), out


# -- a repository schema and a json-array set --------------------------------------------
def test_a_json_array_element_is_judged_by_a_repository_schema(capsys, repo):
    rc, found, out = judge(
        capsys, repo, {"seeds/cases.json": [{"name": "one", "value": 1}, {"name": "two"}]}
    )
    assert (rc, found) == (1, ["seeds/cases.json:6: record-invalid"]), out
    assert "element [1]: fails schemas/case.json" in out


def test_a_json_array_id_is_unique_across_the_set(capsys, repo):
    rc, found, out = judge(
        capsys,
        repo,
        {
            "seeds/cases.json": [{"name": "one", "value": 1}, {"name": "two", "value": 2}],
            "seeds/more.json": [{"name": "one", "value": 3}],
        },
    )
    assert (rc, found) == (1, ["seeds/more.json:3: record-id-reused"]), out
    assert "already held by seeds/cases.json element [0]" in out


def test_the_repository_schema_is_read_from_the_rules_revision(capsys, repo):
    # the change loosens the schema in the same commit: HEAD's still judges
    loose = {"type": "object"}
    rc, found, out = judge(
        capsys,
        repo,
        {"schemas/case.json": loose, "seeds/cases.json": [{"name": "one", "value": 1}, {"x": 1}]},
    )
    assert found == ["seeds/cases.json:6: record-invalid"], out


@pytest.mark.parametrize(
    "schema,why",
    [
        (None, "is missing from HEAD"),
        (b"{not json", "schemas/case.json"),
        ({"type": 7}, "not a valid JSON Schema"),
    ],
    ids=["missing", "unparsable", "not-a-schema"],
)
def test_a_broken_repository_schema_is_a_contract_error(capsys, tmp_path, schema, why):
    path = init_repo(tmp_path / "r")
    files = dict(BASE)
    if schema is None:
        del files["schemas/case.json"]
    else:
        files["schemas/case.json"] = schema
    commit(path, files, "the oracle")
    stage(path, {"seeds/cases.json": [{"name": "one", "value": 1}, {"name": "two", "value": 2}]})
    rc, out, err = run_guard(capsys, path, "check", "--only", "seed-append-only")
    assert (rc, out) == (2, ""), out + err
    assert err.startswith("oracle-guard: error: ") and why in err and err.count("\n") == 1, err


# -- replay cases: new files, ids, the lock ------------------------------------------------
def test_a_new_case_with_a_null_expected_passes(capsys, repo):
    rc, found, out = judge(
        capsys, repo, {NEW_REPLAY: replay_case("retry_budget_9c2", [1], seed=42)}
    )
    assert (rc, found) == (0, []), out


def test_a_new_case_whose_id_is_new_to_the_lock_passes(capsys, repo):
    rc, found, out = judge(capsys, repo, {NEW_REPLAY: replay_case("fresh_01", [1], seed=5)})
    assert (rc, found) == (0, []), out


def test_an_empty_command_is_invalid(capsys, repo):
    for command, line in (([], 3), ([""], 4), ("", 3)):
        rc, found, out = judge(
            capsys, repo, {NEW_REPLAY: replay_case("fresh_01", 1, command=command)}
        )
        assert found == [f"{NEW_REPLAY}:{line}: record-invalid"], out
        assert "$.command" in out and "argument list" not in out


def test_a_command_given_as_a_shell_string_is_invalid_with_the_list_to_write(capsys, repo):
    rc, found, out = judge(
        capsys, repo, {NEW_REPLAY: replay_case("fresh_01", 1, command="pytest tests/t.py -q")}
    )
    assert found == [f"{NEW_REPLAY}:3: record-invalid"], out
    assert "is not of type 'array'" in out
    assert 'hint: a command is an argument list, never a shell string: write ["pytest", ' in out


def test_the_near_miss_a_command_as_an_argument_list_passes(capsys, repo):
    case = replay_case("fresh_01", 1, command=["pytest", "tests/t.py", "-q"])
    assert judge(capsys, repo, {NEW_REPLAY: case})[:2] == (0, [])


def test_a_string_seed_is_invalid(capsys, repo):
    rc, found, out = judge(capsys, repo, {NEW_REPLAY: replay_case("fresh_01", 1, seed="1729")})
    assert found == [f"{NEW_REPLAY}:8: record-invalid"], out


def test_a_new_file_reusing_a_base_id_is_a_reuse(capsys, repo):
    rc, found, out = judge(
        capsys, repo, {NEW_REPLAY: replay_case("parse_header_a3f1", {"raw": "y"})}
    )
    assert (rc, found) == (1, [f"{NEW_REPLAY}:2: record-id-reused"]), out
    assert f"already held by {REPLAY}" in out


def test_a_renamed_case_still_holds_its_id(capsys, repo):
    (repo / REPLAY).rename(repo / NEW_REPLAY)
    stage(repo)
    rc, found, out = judge(capsys, repo)
    assert set(found) == {f"{REPLAY}: seed-file-deleted", f"{NEW_REPLAY}:2: record-id-reused"}, out


def test_a_seed_that_disagrees_with_the_lock(capsys, repo):
    rc, found, out = judge(capsys, repo, {NEW_REPLAY: replay_case("retry_budget_9c2", 1, seed=7)})
    assert (rc, found) == (1, [f"{NEW_REPLAY}:8: record-seed-mismatch"]), out
    assert 'seeds.lock, which gives "retry_budget_9c2" the seed 42' in out


def test_a_lock_entry_gained_for_an_existing_case_must_agree(capsys, repo):
    commit(repo, {NEW_REPLAY: replay_case("later_1", 1, seed=3)}, "a case the lock lacks")
    rc, found, out = judge(capsys, repo, {"seeds.lock": {**BASE["seeds.lock"], "later_1": 4}})
    assert (rc, found) == (1, ["seeds.lock:4: record-seed-mismatch"]), out
    rc, found, out = judge(capsys, repo, {"seeds.lock": {**BASE["seeds.lock"], "later_1": 3}})
    assert (rc, found) == (0, []), out


def test_a_missing_lock_is_a_finding(capsys, repo):
    (repo / "seeds.lock").unlink()
    rc, found, out = judge(capsys, repo, {NEW_REPLAY: replay_case("fresh_01", 1)})
    assert "seeds.lock: record-invalid" in found, out


def test_a_new_case_that_does_not_parse_is_invalid(capsys, repo):
    rc, found, out = judge(capsys, repo, {NEW_REPLAY: b'{"id": "x",'})
    assert found == [f"{NEW_REPLAY}:1: record-invalid"], out


# -- promotions -------------------------------------------------------------------------
def promoted(**fields: Any) -> Dict[str, Any]:
    return {REPLAY: {**BASE[REPLAY], **fields}}


def test_a_promotion_from_null_passes(capsys, repo):
    rc, found, out = judge(
        capsys, repo, promoted(expected={"status": 400}, promoted_to="tests/test_parse.py")
    )
    assert (rc, found) == (0, []), out


def test_a_promotion_of_one_field_passes(capsys, repo):
    assert judge(capsys, repo, promoted(expected=0))[:2] == (0, [])


@pytest.mark.parametrize(
    "fields,why",
    [
        ({"payload": {"raw": "other"}}, 'field "payload" changed'),
        ({"input_sha256": "0" * 64}, 'field "input_sha256" changed'),
        ({"seed": 1}, 'field "seed" changed'),
        ({"command": ["pytest"]}, 'field "command" changed'),
    ],
)
def test_a_promotion_changes_nothing_else(capsys, repo, fields, why):
    rc, found, out = judge(capsys, repo, promoted(expected=1, **fields))
    assert rc == 1 and len(found) == 1 and found[0].endswith("seed-rewritten"), out
    assert why in out and "filling in expected, promoted_to from null" in out


def test_a_filled_field_is_not_promoted_again(capsys, repo):
    commit(repo, promoted(expected=1), "promoted")
    rc, found, out = judge(capsys, repo, promoted(expected=2))
    assert found == [f"{REPLAY}:16: seed-rewritten"], out
    assert "was already 1" in out


def test_a_reformatted_case_is_still_a_rewrite(capsys, repo):
    rc, found, out = judge(capsys, repo, {REPLAY: compact(BASE[REPLAY])})
    assert found == [f"{REPLAY}: seed-rewritten"], out


def test_a_promoted_value_must_fit_the_schema(capsys, repo):
    rc, found, out = judge(capsys, repo, promoted(promoted_to=7))
    assert found == [f"{REPLAY}:17: record-invalid"], out


def test_without_promote_an_immutable_case_never_changes(capsys, repo):
    stage(
        repo, {".oracle-guard.yaml": CONTRACT.replace("    promote: [expected, promoted_to]\n", "")}
    )
    commit(repo, message="no promotions")
    rc, found, out = judge(capsys, repo, promoted(expected=1))
    assert found == [f"{REPLAY}: seed-rewritten"], out


# -- the contract ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "entry,why",
    [
        ('{paths: ["seeds.lock"], format: json-object, records: corpus-line}', "holds no records"),
        ('{paths: ["a.jsonl"], format: jsonl, promote: [x]}', "only an immutable set"),
        ('{paths: ["a.jsonl"], format: jsonl, records: a.json, lock: s.lock}', "id_field"),
        ('{paths: ["a.jsonl"], format: jsonl, records: nope}', "invalid contract"),
        ('{paths: ["a.jsonl"], format: jsonl, digest: {field: h, of: p, form: hex}}', "invalid"),
        ('{paths: ["a.jsonl"], format: jsonl, digest: {field: "a-b", of: p}}', "invalid"),
    ],
)
def test_a_record_rule_that_does_not_fit_is_a_contract_error(capsys, tmp_path, entry, why):
    path = init_repo(tmp_path / "r")
    commit(path, {".oracle-guard.yaml": f"version: 1\nseeds:\n  - {entry}\n", "a.jsonl": "1\n"})
    rc, out, err = run_guard(capsys, path, "check")
    assert (rc, out) == (2, ""), out + err
    assert why in err and err.count("\n") == 1, err


def test_the_record_files_are_protected(capsys, repo):
    write(repo, {"schemas/case.json": {"type": "object"}})
    stage(repo)
    rc, out, err = run_guard(capsys, repo, "check", "--only", "write-set")
    assert rc == 1 and "schemas/case.json: write-denied" in out, out


# -- the digest form, and the id scan ---------------------------------------------------
def test_the_digest_form_is_compact_sorted_utf8():
    assert records.canonical({"b": 1.0, "a": ["é", -0.0, 10**20, 1e16]}) == (
        '{"a":["é",-0.0,100000000000000000000,1e+16],"b":1.0}'.encode()
    )


def test_the_empty_string_payload_hashes_its_json_text():
    import hashlib

    assert digest_of("") == hashlib.sha256(b'""').hexdigest()


TEXT = st.text(st.characters(blacklist_categories=("Cs",)))


def json_containers(inner: st.SearchStrategy) -> st.SearchStrategy:
    # a named function: hypothesis misreads a parenthesised lambda as not recursing
    return st.lists(inner, max_size=4) | st.dictionaries(
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=5), inner, max_size=4
    )


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    json_containers,
    max_leaves=12,
)


def _rules():
    return records.Rules({"records": "corpus-line"}, None)


@settings(max_examples=300, deadline=None)
@given(payload=JSON, indent=st.sampled_from([None, 0, 2]), ascii_only=st.booleans())
def test_a_record_built_in_the_digest_form_passes_however_it_is_written(
    payload, indent, ascii_only
):
    record = corpus_line("p-1", payload)
    text = json.dumps(record, indent=indent, ensure_ascii=ascii_only, sort_keys=not ascii_only)
    value = strict_json.load_json(
        text.encode("utf-8")
    ).value  # the strict loader, as the check reads
    assert _rules().problems(value) == []


@settings(max_examples=300, deadline=None)
@given(payload=JSON, other=JSON)
def test_any_change_to_the_payload_fails_the_digest(payload, other):
    if strict_key(payload) == strict_key(other):
        other = [other]  # a different value, whatever it was
    record = corpus_line("p-1", payload)
    record["payload"] = other
    value = strict_json.load_json(json.dumps(record).encode("utf-8")).value
    assert [code for code, _, _ in _rules().problems(value)] == ["record-digest-mismatch"]


@settings(max_examples=200, deadline=None)
@given(
    ids=st.lists(st.text(min_size=1, max_size=6) | st.integers(), min_size=1, max_size=6),
    nested=st.text(min_size=1, max_size=6),
    escape=st.booleans(),
)
def test_the_id_scan_finds_exactly_the_top_level_ids(ids, nested, escape):
    lines = []
    for ident in ids:
        line = json.dumps({"payload": {"id": nested}, "id": ident}, ensure_ascii=escape)
        if escape:
            line = line.replace('"id":', '"\\u0069\\u0064":')
        lines.append(line)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    wanted = {strict_key(i): True for i in ids + [nested]}
    found = jsonl_ids(data, "id", wanted)
    assert set(found) == {strict_key(i) for i in ids}
    for ident in ids:
        assert found[strict_key(ident)] == 1 + [strict_key(i) for i in ids].index(strict_key(ident))


def test_ids_that_are_no_string_or_number_are_found_by_parsing_every_line(capsys, tmp_path):
    path = init_repo(tmp_path / "r")
    contract = 'version: 1\nseeds:\n  - {paths: ["c.jsonl"], format: jsonl, id_field: key}\n'
    commit(path, {".oracle-guard.yaml": contract, "c.jsonl": '{"key": true}\n{"key": [1]}\n'})
    stage(path, {"c.jsonl": '{"key": true}\n{"key": [1]}\n{"key": false}\n'})
    rc, out, err = run_guard(capsys, path, "check", "--only", "seed-append-only")
    assert rc == 0, out
    stage(path, {"c.jsonl": '{"key": true}\n{"key": [1]}\n{"key": [1]}\n'})
    rc, out, err = run_guard(capsys, path, "check", "--only", "seed-append-only")
    assert rc == 1 and "c.jsonl:3: record-id-reused" in out and "c.jsonl line 2" in out, out


def test_a_digest_without_a_records_schema_still_needs_its_fields(capsys, tmp_path):
    path = init_repo(tmp_path / "r")
    contract = (
        'version: 1\nseeds:\n  - {paths: ["c.jsonl"], format: jsonl, digest: {field: h, of: p}}\n'
    )
    commit(path, {".oracle-guard.yaml": contract, "c.jsonl": "1\n"})
    good = compact({"p": [1, "é"], "h": digest_of([1, "é"])})
    stage(path, {"c.jsonl": "1\n" + good})
    assert run_guard(capsys, path, "check", "--only", "seed-append-only")[0] == 0
    stage(path, {"c.jsonl": "1\n" + good + '{"p": 1}\n'})
    rc, out, err = run_guard(capsys, path, "check", "--only", "seed-append-only")
    assert rc == 1 and "c.jsonl:3: record-invalid: line 3: has no 'h' field" in out, out


@pytest.mark.parametrize(
    "base_line,new_id,held",
    [
        ('{"id": "caf\\u00e9"}', "café", True),  # the base escapes what the new id spells
        ('{"id": 1.0}', 1.0, True),  # a float: decoded, 1.0 is 1.0
        ('{"id": 1.0}', 1, False),  # ... and not the integer 1
        ('{"id": 12}', 1, False),  # a plain integer is a whole token
        ('{"x": {"id": "a"}, "id": "b"}', "a", False),  # nested, not the record's
    ],
)
def test_the_id_scan_on_each_path(base_line, new_id, held):
    found = jsonl_ids(("{}\n" + base_line + "\n").encode(), "id", {strict_key(new_id): True})
    assert found == ({strict_key(new_id): 2} if held else {})
