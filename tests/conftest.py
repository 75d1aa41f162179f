import pytest

from testing.git import GIT_ENV, REVISION_ENV, clean_environment


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    """Tests see no CI or pre-commit revision variables unless they set them,
    and commit with a fixed identity whatever the machine's git config says."""
    for name in REVISION_ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(scope="session", autouse=True)
def _no_process_outlives_the_suite(tmp_path_factory):
    """Every server a test starts (git daemon, sshd, lighttpd) runs from the
    test's folders and is stopped by its pid; at the end nothing naming them runs."""
    from testing.processes import settle, stop_survivors

    yield
    base = str(tmp_path_factory.getbasetemp())
    settle(base)  # a git reader a test dropped exits once collected (its stdin closes)
    left = stop_survivors(base)
    assert not left, f"processes outlived the tests: {left}"


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """The adversarial catalogue's baseline (testing/scenarios.py), built once per
    module and copied per scenario."""
    from testing import scenarios

    with clean_environment():
        return scenarios.build_baseline(tmp_path_factory.mktemp("baseline"))
