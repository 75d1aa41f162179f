"""The check that no server outlives the suite can see one that does."""

import os
import subprocess
import sys

from testing.processes import stop_survivors, survivors, wait_until


def test_a_process_naming_a_test_folder_is_found_and_stopped(tmp_path):
    marker = tmp_path / "served"
    marker.mkdir()
    # a daemon-like child that names the folder, as a server names its base path
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(marker)])
    try:
        # /proc shows the command line once exec is done
        wait_until(
            lambda: child.pid in [pid for pid, _ in survivors(str(marker))],
            "the child never showed its command line",
        )
        assert [pid for pid, _ in stop_survivors(str(marker))] == [child.pid]
        child.wait(timeout=10)
        assert survivors(str(marker)) == []
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_a_folder_no_process_names_has_no_survivors(tmp_path):
    assert survivors(str(tmp_path / f"nothing-{os.getpid()}")) == []


def test_another_runs_folder_with_the_same_start_is_not_a_survivor(tmp_path):
    mine, theirs = tmp_path / "pytest-1", tmp_path / "pytest-12"
    theirs.mkdir()
    # another pytest run's server: its folder's name starts with this run's
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(theirs)])
    try:
        wait_until(
            lambda: child.pid in [pid for pid, _ in survivors(str(theirs))],
            "the child never showed its command line",
        )
        assert survivors(str(mine)) == []
        assert [pid for pid, _ in survivors(str(tmp_path))] == [child.pid]  # a path inside
    finally:
        child.kill()
        child.wait()
