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
