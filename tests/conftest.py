import os
from typing import Iterator, List, Optional

import pytest

from testing import prerequisites, tiers
from testing.git import GIT_ENV, REVISION_ENV, clean_environment
from testing.hosts import SHARED_HOSTS

_shared_hosts = pytest.StashKey()
_unmet = pytest.StashKey()
_not_run = pytest.StashKey()


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "needs(*names): the test needs these prerequisites (testing/prerequisites.py); "
        "without one it is not run, and the summary says why",
    )
    config.addinivalue_line(
        "markers",
        "unit: the inner loop's tier, assigned at collection to every test that is not "
        "slow (testing/tiers.py); run it with -m unit",
    )
    config.addinivalue_line(
        "markers",
        "slow(why): the test is not in the unit tier, for this reason (testing/tiers.py)",
    )
    tiers.refuse_slow_programs()
    unmet = prerequisites.unmet()
    config.stash[_unmet] = unmet
    if unmet and os.environ.get(prerequisites.REQUIRE_ALL) == "1":
        raise pytest.UsageError(
            f"{prerequisites.REQUIRE_ALL}=1 and tests would not run: " + "; ".join(unmet.values())
        )


def _assign_tiers(items: List[pytest.Item]) -> None:
    """Mark every test unit that is not slow (testing/tiers.py)."""
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        try:
            why = tiers.slow_reason(path, [mark.args for mark in item.iter_markers(tiers.SLOW)])
        except ValueError as error:
            raise pytest.UsageError(str(error)) from None
        if why is None:
            item.add_marker(tiers.UNIT)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Optional[pytest.Item]) -> Iterator[None]:
    """A unit test, its fixtures' setup and teardown included, starts no slow program."""
    tiers.guard(item.nodeid if item.get_closest_marker(tiers.UNIT) else None)
    try:
        yield
    finally:
        tiers.guard(None)


@pytest.hookimpl(tryfirst=True)  # the tiers are marked before -m selects
def pytest_collection_modifyitems(config, items):
    """Deselect each test whose prerequisite is missing: it is not run, never a pass."""
    _assign_tiers(items)
    unmet = config.stash[_unmet]
    kept, dropped, counts = [], [], {}
    for item in items:
        names = [name for mark in item.iter_markers("needs") for name in mark.args]
        unknown = sorted(set(names) - set(prerequisites.PREREQUISITES))
        if unknown:
            raise pytest.UsageError(
                f"{item.nodeid}: needs({', '.join(unknown)}): no such prerequisite"
            )
        missing = [name for name in names if name in unmet]
        for name in missing:
            counts[name] = counts.get(name, 0) + 1
        (dropped if missing else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    config.stash[_not_run] = counts
    if hasattr(config, "workeroutput"):  # an xdist worker: the controller collects nothing
        config.workeroutput["not_run"] = counts


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist's controller takes the counts from a worker (each collects the same tests)."""
    counts = getattr(node, "workeroutput", {}).get("not_run")
    if counts is not None:
        node.config.stash[_not_run] = counts


def pytest_terminal_summary(terminalreporter, config):
    """One line per missing prerequisite, with how many tests it kept from running."""
    counts = config.stash.get(_not_run, None)
    for name, reason in config.stash[_unmet].items():
        if counts is None:
            what = f'the tests marked needs("{name}") need'
        else:
            count = counts.get(name, 0)
            what = f"{count} test needs" if count == 1 else f"{count} tests need"
        terminalreporter.write_line(f"not run: {what} {reason}", yellow=True)


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
