"""rules_ref: the branch whose contract judges every push, named by the default
branch's contract; real bare repositories, the hook installed, real pushes."""

from __future__ import annotations

from testing.git import commit, git
from testing.server import make_client, make_server, push, push_env, rev

LOOSE = """\
version: 1
write_set:
  allow: ["**"]
  owners: [alice]
identity_env: GL_USERNAME
"""
STRICT = LOOSE.replace('allow: ["**"]', 'allow: ["src/**"]\n  deny: ["oracle/**"]')
ALICE, BOB = push_env(GL_USERNAME="alice"), push_env(GL_USERNAME="bob")


def server_with_rules_on_stable(tmp_path):
    """HEAD is develop, whose contract says the rules live on stable; stable's
    contract denies oracle/**, develop's own would allow it."""
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(
        client,
        {".oracle-guard.yaml": STRICT, "oracle/a.txt": "1\n", "src/a.py": ""},
        "strict rules",
    )
    assert push(client, "HEAD:refs/heads/stable", env=ALICE).rc == 0
    git(server, "symbolic-ref", "HEAD", "refs/heads/stable")
    git(client, "checkout", "-q", "-b", "develop")
    commit(
        client,
        {".oracle-guard.yaml": LOOSE + "rules_ref: refs/heads/stable\n"},
        "develop points at stable's rules",
    )
    p = push(client, "develop", env=ALICE)
    assert p.rc == 0, p.stderr
    git(server, "symbolic-ref", "HEAD", "refs/heads/develop")
    return server, client


def test_rules_ref_judges_every_push_by_the_named_branch(tmp_path):
    server, client = server_with_rules_on_stable(tmp_path)
    before = rev(server, "refs/heads/develop")
    commit(client, {"oracle/a.txt": "2\n"}, "an oracle edit develop's contract allows")
    p = push(client, "develop", env=BOB)
    assert p.rc != 0 and "oracle/a.txt: write-denied" in p.stderr, p.stderr
    assert rev(server, "refs/heads/develop") == before


def test_rules_ref_near_miss_an_honest_push_passes(tmp_path):
    server, client = server_with_rules_on_stable(tmp_path)
    new = commit(client, {"src/a.py": "x = 1\n"}, "honest")
    p = push(client, "develop", env=BOB)
    assert p.rc == 0, p.stderr
    assert rev(server, "refs/heads/develop") == new


def test_a_missing_rules_ref_rejects_every_push_with_one_line(tmp_path):
    server, client = server_with_rules_on_stable(tmp_path)
    git(server, "update-ref", "-d", "refs/heads/stable")
    commit(client, {"src/a.py": "x = 1\n"}, "honest")
    p = push(client, "develop", env=BOB)
    assert p.rc != 0
    assert p.guard == [
        "oracle-guard: push rejected: the default branch's contract names "
        "rules_ref refs/heads/stable, which does not exist: no push can be "
        "judged until an admin creates it or an owner changes rules_ref"
    ], p.stderr
