"""test-tamper's SAMPLE (checks/sample.py): a scoring tree of one test, and the
change that skips it."""

from __future__ import annotations

from oracle_guard.checks.sample import Sample

TEST = "def test_total():\n    assert 1 + 2 == 3\n"
# its lines in the complete example of docs/reference/contract.md
EXAMPLE = """\
tamper:                      # test-tamper
  paths: ["tests/**", "properties/**", "/conftest.py"]  # the scoring tree: where a patch may write tests
  hermetic: ["properties/**"]  # optional: wall clock, entropy and network are findings here
  frozen_tests: ["tests/**"]   # optional: existing tests are oracle there; only new ones may be added
  allow:                     # optional: owner-approved exceptions, by rule (a finding code) and path pattern
    - {rule: process-exit, path: "tests/cli/test_exit_codes.py"}
"""
SAMPLE = Sample(
    sections={"tamper": {"paths": ["tests/**"]}},
    files={"tests/test_total.py": TEST},
    change={"tests/test_total.py": "import pytest\n\n\n@pytest.mark.skip\n" + TEST},
    finding="tests/test_total.py: skip-added",
    example=EXAMPLE,
)
