"""The options several commands share, as argparse parent parsers.

Each command module defines ``add_parser(sub)``, which adds its subparser with
these parents and ``set_defaults(run=run)``, and ``run(options) -> int``;
``cli`` puts the environment the command reads in ``options.env``."""
from __future__ import annotations

import argparse
from functools import lru_cache


@lru_cache(maxsize=None)
def common() -> argparse.ArgumentParser:
    """-C and --debug."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("-C", metavar="DIR", default=".",
                        help="run as if started in DIR (default: the current folder)")
    parser.add_argument("--debug", action="store_true",
                        help="print a traceback on unexpected errors")
    return parser


@lru_cache(maxsize=None)
def debug_only() -> argparse.ArgumentParser:
    """--debug alone, for a command that builds its own repository (demo)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--debug", action="store_true",
                        help="print a traceback on unexpected errors")
    return parser
