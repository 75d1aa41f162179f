import pytest

from testing.git import GIT_ENV, REVISION_ENV, clean_environment
from testing.hosts import SHARED_HOSTS

_shared_hosts = pytest.StashKey()


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
    test's folders and is stopped by its pid; at the end nothing naming them runs.
    Under xdist each worker checks its own folders, and the controller all of them
    (pytest_sessionfinish)."""
    yield
    left = _survivors(str(tmp_path_factory.getbasetemp()))
    assert not left, f"processes outlived the tests: {left}"


def _survivors(*folders: str) -> list:
    from testing.processes import settle, stop_survivors

    left = []
    for folder in folders:
        settle(folder)  # a git reader a test dropped exits once collected (its stdin closes)
        left += stop_survivors(folder)
    return left


# modules whose module fixtures start servers or install a hook environment: each
# runs on one xdist worker, so those are built once (xdist_group marks cannot do it
# under pytest 9: xdist renames items by an attribute pytest no longer reads)
ONE_WORKER = (
    "tests/hosts/",
    "tests/e2e/precommit_test.py",
    "tests/e2e/tamper_pytest_test.py",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """-n auto: one worker more than the CPUs this process may use; much of the
    suite waits on git, servers and pushes (on 2 CPUs, 3 workers take 225 s where
    2 take 268 s)."""
    import os

    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return cpus + 1


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadgroup, with every ONE_WORKER module a group of its own. Groups
    are handed out first, the one with most tests first (xdist's reorder)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class OneWorkerPerServerModule(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            if module.startswith(ONE_WORKER):
                return module
            return super()._split_scope(nodeid)

    return OneWorkerPerServerModule(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist's controller tells each worker the folder they share (the hook venv
    of tests/hosts/ is built there once, not once per worker)."""
    config = node.config
    if _shared_hosts not in config.stash:
        from testing.hosts import world_base

        config.stash[_shared_hosts] = str(world_base("og-hosts-shared-"))
    node.workerinput[SHARED_HOSTS] = config.stash[_shared_hosts]


def pytest_sessionfinish(session):
    """The controller of an xdist run, once every worker is gone: nothing runs
    from any worker's folders (each under the controller's basetemp) or the
    shared one; what does is killed, named, and fails the run."""
    import shutil

    config = session.config
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("dsession"):
        return  # a worker, or a run without xdist: the fixture above checks
    folders = [str(config._tmp_path_factory.getbasetemp())]
    shared = config.stash.get(_shared_hosts, None)
    if shared:
        folders.append(shared)
    left = _survivors(*folders)
    if shared:
        shutil.rmtree(shared, ignore_errors=True)
    if left:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        reporter.write_line(f"processes outlived the tests: {left}", red=True)
        if session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """The adversarial catalogue's baseline (testing/scenarios.py), built once per
    module and copied per scenario."""
    from testing import scenarios

    with clean_environment():
        return scenarios.build_baseline(tmp_path_factory.mktemp("baseline"))
