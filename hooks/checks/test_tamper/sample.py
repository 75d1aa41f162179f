"""test-tamper's SAMPLE (checks/sample.py): a scoring tree of one test, and the
change that skips it."""

from __future__ import annotations

from oracle_guard.checks.sample import Sample

TEST = "def test_total():\n    assert 1 + 2 == 3\n"
SAMPLE = Sample(
    sections={"tamper": {"paths": ["tests/**"]}},
    files={"tests/test_total.py": TEST},
    change={"tests/test_total.py": "import pytest\n\n\n@pytest.mark.skip\n" + TEST},
    finding="tests/test_total.py: skip-added",
)
