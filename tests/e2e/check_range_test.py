"""``check --range A..B``: each commit judged against its first parent, one
verdict a commit, the same verdicts as ``check --base C^ --head C`` (issue #36)."""

from __future__ import annotations

import json
import re

import pytest

from oracle_guard.findings import HOOKS
from testing.git import commit, git, init_repo, run_guard
from testing.oracle import NOW

CONTRACT = """\
version: 1
write_set:
  deny: ["oracle/**"]
"""
DENIED = "oracle/a.json: write-denied: matches deny pattern 'oracle/**'"


def repository(tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {".oracle-guard.yaml": CONTRACT, "oracle/a.json": "1\n", "src/a.py": ""},
        message="base",
    )
    return repo


def check(capsys, repo, *args):
    return run_guard(capsys, repo, "check", "--now", NOW, *args, env={})


def one_by_one(capsys, repo, commits):
    """Each commit's finding lines, as check --base C^ --head C prints them."""
    lines = {}
    for oid in commits:
        _, out, _ = check(capsys, repo, "--base", f"{oid}^", "--head", oid)
        lines[oid] = [
            line
            for line in out.splitlines()
            if FINDING.match(line) and line.split(":")[0] not in HOOKS
        ]
    return lines


FINDING = re.compile(r"^[^ ]+: [a-z][a-z-]*( \(warning\))?: ")
VERDICT = re.compile(r"^[0-9a-f]{12} (passed|failed: [0-9]+ finding\(s\))$")


def verdicts(out):
    return [line for line in out.splitlines() if VERDICT.match(line)]


def test_a_range_of_honest_commits_passes_one_line_each(tmp_path, capsys):
    repo = repository(tmp_path)
    ids = [commit(repo, {"src/a.py": f"x = {n}\n"}) for n in range(3)]
    rc, out, err = check(capsys, repo, "--range", "main~3..main")
    assert (rc, err) == (0, ""), err
    assert out.splitlines() == [f"{oid[:12]} passed" for oid in ids] + [
        "range main~3..main: 0 of 3 commits failed"
    ]


def test_the_commit_that_edits_the_oracle_fails_alone_as_check_judges_it(tmp_path, capsys):
    repo = repository(tmp_path)
    ids = [
        commit(repo, {"src/a.py": "x = 1\n"}),
        commit(repo, {"oracle/a.json": "2\n"}),
        commit(repo, {"src/a.py": "x = 2\n"}),
    ]
    rc, out, _ = check(capsys, repo, "--range", "main~3..main")
    assert rc == 1
    assert verdicts(out) == [
        f"{ids[0][:12]} passed",
        f"{ids[1][:12]} failed: 1 finding(s)",
        f"{ids[2][:12]} passed",
    ]
    assert out.splitlines()[2] == DENIED
    assert out.splitlines()[-1] == "range main~3..main: 1 of 3 commits failed"
    alone = one_by_one(capsys, repo, ids)
    assert alone[ids[1]] == [DENIED]
    assert alone[ids[0]] == alone[ids[2]] == []


def test_an_oracle_edit_undone_later_still_fails_the_commit_that_made_it(tmp_path, capsys):
    repo = repository(tmp_path)
    edit = commit(repo, {"oracle/a.json": "2\n"})
    undo = commit(repo, {"oracle/a.json": "1\n"})
    rc, out, _ = check(capsys, repo, "--range", "main~2..main")
    assert rc == 1
    assert verdicts(out) == [
        f"{edit[:12]} failed: 1 finding(s)",
        f"{undo[:12]} failed: 1 finding(s)",
    ]
    # the net diff is empty: the range judges each commit, not the sum
    assert check(capsys, repo, "--base", "main~2", "--head", "main")[0] == 0


def test_json_gives_each_commit_its_verdict_and_checks_results(tmp_path, capsys):
    repo = repository(tmp_path)
    honest = commit(repo, {"src/a.py": "x = 1\n"})
    edit = commit(repo, {"oracle/a.json": "2\n"})
    rc, out, _ = check(capsys, repo, "--range", "main~2..main", "--format", "json")
    doc = json.loads(out)
    assert rc == 1
    assert doc["range"] == "main~2..main"
    assert [(c["commit"], c["verdict"]) for c in doc["commits"]] == [
        (honest, "passed"),
        (edit, "failed"),
    ]
    _, alone, _ = check(capsys, repo, "--base", honest, "--head", edit, "--format", "json")
    assert doc["commits"][1]["results"] == json.loads(alone)


@pytest.mark.parametrize(
    "args,message",
    [
        (("--range", "main..main"), "holds no commits"),
        (("--range", "main~1...main"), "three-dot"),
        (("--range", "main"), "names one revision"),
        (("--range", "..main"), "empty side"),
        (("--range", "nope..main"), "'nope' does not name a commit"),
        (("--range", "main~1..main", "--base", "main~1"), "drop --base"),
        (("--range", "main~1..main", "--head", "main"), "drop --head"),
        (("--range", "main~1..main", "--target", "main"), "drop --target"),
        (("--range", "main~1..main", "--format", "sarif"), "supports --format text and json"),
    ],
)
def test_what_names_no_range_to_judge_exits_2_with_one_line(tmp_path, capsys, args, message):
    repo = repository(tmp_path)
    commit(repo, {"src/a.py": "x = 1\n"})
    rc, out, err = check(capsys, repo, *args)
    assert rc == 2
    assert len(err.splitlines()) == 1 and message in err
    assert verdicts(out) == []


def test_the_near_miss_a_range_of_one_commit_is_judged(tmp_path, capsys):
    repo = repository(tmp_path)
    oid = commit(repo, {"src/a.py": "x = 1\n"})
    assert check(capsys, repo, "--range", "main~1..main")[1].splitlines()[0] == f"{oid[:12]} passed"


def test_a_merge_commit_is_judged_against_its_first_parent(tmp_path, capsys):
    repo = repository(tmp_path)
    git(repo, "checkout", "-q", "-b", "side")
    side = commit(repo, {"oracle/a.json": "2\n"}, message="side edits the oracle")
    git(repo, "checkout", "-q", "main")
    commit(repo, {"src/a.py": "x = 1\n"})
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = git(repo, "rev-parse", "HEAD").strip()
    # the side's commit, then the merge: against main's parent, it brings the edit
    rc, out, _ = check(capsys, repo, "--range", "main^1..main")
    assert rc == 1
    assert verdicts(out) == [
        f"{side[:12]} failed: 1 finding(s)",
        f"{merge[:12]} failed: 1 finding(s)",
    ]
    assert out.splitlines().count(DENIED) == 2
    # against its second parent the merge would change no oracle file
    assert check(capsys, repo, "--base", side, "--head", merge)[0] == 0
    # the near miss: a merge whose second side is honest passes
    git(repo, "checkout", "-q", "-b", "honest", "main")
    commit(repo, {"src/b.py": "y = 1\n"})
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge honest", "honest")
    rc, out, _ = check(capsys, repo, "--range", "main^1..main")
    assert rc == 0
    assert [line[13:] for line in verdicts(out)] == ["passed", "passed"]


def test_a_root_commit_in_the_range_is_refused(tmp_path, capsys):
    repo = repository(tmp_path)
    git(repo, "checkout", "-q", "--orphan", "other")
    git(repo, "rm", "-q", "-r", "-f", ".")
    root = commit(repo, {"other.txt": "1\n"}, message="unrelated root")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--allow-unrelated-histories", "-m", "join", "other")
    rc, out, err = check(capsys, repo, "--range", "main^1..main")
    assert rc == 2 and out == ""
    assert len(err.splitlines()) == 1 and f"{root[:12]} is a root commit" in err
