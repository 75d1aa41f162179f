"""Adversarial scenarios (testing/scenarios.py), each in every context: a staged
change judged like `git commit`, a CI pull-request range, and a real `git push`
to a bare repository with the pre-receive hook installed."""

from __future__ import annotations

import json

import pytest

from testing import scenarios
from testing.git import git
from testing.scenarios import ATTACKS, CATALOG, CONTEXTS, LEGITIMATE, OWNER, PASS, Work


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("scenario", CATALOG, ids=lambda s: s.name)
def test_scenario(scenario, context, baseline, tmp_path):
    work = Work.copy(baseline, tmp_path / "copy")
    got = scenarios.run(scenario, context, work)
    want = scenario.expect[context]
    assert (got.verdict, sorted(got.codes)) == (want.verdict, sorted(want.codes)), (
        f"{scenario.name} in {context}: {scenario.why}\n"
        f"expected {want}\n     got {got}\n{got.detail}"
    )


def test_baseline_passes_every_check_it_has(baseline, tmp_path):
    """The scenarios mean something only if the baseline is green and no hook
    passes for want of anything to check."""
    work = Work.copy(baseline, tmp_path / "copy")
    got = scenarios.guard(work.client, env={})
    assert got.verdict == PASS, got.detail
    checks = json.loads(got.detail)["checks"]
    for hook in ("fixture-lock", "freeze-schema", "flake-budget"):
        assert checks[hook] == {"status": "passed", "errors": 0, "warnings": 0, "note": None}
    assert git(work.client, "rev-parse", "refs/remotes/origin/main") == git(
        work.server, "rev-parse", "refs/heads/main"
    )


def test_catalog_shape():
    names = [s.name for s in CATALOG]
    assert len(names) == len(set(names))
    assert len(ATTACKS) >= 30
    for scenario in ATTACKS:
        # every attempt is rejected in every context that can express it
        for context in CONTEXTS:
            rejected = scenario.expect[context].verdict != PASS
            assert rejected != (context in scenario.unseen), (scenario.name, context)
        assert "push" not in scenario.unseen, scenario.name
    for scenario in LEGITIMATE:
        assert scenario.expect["push"].verdict == PASS, scenario.name
        if scenario.pusher != OWNER:  # owners are known on the server only
            assert all(scenario.expect[c].verdict == PASS for c in CONTEXTS), scenario.name
