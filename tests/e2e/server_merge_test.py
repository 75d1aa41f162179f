"""The server's view of merges: a branch update compared with what it took from
the default branch, a new ref in a criss-cross history, the rules branch, and
commits already judged; real bare repositories and real pushes."""

from __future__ import annotations

from testing.git import commit, git
from testing.server import make_client, make_server, push, push_env, rev

CONTRACT = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  allow: ["src/**", "tests/**"]
  deny: ["seeds/**"]
  owners: [alice]
identity_env: GL_USERNAME
"""
ALICE, BOB = push_env(GL_USERNAME="alice"), push_env(GL_USERNAME="bob")
CASES = "".join(f"  {n},\n" for n in range(1, 8)) + "  8\n"


def accepted(p) -> None:
    assert p.rc == 0 and "push rejected" not in p.stderr, p.stderr


def server_and_client(tmp_path, files=None):
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(
        client,
        {
            ".oracle-guard.yaml": CONTRACT,
            "seeds/a.json": "[1, 2]\n",
            "src/app.py": "",
            **(files or {}),
        },
        "the oracle",
    )
    accepted(push(client, "main", env=ALICE))
    return server, client


def test_a_rename_on_main_cannot_carry_a_branch_edit_into_the_oracle(tmp_path):
    """The branch drops a case from an allowed file; an owner then moves that
    file into seeds/; the branch merges main, and git's rename detection puts
    the drop into the seed file. Compared with git's merge of the old tip and
    main, nothing would change: that merge made the seed file itself."""
    server, client = server_and_client(tmp_path, {"tests/cases.json": f"[\n{CASES}]\n"})
    git(client, "checkout", "-q", "-b", "feat")
    commit(client, {"tests/cases.json": f"[\n{CASES.replace('  3,', '', 1)}]\n"}, "drop 3")
    accepted(push(client, "feat", env=BOB))
    git(client, "checkout", "-q", "main")
    commit(client, {"seeds/cases.json": f"[\n{CASES}]\n"}, "owner: copy into seeds/")
    git(client, "rm", "-q", "tests/cases.json")
    commit(client, message="owner: drop the old copy")
    accepted(push(client, "main", env=ALICE))
    git(client, "checkout", "-q", "feat")
    git(client, "merge", "-q", "--no-edit", "main")
    assert "  3,\n" not in (client / "seeds/cases.json").read_text()  # git carried the drop
    p = push(client, "feat", env=BOB)
    assert p.rc != 0 and "refs/heads/feat: seeds/cases.json: write-denied" in p.findings(), p.stderr


def test_a_branch_that_merges_main_cleanly_is_accepted(tmp_path):
    # the near-miss: main's own oracle change reaches the branch by the merge
    server, client = server_and_client(tmp_path)
    git(client, "checkout", "-q", "-b", "feat")
    commit(client, {"src/app.py": "x = 1\n"}, "work")
    accepted(push(client, "feat", env=BOB))
    git(client, "checkout", "-q", "main")
    commit(client, {"seeds/a.json": "[1, 2, 3]\n"}, "owner appends")
    accepted(push(client, "main", env=ALICE))
    git(client, "checkout", "-q", "feat")
    git(client, "merge", "-q", "--no-edit", "main")
    accepted(push(client, "feat", env=BOB))


def criss_cross(tmp_path):
    """x merged main's M1 (an owner's append) while main merged x's X1: a branch
    from x has two merge-bases with main, one without the append."""
    server, client = server_and_client(tmp_path)
    git(client, "checkout", "-q", "-b", "x")
    x1 = commit(client, {"src/app.py": "x = 1\n"}, "X1")
    git(client, "checkout", "-q", "main")
    m1 = commit(client, {"seeds/a.json": "[1, 2, 3]\n"}, "M1: owner appends")
    accepted(push(client, "main", env=ALICE))
    git(client, "checkout", "-q", "x")
    git(client, "merge", "-q", "--no-edit", m1)
    accepted(push(client, "x", env=BOB))
    git(client, "checkout", "-q", "main")
    git(client, "merge", "-q", "--no-edit", x1)
    accepted(push(client, "main", env=ALICE))
    git(client, "checkout", "-q", "-b", "evil", "x")
    assert len(git(client, "merge-base", "--all", "main", "evil").split()) == 2
    return server, client


def test_a_new_branch_in_a_criss_cross_history_is_compared_with_the_virtual_base(tmp_path):
    server, client = criss_cross(tmp_path)
    commit(client, {"seeds/a.json": "[1, 2]\n"}, "drop the owner's seed")
    p = push(client, "evil", env=BOB)
    assert p.rc != 0, p.stderr
    assert "refs/heads/evil: seeds/a.json: seed-removed" in p.findings(), p.stderr
    assert rev(server, "refs/heads/evil") is None


def test_a_new_branch_in_a_criss_cross_history_near_miss(tmp_path):
    server, client = criss_cross(tmp_path)
    commit(client, {"src/app.py": "x = 2\n"}, "honest")
    accepted(push(client, "evil", env=BOB))


def test_the_rules_branch_is_protected_whatever_protected_refs_says(tmp_path):
    """protected_refs leaves main out; a push to main would choose the rules of
    every later push, so main is judged all the same."""
    server, client = server_and_client(tmp_path)
    commit(
        client,
        {".oracle-guard.yaml": CONTRACT + 'protected_refs: ["refs/heads/release/*"]\n'},
        "owner: only release branches",
    )
    accepted(push(client, "main", env=ALICE))
    before = rev(server, "refs/heads/main")
    commit(
        client,
        {
            ".oracle-guard.yaml": CONTRACT.replace('  deny: ["seeds/**"]\n', "").replace(
                '"tests/**"]', '"tests/**", "seeds/**"]'
            )
        },
        "loosen the rules",
    )
    p = push(client, "main", env=BOB)
    assert p.rc != 0 and "refs/heads/main: .oracle-guard.yaml: write-denied" in p.findings(), (
        p.stderr
    )
    assert rev(server, "refs/heads/main") == before
    # the near-miss: a branch protected_refs leaves out is not judged
    accepted(push(client, "HEAD:refs/heads/scratch", env=BOB))


def test_commits_already_on_a_branch_are_not_judged_again_when_it_merges_main(tmp_path):
    """A mixed commit that reached the branch before the rules did is not held
    against every later push of it: only the commits new to the branch are."""
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(client, {"src/app.py": "", "seeds/a.json": "[1]\n"}, "before the contract")
    accepted(push(client, "main", env=ALICE))
    git(client, "checkout", "-q", "-b", "feat")
    commit(client, {"src/app.py": "x\n", "seeds/b.json": "[2]\n"}, "mixed, before the rules")
    accepted(push(client, "feat", env=BOB))
    git(client, "checkout", "-q", "main")
    commit(client, {".oracle-guard.yaml": CONTRACT}, "owner: the contract")
    accepted(push(client, "main", env=ALICE))
    git(client, "checkout", "-q", "feat")
    git(client, "merge", "-q", "--no-edit", "main")
    commit(client, {"src/app.py": "y\n"}, "honest")
    accepted(push(client, "feat", env=BOB))
