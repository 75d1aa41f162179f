"""Real-shaped oracle files, one per built-in freeze format, as users keep them,
and the example layouts of examples/ as committed repositories."""

import shutil
from pathlib import Path

from testing.git import commit, init_repo, write

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example_repo(tmp_path, name, files=None):
    """The example layout ``name`` as shipped (plus ``files``), committed."""
    repo = init_repo(tmp_path / name)
    shutil.copytree(EXAMPLES / name, repo, dirs_exist_ok=True)
    if files:
        write(repo, files)
    commit(repo, message="example as shipped")
    return repo


FREEZE_JSON = """\
{
  "excluded_property_ids": [
    "prop.http.retry_after_parse"
  ],
  "reason": {
    "prop.http.retry_after_parse": "intermittent under parallel workers; excluded from scoring until retimed"
  }
}
"""
FLAKE_BUDGET_YAML = """\
max_frozen: 3
frozen:
  - id: canonicalize_unicode_hyphen
    owner: platform-api
    expires: "2026-09-30"
    reason: "locale-dependent hyphen folding on CI image"
  - id: discount_inverse_leap_promo
    owner: billing
    expires: "2026-10-07"
    reason: "promo calendar not pinned in fixture"
"""
# expires_at is an unquoted YAML timestamp: it must stay a string and validate.
QUARANTINE_ENTRY_YAML = """\
id: retry_budget_9c2
seed: 1729
command: pytest tests/test_retry.py::test_budget -q
runs: 7
pass_count: 4
fail_count: 3
expires_at: 2026-10-07T00:00:00Z
repro: |
  python harness/replay.py --id retry_budget_9c2 --repeat 7
owner: humans-only
"""
QUARANTINE_LIST_JSON = """\
[
  {"test": "tests/test_invoice_total.py::test_rounding_half_even"}
]
"""
