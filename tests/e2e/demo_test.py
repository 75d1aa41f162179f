import os
import subprocess
import sys

from oracle_guard.commands import demo


def test_demo_passes_the_honest_change_and_rejects_every_edit(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "demo"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    # the checks' scenarios, then the scored ones: check passes an edited test,
    # the score does not; the honest fix scores green
    assert out.count("-> accepted") == 2 + 2
    assert out.count("-> rejected (exit 1)") == len(demo.SCENARIOS) - 2 + 1
    assert (
        "   tests/test_pricing.py: test-failed: tests/test_pricing.py::test_rate_rounds_half_up "
        "failed: assert 2048 == 2049\n"
    ) in out
    assert "   score: passed (2 passed)\n" in out
    for code in (
        "fixture-mismatch",
        "seed-reordered",
        "seed-file-deleted",
        "budget-too-far",
        "write-denied",
        "collection-changed",
    ):
        assert f": {code}:" in out
    # the new tests/conftest.py: test-tamper names the hook on its def line
    line = demo.DESELECTING_CONFTEST.splitlines().index(
        "def pytest_collection_modifyitems(config, items):"
    )
    assert (
        f"   tests/conftest.py:{line + 1}: collection-changed: defines "
        "pytest_collection_modifyitems: it can deselect tests before they run\n"
    ) in out
    assert "NOT AS EXPECTED" not in out
    assert list(tmp_path.iterdir()) == []  # no leftovers


def test_demo_output_is_the_same_every_run(tmp_path):
    runs = [
        subprocess.run(
            [sys.executable, "-m", "oracle_guard", "demo"], stdout=subprocess.PIPE, text=True
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_only_test_tamper_rejects_the_deselecting_conftest(tmp_path):
    # the write set allows tests/**: the conftest is caught by what it does, not where it is
    repo = demo.baseline(str(tmp_path / "repo"))
    demo.deselect_failing_test(repo)
    repo.git("add", "-A")
    code, out = demo.judge(repo, "")
    assert code == 1, out
    assert "test-tamper: failed" in out and "write-set: passed" in out
    # the near miss: the honest change adds a test in tests/ and passes test-tamper
    repo.git("reset", "-q", "--hard")
    repo.git("clean", "-q", "-fdx")
    demo.honest_change(repo)
    repo.git("add", "-A")
    code, out = demo.judge(repo, "test-tamper")
    assert code == 0, out


def test_the_demo_contract_denies_the_hook_runners_configs_at_any_depth():
    import yaml

    from oracle_guard.parsing.patterns import PatternSet

    deny = PatternSet(yaml.safe_load(demo.CONTRACT)["write_set"]["deny"])
    for path in (
        "prek.toml",
        "app/prek.toml",
        ".pre-commit-config.yml",
        "app/.pre-commit-config.yaml",
    ):
        assert deny.matches(path), path
    for path in ("docs/prek.toml.md", "prek.tom", ".pre-commit-config.json"):
        assert not deny.matches(path), path
