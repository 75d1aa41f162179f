"""Real git repositories for tests (no mocks)."""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple, Union

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}

# Variables that change which revisions oracle-guard judges; tests set them explicitly.
REVISION_ENV = (
    "CI",
    "GITHUB_BASE_REF",
    "CI_MERGE_REQUEST_DIFF_BASE_SHA",
    "PRE_COMMIT_FROM_REF",
    "PRE_COMMIT_TO_REF",
    "ORACLE_GUARD_NOW",
)


@contextlib.contextmanager
def clean_environment() -> Iterator[None]:
    """No revision variables and a fixed identity, for fixtures wider than a test
    (conftest's per-test environment is not active at module scope)."""
    import pytest

    with pytest.MonkeyPatch.context() as mp:
        for name in REVISION_ENV:
            mp.delenv(name, raising=False)
        for name, value in GIT_ENV.items():
            mp.setenv(name, value)
        yield


def git(repo: Union[str, Path], *args: str, input: Optional[bytes] = None) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def init_repo(path: Union[str, Path], *, bare: bool = False) -> Path:
    path = Path(path)
    args = ["init", "-q", "-b", "main"] + (["--bare"] if bare else []) + [str(path)]
    subprocess.run(["git", *args], check=True)
    return path


def write(repo: Path, files: Mapping[str, Any]) -> None:
    """Write files: bytes as is, str as UTF-8, anything else as indented JSON."""
    for name, content in files.items():
        target = Path(repo) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        elif isinstance(content, str):
            target.write_bytes(content.encode("utf-8"))
        else:
            target.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")


def stage(repo: Path, files: Optional[Mapping[str, Any]] = None) -> None:
    if files:
        write(repo, files)
    git(repo, "add", "-A")


def commit(repo: Path, files: Optional[Mapping[str, Any]] = None, message: str = "change") -> str:
    """Write and stage ``files`` (all changes), commit, return the commit id."""
    stage(repo, files)
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def remove(repo: Path, *paths: str) -> None:
    git(repo, "rm", "-q", "-r", "--", *paths)


def run_guard(
    capsys, repo: Path, command: str, *args: str, env: Optional[Dict[str, str]] = None
) -> Tuple[int, str, str]:
    """Run ``oracle-guard COMMAND -C REPO ARGS`` in-process with an explicit
    environment (the revision variables of the test process are never read);
    returns (exit code, stdout, stderr)."""
    from oracle_guard.cli import main

    capsys.readouterr()
    rc = main([command, "-C", str(repo), *args], env=dict(env or {}))
    out, err = capsys.readouterr()
    return rc, out, err
