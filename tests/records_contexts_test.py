"""Record integrity in every context: a commit being made (the index, with or
without an owner's signing configuration), the CI range, a pre-push, and a real
push to a bare repository with the hook installed. Owners sign their commits
(real ssh-keygen keys, real `git commit -S`); a promotion an owner did not sign
is the write set's usual finding."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterator, Tuple

import pytest

from oracle_guard.checks.records import digest_of
from testing import scenarios, tiers
from testing.git import commit, git, write
from testing.records import corpus_line, replay_case
from testing.server import file_url, make_client, make_server, push
from testing.signatures import SIGNERS

CONTEXTS = ("staged", "ci", "prepush", "push")
CORPUS = "oracle/corpus.jsonl"
REPLAY = "replays/2026-09-23_parse_header.json"
NEW = "replays/2026-09-24_retry.json"
CONTRACT = f"""\
version: 1
seeds:
  - paths: ["oracle/corpus.jsonl"]
    format: jsonl
    records: corpus-line
    digest: {{field: payload_sha256, of: payload, form: json-sorted-compact-utf8}}
  - paths: ["replays/*.json"]
    format: immutable
    records: replay-case
    lock: seeds.lock
    promote: [expected, promoted_to]
  - {{paths: ["seeds.lock"], format: json-object}}
write_set:
  allow: ["src/**"]
authority:
  signers: {SIGNERS}
"""


def jsonl(*values: Any) -> str:
    return "".join(json.dumps(v, separators=(",", ":")) + "\n" for v in values)


BASE_LINE = corpus_line("inv-014", {"items": [{"qty": 0, "price": "-0.01"}]})
BASE_CASE = replay_case("parse_header_a3f1", {"raw": "X-Trace: 00-abc"})
FILES = {
    ".oracle-guard.yaml": CONTRACT,
    CORPUS: jsonl(BASE_LINE),
    REPLAY: BASE_CASE,
    "seeds.lock": {"parse_header_a3f1": 1729, "retry_budget_9c2": 42},
    "src/app.py": "",
}


def keygen(folder: Path, name: str) -> Path:
    key = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


_SEEDED: Dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def _seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One server with the hook and a client on branch ``change`` whose main, pushed
    by a real push, holds FILES and the owner's key; built at the module's first
    test (under its environment), and copied by every test (Repo)."""
    _SEEDED["root"] = tmp_path_factory.mktemp("seeded")
    yield
    _SEEDED.clear()


def _seed() -> Path:
    root = _SEEDED["root"]
    if not (root / "work").exists():
        keys = root / "keys"
        keys.mkdir()
        owner = keygen(keys, "owner")
        public = " ".join(owner.with_suffix(".pub").read_text().split()[:2])
        server = make_server(root / "srv.git")
        client = make_client(root / "building", server)
        commit(client, {**FILES, SIGNERS: f"alice {public}\n"}, "the oracle")
        assert push(client, "main").rc == 0
        git(client, "fetch", "-q", "origin")
        git(client, "remote", "set-head", "origin", "main")
        git(client, "checkout", "-q", "-b", "change")
        client.rename(root / "work")
    return root


class Repo:
    """A server with the hook, a client whose main holds FILES, and an owner's key:
    a copy of the module's seeded one."""

    def __init__(self, tmp_path: Path) -> None:
        seeded = _seed()
        for name in ("keys", "srv.git", "work"):
            shutil.copytree(seeded / name, tmp_path / name, symlinks=True)
        self.owner = tmp_path / "keys" / "owner"
        self.server, self.client = tmp_path / "srv.git", tmp_path / "work"
        git(self.client, "remote", "set-url", "origin", file_url(self.server))

    def change(self, files: Dict[str, Any], signed: bool, context: str) -> Tuple[str, FrozenSet]:
        """Make the change (staged, or committed and signed when ``signed``) and
        judge it in ``context``: (verdict, {'path: code'})."""
        write(self.client, files)
        git(self.client, "add", "-A")
        if context == "staged":
            if signed:  # the configuration that will sign the commit with the owner's key
                git(self.client, "config", "gpg.format", "ssh")
                git(self.client, "config", "user.signingkey", str(self.owner.with_suffix(".pub")))
                git(self.client, "config", "commit.gpgsign", "true")
            got = scenarios.guard(self.client, env={})
            return got.verdict, got.codes
        signing = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={self.owner}"]
        git(
            self.client,
            *(signing if signed else []),
            "commit",
            "-q",
            *(["-S"] if signed else []),
            "-m",
            "oracle change",
        )
        return scenarios.judge_pushed_or_ranged(self.client, self.server, context)


REFORMATTED = (
    '{"expect": "fail", "payload": {"qty": 1.00, "note": "\\u00e9"}, "payload_sha256": '
    f'"{digest_of({"note": "é", "qty": 1.0})}", "test": "t", "id": "inv-016"}}\n'
)
STALE = {**corpus_line("inv-016", {"qty": 1}), "payload": {"qty": 2}}

# name: (files, signed by the owner, the codes every context expects)
CASES: Dict[str, Tuple[Dict[str, Any], bool, Any]] = {
    "owner-appends-a-line": ({CORPUS: jsonl(BASE_LINE, corpus_line("inv-015", [1]))}, True, ()),
    "reformatted-equal-payload": ({CORPUS: jsonl(BASE_LINE) + REFORMATTED}, True, ()),
    "stale-digest": (
        {CORPUS: jsonl(BASE_LINE, STALE)},
        True,
        (f"{CORPUS}: record-digest-mismatch",),
    ),
    "reused-corpus-id": (
        {CORPUS: jsonl(BASE_LINE, corpus_line("inv-014", [2]))},
        True,
        (f"{CORPUS}: record-id-reused",),
    ),
    "new-case-null-expected": ({NEW: replay_case("retry_budget_9c2", [1], seed=42)}, True, ()),
    "new-case-reuses-an-id": (
        {NEW: replay_case("parse_header_a3f1", {"raw": "other"})},
        True,
        (f"{NEW}: record-id-reused",),
    ),
    "seed-disagrees-with-the-lock": (
        {NEW: replay_case("retry_budget_9c2", [1], seed=7)},
        True,
        (f"{NEW}: record-seed-mismatch",),
    ),
    "empty-command": (
        {NEW: replay_case("fresh_01", [1], command="")},
        True,
        (f"{NEW}: record-invalid",),
    ),
    "owner-promotes": (
        {REPLAY: {**BASE_CASE, "expected": {"status": 400}, "promoted_to": "tests/test_p.py"}},
        True,
        (),
    ),
    "owner-rewrites-the-payload": (
        {REPLAY: {**BASE_CASE, "expected": 1, "payload": {"raw": "y"}}},
        True,
        (f"{REPLAY}: seed-rewritten",),
    ),
}
UNSIGNED = {
    # an unsigned promotion: the write set's usual findings
    "unsigned-promotion": {
        "staged": {f"{REPLAY}: write-denied"},
        "ci": {f"{REPLAY}: write-denied", f"{REPLAY}: oracle-change-unsigned"},
    },
}


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
@pytest.mark.parametrize("name", list(CASES))
def test_record_rules_in_every_context(tmp_path, name, context):
    files, signed, codes = CASES[name]
    got = Repo(tmp_path).change(files, signed, context)
    assert got == ("reject" if codes else "pass", frozenset(codes)), (name, context)


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
def test_an_unsigned_promotion_is_the_usual_finding(tmp_path, context):
    promotion = {REPLAY: {**BASE_CASE, "expected": {"status": 400}}}
    expected = UNSIGNED["unsigned-promotion"]
    codes = expected["staged"] if context == "staged" else expected["ci"]
    assert Repo(tmp_path).change(promotion, False, context) == ("reject", frozenset(codes))
