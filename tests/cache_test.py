"""The verdict cache: keyed by blob id, kept in the git directory, used when
sound, ignored and rebuilt when corrupt, truncated or foreign."""

import hashlib
import json
import subprocess

import pytest

from testing.git import commit, git, init_repo, run_guard, stage

CONTRACT = """\
version: 1
fixtures:
  - {lock: fixtures.lock, root: fx, paths: ["fx/**"]}
"""
DATA = b"recorded exchange\n"


def guarded(tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT,
            "fx/a.bin": DATA,
            "fixtures.lock": f"{hashlib.sha256(DATA).hexdigest()}  a.bin\n",
        },
    )
    return repo


def cache_file(repo):
    return repo / ".git" / "oracle-guard" / "cache.json"


def digest_file(repo):
    """The SHA-256 table, a file of its own (read only when a digest is needed)."""
    return repo / ".git" / "oracle-guard" / "sha256.json"


def forget_fixture_verdicts(repo):
    """The cache without its fixture-entry verdicts: the next run hashes (or looks
    up) every fixture again, so what the digest table says counts."""
    from oracle_guard.cache import _checksum

    doc = json.loads(cache_file(repo).read_text())
    doc["entries"]["fixture"] = {}
    doc["checksum"] = _checksum(doc["entries"])
    cache_file(repo).write_text(json.dumps(doc))


def fixture_lock(capsys, repo, *args):
    return run_guard(capsys, repo, "check", "--only", "fixture-lock", *args)


def drop_loose_object(repo, path):
    oid = git(repo, "rev-parse", f"HEAD:{path}").strip()
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    return oid


def test_a_warm_run_reads_no_fixture_blob(tmp_path, capsys):
    repo = guarded(tmp_path)
    assert fixture_lock(capsys, repo)[0] == 0
    doc = json.loads(digest_file(repo).read_text())
    oid = git(repo, "rev-parse", "HEAD:fx/a.bin").strip()
    assert doc["entries"]["sha256"][oid] == hashlib.sha256(DATA).hexdigest()
    forget_fixture_verdicts(repo)  # so the digest table is what spares the blob
    drop_loose_object(repo, "fx/a.bin")
    # the blob is gone, yet its digest is known by its id: the cache was used
    rc, out, _ = fixture_lock(capsys, repo)
    assert rc == 0, out
    # without the cache the missing object is what it is: an error
    rc, _, err = fixture_lock(capsys, repo, "--no-cache")
    assert rc == 2
    assert "cannot read object" in err


def test_no_cache_writes_nothing(tmp_path, capsys):
    repo = guarded(tmp_path)
    assert fixture_lock(capsys, repo, "--no-cache")[0] == 0
    assert not cache_file(repo).exists()
    assert not digest_file(repo).exists()


def planted_wrong_digest(repo):
    """The digest table as the first run wrote it, then the fixture's digest
    falsified; the fixture verdicts are dropped, so the next run asks the table."""
    forget_fixture_verdicts(repo)
    doc = json.loads(digest_file(repo).read_text())
    oid = git(repo, "rev-parse", "HEAD:fx/a.bin").strip()
    doc["entries"]["sha256"][oid] = "0" * 64
    return doc


@pytest.mark.parametrize(
    "spoil",
    [
        "garbage",
        "truncated",
        "foreign key",
        "bad checksum",
        "wrong format",
        "bad entry",
        "a kind of the other file",
    ],
)
def test_a_spoiled_cache_is_ignored_and_rebuilt(tmp_path, capsys, spoil):
    repo = guarded(tmp_path)
    fixture_lock(capsys, repo)
    text = digest_file(repo).read_text()
    doc = planted_wrong_digest(repo)
    if spoil == "garbage":
        spoiled = "\x00\xff not json"
    elif spoil == "truncated":
        spoiled = text[: len(text) // 2]
    elif spoil == "foreign key":
        from oracle_guard.cache import _checksum

        doc["checksum"] = _checksum(doc["entries"])
        doc["key"] = "0.0.0:another-tool"
        spoiled = json.dumps(doc)
    elif spoil == "bad checksum":
        spoiled = json.dumps(doc)  # the falsified digest under the old checksum
    elif spoil == "wrong format":
        spoiled = json.dumps(dict(doc, format="something-else"))
    elif spoil == "a kind of the other file":  # sha256.json holds the digests alone
        from oracle_guard.cache import _checksum

        doc["entries"]["lock"] = {}
        doc["checksum"] = _checksum(doc["entries"])
        spoiled = json.dumps(doc)
    else:
        doc["entries"]["sha256"]["not-an-oid"] = "x"
        spoiled = json.dumps(doc)
    digest_file(repo).write_text(spoiled)
    rc, out, _ = fixture_lock(capsys, repo)
    assert rc == 0, out  # the true digest was computed again, not taken from the file
    rebuilt = json.loads(digest_file(repo).read_text())
    oid = git(repo, "rev-parse", "HEAD:fx/a.bin").strip()
    assert rebuilt["entries"]["sha256"][oid] == hashlib.sha256(DATA).hexdigest()


def test_a_sound_cache_entry_is_believed(tmp_path, capsys):
    # the near-miss of the spoiled cases: a well-formed, current cache is used as is
    # (it lives in the git directory, which the patches being judged cannot write)
    from oracle_guard.cache import _checksum

    repo = guarded(tmp_path)
    fixture_lock(capsys, repo)
    doc = planted_wrong_digest(repo)
    doc["checksum"] = _checksum(doc["entries"])
    digest_file(repo).write_text(json.dumps(doc))
    rc, out, _ = fixture_lock(capsys, repo)
    assert rc == 1
    assert "fx/a.bin: fixture-mismatch:" in out


# -- fixture-entry verdicts: a warm run lists, parses and hashes nothing -------------


def test_a_warm_run_needs_neither_the_fixture_blobs_nor_the_digest_table(tmp_path, capsys):
    repo = guarded(tmp_path)
    cold = fixture_lock(capsys, repo)
    assert cold[0] == 0, cold
    drop_loose_object(repo, "fx/a.bin")
    digest_file(repo).unlink()
    # the entry's verdict was found by its lock, its patterns and the index entries
    # under fx/: no fixture read or hashed, the digest table not needed
    assert fixture_lock(capsys, repo) == cold
    assert not digest_file(repo).exists()
    # the near-miss: without the cache the missing object is an error
    rc, _, err = fixture_lock(capsys, repo, "--no-cache")
    assert rc == 2 and "cannot read object" in err


@pytest.mark.parametrize("where", ["index", "--head"])
def test_a_change_outside_the_fixture_folders_keeps_the_verdict(tmp_path, capsys, where):
    repo = guarded(tmp_path)
    head = ["--head", "HEAD"] if where == "--head" else []
    assert fixture_lock(capsys, repo, *head)[0] == 0
    drop_loose_object(repo, "fx/a.bin")
    commit(repo, {"src/app.py": "x = 1\n"})  # outside fx/: the same tree and entries there
    rc, out, _ = fixture_lock(capsys, repo, *head)
    assert rc == 0, out


@pytest.mark.parametrize("where", ["index", "--head"])
def test_a_new_file_in_a_fixture_folder_is_a_new_verdict(tmp_path, capsys, where):
    # the near-miss: fx/ changed, so the cached pass is not this tree's
    repo = guarded(tmp_path)
    head = ["--head", "HEAD"] if where == "--head" else []
    assert fixture_lock(capsys, repo, *head)[0] == 0
    commit(repo, {"fx/b.bin": b"new\n"})
    rc, out, _ = fixture_lock(capsys, repo, *head)
    assert rc == 1
    assert "fx/b.bin: fixture-unlocked:" in out


def test_findings_naming_a_snapshot_are_not_reused_for_another(tmp_path, capsys):
    repo = guarded(tmp_path)
    git(repo, "rm", "-q", "fx/a.bin")
    git(repo, "commit", "-q", "-m", "the fixture gone, its entry kept")
    sha = git(repo, "rev-parse", "HEAD").strip()
    first = fixture_lock(capsys, repo, "--head", "HEAD")
    assert first[0] == 1 and "names no fixture file in HEAD" in first[1]
    again = fixture_lock(capsys, repo, "--head", sha)  # the same trees, another name
    assert again[0] == 1
    assert f"names no fixture file in {sha}" in again[1]
    assert again == fixture_lock(capsys, repo, "--head", sha, "--no-cache")


def falsified_pass(tmp_path, capsys):
    """A repository whose staged fixture mismatches, its verdict then cached as a pass."""
    from oracle_guard.cache import _checksum

    repo = guarded(tmp_path)
    stage(repo, {"fx/a.bin": b"rewritten\n"})
    assert fixture_lock(capsys, repo)[0] == 1
    doc = json.loads(cache_file(repo).read_text())
    ((key, verdict),) = doc["entries"]["fixture"].items()
    assert verdict["label"] == "the index" and verdict["findings"][0][0] == "fixture-mismatch"
    doc["entries"]["fixture"][key] = {"label": None, "findings": []}
    doc["checksum"] = _checksum(doc["entries"])
    return repo, doc, key


def test_a_sound_fixture_verdict_is_believed(tmp_path, capsys):
    # the near-miss of the spoiled cases below: well formed and current, it is used
    repo, doc, _ = falsified_pass(tmp_path, capsys)
    cache_file(repo).write_text(json.dumps(doc))
    assert fixture_lock(capsys, repo)[0] == 0


@pytest.mark.parametrize(
    "spoil",
    [
        "findings not a list",
        "finding too short",
        "line zero",
        "line a string",
        "no label on findings",
        "extra field",
        "key not a digest",
        "lock key without cap",
        "bad checksum",
    ],
)
def test_a_fixture_verdict_of_the_wrong_shape_spoils_the_cache_file(tmp_path, capsys, spoil):
    from oracle_guard.cache import _checksum

    repo, doc, key = falsified_pass(tmp_path, capsys)
    table = doc["entries"]["fixture"]
    finding = ["fixture-mismatch", "fx/a.bin", "sha256 ...", None]
    planted = {
        "findings not a list": {"label": None, "findings": "none"},
        "finding too short": {"label": "the index", "findings": [finding[:3]]},
        "line zero": {"label": "the index", "findings": [finding[:3] + [0]]},
        "line a string": {"label": "the index", "findings": [finding[:3] + ["1"]]},
        "no label on findings": {"label": None, "findings": [finding]},
        "extra field": {"label": None, "findings": [], "trusted": True},
    }
    if spoil in planted:
        table["f" * 64] = planted[spoil]
    elif spoil == "key not a digest":
        table["not-a-digest"] = table[key]
    elif spoil == "lock key without cap":  # the shape before the cap was in the key
        doc["entries"]["lock"][git(repo, "rev-parse", "HEAD:fixtures.lock").strip()] = True
    if spoil != "bad checksum":
        doc["checksum"] = _checksum(doc["entries"])
    else:
        doc["entries"]["fixture"][key] = {"label": None, "findings": []}
        doc["checksum"] = "0" * 64
    cache_file(repo).write_text(json.dumps(doc))
    rc, out, _ = fixture_lock(capsys, repo)
    assert rc == 1, out  # the falsified pass beside it was not believed either
    assert "fx/a.bin: fixture-mismatch:" in out


def test_a_changed_fixture_is_a_new_blob_and_a_new_verdict(tmp_path, capsys):
    repo = guarded(tmp_path)
    fixture_lock(capsys, repo)
    stage(repo, {"fx/a.bin": b"rewritten\n"})
    rc, out, _ = fixture_lock(capsys, repo)
    assert rc == 1
    assert "fx/a.bin: fixture-mismatch:" in out


def test_a_bare_server_repository_gets_the_cache_too(tmp_path):
    import sys

    repo = guarded(tmp_path)
    bare = tmp_path / "srv.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "oracle_guard",
            "check",
            "-C",
            str(bare),
            "--head",
            "HEAD",
            "--only",
            "fixture-lock",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (bare / "oracle-guard" / "cache.json").exists()


def test_a_cached_contract_needs_no_blob(tmp_path, capsys):
    repo = guarded(tmp_path)
    fixture_lock(capsys, repo)
    drop_loose_object(repo, ".oracle-guard.yaml")

    def fresh_process(*args):  # the in-process runs share parsed contracts in memory
        import sys

        return subprocess.run(
            [
                sys.executable,
                "-m",
                "oracle_guard",
                "check",
                "-C",
                str(repo),
                "--only",
                "fixture-lock",
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    assert fresh_process().returncode == 0
    missing = fresh_process("--no-cache")
    assert missing.returncode == 2
    assert "cannot read object" in missing.stderr


# -- freeze files: what a file holds, or why it is invalid, by blob id ----------------

FREEZE_CONTRACT = """\
version: 1
limits: {freeze_bytes: %d}
freeze:
  - {paths: ["budget.yaml"], schema: flake-budget}
budget:
  max_frozen: 3
"""
BUDGET = "max_frozen: 3\nfrozen:\n  - {id: t1, owner: ann, expires: 2026-12-01, reason: flaky}\n"


def freeze_repo(tmp_path, budget=BUDGET, cap=4096):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": FREEZE_CONTRACT % cap, "budget.yaml": budget})
    return repo


def guard_process(repo, *args):
    """A fresh process: what it imports shows whether the cache spared it the parse
    (yaml) and the validation (validator: the generated predicates, or jsonschema)."""
    import sys

    code = (
        "import sys, runpy; sys.argv = ['oracle-guard'] + sys.argv[1:]\n"
        "try:\n    runpy.run_module('oracle_guard', run_name='__main__')\n"
        "finally:\n    validators = ('oracle_guard._generated.validators', 'jsonschema')\n"
        "    seen = {'validator': any(m in sys.modules for m in validators), "
        "'yaml': 'yaml' in sys.modules}\n"
        "    print('IMPORTED', *sorted(k for k, v in seen.items() if v), file=sys.stderr)\n"
    )
    return subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "check",
            "-C",
            str(repo),
            "--head",
            "HEAD",
            "--now",
            "2026-11-30",
            "--only",
            "freeze-schema,flake-budget",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_warm_freeze_check_parses_and_validates_nothing(tmp_path):
    repo = freeze_repo(tmp_path)
    cold = guard_process(repo)
    assert cold.returncode == 0, cold.stdout + cold.stderr
    assert "IMPORTED validator yaml" in cold.stderr
    warm = guard_process(repo)
    assert (warm.returncode, warm.stdout) == (0, cold.stdout)
    assert "IMPORTED\n" in warm.stderr  # neither the YAML parser nor the validator
    # the near-miss: without the cache every run parses again
    assert "IMPORTED validator yaml" in guard_process(repo, "--no-cache").stderr


def test_an_invalid_freeze_file_stays_invalid_when_cached(tmp_path):
    repo = freeze_repo(tmp_path, budget=BUDGET.replace("owner: ann, ", ""))
    cold, warm = guard_process(repo), guard_process(repo)
    assert cold.returncode == warm.returncode == 1
    assert "budget.yaml:3: freeze-invalid:" in warm.stdout
    assert warm.stdout == cold.stdout
    assert "IMPORTED\n" in warm.stderr


def test_a_lower_size_cap_holds_for_a_cached_file(tmp_path):
    repo = freeze_repo(tmp_path, budget="# padding\n" * 150 + BUDGET)  # 1.7 KiB
    assert guard_process(repo).returncode == 0  # cached under a 4 KiB cap
    commit(repo, {".oracle-guard.yaml": FREEZE_CONTRACT % 1024})
    commit(repo, {"src.py": "x = 1\n"})  # the rules come from the base: now the lowered cap
    lowered = guard_process(repo)
    assert lowered.returncode == 1
    assert "limits.freeze_bytes" in lowered.stdout


def test_a_freeze_verdict_of_the_wrong_shape_spoils_the_whole_cache(tmp_path):
    from oracle_guard.cache import _checksum

    repo = freeze_repo(tmp_path)
    guard_process(repo)
    doc = json.loads(cache_file(repo).read_text())
    ((key, verdict),) = doc["entries"]["freeze"].items()
    # a verdict that would hide the entry from the budget count, in the wrong shape
    doc["entries"]["freeze"][key] = dict(verdict, records="none")
    doc["checksum"] = _checksum(doc["entries"])
    cache_file(repo).write_text(json.dumps(doc))
    rerun = guard_process(repo)
    assert rerun.returncode == 0
    assert "IMPORTED validator yaml" in rerun.stderr  # parsed again, not believed
    rebuilt = json.loads(cache_file(repo).read_text())
    assert rebuilt["entries"]["freeze"][key] == verdict


# -- a verdict is keyed by everything that made it, not by the blob alone -------------------

NAMED_CONTRACT = """\
version: 1
freeze:
  - {paths: ["x.yaml", "x.yml", "x.json"], schema: freeze}
"""
YAML_FREEZE = "excluded_property_ids: [p1]\nreason: {p1: flaky}\n"  # YAML, not JSON


def judged_three_ways(repo):
    """`check --format json` on HEAD: warm (the cache an earlier run left), cold
    (the cache file deleted first) and with --no-cache, each in a fresh process."""

    def run(*args):
        return guard_process(repo, "--format", "json", *args)

    warm = run()
    cache_file(repo).unlink()
    cold = run()
    off = run("--no-cache")
    return [(p.returncode, p.stdout, p.stderr.split("IMPORTED")[0]) for p in (warm, cold, off)]


def freeze_keys(repo):
    return sorted(json.loads(cache_file(repo).read_text())["entries"]["freeze"])


def test_the_same_yaml_blob_at_a_json_path_fails_warm_as_cold(tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": NAMED_CONTRACT, "x.yaml": YAML_FREEZE})
    first = guard_process(repo, "--format", "json")
    assert first.returncode == 0, first.stdout + first.stderr  # YAML at x.yaml: passes
    git(repo, "mv", "x.yaml", "x.json")
    git(repo, "commit", "-q", "-m", "the same blob, now read as JSON")
    (warm, cold, off) = judged_three_ways(repo)
    assert cold[0] == 1 and "x.json" in cold[1] and "does not parse" in cold[1], cold
    assert warm == cold == off  # before: warm passed on the verdict cached for x.yaml
    assert len(freeze_keys(repo)) == 1  # cold run: only the JSON verdict


def test_the_same_yaml_blob_under_another_yaml_name_keeps_its_verdict(tmp_path):
    # the near-miss: .yml picks the same loader, so the cached verdict is the right one
    # and is used (no new entry, nothing parsed), and the three runs still agree
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": NAMED_CONTRACT, "x.yaml": YAML_FREEZE})
    assert guard_process(repo).returncode == 0
    before = freeze_keys(repo)
    git(repo, "mv", "x.yaml", "x.yml")
    git(repo, "commit", "-q", "-m", "the same blob under another YAML name")
    warm = guard_process(repo)
    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert "IMPORTED\n" in warm.stderr  # the verdict came from the cache
    assert freeze_keys(repo) == before
    (warm, cold, off) = judged_three_ways(repo)
    assert warm[0] == 0 and warm == cold == off


@pytest.mark.parametrize("spoil", ["no loader or cap", "unknown loader", "over its cap"])
def test_a_freeze_key_of_the_wrong_shape_spoils_the_whole_cache(tmp_path, spoil):
    from oracle_guard.cache import _checksum

    repo = freeze_repo(tmp_path)
    guard_process(repo)
    doc = json.loads(cache_file(repo).read_text())
    ((key, verdict),) = doc["entries"]["freeze"].items()
    oid, loader, cap, schema = key.split(":", 3)
    assert (loader, cap, schema) == ("yaml", "4096", "flake-budget")
    planted = {
        "no loader or cap": (f"{oid}:{schema}", verdict),  # the old shape
        "unknown loader": (f"{oid}:toml:{cap}:{schema}", verdict),
        "over its cap": (f"{oid}:{loader}:1024:{schema}", dict(verdict, size=2048)),
    }
    doc["entries"]["freeze"].update([planted[spoil]])
    doc["checksum"] = _checksum(doc["entries"])
    cache_file(repo).write_text(json.dumps(doc))
    rerun = guard_process(repo)
    assert rerun.returncode == 0
    assert "IMPORTED validator yaml" in rerun.stderr  # the whole file was ignored
    assert json.loads(cache_file(repo).read_text())["entries"]["freeze"] == {key: verdict}


# -- the tool's own files: the key changes when one does, without reading them all ---------


def files_key(folder):
    from oracle_guard.cache import _digest_files

    digest = hashlib.sha256()
    _digest_files(digest, str(folder), ".py")
    return digest.hexdigest()


def source_folder(tmp_path):
    folder = tmp_path / "tool"
    (folder / "layer").mkdir(parents=True)
    (folder / "a.py").write_text("A = 1\n")
    (folder / "layer" / "b.py").write_text("B = 2\n")
    (folder / "notes.txt").write_text("not a source\n")
    return folder


def test_a_source_rewritten_to_the_same_size_and_times_changes_the_key(tmp_path):
    import os

    folder = source_folder(tmp_path)
    before = files_key(folder)
    path = folder / "layer" / "b.py"
    st = path.stat()
    with open(path, "r+b") as f:  # in place: same inode, same size
        f.write(b"B = 3\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the time set back
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert files_key(folder) != before


@pytest.mark.parametrize("change", ["new source", "source removed", "source renamed"])
def test_a_source_added_removed_or_renamed_changes_the_key(tmp_path, change):
    folder = source_folder(tmp_path)
    before = files_key(folder)
    if change == "new source":
        (folder / "c.py").write_text("")
    elif change == "source removed":
        (folder / "a.py").unlink()
    else:
        (folder / "a.py").rename(folder / "z.py")
    assert files_key(folder) != before


def test_untouched_sources_and_other_files_keep_the_key(tmp_path):
    folder = source_folder(tmp_path)
    before = files_key(folder)
    (folder / "notes.txt").write_text("edited, but not a source\n")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "a.cpython-311.py").write_text("")  # bytecode's folder
    assert (folder / "a.py").read_text() == "A = 1\n"  # read, not written
    assert files_key(folder) == before


def test_a_source_that_cannot_be_stat_ed_still_makes_a_key(tmp_path):
    import os

    folder = source_folder(tmp_path)
    before = files_key(folder)
    (folder / "a.py").unlink()
    os.symlink(folder / "gone.py", folder / "a.py")  # dangling: stat fails
    assert files_key(folder) != before
