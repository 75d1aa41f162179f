import json

import pytest

from oracle_guard.parsing import strict_json
from testing.git import commit, git, init_repo, run_guard, stage
from testing.oracle import NOW
from testing.trees import MemoryRepo, link

CONTRACT = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
  - {paths: ["oracle/corpus.jsonl"], format: jsonl}
  - {paths: ["seeds.lock"], format: json-object}
  - {paths: ["replays/*.json"], format: immutable}
"""

CORPUS = b'{"id": 1}\n{"id": 2}\n'
BASE_FILES = {
    ".oracle-guard.yaml": CONTRACT,
    "seeds/a.json": [1, 2],
    "oracle/corpus.jsonl": CORPUS,
    "seeds.lock": {"p1": 1, "p2": "x"},
    "replays/r1.json": {"replay": 1},
}
SUMMARY = "seed-append-only:"


@pytest.fixture
def repo():
    """HEAD holds the contract and one file per format; the index starts as HEAD."""
    memory_repo = MemoryRepo()
    memory_repo.commit(BASE_FILES)
    return memory_repo


@pytest.fixture
def git_repo(tmp_path):
    """That HEAD in a real repository, for the revisions git itself names."""
    path = init_repo(tmp_path / "r")
    commit(path, BASE_FILES, "base")
    return path


def check(repo, *args, capsys=None, env=None):
    """Run the hook on the index (or, in a real repository, as args say);
    (exit code, finding lines, summary)."""
    if capsys is None:
        rc, out, err = repo.check("seed-append-only", now=NOW)
    else:
        rc, out, err = run_guard(
            capsys, repo, "check", "--only", "seed-append-only", *args, env=env
        )
    assert err == "", err
    lines = out.splitlines()
    summary = [line for line in lines if line.startswith(SUMMARY)]
    assert len(summary) == 1, out
    found = [
        line for line in lines if not line.startswith(SUMMARY) and not line.startswith("hint:")
    ]
    return rc, found, summary[0]


def assert_passes(repo, *args, capsys=None):
    rc, found, summary = check(repo, *args, capsys=capsys)
    assert (rc, found, summary) == (0, [], "seed-append-only: passed")


def assert_fails(repo, *expected, args=(), capsys=None):
    rc, found, summary = check(repo, *args, capsys=capsys)
    assert rc == 1
    assert found == list(expected)
    errors = len(expected)
    assert summary == f"seed-append-only: failed ({errors} error{'s' if errors != 1 else ''})"


def test_unchanged_repository_passes_and_says_it_judged_no_change(repo):
    rc, found, summary = check(repo)
    assert (rc, found) == (0, [])
    assert summary == ("seed-append-only: passed (no change: the index has the same files as HEAD)")


# -- json-array ---------------------------------------------------------------


def test_json_array_append_passes(repo):
    repo.stage({"seeds/a.json": [1, 2, 3]})
    assert_passes(repo)


def test_json_array_reformatted_with_same_values_passes(repo):
    repo.commit(
        {"seeds/a.json": [0, False, 0.0, 1, True, "1", None, {"a": 1, "b": [1.5, {"c": 2}]}]}
    )
    # compact, other indentation, object keys in another order, plus one new seed
    repo.stage(
        {
            "seeds/a.json": b'[0,false,0.0,\n 1,   true,"1",null,\n'
            b'    {"b":[1.5,{"c":2}],"a":1},\n 7]'
        }
    )
    assert_passes(repo)


def test_json_array_removed_at_end(repo):
    repo.stage({"seeds/a.json": [1]})
    assert_fails(
        repo,
        "seeds/a.json: seed-removed: element [1] 2 is gone: the candidate keeps 1 "
        "of the base's 2 seeds",
    )


def test_json_array_removed_in_middle(repo):
    repo.commit({"seeds/a.json": [1, 2, 3]})
    repo.stage({"seeds/a.json": [1, 3]})
    assert_fails(
        repo,
        "seeds/a.json:3: seed-removed: element [1] 2 is gone: the candidate has 3 "
        "there and keeps 2 of the base's 3 seeds",
    )


def test_json_array_reordered(repo):
    repo.stage({"seeds/a.json": [2, 1]})
    assert_fails(
        repo,
        "seeds/a.json:2: seed-reordered: element [0] moved: the base has 1 there, "
        "the candidate has 2",
    )


def test_json_array_insertion_before_an_old_seed_is_a_reorder(repo):
    repo.stage({"seeds/a.json": [1, 3, 2]})
    assert_fails(
        repo,
        "seeds/a.json:3: seed-reordered: element [1] moved: the base has 2 there, "
        "the candidate has 3",
    )


def test_json_array_duplicate_seed_rewritten_is_not_a_reorder(repo):
    repo.commit({"seeds/a.json": [1, 1]})
    repo.stage({"seeds/a.json": [1, 2]})
    assert_fails(repo, "seeds/a.json:3: seed-rewritten: element [1] changed: 1 -> 2")


@pytest.mark.parametrize(
    "old, new",
    [
        (0, 0.0),
        (0, False),
        (0.0, False),
        (1, True),
        ("1", 1),
        (None, 0),
        (-0.0, 0.0),
        ([1], [1.0]),
        ({"a": 1}, {"a": True}),
        ({"a": 1}, {"a": 1, "b": 1}),
    ],
)
def test_json_array_equality_is_type_strict(repo, old, new):
    repo.commit({"seeds/a.json": [old, "tail"]})
    repo.stage({"seeds/a.json": [new, "tail"]})
    old_text = json.dumps(old, sort_keys=True)
    new_text = json.dumps(new, sort_keys=True)
    assert_fails(
        repo, f"seeds/a.json:2: seed-rewritten: element [0] changed: {old_text} -> {new_text}"
    )


def test_json_array_line_names_the_candidate_element(repo):
    repo.commit({"seeds/a.json": [{"n": 1}, {"n": 2}]})
    repo.stage({"seeds/a.json": b'[\n  {"n": 1},\n\n\n  {"n": 20}\n]\n'})
    assert_fails(repo, 'seeds/a.json:5: seed-rewritten: element [1] changed: {"n": 2} -> {"n": 20}')


def test_long_elements_show_where_they_differ(repo):
    prefix = "x" * 100
    repo.commit({"seeds/a.json": [prefix + "old"]})
    repo.stage({"seeds/a.json": [prefix + "new"]})
    rc, found, _ = check(repo)
    assert rc == 1
    assert len(found) == 1
    assert found[0].startswith("seeds/a.json:2: seed-rewritten: element [0] changed: …")
    assert 'xold" -> …' in found[0] and found[0].endswith('xnew"')


# -- jsonl --------------------------------------------------------------------


@pytest.mark.parametrize(
    "candidate",
    [
        CORPUS + b'{"id": 3}\n[1, 2]\n"text"\n',
        CORPUS + b'{"id": 3}',
    ],
    ids=["near-miss-append", "near-miss-append-without-final-newline"],
)
def test_jsonl_append_passes(repo, candidate):
    repo.stage({"oracle/corpus.jsonl": candidate})
    assert_passes(repo)


@pytest.mark.parametrize(
    "candidate, expected",
    [
        (
            b'{"id":1}\n{"id": 2}\n',
            """oracle/corpus.jsonl:1: seed-rewritten: line 1 changed: '{"id": 1}' -> """
            """'{"id":1}'""",
        ),
        (
            b'{"id": 1}\n{"id": 2} \n',
            """oracle/corpus.jsonl:2: seed-rewritten: line 2 changed: '{"id": 2}' -> """
            """'{"id": 2} '""",
        ),
        (
            b'{"id": 1}\r\n{"id": 2}\n',
            """oracle/corpus.jsonl:1: seed-rewritten: line 1 changed: '{"id": 1}' -> """
            """'{"id": 1}\\r'""",
        ),
        (
            b'{"id": 2}\n{"id": 1}\n',
            """oracle/corpus.jsonl:1: seed-reordered: line 1 moved: the base has """
            """'{"id": 1}' there, the candidate has '{"id": 2}'""",
        ),
        (
            b'{"id": 1}\n',
            """oracle/corpus.jsonl: seed-removed: line 2 '{"id": 2}' is gone: the """
            """candidate keeps 1 of the base's 2 seeds""",
        ),
    ],
    ids=[
        "fires-rewritten-whitespace-inside-an-existing-line",
        "fires-rewritten-trailing-space-on-an-existing-line",
        "fires-rewritten-crlf-on-an-existing-line",
        "fires-reordered",
        "fires-removed",
    ],
)
def test_jsonl_change_to_an_existing_line_fails(repo, candidate, expected):
    repo.stage({"oracle/corpus.jsonl": candidate})
    assert_fails(repo, expected)


def test_jsonl_text_glued_onto_a_last_line_without_newline_fails(repo):
    repo.commit({"oracle/corpus.jsonl": b'{"id": 1}\n{"id": 2}'})
    repo.stage({"oracle/corpus.jsonl": b'{"id": 1}\n{"id": 2}{"id": 3}\n'})
    assert_fails(
        repo,
        """oracle/corpus.jsonl:2: seed-rewritten: line 2 changed: '{"id": 2}' -> """
        """'{"id": 2}{"id": 3}'""",
    )


def test_jsonl_new_line_after_a_last_line_without_newline_passes(repo):
    repo.commit({"oracle/corpus.jsonl": b'{"id": 1}\n{"id": 2}'})
    repo.stage({"oracle/corpus.jsonl": b'{"id": 1}\n{"id": 2}\n{"id": 3}\n'})
    assert_passes(repo)


@pytest.mark.parametrize(
    "line, reason",
    [
        (b"not json", "unexpected character 'n'"),
        (b"", "the line is empty"),
        (b"   ", "the line is empty"),
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b'{"a": NaN}', "NaN is not valid JSON"),
        (b"[1,", "unexpected end of file"),
        (b"1 2", "unexpected data after the JSON value"),
        (b"\xff", "invalid UTF-8 (byte 0xff)"),
    ],
)
def test_jsonl_bad_new_line(repo, line, reason):
    repo.stage({"oracle/corpus.jsonl": CORPUS + line + b'\n{"id": 4}\n'})
    assert_fails(
        repo, f"oracle/corpus.jsonl:3: seed-invalid: line 3 is not one JSON value: {reason}"
    )


def test_jsonl_new_file_is_checked_line_by_line():
    repo = MemoryRepo()
    repo.commit({k: v for k, v in BASE_FILES.items() if k != "oracle/corpus.jsonl"})
    repo.stage({"oracle/corpus.jsonl": b'{"id": 1}\n{"id": 1, "id": 2}\n'})
    assert_fails(
        repo,
        "oracle/corpus.jsonl:2: seed-invalid: line 2 is not one JSON value: duplicate key 'id'",
    )
    repo.stage({"oracle/corpus.jsonl": b'{"id": 1}\n{"id": 2}\n'})
    assert_passes(repo)


# -- json-object --------------------------------------------------------------


def test_json_object_new_key_and_other_key_order_pass(repo):
    repo.stage({"seeds.lock": b'{"p3": [1], "p2": "x",\n"p1": 1}'})
    assert_passes(repo)


def test_json_object_key_removed(repo):
    repo.stage({"seeds.lock": {"p2": "x", "p3": 3}})
    assert_fails(repo, 'seeds.lock: seed-removed: key "p1" (1) is gone')


@pytest.mark.parametrize("new", [1.0, True, "1", None, [1]])
def test_json_object_value_changed_type(repo, new):
    repo.stage({"seeds.lock": {"p1": new, "p2": "x"}})
    assert_fails(repo, f'seeds.lock:2: seed-rewritten: key "p1" changed: 1 -> {json.dumps(new)}')


def test_json_object_every_broken_key_is_reported(repo):
    repo.stage({"seeds.lock": {"p2": "y"}})
    assert_fails(
        repo,
        'seeds.lock: seed-removed: key "p1" (1) is gone',
        'seeds.lock:2: seed-rewritten: key "p2" changed: "x" -> "y"',
    )


# -- immutable ----------------------------------------------------------------


def test_immutable_new_file_passes(repo):
    repo.stage({"replays/r2.json": b"\x00 any bytes, not even JSON \xff"})
    assert_passes(repo)


def test_immutable_change_fails(repo):
    old = repo.head().entry("replays/r1.json").oid
    repo.stage({"replays/r1.json": {"replay": 1, "extra": True}})
    new = repo.staged().entry("replays/r1.json").oid
    assert_fails(
        repo,
        f"replays/r1.json: seed-rewritten: immutable file changed (blob {old[:12]} "
        f"-> {new[:12]}); add a new file instead",
    )


def test_immutable_reformatting_fails(repo):
    repo.stage({"replays/r1.json": b'{"replay": 1}\n'})
    rc, found, _ = check(repo)
    assert rc == 1
    assert [line.split(": ")[:2] for line in found] == [["replays/r1.json", "seed-rewritten"]]


@pytest.mark.parametrize(
    "path",
    ["replays/r1.json", "seeds/a.json"],
    ids=["fires-immutable-mode-change", "fires-mode-change-of-a-json-array"],
)
def test_mode_change_fails(repo, path):
    repo.make_executable(path)
    assert_fails(repo, f"{path}: seed-rewritten: mode changed from 100644 to 100755")


def test_new_symlink_seed_is_invalid(repo):
    repo.stage({"seeds/link.json": link("a.json")})
    assert_fails(repo, "seeds/link.json: seed-invalid: is not a regular file (mode 120000)")


# -- seed-file-deleted --------------------------------------------------------


def test_deleted_seed_file(repo):
    repo.commit({"seeds/b.json": [3]})
    repo.remove("seeds/b.json")
    assert_fails(repo, "seeds/b.json: seed-file-deleted: present in HEAD, missing from the index")


def test_deleting_the_only_file_of_an_entry_also_leaves_it_incomplete(repo):
    repo.remove("seeds.lock")
    assert_fails(
        repo,
        '.oracle-guard.yaml: oracle-incomplete: seeds entry ["seeds.lock"] matches no file in the index',
        "seeds.lock: seed-file-deleted: present in HEAD, missing from the index",
    )


def test_renamed_seed_file_is_a_deletion(repo):
    repo.move("seeds/a.json", "seeds/b.json")
    assert_fails(
        repo,
        "seeds/a.json: seed-file-deleted: present in HEAD, missing from the index "
        "(renamed to seeds/b.json? a rename counts as a deletion)",
    )


def test_copied_seed_file_passes(repo):
    repo.stage({"seeds/b.json": [1, 2]})
    assert_passes(repo)


# -- seed-invalid -------------------------------------------------------------


@pytest.mark.parametrize(
    "content, where, reason",
    [
        (b"[1, 2,", ":1", "unexpected end of file"),
        (b"[1, 2]\n]", ":2", "unexpected data after the JSON value"),
        (b'{"a": [1, 2]}', ":1", "must be an array at the top level, found an object"),
        (b'"1, 2"', ":1", "must be an array at the top level, found a string"),
        (b'[1, 2,\n {"k": 1, "k": 1}]', ":2", "duplicate key 'k'"),
        (b"[1, 2, NaN]", ":1", "NaN is not valid JSON"),
        (b"[1, 2, Infinity]", ":1", "Infinity is not valid JSON"),
        (b"\xef\xbb\xbf[1, 2]", ":1", "starts with a UTF-8 byte-order mark"),
    ],
)
def test_json_array_invalid(repo, content, where, reason):
    repo.stage({"seeds/a.json": content})
    assert_fails(repo, f"seeds/a.json{where}: seed-invalid: {reason}")


def test_json_object_wrong_type(repo):
    repo.stage({"seeds.lock": [["p1", 1], ["p2", "x"]]})
    assert_fails(
        repo, "seeds.lock:1: seed-invalid: must be an object at the top level, found an array"
    )


def test_new_json_array_file_must_parse(repo):
    repo.stage({"seeds/new.json": b"[1, 1.0, NaN]"})
    assert_fails(repo, "seeds/new.json:1: seed-invalid: NaN is not valid JSON")
    repo.stage({"seeds/new.json": b"[1, 1.0, 1e400]"})
    assert_fails(repo, "seeds/new.json:1: seed-invalid: number 1e400 is out of range")
    repo.stage({"seeds/new.json": b"[1, 1.0, null]"})
    assert_passes(repo)


# -- oracle-incomplete --------------------------------------------------------


def test_entry_matching_no_file():
    repo = MemoryRepo()
    repo.commit({k: v for k, v in BASE_FILES.items() if not k.startswith("replays/")})
    assert_fails(
        repo,
        '.oracle-guard.yaml: oracle-incomplete: seeds entry ["replays/*.json"] matches no file in the index',
    )
    repo.stage({"replays/first.json": b"{}"})
    assert_passes(repo)


@pytest.mark.parametrize(
    "path, content, expected",
    [
        (
            "seeds/a.json",
            b"[]",
            "seeds/a.json: oracle-incomplete: seed file holds no seeds (the array is empty)",
        ),
        (
            "oracle/corpus.jsonl",
            b"",
            "oracle/corpus.jsonl: oracle-incomplete: seed file holds no seeds",
        ),
    ],
    ids=["fires-empty-json-array-file", "fires-emptied-jsonl-file"],
)
def test_a_seed_file_without_seeds_is_incomplete(repo, path, content, expected):
    repo.stage({path: content})
    assert_fails(repo, expected)


def test_single_falsy_seed_is_not_empty(repo):  # near miss of fires-empty-json-array-file
    repo.stage({"seeds/new.json": [0], "seeds/null.json": [None]})
    assert_passes(repo)


def test_jsonl_with_one_falsy_seed_is_not_empty(repo):  # near miss of fires-emptied-jsonl-file
    repo.commit({"oracle/corpus.jsonl": b"null\n"})
    repo.stage({"oracle/corpus.jsonl": b"null\n0\n"})
    assert_passes(repo)


# -- which rules apply --------------------------------------------------------


def test_change_introducing_the_contract_passes_with_a_notice():
    repo = MemoryRepo()
    repo.commit({"seeds/a.json": [1, 2], "README.md": "x\n"})
    # no earlier rules: even a reorder in the same change cannot be judged
    repo.stage(dict(BASE_FILES, **{"seeds/a.json": [2, 1]}))
    rc, found, summary = check(repo)
    assert (rc, found) == (0, [])
    assert summary == (
        "seed-append-only: passed (nothing to check: the base (HEAD) has no "
        "contract; this change introduces it)"
    )
    repo.commit()
    repo.stage({"seeds/a.json": [1, 2]})
    assert_fails(
        repo,
        "seeds/a.json:2: seed-reordered: element [0] moved: the base has 2 there, "
        "the candidate has 1",
    )


def test_first_commit_passes_with_a_notice():
    repo = MemoryRepo()
    repo.stage(BASE_FILES)
    rc, found, summary = check(repo)
    assert (rc, found) == (0, [])
    assert summary.startswith("seed-append-only: passed (nothing to check: ")
    assert "no commits yet" in summary


def test_contract_comes_from_the_base(repo):
    # the candidate drops its seeds rules and reorders seeds in the same change
    repo.stage({".oracle-guard.yaml": "version: 1\n", "seeds/a.json": [2, 1]})
    assert_fails(
        repo,
        "seeds/a.json:2: seed-reordered: element [0] moved: the base has 1 there, "
        "the candidate has 2",
    )


def test_deleting_the_contract_does_not_lift_it(repo):
    repo.remove(".oracle-guard.yaml")
    repo.stage({"seeds/a.json": [1]})
    assert_fails(
        repo,
        "seeds/a.json: seed-removed: element [1] 2 is gone: the candidate keeps 1 "
        "of the base's 2 seeds",
    )


def test_base_and_head_commits(git_repo, capsys):
    base = git(git_repo, "rev-parse", "HEAD").strip()
    commit(git_repo, {"seeds/a.json": [1, 2, 3]}, "append")
    commit(git_repo, {"seeds/a.json": [3, 2, 1]}, "reorder")
    # the index holds the good state; --head judges the commit, not the index
    stage(git_repo, {"seeds/a.json": [1, 2, 3, 4]})
    assert_fails(
        git_repo,
        "seeds/a.json:2: seed-reordered: element [0] moved: the base has 1 there, "
        "the candidate has 3",
        args=("--base", base, "--head", "HEAD"),
        capsys=capsys,
    )
    assert_passes(git_repo, "--base", base, "--head", "HEAD~1", capsys=capsys)
    # against the appended commit the reorder is judged from there
    assert_fails(
        git_repo,
        "seeds/a.json:2: seed-reordered: element [0] moved: the base has 1 there, "
        "the candidate has 3",
        args=("--base", "HEAD~1", "--head", "HEAD"),
        capsys=capsys,
    )


def test_pre_commit_refs_choose_base_and_candidate(git_repo, capsys):
    base = git(git_repo, "rev-parse", "HEAD").strip()
    head = commit(git_repo, {"oracle/corpus.jsonl": b'{"id": 2}\n{"id": 1}\n'})
    rc, out, _ = run_guard(
        capsys,
        git_repo,
        "check",
        "--only",
        "seed-append-only",
        env={"PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": head},
    )
    assert rc == 1
    assert "oracle/corpus.jsonl:1: seed-reordered: line 1 moved:" in out


# -- cost ---------------------------------------------------------------------


def test_positions_are_parsed_only_for_a_finding(repo, monkeypatch):
    calls = []
    real = strict_json.load_json

    def counting(data, *, positions=False):
        calls.append(positions)
        return real(data, positions=positions)

    monkeypatch.setattr(strict_json, "load_json", counting)
    repo.stage({"seeds/a.json": [1, 2, 3], "seeds.lock": {"p1": 1, "p2": "x", "p3": 0}})
    assert_passes(repo)
    assert calls and not any(calls)
    repo.stage({"seeds/a.json": [1, 3]})
    calls.clear()
    rc, found, _ = check(repo)
    assert rc == 1 and found[0].startswith("seeds/a.json:3: seed-rewritten:")
    assert calls.count(True) == 1


def test_a_base_that_does_not_parse_cannot_be_replaced():
    repo = MemoryRepo()
    repo.commit(
        {
            ".oracle-guard.yaml": "version: 1\nseeds:\n"
            '  - {paths: ["seeds/*.json"], format: json-array}\n',
            "seeds/a.json": "[1, 2,\n",
        }
    )
    repo.stage({"seeds/a.json": "[7]\n"})
    rc, out, _ = repo.check("seed-append-only", now=NOW)
    assert rc == 1
    assert "seeds/a.json: seed-rewritten: changed, but the base copy does not parse" in out


def test_a_broken_seed_file_is_invalid_even_when_unchanged(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nseeds:\n"
            '  - {paths: ["seeds/*.json"], format: json-array}\n',
            "seeds/a.json": [1],
            "seeds/b.json": "[1, 2,\n",
        },
    )
    commit(repo, {"src/a.py": "x\n"})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "seed-append-only", "--head", "HEAD")
    assert rc == 1
    assert "seeds/b.json" in out and "seed-invalid" in out
