"""What many test files share of an oracle: the clock every check and push is
judged at, and the contract of a repository whose seeds only an owner extends."""

from __future__ import annotations

from oracle_guard.checks.registry import HOOKS

NOW = "2026-09-25"  # tests that need another moment pass their own --now


def all_but_write_set() -> str:
    """``--only`` for an owner's oracle edit without an authority: every check but
    write-set, which denies it (docs: how-to/edit-the-oracle.md)."""
    return ",".join(hook for hook in HOOKS if hook != "write-set")


# seeds append-only, src/ the write set, alice an owner by GitLab's pusher variable
OWNED_SEEDS = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  allow: ["src/**"]
  owners: [alice]
identity_env: GL_USERNAME
"""

# the fixtures under oracle/inputs/, locked in oracle/fixtures.lock.json
LOCKED_FIXTURES = """\
version: 1
fixtures:
  - lock: oracle/fixtures.lock.json
    root: oracle/inputs
    paths: ["oracle/inputs/**"]
"""

# seeds append-only; src/, tests/ and README.md writable, oracle/ denied; alice an
# owner; tests/ the scoring tree test-tamper judges
GUARDED_SEEDS = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  allow: ["src/**", "tests/**", "README.md"]
  deny: ["oracle/**", ".pre-commit-config.yaml"]
  owners: [alice]
tamper:
  paths: ["tests/**"]
identity_env: GL_USERNAME
"""

# seeds append-only and src/ writable, with no owner: nobody may change the oracle
OWNERLESS_SEEDS = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  allow: ["src/**"]
"""
