"""test-tamper: did the change leave how the suite collects, runs and scores its tests alone?"""

from __future__ import annotations

import datetime
from typing import List

from oracle_guard.contract import Contract
from oracle_guard.findings import Finding
from oracle_guard.snapshot import Snapshot

HOOK = "test-tamper"


def check(
    contract: Contract, base: Snapshot, candidate: Snapshot, now: datetime.datetime
) -> List[Finding]:
    raise NotImplementedError("test-tamper is being written")
