"""What the platform records: for every scenario of the catalogue, the verdict
on the branch given its target equals the verdict on the merge commit a
platform makes of it (``git merge --no-ff`` into main), judged as a commit of
its own, and equals the CI verdict on GitHub's test merge checked out
detached (``refs/pull/N/merge``, which GitHub makes with git merge)."""

from __future__ import annotations

import subprocess

import pytest

from testing import scenarios
from testing.scenarios import CATALOG, Work


def committed_branch(scenario, w: Work) -> str:
    """The scenario's branch, committed as the runner commits it."""
    if scenario.prepare is not None:
        scenario.prepare(w)
    w.git("checkout", "-q", "-b", "change")
    for number, step in enumerate(scenario.steps, 1):
        if not step(w):
            w.commit(f"{scenario.name}: step {number}")
    return w.git("rev-parse", "HEAD").strip()


def same(outcome) -> tuple:
    return outcome.verdict, sorted(outcome.codes)


@pytest.mark.parametrize("scenario", CATALOG, ids=lambda s: s.name)
def test_the_branch_given_its_target_is_judged_as_its_recorded_merge(scenario, baseline, tmp_path):
    w = Work.copy(baseline, tmp_path / "copy")
    head = committed_branch(scenario, w)
    given_target = scenarios.guard(w.client, "--target", "origin/main", "--head", head, env={})
    w.git("checkout", "-q", "-f", "-B", "landing", "refs/remotes/origin/main")
    w.git("clean", "-q", "-f", "-d")  # what a step left in the work tree
    made = subprocess.run(
        ["git", "-C", str(w.client), "merge", "-q", "--no-ff", "-m", "Merge pull request #1", head],
        capture_output=True,
    )
    if made.returncode != 0:  # git cannot record it (a malformed tree): never a pass
        assert given_target.verdict == scenarios.ERROR, (scenario.name, given_target)
        return
    merge = w.git("rev-parse", "HEAD").strip()
    recorded = scenarios.guard(w.client, "--head", merge, env={})
    assert same(given_target) == same(recorded), (
        f"{scenario.name}\n--target: {given_target}\n{given_target.detail}\n"
        f"the merge: {recorded}\n{recorded.detail}"
    )
    w.git("update-ref", "refs/pull/1/merge", merge)
    w.git("checkout", "-q", "--detach", "refs/pull/1/merge")  # as actions/checkout does
    test_merge = scenarios.guard(w.client, env={"CI": "1", "GITHUB_BASE_REF": "main"})
    assert same(test_merge) == same(given_target), (
        f"{scenario.name}\nGitHub's test merge: {test_merge}\n{test_merge.detail}"
    )
