"""`oracle-guard lock --add PATH`: one new, staged fixture's digest goes into the
lock it belongs to, in the lock's style and order; no other entry is rehashed or
rewritten; what fixture-lock would reject is refused with exit 2."""
from __future__ import annotations

import hashlib
import json
import shlex
import subprocess

from testing.samples import EXAMPLES, example_repo
from testing.git import commit, git, run_guard, stage, write

NOW = "2026-09-25"
LOCK = "oracle/fixtures.lock.json"
SUMS = "fixtures/SHA256SUMS"
NEW = b'{"sku": "new", "cents": 250}\n'


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()




def lock_add(capsys, repo, path, *more):
    return run_guard(capsys, repo, "lock", "--add", path, *more)


def assert_every_hook_passes(capsys, repo, lock):
    git(repo, "add", "--", lock)
    rc, out, err = run_guard(capsys, repo, "check", "--only", "fixture-lock,seed-append-only,"
                             "freeze-schema,flake-budget", "--now", NOW)
    assert rc == 0, out + err
    commit(repo, message="owner adds a fixture")
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out + err
    assert "failed" not in out


def assert_refused(capsys, repo, path, *expected, more=()):
    locks = {p: (repo / p).read_bytes() for p in (LOCK, SUMS, "oracle/corpus.sha256")
             if (repo / p).exists()}
    rc, out, err = lock_add(capsys, repo, path, *more)
    assert rc == 2, out + err
    assert out == ""
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1, err
    for text in expected:
        assert text in err, (text, err)
    assert {p: (repo / p).read_bytes() for p in locks} == locks


def test_json_lock_gets_the_new_key_in_sorted_place(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/discounts.json": NEW})
    rc, out, err = lock_add(capsys, repo, "oracle/inputs/discounts.json")
    assert (rc, err) == (0, "")
    assert out == (f"added oracle/inputs/discounts.json to {LOCK} (sha256 {sha(NEW)[:12]}…); "
                   f"stage it with: git add {LOCK}\n")
    shipped = (EXAMPLES / "merge-contract" / LOCK).read_text()
    assert (repo / LOCK).read_text() == shipped.replace(
        '{\n', '{\n  "discounts.json": "' + sha(NEW) + '",\n')
    assert_every_hook_passes(capsys, repo, LOCK)


def test_sha256sum_lock_gets_a_line_that_sha256sum_checks(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    stage(repo, {"fixtures/zz_new.json": NEW, "fixtures/aa_new.json": b"[]\n"})
    for path in ("fixtures/zz_new.json", "./fixtures/aa_new.json"):
        rc, out, err = lock_add(capsys, repo, path)
        assert (rc, err) == (0, ""), out
    shipped = (EXAMPLES / "harness" / SUMS).read_text()
    assert (repo / SUMS).read_text() == (f"{sha(b'[]' + bytes([10]))}  aa_new.json\n"
                                         + shipped + f"{sha(NEW)}  zz_new.json\n")
    proc = subprocess.run(["sha256sum", "--check", "--strict", "SHA256SUMS"],
                          cwd=repo / "fixtures", stdout=subprocess.PIPE)
    assert proc.returncode == 0, proc.stdout
    assert_every_hook_passes(capsys, repo, SUMS)


def test_an_unsorted_lock_gets_the_key_at_the_end_and_nothing_else_changes(tmp_path, capsys):
    stale = "0" * 64  # a wrong digest for pricing.json: not rehashed, not rewritten
    lock = '{"zeta.json": "%s",\n "pricing.json": "%s"}' % (sha(b"z\n"), stale)
    repo = example_repo(tmp_path, "merge-contract", {LOCK: lock,
                                                     "oracle/inputs/zeta.json": b"z\n"})
    stage(repo, {"oracle/inputs/a.json": NEW})
    rc, out, err = lock_add(capsys, repo, "oracle/inputs/a.json")
    assert (rc, err) == (0, ""), out
    assert (repo / LOCK).read_text() == \
        lock[:-1] + ',\n "a.json": "%s"}' % sha(NEW)
    git(repo, "add", LOCK)
    rc, check_out, _ = run_guard(capsys, repo, "check", "--only", "fixture-lock")
    assert rc == 1  # the stale entry still fails, as it did before
    assert "oracle/inputs/pricing.json: fixture-mismatch" in check_out
    assert "a.json" not in check_out


def test_a_fixture_that_is_not_staged_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    write(repo, {"oracle/inputs/new.json": NEW})
    assert_refused(capsys, repo, "oracle/inputs/new.json", "'oracle/inputs/new.json' is not "
                   "tracked", "run 'git add oracle/inputs/new.json' first")
    git(repo, "add", "oracle/inputs/new.json")
    write(repo, {"oracle/inputs/new.json": NEW + b"more\n"})
    assert_refused(capsys, repo, "oracle/inputs/new.json", "has changes git has not staged")


def test_a_path_outside_every_fixtures_entry_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"src/new.py": b"x = 1\n"})
    assert_refused(capsys, repo, "src/new.py",
                   "src/new.py matches no fixtures entry of the contract (oracle/inputs/**)")
    assert_refused(capsys, repo, LOCK, "matches no fixtures entry")  # the lock itself


def test_an_already_locked_fixture_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    assert_refused(capsys, repo, "oracle/inputs/pricing.json",
                   f"oracle/inputs/pricing.json is already locked in {LOCK} "
                   "(key 'pricing.json')", "run 'oracle-guard lock'")


def test_a_single_digest_lock_is_refused(tmp_path, capsys):
    contract = (EXAMPLES / "oracle-dir/.oracle-guard.yaml").read_text().replace(
        'paths: ["oracle/corpus.jsonl"]', 'paths: ["oracle/corpus*.jsonl"]')
    repo = example_repo(tmp_path, "oracle-dir", {".oracle-guard.yaml": contract})
    stage(repo, {"oracle/corpus2.jsonl": b"1\n"})
    assert_refused(capsys, repo, "oracle/corpus2.jsonl",
                   "oracle/corpus.sha256 is a single-digest lock")


def test_a_fixture_outside_the_root_is_refused(tmp_path, capsys):
    contract = (EXAMPLES / "merge-contract/.oracle-guard.yaml").read_text().replace(
        'paths: ["oracle/inputs/**"]', 'paths: ["oracle/inputs/**", "oracle/extra.json"]')
    repo = example_repo(tmp_path, "merge-contract", {".oracle-guard.yaml": contract})
    stage(repo, {"oracle/extra.json": NEW})
    assert_refused(capsys, repo, "oracle/extra.json", "lies outside the lock's root "
                   "'oracle/inputs'")


def test_a_missing_or_broken_lock_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/new.json": NEW})
    (repo / LOCK).write_text('{"pricing.json": "abc"}\n')
    assert_refused(capsys, repo, "oracle/inputs/new.json", f"{LOCK}:1:",
                   "is not 64 lowercase hex digits", "rewrite it with 'oracle-guard lock'")
    (repo / LOCK).unlink()
    assert_refused(capsys, repo, "oracle/inputs/new.json",
                   f"{LOCK} does not exist yet: run 'oracle-guard lock'")


def test_add_and_check_together_are_an_error(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/new.json": NEW})
    assert_refused(capsys, repo, "oracle/inputs/new.json", "use one of them", more=["--check"])


def test_lock_json_key_order_is_kept_for_one_entry(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/zz.json": NEW})
    assert lock_add(capsys, repo, "oracle/inputs/zz.json")[0] == 0
    assert list(json.loads((repo / LOCK).read_text())) == ["pricing.json", "zz.json"]


# -- all locks or none; names a lock cannot hold; where the git add works -----------------
def _limit_file_size():  # runs in the child: writes beyond 1 KiB fail with EFBIG
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.RLIM_INFINITY))


def test_two_locks_are_written_both_or_neither(tmp_path):
    """The second lock's write fails (EFBIG): the first, already prepared, is left
    as it was too, and no temporary file stays behind."""
    import os
    import sys

    second = "oracle/more.lock.json"
    contract = (EXAMPLES / "merge-contract/.oracle-guard.yaml").read_text().replace(
        "freeze:", f"  - lock: {second}\n    root: oracle/inputs\n"
                   "    paths: [\"oracle/inputs/**\"]\nfreeze:")
    padded = "{\n" + " " * 1100 + (EXAMPLES / "merge-contract" / LOCK).read_text()[2:]
    repo = example_repo(tmp_path, "merge-contract", {".oracle-guard.yaml": contract,
                                                     second: padded})
    stage(repo, {"oracle/inputs/new.json": NEW})
    before = {p: (repo / p).read_bytes() for p in (LOCK, second)}
    listing = sorted(os.listdir(repo / "oracle"))
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "ORACLE_GUARD_NOW")}
    proc = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "lock", "--add", "oracle/inputs/new.json",
         "-C", str(repo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        preexec_fn=_limit_file_size)
    assert proc.returncode == 2, proc.stderr
    assert b"cannot write oracle/more.lock.json: File too large" in proc.stderr
    assert {p: (repo / p).read_bytes() for p in (LOCK, second)} == before
    assert sorted(os.listdir(repo / "oracle")) == listing
    proc = subprocess.run(  # near miss: without the limit, both locks get the key
        [sys.executable, "-m", "oracle_guard", "lock", "--add", "oracle/inputs/new.json",
         "-C", str(repo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.returncode == 0, proc.stderr
    assert all(b'"new.json"' in (repo / p).read_bytes() for p in (LOCK, second))


def test_plain_lock_refuses_a_fixture_name_that_is_not_utf8(tmp_path, capsys):
    import os

    repo = example_repo(tmp_path, "merge-contract")
    with open(os.path.join(os.fsencode(repo), b"oracle/inputs/bad\xff.json"), "wb") as f:
        f.write(b"{}\n")
    stage(repo)
    before = (repo / LOCK).read_bytes()
    rc, out, err = run_guard(capsys, repo, "lock")
    assert rc == 2, out + err
    assert err == ("oracle-guard: error: cannot lock oracle/fixtures.lock.json: "
                   "oracle/inputs/bad\\xff.json is not a valid UTF-8 file name: a lock "
                   "(UTF-8 text) cannot name it; rename the file\n")
    assert (repo / LOCK).read_bytes() == before


def test_the_printed_git_add_works_from_a_subfolder(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/new.json": NEW})
    rc, out, err = lock_add(capsys, repo / "oracle" / "inputs", "oracle/inputs/new.json")
    assert rc == 0, out + err
    assert out.endswith("stage it with: git add ../fixtures.lock.json\n")
    git(repo / "oracle" / "inputs", *shlex.split(out.split("stage it with: ")[1])[1:])
    assert git(repo, "diff", "--name-only") == ""
    stage(repo, {"oracle/inputs/newer.json": NEW + b"\n"})
    rc, out, err = run_guard(capsys, repo / "src", "lock")
    assert rc == 0, out + err
    assert out == f"wrote {LOCK} (3 files); stage it with: git add ../{LOCK}\n"


# -- names GNU sha256sum escapes -----------------------------------------------------

def gnu_check(root):
    return subprocess.run(["sha256sum", "--check", "--strict", "SHA256SUMS"], cwd=root,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_an_escaped_name_gets_gnus_escaped_line(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    names = ["fixtures/new\nline.json", "fixtures/back\\slash.json", "fixtures/cr\r.json"]
    stage(repo, {name: NEW for name in names})
    for name in names:
        rc, out, err = lock_add(capsys, repo, name)
        assert (rc, err) == (0, ""), out
    text = (repo / SUMS).read_text()
    for line in (f"\\{sha(NEW)}  new\\nline.json\n", f"\\{sha(NEW)}  back\\\\slash.json\n",
                 f"\\{sha(NEW)}  cr\\r.json\n"):
        assert line in text, text
    proc = gnu_check(repo / "fixtures")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_every_hook_passes(capsys, repo, SUMS)


def test_a_tagged_lock_gets_a_tagged_line(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    root = repo / "fixtures"
    tagged = subprocess.run(["sha256sum", "--tag", "exchange_example.json"], cwd=root,
                            stdout=subprocess.PIPE, check=True).stdout
    write(repo, {SUMS: tagged})
    stage(repo, {"fixtures/a\\b.json": NEW})
    rc, out, err = lock_add(capsys, repo, "fixtures/a\\b.json")
    assert (rc, err) == (0, ""), out
    assert (repo / SUMS).read_bytes() == \
        f"\\SHA256 (a\\\\b.json) = {sha(NEW)}\n".encode() + tagged
    assert gnu_check(root).returncode == 0
    assert_every_hook_passes(capsys, repo, SUMS)


def test_a_json_lock_gets_a_backslash_key(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/a\\b\n.json": NEW})
    rc, out, err = lock_add(capsys, repo, "oracle/inputs/a\\b\n.json")
    assert (rc, err) == (0, ""), out
    assert json.loads((repo / LOCK).read_text())["a\\b\n.json"] == sha(NEW)
    assert_every_hook_passes(capsys, repo, LOCK)


def test_a_dash_at_the_root_of_a_sha256sum_lock_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    stage(repo, {"fixtures/-": NEW})
    assert_refused(capsys, repo, "fixtures/-",
                   "fixtures/- is named '-' at the lock's root, which 'sha256sum -c' reads "
                   "as standard input: a sha256sum lock cannot name it; rename the file, or "
                   "use a JSON lock")
