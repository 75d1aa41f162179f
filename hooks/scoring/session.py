"""One pytest session of a score: ``python -m pytest`` in a subprocess, with an
environment built from nothing, oracle-guard's plugin loaded by ``-p`` from a
folder of its own, and the plugin's record read back when it ends."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

PLUGIN_MODULE = "oracle_guard_score"
OUTPUT_TAIL = 40  # lines of pytest's own output kept for the report


class Session(NamedTuple):
    returncode: Optional[int]  # None: killed at its time limit
    records: List[Dict[str, Any]]
    seconds: float
    output: str  # the last lines pytest printed

    def of(self, kind: str) -> List[Dict[str, Any]]:
        return [r for r in self.records if r.get("kind") == kind]

    @property
    def ended(self) -> bool:
        return bool(self.of("end"))


def private_folder(base: str) -> Dict[str, str]:
    """The run's own folders beside the scratch tree: the plugin, HOME, TMPDIR and an
    empty configuration. No bytecode is written; none is read from the tree, which
    holds no compiled file the target does not (tree.py)."""
    folders = {name: os.path.join(base, name) for name in ("plugin", "home", "tmp")}
    for folder in folders.values():
        os.makedirs(folder, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copyfile(
        os.path.join(here, "pytest_plugin.py"),
        os.path.join(folders["plugin"], PLUGIN_MODULE + ".py"),
    )
    folders["empty_config"] = os.path.join(base, "plugin", "pytest.ini")
    with open(folders["empty_config"], "w", encoding="utf-8") as out:
        out.write("[pytest]\n")
    return folders


def environment(
    folders: Dict[str, str], settings: Dict[str, Any], seed: Optional[int]
) -> Dict[str, str]:
    """Nothing of the caller's environment but PATH: no PYTEST_ADDOPTS,
    PYTEST_PLUGINS, PYTHONPATH, PYTHONSTARTUP, PYTHONINSPECT or anything else."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": folders["home"],
        "TMPDIR": folders["tmp"],
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": str((seed or 0) % (1 << 32)),
        "PYTHONDONTWRITEBYTECODE": "1",  # the installed packages' bytecode is still read
        "PYTHONNOUSERSITE": "1",
        "PYTHONPATH": folders["plugin"],
        "ORACLE_GUARD_SCORE": json.dumps(settings, sort_keys=True),
    }


def pytest_command(
    python: str, tree: str, config: Optional[str], folders: Dict[str, str]
) -> List[str]:
    """``python -m pytest`` with the plugin, the tree as its root and the target's
    configuration (or an empty one): what every session and replay starts with."""
    return [
        python,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        PLUGIN_MODULE,
        "--rootdir",
        tree,
        "-c",
        os.path.join(tree, config) if config else folders["empty_config"],
    ]


def run(
    python: str,
    tree: str,
    arguments: Sequence[str],
    config: Optional[str],
    folders: Dict[str, str],
    record: str,
    settings: Dict[str, Any],
    seed: Optional[int],
    timeout: float,
    collect_only: bool = False,
    extra_env: Optional[Dict[str, str]] = None,
) -> Session:
    command = [
        *pytest_command(python, tree, config, folders),
        "-q",
        # a collection only needs the ids: no assertion is rewritten (half its time)
        *(["--collect-only", "--assert=plain"] if collect_only else []),
        *arguments,
    ]
    env = environment(folders, {**settings, "record": record}, seed)
    return execute(command, tree, {**env, **(extra_env or {})}, record, timeout)


def execute(
    command: Sequence[str], tree: str, env: Dict[str, str], record: str, timeout: float
) -> Session:
    """Run ``command`` in ``tree`` with ``env`` alone, in a process group of its own
    that is killed when it ends or at ``timeout``; read back the plugin's record."""
    started = time.monotonic()
    with open(record + ".out", "w+b") as output:
        process = subprocess.Popen(
            list(command),
            cwd=tree,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its whole group is killed at the time limit
        )
        # a timer stops the group at the limit while this thread blocks in waitpid:
        # wait(timeout=) polls, sleeping up to 50 ms past the process's end
        expired = threading.Event()

        def stop() -> None:
            expired.set()  # before the kill: a group the timer killed ran past the limit
            _kill_group(process)

        timer = threading.Timer(timeout, stop)
        timer.daemon = True
        timer.start()
        try:
            returncode: Optional[int] = process.wait()
        finally:
            timer.cancel()
            _stop_group(process)
        if expired.is_set():
            returncode = None
        seconds = time.monotonic() - started
        output.seek(0)
        tail = output.read().decode("utf-8", "replace").splitlines()[-OUTPUT_TAIL:]
    # pytest's closing line, without its clock: the same run prints the same record
    tail = [re.sub(r" in [0-9.]+s( \([0-9:]+\))?", "", line) for line in tail]
    return Session(returncode, _records(record), seconds, "\n".join(tail))


def _stop_group(process: subprocess.Popen) -> None:
    """Whatever the tests started in the session's group ends with it."""
    _kill_group(process)
    process.wait()


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _records(path: str) -> List[Dict[str, Any]]:
    """The plugin's lines; a line cut short by a killed process is left out."""
    try:
        with open(path, encoding="utf-8") as lines:
            out = []
            for line in lines:
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    out.append(value)
            return out
    except FileNotFoundError:
        return []
