"""test-tamper's runner options: the pytest settings a change to a configuration
file adds, changes or drops (hooks/checks/test_tamper/options.py). Each rule
fires with its exact message and line, beside a near miss that must pass."""

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle_guard.checks.test_tamper import arguments, options
from oracle_guard.checks.test_tamper.options import changed_options, is_config
from testing.bounds import property_settings

ROOT = Path(__file__).resolve().parents[1]

SETUP_CFG = """\
[metadata]
name = shop

[tool:pytest]
testpaths = tests
# the workers
addopts = -ra --strict-markers -n auto
markers =
    slow: a slow test
"""
ADDOPTS_LINE = 7  # of SETUP_CFG


def found(path, before, after):
    """(line, message) of each mark, rule runner-options only."""
    before_bytes = None if before is None else before.encode("utf-8")
    marks = changed_options(path, before_bytes, after.encode("utf-8"))
    assert all(mark.rule == "runner-options" for mark in marks), marks
    return [(mark.line, mark.message) for mark in marks]


def unparsable(path, after, before=SETUP_CFG):
    raw = after if isinstance(after, bytes) else after.encode("utf-8")
    marks = changed_options(path, before.encode("utf-8"), raw)
    assert [mark.rule for mark in marks] == ["test-unparsable"], marks
    return marks[0].line, marks[0].message


def with_addopts(addopts):
    return SETUP_CFG.replace("-ra --strict-markers -n auto", addopts)


# -- which files ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pytest.ini", True),
        ("tests/.pytest.ini", True),
        ("pytest.toml", True),
        ("sub/.pytest.toml", True),
        ("pyproject.toml", True),
        ("tox.ini", True),
        ("a/b/setup.cfg", True),
        # near misses: other names pytest never reads by itself
        ("pytest.cfg", False),
        ("setup.cfg.orig", False),
        ("tests/conftest.py", False),
    ],
)
def test_is_config_goes_by_the_file_name_in_any_folder(path, expected):
    assert is_config(path) is expected


def test_a_file_of_another_name_has_no_marks():
    assert changed_options("conftest.py", None, b"addopts = -k x\n") == []


def test_the_parsers_are_imported_only_when_a_file_is_judged():
    code = (
        "import sys\n"
        "from oracle_guard.checks.test_tamper.options import changed_options\n"
        "def loaded():\n"
        "    return [m for m in ('iniconfig', 'shlex', 'tomllib', 'tomli') if m in sys.modules]\n"
        "print(loaded())\n"
        "changed_options('pyproject.toml', None, b'[tool.pytest.ini_options]\\naddopts = \"-v\"\\n')\n"
        "changed_options('tox.ini', None, b'[pytest]\\n')\n"
        "print(loaded())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, check=True, cwd=ROOT
    ).stdout
    expected = (
        "['iniconfig', 'shlex', 'tomllib']"
        if sys.version_info >= (3, 11)
        else "['iniconfig', 'shlex', 'tomli']"
    )
    assert out.splitlines() == ["[]", expected]


def test_setup_cfg_requires_the_tomli_backport_before_3_11():
    text = (ROOT / "setup.cfg").read_text(encoding="utf-8")
    assert 'tomli>=1.1; python_version < "3.11"' in text


# -- addopts ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("added", "shown", "effect"),
    [
        ('-k "not discount"', '-k "not discount"', "it deselects tests"),
        ("-knot_x", "-k not_x", "it deselects tests"),
        ("-m 'not slow'", '-m "not slow"', "it deselects tests"),
        ("--deselect=tests/a.py::t", "--deselect=tests/a.py::t", "it deselects tests"),
        ("--deselect tests/a.py::t", "--deselect tests/a.py::t", "it deselects tests"),
        ("--lf", "--lf", "it deselects tests"),
        ("--last-failed", "--last-failed", "it deselects tests"),
        ("--sw", "--sw", "it deselects tests"),
        ("--stepwise", "--stepwise", "it deselects tests"),
        ("--ignore=tests/test_pay.py", "--ignore=tests/test_pay.py", "it ignores test files"),
        ("--ignore-glob=*pay*", "--ignore-glob=*pay*", "it ignores test files"),
        ("--co", "--co", "it runs no tests"),
        ("--collect-only", "--collect-only", "it runs no tests"),
        ("--setup-plan", "--setup-plan", "it runs no tests"),
        ("--noconftest", "--noconftest", "it keeps conftest.py files from loading"),
        (
            "--confcutdir=tests/unit",
            "--confcutdir=tests/unit",
            "it can keep conftest.py files from loading",
        ),
        (
            "--rootdir=tests",
            "--rootdir=tests",
            "it moves the root folder, and with it the test ids",
        ),
        ("-c other.ini", "-c other.ini", "it reads another configuration file"),
        ("-o xfail_strict=false", "-o xfail_strict=false", "it overrides xfail_strict"),
        (
            "--override-ini=testpaths=tests/unit",
            "--override-ini=testpaths=tests/unit",
            "it overrides testpaths",
        ),
        ("--pyargs", "--pyargs", "it changes which tests are collected"),
        (
            "--continue-on-collection-errors",
            "--continue-on-collection-errors",
            "it runs the tests despite collection errors",
        ),
        (
            "--import-mode=importlib",
            "--import-mode=importlib",
            "it changes how test modules are imported",
        ),
        (
            "-p no:randomly",
            "-p no:randomly",
            "it disables a plugin that randomizes the test order and seed",
        ),
        (
            "-pno:randomly",
            "-p no:randomly",
            "it disables a plugin that randomizes the test order and seed",
        ),
        (
            "-p no:random_order",
            "-p no:random_order",
            "it disables a plugin that randomizes the test order and seed",
        ),
        ("-p no:cacheprovider", "-p no:cacheprovider", "it disables a plugin"),
        ("-p tests.plugin", "-p tests.plugin", "it loads a plugin"),
        ("--randomly-seed=1234", "--randomly-seed=1234", "it fixes the random seed"),
        ("--random-order-seed 7", "--random-order-seed 7", "it fixes the random seed"),
        ("--hypothesis-seed=0", "--hypothesis-seed=0", "it fixes the random seed"),
        (
            "--randomly-dont-reorganize",
            "--randomly-dont-reorganize",
            "it changes the random test order",
        ),
        (
            "--hypothesis-profile=quick",
            "--hypothesis-profile=quick",
            "it picks a Hypothesis profile, which can lower its settings",
        ),
        (
            "--suppress-no-test-exit-code",
            "--suppress-no-test-exit-code",
            "a run that collects no tests exits as a pass",
        ),
        (
            "-W ignore::DeprecationWarning",
            "-W ignore::DeprecationWarning",
            "it can silence warnings that would fail tests",
        ),
        ("-Wi", "-W i", "it can silence warnings that would fail tests"),
        ("--reruns 3", "--reruns 3", "it reruns failing tests, so a flaky failure can pass"),
        ("--basetemp=oracle", "--basetemp=oracle", "it points tmp_path at a folder pytest empties"),
        ("tests/unit", "tests/unit", "it names a path to collect, in place of testpaths"),
        ("-- -k", "-k", "it names a path to collect, in place of testpaths"),
        (
            "--frobnicate",
            "--frobnicate",
            "an option oracle-guard does not know; an owner sets runner options",
        ),
        (
            "--frobnicate=3",
            "--frobnicate=3",
            "an option oracle-guard does not know; an owner sets runner options",
        ),
        ("-Z", "-Z", "an option oracle-guard does not know; an owner sets runner options"),
    ],
)
def test_an_added_option_that_can_green_a_suite_is_a_mark(added, shown, effect):
    after = with_addopts(f"-ra --strict-markers -n auto {added}")
    assert found("setup.cfg", SETUP_CFG, after) == [
        (ADDOPTS_LINE, f"addopts adds {shown}: {effect}")
    ]


@pytest.mark.parametrize(
    "added",
    [
        "-v",
        "-vv",
        "-q",
        "-rA",
        "-r fE",
        "-l",
        "--showlocals",
        "--tb=short",
        "--color=yes",
        "--durations=5",
        "--strict-config",
        "--strict",
        "-W error",
        "-W error::DeprecationWarning",
        "-We",
        "-n 4",
        "--numprocesses=auto",
        "--dist loadscope",
        "--cov=shop --cov-report=term-missing --cov-fail-under=90",
        "-x",
        "--exitfirst",
        "--maxfail=2",
        "--disable-warnings",
        "--runxfail",
        "--hypothesis-show-statistics",
        "--junitxml=report.xml",
        "-o console_output_style=classic",
        "-o xfail_strict=true",
    ],
)
def test_an_added_option_that_only_reports_or_tightens_is_no_mark(added):
    assert (
        found("setup.cfg", SETUP_CFG, with_addopts(f"-ra --strict-markers -n auto {added}")) == []
    )


def test_risky_options_the_base_already_held_are_no_mark_however_written():
    before = with_addopts("-p no:randomly -ra --strict-markers -n auto -k x")
    assert (
        found("setup.cfg", before, with_addopts("-ra --strict-markers -n auto -kx -pno:randomly"))
        == []
    )


@pytest.mark.parametrize(
    ("before", "dropped"),
    [
        ("--strict-markers", "--strict-markers"),
        ("--strict-config", "--strict-config"),
        ("--strict", "--strict"),
        ("-W error", "-W error"),
        ("-W error::DeprecationWarning", "-W error::DeprecationWarning"),
        ("--runxfail", "--runxfail"),
        ("-p randomly", "-p randomly"),
        ("--cov=shop --cov-fail-under=90", "--cov-fail-under=90"),
        ("--doctest-modules", "--doctest-modules"),
        ("tests/integration", "tests/integration"),
        ("-o strict_markers=true", "-o strict_markers=true"),
    ],
)
def test_a_dropped_strictness_option_is_a_mark(before, dropped):
    base = with_addopts(f"-ra -n auto {before}")
    keep = " --cov=shop" if "--cov=shop" in before else ""
    after = with_addopts(f"-ra -n auto{keep}")
    assert found("setup.cfg", base, after) == [(ADDOPTS_LINE, f"addopts drops {dropped}")]


def test_a_dropped_option_oracle_guard_does_not_know_is_a_mark():
    base = with_addopts("-ra --strict-markers --frobnicate")
    assert found("setup.cfg", base, with_addopts("-ra --strict-markers")) == [
        (
            ADDOPTS_LINE,
            "addopts drops --frobnicate: an option oracle-guard does not know; an owner sets "
            "runner options",
        )
    ]


@pytest.mark.parametrize(
    "before",
    ["-k slow", "-v", "-p no:randomly", "--ignore=tests/legacy", "-x", "-W ignore", "--lf", "-n 4"],
)
def test_a_dropped_option_that_selected_or_loosened_is_no_mark(before):
    base = with_addopts(f"-ra --strict-markers {before}")
    assert found("setup.cfg", base, with_addopts("-ra --strict-markers")) == []


@pytest.mark.parametrize(
    "after",
    [
        "addopts =\n    -ra\n    --strict-markers\n    -n auto",
        "addopts = -n auto   -ra\t--strict-markers",
        "addopts = -r a --strict-markers --numprocesses auto",
        "addopts = -ra --strict-markers --numprocesses=auto",
        "addopts: -ra --strict-markers -n auto",
        "addopts =\n    # workers below\n    -ra --strict-markers\n\n    -n auto",
    ],
)
def test_rewriting_addopts_with_the_same_options_is_no_mark(after):
    text = SETUP_CFG.replace("addopts = -ra --strict-markers -n auto", after)
    assert found("setup.cfg", SETUP_CFG, text) == []


def test_an_unchanged_deselection_moved_to_another_line_is_no_mark():
    base = with_addopts('-ra -k "not slow" --strict-markers -n auto')
    moved = base.replace(
        'addopts = -ra -k "not slow" --strict-markers -n auto',
        "addopts =\n    -ra --strict-markers -n auto\n    -k 'not slow'",
    )
    assert found("setup.cfg", base, moved) == []
    # ...while a changed expression is one
    changed = moved.replace("'not slow'", "'not slow and not pay'")
    assert found("setup.cfg", base, changed) == [
        (ADDOPTS_LINE, 'addopts adds -k "not slow and not pay": it deselects tests')
    ]


def test_a_removed_addopts_dropping_strictness_marks_the_section_header():
    after = SETUP_CFG.replace("addopts = -ra --strict-markers -n auto\n", "")
    assert found("setup.cfg", SETUP_CFG, after) == [(4, "addopts drops --strict-markers")]


def test_addopts_subjects_name_the_option_and_its_value():
    after = with_addopts("-ra --strict-markers -n auto -knot_x")
    (mark,) = changed_options("setup.cfg", SETUP_CFG.encode(), after.encode())
    assert (mark.rule, mark.subject, mark.scope) == (
        "runner-options",
        "addopts -k not_x",
        "[tool:pytest]",
    )


@pytest.mark.parametrize(
    ("args", "units"),
    [
        (["-vvx"], [("-v", None), ("-v", None), ("-x", None)]),
        (["-rA", "-r", "A"], [("-r", "A"), ("-r", "A")]),
        (["-xknot_x"], [("-x", None), ("-k", "not_x")]),
        (["-k=x"], [("-k", "x")]),
        (
            ["--exitfirst", "--co", "--collectonly"],
            [("-x", None), ("--collect-only", None), ("--collect-only", None)],
        ),
        (
            ["--cov", "--cov", "src", "--cov=src"],
            [("--cov", None), ("--cov", "src"), ("--cov", "src")],
        ),
        (["--foo", "bar", "--baz", "-v"], [("--foo", "bar"), ("--baz", None), ("-v", None)]),
        (["-vZ"], [("-v", None), ("-Z", None)]),
        (["tests", "--", "-k"], [("", "tests"), ("", "-k")]),
        (["-k"], [("-k", None)]),
    ],
)
def test_arguments_split_into_units_as_argparse_reads_them(args, units):
    assert [(arg.name, arg.value) for arg in arguments.parse(args)] == units


# -- settings -----------------------------------------------------------------------


def test_a_changed_testpaths_is_a_mark():
    after = SETUP_CFG.replace("testpaths = tests", "testpaths = tests/unit")
    assert found("setup.cfg", SETUP_CFG, after) == [
        (5, "testpaths changes from 'tests' to 'tests/unit': it changes which tests are collected")
    ]


def test_a_testpaths_written_over_lines_is_no_mark():
    after = SETUP_CFG.replace("testpaths = tests", "testpaths =\n    tests")
    assert found("setup.cfg", SETUP_CFG, after) == []


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "norecursedirs = tests/pay",
            "norecursedirs is set to 'tests/pay': it changes which folders are searched for tests",
        ),
        (
            "python_files = check_*.py",
            "python_files is set to 'check_*.py': it changes which tests are collected",
        ),
        (
            "python_classes = Check",
            "python_classes is set to 'Check': it changes which tests are collected",
        ),
        (
            "python_functions = check_*",
            "python_functions is set to 'check_*': it changes which tests are collected",
        ),
        (
            "collect_imported_tests = false",
            "collect_imported_tests is set to 'false': it changes which tests are collected",
        ),
        (
            "consider_namespace_packages = true",
            "consider_namespace_packages is set to 'true': it changes how test modules are imported",
        ),
        ("pythonpath = stubs", "pythonpath is set to 'stubs': it can shadow the oracle's modules"),
        (
            "usefixtures = lenient",
            "usefixtures is set to 'lenient': it runs a fixture in every test",
        ),
        (
            "empty_parameter_set_mark = xfail",
            "empty_parameter_set_mark is set to 'xfail': it changes the outcome of tests with no parameters",
        ),
        (
            "cache_dir = tests/.cache",
            "cache_dir is set to 'tests/.cache': it moves pytest's cache, which holds the --lf and --sw state",
        ),
        (
            "log_level = CRITICAL",
            "log_level is set to 'CRITICAL': it changes which log records tests capture",
        ),
        (
            "doctest_optionflags = SKIP",
            "doctest_optionflags is set to 'SKIP': it changes how doctests compare their output",
        ),
        ("timeout = 600", "timeout is set to '600': it changes the per-test timeout"),
        (
            "asyncio_mode = strict",
            "asyncio_mode is set to 'strict': it changes which async tests run",
        ),
        (
            "frobnicate = yes",
            "frobnicate is set to 'yes': a setting oracle-guard does not know; an owner sets runner options",
        ),
    ],
)
def test_an_added_risky_setting_is_a_mark_saying_what_it_does(setting, message):
    after = SETUP_CFG + setting + "\n"
    assert found("setup.cfg", SETUP_CFG, after) == [(SETUP_CFG.count("\n") + 1, message)]


def test_a_removed_setting_is_a_mark_on_the_section_header():
    after = SETUP_CFG.replace("testpaths = tests\n", "")
    assert found("setup.cfg", SETUP_CFG, after) == [
        (4, "testpaths is removed (it was 'tests'): it changes which tests are collected")
    ]


def test_a_long_value_is_cut_in_the_message_not_in_the_subject():
    paths = " ".join(f"tests/part{n}" for n in range(12))
    after = SETUP_CFG.replace("testpaths = tests", f"testpaths = {paths}")
    (mark,) = changed_options("setup.cfg", SETUP_CFG.encode(), after.encode())
    assert mark.message == (
        "testpaths changes from 'tests' to 'tests/part0 tests/part1 tests/part2 tests/part3 "
        "tests/par...': it changes which tests are collected"
    )
    assert mark.subject == f"testpaths = {paths}"


@pytest.mark.parametrize(
    "setting",
    [
        "markers =\n    slow: a slow test\n    pay: payment tests",  # replaces the base's
        "minversion = 8.0",
        "console_output_style = classic",
        "junit_family = xunit2",
        "log_cli = true",
        "log_cli_level = INFO",
        "asyncio_default_fixture_loop_scope = function",
        "verbosity_assertions = 2",
        "truncation_limit_lines = 40",
        "required_plugins = pytest-xdist>=3",
        "max_warnings = 0",
        "faulthandler_timeout = 60",
    ],
)
def test_an_added_harmless_setting_is_no_mark(setting):
    base = SETUP_CFG
    if setting.startswith("markers"):
        after = base.replace("markers =\n    slow: a slow test", setting)
    else:
        after = base + setting + "\n"
    assert found("setup.cfg", base, after) == []


def test_a_dropped_required_plugin_is_a_mark():
    base = SETUP_CFG + "required_plugins = pytest-randomly pytest-xdist\n"
    after = SETUP_CFG + "required_plugins = pytest-xdist\n"
    assert found("setup.cfg", base, after) == [(10, "required_plugins drops pytest-randomly")]


def test_a_raised_warnings_cap_is_a_mark_where_a_new_one_is_not():
    base = SETUP_CFG + "max_warnings = 0\n"
    after = SETUP_CFG + "max_warnings = 50\n"
    assert found("setup.cfg", base, after) == [
        (10, "max_warnings changes from '0' to '50': it changes how many warnings fail the run")
    ]


# -- strictness --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "line", "message"),
    [
        (
            "xfail_strict = true",
            "xfail_strict = false",
            10,
            "xfail_strict changes from 'true' to 'false': an xfail test that passes no longer "
            "fails the run",
        ),
        (
            "strict_markers = true",
            "",
            4,
            "strict_markers is removed (it was 'true'): unregistered markers stop being errors",
        ),
        (
            "strict = true",
            "strict = true\nstrict_xfail = false",
            11,
            "strict_xfail is set to 'false', over strict = true: an xfail test that passes no "
            "longer fails the run",
        ),
        (
            "strict = true",
            "strict = no",
            10,
            "strict changes from 'true' to 'false': it turns pytest's strictness options off",
        ),
    ],
)
def test_turning_a_strictness_option_off_is_a_mark(before, after, line, message):
    base = SETUP_CFG + before + "\n"
    candidate = SETUP_CFG + (after + "\n" if after else "")
    assert found("setup.cfg", base, candidate) == [(line, message)]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("", "xfail_strict = true"),
        ("xfail_strict = true", "strict_xfail = true"),  # pytest 9's new name
        ("xfail_strict = true", "xfail_strict = True"),
        ("strict_markers = false", "strict_markers = true"),
        ("strict = true", "strict = true\nstrict_markers = yes"),
        ("xfail_strict = true", "xfail_strict = true\nstrict = true"),
    ],
)
def test_turning_a_strictness_option_on_or_renaming_it_is_no_mark(before, after):
    base = SETUP_CFG + (before + "\n" if before else "")
    assert found("setup.cfg", base, SETUP_CFG + after + "\n") == []


# -- filterwarnings --------------------------------------------------------------------

FILTERS = SETUP_CFG + "filterwarnings =\n    error\n    ignore::UserWarning\n"


def test_an_added_ignore_filter_is_a_mark():
    after = FILTERS + "    ignore::DeprecationWarning\n"
    assert found("setup.cfg", FILTERS, after) == [
        (
            10,
            "filterwarnings adds 'ignore::DeprecationWarning': it can silence warnings that would "
            "fail tests",
        )
    ]


def test_a_dropped_error_filter_is_a_mark():
    after = FILTERS.replace("    error\n", "")
    assert found("setup.cfg", FILTERS, after) == [(10, "filterwarnings drops 'error'")]


@pytest.mark.parametrize(
    "after",
    [
        FILTERS + "    error::ResourceWarning\n",  # stricter
        FILTERS.replace("    ignore::UserWarning\n", ""),  # an ignore dropped
        # the error filter moved last: a later filter wins, so it now wins over the ignore
        FILTERS.replace(
            "    error\n    ignore::UserWarning\n", "    ignore::UserWarning\n    error\n"
        ),
    ],
)
def test_an_added_error_filter_or_a_dropped_ignore_is_no_mark(after):
    assert found("setup.cfg", FILTERS, after) == []


def test_an_ignore_filter_moved_past_an_error_filter_is_a_mark():
    """A later filter wins: the ignore now overrides the error."""
    before = SETUP_CFG + "filterwarnings =\n    ignore::UserWarning\n    error\n"
    assert found("setup.cfg", before, FILTERS) == [
        (
            10,
            "filterwarnings moves 'ignore::UserWarning' after 'error': it can silence warnings "
            "that would fail tests",
        )
    ]


# -- the sections pytest reads ----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [
        ("setup.cfg", SETUP_CFG, SETUP_CFG.replace("name = shop", "name = shop2")),
        ("setup.cfg", SETUP_CFG, SETUP_CFG + "\n[pytest]\naddopts = -k x\n"),  # pytest fails on it
        # iniconfig has no defaults: [DEFAULT] is a section like any other
        ("tox.ini", "[pytest]\n", "[DEFAULT]\naddopts = -k x\n[pytest]\n"),
        (
            "tox.ini",
            "[tox]\nenvlist = py3\n",
            "[tox]\nenvlist = py3\n[testenv]\ncommands = pytest -k x\n",
        ),
        ("pytest.ini", "[pytest]\n", "[pytest]\n[tool:pytest]\naddopts = -k x\n"),
        ("pyproject.toml", "[tool.ruff]\nline-length = 100\n", "[tool.ruff]\nline-length = 120\n"),
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\n",
            "[tool.pytest.ini_options]\n[tool.pytest-other]\naddopts = '-k x'\n",
        ),
        ("pytest.toml", "[pytest]\n", "[pytest]\n[tool.pytest]\naddopts = ['-k', 'x']\n"),
    ],
)
def test_a_change_outside_the_sections_pytest_reads_is_no_mark(path, before, after):
    assert found(path, before, after) == []


@pytest.mark.parametrize(
    ("path", "before", "after", "line", "scope"),
    [
        ("pytest.ini", "[pytest]\naddopts = -v\n", "[pytest]\naddopts = -v -k x\n", 2, "[pytest]"),
        (".pytest.ini", "[pytest]\naddopts = -v\n", "[pytest]\naddopts = -v -k x\n", 2, "[pytest]"),
        (
            "tox.ini",
            "[tox]\n[pytest]\naddopts = -v\n",
            "[tox]\n[pytest]\naddopts = -v -k x\n",
            3,
            "[pytest]",
        ),
        (
            "tests/setup.cfg",
            "[tool:pytest]\naddopts = -v\n",
            "[tool:pytest]\naddopts = -v -k x\n",
            2,
            "[tool:pytest]",
        ),
        (
            "pyproject.toml",
            '[project]\nname = "shop"\n\n[tool.pytest.ini_options]\naddopts = "-v"\n',
            '[project]\nname = "shop"\n\n[tool.pytest.ini_options]\naddopts = "-v -k x"\n',
            5,
            "tool.pytest.ini_options",
        ),
        (
            "pyproject.toml",
            '[tool.pytest.ini_options]\naddopts = ["-v"]\n',
            '[tool.pytest.ini_options]\naddopts = ["-v", "-k", "x"]\n',
            2,
            "tool.pytest.ini_options",
        ),
        (
            "pyproject.toml",
            '[tool.pytest]\naddopts = ["-v"]\n',
            '[tool.pytest]\naddopts = [\n  "-v",\n  "-k", "x",\n]\n',
            2,
            "tool.pytest",
        ),
        (
            "pytest.toml",
            '[pytest]\naddopts = ["-v"]\n',
            '[pytest]\naddopts = ["-v", "-kx"]\n',
            2,
            "pytest",
        ),
        (
            ".pytest.toml",
            '[pytest]\naddopts = ["-v"]\n',
            '\n[pytest]\naddopts = ["-v", "-kx"]\n',
            3,
            "pytest",
        ),
    ],
)
def test_each_file_pytest_reads_is_judged_the_same_way(path, before, after, line, scope):
    marks = changed_options(path, before.encode(), after.encode())
    assert [(m.line, m.scope, m.message) for m in marks] == [
        (line, scope, "addopts adds -k x: it deselects tests")
    ]


def test_a_native_toml_string_needs_no_split_and_a_list_item_is_one_argument():
    before = '[tool.pytest]\naddopts = ["-v"]\n'
    after = '[tool.pytest]\naddopts = ["-v", "-k not discount"]\n'
    assert found("pyproject.toml", before, after) == [
        (2, 'addopts adds -k " not discount": it deselects tests')
    ]


@pytest.mark.parametrize(
    "after",
    [
        # the same settings, moved from INI mode to pytest 9's native table
        '[tool.pytest]\naddopts = ["-ra", "--strict-markers"]\ntestpaths = ["tests"]\nxfail_strict = true\n',
        # dotted keys and an inline table
        'tool.pytest.ini_options = {addopts = "-ra --strict-markers", testpaths = ["tests"], xfail_strict = "true"}\n',
        '[tool]\npytest.ini_options.addopts = ["-ra", "--strict-markers"]\npytest.ini_options.testpaths = "tests"\npytest.ini_options.xfail_strict = true\n',
    ],
)
def test_pyproject_written_another_way_with_the_same_settings_is_no_mark(after):
    before = '[tool.pytest.ini_options]\naddopts = "-ra --strict-markers"\ntestpaths = ["tests"]\nxfail_strict = true\n'
    assert found("pyproject.toml", before, after) == []


def test_a_key_in_a_dotted_table_or_after_a_multiline_string_has_its_own_line():
    before = '[tool]\npytest.ini_options.testpaths = "tests"\n'
    after = (
        '[tool]\ndoc = """\naddopts = fake\n"""\nlist = [\n  "[x]",\n  {a = 1},\n]\n'
        'pytest.ini_options.testpaths = "tests/unit"\n'
    )
    assert found("pyproject.toml", before, after) == [
        (9, "testpaths changes from 'tests' to 'tests/unit': it changes which tests are collected")
    ]


# -- new configuration files --------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "text", "line", "message"),
    [
        (
            "pytest.ini",
            "",
            1,
            "a new pytest.ini becomes the pytest configuration of the runs under the root (the nearest file wins), in place of the one they read and every option it set",
        ),
        (
            "tests/pytest.ini",
            "# owners only\n",
            1,
            "a new pytest.ini becomes the pytest configuration of the runs under tests/ (the nearest file wins), in place of the one they read and every option it set",
        ),
        (
            "tests/.pytest.ini",
            "[pytest]\n",
            1,
            "a new .pytest.ini becomes the pytest configuration of the runs under tests/ (the nearest file wins), in place of the one they read and every option it set",
        ),
        (
            "tests/pytest.toml",
            "\n[pytest]\n",
            2,
            "a new pytest.toml becomes the pytest configuration of the runs under tests/ (the nearest file wins), in place of the one they read and every option it set",
        ),
        (
            "tests/unit/tox.ini",
            "[tox]\n[pytest]\n",
            2,
            "a new tox.ini becomes the pytest configuration of the runs under tests/unit/ (the nearest file wins), in place of the one they read and every option it set",
        ),
        (
            "tests/setup.cfg",
            "[tool:pytest]\n",
            1,
            "a new setup.cfg becomes the pytest configuration of the runs under tests/ (the nearest file wins), in place of the one they read and every option it set",
        ),
        (
            "tests/pyproject.toml",
            "[tool.pytest.ini_options]\n",
            1,
            "a new pyproject.toml becomes the pytest configuration of the runs under tests/ (the nearest file wins), in place of the one they read and every option it set",
        ),
    ],
)
def test_a_new_configuration_file_is_a_mark_even_when_empty(path, text, line, message):
    assert found(path, None, text) == [(line, message)]


def test_a_file_that_gains_a_pytest_section_is_a_mark():
    before = "[tool.ruff]\nline-length = 100\n"
    after = before + '\n[tool.pytest.ini_options]\nminversion = "8"\n'
    assert found("pyproject.toml", before, after) == [
        (
            4,
            "pyproject.toml, now with [tool.pytest.ini_options], becomes the pytest "
            "configuration of the runs under the root (the nearest file wins), in place of "
            "the one they read and every option it set",
        )
    ]


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [
        ("tests/tox.ini", None, "[tox]\nenvlist = py3\n"),  # no [pytest]: pytest skips it
        ("tests/setup.cfg", None, "[metadata]\nname = x\n"),
        ("tests/pyproject.toml", None, '[project]\nname = "x"\n'),
        ("tests/pyproject.toml", None, "[tool.pytest]\n"),  # an empty native table counts not
        ("pytest.ini", "", "[pytest]\nminversion = 8\n"),  # not new
    ],
)
def test_a_new_file_pytest_does_not_take_as_its_configuration_is_no_mark(path, before, after):
    assert found(path, before, after) == []


# -- what does not load ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "after", "line", "message"),
    [
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\naddopts = '-v'\ntestpaths\n",
            3,
            "does not load as TOML: Expected '=' after a key in a key/value pair (line 3, column 10)",
        ),
        (
            "pyproject.toml",
            "[tool.pytest\n",
            1,
            "does not load as TOML: Expected ']' at the end of a table declaration (line 1, column 13)",
        ),
        (
            "pytest.toml",
            "[pytest]\nx = 1\nx = 2\n",
            3,
            "does not load as TOML: Cannot overwrite a value (line 3, column 6)",
        ),
        (
            "pyproject.toml",
            b"\xef\xbb\xbf[tool.pytest]\n",
            1,
            "does not load as TOML: it starts with a byte-order mark",
        ),
        (
            "pyproject.toml",
            b"[project]\nname = '\xe9'\n",
            2,
            "does not load as TOML: byte 0xe9 is not UTF-8 (line 2, column 9)",
        ),
        (
            "setup.cfg",
            b"[tool:pytest]\naddopts = -k caf\xe9\n",
            2,
            "does not load as INI: byte 0xe9 is not UTF-8 (line 2, column 17)",
        ),
        (
            "setup.cfg",
            "[tool:pytest]\naddopts = -v\naddopts = -k x\n",
            3,
            "does not load as INI: duplicate name 'addopts' (line 3)",
        ),
        (
            "tox.ini",
            "[pytest]\n[tox]\n[pytest]\n",
            3,
            "does not load as INI: duplicate section 'pytest' (line 3)",
        ),
        (
            "pytest.ini",
            "addopts = -k x\n",
            1,
            "does not load as INI: no section header defined (line 1)",
        ),
        (
            "pytest.ini",
            "[pytest]\n-k x\n",
            2,
            "does not load as INI: unexpected line: '-k x' (line 2)",
        ),
        (
            "pytest.ini",
            "[pytest]\naddopts = -k 'not x\n",
            2,
            "does not load as pytest configuration: addopts: No closing quotation",
        ),
        (
            "pytest.ini",
            "[pytest]\nxfail_strict = maybe\n",
            2,
            "does not load as pytest configuration: xfail_strict = 'maybe' is not a boolean",
        ),
        (
            "pyproject.toml",
            '[tool.pytest]\naddopts = "-k x"\n',
            2,
            "does not load as pytest configuration: tool.pytest.addopts must be a list of strings, not a string",
        ),
        (
            "pyproject.toml",
            '[tool.pytest]\ntestpaths = ["tests", 1]\n',
            2,
            "does not load as pytest configuration: tool.pytest.testpaths must be a list of strings; it holds an integer",
        ),
        (
            "pyproject.toml",
            '[tool.pytest]\nxfail_strict = "true"\n',
            2,
            "does not load as pytest configuration: tool.pytest.xfail_strict must be a boolean, not a string",
        ),
        (
            "pyproject.toml",
            "[tool.pytest]\nminversion = 8\n",
            2,
            "does not load as pytest configuration: tool.pytest.minversion must be a string, not an integer",
        ),
        (
            "pyproject.toml",
            '[tool]\npytest = "on"\n',
            2,
            "does not load as pytest configuration: tool.pytest must be a table, not a string",
        ),
        (
            "pyproject.toml",
            "tool = 3\n",
            1,
            "does not load as pytest configuration: tool must be a table, not an integer",
        ),
        (
            "pyproject.toml",
            '[tool.pytest]\nx = ["a"]\n[tool.pytest.ini_options]\ny = "b"\n',
            3,
            "does not load as pytest configuration: settings in both [tool.pytest] and [tool.pytest.ini_options]",
        ),
        (
            "pytest.toml",
            'addopts = ["-k", "x"]\n',
            1,
            "does not load as pytest configuration: settings outside a [pytest] table: addopts",
        ),
        (
            "pytest.toml",
            'pytest = ["x"]\n',
            1,
            "does not load as pytest configuration: pytest must be a table, not a list",
        ),
    ],
)
def test_a_file_that_does_not_load_is_one_unparsable_mark(path, after, line, message):
    assert unparsable(path, after) == (line, message)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("setup.cfg", b"\xef\xbb\xbf[tool:pytest]\naddopts = -v\n"),  # iniconfig drops the mark
        (
            "pyproject.toml",
            b'[tool.pytest]\nx = ["a"]\n[tool.pytest.ini_options]\n',
        ),  # empty: no clash
        ("pytest.ini", b"[pytest]\naddopts = -v # not a comment: two path arguments\n"),
    ],
)
def test_a_file_pytest_loads_is_no_unparsable_mark(path, text):
    marks = changed_options(path, text, text)
    assert [m for m in marks if m.rule == "test-unparsable"] == []


def test_a_base_that_does_not_load_counts_as_empty():
    after = "[tool:pytest]\naddopts = -v -k x\n"
    assert found("setup.cfg", "[tool:pytest\n", after) == [
        (
            1,
            "setup.cfg, now with [tool:pytest], becomes the pytest configuration of the runs under the root (the nearest file wins), in place of the one they read and every option it set",
        ),
        (2, "addopts adds -k x: it deselects tests"),
    ]
    # near miss: a dedicated file was the configuration even when it did not load
    assert found("pytest.ini", "[pytest\n", "[pytest]\naddopts = -v\n") == []


# -- properties ------------------------------------------------------------------------------

_KEYS = [
    "minversion = 8.0",
    "testpaths = tests",
    "xfail_strict = true",
    "markers =\n    slow: slow\n    pay: pay",
    "timeout = 30",
]
_ADDOPTS = ["-ra", "--strict-markers", "-k", "'not slow'", "-n", "auto", "-p", "no:cacheprovider"]


@property_settings(max_examples=40)
@given(
    order=st.permutations(range(len(_KEYS))),
    gaps=st.lists(
        st.sampled_from([" ", "  ", "\t", "\n    ", "\n    # note\n    "]),
        min_size=len(_ADDOPTS) - 1,
        max_size=len(_ADDOPTS) - 1,
    ),
    ruff=st.integers(80, 120),
)
def test_reordering_keys_and_rejoining_addopts_never_marks(order, gaps, ruff):
    def ini(keys, joins, length):
        addopts = _ADDOPTS[0] + "".join(g + a for g, a in zip(joins, _ADDOPTS[1:]))
        body = "\n".join(keys[i] for i in range(len(keys)))
        return (
            f"[tool:ruff]\nline-length = {length}\n\n[tool:pytest]\naddopts = {addopts}\n{body}\n"
        )

    before = ini(_KEYS, [" "] * (len(_ADDOPTS) - 1), 100)
    after = ini([_KEYS[i] for i in order], gaps, ruff)
    assert found("setup.cfg", before, after) == []


@property_settings(max_examples=40)
@given(
    order=st.permutations(range(4)),
    spaces=st.sampled_from(["", " ", "\n  "]),
    ruff=st.integers(80, 120),
)
def test_reordering_toml_keys_and_respacing_lists_never_marks(order, spaces, ruff):
    keys = [
        'addopts = ["-ra",{s}"-k",{s}"not slow"]',
        'testpaths = [{s}"tests"{s}]',
        "xfail_strict = true",
        'minversion = "8.0"',
    ]

    def toml(picked, s, length):
        body = "\n".join(k.format(s=s) for k in picked)
        return f"[tool.ruff]\nline-length = {length}\n\n[tool.pytest]\n{body}\n"

    before = toml(keys, " ", 100)
    assert found("pyproject.toml", before, toml([keys[i] for i in order], spaces, ruff)) == []


_INI_LINES = [
    "[pytest]",
    "[pytest] # note",
    "[pytest] ;]",
    "[pytest]]",
    "[other]",
    "[DEFAULT]",
    "addopts = -v",
    "addopts: -x",
    "Addopts = -q",
    "a = b = c",
    "a: b = c",
    "  -k foo",
    "\t-m x",
    "",
    "# comment",
    "; comment",
    "  # indented comment",
    "testpaths =",
    "key = value # inline",
    "y =",
]


@property_settings(max_examples=150)
@given(
    lines=st.lists(st.sampled_from(_INI_LINES), min_size=1, max_size=8),
    end=st.sampled_from(["", "\n", "\r\n"]),
)
def test_ini_files_load_as_pytest_loads_them(lines, end):
    """The INI reading against pytest's own (_pytest/config/findpaths.py): the same
    settings from every file pytest loads, an error from every file it rejects."""
    from _pytest.config import UsageError
    from _pytest.config.findpaths import _load_pytest_ini

    text = "\n".join(lines) + end
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pytest.ini"
        path.write_bytes(text.encode())
        try:
            reference: Optional[dict] = _load_pytest_ini(path)
        except UsageError:
            reference = None
    if reference is None:
        with pytest.raises(options.Unloadable):
            options._load_ini("pytest.ini", text.encode())
        return
    config = options._load_ini("pytest.ini", text.encode())
    raw = {key: value.value for key, value in (reference or {}).items()}
    expected = options._settings([(key, raw[key], 0) for key in raw], False, "[pytest]")
    assert {k: s.value for k, s in config.settings.items()} == {
        k: s.value for k, s in expected.items()
    }


@pytest.mark.parametrize("name", ["pytest.ini", "tox.ini"])
def test_a_section_header_cut_at_a_comment_is_read_as_pytest_reads_it(name):
    """issue 31, change 1: pytest's iniconfig cuts [pytest] ;] at the ;, so the
    addopts under it are pytest's; configparser would call the section "pytest] ;"."""
    text = "[pytest] ;]\naddopts = -k 'not discount'\n"
    assert found(name, "[pytest]\n", text) == [
        (2, 'addopts adds -k "not discount": it deselects tests')
    ]
    # near miss: the same header holding only harmless options
    assert found(name, "[pytest]\n", "[pytest] ;]\naddopts = -v\n") == []


def test_a_dropped_lint_exemption_is_no_mark_where_an_added_one_is():
    """issue 31 (pluggy's tox.ini): pep8ignore dropped only lints more."""
    base = SETUP_CFG + "pep8ignore = E501 E128\n"
    assert found("setup.cfg", base, SETUP_CFG) == []
    assert found("setup.cfg", SETUP_CFG, base) == [
        (
            10,
            "pep8ignore is set to 'E501 E128': a setting oracle-guard does not know; an owner "
            "sets runner options",
        )
    ]
    changed = base.replace("E501 E128", "E501 E128 E127")
    assert [line for line, _ in found("setup.cfg", base, changed)] == [10]
