"""Size caps (the contract's `limits`) and the loader's own bounds: a file above
its cap is a finding and is never loaded."""

import pytest

from oracle_guard.parsing import strict_input, strict_json
from testing.git import commit, init_repo, run_guard, stage

CONTRACT = """\
version: 1
limits: {freeze_bytes: 2048, seed_bytes: 4096, lock_bytes: 1024}
fixtures:
  - {lock: fixtures.lock, root: fx, paths: ["fx/**"]}
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
freeze:
  - {paths: ["quarantine.json"], schema: quarantine-list}
"""
FX = b"fixture\n"


def repo_with(tmp_path, files):
    import hashlib

    repo = init_repo(tmp_path / "r")
    lock = f"{hashlib.sha256(FX).hexdigest()}  a.txt\n"
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT,
            "fx/a.txt": FX,
            "fixtures.lock": lock,
            "seeds/a.json": [1],
            "quarantine.json": [],
        },
    )
    stage(repo, files)
    return repo


def quarantine(n):
    entries = ",\n".join(
        f'  {{"test": "t{i:04d}", "owner": "o", "expires": "2026-10-01"}}' for i in range(n)
    )
    return f"[\n{entries}\n]\n"


@pytest.mark.parametrize("entries,over", [(40, True), (20, False)])
def test_freeze_file_above_freeze_bytes(tmp_path, capsys, entries, over):
    text = quarantine(entries)
    assert (len(text) > 2048) is over
    repo = repo_with(tmp_path, {"quarantine.json": text})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "freeze-schema")
    if over:
        assert rc == 1
        assert (
            f"quarantine.json: freeze-invalid: is {len(text):,} bytes, above the limit "
            "of 2,048 (limits.freeze_bytes): not loaded"
        ) in out
    else:
        assert rc == 0, out


@pytest.mark.parametrize("count,over", [(1500, True), (800, False)])
def test_seed_file_above_seed_bytes(tmp_path, capsys, count, over):
    text = "[" + ", ".join(["1"] * count) + "]\n"
    assert (len(text) > 4096) is over
    repo = repo_with(tmp_path, {"seeds/a.json": text})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "seed-append-only")
    if over:
        assert rc == 1
        assert (
            f"seeds/a.json: seed-invalid: is {len(text):,} bytes, above the limit of "
            "4,096 (limits.seed_bytes): not loaded"
        ) in out
    else:
        assert rc == 0, out


def test_lock_above_lock_bytes(tmp_path, capsys):
    import hashlib

    line = f"{hashlib.sha256(FX).hexdigest()}  a.txt\n"
    repo = repo_with(tmp_path, {"fixtures.lock": line + "\n" * 2000})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "fixture-lock")
    assert rc == 1
    assert "fixtures.lock: lock-invalid: lock file is 2,072 bytes, above the limit of 1,024" in out


def test_lock_within_lock_bytes_passes(tmp_path, capsys):
    repo = repo_with(tmp_path, {})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "fixture-lock")
    assert rc == 0, out


def test_contract_above_one_mib_is_a_contract_error(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {".oracle-guard.yaml": "version: 1\n" + "#" * (1 << 20) + "\n"})
    rc, _, err = run_guard(capsys, repo, "check")
    assert rc == 2
    assert err.startswith(
        "oracle-guard: error: .oracle-guard.yaml in the index is 1,048,588 "
        "bytes, above the limit of 1,048,576"
    )


def test_limits_below_a_kibibyte_are_a_contract_error(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {".oracle-guard.yaml": "version: 1\nlimits: {seed_bytes: 10}\n"})
    rc, _, err = run_guard(capsys, repo, "check")
    assert rc == 2
    assert "invalid contract at $.limits.seed_bytes: 10 is less than the minimum of 1024" in err


@pytest.mark.parametrize("text", [b'["\\ud800"]', b'{"\\udfff": 1}', b'[1, "a\\udc80b"]'])
def test_lone_surrogate_escapes_are_rejected(text):
    with pytest.raises(strict_input.LoadError, match="lone surrogate"):
        strict_json.load_json(text)
    with pytest.raises(strict_input.LoadError, match="lone surrogate"):
        strict_json.load_json(text, positions=True)


def test_a_surrogate_pair_is_text():
    assert strict_json.load_json(b'["\\ud83d\\ude00"]').value == ["\U0001f600"]


@pytest.mark.parametrize("digits,ok", [(4000, True), (4001, False)])
def test_integer_digits_are_bounded_the_same_on_both_parsers(digits, ok):
    text = b"[-" + b"9" * digits + b"]"
    for positions in (False, True):
        if ok:
            assert strict_json.load_json(text, positions=positions).value[0] < 0
        else:
            with pytest.raises(strict_input.LoadError, match="too many digits"):
                strict_json.load_json(text, positions=positions)
