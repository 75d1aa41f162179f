"""The contract init writes: every key with a comment saying what it does, loaded
back before it is written; and a contract that is there already, kept with only
what it lacks added."""

from __future__ import annotations

import copy
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from oracle_guard import contract as contract_mod
from oracle_guard.checks import fixture_lock
from oracle_guard.commands.init.files import (
    PRE_COMMIT_CONFIG,
    PRE_COMMIT_YML,
    PREK_CONFIG,
    SCHEMA_DIR,
    read_text,
)
from oracle_guard.commands.init.yaml_lines import line, scalar
from oracle_guard.errors import InitError

CONTRACT = contract_mod.CONTRACT_PATH

FORMAT_NOTES = {
    "json-array": "a JSON array a file: existing elements never change",
    "jsonl": "a JSON value a line: lines are only ever appended",
    "json-object": "keys may be added; none removed or changed",
    "immutable": "files may be added; existing ones never change",
}
SCHEMA_NOTES = {
    "freeze": "excluded property ids, each with reason, owner, expiry",
    "flake-budget": "max_frozen and the frozen entries",
    "quarantine-entry": "one quarantined case a file",
    "quarantine-list": "a list of {test, owner, expires, reason}",
}
DENY_NOTES = {
    "oracle/**": "everything under oracle/",
    "quarantine/active/**": "the active quarantine: bots propose in quarantine/proposed/",
    SCHEMA_DIR + "/**": "the editor schemas init wrote",
    PRE_COMMIT_CONFIG: "the hooks themselves",
    PRE_COMMIT_YML: "the hooks, as prek also reads them",
    PREK_CONFIG: "the hooks, as prek reads them first",
    ".github/workflows/**": "CI: a patch that edits the workflow can skip the check",
    "/.gitlab-ci.yml": "CI: a patch that edits the pipeline can skip the check",
}
KEY_NOTES = {
    "version": "the contract format (1 is the only one)",
    "fixtures": "fixture-lock: files that must match their SHA-256 lock",
    "fixtures.root": "lock keys are relative to this folder",
    "fixtures.paths": "the locked files",
    "seeds": "seed-append-only: seeds are only ever added",
    "seeds.paths": "the seed files",
    "seeds.records": "each new record validates against this JSON Schema",
    "seeds.digest": "a new record's hash field is the SHA-256 of its payload",
    "seeds.id_field": "unique across every record of the set",
    "seeds.lock": "a new record's seed agrees with its id's entry here",
    "seeds.seed_field": "the field the lock's entry must equal",
    "seeds.promote": "fields an owner fills in later, once, from null",
    "seeds.replay": "oracle-guard score runs each record and judges it",
    "freeze": "freeze-schema: files that freeze or quarantine tests",
    "freeze.paths": "the freeze files",
    "budget": "flake-budget: what may stay frozen, and how long",
    "budget.max_frozen": "at most this many frozen entries at once",
    "budget.max_days": "no expiry further than this from now",
    "budget.warn_days": "warn (exit 0) this close to an expiry",
    "budget.known_ids": "frozen ids must be stems of these files",
    "write_set": "write-set: what a change may touch",
    "write_set.allow": "every changed path must match one",
    "write_set.allow_file": "one path prefix from the root a line, no globs",
    "write_set.deny": "protected besides every file named above",
    "write_set.owners": "server side: who may push oracle changes",
    "tamper": "test-tamper: how the suite collects, runs and scores",
    "tamper.paths": "the tests judged (every conftest.py and pytest config too)",
    "tamper.hermetic": "no wall clock, unseeded entropy or network here",
    "tamper.frozen_tests": "existing tests are oracle here; new ones may be added",
    "tamper.allow": "owner-approved exceptions: {rule: CODE, path: PATTERN}",
    "authority": "owners: whoever signs with a key listed here",
    "authority.signers": "ssh-keygen allowed signers ('oracle-guard signers')",
    "authority.require_touch": "only security-key signatures made with a touch",
    # keys init never proposes, kept from a contract that has them
    "base": "what CI compares against when nothing names a base",
    "protected_refs": "server side: the refs pre-receive judges",
    "deletable_refs": "server side: protected refs a push may delete",
    "deletable": "server side: protected refs a push may delete, by whom",
    "deletable.owners": "an owner by identity_env or by a signed push",
    "deletable.everyone": "anyone",
    "identity_env": "server side: the variable that names the pusher",
    "timeout_s": "server side: seconds pre-receive may take",
    "limits": "size caps, in bytes, on the files the hooks parse",
    "limits.freeze_bytes": "each freeze, quarantine and budget file",
    "limits.seed_bytes": "each seed file",
    "limits.lock_bytes": "each fixture lock",
    "limits.test_bytes": "each test and pytest configuration file",
}
# The contract's keys in the order the docs give them, which a rewritten contract follows.
CONTRACT_KEYS = (
    "version",
    "base",
    "fixtures",
    "seeds",
    "freeze",
    "budget",
    "write_set",
    "tamper",
    "authority",
    "protected_refs",
    "deletable_refs",
    "deletable",
    "identity_env",
    "timeout_s",
    "limits",
)
WRITE_SET_KEYS = ("allow", "allow_file", "deny", "owners")


def lock_note(lock: str) -> str:
    style = fixture_lock.style_for_name(lock)
    if style == "sha256sum":
        return "sha256sum lines; 'oracle-guard lock' refreshes it"
    if style == "digest":
        return "one digest; 'oracle-guard lock' refreshes it"
    return "path -> sha256; 'oracle-guard lock' refreshes it"


def tamper_hints(tamper: Dict[str, Any]) -> List[str]:
    """The optional keys of test-tamper's section it does not have, as comments."""
    out = []
    if "hermetic" not in tamper:
        out.append(
            line('  # hermetic: ["properties/**"]', "optional: " + KEY_NOTES["tamper.hermetic"])
        )
    if "allow" not in tamper:
        out.append(
            line(
                '  # allow: [{rule: process-exit, path: "tests/cli/test_exit_codes.py"}]',
                "optional: owner-approved exceptions",
            )
        )
    return out


def render_contract(data: Dict[str, Any], layout: str) -> str:
    out = [
        f"# yaml-language-server: $schema={SCHEMA_DIR}/contract.schema.json",
        "# The merge contract: the test oracle that the patches it judges may not touch.",
        f"# Written by 'oracle-guard init' for the {layout} layout. Review it, then commit it in",
        "# a human-made commit of its own (docs: reference/contract.md).",
    ]
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            # fixtures, seeds, freeze: a list of entries
            out.append(line(f"{key}:", KEY_NOTES[key]))
            for item in value:
                for n, (name, item_value) in enumerate(item.items()):
                    note = {
                        "lock": lock_note(str(item_value)),
                        "format": FORMAT_NOTES.get(str(item_value), ""),
                        "schema": SCHEMA_NOTES.get(str(item_value), ""),
                    }.get(name, KEY_NOTES.get(f"{key}.{name}", ""))
                    prefix = "  - " if n == 0 else "    "
                    out.append(line(f"{prefix}{name}: {scalar(item_value)}", note))
        elif isinstance(value, dict) and value:  # budget, write_set, limits
            out.append(line(f"{key}:", KEY_NOTES[key]))
            if key == "write_set" and "allow" not in value and "allow_file" not in value:
                out.append(
                    line(
                        '  # allow: ["src/**", "tests/**"]',
                        "optional: every changed path must match one",
                    )
                )
            for name, item_value in value.items():
                if name == "deny":
                    out.append(line("  deny:", KEY_NOTES["write_set.deny"]))
                    out.extend(
                        line(f"    - {scalar(p)}", DENY_NOTES.get(p, "")) for p in item_value
                    )
                else:
                    out.append(
                        line(f"  {name}: {scalar(item_value)}", KEY_NOTES.get(f"{key}.{name}", ""))
                    )
            if key == "write_set" and "owners" not in value:
                out.append(
                    line(
                        "  # owners: [alice]",
                        "server side: who may push oracle changes (needs identity_env)",
                    )
                )
            if key == "tamper":
                out.extend(tamper_hints(value))
            if key == "authority" and "require_touch" not in value:
                out.append(line("  # require_touch: true", KEY_NOTES["authority.require_touch"]))
        else:
            out.append(line(f"{key}: {scalar(value)}", KEY_NOTES.get(key, "")))
    return "\n".join(out) + "\n"


def checked_contract(data: Dict[str, Any], layout: str) -> str:
    """The contract text, loaded back through the schema and the strict loader."""
    try:
        text = render_contract(data, layout)
    except TypeError as exc:  # a value a kept contract holds that init cannot write
        raise InitError(f"cannot rewrite {CONTRACT} ({exc}): edit it by hand") from None
    try:
        parsed = contract_mod.parse(text.encode("utf-8"), CONTRACT)
    except contract_mod.ContractError as exc:
        raise InitError(f"the proposed contract does not load: {exc}") from None
    if parsed != data:  # the writer must say exactly what was proposed
        raise InitError("internal error: the contract written does not read back as proposed")
    return text


def existing_contract(top: str) -> Tuple[Optional[str], Optional[Dict[str, Any]], str]:
    """The contract in the working tree: (text, data, "") when it loads; (None, None,
    why) when it does not; (None, None, "") when there is none."""
    path = os.path.join(top, CONTRACT)
    if not os.path.isfile(path) or os.path.islink(path):
        return None, None, ""
    text = read_text(path)
    if text is None:
        return None, None, "it is not a UTF-8 text file"
    try:
        return text, contract_mod.parse(text.encode("utf-8"), CONTRACT), ""
    except contract_mod.ContractError as exc:
        return None, None, f"it does not load: {exc}"


def merge_contract(
    proposed: Dict[str, Any], kept: Dict[str, Any], allow_given: bool
) -> Tuple[Dict[str, Any], List[str]]:
    """The kept contract with what init proposes and it lacks: a section it does not
    have, a deny pattern; and --allow. Everything else in it (the allow, owners, budget
    values, the sections' entries, server-side keys) is a human's choice and stays.
    Returns the merged data and what was added."""
    merged = copy.deepcopy(kept)
    added = []
    for key, value in proposed.items():
        if key not in merged:
            merged[key] = copy.deepcopy(value)
            added.append(key)
    if "write_set" not in added:
        write_set, ours = merged["write_set"], proposed["write_set"]
        if allow_given and write_set.get("allow") != ours["allow"]:
            write_set["allow"] = list(ours["allow"])
            added.append(f"write_set.allow {', '.join(ours['allow'])} (--allow)")
        missing = [p for p in ours["deny"] if p not in write_set.get("deny", [])]
        if missing:
            write_set["deny"] = write_set.get("deny", []) + missing
            added.append(f"write_set.deny {', '.join(missing)}")
        merged["write_set"] = _ordered(write_set, WRITE_SET_KEYS)
    return _ordered(merged, CONTRACT_KEYS), added


def _ordered(data: Dict[str, Any], keys: Sequence[str]) -> Dict[str, Any]:
    rank = {key: n for n, key in enumerate(keys)}
    return dict(sorted(data.items(), key=lambda item: rank.get(item[0], len(rank))))
