"""The replay loop of ``oracle-guard score``, with real pytest in real repositories:
each verdict fires on a real replay and passes its near miss, locally
(--base/--head) and in CI (the merge into --target); the records come from the
target; quarantined records are left out and time-boxed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from oracle_guard.checks.records import digest_of
from testing.git import commit, init_repo
from tests.e2e.score_test import CONTEXT, agent, judged, score

ROOT = Path(__file__).resolve().parents[2]

CONTRACT = """\
version: 1
seeds:
  - paths: ["oracle/corpus.jsonl"]
    format: jsonl
    records: corpus-line
    replay: {}
  - paths: ["replays/*.json"]
    format: immutable
    records: replay-case
    promote: [expected, promoted_to]
    replay: {}
freeze:
  - {paths: ["oracle/quarantine.json"], schema: quarantine-list}
score:
  tests: ["tests/**"]
  pin: {randomly_seed: 20260921}
  timeout: %(timeout)d
"""

SOURCE = """\
def add(a, b):
    return a + b
"""

TESTS = """\
import json
import os

from src.calc import add


def case(name, default):
    return json.loads(os.environ.get(name) or json.dumps(default))


def test_add_small():
    assert add(2, 2) == 4


def test_add_of_a_corpus_line():
    a, b, total = case("CORPUS_PAYLOAD", [1, 2, 3])
    assert add(a, b) == total


def test_add_of_a_replay():
    a, b, total = case("REPLAY_PAYLOAD", [1, 2, 3])
    assert add(a, b) == total
"""

# a program that is no pytest: exit 0 is a pass, 1 a fail
CHECK_TOOL = """\
import json
import os
import sys

sys.path.insert(0, os.getcwd())
from src.calc import add

a, b, total = json.loads(os.environ["REPLAY_PAYLOAD"])
sys.exit(0 if add(a, b) == total else 1)
"""

CORPUS_TEST = "tests/test_calc.py::test_add_of_a_corpus_line"
REPLAY_TEST = "tests/test_calc.py::test_add_of_a_replay"
FROZEN_TEST = "tests/test_calc.py::test_add_frozen"


def corpus_line(ident: str, payload, expect: str, test: str = CORPUS_TEST) -> str:
    line = {"id": ident, "test": test, "payload": payload, "expect": expect, "fixed_by": None}
    line["payload_sha256"] = digest_of(payload)
    return json.dumps(line, sort_keys=True) + "\n"


def replay_case(ident: str, payload, expected, command=None, seed: int = 7) -> dict:
    return {
        "id": ident,
        "command": command or ["pytest", REPLAY_TEST, "-q"],
        "seed": seed,
        "input_sha256": digest_of(payload),
        "payload": payload,
        "observed": None,
        "expected": expected,
        "promoted_to": None,
    }


CORPUS = (
    corpus_line("good-1", [2, 3, 5], "pass")
    + corpus_line("bad-1", [1, 1, 3], "fail")
    + corpus_line("frozen-1", [4, 4, 8], "pass", test=FROZEN_TEST)
)


def quarantine(expires: str = "2026-10-05") -> str:
    return json.dumps(
        [{"test": FROZEN_TEST, "owner": "alice", "expires": expires, "reason": "flaky"}]
    )


def target_files(timeout: int = 120) -> dict:
    return {
        ".oracle-guard.yaml": CONTRACT % {"timeout": timeout},
        "oracle/corpus.jsonl": CORPUS,
        "oracle/quarantine.json": quarantine(),
        "replays/pass.json": replay_case("case-pass", [5, 5, 10], "pass"),
        "replays/open.json": replay_case("case-open", [6, 6, 13], None),
        "replays/tool.json": replay_case(
            "case-tool", [7, 7, 14], "pass", command=["python", "tools/check.py"]
        ),
        "tools/check.py": CHECK_TOOL,
        "src/__init__.py": "",
        "src/calc.py": SOURCE,
        "tests/test_calc.py": TESTS
        + "\n\ndef test_add_frozen():\n    a, b, total = case('CORPUS_PAYLOAD', [0, 0, 0])\n"
        "    assert add(a, b) == total\n",
    }


@pytest.fixture(params=["local", "ci"])
def repo(request, tmp_path) -> Path:
    repo = init_repo(tmp_path / "repo")
    CONTEXT[repo] = request.param
    commit(repo, target_files(), "the target")
    return repo


def replay(capsys, repo: Path, *args: str):
    rc, out, err = score(capsys, repo, *judged(repo), *args)
    return rc, out, err


def record_of(capsys, repo: Path, *args: str):
    rc, out, err = replay(capsys, repo, "--format", "json", *args)
    assert err == "", err
    return rc, json.loads(out)


def codes(record) -> list:
    return sorted(f["code"] for f in record["findings"])


def patched(condition: str, result: str) -> str:
    """The candidate's add, wrong on the inputs ``condition`` names."""
    return f"def add(a, b):\n    if {condition}:\n        return {result}\n    return a + b\n"


# -- the honest change: every record holds, and the queues say so ------------------------------


def test_an_honest_change_replays_every_record_green(capsys, repo):
    agent(repo, {"src/calc.py": SOURCE + "\n\ndef sub(a, b):\n    return a - b\n"})
    rc, out, err = replay(capsys, repo)
    assert rc == 0, out + err
    lines = out.splitlines()
    assert lines[1] == "score: 5 captured, 1 generalized, 1 time-boxed"
    assert lines[2] == (f"score: time-boxed {FROZEN_TEST} (owner alice, expires 2026-10-05)")
    assert lines[-1] == "score: passed (3 passed; 1 frozen, not run; 5 records replayed)"


def test_the_record_carries_the_queues_and_each_replays_time(capsys, repo, tmp_path):
    agent(repo, {"src/calc.py": patched("(a, b) == (2, 3)", "6")})
    rc, _, _ = replay(capsys, repo, "--record", str(tmp_path / "record.json"))
    assert rc == 1
    record = json.loads((tmp_path / "record.json").read_text())
    schema = json.loads((ROOT / "schemas" / "score-record.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(record)
    assert record["queues"]["captured"] == ["bad-1", "case-open", "case-pass", "case-tool"]
    assert record["queues"]["generalized"] == []  # its corpus line regressed
    assert record["queues"]["time_boxed"] == [
        {
            "id": FROZEN_TEST,
            "owner": "alice",
            "expires": "2026-10-05",
            "path": "oracle/quarantine.json",
            "excludes": ["frozen-1"],
        }
    ]
    assert [r["id"] for r in record["replays"]] == [
        "good-1",
        "bad-1",
        "case-open",
        "case-pass",
        "case-tool",
    ]
    assert all(r["seconds"] > 0 for r in record["replays"])
    assert record["findings"][0]["line"] == 1


# -- example-regressed ----------------------------------------------------------------------


def test_code_that_breaks_a_known_good_line_is_example_regressed(capsys, repo):
    # the target's tests all pass: only the corpus line sees it
    agent(repo, {"src/calc.py": patched("(a, b) == (2, 3)", "6")})
    rc, record = record_of(capsys, repo)
    assert rc == 1 and codes(record) == ["example-regressed"]
    assert {t["outcome"] for t in record["tests"]} == {"passed"}
    finding = record["findings"][0]
    assert (
        finding["path"] == "oracle/corpus.jsonl"
        and "'good-1' (expect: pass) fails" in (finding["message"])
    )


def test_the_near_miss_a_line_the_candidate_adds_does_not_count(capsys, repo):
    # the candidate's own corpus line fails against its code: only the target's count
    agent(
        repo,
        {
            "src/calc.py": patched("(a, b) == (8, 8)", "0"),
            "oracle/corpus.jsonl": CORPUS + corpus_line("mine-1", [8, 8, 16], "pass"),
        },
    )
    rc, record = record_of(capsys, repo)
    assert rc == 0, record["findings"]
    assert "mine-1" not in [r["id"] for r in record["replays"]]


def test_the_near_miss_an_edited_expect_in_the_candidate_moves_nothing(capsys, repo):
    agent(
        repo,
        {
            "src/calc.py": patched("(a, b) == (2, 3)", "6"),
            "oracle/corpus.jsonl": CORPUS.replace('"expect": "pass"', '"expect": "fail"', 1),
        },
    )
    rc, record = record_of(capsys, repo)
    assert rc == 1 and codes(record) == ["example-regressed"]


# -- example-lost ---------------------------------------------------------------------------


def test_code_fitted_to_a_failing_example_is_example_lost(capsys, repo):
    agent(repo, {"src/calc.py": patched("(a, b) == (1, 1)", "3")})
    rc, record = record_of(capsys, repo)
    assert rc == 1 and codes(record) == ["example-lost"]
    assert "'bad-1' (expect: fail) passes" in record["findings"][0]["message"]


def test_the_near_miss_a_refactor_that_keeps_it_failing_passes(capsys, repo):
    agent(repo, {"src/calc.py": "def add(a, b):\n    return sum((a, b))\n"})
    rc, record = record_of(capsys, repo)
    assert rc == 0, record["findings"]
    assert "bad-1" in record["queues"]["captured"]


# -- replay-errored -------------------------------------------------------------------------

EXIT_IN_A_REPLAY = """\
import os

if os.environ.get("CORPUS_ID") or os.environ.get("REPLAY_ID"):
    os._exit(0)  # a replay ends 'green' before any test runs


def add(a, b):
    return a + b
"""

READS_THE_ID = """\
import os

SEEN = os.environ.get("CORPUS_ID", "")


def add(a, b):
    return a + b
"""

SKIP_IN_A_REPLAY = """\
import os

import pytest


def add(a, b):
    if os.environ.get("REPLAY_ID"):
        pytest.skip("not now")
    return a + b
"""


def test_an_exit_when_the_code_sees_a_replay_is_replay_errored(capsys, repo):
    agent(repo, {"src/calc.py": EXIT_IN_A_REPLAY})
    rc, record = record_of(capsys, repo)
    assert rc == 1
    errored = [f for f in record["findings"] if f["code"] == "replay-errored"]
    assert codes(record) == ["replay-errored"] * 4, record["findings"]
    assert "before its session ended" in errored[0]["message"]
    # a program that is no pytest is judged by its exit status alone: 0 is a pass
    assert {r["id"]: r["observed"] for r in record["replays"]}["case-tool"] == "pass"


def test_the_near_miss_code_that_reads_the_id_and_does_its_work_passes(capsys, repo):
    agent(repo, {"src/calc.py": READS_THE_ID})
    rc, record = record_of(capsys, repo)
    assert rc == 0, record["findings"]


def test_a_skip_while_a_replay_runs_is_replay_errored_not_a_skip(capsys, repo):
    agent(repo, {"src/calc.py": SKIP_IN_A_REPLAY})
    rc, record = record_of(capsys, repo)
    assert rc == 1
    messages = [f["message"] for f in record["findings"] if f["code"] == "replay-errored"]
    assert len(messages) == 2 and all("skipped, neither passed nor failed" in m for m in messages)


SLEEP_IN_A_REPLAY = """\
import os
import time


def add(a, b):
    if os.environ.get("CORPUS_ID") == "good-1":
        time.sleep(60)
    return a + b
"""


def test_a_replay_past_the_time_limit_is_replay_errored(capsys, tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit(repo, target_files(timeout=4), "the target")
    commit(repo, {"src/calc.py": SLEEP_IN_A_REPLAY}, "agent")
    rc, out, _ = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD")
    assert rc == 1
    assert (
        "oracle/corpus.jsonl:1: replay-errored: corpus-line 'good-1' neither passed nor "
        "failed: it ran past score.timeout (4 s) and was stopped"
    ) in out


def test_the_near_miss_a_short_sleep_within_the_limit_passes(capsys, tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit(repo, target_files(timeout=30), "the target")
    commit(repo, {"src/calc.py": SLEEP_IN_A_REPLAY.replace("60", "0.2")}, "agent")
    rc, out, _ = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD")
    assert rc == 0, out


# -- replay-mismatch ------------------------------------------------------------------------


def test_a_case_whose_result_is_not_its_expected_is_a_replay_mismatch(capsys, repo):
    # case-pass (pytest) and case-tool (a plain program) are expected to pass
    agent(repo, {"src/calc.py": patched("a == b and a > 4", "0")})
    rc, record = record_of(capsys, repo)
    assert rc == 1 and codes(record) == ["replay-mismatch", "replay-mismatch"]
    assert sorted(f["path"] for f in record["findings"]) == [
        "replays/pass.json",
        "replays/tool.json",
    ]
    assert "'case-tool' was expected to pass and its command's result was a fail" in str(
        record["findings"]
    )
    # case-open fails too, but expects nothing: it holds
    assert {r["id"]: r["observed"] for r in record["replays"]}["case-open"] == "fail"
    assert "case-open" in record["queues"]["captured"]


def test_the_near_miss_a_case_without_expected_holds_whatever_it_does(capsys, repo):
    agent(repo, {"src/calc.py": patched("(a, b) == (6, 6)", "13")})
    rc, record = record_of(capsys, repo)
    assert rc == 0, record["findings"]
    assert {r["id"]: r["observed"] for r in record["replays"]}["case-open"] == "pass"


def test_a_case_replays_with_its_own_seed(capsys, tmp_path):
    repo = init_repo(tmp_path / "repo")
    files = target_files()
    files["tests/test_seed.py"] = (
        "import os\n\n\ndef test_seed():\n"
        "    assert os.environ.get('REPLAY_SEED', '7') == os.environ['PYTHONHASHSEED'] == '7'\n"
    )
    files["replays/seed.json"] = replay_case(
        "case-seed", 1, "pass", command=["pytest", "tests/test_seed.py"]
    )
    commit(repo, files, "the target")
    commit(repo, {"src/calc.py": SOURCE + "\n"}, "agent")
    rc, out, _ = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    record = json.loads(out)
    # the oracle's session runs it with the pinned seed: it fails there, and passes replayed
    assert [f["code"] for f in record["findings"]] == ["test-failed"]
    assert {r["id"]: r["observed"] for r in record["replays"]}["case-seed"] == "pass"


# -- generalized: the properties that pass on the pinned seed and the corpus ----------------------

PROPERTY = """\
from hypothesis import given, strategies as st

from src.calc import add


@given(st.integers(), st.integers())
def test_add_commutes(a, b):
    assert add(a, b) == add(b, a)
"""


def test_a_property_that_passes_is_generalized_and_one_that_fails_is_not(capsys, tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit(repo, {**target_files(), "tests/test_prop.py": PROPERTY}, "the target")
    commit(repo, {"src/calc.py": SOURCE + "\n"}, "an honest change")
    rc, out, _ = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    record = json.loads(out)
    assert rc == 0, record["findings"]
    assert record["queues"]["generalized"] == [CORPUS_TEST, "tests/test_prop.py::test_add_commutes"]
    # the near miss: code that breaks the property takes it out of the queue
    commit(repo, {"src/calc.py": patched("a > b + 100", "a")}, "agent")
    rc, out, _ = score(capsys, repo, "--base", "HEAD~2", "--head", "HEAD", "--format", "json")
    record = json.loads(out)
    assert rc == 1 and record["queues"]["generalized"] == [CORPUS_TEST]


# -- quarantine: left out, never run, time-boxed ----------------------------------------------


def test_a_quarantined_line_is_left_out_and_time_boxed(capsys, repo):
    # frozen-1 would regress, but its test is quarantined at the target
    agent(repo, {"src/calc.py": patched("(a, b) == (4, 4)", "0")})
    rc, record = record_of(capsys, repo)
    assert rc == 0, record["findings"]
    assert "frozen-1" not in [r["id"] for r in record["replays"]]
    assert record["queues"]["time_boxed"][0]["excludes"] == ["frozen-1"]


def test_the_near_miss_an_expired_quarantine_replays_the_line(capsys, repo):
    agent(repo, {"src/calc.py": patched("(a, b) == (4, 4)", "0")})
    rc, record = record_of(capsys, repo, "--now", "2026-10-06")
    assert rc == 1
    assert [f["code"] for f in record["findings"]] == ["example-regressed"]
    assert record["queues"]["time_boxed"] == []


def test_the_candidates_quarantine_entry_leaves_nothing_out(capsys, repo):
    agent(
        repo,
        {
            "src/calc.py": patched("(a, b) == (2, 3)", "6"),
            "oracle/quarantine.json": json.dumps(
                [
                    {"test": FROZEN_TEST, "owner": "alice", "expires": "2026-10-05"},
                    {"test": CORPUS_TEST, "owner": "agent", "expires": "2026-10-05"},
                ]
            ),
        },
    )
    rc, record = record_of(capsys, repo)
    assert rc == 1 and codes(record) == ["example-regressed"]


# -- bad input: the target's records or their contract --------------------------------------


def test_a_target_case_with_a_shell_string_command_is_exit_2(capsys, tmp_path):
    repo = init_repo(tmp_path / "repo")
    files = target_files()
    files["replays/pass.json"]["command"] = "pytest tests/test_calc.py -q"
    commit(repo, files, "the target")
    commit(repo, {"src/calc.py": SOURCE + "\n"}, "agent")
    rc, out, err = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(
        "oracle-guard: error: replays/pass.json (at HEAD~1): fails replay-case: $.command: "
    )
    assert 'write ["pytest", "tests/test_calc.py", "-q"]' in err


@pytest.mark.parametrize(
    "replay,said",
    [
        ("{id_env: PATH}", "replay names the variable PATH, which the score's own"),
        ("{payload_env: PYTHONPATH}", "replay names the variable PYTHONPATH"),
        ("{id_env: A, seed_env: A}", "replay names one variable twice"),
    ],
)
def test_variables_the_score_sets_itself_are_refused(capsys, tmp_path, replay, said):
    repo = init_repo(tmp_path / "repo")
    files = target_files()
    files[".oracle-guard.yaml"] = files[".oracle-guard.yaml"].replace(
        "replay: {}", f"replay: {replay}", 1
    )
    commit(repo, files, "the target")
    commit(repo, {"src/calc.py": SOURCE + "\n"}, "agent")
    rc, out, err = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD")
    assert rc == 2 and said in err and err.count("\n") == 1


def test_the_near_miss_variables_of_its_own_name_carry_the_record(capsys, tmp_path):
    repo = init_repo(tmp_path / "repo")
    files = target_files()
    files[".oracle-guard.yaml"] = files[".oracle-guard.yaml"].replace(
        "replay: {}", "replay: {payload_env: CASE}", 1
    )
    files["tests/test_calc.py"] = files["tests/test_calc.py"].replace(
        'case("CORPUS_PAYLOAD"', 'case("CASE"'
    )
    commit(repo, files, "the target")
    commit(repo, {"src/calc.py": patched("(a, b) == (2, 3)", "6")}, "agent")
    rc, out, _ = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD")
    assert rc == 1 and "example-regressed: corpus-line 'good-1'" in out


def test_replay_on_a_set_without_a_record_shape_is_a_contract_error(capsys, tmp_path):
    repo = init_repo(tmp_path / "repo")
    contract = "version: 1\nseeds:\n  - {paths: [s.json], format: json-array, replay: {}}\n"
    commit(repo, {".oracle-guard.yaml": contract, "s.json": "[]\n"}, "the target")
    commit(repo, {"s.json": "[1]\n"}, "agent")
    rc, _, err = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD")
    assert rc == 2 and "replays corpus-line or replay-case records" in err, err


# -- the four example layouts -----------------------------------------------------------------

LAYOUT_SCORE = 'score:\n  tests: ["tests/**"]\n'


def example(tmp_path: Path, name: str) -> Path:
    repo = tmp_path / name
    shutil.copytree(ROOT / "examples" / name, repo)
    contract = repo / ".oracle-guard.yaml"
    contract.write_text(contract.read_text() + LAYOUT_SCORE)
    init_repo(repo)
    commit(repo, message="the target")
    return repo


@pytest.mark.parametrize(
    "name,captured",
    [("harness", 1), ("merge-contract", 1), ("oracle-dir", 2), ("replay-queue", 1)],
)
def test_each_example_layout_has_records_that_replay(capsys, tmp_path, name, captured):
    repo = example(tmp_path, name)
    path = sorted((repo / "src").glob("*.py"))[0].relative_to(repo).as_posix()
    commit(repo, {path: (repo / path).read_text() + "\n# a comment\n"}, "agent")
    rc, out, _ = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    record = json.loads(out)
    assert rc == 0, record["findings"]
    assert len(record["queues"]["captured"]) == captured
    assert record["queues"]["time_boxed"], "each layout's quarantine is time-boxed"


DISCOUNTS = 'def total(items):\n    return sum(i["qty"] * i["price"] - i.get("discount", 0) for i in items)\n'
HONEST = (
    "def total(items):\n"
    '    return sum(max(0, i["qty"] * i["price"] - i.get("discount", 0)) for i in items)\n'
)


@pytest.mark.parametrize("context", ["local", "ci"])
def test_the_corpus_example_is_red_on_a_regressing_patch_and_green_on_the_honest_fix(
    capsys, tmp_path, context
):
    repo = example(tmp_path, "oracle-dir")
    CONTEXT[repo] = context
    agent(repo, {"src/invoice.py": DISCOUNTS}, "discounts, unclamped")
    rc, out, _ = replay(capsys, repo)
    assert rc == 1
    assert (
        "oracle/corpus.jsonl:2: example-regressed: corpus-line 'inv-020' (expect: pass) fails "
        "tests/test_invoice_total.py::test_totals_are_non_negative" in out
    )
    agent(repo, {"src/invoice.py": HONEST}, "discounts, clamped at zero")
    rc, out, _ = replay(capsys, repo)
    assert rc == 0, out
    assert out.splitlines()[1] == "score: 2 captured, 1 generalized, 1 time-boxed"


def test_a_case_whose_program_is_not_there_is_replay_errored(capsys, tmp_path):
    repo = init_repo(tmp_path / "repo")
    files = target_files()
    files["replays/tool.json"]["command"] = ["no-such-program-here", "x"]
    commit(repo, files, "the target")
    commit(repo, {"src/calc.py": SOURCE + "\n"}, "agent")
    rc, out, _ = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD")
    assert rc == 1
    assert (
        "replays/tool.json: replay-errored: replay-case 'case-tool' neither passed nor failed: "
        "'no-such-program-here' did not start: " in out
    )
