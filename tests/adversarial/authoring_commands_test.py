"""Attacks on the authoring commands (freeze, seeds append, lock --add) and on the
reports: each test is a broken promise of docs/how-to/edit-the-oracle.md or of the
report formats, found by hand in real repositories. They fail until fixed."""

from __future__ import annotations

import hashlib
import os
import resource
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from testing.git import commit, git, run_guard, stage, write
from testing.oracle import NOW
from testing.samples import example_repo

BUDGET = "oracle/flake_budget.yaml"


def og(capsys, repo, *args):
    """``oracle-guard ARGS -C REPO`` in-process (run_guard puts -C right after the
    command, before a subcommand's action); (exit code, stdout, stderr)."""
    from oracle_guard.cli import main

    capsys.readouterr()
    rc = main([*args, "-C", str(repo)], env={})
    out, err = capsys.readouterr()
    return rc, out, err


def tree_bytes(root: Path) -> dict:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def one_error_line(err: str) -> None:
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1, err


# -- writes go where git looks, and a refusal leaves every file as it was -------------


@pytest.mark.parametrize(
    "example, folder, command, one_line",
    [
        (
            "merge-contract",
            "oracle",
            (
                "freeze",
                "add",
                "late_check",
                "--owner",
                "qa",
                "--reason",
                "timing",
                "--days",
                "3",
                "--now",
                NOW,
            ),
            True,
        ),
        (
            "harness",
            "seeds",
            (
                "seeds",
                "append",
                "seeds/header_name.json",
                '{"raw": "Z: z", "expect_name": "Z"}',
            ),
            False,
        ),
    ],
    ids=["freeze-add", "seeds-append"],
)
def test_authoring_never_writes_through_a_symlinked_folder(
    tmp_path, capsys, example, folder, command, one_line
):
    """git sees oracle/flake_budget.yaml as deleted once oracle/ is a symlink (its
    'git add' fails: 'beyond a symbolic link'), yet the command reads and writes
    the file behind the link, outside the repository. The same for seeds/ and
    seeds append."""
    repo = example_repo(tmp_path, example)
    outside = tmp_path / "elsewhere"
    os.rename(repo / folder, outside)
    os.symlink(outside, repo / folder)
    before = tree_bytes(outside)
    rc, out, err = og(capsys, repo, *command)
    assert tree_bytes(outside) == before, out
    assert rc == 2, out + err
    if one_line:  # freeze add's refusal was also checked to be one clear line
        one_error_line(err)


def _limit_file_size():  # runs in the child: writes beyond 1 KiB fail with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.RLIM_INFINITY))


def test_a_failed_write_leaves_the_file_byte_identical(tmp_path):
    """The file is truncated, then the write fails (a full disk, a quota, EFBIG):
    exit 2 with 'cannot write', but the budget is left cut off halfway."""
    header = "# " + "x" * 900 + "\n"
    repo = example_repo(tmp_path, "merge-contract")
    budget = repo / BUDGET
    write(repo, {BUDGET: header + budget.read_text("utf-8")})
    commit(repo, message="a long comment")
    before = budget.read_bytes()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "ORACLE_GUARD_NOW")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "oracle_guard",
            "freeze",
            "add",
            "late_check",
            "--owner",
            "qa",
            "--reason",
            "timing",
            "--days",
            "3",
            "--now",
            NOW,
            "-C",
            str(repo),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=_limit_file_size,
    )
    assert proc.returncode == 2, proc.stderr
    assert budget.read_bytes() == before


# -- refusals: what the hooks reject, in one clear line -------------------------------


def test_renew_to_an_expiry_beyond_max_days_is_refused_even_when_unchanged(tmp_path, capsys):
    """docs/how-to/edit-the-oracle.md: an expiry beyond max_days is refused. Renewing to the same too-far date
    the entry already has exits 0 ('renewed ... until 2026-12-01') with a note."""
    repo = example_repo(
        tmp_path,
        "merge-contract",
        {
            BUDGET: (
                "max_frozen: 3\nfrozen:\n  - id: a\n    owner: o\n"
                '    expires: "2026-12-01"\n    reason: r\n'
            )
        },
    )
    rc, out, err = og(capsys, repo, "freeze", "renew", "a", "--until", "2026-12-01", "--now", NOW)
    assert rc == 2, out + err
    one_error_line(err)
    assert "budget-too-far" in err


def test_days_out_of_range_is_a_clear_refusal_not_an_internal_error(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    for days in ("999999999", "-999999999"):
        rc, out, err = og(
            capsys,
            repo,
            "freeze",
            "renew",
            "canonicalize_unicode_hyphen",
            "--days",
            days,
            "--now",
            NOW,
        )
        assert rc == 2
        one_error_line(err)
        assert "internal error" not in err, err


def test_lock_add_of_a_non_utf8_name_is_a_clear_refusal(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    raw = b"oracle/inputs/bad\xff.json"
    with open(os.path.join(os.fsencode(repo), raw), "wb") as f:
        f.write(b"{}\n")
    stage(repo)
    before = tree_bytes(repo)
    rc, out, err = og(capsys, repo, "lock", "--add", os.fsdecode(raw))
    assert rc == 2
    one_error_line(err)
    assert "internal error" not in err, err
    assert tree_bytes(repo) == before


# -- the file keeps its layout ----------------------------------------------------------


def test_freeze_add_keeps_crlf_in_a_quarantine_list(tmp_path, capsys):
    crlf = (
        '[\r\n  {\r\n    "test": "t1",\r\n    "owner": "billing",\r\n'
        '    "expires": "2026-10-05",\r\n    "reason": "x"\r\n  }\r\n]\r\n'
    )
    repo = example_repo(tmp_path, "oracle-dir", {"oracle/quarantine.json": crlf})
    rc, out, err = og(
        capsys,
        repo,
        "freeze",
        "add",
        "t2",
        "--owner",
        "qa",
        "--reason",
        "r",
        "--days",
        "3",
        "--now",
        NOW,
    )
    assert rc == 0, out + err
    data = (repo / "oracle/quarantine.json").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n"), data


def test_seeds_append_keeps_crlf_in_a_json_array(tmp_path, capsys):
    crlf = '[\r\n  {\r\n    "a": 1\r\n  }\r\n]\r\n'
    repo = example_repo(tmp_path, "harness", {"seeds/header_name.json": crlf})
    rc, out, err = og(capsys, repo, "seeds", "append", "seeds/header_name.json", '{"b": [1, 2]}')
    assert rc == 0, out + err
    data = (repo / "seeds/header_name.json").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n"), data


def test_seeds_append_keeps_crlf_in_jsonl_without_a_final_newline(tmp_path, capsys):
    corpus = b'{"id":"a"}\r\n{"id":"b"}'
    repo = example_repo(tmp_path, "oracle-dir", {"oracle/corpus.jsonl": corpus})
    # a corpus-line record (the example's records rule); --digest fills in its hash
    record = '{"id":"c","test":"t","payload":1,"expect":"fail"}'
    rc, out, err = og(capsys, repo, "seeds", "append", "--digest", "oracle/corpus.jsonl", record)
    assert rc == 0, out + err
    data = (repo / "oracle/corpus.jsonl").read_bytes()
    # line 2 ends in a bare LF: a CR added to it is a rewrite of that seed for
    # seed-append-only (seed_append_only_test: crlf on an existing line fails)
    new = (
        b'{"expect":"fail","id":"c","payload":1,"payload_sha256":"'
        + hashlib.sha256(b"1").hexdigest().encode()
        + b'","test":"t"}'
    )  # sorted keys, as the file's lines are (one key each)
    assert data == b'{"id":"a"}\r\n{"id":"b"}\n' + new + b"\r\n", data


def test_renew_keeps_an_explicit_str_tag(tmp_path, capsys):
    """`expires: !!str 2026-09-30` becomes `expires: 2026-09-29`: the tag the author
    wrote is dropped, and YAML 1.1 tools (PyYAML's safe_load) now read a date."""
    repo = example_repo(
        tmp_path,
        "merge-contract",
        {
            BUDGET: (
                "max_frozen: 3\nfrozen:\n  - id: a\n    owner: o\n"
                "    expires: !!str 2026-09-30\n    reason: r\n"
            )
        },
    )
    rc, out, err = og(capsys, repo, "freeze", "renew", "a", "--days", "4", "--now", NOW)
    assert rc == 0, out + err
    data = yaml.safe_load((repo / BUDGET).read_text("utf-8"))
    assert data["frozen"][0]["expires"] == "2026-09-29", data


# -- what the commands print ------------------------------------------------------------


def test_printed_git_add_works_where_the_command_ran(tmp_path, capsys):
    """-C DIR runs as if started in DIR; the 'git add' printed is relative to the
    repository root, so from a subfolder it fails ('did not match any files')."""
    repo = example_repo(tmp_path, "merge-contract")
    rc, out, err = og(
        capsys,
        repo / "src",
        "freeze",
        "add",
        "late_check",
        "--owner",
        "qa",
        "--reason",
        "timing",
        "--days",
        "3",
        "--now",
        NOW,
    )
    assert rc == 0, out + err
    command = out.split("stage it with: ", 1)[1].splitlines()[0]
    git(repo / "src", *shlex.split(command)[1:])


def test_freeze_list_escapes_ids_and_owners(tmp_path, capsys):
    """Ids and owners come from files a patch can write: a newline forges a line
    (a workflow command in a CI log), an escape sequence reaches the terminal."""
    repo = example_repo(
        tmp_path,
        "merge-contract",
        {
            BUDGET: (
                'max_frozen: 3\nfrozen:\n  - id: "a\\n::error title=x::forged"\n'
                '    owner: "o\\e[31mRED"\n    expires: "2026-09-30"\n    reason: r\n'
            )
        },
    )
    rc, out, err = og(capsys, repo, "freeze", "list", "--now", NOW)
    assert rc == 0, err
    assert "\x1b" not in out
    assert not any(line.startswith("::") for line in out.splitlines()), out


def test_text_report_cannot_be_forged_by_a_file_name(tmp_path, capsys):
    """freeze-invalid's 'duplicate id ... (also in PATH)' puts a raw path in the
    message; the text report prints it as is, so a name with newlines adds lines."""
    repo = example_repo(tmp_path, "replay-queue")
    record = (repo / "quarantine/active/retry_budget.yaml").read_text("utf-8")
    name = "quarantine/active/a\n::error title=x::forged by a file name\n.yaml"
    stage(repo, {name: record})
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 1, out + err
    assert not any(line.startswith("::") for line in out.splitlines()), out
