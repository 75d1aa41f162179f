"""Faults, each injected for real: no git, a git that dies, objects that are
gone or garbage, a bad clock, a hook that raises. Every one exits 2 with one
`oracle-guard: error:` line (JSON with an `error` key under --format json),
never 0."""

import hashlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from oracle_guard.checks.registry import check_module
from oracle_guard.commands import pre_receive
from oracle_guard.contract import CONTRACT_PATH
from oracle_guard.findings import HOOKS
from testing.faults import (
    batch_dies_after_first_object,
    blob_id,
    calls,
    cli_env,
    corrupt_object,
    delete_object,
    dying_git,
    logging_git,
    path_with,
    run_cli,
)
from testing.git import commit, git, init_repo, run_guard, stage
from testing.oracle import NOW
from testing.samples import sample_tree

CONTRACT = """\
version: 1
fixtures:
  - lock: oracle/fixtures.lock.json
    root: oracle/inputs
    paths: ["oracle/inputs/**"]
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
freeze:
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
budget:
  max_frozen: 2
write_set:
  allow: ["src/**"]
  owners: [alice]
tamper:
  paths: ["tests/**"]
identity_env: GL_USERNAME
"""
FIXTURE = "oracle/inputs/a.txt"
SEEDS = "seeds/a.json"
ALPHA = b"alpha\n"
INTERNAL = "internal error: RuntimeError: injected fault (rerun with --debug)"


def base_files(tag):
    """Every hook has something to read. ``tag`` makes the contract blob unique to
    the test, so no contract parsed in-process by an earlier test is reused."""
    lock = json.dumps({"a.txt": hashlib.sha256(ALPHA).hexdigest()}, indent=2) + "\n"
    return {
        ".oracle-guard.yaml": CONTRACT + f"# {tag}\n",
        FIXTURE: ALPHA,
        "oracle/fixtures.lock.json": lock,
        SEEDS: [1, 2],
        "oracle/flake_budget.yaml": "max_frozen: 2\nfrozen: []\n",
        "src/app.py": "print('v1')\n",
        "tests/test_app.py": "def test_app():\n    assert True\n",
    }


def sample_files(tag):
    """Every check's sample tree (hooks/checks/sample.py), so a check the registry
    gains has something to read here too, and the file the honest change edits."""
    tree = sample_tree()
    tree[CONTRACT_PATH] += f"# {tag}\n"
    return {**tree, "src/app.py": "print('v1')\n"}


def committed(repo, files):
    """``files`` committed, an honest change staged: a healthy run exits 0."""
    commit(repo, files, "oracle")
    stage(repo, {"src/app.py": "print('v2')\n"})
    return repo


@pytest.fixture
def repo(tmp_path):
    return committed(init_repo(tmp_path / "repo"), base_files(tmp_path.name))


@pytest.fixture
def sampled(tmp_path):
    return committed(init_repo(tmp_path / "repo"), sample_files(tmp_path.name))


def check(capsys, repo, *args, env=None):
    # each run starts cold, so every run makes the same git calls as the healthy one
    shutil.rmtree(Path(repo) / ".git" / "oracle-guard", ignore_errors=True)
    return run_guard(capsys, repo, "check", "--now", NOW, *args, env=env)


def assert_fault(rc, out, err, fmt="text"):
    """Exit 2, one error line on stderr, no traceback; JSON carries the same error."""
    assert rc == 2, (out, err)
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    message = err[len("oracle-guard: error: ") : -1]
    if fmt == "json":
        doc = json.loads(out)
        assert (doc["error"], doc["findings"], doc["checks"]) == (message, [], {})
    else:
        assert out == ""
    return message


# -- git missing from PATH ---------------------------------------------------------


@pytest.mark.parametrize("command", [["check"], ["lock"], ["lock", "--check"]])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_git_missing_from_path(repo, tmp_path, command, fmt):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    proc = run_cli(
        [*command, "-C", str(repo), "--now", NOW, "--format", fmt], cli_env(path=str(empty))
    )
    message = assert_fault(proc.returncode, proc.stdout, proc.stderr, fmt)
    assert message == "cannot run git: No such file or directory"


# -- a git that dies mid-run ----------------------------------------------------------


def healthy_calls(repo, tmp_path, monkeypatch, capsys, *args):
    """The git invocations of a healthy run, in order (the wrapper only logs)."""
    wrapper = logging_git(tmp_path / "log")
    monkeypatch.setenv("PATH", path_with(wrapper))
    rc, out, _ = check(capsys, repo, *args)
    assert rc in (0, 1), out
    found = calls(wrapper)
    shutil.rmtree(wrapper)
    return rc, out, found


def assert_every_phase_fails_closed(
    repo, tmp_path, monkeypatch, capsys, phases, *args, deaths=None, how="kill", fmt="text"
):
    for after, phase in enumerate(phases):
        folder = tmp_path / f"bin-{how}-{fmt}-{after}"
        wrapper = dying_git(folder, after, how, deaths=deaths)
        monkeypatch.setenv("PATH", path_with(wrapper))
        rc, out, err = check(capsys, repo, *args, "--format", fmt)
        assert len(calls(wrapper)) > after, phase  # the death was reached
        assert rc == 2, f"git dying at {phase!r}: exit {rc}\n{out}{err}"
        assert_fault(rc, out, err, fmt)


def test_a_check_runs_each_phase(repo, tmp_path, monkeypatch, capsys):
    """The dying-git tests below kill each invocation in turn; these are the phases
    they must reach."""
    _, _, phases = healthy_calls(repo, tmp_path, monkeypatch, capsys)
    kinds = [" ".join(p.split()[:2]) for p in phases]
    for kind in (
        "rev-parse --git-dir",
        "ls-files --stage",
        "ls-tree -r",
        "cat-file --batch",
    ):
        assert kind in kinds, phases


@pytest.mark.parametrize("how", ["kill", "exit"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_git_that_dies_from_some_invocation_on(repo, tmp_path, capsys, monkeypatch, how, fmt):
    _, _, phases = healthy_calls(repo, tmp_path, monkeypatch, capsys)
    assert_every_phase_fails_closed(repo, tmp_path, monkeypatch, capsys, phases, how=how, fmt=fmt)


def test_git_that_dies_once(tmp_path, capsys, monkeypatch):
    """One git process killed (the OOM killer, a timeout) while the rest work: the
    run must not carry on as if git had answered "no". The staged change rewrites a
    seed, so a run that judges it against the wrong base passes it."""
    repo = init_repo(tmp_path / "repo")
    commit(repo, base_files(tmp_path.name), "oracle")
    stage(repo, {SEEDS: [1, 5]})
    rc, out, phases = healthy_calls(repo, tmp_path, monkeypatch, capsys)
    assert rc == 1 and f"{SEEDS}:3: seed-rewritten" in out, out
    assert_every_phase_fails_closed(repo, tmp_path, monkeypatch, capsys, phases, deaths=1)


@pytest.mark.parametrize(
    "args",
    [["--head", "HEAD"], ["--base", "HEAD~1", "--head", "HEAD"]],
    ids=["head-alone", "base-and-head"],
)
def test_git_that_dies_once_while_judging_a_commit(tmp_path, capsys, monkeypatch, args):
    """`--head` alone asks git for the commit's parent: a git that dies there is not
    "a root commit" to judge against the empty tree."""
    repo = init_repo(tmp_path / "repo")
    commit(repo, base_files(tmp_path.name), "oracle")
    commit(repo, {SEEDS: [1, 5]}, "rewrite a seed")
    rc, out, phases = healthy_calls(repo, tmp_path, monkeypatch, capsys, *args)
    assert rc == 1 and f"{SEEDS}:3: seed-rewritten" in out, out
    assert_every_phase_fails_closed(repo, tmp_path, monkeypatch, capsys, phases, *args, deaths=1)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_cat_file_batch_that_exits_after_the_first_object(repo, tmp_path, capsys, monkeypatch, fmt):
    wrapper = batch_dies_after_first_object(tmp_path / "bin")
    monkeypatch.setenv("PATH", path_with(wrapper))
    rc, out, err = check(capsys, repo, "--format", fmt)
    message = assert_fault(rc, out, err, fmt)
    assert message.startswith("cannot read object ")
    assert message.endswith(": git cat-file exited")
    assert "cat-file --batch" in calls(wrapper)


def test_dying_git_as_a_process_prints_no_traceback(repo, tmp_path, monkeypatch, capsys):
    _, _, phases = healthy_calls(repo, tmp_path, monkeypatch, capsys)
    after = [p.split()[0] for p in phases].index("ls-tree")
    wrapper = dying_git(tmp_path / "bin", after, "kill")
    # cold, as the healthy run was: a warm run makes fewer calls
    shutil.rmtree(Path(repo) / ".git" / "oracle-guard", ignore_errors=True)
    proc = run_cli(["check", "-C", str(repo), "--now", NOW], cli_env(path_with(wrapper)))
    assert_fault(proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr == "oracle-guard: error: git ls-tree -r failed: exit -9\n"


# -- corrupt or missing objects ---------------------------------------------------------
# As separate processes: a long-lived interpreter could hold a parsed contract.


@pytest.mark.parametrize("fault", [delete_object, corrupt_object], ids=["deleted", "garbage"])
@pytest.mark.parametrize(
    "target", [".oracle-guard.yaml", FIXTURE, SEEDS], ids=["contract", "fixture", "seed"]
)
def test_missing_or_corrupt_blob(repo, fault, target):
    if target == SEEDS:  # a changed seed file: the base's blob is read to compare
        stage(repo, {SEEDS: [1, 2, 3]})
    oid = blob_id(repo, f"HEAD:{target}")
    fault(repo, oid)
    for fmt in ("text", "json"):
        proc = run_cli(["check", "-C", str(repo), "--now", NOW, "--format", fmt], cli_env())
        message = assert_fault(proc.returncode, proc.stdout, proc.stderr, fmt)
        assert message == f"cannot read object {oid}: {oid} missing"


@pytest.mark.parametrize("fault", [delete_object, corrupt_object], ids=["deleted", "garbage"])
def test_missing_or_corrupt_tree(repo, fault):
    oid = blob_id(repo, "HEAD^{tree}")
    fault(repo, oid)
    proc = run_cli(["check", "-C", str(repo), "--now", NOW, "--format", "json"], cli_env())
    message = assert_fault(proc.returncode, proc.stdout, proc.stderr, "json")
    # the contract is looked up by walking trees through cat-file --batch
    assert message.startswith(f"cannot read object {oid}: "), message


def test_healthy_objects_near_miss(repo):
    proc = run_cli(["check", "-C", str(repo), "--now", NOW], cli_env())
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stdout


# -- a malformed ORACLE_GUARD_NOW (the text form is in clock_test) ------------------------


def test_malformed_clock_from_the_environment_is_json(repo, capsys):
    rc, out, err = run_guard(
        capsys, repo, "check", "--format", "json", env={"ORACLE_GUARD_NOW": "2026-13-01"}
    )
    message = assert_fault(rc, out, err, "json")
    assert message.startswith("--now/ORACLE_GUARD_NOW '2026-13-01' is not a valid date")


# -- an exception inside a hook ---------------------------------------------------------


def raise_fault(*args, **kwargs):
    raise RuntimeError("injected fault")


@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_hook_that_raises(sampled, capsys, monkeypatch, hook, fmt):
    rc, out, _ = check(capsys, sampled, "--only", hook)
    assert rc == 0, out  # the hook runs and passes without the fault
    monkeypatch.setattr(check_module(hook), "check", raise_fault)
    rc, out, err = check(capsys, sampled, "--format", fmt)
    assert assert_fault(rc, out, err, fmt) == INTERNAL


def test_hook_that_raises_shows_its_traceback_with_debug(repo, capsys, monkeypatch):
    monkeypatch.setattr(check_module("seed-append-only"), "check", raise_fault)
    rc, out, err = check(capsys, repo, "--debug")
    assert (rc, out) == (2, "")
    assert err.startswith("Traceback (most recent call last):\n")
    assert err.endswith(f"RuntimeError: injected fault\noracle-guard: error: {INTERNAL}\n")


def test_hook_that_calls_exit_0(repo, capsys, monkeypatch):
    """A hook that ends the process with status 0 (a stray sys.exit()) must not pass."""

    def exit_quietly(*args, **kwargs):
        raise SystemExit(0)

    monkeypatch.setattr(check_module("write-set"), "check", exit_quietly)
    try:
        rc = run_guard(capsys, repo, "check", "--now", NOW)[0]
    except SystemExit as exc:
        rc = exc.code or 0
    assert rc == 2


# -- faults in the pre-receive gate -------------------------------------------------------


def served(tmp_path, monkeypatch, files):
    """A bare repository holding ``files`` and an honest change on main, entered
    as git enters it for the hook; returns the pre-receive line for that change."""
    work = init_repo(tmp_path / "work")
    old = commit(work, files, "oracle")
    new = commit(work, {"src/app.py": "print('v2')\n"}, "honest")
    bare = tmp_path / "srv.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--no-hardlinks", str(work), str(bare)], check=True
    )
    monkeypatch.chdir(bare)
    return bare, f"{old} {new} refs/heads/main\n"


@pytest.fixture
def server(tmp_path, monkeypatch):
    return served(tmp_path, monkeypatch, base_files(tmp_path.name))


@pytest.fixture
def sampled_server(tmp_path, monkeypatch):
    return served(tmp_path, monkeypatch, sample_files(tmp_path.name))


def receive(line, env=None):
    err = io.StringIO()
    rc = pre_receive.receive(io.StringIO(line), err, env or {"ORACLE_GUARD_NOW": NOW})
    return rc, err.getvalue()


def test_pre_receive_near_miss_accepts_the_honest_push(server):
    assert receive(server[1]) == (0, "oracle-guard: push accepted: 1 judged ref passed\n")


@pytest.mark.parametrize("hook", HOOKS)
def test_pre_receive_hook_that_raises_rejects_the_push(sampled_server, monkeypatch, hook):
    assert receive(sampled_server[1])[0] == 0  # near miss: without the fault it passes
    monkeypatch.setattr(check_module(hook), "check", raise_fault)
    rc, err = receive(sampled_server[1])
    assert (rc, err) == (
        2,
        "oracle-guard: push rejected: internal error: RuntimeError: injected fault\n",
    )


def test_pre_receive_hook_that_calls_exit_0_rejects_the_push(server, monkeypatch):
    def exit_quietly(*args, **kwargs):
        raise SystemExit(0)

    monkeypatch.setattr(check_module("seed-append-only"), "check", exit_quietly)
    try:
        rc = receive(server[1])[0]
    except SystemExit as exc:
        rc = exc.code or 0
    assert rc == 2


def test_pre_receive_missing_object_rejects_the_push(server):
    bare, line = server
    oid = blob_id(bare, f"main~1:{SEEDS}")
    delete_object(bare, oid)
    assert receive(line) == (
        2,
        f"oracle-guard: push rejected: cannot read object {oid}: {oid} missing\n",
    )


def test_pre_receive_git_missing_rejects_the_push(server, tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    rc, err = receive(server[1])
    assert (rc, err) == (
        2,
        "oracle-guard: push rejected: cannot run git: No such file or directory\n",
    )


# The gate runs six git commands for an update of the default branch (one
# rev-parse for the layout, the cat-file batch that resolves every tip and reads
# every object, symbolic-ref, rev-list, two diff-trees) and seven for a new ref
# (its merge-base too): each one dies in turn.
@pytest.mark.parametrize(
    "kind, after", [("update", n) for n in range(6)] + [("create", n) for n in range(7)]
)
def test_pre_receive_git_that_dies_once_rejects_the_push(
    server, tmp_path, monkeypatch, kind, after
):
    """An owner's push that rewrites a seed (seeds are append-only for owners too):
    a git that dies once must not turn the rejection into an acceptance."""
    bare, _ = server
    work = tmp_path / "work"
    old = git(work, "rev-parse", "HEAD").strip()
    new = commit(work, {SEEDS: [1, 5]}, "rewrite a seed")
    git(work, "push", "-q", str(bare), "HEAD:refs/heads/candidate")
    line = (
        f"{old} {new} refs/heads/main\n"
        if kind == "update"
        else f"{'0' * 40} {new} refs/heads/feature\n"
    )
    env = {"ORACLE_GUARD_NOW": NOW, "GL_USERNAME": "alice"}
    rc, err = receive(line, env)
    assert rc == 1 and f"{SEEDS}:3: seed-rewritten" in err, err
    wrapper = dying_git(tmp_path / "bin", after, "kill", deaths=1)
    monkeypatch.setenv("PATH", path_with(wrapper))
    rc, err = receive(line, env)
    assert len(calls(wrapper)) > after  # the death was reached
    assert rc == 2, err
    assert err.startswith("oracle-guard: push rejected: ") and err.count("\n") == 1, err
