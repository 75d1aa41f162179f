"""Property: `oracle-guard lock` (and `lock --add`) never writes a lock its own check
rejects, and every sha256sum lock it writes verifies with GNU `sha256sum -c` run from
the lock's root.

Each example builds a real repository whose fixtures have generated names: a
backslash, LF, CR, tab, ')', '*', '-', a leading or trailing space, non-ASCII,
bytes that are not UTF-8, and components longer than the file system holds (those
go into the index with `git update-index --index-info`, marked skip-worktree, so
git sees no unstaged change). `lock` must then either lock every fixture, in a lock
the check passes, or refuse up front with one line, and only for a name the style
cannot hold (not UTF-8; '-' at the root of a sha256sum lock).

Replayed from the fixed seed of testing/bounds.py (``property_settings``);
ORACLE_GUARD_EXPLORE=1 explores with a random one.
"""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

from hypothesis import assume, event, given
from hypothesis import strategies as st

from oracle_guard.checks import fixture_lock
from testing.bounds import property_settings
from testing.git import git, init_repo, run_guard

ROOT = "in"
FORMS = {
    "json": "locks/fixtures.lock.json",
    "text": "locks/SHA256SUMS",
    "binary": "locks/SHA256SUMS",
    "tag": "locks/SHA256SUMS",
}
ANCHOR = "a.txt"  # always there and always on disk: GNU verifies at least one file

# No 'g': no '.git' component (and none of its NTFS spellings) can come up.
_plain = st.text(alphabet=list("abZ09 -_.()*#=é\\\n\r\t\x7f"), min_size=1, max_size=6)
_special = st.sampled_from(
    [
        "-",
        "\\",
        "\n",
        "\r",
        " ",
        "*",
        "(x",
        "p)q) = 0",
        "SHA256 (x) = y",
        "\\n",
        "..\n",
        " lead",
        "trail ",
        "é",
    ]
)
_not_utf8 = st.sampled_from(["bad\udcff", "\udce9t\udce9"])  # b"bad\xff", b"\xe9t\xe9"
_too_long = st.integers(256, 300).map(lambda n: "L" * n)  # above NAME_MAX
_component = st.one_of(_plain, _plain, _plain, _special, _special, _not_utf8, _too_long).filter(
    lambda c: c not in (".", "..")
)
names = st.lists(_component, min_size=1, max_size=3).map("/".join)
fixture_sets = st.dictionaries(names, st.binary(max_size=16), max_size=6)


def conflicts(paths: List[str]) -> bool:
    """A file and a folder of the same name cannot both be tracked."""
    return any(other.startswith(p + "/") for p in paths for other in paths)


def expressible(key: str, style: str) -> bool:
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not (style == "sha256sum" and key == "-")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def raw(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def put(repo: Path, files: Dict[str, bytes]) -> List[str]:
    """Write and stage ``files`` (paths from the repository root); a name the file
    system cannot hold goes into the index alone. Returns those index-only paths."""
    index_only = []
    for path, data in files.items():
        target = os.fsencode(repo) + b"/" + raw(path)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
        except OSError as exc:
            assert exc.errno == errno.ENAMETOOLONG, exc
            index_only.append(path)
            continue
        subprocess.run(["git", "-C", str(repo), "add", "--", raw(path)], check=True)
    if index_only:
        lines = b""
        for path in index_only:
            oid = subprocess.run(
                ["git", "-C", str(repo), "hash-object", "-w", "--stdin"],
                input=files[path],
                stdout=subprocess.PIPE,
                check=True,
            ).stdout.strip()
            lines += b"100644 " + oid + b"\t" + raw(path) + b"\0"
        subprocess.run(
            ["git", "-C", str(repo), "update-index", "-z", "--index-info"], input=lines, check=True
        )
        subprocess.run(
            ["git", "-C", str(repo), "update-index", "-z", "--skip-worktree", "--stdin"],
            input=b"".join(raw(p) + b"\0" for p in index_only),
            check=True,
        )
    return index_only


def first_lock(form: str) -> Optional[str]:
    """An existing lock in ``form`` (lock keeps it); None: a new lock, styled by name."""
    if form == "binary":
        return f"{'0' * 64} *{ANCHOR}\n"
    if form == "tag":
        return f"SHA256 ({ANCHOR}) = {'0' * 64}\n"
    return None


def make_repo(base: Path, form: str) -> Path:
    repo = init_repo(Path(tempfile.mkdtemp(dir=base)) / "r")
    files = {
        ".oracle-guard.yaml": (
            f"version: 1\nfixtures:\n  - lock: {FORMS[form]}\n"
            f"    root: {ROOT}\n    paths: ['{ROOT}/**']\n"
        ).encode(),
        f"{ROOT}/{ANCHOR}": b"anchor\n",
    }
    existing = first_lock(form)
    if existing is not None:
        files[FORMS[form]] = existing.encode()
    put(repo, files)
    git(repo, "commit", "-q", "-m", "contract")
    return repo


def gnu_verifies(repo: Path, lock: str, locked: Dict[str, bytes], index_only: List[str]):
    """`sha256sum -c --strict` from the root: every line well formed, every file on
    disk OK, and only the index-only ones unreadable."""
    proc = subprocess.run(
        ["sha256sum", "--check", "--strict", os.path.relpath(lock, ROOT)],
        cwd=repo / ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert b"improperly formatted" not in proc.stderr, proc.stderr
    lines = proc.stdout.split(b"\n")
    assert sum(line.endswith(b": FAILED") for line in lines) == 0, proc.stdout
    assert sum(line.endswith(b": FAILED open or read") for line in lines) == len(index_only)
    assert sum(line.endswith(b": OK") for line in lines) == len(locked) - len(index_only)
    assert (proc.returncode == 0) == (not index_only), proc.stderr


def passes_check(capsys, repo: Path, lock: str) -> None:
    git(repo, "add", "--", lock)
    rc, out, err = run_guard(capsys, repo, "check", "--only", "fixture-lock")
    assert (rc, err) == (0, ""), out
    assert "fixture-lock: passed" in out


def refused_in_one_line(rc: int, out: str, err: str, repo: Path, lock: str, before) -> None:
    assert (rc, out) == (2, ""), out + err
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1, err
    assert "is not a valid UTF-8 file name" in err or "a sha256sum lock cannot name it" in err, err
    assert _read(repo / lock) == before


def _read(path: Path) -> Optional[bytes]:
    return path.read_bytes() if path.exists() else None


@property_settings(max_examples=60)
@given(
    form=st.sampled_from(sorted(FORMS)),
    fixtures=fixture_sets,
    extra=names,
    extra_data=st.binary(max_size=16),
)
def test_lock_writes_only_locks_both_checks_pass(
    capsys, tmp_path, form, fixtures, extra, extra_data
):
    fixtures = {**fixtures, ANCHOR: b"anchor\n"}
    assume(not conflicts(list(fixtures)))
    style = "json" if form == "json" else "sha256sum"
    lock = FORMS[form]
    repo = make_repo(tmp_path, form)
    index_only = put(repo, {f"{ROOT}/{k}": d for k, d in fixtures.items() if k != ANCHOR})
    before = _read(repo / lock)

    rc, out, err = run_guard(capsys, repo, "lock")
    event(
        f"{form}: {len(index_only)} index-only, escaped: "
        f"{any(fixture_lock.escape_name(k)[0] for k in fixtures)}"
    )
    if not all(expressible(k, style) for k in fixtures):
        event("lock refused")
        refused_in_one_line(rc, out, err, repo, lock, before)
        return
    assert (rc, err) == (0, ""), out + err
    assert f"({len(fixtures)} file{'s' if len(fixtures) != 1 else ''})" in out, out
    text = (repo / lock).read_bytes()
    if style == "sha256sum":
        first = text.split(b"\n", 1)[0].decode()
        assert fixture_lock.parse_sum_line(first)[2] == form
    passes_check(capsys, repo, lock)
    if style == "sha256sum":
        gnu_verifies(repo, lock, fixtures, [p[len(ROOT) + 1 :] for p in index_only])

    # lock --add: one more fixture, written in the lock's style and form
    assume(extra not in fixtures and not conflicts([*fixtures, extra]))
    index_only += put(repo, {f"{ROOT}/{extra}": extra_data})
    before = _read(repo / lock)
    rc, out, err = run_guard(capsys, repo, "lock", "--add", f"{ROOT}/{extra}")
    if not expressible(extra, style):
        event("lock --add refused")
        refused_in_one_line(rc, out, err, repo, lock, before)
        return
    event("lock --add wrote")
    assert (rc, err) == (0, ""), out + err
    passes_check(capsys, repo, lock)
    if style == "sha256sum":
        gnu_verifies(
            repo, lock, {**fixtures, extra: extra_data}, [p[len(ROOT) + 1 :] for p in index_only]
        )
