"""oracle-guard's pytest plugin for ``oracle-guard score``: loaded with ``-p`` into
the pytest subprocess from oracle-guard's own installation, never from the tree
being scored. It imports nothing of oracle_guard (the interpreter that runs the
tests may not have it) and reads its settings from one variable, which it removes
before any test code runs.

It deselects the frozen ids at collection, refuses to start when one is still
collected after every other plugin has had its say, pins the seeds, and writes a
record line per test and a last line when the session ends, flushed as it goes:
a run that ends early leaves a record without its end."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional

import pytest

SETTINGS = "ORACLE_GUARD_SCORE"
EXIT_FROZEN_COLLECTED = 3  # pytest's own INTERNAL_ERROR; the record says which it was

_settings: Dict[str, Any] = json.loads(os.environ.pop(SETTINGS, "null") or "null") or {}
_record = open(_settings["record"], "a", encoding="utf-8") if _settings.get("record") else None
_outcomes: Dict[str, Dict[str, Any]] = {}
_declared: Dict[str, Dict[str, bool]] = {}


def _write(kind: str, **fields: Any) -> None:
    if _record is None:
        return
    _record.write(json.dumps({"kind": kind, **fields}, sort_keys=True) + "\n")
    _record.flush()


def _frozen(nodeid: str, frozen: List[str]) -> bool:
    """A frozen id names a test, or a module or class of tests, by its node id."""
    return any(nodeid == f or nodeid.startswith((f + "::", f + "[")) for f in frozen if f)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: Any, args: List[str]
) -> None:
    """One process: pytest-xdist's workers would collect and run where this plugin
    cannot see every test (``-n 0`` after the configuration's own ``-n``)."""
    if early_config.pluginmanager.hasplugin("xdist"):
        args.extend(["-n", "0"])


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _write("start", pytest=pytest.__version__, python=sys.version.split()[0])
    seed = _settings.get("seed")
    if seed is not None and config.pluginmanager.hasplugin("randomly"):
        config.option.randomly_seed = seed  # read by pytest-randomly's own configure
    hypothesis = _settings.get("hypothesis")
    if hypothesis is not None:
        try:
            # deferred: hypothesis: 64 ms to import, only for pytest_configure()
            from hypothesis import settings
        except ImportError:  # not installed: no property test to pin
            return
        options: Dict[str, Any] = {"derandomize": True, "database": None, "print_blob": True}
        if "deadline" in hypothesis:
            options["deadline"] = hypothesis["deadline"]
        if "max_examples" in hypothesis:
            options["max_examples"] = hypothesis["max_examples"]
        settings.register_profile("oracle-guard-score", **options)
        settings.load_profile("oracle-guard-score")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """Before any other plugin: what the test code itself declares, then the
    frozen ids deselected."""
    frozen = _settings.get("frozen") or []
    kept: List[Any] = []
    dropped: List[Any] = []
    for item in items:
        names = {mark.name for mark in item.iter_markers()}
        _declared[item.nodeid] = {
            "skip": bool(names & {"skip", "skipif"}),
            "xfail": "xfail" in names,
            # a property test: Hypothesis marks the functions its @given wraps
            "property": bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False)),
        }
        (dropped if _frozen(item.nodeid, frozen) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    _write("deselected", ids=[item.nodeid for item in dropped])


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        text = crash.message if crash is not None else _short(report.longreprtext)
        _write("collect-error", nodeid=report.nodeid, message=(text or "")[:500])
    elif report.skipped:
        path, line, reason = _skip_place(report.longrepr)
        _write("collect-skip", nodeid=report.nodeid, path=path, line=line, reason=reason)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Every plugin has had its say: a frozen id still collected stops the run."""
    frozen = _settings.get("frozen") or []
    ids = [item.nodeid for item in session.items]
    _write("collected", ids=ids)
    still = [nodeid for nodeid in ids if _frozen(nodeid, frozen)]
    if still:
        _write("frozen-collected", ids=still)
        pytest.exit(
            f"oracle-guard: {len(still)} frozen test(s) still collected", EXIT_FROZEN_COLLECTED
        )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    seen = _outcomes.setdefault(report.nodeid, {"outcome": "passed", "duration": 0.0, "skip": None})
    seen["duration"] += report.duration
    if hasattr(report, "wasxfail"):
        seen["outcome"] = "xfailed" if report.skipped else "xpassed"
        crash = getattr(report.longrepr, "reprcrash", None)
        if crash is not None:
            seen["skip"] = {"path": crash.path, "line": crash.lineno, "reason": report.wasxfail}
    elif report.failed:
        seen["outcome"] = "failed" if report.when == "call" else "error"
        crash = getattr(report.longrepr, "reprcrash", None)
        text = crash.message if crash is not None else report.longreprtext
        seen["message"] = (text or "").splitlines()[0][:500] if text else ""
    elif report.skipped and seen["outcome"] == "passed":
        seen["outcome"] = "skipped"
        path, line, reason = _skip_place(report.longrepr)
        seen["skip"] = {"path": path, "line": line, "reason": reason}


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    seen = _outcomes.get(nodeid, {"outcome": "error", "duration": 0.0, "skip": None})
    _write(
        "test",
        nodeid=nodeid,
        outcome=seen["outcome"],
        duration=round(seen["duration"], 6),
        skip=seen["skip"],
        message=seen.get("message"),
        declared=_declared.get(nodeid, {"skip": False, "xfail": False, "property": False}),
    )


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _write("end", exitstatus=int(exitstatus), failed=session.testsfailed)


def _skip_place(longrepr: Any) -> tuple:
    """(path, line, reason) of a skip: where pytest.skip was called, or the test's
    own place for a skip mark."""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        path, line, reason = longrepr
        reason = str(reason)
        return (
            str(path),
            line,
            reason[len("Skipped: ") :] if reason.startswith("Skipped: ") else reason,
        )
    return None, None, _short(str(longrepr))


def _short(text: Optional[str]) -> str:
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:500] if lines else ""
