"""``oracle-guard explain CODE | HOOK | --all``: what a finding code means, an
example, the fix; a hook's codes; every code."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Iterable, Optional

from oracle_guard.errors import UsageError

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers


def explain(code: Optional[str], every: bool = False) -> int:
    """Print one code's entry, or (``every``) one line a code."""
    # deferred: cli imports this module for its parser; 2 ms, for a run
    from oracle_guard.checks.codes import CODES

    if every == (code is not None):
        raise UsageError("'oracle-guard explain' takes a CODE or --all")
    if every:
        width = max(map(len, CODES))
        hook_width = max(len(info.hook) for info in CODES.values())
        for name, info in CODES.items():
            print(f"{name:<{width}}  {info.hook:<{hook_width}}  {info.meaning}")
        return 0
    assert code is not None  # not every, so the check above saw a code
    name = code.strip().lower()
    if name not in CODES and any(info.hook == name for info in CODES.values()):
        # a hook's id: its codes, one a line
        codes = {c: info for c, info in CODES.items() if info.hook == name}
        width = max(map(len, codes))
        for each, info in codes.items():
            print(f"{each:<{width}}  {info.meaning}")
        return 0
    if name not in CODES:
        raise UsageError(_unknown_code(code, CODES))
    info = CODES[name]
    print(
        f"code:    {name}\nhook:    {info.hook}\nmeaning: {info.meaning}\n"
        f"example: {info.example}\nfix:     {info.fix}"
    )
    return 0


def _unknown_code(given: str, codes: Iterable[str]) -> str:
    """The message for a code that is not one: the near ones, and where the list is."""
    # deferred: cli imports this module for its parser; difflib: 1 ms, for a run
    import difflib

    word = given.strip().lower()
    near = difflib.get_close_matches(word, codes, n=3, cutoff=0.6)
    near += [c for c in codes if word and word in c and c not in near]
    listed = f"did you mean {', '.join(near[:5])}? " if near else ""
    return f"unknown code {given!r}; {listed}'oracle-guard explain --all' lists every code"


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser("explain", help="what a finding code means, an example, the fix")
    parser.add_argument(
        "code", metavar="CODE", nargs="?", help="a finding code, or a hook id to list its codes"
    )
    parser.add_argument(
        "--all", action="store_true", help="list every code with its hook and meaning"
    )
    parser.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    return explain(options.code, options.all)
