"""Each check's hook id, the contract section it reads, and what that section makes
oracle: the files and patterns write-set protects and init proposes.

It sits below the contract and the checks, so both read it without importing each
other; ``checks/registry.py`` builds each check's entry on its section here, in
this order (the canonical order: of reports, of ``--only``, of the manifest)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, NamedTuple, Tuple


def _none(section: Any) -> List[str]:
    return []


def _locks(entries: List[Dict[str, Any]]) -> List[str]:
    return [entry["lock"] for entry in entries]


def _paths(entries: List[Dict[str, Any]]) -> List[str]:
    return [pattern for entry in entries for pattern in entry["paths"]]


def _repo_schemas(entries: List[Dict[str, Any]]) -> List[str]:
    # deferred: 2 ms to import, only for _repo_schemas()
    from oracle_guard.parsing.validation import BUILTIN

    return [entry["schema"] for entry in entries if entry["schema"] not in BUILTIN]


def _record_files(entries: List[Dict[str, Any]]) -> List[str]:
    """The repo schema files and locks the seeds entries' record rules name."""
    out = [e["records"] for e in entries if e.get("records") not in (None, *RECORD_SHAPES)]
    return out + [e["lock"] for e in entries if "lock" in e]


RECORD_SHAPES = ("corpus-line", "replay-case")  # checks/records.py's BUILTIN


def _known_ids(budget: Dict[str, Any]) -> List[str]:
    return list(budget.get("known_ids", []))


def _allow_file(write_set: Dict[str, Any]) -> List[str]:
    return [write_set["allow_file"]] if "allow_file" in write_set else []


class Section(NamedTuple):  # not a dataclass: every hook run would import inspect
    hook: str  # the id of the check that reads it: --only, the manifest, Finding.hook
    name: str  # its key in the contract
    # the files and the patterns it names, which are oracle (given the section's value)
    oracle_files: Callable[[Any], List[str]] = _none
    oracle_globs: Callable[[Any], List[str]] = _none


FIXTURES = Section("fixture-lock", "fixtures", oracle_files=_locks, oracle_globs=_paths)
SEEDS = Section("seed-append-only", "seeds", oracle_files=_record_files, oracle_globs=_paths)
FREEZE = Section("freeze-schema", "freeze", oracle_files=_repo_schemas, oracle_globs=_paths)
BUDGET = Section("flake-budget", "budget", oracle_globs=_known_ids)
WRITE_SET = Section("write-set", "write_set", oracle_files=_allow_file)
TAMPER = Section("test-tamper", "tamper")

SECTIONS: Tuple[Section, ...] = (FIXTURES, SEEDS, FREEZE, BUDGET, WRITE_SET, TAMPER)
HOOKS: Tuple[str, ...] = tuple(section.hook for section in SECTIONS)
