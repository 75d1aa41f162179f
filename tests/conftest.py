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


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """The adversarial catalogue's baseline (testing/scenarios.py), built once per
    module and copied per scenario."""
    from testing import scenarios

    with clean_environment():
        return scenarios.build_baseline(tmp_path_factory.mktemp("baseline"))
