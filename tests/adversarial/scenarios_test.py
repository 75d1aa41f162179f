"""Adversarial scenarios (testing/scenarios.py), each in every context: a staged
change judged like `git commit`, a CI pull-request range, and a real `git push`
to a bare repository with the pre-receive hook installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Dict

import pytest

from oracle_guard.checks.registry import CHECKS, HOOKS, Check
from testing import samples, scenarios
from testing.git import clean_environment, git
from testing.scenarios import ATTACKS, CATALOG, CONTEXTS, LEGITIMATE, OWNER, PASS, REJECT, Work


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
    for check in CHECKS:  # a diff check has no change to judge yet
        if not check.needs_base:
            passed = {"status": "passed", "errors": 0, "warnings": 0, "note": None}
            assert checks[check.id] == passed, check.id
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


# -- every check's sample, from the registry ------------------------------------------


@pytest.fixture(scope="module")
def sample_baselines(tmp_path_factory) -> Callable[[Check], Path]:
    """A baseline per check, of its sample alone (built when first asked for)."""
    built: Dict[str, Path] = {}

    def baseline_of(check: Check) -> Path:
        if check.id not in built:
            with clean_environment():
                root = tmp_path_factory.mktemp(f"sample-{check.id}")
                built[check.id] = scenarios.build_baseline(root, samples.sample_tree([check]))
        return built[check.id]

    return baseline_of


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("check", CHECKS, ids=HOOKS)
def test_every_checks_sample_change_is_rejected_in_every_context(
    check, context, sample_baselines, tmp_path
):
    """The sample's tree was pushed and accepted (build_baseline); its change is
    rejected everywhere, with the sample's finding, and no other but write-set's
    denial of the oracle files it writes."""
    scenario = scenarios.sample_scenario(check)
    work = Work.copy(sample_baselines(check), tmp_path / "copy")
    got = scenarios.run(scenario, context, work)
    finding = check.sample().finding
    denied = {f"{path}: write-denied" for path in check.sample().change}
    assert got.verdict == REJECT and finding in got.codes, f"{context}: {got}\n{got.detail}"
    assert got.codes - {finding} <= denied, f"{context}: {got}\n{got.detail}"
