"""`oracle-guard signers add | remove | list`: the allowed signers file the contract
in the index names, edited line by line with real ssh-keygen keys; every refusal
exits 2 with one line and leaves the file byte for byte as it was."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from oracle_guard.authority.keys import ADD_AUTHORITY, HEADER
from testing.git import commit, git, init_repo, run_guard, write
from testing.oracle import NOW
from testing.signatures import SIGNED_CONTRACT, SIGNERS, make_keys

CONTRACT = SIGNED_CONTRACT


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """Real keys from ssh-keygen, by name: the private key's path (its .pub beside it)."""
    return make_keys(tmp_path_factory.mktemp("keys"))


def pub(key: Path) -> str:
    """The .pub file's line (keytype base64 comment)."""
    return key.with_name(key.name + ".pub").read_text().strip()


def pub_path(key: Path) -> str:
    return str(key.with_name(key.name + ".pub"))


def key_of(key: Path) -> str:
    return " ".join(pub(key).split()[:2])


def make_repo(tmp_path, signers=None, contract=CONTRACT, name="r"):
    """A repository whose index holds the contract (and the signers file, if given)."""
    repo = init_repo(tmp_path / name)
    files = {".oracle-guard.yaml": contract, "seeds/a.json": "[1, 2]\n", "src/app.py": ""}
    if signers is not None:
        files[SIGNERS] = signers
    write(repo, files)
    git(repo, "add", "-A")
    return repo


def signers(capsys, repo, *args):
    """``oracle-guard signers ACTION -C REPO ARGS...``: (exit code, stdout, stderr)."""
    from oracle_guard.cli import main

    capsys.readouterr()
    rc = main(["signers", args[0], "-C", str(repo), *args[1:]], env={})
    out, err = capsys.readouterr()
    return rc, out, err


def file_state(repo, path=SIGNERS):
    target = Path(repo) / path
    if target.is_dir():
        return sorted(os.listdir(target))
    return target.read_bytes() if os.path.lexists(target) else None


def assert_refused(capsys, repo, args, *expected, path=SIGNERS):
    before = file_state(repo, path)
    rc, out, err = signers(capsys, repo, *args)
    assert rc == 2, out + err
    assert out == ""
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1, err
    for text in expected:
        assert text in err, (text, err)
    assert file_state(repo, path) == before
    return err


def ssh_keygen_fingerprint(path: str) -> str:
    out = subprocess.run(
        ["ssh-keygen", "-lf", path], check=True, stdout=subprocess.PIPE, text=True
    ).stdout
    return out.split()[1]


def stage_as_printed(repo, out):
    commands = re.findall(r"stage it with: (git add .+)$", out, re.M)
    assert commands, out
    for command in commands:
        git(repo, *shlex.split(command)[1:])


# -- add ---------------------------------------------------------------------------------
def test_add_writes_a_new_file_whose_owner_then_signs_an_oracle_change(tmp_path, capsys, keys):
    repo = make_repo(tmp_path)
    rc, out, err = signers(capsys, repo, "add", "alice@example.com", pub_path(keys["ed"]))
    assert (rc, err) == (0, "")
    fp = ssh_keygen_fingerprint(pub_path(keys["ed"]))
    assert out == (
        f"wrote {SIGNERS} (added a key for alice@example.com: ssh-ed25519 {fp}); "
        f"stage it with: git add {SIGNERS}\n"
    )
    assert (repo / SIGNERS).read_text() == HEADER + f"alice@example.com {pub(keys['ed'])}\n"
    stage_as_printed(repo, out)
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out + err
    commit(repo, message="the oracle")
    # the key the command wrote is an owner's: its signed change passes, an unsigned one not
    git(repo, "checkout", "-q", "-b", "change")
    write(repo, {"seeds/a.json": "[1, 2, 3]\n"})
    git(repo, "add", "-A")
    git(
        repo,
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={keys['ed']}",
        "commit",
        "-q",
        "-S",
        "-m",
        "owner appends a seed",
    )
    rc, out, err = run_guard(
        capsys, repo, "check", "--target", "main", "--head", "HEAD", "--now", NOW
    )
    assert rc == 0, out + err
    assert "an owner signed every commit" in out
    git(repo, "commit", "-q", "--amend", "--no-gpg-sign", "-m", "unsigned")
    rc, out, _ = run_guard(
        capsys, repo, "check", "--target", "main", "--head", "HEAD", "--now", NOW
    )
    assert rc == 1 and "oracle-change-unsigned" in out


def test_add_appends_a_line_and_keeps_comments_blank_lines_and_crlf(tmp_path, capsys, keys):
    shipped = (
        f"# owners of the oracle\r\n\r\n   # indented note\r\n"
        f"alice {key_of(keys['ed'])} alice laptop\r\n"
    )
    repo = make_repo(tmp_path, shipped)
    rc, out, err = signers(capsys, repo, "add", "bob", pub(keys["ec"]))
    assert (rc, err) == (0, ""), err
    assert (repo / SIGNERS).read_bytes() == (shipped + f"bob {pub(keys['ec'])}\r\n").encode()


def test_a_last_line_without_a_newline_gets_one(tmp_path, capsys, keys):
    repo = make_repo(tmp_path, f"alice {key_of(keys['ed'])}")
    assert signers(capsys, repo, "add", "bob", pub_path(keys["ec"]))[0] == 0
    assert (repo / SIGNERS).read_text() == f"alice {key_of(keys['ed'])}\nbob {pub(keys['ec'])}\n"


def test_a_second_key_for_the_same_principal_adds_a_line(tmp_path, capsys, keys):
    repo = make_repo(tmp_path, f"alice {pub(keys['ed'])}\n")
    rc, out, err = signers(capsys, repo, "add", "alice", pub_path(keys["ed2"]))
    assert (rc, err) == (0, "")
    assert "(added key 2 for alice: ssh-ed25519 SHA256:" in out
    assert (repo / SIGNERS).read_text() == f"alice {pub(keys['ed'])}\nalice {pub(keys['ed2'])}\n"


def test_key_text_and_a_private_key_with_its_pub_beside_it(tmp_path, capsys, keys):
    repo = make_repo(tmp_path, "")
    assert signers(capsys, repo, "add", "alice", str(keys["ed"]))[0] == 0  # the private key
    assert signers(capsys, repo, "add", "bob", key_of(keys["ec"]) + " bob's  desktop")[0] == 0
    assert (
        repo / SIGNERS
    ).read_text() == f"alice {pub(keys['ed'])}\nbob {key_of(keys['ec'])} bob's  desktop\n"


def test_a_relative_keyfile_is_read_from_the_folder_given_with_C(tmp_path, capsys, keys):
    repo = make_repo(tmp_path)
    (repo / "src/keys").mkdir()
    (repo / "src/keys/alice.pub").write_text(pub(keys["ed"]) + "\n")
    rc, out, err = signers(capsys, repo / "src", "add", "alice", "keys/alice.pub")
    assert (rc, err) == (0, "")
    assert out.endswith(f"stage it with: git add ../{SIGNERS}\n")
    stage_as_printed(repo / "src", out)
    assert SIGNERS in git(repo, "diff", "--cached", "--name-only")


@pytest.mark.parametrize("first,second", [("alice", "alice"), ("alice", "bob")])
def test_the_same_key_twice_is_refused(tmp_path, capsys, keys, first, second):
    repo = make_repo(tmp_path, f"# owners\n{first} {pub(keys['ed'])}\n")
    fp = ssh_keygen_fingerprint(pub_path(keys["ed"]))
    assert_refused(
        capsys,
        repo,
        ["add", second, key_of(keys["ed"]) + " another comment"],
        f"{SIGNERS}:2: the key {fp} is listed already (for {first})",
    )


@pytest.mark.parametrize(
    "name,why",
    [
        ("a*", "is a pattern"),
        ("?a", "is a pattern"),
        ("!alice", "is a pattern"),
        ("alice,bob", "holds a comma"),
        ("#alice", "the line would be a comment"),
        ("ali ce", "white space"),
        ("alice\n", "control character"),
        ("", "empty"),
        ('"alice"', "double quote"),
        ("ssh-ed25519", "missing principals"),
    ],
)
def test_a_principal_that_is_no_exact_name_is_refused(tmp_path, capsys, keys, name, why):
    repo = make_repo(tmp_path, f"carol {pub(keys['ec'])}\n")
    assert_refused(capsys, repo, ["add", "--", name, pub_path(keys["ed"])], why)


@pytest.mark.parametrize("name", ["alice@example.com", "a-b_c.d+e", "Zoë", "ci=bot"])
def test_exact_names_are_principals(tmp_path, capsys, keys, name):
    repo = make_repo(tmp_path, "")
    assert signers(capsys, repo, "add", name, pub_path(keys["ed"]))[0] == 0
    assert (repo / SIGNERS).read_text() == f"{name} {pub(keys['ed'])}\n"


def test_bad_keys_are_refused(tmp_path, capsys, keys):
    repo = make_repo(tmp_path, "")
    ed = key_of(keys["ed"])
    assert_refused(capsys, repo, ["add", "a", ed[:-1]], "key is not valid base64")
    assert_refused(capsys, repo, ["add", "a", ed[:-4]], "public key is truncated")
    assert_refused(
        capsys,
        repo,
        ["add", "a", "ssh-dss AAAAB3NzaC1kc3MAAACBAP"],
        "unsupported key type 'ssh-dss'",
    )
    assert_refused(
        capsys,
        repo,
        ["add", "a", "ssh-rsa " + ed.split()[1]],
        "the key inside is ssh-ed25519, not ssh-rsa",
    )
    assert_refused(capsys, repo, ["add", "a", ed + " a\x1bcomment"], "control character")
    assert_refused(
        capsys, repo, ["add", "a", str(tmp_path / "missing.pub")], "cannot read", "No such file"
    )
    two = tmp_path / "two.pub"
    two.write_text(pub(keys["ed"]) + "\n" + pub(keys["ec"]) + "\n")
    assert_refused(capsys, repo, ["add", "a", str(two)], "holds 2 key lines")
    alone = tmp_path / "alone"
    alone.write_bytes(keys["ed"].read_bytes())  # a private key without its .pub
    assert_refused(
        capsys, repo, ["add", "a", str(alone)], "is a private key and no .pub sits beside it"
    )
    assert (repo / SIGNERS).read_text() == ""


def test_a_file_that_does_not_parse_is_never_edited_nor_listed(tmp_path, capsys, keys):
    repo = make_repo(
        tmp_path, f'alice {pub(keys["ed"])}\nbob valid-before="2027" {key_of(keys["ec"])}\n'
    )
    for args in (["add", "carol", pub_path(keys["rsa"])], ["remove", "alice"], ["list"]):
        assert_refused(
            capsys,
            repo,
            args,
            f"{SIGNERS}:2: option valid-before is refused",
            "fix the file by hand first",
        )


def test_a_missing_file_is_not_listed_nor_removed_from(tmp_path, capsys):
    repo = make_repo(tmp_path)
    for args in (["list"], ["remove", "alice"]):
        assert_refused(
            capsys,
            repo,
            args,
            f"{SIGNERS} does not exist in the working tree",
            "oracle-guard signers add PRINCIPAL KEYFILE",
        )


# -- remove ------------------------------------------------------------------------------
def test_remove_takes_the_principal_from_every_line_and_drops_lines_left_empty(
    tmp_path, capsys, keys
):
    shipped = (
        f"# the release team\n"
        f"alice,bob {key_of(keys['ed'])} shared\n"
        f"  alice\t{key_of(keys['ed2'])}\n"
        f"# carol's desktop\n"
        f'carol,alice namespaces="git" {key_of(keys["ec"])}\n'
        f"dave {key_of(keys['rsa'])}"
    )
    repo = make_repo(tmp_path, shipped)
    rc, out, err = signers(capsys, repo, "remove", "alice")
    assert (rc, err) == (0, "")
    assert out == (f"wrote {SIGNERS} (removed alice: 3 keys); stage it with: git add {SIGNERS}\n")
    assert (repo / SIGNERS).read_text() == (
        f"# the release team\n"
        f"bob {key_of(keys['ed'])} shared\n"
        f"# carol's desktop\n"
        f'carol namespaces="git" {key_of(keys["ec"])}\n'
        f"dave {key_of(keys['rsa'])}"
    )


def test_remove_keeps_crlf(tmp_path, capsys, keys):
    repo = make_repo(tmp_path, f"a {key_of(keys['ed'])}\r\nb {key_of(keys['ec'])}\r\n")
    assert signers(capsys, repo, "remove", "a")[0] == 0
    assert (repo / SIGNERS).read_bytes() == f"b {key_of(keys['ec'])}\r\n".encode()


def test_removing_an_absent_principal_is_refused(tmp_path, capsys, keys):
    repo = make_repo(tmp_path, f"alice,bob {pub(keys['ed'])}\n")
    # names are exact: neither a prefix nor another case
    for name in ("alic", "Alice", "alice,bob", "*"):
        assert_refused(
            capsys,
            repo,
            ["remove", name],
            f"{SIGNERS} lists no key for {name!r} (principals: alice, bob)",
        )


def test_removing_the_last_owner_says_that_no_one_can_sign_now(tmp_path, capsys, keys):
    repo = make_repo(tmp_path, f"# owners\nalice {pub(keys['ed'])}\n")
    rc, out, _ = signers(capsys, repo, "remove", "alice")
    assert rc == 0
    assert out.splitlines()[1] == (
        f"note: {SIGNERS} lists no key now: no signed commit can "
        "change the oracle until an owner is added"
    )
    assert (repo / SIGNERS).read_text() == "# owners\n"


# -- list --------------------------------------------------------------------------------
def test_list_prints_each_principal_with_the_fingerprint_ssh_keygen_prints(tmp_path, capsys, keys):
    repo = make_repo(
        tmp_path,
        f"# owners\nalice@example.com {pub(keys['ed'])}\n\n"
        f"bob,carol {key_of(keys['ec'])}\n"
        f"rsa-owner {pub(keys['rsa'])}\n"
        f'filer namespaces="file" {key_of(keys["ed2"])}\n',
    )
    rc, out, err = signers(capsys, repo, "list")
    assert (rc, err) == (0, "")
    fp = {name: ssh_keygen_fingerprint(pub_path(keys[name])) for name in keys}
    assert out == (
        f"alice@example.com  ssh-ed25519          {fp['ed']}  (line 2)\n"
        f"bob                ecdsa-sha2-nistp256  {fp['ec']}  (line 4)\n"
        f"carol              ecdsa-sha2-nistp256  {fp['ec']}  (line 4)\n"
        f"rsa-owner          ssh-rsa              {fp['rsa']}  (line 5)\n"
        f"filer              ssh-ed25519          {fp['ed2']}  "
        f'(line 6; namespaces="file": cannot sign commits)\n'
    )


def test_list_escapes_names(tmp_path, capsys, keys):
    repo = make_repo(
        tmp_path, f"::warning[31m {key_of(keys['ed'])}\nx##[error] {key_of(keys['ec'])}\n"
    )
    rc, out, _ = signers(capsys, repo, "list")
    assert rc == 0
    first, second = out.splitlines()
    assert first.startswith("./::warning[31m  ssh-ed25519")
    assert second.startswith("x##\\[error]")


def test_list_refuses_a_name_with_a_control_character(tmp_path, capsys, keys):
    """ssh-keygen would read the escape into the name; here it is refused."""
    repo = make_repo(tmp_path, f"alice\x1b[31m {key_of(keys['ed'])}\n")
    rc, out, err = signers(capsys, repo, "list")
    assert rc == 2 and not out
    assert f"{SIGNERS}:1: holds control character U+001B at column 6" in err, err
    assert "\x1b" not in err


def test_list_of_an_empty_file(tmp_path, capsys):
    repo = make_repo(tmp_path, "# nobody yet\n")
    assert signers(capsys, repo, "list")[1] == (
        f"no keys in {SIGNERS}: 'oracle-guard signers add PRINCIPAL KEYFILE' adds one\n"
    )


# -- the contract and the working tree ---------------------------------------------------
def test_without_an_authority_section_each_command_says_how_to_add_it(tmp_path, capsys, keys):
    plain = CONTRACT.split("authority:")[0]
    repo = make_repo(tmp_path, f"alice {pub(keys['ed'])}\n", contract=plain)
    for args in (["add", "bob", pub_path(keys["ec"])], ["remove", "alice"], ["list"]):
        assert_refused(
            capsys,
            repo,
            args,
            "the contract in the index has no 'authority' "
            f"section: add '{ADD_AUTHORITY}' to .oracle-guard.yaml and git add it",
        )
    # the contract in the index counts, not the working tree's
    write(repo, {".oracle-guard.yaml": CONTRACT})
    assert_refused(capsys, repo, ["list"], "has no 'authority' section")
    git(repo, "add", ".oracle-guard.yaml")
    assert signers(capsys, repo, "list")[0] == 0


def test_a_symlinked_signers_file_is_refused(tmp_path, capsys, keys):
    outside = tmp_path / "outside_signers"
    outside.write_text(f"alice {pub(keys['ed'])}\n")
    repo = make_repo(tmp_path)
    (repo / ".oracle-guard").mkdir()
    os.symlink(outside, repo / SIGNERS)
    for args in (["add", "bob", pub_path(keys["ec"])], ["remove", "alice"], ["list"]):
        assert_refused(capsys, repo, args, f"{SIGNERS} in the working tree is a symlink")
    assert outside.read_text() == f"alice {pub(keys['ed'])}\n"
    assert os.path.islink(repo / SIGNERS)


def test_a_signers_file_behind_a_symlinked_folder_outside_the_repository_is_refused(
    tmp_path, capsys, keys
):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "allowed_signers").write_text(f"alice {pub(keys['ed'])}\n")
    repo = make_repo(tmp_path, contract=CONTRACT.replace(SIGNERS, "keys/allowed_signers"))
    os.symlink(outside, repo / "keys")
    for args in (["add", "bob", pub_path(keys["ec"])], ["remove", "alice"], ["list"]):
        assert_refused(
            capsys,
            repo,
            args,
            "keys/allowed_signers in the working tree lies in keys, which is a symlink",
            path="keys/allowed_signers",
        )
    assert sorted(os.listdir(outside)) == ["allowed_signers"]
    assert (outside / "allowed_signers").read_text() == f"alice {pub(keys['ed'])}\n"


def test_a_signers_file_in_the_git_folder_is_refused(tmp_path, capsys, keys):
    repo = make_repo(tmp_path, contract=CONTRACT.replace(SIGNERS, ".git/allowed_signers"))
    assert_refused(
        capsys,
        repo,
        ["add", "bob", pub_path(keys["ec"])],
        ".git/allowed_signers lies in a .git folder",
        path=".git/allowed_signers",
    )
    assert not (repo / ".git/allowed_signers").exists()


def test_a_signers_file_that_is_a_folder_is_refused(tmp_path, capsys, keys):
    repo = make_repo(tmp_path)
    (repo / SIGNERS).mkdir(parents=True)
    assert_refused(
        capsys,
        repo,
        ["add", "bob", pub_path(keys["ec"])],
        f"{SIGNERS} in the working tree is not a regular file",
    )


def test_no_contract_in_the_index(tmp_path, capsys, keys):
    repo = init_repo(tmp_path / "r")
    assert_refused(
        capsys, repo, ["add", "bob", pub_path(keys["ec"])], "no .oracle-guard.yaml in the index"
    )
    assert not (repo / SIGNERS).exists()
