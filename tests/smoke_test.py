from testing.git import commit, init_repo, run_guard, stage

CONTRACT = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  deny: ["oracle/**"]
"""


def test_append_passes_and_reorder_fails(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": CONTRACT, "seeds/a.json": [1, 2]})
    stage(repo, {"seeds/a.json": [1, 2, 3]})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "seed-append-only")
    assert rc == 0, out
    stage(repo, {"seeds/a.json": [2, 1]})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "seed-append-only")
    assert rc == 1
    assert "seeds/a.json: seed-reordered:" in out
