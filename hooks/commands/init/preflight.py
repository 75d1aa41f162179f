"""What freeze-schema and flake-budget will report once the user stages what init
printed, judged before they do, each with the command that fixes it."""

from __future__ import annotations

import datetime
import os
import shlex
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from oracle_guard import contract as contract_mod
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.snapshot import Overlay, Snapshot

if TYPE_CHECKING:
    from oracle_guard.checks.freeze_files import Frozen
    from oracle_guard.findings import Finding
    from oracle_guard.git.plumbing import Git

# What fixes a finding of flake-budget on one entry: the freeze commands (docs:
# how-to/edit-the-oracle.md), which init names with the entry's id.
RENEWABLE = ("budget-expired", "budget-too-far", "budget-no-expiry")


def preflight(
    data: Dict[str, Any],
    git: Git,
    now: datetime.datetime,
    now_arg: Optional[str],
    top: str,
    to_add: Sequence[str],
    planned: Optional[Dict[str, bytes]] = None,
) -> Tuple[List[Tuple[str, str]], List[str]]:
    """What freeze-schema and flake-budget will report on the index as the printed
    ``git add`` leaves it (the working-tree copies of the files it names, over the
    index): each error line, with the command that fixes it where there is one; and
    the files it names that could not be judged that way. ``planned``: what a
    --dry-run would write, read in place of the working tree's copies."""
    # deferred: 1 ms to import, only for preflight()
    from oracle_guard.checks import freeze_schema
    from oracle_guard.judge import judge

    files, unchecked = added_files(data, top, to_add, planned or {})
    staged = Overlay(Snapshot.of_index(git), files, "the index after the git add step")
    probe = contract_mod.Contract(data, staged, from_base=False)
    results = judge(probe, Snapshot.empty(), staged, now, ("freeze-schema", "flake-budget"))
    entries = freeze_schema.load(probe, staged).entries
    when = f" --now {shlex.quote(now_arg)}" if now_arg else ""
    seen, out = set(), []
    for result in results:
        for f in result.findings:
            text = f"{f.path}{':' + str(f.line) if f.line else ''}: {f.code}: {f.message}"
            if f.severity != "error" or text in seen:
                continue
            seen.add(text)
            out.append((text, fix_for(f, entries, data.get("budget", {}), when)))
    return out, unchecked


def added_files(
    data: Dict[str, Any], top: str, to_add: Sequence[str], planned: Dict[str, bytes]
) -> Tuple[Dict[str, Optional[bytes]], List[str]]:
    """The working-tree bytes (None: deleted) of the files in ``to_add`` that the two
    hooks read (freeze files, and the files known_ids names), and those that are no
    regular file, which the overlay cannot stand for."""
    patterns = [p for e in data.get("freeze", []) for p in e["paths"]]
    patterns += data.get("budget", {}).get("known_ids", [])
    files: Dict[str, Optional[bytes]] = {}
    unchecked = []
    for path in PatternSet(patterns).select(to_add) if patterns else []:
        if path in planned:  # a --dry-run: what init would write there
            files[path] = planned[path]
            continue
        full = os.path.join(top, *path.split("/"))
        if os.path.islink(full) or (os.path.lexists(full) and not os.path.isfile(full)):
            unchecked.append(f"{path} (not a regular file)")
            continue
        try:
            with open(full, "rb") as f:
                files[path] = f.read()
        except FileNotFoundError:
            files[path] = None
        except OSError as exc:
            unchecked.append(f"{path} ({exc.strerror or exc})")
    return files, unchecked


def fix_for(finding: Finding, entries: Sequence[Frozen], budget: Dict[str, Any], when: str) -> str:
    if finding.code == "budget-exceeded":
        return (
            f"oracle-guard freeze remove ID{when} for each entry to drop "
            f"(oracle-guard freeze list{when} shows them)"
        )
    if finding.code not in RENEWABLE:
        return ""
    entry = next(
        (
            e
            for e in entries
            if e.path == finding.path
            and e.line == finding.line
            and finding.message.startswith(repr(e.id))
        ),
        None,
    )
    if entry is None:
        return ""
    days = budget.get("max_days")
    ident = shlex.quote(entry.id)
    return (
        f"oracle-guard freeze renew {ident} --days N{when}"
        f"{f' (N at most {days})' if days else ''}, "
        f"or oracle-guard freeze remove {ident}{when}"
    )
