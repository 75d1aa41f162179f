"""A run of one command imports that command's module alone; --help and a
misspelt command still see them all."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from oracle_guard.cli import COMMANDS, build_parser

PROBE = (
    "import sys\nfrom oracle_guard import cli\n"
    "try:\n    cli.main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules "
    "if m.startswith('oracle_guard.commands.') and m.count('.') == 2), file=sys.stderr)\n"
)


def commands_imported(*args: str) -> list:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    return ast.literal_eval(proc.stderr.decode().strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["check", "explain", "schema"])
def test_one_command_imports_its_module_alone(name):
    imported = commands_imported(name, "--help")
    assert COMMANDS[name] in imported
    others = set(COMMANDS.values()) - {COMMANDS[name], "options", "workspace"}
    assert not others & set(imported), imported


@pytest.mark.parametrize("args", [["--help"], ["chek"], []], ids=["help", "misspelt", "none"])
def test_without_a_known_command_every_parser_is_built(args):
    # the near-miss: nothing names one command, so all are there to list or suggest
    assert set(COMMANDS.values()) <= set(commands_imported(*args))


def test_the_parser_of_one_command_parses_as_the_full_one():
    argv = ["check", "--only", "fixture-lock", "--head", "HEAD", "--no-cache"]
    assert vars(build_parser("check").parse_args(argv)) == vars(build_parser().parse_args(argv))


# -- help is wrapped as argparse wraps it, without shutil imported on every run ------------


def every_help(parser) -> dict:
    """Each parser's help and usage by its prog, subcommands' (and theirs) too."""
    import argparse

    found = {parser.prog: (parser.format_help(), parser.format_usage())}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found.update(every_help(child))
    return found


@pytest.mark.parametrize("columns", [None, "50", "200", "0", "wide"])
def test_help_reads_as_argparse_formats_it(monkeypatch, columns):
    import argparse

    from oracle_guard.commands import options

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    ours = every_help(build_parser())
    monkeypatch.setattr(options.Parser, "_get_formatter", argparse.ArgumentParser._get_formatter)
    assert ours == every_help(build_parser())
    assert len(ours) > len(COMMANDS)  # the subcommands' own (freeze's) among them


SHUTIL_PROBE = (
    "import sys\nfrom oracle_guard import cli\n{patch}"
    "cli.build_parser('check').parse_args(['check'])\n"
    "print('shutil' in sys.modules)\n"
)


@pytest.mark.parametrize("stock, imported", [(False, "False"), (True, "True")])
def test_parsing_a_command_imports_no_shutil(stock, imported):
    if sys.version_info >= (3, 14):  # argparse colours its help there: its formatter is kept
        imported = "True"
    # the near-miss: argparse's own formatter imports it, so the probe can tell
    patch = (
        "import argparse\nfrom oracle_guard.commands import options\n"
        "options.Parser._get_formatter = argparse.ArgumentParser._get_formatter\n"
        if stock
        else ""
    )
    proc = subprocess.run(
        [sys.executable, "-c", SHUTIL_PROBE.format(patch=patch)],
        stdout=subprocess.PIPE,
        check=True,
        text=True,
    )
    assert proc.stdout.strip() == imported
