"""init refuses, before writing anything, to overwrite what differs without --force."""

import pytest

from oracle_guard.commands.init.command import refuse_conflicts
from oracle_guard.commands.init.files import Planned
from oracle_guard.commands.init.plan import Plan
from oracle_guard.errors import InitError


def plan_of(*files):
    data = {"fixtures": [{"lock": "fixtures/SHA256SUMS"}]}
    return Plan("harness", [], "", data, files=list(files))


def test_files_that_are_the_same_or_new_go_ahead():
    refuse_conflicts(plan_of(Planned("a", "", "x", "same"), Planned("b", "", "x")))


def test_the_first_conflict_is_named_with_the_others_and_the_lock_hint():
    plan = plan_of(
        Planned("fixtures/SHA256SUMS", "", "lock", "differs"),
        Planned("c", "", "x", "retarget", needs_force=True, why="it has v1"),
        Planned("d", "", "x", "edit"),
    )
    with pytest.raises(InitError) as raised:
        refuse_conflicts(plan)
    assert str(raised.value) == (
        "fixtures/SHA256SUMS exists and differs from what init would write (and c); nothing "
        "was written: rerun with --force to overwrite, or with --dry-run to see the proposal; "
        "to refresh only a stale fixture lock, run 'oracle-guard lock'"
    )
