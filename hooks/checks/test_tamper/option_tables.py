"""The pytest settings options.py knows: each one's type, its effect on a run, and
which are harmless or make a run stricter. Tables only."""

from __future__ import annotations

from typing import Dict

from oracle_guard.checks.test_tamper.arguments import COLLECTS

# -- the settings pytest knows -------------------------------------------------

# Each setting's type, as pytest registers it (`pytest --help`, 9.x), and the
# common plugins' that the rules below name. In native TOML the list types take
# a list of strings, "bool" a boolean and "str" a string; the rest take any scalar.
_TYPES: Dict[str, str] = {
    "addopts": "args",
    "testpaths": "args",
    "norecursedirs": "args",
    "python_files": "args",
    "python_classes": "args",
    "python_functions": "args",
    "usefixtures": "args",
    "required_plugins": "args",
    "doctest_optionflags": "args",
    "pythonpath": "paths",
    "markers": "linelist",
    "filterwarnings": "linelist",
    "strict": "bool",
    "strict_config": "bool",
    "strict_markers": "bool",
    "strict_xfail": "bool",
    "strict_parametrization_ids": "bool",
    "collect_imported_tests": "bool",
    "consider_namespace_packages": "bool",
    "disable_test_id_escaping_and_forfeit_all_rights_to_community_support": "bool",
    "enable_assertion_pass_hook": "bool",
    "faulthandler_exit_on_timeout": "bool",
    "junit_log_passing_tests": "bool",
    "log_cli": "bool",
    "minversion": "str",
    "cache_dir": "str",
    "empty_parameter_set_mark": "str",
    "console_output_style": "str",
    "parametrize_long_str_id_strategy": "str",
    "assertion_text_diff_style": "str",
    "tmp_path_retention_policy": "str",
    "junit_suite_name": "str",
    "junit_logging": "str",
    "junit_duration_report": "str",
    "junit_family": "str",
    "doctest_encoding": "str",
    "log_format": "str",
    "log_date_format": "str",
    "log_cli_format": "str",
    "log_cli_date_format": "str",
    "log_file": "str",
    "log_file_mode": "str",
    "log_file_format": "str",
    "log_file_date_format": "str",
}
_ALIASES = {"xfail_strict": "strict_xfail"}  # pytest 9's old name; the canonical one wins

# Settings that only report, name markers, or make a run fail sooner or louder:
# changing them never makes a failing suite pass or run fewer tests.
_HARMLESS = frozenset(
    (
        "markers minversion console_output_style assertion_text_diff_style "
        "truncation_limit_lines truncation_limit_chars verbosity_assertions "
        "verbosity_test_cases verbosity_subtests junit_suite_name junit_logging "
        "junit_log_passing_tests junit_duration_report junit_family log_format "
        "log_date_format log_cli log_cli_level log_cli_format log_cli_date_format log_file "
        "log_file_mode log_file_level log_file_format log_file_date_format log_auto_indent "
        "tmp_path_retention_count tmp_path_retention_policy faulthandler_timeout "
        "faulthandler_exit_on_timeout enable_assertion_pass_hook doctest_encoding "
        "asyncio_default_fixture_loop_scope asyncio_default_test_loop_scope"
    ).split()
)

_EFFECTS: Dict[str, str] = {
    "testpaths": COLLECTS,
    "python_files": COLLECTS,
    "python_classes": COLLECTS,
    "python_functions": COLLECTS,
    "collect_imported_tests": COLLECTS,
    "norecursedirs": "it changes which folders are searched for tests",
    "consider_namespace_packages": "it changes how test modules are imported",
    "pythonpath": "it can shadow the oracle's modules",
    "usefixtures": "it runs a fixture in every test",
    "empty_parameter_set_mark": "it changes the outcome of tests with no parameters",
    "cache_dir": "it moves pytest's cache, which holds the --lf and --sw state",
    "log_level": "it changes which log records tests capture",
    "doctest_optionflags": "it changes how doctests compare their output",
    "max_warnings": "it changes how many warnings fail the run",
    "parametrize_long_str_id_strategy": "it changes the test ids",
    "disable_test_id_escaping_and_forfeit_all_rights_to_community_support": (
        "it changes the test ids"
    ),
    "timeout": "it changes the per-test timeout",
    "session_timeout": "it changes the run's timeout",
    "asyncio_mode": "it changes which async tests run",
}
UNKNOWN = "a setting oracle-guard does not know; an owner sets runner options"

# Booleans that make a run stricter when true: only turning one off is a mark.
# `strict` turns the other four on where they are not set.
_STRICT_PARTS = ("strict_config", "strict_markers", "strict_xfail", "strict_parametrization_ids")
_LOOSENS: Dict[str, str] = {
    "strict": "it turns pytest's strictness options off",
    "strict_config": "unknown settings stop being errors",
    "strict_markers": "unregistered markers stop being errors",
    "strict_xfail": "an xfail test that passes no longer fails the run",
    "strict_parametrization_ids": "duplicate parametrize ids stop being errors",
}

# Lint plugins' exemptions (pytest-pep8, pytest-flakes, pytest-flake8,
# pytest-pycodestyle): each entry keeps code out of a lint item. Setting or
# changing one is a mark as any setting is; dropping one only lints more.
_LINT_IGNORES = frozenset(
    "pep8ignore pep8maxlinelength flakes-ignore flake8-ignore flake8-max-line-length "
    "flake8-max-complexity codestyle_ignore codestyle_max_line_length".split()
)
