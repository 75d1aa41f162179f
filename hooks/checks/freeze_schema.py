"""freeze-schema: is every freeze, quarantine and budget file well-formed?"""

from __future__ import annotations

import datetime
from typing import List

from oracle_guard.checks import freeze_files
from oracle_guard.checks.sample import Sample
from oracle_guard.contract import Contract
from oracle_guard.findings import Finding
from oracle_guard.snapshot import Snapshot

HOOK = "freeze-schema"
# the smallest oracle: a budget file, and the change that adds one that does not parse
# its lines in the complete example of docs/reference/contract.md
EXAMPLE = """\
freeze:                      # freeze-schema (and the entries flake-budget counts)
  - {paths: ["/freeze.json"], schema: freeze}
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
  - {paths: ["quarantine/active/*.yaml"], schema: quarantine-entry}
  - {paths: ["oracle/quarantine.json"], schema: quarantine-list}
  - {paths: ["ci/retries.json"], schema: schemas/retries.schema.json}   # a JSON Schema in the repo
"""
SAMPLE = Sample(
    sections={"freeze": [{"paths": ["oracle/*.yaml"], "schema": "flake-budget"}]},
    files={
        "oracle/flake_budget.yaml": "max_frozen: 1\nfrozen:\n  - id: test_a\n    owner: platform\n"
        '    expires: "2099-01-01"\n    reason: flaky on CI\n'
    },
    change={"oracle/quarantine.yaml": "max_frozen: 1\nfrozen: [\n"},
    finding="oracle/quarantine.yaml: freeze-invalid",
    example=EXAMPLE,
)


def load(contract: Contract, candidate: Snapshot) -> freeze_files.FreezeState:
    """The frozen entries, and this hook's findings about the files."""
    return freeze_files.load(contract, candidate, HOOK)


def check(
    contract: Contract, base: Snapshot, candidate: Snapshot, now: datetime.datetime
) -> List[Finding]:
    return load(contract, candidate).findings
