"""The names the rules know: markers, skips, exits, hooks, dynamic loads, and what
reads the clock, entropy or the network. Tables only: the reading is elsewhere."""

from __future__ import annotations

import ast
from typing import Callable, Optional

# Does a dotted module name name the oracle's code? It answers with the
# contract's pattern that protects its file ("oracle/**"), or None.
OracleOf = Callable[[str], Optional[str]]

SKIP_MARKERS = {
    "pytest.mark.skip": "a skipped test scores as a pass",
    "pytest.mark.skipif": "a skipped test scores as a pass",
    "pytest.mark.xfail": "a failing xfail test scores as expected",
    "unittest.skip": "a skipped test scores as a pass",
    "unittest.skipIf": "a skipped test scores as a pass",
    "unittest.skipUnless": "a skipped test scores as a pass",
    "unittest.expectedFailure": "a failing test scores as expected",
    "unittest.case.skip": "a skipped test scores as a pass",
    # pytest-rerunfailures' and pytest-retry's marker, and the flaky package's decorator
    "pytest.mark.flaky": "a failing test is run again until it passes",
    "flaky.flaky": "a failing test is run again until it passes",
}
# marker names add_marker takes as strings
SKIP_MARKER_NAMES = ("skip", "skipif", "xfail", "flaky")
# attributes that take a test out of collection, or make unittest skip or xfail it
SKIP_ATTRIBUTES = {
    "__test__": "it hides the test from collection: it never runs",
    "__unittest_skip__": "unittest skips the test",
    "__unittest_expecting_failure__": "a failing test scores as expected",
}
SKIP_CALLS = {
    "pytest.skip": "skips the test",
    "pytest.xfail": "marks the test as an expected failure",
    "pytest.importorskip": "skips the test when the import fails",
    "_pytest.outcomes.skip": "skips the test",
    "_pytest.outcomes.xfail": "marks the test as an expected failure",
    "_pytest.outcomes.importorskip": "skips the test when the import fails",
}
SKIP_EXCEPTIONS = {
    "unittest.SkipTest",
    "unittest.case.SkipTest",
    "pytest.skip.Exception",
    "pytest.xfail.Exception",
    "_pytest.outcomes.skip.Exception",
    "_pytest.outcomes.xfail.Exception",
    "_pytest.outcomes.Skipped",
    "_pytest.outcomes.XFailed",
}

COLLECTION_HOOKS = {
    "pytest_collection",
    "pytest_collection_modifyitems",
    "pytest_collection_finish",
    "pytest_ignore_collect",
    "pytest_collect_directory",
    "pytest_collect_file",
    "pytest_pycollect_makemodule",
    "pytest_pycollect_makeitem",
    "pytest_make_collect_report",
    "pytest_itemcollected",
    "pytest_deselected",
    "pytest_generate_tests",  # an empty parameter set skips the test
}
OUTCOME_HOOKS = {
    "pytest_pyfunc_call",
    "pytest_report_teststatus",
    "pytest_runtestloop",
    "pytest_collectreport",
    "pytest_sessionstart",
    "pytest_markeval_namespace",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_fixture_setup",
    "pytest_exception_interact",
    "pytest_report_to_serializable",
    "pytest_report_from_serializable",
    "pytest_unconfigure",
}
OPTION_HOOKS = {
    "pytest_load_initial_conftests",
    "pytest_cmdline_parse",
    "pytest_cmdline_preparse",
    "pytest_cmdline_main",
}
# pytest hooks that only add options, describe, or name what runs; the rest of
# the pytest_* names are findings, as pytest takes any pytest_* function for a hook
QUIET_HOOKS = {
    "pytest_addoption",
    "pytest_configure",  # what it assigns is judged where it is written
    "pytest_report_header",
    "pytest_report_collectionfinish",
    "pytest_assertrepr_compare",
    "pytest_make_parametrize_id",
    "pytest_addhooks",
}
# names that look like hooks and are module-level settings judged on their own
NOT_HOOKS = {"pytest_plugins"}
# what a plugin manager loads plugins with
PLUGIN_LOADS = {
    "register",
    "import_plugin",
    "consider_module",
    "consider_conftest",
    "consider_pluginarg",
    "consider_preparse",
    "load_setuptools_entrypoints",
}
MAPPING_WRITES = {"update", "setdefault", "__setitem__"}
# what a plugin manager unloads or blocks plugins with: pytest's own (unittest,
# skipping, python) decide which tests run and how they score
PLUGIN_UNLOADS = {"set_blocked", "unregister"}
# a collected test's attributes that hold the function it runs
TEST_FUNCTION_ATTRIBUTES = {"obj", "function", "_obj"}
TEST_ITEMS = {"node", "item", "_pyfuncitem", "pyfuncitem"}
OUTCOME_ATTRIBUTES = {"exitstatus", "testsfailed", "testscollected", "shouldstop", "shouldfail"}

EXITS = {
    "sys.exit",
    "os._exit",
    "posix._exit",
    "os.kill",
    "os.killpg",
    "os.abort",
    "exit",
    "quit",
    "pytest.exit",
    "_pytest.outcomes.exit",
    "signal.raise_signal",
    "signal.pthread_kill",
    "os.execl",
    "os.execle",
    "os.execlp",
    "os.execlpe",
    "os.execv",
    "os.execve",
    "os.execvp",
    "os.execvpe",
}
# the last part of the names worth resolving where they are only referred to
REFERENCED = {name.rpartition(".")[2] for name in [*SKIP_MARKERS, *EXITS, *SKIP_CALLS]}
REFERENCED.add("__path__")
# what pytest.exit raises: the session ends with the return code it carries
EXIT_EXCEPTIONS = {
    "pytest.exit.Exception",
    "_pytest.outcomes.exit.Exception",
    "_pytest.outcomes.Exit",
}
ENDINGS = EXIT_EXCEPTIONS | {"SystemExit", "builtins.SystemExit", "SkipTest"}
# what raises SystemExit, which pytest turns into a failure inside a test
SYSTEM_EXITS = {
    "sys.exit",
    "exit",
    "quit",
    "builtins.exit",
    "builtins.quit",
    "SystemExit",
    "builtins.SystemExit",
}
DYNAMIC = {"exec", "eval", "compile", "builtins.exec", "builtins.eval", "builtins.compile"}
LOADS = "it runs code this reading cannot see"
# what runs, or hooks into, code that is not written in the test's source
HOOKED_DYNAMIC = {
    "runpy.run_path": LOADS,
    "runpy.run_module": LOADS,
    "importlib.machinery.SourceFileLoader": LOADS,
    "importlib.machinery.SourcelessFileLoader": LOADS,
    "importlib.util.spec_from_file_location": LOADS,
    "importlib.util.spec_from_loader": LOADS,
    "pickle.loads": LOADS,
    "pickle.load": LOADS,
    "marshal.loads": LOADS,
    "marshal.load": LOADS,
    "sys.settrace": "it runs code on every line, and can change what the oracle computes",
    "sys.setprofile": "it runs code on every call, and can change what the oracle computes",
    "threading.settrace": "it runs code on every line, and can change what the oracle computes",
    "sys.meta_path.insert": "it changes how imports are found",
    "sys.meta_path.append": "it changes how imports are found",
    "sys.path_hooks.insert": "it changes how imports are found",
    "sys.path_hooks.append": "it changes how imports are found",
}
CTYPES = "ctypes reaches the interpreter and the process directly"
# context managers that restore the warning filters when they end
WARNING_SCOPES = {"warnings.catch_warnings", "pytest.warns", "pytest.deprecated_call"}
WARNING_FILTERS = {
    "pytest.mark.filterwarnings",
    "warnings.simplefilter",
    "warnings.filterwarnings",
    "warnings.resetwarnings",
}
# modules whose attributes, reached by a computed name, could be an exit or a patch
GUARDED_MODULES = {"sys", "os", "posix", "signal", "builtins", "pytest", "_pytest", "unittest"}

CLOCK = {
    "datetime.datetime.now",
    "datetime.datetime.utcnow",
    "datetime.datetime.today",
    "datetime.date.today",
    "time.time",
    "time.time_ns",
    "time.monotonic",
    "time.monotonic_ns",
    "time.perf_counter",
    "time.perf_counter_ns",
    "time.localtime",
    "time.gmtime",
    "time.ctime",
    "time.asctime",
    "time.clock_gettime",
    "time.clock_gettime_ns",
    "time.process_time",
    "time.process_time_ns",
    "time.thread_time",
    "time.thread_time_ns",
}
ENTROPY = {"uuid.uuid1", "uuid.uuid4", "os.urandom", "os.getrandom", "random.SystemRandom"}
# files whose reading draws entropy or the time
ENTROPY_FILES = {"/dev/urandom", "/dev/random", "/proc/uptime", "/proc/driver/rtc"}
# modules a conftest may not replace attributes of: every module's clock and
# random draws (the oracle's too) would read the stand-in
SHARED_READERS = {"time", "random", "datetime", "uuid", "secrets"}
SEEDED = {
    "random.Random",
    "random.seed",
    "numpy.random.default_rng",
    "numpy.random.RandomState",
    "numpy.random.seed",
}
# the parts of a statement that hold statements and expressions of their own
CLAUSES = (ast.excepthandler, getattr(ast, "match_case", ast.excepthandler))  # match: 3.10+
LISTS = ("collect_ignore", "collect_ignore_glob", "pytest_plugins")
NETWORK = {
    "requests",
    "httpx",
    "aiohttp",
    "urllib3",
    "urllib.request",
    "http.client",
    "socket",
    "asyncio.open_connection",
    "asyncio.open_unix_connection",
    "asyncio.start_server",
    "ftplib",
    "smtplib",
    "websocket",
    "websockets",
}
SEAM_CLOCK = "take the time from a fake clock fixture"
SEAM_ENTROPY = "use committed seeds (random.Random(SEED))"
SEAM_NETWORK = "use a recorded transport (a fixture that replays recorded responses)"

HYPOTHESIS_SETTINGS = {
    "hypothesis.settings",
    "hypothesis.settings.register_profile",
    "hypothesis.settings.load_profile",
}
HYPOTHESIS_DEFAULT_EXAMPLES = 100


FRAMEWORKS = ("pytest", "_pytest", "unittest", "pluggy")
# TestCase methods that run the tests themselves, and so decide their outcome
TESTCASE_RUNNERS = {"run", "__call__", "debug", "_callTestMethod", "_callSetUp", "_callTearDown"}


# what holds the command line's options and the ini values pytest read
OPTION_HOLDERS = {"option", "known_args_namespace", "_inicache", "inicfg"}
