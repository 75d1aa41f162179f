"""The files that list the checks for pre-commit, prek and the README, written from
the registry: ``.pre-commit-hooks.yaml`` (pre-commit reads it as a file, so it is
committed) and README.md's hook table.

``python -m oracle_guard.checks.manifest``, run at the top of a checkout, rewrites
both there; ``--check`` writes nothing and exits 1 naming the stale ones
(tests/manifest_test.py runs it). The checkout is the current directory, not this
module's: a non-editable install puts the module in site-packages.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from oracle_guard.checks.registry import CHECKS, Check

COMMAND = "python -m oracle_guard.checks.manifest"
MANIFEST = ".pre-commit-hooks.yaml"
README = "README.md"
REGISTRY = "hooks/checks/registry.py"
# the hook id init writes: every check in one process
ALL_IN_ONE = "oracle-guard"
ALL_IN_ONE_NAME = "oracle-guard (all checks)"
ALL_IN_ONE_DESCRIPTION = "every oracle-guard check in one process"
HEADER = f"# Generated from {REGISTRY} by '{COMMAND}': do not edit by hand.\n"
# README.md's hook table lies between these two lines
TABLE_START = f"<!-- the hook table: generated from the registry by '{COMMAND}' -->"
TABLE_END = "<!-- end of the hook table -->"
# a YAML plain scalar that reads back as the same string
_PLAIN = re.compile(r"[A-Za-z(][^:#'\"\\\n]*[^:\s]\Z")
_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}  # YAML 1.1's


def scalar(text: str) -> str:
    """``text`` as a YAML scalar: plain when it reads back as written, else
    double-quoted (JSON's quoting is YAML's)."""
    plain = _PLAIN.match(text) and text.lower() not in _WORDS
    return text if plain else json.dumps(text)


def hook_name(check: Check) -> str:
    """What pre-commit prints for the hook: the id's first hyphen a space
    ('seed append-only')."""
    return "oracle-guard " + check.id.replace("-", " ", 1)


def _entry(hook: str, name: str, description: str, entry: str) -> List[str]:
    return [
        f"-   id: {hook}",
        f"    name: {scalar(name)}",
        f"    description: {scalar(description)}",
        f"    entry: {entry}",
        "    language: python",
        "    pass_filenames: false",
        "    always_run: true",
        "    require_serial: true",
        "    stages: [pre-commit, pre-push, manual]",
    ]


def manifest() -> str:
    """``.pre-commit-hooks.yaml``: a hook per check, in the registry's order, then the
    one that runs them all."""
    lines = [HEADER.rstrip("\n")]
    for check in CHECKS:
        entry = f"oracle-guard check --only {check.id}"
        lines += _entry(check.id, hook_name(check), check.question, entry)
    lines += _entry(ALL_IN_ONE, ALL_IN_ONE_NAME, ALL_IN_ONE_DESCRIPTION, "oracle-guard check")
    return "\n".join(lines) + "\n"


def hook_table() -> str:
    """README.md's table of the hook ids and their questions, with its marker lines."""
    rows = [TABLE_START, "| hook id | question |", "|---|---|"]
    rows += [f"| `{check.id}` | {check.question.replace('|', '&#124;')} |" for check in CHECKS]
    return "\n".join([*rows, TABLE_END]) + "\n"


def with_hook_table(readme: str) -> str:
    """``readme`` with the text between the table's marker lines (and those lines)
    replaced by the table the registry gives."""
    start, end = readme.find(TABLE_START + "\n"), readme.find(TABLE_END + "\n")
    if start < 0 or end < start:
        raise ValueError(f"{README} has no hook table between {TABLE_START!r} and {TABLE_END!r}")
    return readme[:start] + hook_table() + readme[end + len(TABLE_END) + 1 :]


def checkout() -> Path:
    """The current directory, when it is the top of an oracle-guard checkout."""
    root = Path.cwd()
    if not (root / REGISTRY).is_file():
        raise ValueError(f"{root} has no {REGISTRY}: run this at the top of a checkout")
    return root


def generated(root: Path) -> Dict[str, str]:
    """Each generated file's path below ``root`` and the text it must hold."""
    readme = (root / README).read_text(encoding="utf-8")
    return {MANIFEST: manifest(), README: with_hook_table(readme)}


def stale(root: Path) -> List[str]:
    """The generated files of ``root`` whose text is not what the registry gives."""
    out = []
    for name, text in generated(root).items():
        path = root / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            out.append(name)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in ([], ["--check"]):
        print(f"usage: {COMMAND} [--check]", file=sys.stderr)
        return 2
    try:
        root = checkout()
        texts = generated(root)
        old = stale(root)
    except (OSError, ValueError) as exc:
        print(f"manifest: error: {exc}", file=sys.stderr)
        return 2
    if args == ["--check"]:
        if old:
            print(f"stale: {', '.join(old)}: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    for name in old:
        with open(root / name, "w", encoding="utf-8", newline="") as f:
            f.write(texts[name])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
