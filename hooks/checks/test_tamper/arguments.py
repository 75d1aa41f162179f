"""pytest's command-line arguments, as a configuration's addopts holds them: split
into units (an option with its value), and what adding or dropping one does.

The parse follows pytest's argparse setup (``allow_abbrev=False``): a long
option takes its value after ``=`` or as the next argument; short options
cluster (``-vvx``), and one that takes a value takes the rest of its cluster or
the next argument (``-knot_x``, ``-k "not x"``, ``-ra``); after ``--`` every
argument is a path. An option oracle-guard does not know takes the next
argument as its value when that one is no option, so ``--foo bar`` is one unit.
Units compare by the option's canonical name and value, so ``-x`` and
``--exitfirst``, or ``-rA`` and ``-r A``, are the same unit.
"""

from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

# (names, the canonical first; how many values: 0, 1, or "?" for an optional one)
_SPEC: Tuple[Tuple[str, object], ...] = (
    # pytest's own, as `pytest --help` lists them (9.x)
    ("-k", 1),
    ("-m", 1),
    ("--markers", 0),
    ("-x --exitfirst", 0),
    ("--maxfail", 1),
    ("--strict-config", 0),
    ("--strict-markers", 0),
    ("--strict", 0),
    ("--fixtures --funcargs", 0),
    ("--fixtures-per-test", 0),
    ("--pdb", 0),
    ("--pdbcls", 1),
    ("--trace", 0),
    ("--capture", 1),
    ("-s", 0),
    ("--runxfail", 0),
    ("--lf --last-failed", 0),
    ("--ff --failed-first", 0),
    ("--nf --new-first", 0),
    ("--cache-show", "?"),
    ("--cache-clear", 0),
    ("--lfnf --last-failed-no-failures", 1),
    ("--sw --stepwise", 0),
    ("--sw-skip --stepwise-skip", 0),
    ("--sw-reset --stepwise-reset", 0),
    ("--durations", 1),
    ("--durations-min", 1),
    ("-v --verbose", 0),
    ("--no-header", 0),
    ("--no-summary", 0),
    ("--no-fold-skipped", 0),
    ("--force-short-summary", 0),
    ("-q --quiet", 0),
    ("--verbosity", 1),
    ("-r --report-chars", 1),
    ("--disable-warnings --disable-pytest-warnings", 0),
    ("-l --showlocals", 0),
    ("--no-showlocals", 0),
    ("--tb", 1),
    ("--xfail-tb", 0),
    ("--show-capture", 1),
    ("--full-trace --fulltrace", 0),
    ("--color", 1),
    ("--code-highlight", 1),
    ("--pastebin", 1),
    ("--junitxml --junit-xml", 1),
    ("--junitprefix --junit-prefix", 1),
    ("-W --pythonwarnings", 1),
    ("--max-warnings", 1),
    ("--collect-only --co --collectonly", 0),
    ("--pyargs", 0),
    ("--ignore", 1),
    ("--ignore-glob", 1),
    ("--deselect", 1),
    ("--confcutdir", 1),
    ("--noconftest", 0),
    ("--keep-duplicates --keepduplicates", 0),
    ("--collect-in-virtualenv", 0),
    ("--continue-on-collection-errors", 0),
    ("--import-mode", 1),
    ("--doctest-modules", 0),
    ("--doctest-report", 1),
    ("--doctest-glob", 1),
    ("--doctest-ignore-import-errors", 0),
    ("--doctest-continue-on-failure", 0),
    ("-c --config-file", 1),
    ("--rootdir", 1),
    ("--basetemp", 1),
    ("-V --version", 0),
    ("-h --help", 0),
    ("-p", 1),
    ("--disable-plugin-autoload", 0),
    ("--trace-config --traceconfig", 0),
    ("--debug", "?"),
    ("-o --override-ini", 1),
    ("--assert", 1),
    ("--setup-only --setuponly", 0),
    ("--setup-show --setupshow", 0),
    ("--setup-plan --setupplan", 0),
    ("--log-level", 1),
    ("--log-format", 1),
    ("--log-date-format", 1),
    ("--log-cli-level", 1),
    ("--log-cli-format", 1),
    ("--log-cli-date-format", 1),
    ("--log-file", 1),
    ("--log-file-mode", 1),
    ("--log-file-level", 1),
    ("--log-file-format", 1),
    ("--log-file-date-format", 1),
    ("--log-auto-indent", 1),
    ("--log-disable", 1),
    # pytest-xdist
    ("-n --numprocesses", 1),
    ("--maxprocesses", 1),
    ("--max-worker-restart", 1),
    ("--dist", 1),
    ("--loadscope-reorder", 0),
    ("--no-loadscope-reorder", 0),
    ("--tx", 1),
    ("--px", 1),
    ("-d", 0),
    ("--rsyncdir", 1),
    ("--rsyncignore", 1),
    ("--testrunuid", 1),
    ("--maxschedchunk", 1),
    # Hypothesis
    ("--hypothesis-profile", 1),
    ("--hypothesis-verbosity", 1),
    ("--hypothesis-show-statistics", 0),
    ("--hypothesis-seed", 1),
    ("--hypothesis-explain", 0),
    # pytest-randomly, pytest-random-order
    ("--randomly-seed", 1),
    ("--randomly-dont-reset-seed", 0),
    ("--randomly-dont-reorganize", 0),
    ("--random-order", 0),
    ("--random-order-bucket", 1),
    ("--random-order-seed", 1),
    # pytest-cov
    ("--cov", "?"),
    ("--cov-report", 1),
    ("--cov-config", 1),
    ("--no-cov-on-fail", 0),
    ("--no-cov", 0),
    ("--cov-fail-under", 1),
    ("--cov-append", 0),
    ("--cov-branch", 0),
    ("--cov-precision", 1),
    ("--cov-context", 1),
    ("--cov-reset", 0),
    # pytest-timeout, pytest-rerunfailures, pytest-custom_exit_code, pytest-asyncio,
    # pytest-benchmark
    ("--timeout", 1),
    ("--session-timeout", 1),
    ("--timeout-method --timeout_method", 1),
    ("--timeout-disable-debugger-detection", 0),
    ("--reruns", 1),
    ("--reruns-delay", 1),
    ("--only-rerun", 1),
    ("--rerun-except", 1),
    ("--fail-on-flaky", 0),
    ("--suppress-no-test-exit-code", 0),
    ("--suppress-tests-failed-exit-code", 0),
    ("--asyncio-mode", 1),
    ("--benchmark-skip", 0),
    ("--benchmark-only", 0),
    ("--benchmark-disable", 0),
)

CANONICAL: Dict[str, str] = {}
NARGS: Dict[str, object] = {}
for _names, _nargs in _SPEC:
    _all = _names.split()
    for _name in _all:
        CANONICAL[_name] = _all[0]
    NARGS[_all[0]] = _nargs

PATH = ""  # the name of a unit that is a path argument, not an option

DESELECTS = "it deselects tests"
RUNS_NOTHING = "it runs no tests"
COLLECTS = "it changes which tests are collected"
SEED = "it fixes the random seed"
ORDER = "it changes the random test order"
TIMEOUT = "it changes the test timeouts"

# What an added option does, when that lets a failing suite pass or run fewer tests.
_ADDED: Dict[str, str] = {
    "-k": DESELECTS,
    "-m": DESELECTS,
    "--deselect": DESELECTS,
    "--lf": DESELECTS,
    "--lfnf": DESELECTS,
    "--sw": DESELECTS,
    "--sw-skip": DESELECTS,
    "--benchmark-skip": DESELECTS,
    "--benchmark-only": DESELECTS,
    "--ignore": "it ignores test files",
    "--ignore-glob": "it ignores test files",
    "--collect-only": RUNS_NOTHING,
    "--setup-only": RUNS_NOTHING,
    "--setup-plan": RUNS_NOTHING,
    "--fixtures": RUNS_NOTHING,
    "--fixtures-per-test": RUNS_NOTHING,
    "--markers": RUNS_NOTHING,
    "--cache-show": RUNS_NOTHING,
    "-h": RUNS_NOTHING,
    "-V": RUNS_NOTHING,
    "--noconftest": "it keeps conftest.py files from loading",
    "--confcutdir": "it can keep conftest.py files from loading",
    "--rootdir": "it moves the root folder, and with it the test ids",
    "-c": "it reads another configuration file",
    "--pyargs": COLLECTS,
    "--collect-in-virtualenv": COLLECTS,
    "--doctest-modules": COLLECTS,
    "--doctest-glob": COLLECTS,
    "--continue-on-collection-errors": "it runs the tests despite collection errors",
    "--doctest-ignore-import-errors": "it ignores doctest modules that fail to import",
    "--import-mode": "it changes how test modules are imported",
    "--disable-plugin-autoload": "it keeps the installed plugins from loading",
    "--randomly-seed": SEED,
    "--random-order-seed": SEED,
    "--hypothesis-seed": SEED,
    "--randomly-dont-reorganize": ORDER,
    "--randomly-dont-reset-seed": ORDER,
    "--random-order-bucket": ORDER,
    "--hypothesis-profile": "it picks a Hypothesis profile, which can lower its settings",
    "--suppress-no-test-exit-code": "a run that collects no tests exits as a pass",
    "--suppress-tests-failed-exit-code": "a run with failing tests exits as a pass",
    "--reruns": "it reruns failing tests, so a flaky failure can pass",
    "--only-rerun": "it reruns failing tests, so a flaky failure can pass",
    "--rerun-except": "it reruns failing tests, so a flaky failure can pass",
    "--timeout": TIMEOUT,
    "--session-timeout": TIMEOUT,
    "--timeout-method": TIMEOUT,
    "--timeout-disable-debugger-detection": TIMEOUT,
    "--basetemp": "it points tmp_path at a folder pytest empties",
    "--log-level": "it changes which log records tests capture",
    "--log-disable": "it changes which log records tests capture",
    "--asyncio-mode": "it changes which async tests run",
    "--pdb": "it starts the debugger on failures",
    "--trace": "it starts the debugger on failures",
    "--pdbcls": "it starts the debugger on failures",
    "--pastebin": "it sends the results to a pastebin",
    "--tx": "it runs the tests elsewhere",
    "--px": "it runs the tests elsewhere",
    "-d": "it runs the tests elsewhere",
    "--rsyncdir": "it runs the tests elsewhere",
    "--rsyncignore": "it runs the tests elsewhere",
}

# Added, these only report, add strictness, or spread the run over workers.
_HARMLESS = frozenset(
    (
        "-v -q --verbosity -r -l --no-showlocals --tb --xfail-tb --show-capture --full-trace "
        "--color --code-highlight --no-header --no-summary --no-fold-skipped "
        "--force-short-summary --durations --durations-min --disable-warnings --junitxml "
        "--junitprefix -s --capture --setup-show --trace-config --debug --assert "
        "--keep-duplicates --doctest-report --doctest-continue-on-failure --ff --nf "
        "--cache-clear --sw-reset -x --maxfail --strict-markers --strict-config --strict "
        "--runxfail --max-warnings --fail-on-flaky --random-order "
        "-n --maxprocesses --max-worker-restart --dist --loadscope-reorder "
        "--no-loadscope-reorder --testrunuid --maxschedchunk "
        "--hypothesis-verbosity --hypothesis-show-statistics --hypothesis-explain "
        "--log-format --log-date-format --log-cli-level --log-cli-format "
        "--log-cli-date-format --log-file --log-file-mode --log-file-level "
        "--log-file-format --log-file-date-format --log-auto-indent "
        "--cov --cov-report --cov-config --no-cov-on-fail --no-cov --cov-fail-under "
        "--cov-append --cov-branch --cov-precision --cov-context --cov-reset "
        "--reruns-delay --benchmark-disable"
    ).split()
)

# Dropped, these loosen the run: strictness, a gate, collection, a loaded plugin.
_DROP_MATTERS = frozenset(
    (
        "--strict-markers --strict-config --strict --runxfail --max-warnings "
        "--cov-fail-under --doctest-modules --doctest-glob --random-order --import-mode "
        "--hypothesis-profile --timeout --session-timeout --fail-on-flaky -c --rootdir"
    ).split()
)

_RANDOM_PLUGINS = frozenset(("randomly", "pytest_randomly", "random_order", "random-order"))
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-*[]")


class Arg(NamedTuple):
    name: str  # canonical option name; the argument itself when unknown; PATH for a path
    value: Optional[str]  # the option's value, or the path
    shown: str  # as a message shows it

    @property
    def subject(self) -> str:
        return " ".join(part for part in (self.name, self.value) if part is not None and part)

    @property
    def known(self) -> bool:
        return self.name == PATH or self.name in NARGS


def quote(value: str) -> str:
    """``value`` as a shell would need it: bare when it is plain, else in double quotes."""
    if value and all(ch in _SAFE for ch in value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _takes_next(args: Sequence[str], i: int) -> bool:
    return i < len(args) and not args[i].startswith("-")


def parse(args: Sequence[str]) -> List[Arg]:
    """The units ``args`` holds, in order."""
    out: List[Arg] = []
    i = 0
    paths_only = False
    while i < len(args):
        arg = args[i]
        i += 1
        if paths_only or not arg.startswith("-") or arg == "-":
            out.append(Arg(PATH, arg, quote(arg)))
        elif arg == "--":
            paths_only = True
        elif arg.startswith("--"):
            written, eq, attached = arg.partition("=")
            name = CANONICAL.get(written, written)
            nargs = NARGS.get(name, "?")
            value: Optional[str] = None
            if eq:
                value, shown = attached, f"{written}={quote(attached)}"
            elif nargs == 1 or (nargs == "?" and _takes_next(args, i)):
                if i < len(args):
                    value, i = args[i], i + 1
                shown = written if value is None else f"{written} {quote(value)}"
            else:
                shown = written
            out.append(Arg(name, value, shown))
        else:
            i = _short_cluster(arg, args, i, out)
    return out


def _short_cluster(arg: str, args: Sequence[str], i: int, out: List[Arg]) -> int:
    """The units of one ``-abc`` argument (the next argument too when the last
    option takes a value), appended to ``out``; returns the next index."""
    head, eq, attached = arg.partition("=")
    if eq and len(head) == 2 and NARGS.get(CANONICAL.get(head, "")) == 1:
        name = CANONICAL[head]
        out.append(Arg(name, attached, f"{head} {quote(attached)}"))
        return i
    pos = 1
    while pos < len(arg):
        letter = "-" + arg[pos]
        name = CANONICAL.get(letter, "")
        if not name:  # unknown: the rest of the argument is one unit
            if pos > 1:
                out.append(Arg("-" + arg[pos:], None, "-" + arg[pos:]))
            elif len(arg) == 2 and _takes_next(args, i):
                out.append(Arg(arg, args[i], f"{arg} {quote(args[i])}"))
                return i + 1
            else:
                out.append(Arg(arg, None, arg))
            return i
        pos += 1
        if NARGS[name] == 0:
            out.append(Arg(name, None, letter))
            continue
        value: Optional[str] = arg[pos:]
        if not value:
            value = args[i] if i < len(args) else None
            i += 1 if value is not None else 0
        out.append(Arg(name, value, letter if value is None else f"{letter} {quote(value)}"))
        break
    return i


def warning_action(spec: str) -> str:
    """The action of a ``-W``/filterwarnings entry, as the warnings module reads
    its prefix ("" is default, "e" is error)."""
    action = spec.split(":", 1)[0].strip()
    if not action:
        return "default"
    if action == "all":
        return action
    for full in ("default", "always", "ignore", "module", "once", "error"):
        if full.startswith(action):
            return full
    return action


def added_effect(arg: Arg) -> Optional[str]:
    """Why adding ``arg`` matters, or None when it only reports, adds
    strictness or spreads the run (``-o`` is the caller's: it names a setting)."""
    name, value = arg.name, arg.value or ""
    if name == PATH:
        return "it names a path to collect, in place of testpaths"
    if name == "-W":
        if warning_action(value) == "error":
            return None
        return "it can silence warnings that would fail tests"
    if name == "-p":
        if value.startswith("no:"):
            if value[3:] in _RANDOM_PLUGINS:
                return "it disables a plugin that randomizes the test order and seed"
            return "it disables a plugin"
        return "it loads a plugin"
    if name in _HARMLESS:
        return None
    if name in _ADDED:
        return _ADDED[name]
    return "an option oracle-guard does not know; an owner sets runner options"


def drop_matters(arg: Arg) -> bool:
    """Whether dropping ``arg`` can loosen the run: a strictness option, a gate,
    a loaded plugin, an error filter, a path, or an option oracle-guard does not know."""
    name = arg.name
    if name == "-W":
        return warning_action(arg.value or "") == "error"
    if name == "-p":
        return not (arg.value or "").startswith("no:")
    return name == PATH or name in _DROP_MATTERS or not arg.known
