"""`oracle-guard seeds append FILE VALUE...`: canonical, in the file's own layout,
passing seed-append-only against HEAD; duplicates, bad JSON, other formats and
the size cap are refused with exit 2 and the file left byte-identical."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from testing import oracle
from testing.git import commit, git, run_guard, write
from testing.oracle import NOW
from testing.samples import EXAMPLES, example_repo

FOUR = oracle.all_but_write_set()
# the oracle-dir example without its record rules: these tests append any JSON value
RECORD_RULES = """\
    records: corpus-line            # each new line: id, test, payload, payload_sha256, expect
    digest: {field: payload_sha256, of: payload, form: json-sorted-compact-utf8}
    replay: {}                      # score runs each line's test with CORPUS_ID and CORPUS_PAYLOAD
"""
PLAIN = {
    ".oracle-guard.yaml": (EXAMPLES / "oracle-dir" / ".oracle-guard.yaml")
    .read_text()
    .replace(RECORD_RULES, "")
}
assert "records:" not in PLAIN[".oracle-guard.yaml"]
HEADER = "seeds/header_name.json"
CORPUS = "oracle/corpus.jsonl"


def append(capsys, repo, *args):
    from oracle_guard.cli import main

    capsys.readouterr()
    rc = main(["seeds", "append", "-C", str(repo), *args], env={})
    out, err = capsys.readouterr()
    return rc, out, err


def staged_check(capsys, repo, only=FOUR):
    rc, out, err = run_guard(capsys, repo, "check", "--only", only, "--now", NOW)
    return rc, out + err


def stage_as_printed(repo, out):
    commands = re.findall(r"stage it with: (git add .+)$", out, re.M)
    assert commands, out
    for command in commands:
        git(repo, *shlex.split(command)[1:])


def assert_every_hook_passes(capsys, repo):
    rc, out = staged_check(capsys, repo)
    assert rc == 0, out
    commit(repo, message="owner appends seeds")  # with SKIP=write-set, by an owner
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out + err
    assert "failed" not in out


def assert_refused(capsys, repo, args, *expected):
    path = repo / args[0]
    before = path.read_bytes() if path.exists() else None
    rc, out, err = append(capsys, repo, *args)
    assert rc == 2, out + err
    assert out == ""
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1, err
    for text in expected:
        assert text in err, (text, err)
    assert (path.read_bytes() if path.exists() else None) == before
    return err


# -- appending ---------------------------------------------------------------------------
def test_json_array_gets_elements_in_the_layout_of_its_last_one(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    shipped = (repo / HEADER).read_text()
    rc, out, err = append(capsys, repo, HEADER, '{"raw":"X:  y","expect_name":"X"}', '"ü"')
    assert (rc, err) == (0, "")
    assert out == f"appended 2 seeds to {HEADER}; stage it with: git add {HEADER}\n"
    assert (repo / HEADER).read_text() == shipped.replace(
        '"expect_reject": true}\n]',
        '"expect_reject": true},\n  {"raw": "X:  y", "expect_name": "X"},\n  "ü"\n]',
    )
    stage_as_printed(repo, out)
    assert_every_hook_passes(capsys, repo)


def test_json_array_written_by_json_dumps_stays_so(tmp_path, capsys):
    seeds = [{"a": 1, "b": [1, 2]}]
    repo = example_repo(tmp_path, "harness", {HEADER: seeds})
    rc, out, _ = append(capsys, repo, HEADER, '{"b": [], "a": 2}')
    assert rc == 0, out
    assert (repo / HEADER).read_text() == json.dumps(seeds + [{"b": [], "a": 2}], indent=2) + "\n"


def test_empty_and_one_line_arrays(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness", {HEADER: "[1, 2]"})
    assert append(capsys, repo, HEADER, "3", "[4]")[0] == 0
    assert (repo / HEADER).read_text() == "[1, 2, 3, [4]]"
    commit(repo, {HEADER: "[]\n"})
    assert append(capsys, repo, HEADER, '"first"')[0] == 0
    assert (repo / HEADER).read_text() == '["first"]\n'


def test_jsonl_gets_compact_lines_in_the_key_order_given(tmp_path, capsys):
    repo = example_repo(tmp_path, "oracle-dir", PLAIN)
    shipped = (repo / CORPUS).read_text()
    rc, out, err = append(
        capsys, repo, CORPUS, '{"id": "inv-015", "payload": {"b": 1, "a": "é"}, "expect": "pass"}'
    )
    assert (rc, err.strip()) == (0, "")
    assert (
        repo / CORPUS
    ).read_text() == shipped + '{"id":"inv-015","payload":{"b":1,"a":"é"},"expect":"pass"}\n'
    # the corpus is also a locked fixture: the command says what else to run
    assert out == (
        f"appended 1 seed to {CORPUS}; stage it with: git add {CORPUS}\n"
        f"note: {CORPUS} is also a fixture locked by oracle/corpus.sha256: after "
        f"'git add {CORPUS}', run 'oracle-guard lock' and stage oracle/corpus.sha256\n"
    )
    stage_as_printed(repo, out)
    rc, check_out = staged_check(capsys, repo)
    assert rc == 1 and "fixture-mismatch" in check_out
    assert run_guard(capsys, repo, "lock")[0] == 0
    git(repo, "add", "oracle/corpus.sha256")
    assert_every_hook_passes(capsys, repo)


@pytest.mark.parametrize(
    "lines,value,new",
    [
        ('{"a":1,"b":2}\n{"c":3,"d":4}\n', '{"z": 9, "a": 0}', '{"a":0,"z":9}\n'),  # sorted
        ('{"b":1,"a":2}\n', '{"z": 9, "a": 0}', '{"z":9,"a":0}\n'),  # not sorted
        ('{"a": 1, "b": 2}\n', '{"z": 9, "a": 0}', '{"a": 0, "z": 9}\n'),  # spaced
        ('"\\u00e9"\n', '{"a": 0, "z": "é"}', '{"a":0,"z":"\\u00e9"}\n'),  # escapes
    ],
)
def test_jsonl_copies_the_style_of_its_lines(tmp_path, capsys, lines, value, new):
    repo = example_repo(tmp_path, "oracle-dir", {**PLAIN, CORPUS: lines})
    assert append(capsys, repo, CORPUS, value)[0] == 0
    assert (repo / CORPUS).read_text() == lines + new
    git(repo, "add", CORPUS)
    assert staged_check(capsys, repo, "seed-append-only")[0] == 0


def test_jsonl_without_a_final_newline_gets_one_first(tmp_path, capsys):
    repo = example_repo(tmp_path, "oracle-dir", {**PLAIN, CORPUS: '{"a":1}'})
    assert append(capsys, repo, CORPUS, "2")[0] == 0
    assert (repo / CORPUS).read_text() == '{"a":1}\n2\n'
    git(repo, "add", CORPUS)
    assert staged_check(capsys, repo, "seed-append-only")[0] == 0


def test_a_negative_number_after_a_double_dash(tmp_path, capsys):
    repo = example_repo(tmp_path, "oracle-dir", PLAIN)
    assert append(capsys, repo, CORPUS, "--", "-1.5e3")[0] == 0
    assert (repo / CORPUS).read_text().endswith("\n-1500.0\n")


# -- refusals -------------------------------------------------------------------------------
def test_a_duplicate_seed_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    assert_refused(
        capsys,
        repo,
        [HEADER, '{"expect_reject": true, "raw": ": empty-name"}'],
        "duplicate seed",
        f"already in {HEADER} (element [3])",
    )
    assert_refused(capsys, repo, [HEADER, '"x"', '"x"'], "duplicate seed", "(VALUE 1)")
    oracle_dir = example_repo(tmp_path, "oracle-dir")
    line = (oracle_dir / CORPUS).read_text().splitlines()[0]
    assert_refused(capsys, oracle_dir, [CORPUS, line], "duplicate seed", "(line 1)")


def test_type_strict_near_duplicates_are_new_seeds(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness", {HEADER: "[1, false]\n"})
    rc, out, _ = append(capsys, repo, HEADER, "1.0", "0", "true")
    assert rc == 0, out
    assert json.loads((repo / HEADER).read_text()) == [1, False, 1.0, 0, True]


@pytest.mark.parametrize(
    "value,message",
    [
        ("NaN", "NaN is not valid JSON"),
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ("[1,]", "is not strict JSON"),
        ("1e999", "out of range"),
    ],
)
def test_a_value_that_is_not_strict_json_is_refused(tmp_path, capsys, value, message):
    repo = example_repo(tmp_path, "harness")
    assert_refused(capsys, repo, [HEADER, value], f"VALUE {value!r} is not strict JSON", message)


def test_a_file_that_is_no_seed_file_or_of_another_format_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "replay-queue")
    assert_refused(
        capsys,
        repo,
        ["seeds.lock", "1"],
        "seeds.lock is a json-object seed file",
        "json-array and jsonl",
    )
    assert_refused(
        capsys,
        repo,
        ["replays/2026-09-23T14-02Z_parse_header.json", "1"],
        "is a immutable seed file",
    )
    assert_refused(
        capsys,
        repo,
        ["src/retry.py", "1"],
        "src/retry.py is not a seed file of the contract",
        "replays/*.json, /seeds.lock",
    )
    harness = example_repo(tmp_path, "harness")
    assert_refused(
        capsys, harness, ["seeds/new_property.json", "1"], "seeds/new_property.json does not exist"
    )


def test_a_file_that_does_not_parse_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "oracle-dir")
    (repo / CORPUS).write_text('{"a":1}\n{"a":\n')
    assert_refused(
        capsys,
        repo,
        [CORPUS, "2"],
        f"{CORPUS}: line 2 is not one JSON value",
        "fix the file by hand first",
    )


def test_the_seed_size_cap_is_refused(tmp_path, capsys):
    contract = (
        EXAMPLES / "harness/.oracle-guard.yaml"
    ).read_text() + "limits:\n  seed_bytes: 1024\n"
    repo = example_repo(tmp_path, "harness", {".oracle-guard.yaml": contract})
    size = (repo / HEADER).stat().st_size
    assert size < 1024
    err = assert_refused(
        capsys,
        repo,
        [HEADER, json.dumps("x" * (1024 - size))],
        f"cannot append to {HEADER}: it would be",
        "above limits.seed_bytes (1,024)",
    )
    assert re.search(r"it would be 1,0\d\d bytes", err)
    rc, out, _ = append(capsys, repo, HEADER, '"short"')  # a near miss fits
    assert rc == 0, out


def test_a_rewrite_already_in_the_working_tree_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    seeds = json.loads((repo / HEADER).read_text())
    write(repo, {HEADER: json.dumps(seeds[::-1], indent=2) + "\n"})  # reordered, unstaged
    assert_refused(capsys, repo, [HEADER, '"new"'], f"cannot append to {HEADER}:", "seed-reordered")


# -- layout: empty and compact arrays, line endings -----------------------------------
def test_an_empty_array_on_two_lines_gets_one_element_a_line(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness", {HEADER: "[\n]\n"})
    assert append(capsys, repo, HEADER, '{"raw": "X: y", "expect_name": "X"}', "2")[0] == 0
    assert (repo / HEADER).read_text() == (
        '[\n  {\n    "raw": "X: y",\n    "expect_name": "X"\n  },\n  2\n]\n'
    )
    git(repo, "add", HEADER)
    assert staged_check(capsys, repo, "seed-append-only")[0] == 0


def test_a_compact_array_keeps_compact_separators(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness", {HEADER: '["a"]\n'})
    assert append(capsys, repo, HEADER, '"b"', '"c"')[0] == 0
    assert (repo / HEADER).read_text() == '["a","b","c"]\n'
    commit(repo, {HEADER: '[{"k": 1}]\n'})  # near miss: ": " says the file is spaced
    assert append(capsys, repo, HEADER, '{"k": 2}')[0] == 0
    assert (repo / HEADER).read_text() == '[{"k": 1}, {"k": 2}]\n'


def test_a_crlf_array_gets_crlf_elements_and_an_lf_array_lf(tmp_path, capsys):
    lf = '[\n  {\n    "a": 1\n  }\n]\n'
    new = '[\n  {\n    "a": 1\n  },\n  {\n    "b": [\n      1,\n      2\n    ]\n  }\n]\n'
    repo = example_repo(tmp_path, "harness", {HEADER: lf.replace("\n", "\r\n")})
    assert append(capsys, repo, HEADER, '{"b": [1, 2]}')[0] == 0
    assert (repo / HEADER).read_bytes() == new.replace("\n", "\r\n").encode()
    git(repo, "add", HEADER)
    assert staged_check(capsys, repo, "seed-append-only")[0] == 0
    commit(repo, {HEADER: lf})
    assert append(capsys, repo, HEADER, '{"b": [1, 2]}')[0] == 0
    assert (repo / HEADER).read_bytes() == new.encode()


def test_crlf_jsonl_gets_crlf_lines(tmp_path, capsys):
    repo = example_repo(tmp_path, "oracle-dir", {**PLAIN, CORPUS: b'{"a":1}\r\n'})
    assert append(capsys, repo, CORPUS, "2")[0] == 0
    assert (repo / CORPUS).read_bytes() == b'{"a":1}\r\n2\r\n'


# -- where it writes, what it prints --------------------------------------------------------
def test_a_symlinked_seed_file_is_refused(tmp_path, capsys):
    import os

    repo = example_repo(tmp_path, "harness")
    os.rename(repo / HEADER, tmp_path / "outside.json")
    os.symlink(tmp_path / "outside.json", repo / HEADER)
    before = (tmp_path / "outside.json").read_bytes()
    assert_refused(capsys, repo, [HEADER, '"new"'], "is a symlink")
    assert (tmp_path / "outside.json").read_bytes() == before


def test_the_printed_git_add_works_from_a_subfolder(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    rc, out, err = append(capsys, repo / "seeds", HEADER, '{"raw": "Z: z", "expect_name": "Z"}')
    assert rc == 0, out + err
    assert (
        out == "appended 1 seed to seeds/header_name.json; stage it with: "
        "git add header_name.json\n"
    )
    stage_as_printed(repo / "seeds", out)
    assert git(repo, "diff", "--name-only") == ""


# -- --digest: the hash a record declares, computed for the human -------------------------
NEW_LINE = (
    '{"id": "inv-015", "test": "tests/test_invoice_total.py::test_totals_are_non_negative", '
    '"payload": {"tax_bps": 5, "items": [{"qty": 1, "price": "é"}]}, "expect": "fail"}'
)


def test_digest_fills_in_the_hash_and_every_hook_passes(tmp_path, capsys):
    from oracle_guard.checks.records import digest_of

    repo = example_repo(tmp_path, "oracle-dir")
    rc, out, err = append(capsys, repo, "--digest", CORPUS, NEW_LINE)
    assert (rc, err) == (0, ""), out + err
    last = json.loads((repo / CORPUS).read_text().splitlines()[-1])
    assert last["payload_sha256"] == digest_of(last["payload"])
    stage_as_printed(repo, out)
    assert run_guard(capsys, repo, "lock")[0] == 0
    git(repo, "add", "oracle/corpus.sha256")
    assert_every_hook_passes(capsys, repo)


def test_without_digest_a_record_with_no_hash_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "oracle-dir")
    assert_refused(capsys, repo, [CORPUS, NEW_LINE], "record-invalid", "'payload_sha256'")


def test_digest_refuses_a_hash_that_is_not_the_payloads(tmp_path, capsys):
    repo = example_repo(tmp_path, "oracle-dir")
    wrong = NEW_LINE[:-1] + ', "payload_sha256": "' + "0" * 64 + '"}'
    assert_refused(capsys, repo, [CORPUS, wrong, "--digest"], "declares payload_sha256")


def test_digest_needs_a_digest_rule(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    assert_refused(capsys, repo, [HEADER, '{"raw": "x"}', "--digest"], "has no digest rule")
