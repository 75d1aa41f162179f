"""Owners before the first push, and owners added later (docs/how-to/server-install.md, "Bootstrap")."""

from __future__ import annotations

import subprocess
from pathlib import Path

from testing import oracle
from testing.git import commit, git
from testing.server import make_client, make_server, push, push_env, rev
from testing.signatures import SIGNED_CONTRACT, SIGNERS

OWNERLESS = oracle.OWNERLESS_SEEDS


def owner_key(folder: Path) -> Path:
    key = folder / "alice"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", str(key)], check=True
    )
    return key


def signers_line(key: Path) -> str:
    return "alice " + " ".join(key.with_suffix(".pub").read_text().split()[:2]) + "\n"


def signed_commit(client: Path, key: Path, files, message: str) -> str:
    from testing.git import stage

    stage(client, files)
    git(
        client,
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={key}",
        "commit",
        "-q",
        "-S",
        "-m",
        message,
    )
    return rev(client, "HEAD")


def test_signers_in_the_first_push_make_owners_from_the_start(tmp_path):
    key = owner_key(tmp_path)
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(
        client,
        {
            ".oracle-guard.yaml": SIGNED_CONTRACT,
            SIGNERS: signers_line(key),
            "seeds/a.json": "[1]\n",
            "src/app.py": "",
        },
        "the oracle, with its owners",
    )
    assert push(client, "main").rc == 0
    signed_commit(client, key, {"seeds/a.json": "[1, 2]\n"}, "append a seed")
    assert push(client, "main").rc == 0
    commit(client, {"seeds/a.json": "[1, 2, 3]\n"}, "unsigned append")
    p = push(client, "main")
    assert p.rc != 0 and "seeds/a.json: write-denied" in p.stderr, p.stderr


def test_no_push_adds_owners_to_an_ownerless_contract_but_the_server_admin_can(tmp_path):
    key = owner_key(tmp_path)
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(
        client,
        {".oracle-guard.yaml": OWNERLESS, "seeds/a.json": "[1]\n", "src/app.py": ""},
        "the oracle, no owners",
    )
    assert push(client, "main").rc == 0
    before = rev(server, "refs/heads/main")
    # whoever pushes it, signed or not, a push cannot name its own owners
    signed_commit(
        client,
        key,
        {".oracle-guard.yaml": SIGNED_CONTRACT, SIGNERS: signers_line(key)},
        "add owners",
    )
    p = push(client, "main", env=push_env(REMOTE_USER="alice", GL_USER="alice"))
    assert p.rc != 0 and ".oracle-guard.yaml: write-denied" in p.stderr, p.stderr
    assert rev(server, "refs/heads/main") == before
    # the server admin moves the branch on the server: a fetch runs no receive hook
    git(server, "fetch", "-q", str(client), "+refs/heads/main:refs/heads/main")
    assert rev(server, "refs/heads/main") == rev(client, "HEAD")
    # from then on the owner's signature is the authority, and nothing else is
    signed_commit(client, key, {"seeds/a.json": "[1, 2]\n"}, "append a seed")
    assert push(client, "main").rc == 0
    commit(client, {"seeds/a.json": "[1, 2, 3]\n"}, "unsigned append")
    assert push(client, "main").rc != 0


def test_a_tag_at_an_older_owner_signed_commit_needs_no_owner_to_push_it(tmp_path):
    """ref-at-old-commit: an older commit of main may get a new protected ref from
    anyone when an owner signed it; an unsigned one only from an owner."""
    key = owner_key(tmp_path)
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    unsigned = commit(
        client,
        {
            ".oracle-guard.yaml": SIGNED_CONTRACT,
            SIGNERS: signers_line(key),
            "seeds/a.json": "[1]\n",
            "src/app.py": "",
        },
        "the oracle",
    )
    assert push(client, "main").rc == 0
    signed = signed_commit(client, key, {"seeds/a.json": "[1, 2]\n"}, "append a seed")
    assert push(client, "main").rc == 0
    commit(client, {"src/app.py": "v2\n"}, "code")
    assert push(client, "main").rc == 0
    assert push(client, f"{signed}:refs/tags/v1").rc == 0
    p = push(client, f"{unsigned}:refs/tags/v0")
    assert p.rc != 0 and "ref-at-old-commit" in p.stderr, p.stderr
