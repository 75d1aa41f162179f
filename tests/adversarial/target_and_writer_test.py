"""Attacks on the newest surfaces: --target / ORACLE_GUARD_TARGET, the worktree
writer behind lock/init/freeze/seeds, and inert printed text. Each test is a
broken promise found by hand in a real repository; they fail until fixed."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat

from testing.git import commit, git, init_repo, run_guard, stage, write
from testing.oracle import NOW
from testing.samples import EXAMPLES, example_repo


def _commands_in(text: str):
    """Lines the GitHub Actions runner would act on: '::' after leading white space
    (its TryParseV2 trims with .NET's TrimStart), or '##[' anywhere (TryParse)."""
    return [line for line in text.splitlines() if line.lstrip().startswith("::") or "##[" in line]


def _raw_controls(text: str):
    """Characters a terminal or log viewer acts on: C0 (but LF), DEL and C1."""
    return sorted(
        {hex(ord(c)) for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F}
    )


# -- inert printed text ---------------------------------------------------------------


def test_text_report_line_cannot_start_a_command_after_leading_white_space(tmp_path, capsys):
    """inert() only looks for '::' at column 0, but the runner trims leading white
    space first: a file named ' ::error::...' (or with a no-break space) forges an
    annotation in the text report of any CI log."""
    repo = example_repo(tmp_path, "harness")
    stage(
        repo,
        {
            " ::error file=src/harness.py::forged by a file name": "x",
            "\u00a0::warning::forged with a no-break space": "y",
        },
    )
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 1, out
    assert _commands_in(out) == [], out


def test_github_report_escapes_control_characters_in_the_file_property(tmp_path, capsys):
    """github_property() escapes only %, CR, LF, ':' and ','; ESC and BEL from a
    file name reach the log raw (the text format escapes them)."""
    repo = example_repo(tmp_path, "harness")
    stage(repo, {"e\x1b[2Jclear\x07bell": "x"})
    rc, out, _ = run_guard(capsys, repo, "check", "--format", "github", "--now", NOW)
    assert rc == 1, out
    assert _raw_controls(out) == [], out


def test_github_report_escapes_control_characters_in_the_message(tmp_path, capsys):
    """seed-file-deleted names the new path of a renamed seed file raw, and
    github_data() keeps ESC and C1 (U+009B is CSI) in the message."""
    repo = example_repo(tmp_path, "harness")
    git(repo, "mv", "seeds/header_name.json", "src/\x1b[31mred\u009b[2J.json")
    rc, out, _ = run_guard(capsys, repo, "check", "--format", "github", "--now", NOW)
    assert rc == 1, out
    assert "renamed to" in out, out
    assert _raw_controls(out) == [], out


def test_json_report_holds_no_legacy_runner_command(tmp_path, capsys):
    """A path 'a##[error]...' is printed as is in --format json; the runner's
    legacy parser acts on '##[' anywhere in a line. JSON can escape it losslessly
    ('##\\u005b')."""
    repo = example_repo(tmp_path, "harness")
    stage(repo, {"a##[error]forged by a file name": "x"})
    rc, out, _ = run_guard(capsys, repo, "check", "--format", "json", "--now", NOW)
    assert rc == 1, out
    json.loads(out)
    assert _commands_in(out) == [], out


def test_sarif_report_holds_no_legacy_runner_command(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    git(repo, "mv", "seeds/header_name.json", "src/##[error]forged.json")
    rc, out, _ = run_guard(capsys, repo, "check", "--format", "sarif", "--now", NOW)
    assert rc == 1, out
    json.loads(out)
    assert _commands_in(out) == [], out


def test_error_line_holds_no_legacy_runner_command(tmp_path, capsys):
    """On a CI push build (CI set, no GITHUB_BASE_REF) the candidate's contract is
    read for its 'base'; a key the patch adds comes back in the one error line,
    which _fail prints without show_text/inert."""
    repo = example_repo(tmp_path, "harness")
    text = (repo / ".oracle-guard.yaml").read_text()
    stage(repo, {".oracle-guard.yaml": text + '"##[error]forged by the patch": 1\n'})
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW, env={"CI": "true"})
    assert rc == 2, out + err
    assert _commands_in(out + err) == [], err


def test_freeze_list_json_holds_no_legacy_runner_command(tmp_path, capsys):
    ident = "##[error]forged by an id"
    freeze = {
        "excluded_property_ids": [ident],
        "reason": {ident: "r"},
        "owner": {ident: "o"},
        "expires": {ident: "2026-10-01"},
    }
    repo = example_repo(tmp_path, "harness", {"freeze.json": freeze})
    from oracle_guard.cli import main

    capsys.readouterr()
    rc = main(["freeze", "list", "--format", "json", "--now", NOW, "-C", str(repo)], env={})
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    assert _commands_in(out) == [], out


def test_pre_receive_report_holds_no_legacy_runner_command(tmp_path, capsys, monkeypatch):
    """The pre-receive lines go through show_path/show_text but not inert(), so a
    pushed file name puts '##[' into the pusher's output (a bot pushing from CI)."""
    from oracle_guard.commands import pre_receive

    work = example_repo(tmp_path, "harness")
    server = tmp_path / "server.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(server))
    git(work, "checkout", "-q", "-b", "topic")
    new = commit(work, {"a##[error]forged by a pushed name": "x"})
    git(work, "push", "-q", str(server), "topic")
    monkeypatch.chdir(server)
    stderr = io.StringIO()
    rc = pre_receive.receive(
        io.StringIO(f"{'0' * 40} {new} refs/heads/topic2\n"), stderr, {"ORACLE_GUARD_NOW": NOW}
    )
    assert rc == 1, stderr.getvalue()
    assert _commands_in(stderr.getvalue()) == [], stderr.getvalue()


def test_init_output_escapes_names_it_prints(tmp_path, capsys):
    """init prints the unstaged fixture that blocks the lock and the files of its
    'git add' step raw: ESC and '##[' from file names reach the terminal/log."""
    repo = init_repo(tmp_path / "r")
    shutil.copytree(EXAMPLES / "harness", repo, dirs_exist_ok=True)
    os.remove(repo / ".oracle-guard.yaml")
    git(repo, "add", "-A")
    write(repo, {"fixtures/\x1b[31mred##[error]x.json": "{}"})
    rc, out, err = run_guard(capsys, repo, "init", "--dry-run", "--now", NOW)
    assert rc == 0, out + err
    assert "red" in out, out
    assert _raw_controls(out) == [] and _commands_in(out) == [], out


# -- worktree writes ----------------------------------------------------------------


def test_lock_never_writes_into_the_git_folder(tmp_path, capsys):
    """A contract's lock path is any normalized path, '.git/hooks/pre-commit'
    included: 'oracle-guard lock' overwrites the hook (keeping its exec bit) with
    JSON whose keys are fixture names; git runs it with sh, so a fixture named
    'fx/$(touch PWNED)' runs a command at the next commit. git never tracks a
    '.git' path, so no write may go there (nor through '.GIT' on macOS)."""
    repo = init_repo(tmp_path / "r")
    write(
        repo,
        {
            "fx/$(touch PWNED)": "x",
            ".oracle-guard.yaml": "version: 1\nfixtures:\n"
            "  - lock: .git/hooks/pre-commit\n"
            '    paths: ["fx/**"]\n',
        },
    )
    git(repo, "add", "-A")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    rc, out, err = run_guard(capsys, repo, "lock")
    assert hook.read_text() == "#!/bin/sh\nexit 0\n", out
    assert rc == 2, out + err


# -- --target / ORACLE_GUARD_TARGET ---------------------------------------------------


def _contract_added_later(tmp_path):
    """upstream: A (oracle, no contract), then B adds the contract; a clone of it."""
    upstream = example_repo(tmp_path, "harness")
    contract = (upstream / ".oracle-guard.yaml").read_bytes()
    git(upstream, "rm", "-q", "--cached", ".oracle-guard.yaml")
    os.remove(upstream / ".oracle-guard.yaml")
    commit(upstream, message="A: the oracle, before the contract")
    commit(upstream, {".oracle-guard.yaml": contract}, message="B: the contract")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    return clone


def test_target_branch_cannot_be_shadowed_by_a_tag(tmp_path, capsys):
    """'--target origin/main' (plain.sh, the push-build recipe of
    docs/how-to/ci-other.md) is resolved with rev-parse, where refs/tags/origin/main
    wins over refs/remotes/origin/main:
    anyone who can push a tag named 'origin/main' at a commit without the contract
    makes every seed rewrite pass. The CI-named base is resolved as a full ref name
    for exactly this reason."""
    clone = _contract_added_later(tmp_path)
    git(clone, "tag", "origin/main", "HEAD~1")
    git(clone, "checkout", "-q", "-b", "topic")
    commit(clone, {"seeds/header_name.json": '["rewritten"]\n'}, message="rewrite seeds")
    rc, out, err = run_guard(
        capsys, clone, "check", "--target", "origin/main", "--head", "HEAD", "--now", NOW
    )
    assert rc != 0, out + err


def test_pre_push_without_a_range_exits_2_with_a_target_too(tmp_path, capsys):
    """docs/explanation/revision-model.md: in a pre-push run where pre-commit passes
    no range, the run never judges the index (here, a pushed branch that does not
    exist: exit 2). With ORACLE_GUARD_TARGET set, a resolve() that returned from
    _from_merge_base before that check would judge the index (exit 0)."""
    repo = example_repo(tmp_path, "harness")
    git(repo, "checkout", "-q", "-b", "topic")
    commit(repo, {"src/more.py": "x = 1\n"})
    env = {
        "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/orphan",
        "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/orphan",
        "ORACLE_GUARD_TARGET": "main",
    }
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW, env=env)
    assert rc == 2, out + err
