"""``oracle-guard init``: recognise the repository's layout and write the contract,
the fixture lock, editor schemas and the pre-commit hooks for it.

It never stages anything and never overwrites a file without ``--force``; a second
run with nothing new to write changes nothing and says so.
"""
from __future__ import annotations

import copy
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from oracle_guard import contract as contract_mod
from oracle_guard.checks import fixture_lock
from oracle_guard.parsing import validation
from oracle_guard.findings import HOOKS
from oracle_guard.parsing.patterns import PatternSet

LAYOUTS = ("harness", "merge-contract", "oracle-dir", "replay-queue")
CONTRACT = contract_mod.CONTRACT_PATH
SCHEMA_DIR = ".oracle-guard"
PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"
# The README's placeholders: there is no public home, so the user fills them in.
REPO_PLACEHOLDER = "https://your.git.server/mirrors/oracle-guard"
REV_PLACEHOLDER = "0123abc…"
HOOK_IDS = HOOKS + ("oracle-guard",)
ALWAYS_DENIED = (SCHEMA_DIR + "/**", PRE_COMMIT_CONFIG)
# CI configuration, denied whether or not it exists yet: a patch that edits (or adds) a
# workflow can skip the check. Anchored: GitLab reads the root's .gitlab-ci.yml, and a
# pattern without a folder would list the whole tree.
CI_DENIED = (".github/workflows/**", "/.gitlab-ci.yml")
# --ci NAME: the recipe (examples/ci/, shipped as package data oracle_guard.recipes) and
# where it goes. GitHub gets the gate: on pull_request_target the workflow runs as the
# base branch has it, so a pull request cannot edit the check that judges it (the
# pull_request recipe runs as the pull request has it: feedback, not a gate). GitLab has
# one recipe; a merge request can edit .gitlab-ci.yml, which the next steps say.
CI_RECIPES = {
    "github": ("github-actions-base-branch.yml", ".github/workflows/oracle-guard-gate.yml",
               "the CI gate: GitHub Actions on pull_request_target, from the base branch"),
    "gitlab": ("gitlab-ci.yml", ".gitlab-ci.yml",
               "the CI job, in GitLab merge-request pipelines"),
}
# The write set's allow patterns of the example contracts (examples/*/.oracle-guard.yaml);
# init proposes those that match something in the repository.
EXAMPLE_ALLOW: Dict[str, Tuple[str, ...]] = {
    "harness": ("src/**", "tests/**", "README.md"),
    "oracle-dir": ("src/**", "tests/**"),
    "replay-queue": ("src/**", "tests/**", "quarantine/proposed/**"),
}
DEFAULT_MAX_FROZEN = 3
COMMENT_COLUMN = 40

# What gives each layout away: gitignore-style patterns over the repository's paths.
SIGNALS: Dict[str, Tuple[str, ...]] = {
    "harness": ("/seeds/*.json", "/fixtures/", "/freeze.json"),
    "merge-contract": ("/oracle/inputs/", "/oracle/flake_budget.yaml",
                       "/oracle/flake_budget.yml", "/oracle/write_set.txt",
                       "/oracle/*.lock.json"),
    "oracle-dir": ("/oracle/*.jsonl", "/oracle/quarantine.json", "/oracle/seeds.toml",
                   "/oracle/*.sha256"),
    "replay-queue": ("/replays/*.json", "/seeds.lock", "/quarantine/"),
}
# The locks the layouts name: a lock is never one of the fixtures it locks.
LOCKS = ("fixtures/SHA256SUMS", "fixtures.lock.json", "oracle/fixtures.lock.json",
         "oracle/SHA256SUMS")


def say(*values: object, end: str = "\n") -> None:
    """print, with every line made safe to show: init prints file names, ids and
    owners from the repository, which must neither drive the terminal nor read as
    a CI runner command."""
    from oracle_guard.report.escaping import inert, show_text

    text = " ".join(str(v) for v in values)
    sys.stdout.write("\n".join(inert(show_text(line)) for line in text.split("\n")) + end)


class InitError(Exception):
    """init cannot go on (exit 2); nothing has been written."""


# -- recognising the layout ------------------------------------------------
class Paths:
    """The repository's files as init sees them: the index plus what is not staged yet."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.all = sorted(set(paths))

    def __contains__(self, path: str) -> bool:
        return path in self.all

    def match(self, pattern: str) -> List[str]:
        return PatternSet([pattern]).select(self.all)

    def first(self, candidates: Sequence[str]) -> Optional[str]:
        return next((c for c in candidates if c in self), None)


def recognise(paths: Paths) -> Tuple[Optional[str], Dict[str, List[Tuple[str, int]]]]:
    """The layout with the most signals present, or None when none or a tie;
    and, for each layout, the signals found with their number of files."""
    evidence = {}
    for layout, signals in SIGNALS.items():
        found = [(s.lstrip("/"), len(signal_files(paths, s))) for s in signals]
        evidence[layout] = [(s, n) for s, n in found if n]
    best = max(len(found) for found in evidence.values())
    leaders = [layout for layout, found in evidence.items() if len(found) == best]
    if best == 0 or len(leaders) > 1:
        return None, evidence
    return leaders[0], evidence


def signal_files(paths: Paths, signal: str) -> List[str]:
    """The files that make up a signal; a folder's lock is not one of its fixtures."""
    files = paths.match(signal)
    return [p for p in files if p not in LOCKS] if signal.endswith("/") else files


def _describe(found: List[Tuple[str, int]]) -> str:
    return ", ".join(f"{s} ({n} file{'s' if n != 1 else ''})" if s.endswith(("/", "*.json",
                     "*.jsonl", "*.lock.json", "*.sha256")) else s for s, n in found)


# -- proposing a contract --------------------------------------------------
def as_pattern(path: str) -> str:
    """A pattern for exactly this path, written plainly when that is unambiguous."""
    if "/" in path.rstrip("/") and not re.search(r"[*?\[\\!]", path):
        return path
    return contract_mod.literal_pattern(path)


def _harness(paths: Paths, data: Dict[str, Any]) -> List[str]:
    lock = paths.first(["fixtures/SHA256SUMS", "fixtures.lock.json"]) or "fixtures/SHA256SUMS"
    if [p for p in paths.match("/fixtures/") if p != lock]:
        data["fixtures"] = [{"lock": lock, "root": "fixtures", "paths": ["fixtures/**"]}]
    if paths.match("/seeds/*.json"):
        data["seeds"] = [{"paths": ["seeds/*.json"], "format": "json-array"}]
    if "freeze.json" in paths:
        data["freeze"] = [{"paths": ["/freeze.json"], "schema": "freeze"}]
    return []


def _merge_contract(paths: Paths, data: Dict[str, Any]) -> List[str]:
    lock = "oracle/fixtures.lock.json"
    if [p for p in paths.match("/oracle/inputs/") if p != lock]:
        data["fixtures"] = [{"lock": lock, "root": "oracle/inputs",
                             "paths": ["oracle/inputs/**"]}]
    budget_file = paths.first(["oracle/flake_budget.yaml", "oracle/flake_budget.yml"])
    if budget_file:
        data["freeze"] = [{"paths": [budget_file], "schema": "flake-budget"}]
    return ["oracle/**"]


def _oracle_dir(paths: Paths, data: Dict[str, Any]) -> List[str]:
    corpora = paths.match("/oracle/*.jsonl")
    if len(corpora) == 1:  # one corpus: locked by the single digest beside it
        pattern = as_pattern(corpora[0])
        data["fixtures"] = [{"lock": corpora[0][: -len(".jsonl")] + ".sha256",
                             "paths": [pattern]}]
        data["seeds"] = [{"paths": [pattern], "format": "jsonl"}]
    elif corpora:
        data["fixtures"] = [{"lock": "oracle/SHA256SUMS", "root": "oracle",
                             "paths": ["oracle/*.jsonl"]}]
        data["seeds"] = [{"paths": ["oracle/*.jsonl"], "format": "jsonl"}]
    if "oracle/quarantine.json" in paths:
        data["freeze"] = [{"paths": ["oracle/quarantine.json"], "schema": "quarantine-list"}]
    return ["oracle/**"]


def _replay_queue(paths: Paths, data: Dict[str, Any]) -> List[str]:
    seeds = []
    if paths.match("/replays/*.json"):
        seeds.append({"paths": ["replays/*.json"], "format": "immutable"})
    if "seeds.lock" in paths:
        seeds.append({"paths": ["/seeds.lock"], "format": "json-object"})
    if seeds:
        data["seeds"] = seeds
    if paths.match("/quarantine/"):
        data["freeze"] = [{"paths": ["quarantine/active/*.yaml"],
                           "schema": "quarantine-entry"}]
    return ["quarantine/active/**"]


# Each fills in the sections whose files exist and returns the layout's own deny patterns.
PROPOSERS = {"harness": _harness, "merge-contract": _merge_contract,
             "oracle-dir": _oracle_dir, "replay-queue": _replay_queue}


def propose(layout: str, paths: Paths, allow: Optional[Sequence[str]] = None
            ) -> Dict[str, Any]:
    """The contract's data for ``layout``; a section only where its files exist. The
    write set allows ``allow`` (--allow), else the example's patterns that match a path."""
    data: Dict[str, Any] = {"version": 1}
    deny = PROPOSERS[layout](paths, data)
    write_set: Dict[str, Any] = {}
    if allow is None:
        allow = proposed_allow(layout, paths)[0]
    if allow:
        write_set["allow"] = list(dict.fromkeys(allow))
    if layout == "merge-contract" and "oracle/write_set.txt" in paths:
        write_set["allow_file"] = "oracle/write_set.txt"
    write_set["deny"] = deny + list(CI_DENIED) + list(ALWAYS_DENIED)
    data["write_set"] = write_set
    return data


def proposed_allow(layout: str, paths: Paths) -> Tuple[List[str], List[str]]:
    """The example's allow patterns that match a path here, and those left out."""
    example = EXAMPLE_ALLOW.get(layout, ())
    kept = [p for p in example if paths.match(p)]
    return kept, [p for p in example if p not in kept]


def add_budget(data: Dict[str, Any], layout: str, paths: Paths, index) -> List[str]:
    """Put a ``budget`` before ``write_set`` when something can be frozen: a cap no
    lower than what is frozen today, and ``known_ids`` where the frozen ids are
    seed-file stems (the harness layout). Returns notes for the user."""
    if "freeze" not in data:
        return []
    from oracle_guard.checks import freeze_schema
    from oracle_guard.contract import Contract

    probe = Contract(copy.deepcopy(data), index, from_base=False)
    state = freeze_schema.load(probe, index)
    frozen = len(state.entries)
    budget: Dict[str, Any] = {"max_frozen": max(DEFAULT_MAX_FROZEN, frozen), "max_days": 14,
                              "warn_days": 3}
    notes = []
    if frozen > DEFAULT_MAX_FROZEN:
        notes.append(f"{frozen} entries are frozen today, so max_frozen is {frozen}: "
                     "lower it as they are fixed")
    if layout == "harness" and "seeds" in data:
        stems = {os.path.splitext(os.path.basename(p))[0] for p in paths.match("/seeds/*.json")}
        if all(entry.id in stems for entry in state.entries):
            budget["known_ids"] = ["seeds/*.json"]
        else:
            notes.append("known_ids is not set: some frozen ids are not seed-file stems")
    write_set = data.pop("write_set")
    data["budget"] = budget
    data["write_set"] = write_set
    return notes


# -- writing YAML with a comment on each key --------------------------------
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
    "authority": "owners: whoever signs with a key listed here",
    "authority.signers": "ssh-keygen allowed signers ('oracle-guard signers')",
    "authority.require_touch": "only security-key signatures made with a touch",
    # keys init never proposes, kept from a contract that has them
    "base": "what CI compares against when nothing names a base",
    "protected_refs": "server side: the refs pre-receive judges",
    "deletable_refs": "server side: protected refs a push may delete",
    "identity_env": "server side: the variable that names the pusher",
    "timeout_s": "server side: seconds pre-receive may take",
    "limits": "size caps, in bytes, on the files the hooks parse",
    "limits.freeze_bytes": "each freeze, quarantine and budget file",
    "limits.seed_bytes": "each seed file",
    "limits.lock_bytes": "each fixture lock",
}
# The contract's keys in the README's order, which a rewritten contract follows.
CONTRACT_KEYS = ("version", "base", "fixtures", "seeds", "freeze", "budget", "write_set",
                 "authority", "protected_refs", "deletable_refs", "identity_env", "timeout_s",
                 "limits")
WRITE_SET_KEYS = ("allow", "allow_file", "deny", "owners")


def scalar(value: Any) -> str:
    """A YAML scalar (or flow list or mapping, as JSON) that reads back as ``value``."""
    import yaml

    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, (str, int, float, list, dict)):
        raise TypeError(f"cannot write {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):  # a float YAML reads back: digits on both sides of a dot
        if not re.fullmatch(r"-?[0-9]+\.[0-9]+", repr(value)):
            raise TypeError(f"cannot write {value!r}")
        return repr(value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
    plain = value
    try:
        if yaml.safe_load(f"k: {plain}\n") == {"k": value} and "#" not in plain:
            return plain
    except yaml.YAMLError:
        pass
    return json.dumps(value, ensure_ascii=False)


def line(text: str, note: str = "") -> str:
    if not note:
        return text
    return f"{text.ljust(COMMENT_COLUMN - 1)} # {note}"


def lock_note(lock: str) -> str:
    style = fixture_lock.style_for_name(lock)
    if style == "sha256sum":
        return "sha256sum lines; 'oracle-guard lock' refreshes it"
    if style == "digest":
        return "one digest; 'oracle-guard lock' refreshes it"
    return "path -> sha256; 'oracle-guard lock' refreshes it"


def render_contract(data: Dict[str, Any], layout: str) -> str:
    out = [
        f"# yaml-language-server: $schema={SCHEMA_DIR}/contract.schema.json",
        "# The merge contract: the test oracle that the patches it judges may not touch.",
        f"# Written by 'oracle-guard init' for the {layout} layout. Review it, then commit it in",
        "# a human-made commit of its own (README: \"The contract\").",
    ]
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            # fixtures, seeds, freeze: a list of entries
            out.append(line(f"{key}:", KEY_NOTES[key]))
            for item in value:
                for n, (name, item_value) in enumerate(item.items()):
                    note = {"lock": lock_note(str(item_value)),
                            "format": FORMAT_NOTES.get(str(item_value), ""),
                            "schema": SCHEMA_NOTES.get(str(item_value), "")}.get(
                                name, KEY_NOTES.get(f"{key}.{name}", ""))
                    prefix = "  - " if n == 0 else "    "
                    out.append(line(f"{prefix}{name}: {scalar(item_value)}", note))
        elif isinstance(value, dict) and value:  # budget, write_set, limits
            out.append(line(f"{key}:", KEY_NOTES[key]))
            if key == "write_set" and "allow" not in value and "allow_file" not in value:
                out.append(line('  # allow: ["src/**", "tests/**"]',
                                "optional: every changed path must match one"))
            for name, item_value in value.items():
                if name == "deny":
                    out.append(line("  deny:", KEY_NOTES["write_set.deny"]))
                    out.extend(line(f"    - {scalar(p)}", DENY_NOTES.get(p, ""))
                               for p in item_value)
                else:
                    out.append(line(f"  {name}: {scalar(item_value)}",
                                    KEY_NOTES.get(f"{key}.{name}", "")))
            if key == "write_set" and "owners" not in value:
                out.append(line("  # owners: [alice]",
                                "server side: who may push oracle changes (needs identity_env)"))
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
    text = _read_text(path)
    if text is None:
        return None, None, "it is not a UTF-8 text file"
    try:
        return text, contract_mod.parse(text.encode("utf-8"), CONTRACT), ""
    except contract_mod.ContractError as exc:
        return None, None, f"it does not load: {exc}"


def merge_contract(proposed: Dict[str, Any], kept: Dict[str, Any], allow_given: bool
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


# -- editor schemas ---------------------------------------------------------
_URN = "urn:oracle-guard:schema:"


def editor_schema(name: str) -> Dict[str, Any]:
    """The built-in schema ``name`` as one self-contained draft-07 document, the
    draft YAML editors (yaml-language-server) validate with: ``$defs`` become
    ``definitions`` and references to other built-ins are copied in."""
    definitions: Dict[str, Any] = {}

    def ref(target: str, owner: str) -> str:
        where, _, pointer = target.partition("#")
        source = where[len(_URN):] if where.startswith(_URN) else owner
        if where and not where.startswith(_URN) or not pointer.startswith("/$defs/"):
            raise ValueError(f"unexpected $ref {target!r} in the {owner} schema")
        key = pointer[len("/$defs/"):]
        local = key if source == name else f"{source}.{key}"
        if local not in definitions:
            definitions[local] = None  # reserved before converting: no endless recursion
            definitions[local] = convert(validation.builtin_schema(source)["$defs"][key], source)
        return "#/definitions/" + local

    def convert(node: Any, owner: str) -> Any:
        if isinstance(node, list):
            return [convert(item, owner) for item in node]
        if not isinstance(node, dict):
            return node
        out = {k: convert(v, owner) for k, v in node.items()
               if k not in ("$ref", "$schema", "$id", "$defs")}
        if "$ref" in node:
            target = {"$ref": ref(node["$ref"], owner)}
            if out:  # draft-07 ignores a $ref's siblings: keep both in an allOf
                out.setdefault("allOf", []).append(target)
            else:
                out = target
        return out

    source = validation.builtin_schema(name)
    for key in source.get("$defs", {}):
        ref(f"#/$defs/{key}", name)
    body = convert(source, name)
    from oracle_guard import __version__

    schema = {"$schema": "http://json-schema.org/draft-07/schema#",
              "$comment": f"oracle-guard {__version__}: the built-in '{name}' schema as draft-07 "
                          "for editors; the hooks use the built-in. Rewrite it with "
                          "'oracle-guard init --force'."}
    schema.update(body)
    if definitions:
        schema["definitions"] = definitions
    return schema


def editor_schema_text(name: str) -> str:
    return json.dumps(editor_schema(name), indent=2, ensure_ascii=False) + "\n"


def yaml_freeze_schemas(data: Dict[str, Any]) -> List[str]:
    """Built-in schemas of freeze entries whose files are YAML."""
    names = []
    for entry in data.get("freeze", []):
        if entry["schema"] in validation.BUILTIN and entry["schema"] not in names and any(
                p.endswith((".yaml", ".yml")) for p in entry["paths"]):
            names.append(entry["schema"])
    return names


def modeline_for(path: str, schema: str) -> str:
    depth = path.count("/")
    return f"# yaml-language-server: $schema={'../' * depth}{SCHEMA_DIR}/{schema}.schema.json"


# -- .pre-commit-config.yaml -----------------------------------------------
def repo_entry(repo: str, rev: str, indent: str) -> List[str]:
    return [
        line(f"{indent}- repo: {scalar(repo)}", "where you host or mirror oracle-guard"),
        line(f"{indent}  rev: {scalar(rev)}", "a tag or the full commit id you reviewed"),
        f"{indent}  hooks:",
        line(f"{indent}    - id: oracle-guard", "all five checks in one process"),
    ]


def new_pre_commit_config(repo: str, rev: str) -> str:
    lines = [
        "# pre-commit hooks. oracle-guard comes first: with fail_fast, nothing else runs once",
        "# it fails. Written by 'oracle-guard init'.",
        line('minimum_pre_commit_version: "3.2.0"', "the stage names the hooks use"),
        line("default_install_hook_types: [pre-commit, pre-push]",
             "'pre-commit install' installs both"),
        line("fail_fast: true", "stop before the test hooks when the oracle was touched"),
        "repos:",
        *repo_entry(repo, rev, "  "),
    ]
    return "\n".join(lines) + "\n"


def _our_entry(repo: str, rev: str) -> Dict[str, Any]:
    return {"repo": repo, "rev": rev, "hooks": [{"id": "oracle-guard"}]}


def our_entries(config: Any) -> List[int]:
    """The indexes of the ``repos:`` entries that run an oracle-guard hook."""
    repos = config.get("repos") if isinstance(config, dict) else None
    if not isinstance(repos, list):
        return []
    return [n for n, r in enumerate(repos)
            if isinstance(r, dict) and isinstance(r.get("hooks"), list)
            and any(isinstance(h, dict) and h.get("id") in HOOK_IDS for h in r["hooks"])]


def has_our_hooks(config: Any) -> bool:
    return bool(our_entries(config))


def installs_both_stages(text: Optional[str]) -> bool:
    """Does this config make a bare 'pre-commit install' install pre-commit and pre-push?"""
    import yaml

    try:
        config = yaml.safe_load(text) if text is not None else None
    except yaml.YAMLError:
        return False
    types = config.get("default_install_hook_types") if isinstance(config, dict) else None
    return isinstance(types, list) and {"pre-commit", "pre-push"} <= set(
        t for t in types if isinstance(t, str))


PLACEHOLDERS = {"repo": REPO_PLACEHOLDER, "rev": REV_PLACEHOLDER}
# One `repo:` or `rev:` key on a line of its own, with a plain or quoted value.
_KEY_LINE = re.compile(r"(?P<head>[ \t]*(?:-[ \t]+)?(?P<key>repo|rev):)[ \t]+"
                       r"(?P<value>[^#\s](?:[^#]*[^#\s])?)(?P<comment>[ \t]+#.*)?")


@dataclass
class Retarget:
    """Setting repo:/rev: of the oracle-guard entry that is there already."""
    text: Optional[str]  # the edited file; None when it cannot be edited safely
    changed: Dict[str, Any] = field(default_factory=dict)  # key -> the value it had
    why: str = ""  # why nothing was edited (text None, or the entry is 'repo: local')

    @property
    def needs_force(self) -> bool:  # a value other than init's own placeholder goes
        return any(old != PLACEHOLDERS[key] for key, old in self.changed.items())


def _set_value(match: "re.Match[str]", value: str) -> str:
    """The line with the key's value replaced, its comment kept in its column."""
    head = f"{match.group('head')} {scalar(value)}"
    comment = match.group("comment")
    if not comment:
        return head
    column = match.start("comment") + len(comment) - len(comment.lstrip())
    return (head.ljust(column) if len(head) < column else head + " ") + comment.lstrip()


def retarget_pre_commit_config(text: str, wanted: Mapping[str, str]) -> Retarget:
    """The config with the oracle-guard entry's ``repo:``/``rev:`` set to ``wanted``,
    each line edited in place; init reads the result back to be sure nothing else
    changed."""
    import yaml

    config = yaml.safe_load(text)
    ours = our_entries(config)
    if len(ours) != 1:
        return Retarget(None, why=f"{len(ours)} of its 'repos:' entries run oracle-guard hooks")
    where = ours[0]
    entry = config["repos"][where]
    if entry.get("repo") in ("local", "meta"):
        return Retarget(text, why=f"its oracle-guard hooks run from 'repo: {entry['repo']}'")
    changed = {key: entry.get(key) for key, value in wanted.items() if entry.get(key) != value}
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    expected = copy.deepcopy(config)
    for key in changed:
        expected["repos"][where][key] = wanted[key]
        found = []
        for n, ln in enumerate(lines):
            match = _KEY_LINE.fullmatch(ln)
            if match is None or match.group("key") != key:
                continue
            edited = lines[:n] + [_set_value(match, wanted[key])] + lines[n + 1:]
            try:
                if yaml.safe_load(newline.join(edited)) == expected:
                    found.append(edited)
            except yaml.YAMLError:
                continue
        if len(found) != 1:
            return Retarget(None, changed, f"its oracle-guard entry's '{key}:' is not a plain "
                                           "key on a line of its own")
        lines = found[0]
    return Retarget(newline.join(lines), changed)


def edit_pre_commit_config(text: str, repo: str, rev: str) -> Tuple[Optional[str], str]:
    """(new text, "") with our repo entry first in ``repos:``; (text, "") when the hooks
    are there already; (None, why) when the file is not simple enough to edit safely."""
    import yaml

    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return None, f"it does not parse as YAML ({str(exc).splitlines()[0]})"
    if has_our_hooks(config):
        return text, ""
    if not isinstance(config, dict) or not isinstance(config.get("repos"), list) \
            or not config["repos"]:
        return None, "it has no non-empty 'repos:' list"
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    starts = [n for n, ln in enumerate(lines) if re.fullmatch(r"repos:[ \t]*(#.*)?", ln)]
    if len(starts) != 1:
        return None, "its 'repos:' list is not a plain block list"
    first = next((n for n in range(starts[0] + 1, len(lines))
                  if lines[n].strip() and not lines[n].lstrip().startswith("#")), None)
    match = re.match(r"([ \t]*)- ", lines[first]) if first is not None else None
    if match is None:
        return None, "its 'repos:' list is not a plain block list"
    edited = newline.join(lines[:first] + repo_entry(repo, rev, match.group(1))
                          + lines[first:])
    expected = dict(config, repos=[_our_entry(repo, rev)] + config["repos"])
    try:
        if yaml.safe_load(edited) != expected:
            return None, "adding the entry would change more than the 'repos:' list"
    except yaml.YAMLError:
        return None, "adding the entry would not parse"
    return edited, ""


# -- signed authority (authority.signers) -----------------------------------------
HOW_TO_SIGN = "git config gpg.format ssh; git config user.signingkey ~/.ssh/id_ed25519.pub"


@dataclass
class Signing:
    """The key git here signs commits with, and whom it names; or why there is none."""
    principal: str = ""
    key: Any = None  # signers_edit.PublicKey
    setting: str = ""  # user.signingkey as git reads it
    signs_every_commit: bool = False  # commit.gpgsign
    why: str = ""
    fix: str = HOW_TO_SIGN


def _config(git, key: str, kind: Optional[str] = None) -> str:
    return git.config(key, kind) or ""


def signing_identity(git, top: str) -> Signing:
    """git's SSH signing key (gpg.format ssh, user.signingkey: a key file or a
    ``key::`` literal, as git reads them) and the principal that names its user
    (user.email, else user.name)."""
    from oracle_guard.commands import signers as signers_edit

    if (_config(git, "gpg.format") or "openpgp") != "ssh":
        return Signing(why="git here is not set up for SSH signing (gpg.format is not ssh)")
    setting = _config(git, "user.signingkey", "path")
    if not setting:
        return Signing(why="git here signs with SSH keys but names no user.signingkey")
    try:
        if setting.startswith("key::"):
            key = signers_edit.key_from_text(setting[len("key::"):])
        elif setting.startswith("ssh-"):  # git reads this as a literal key too
            key = signers_edit.key_from_text(setting)
        else:  # git signs from the top of the work tree
            key = signers_edit.key_from_file(os.path.join(top, setting))
    except signers_edit.KeyProblem as exc:
        return Signing(why=f"user.signingkey holds no usable public key ({exc})")
    email, name = _config(git, "user.email"), _config(git, "user.name")
    principal, source = (email, "user.email") if email else (name, "user.name")
    fix = "git config user.email YOU@EXAMPLE.COM"
    if not principal:
        return Signing(why="neither user.email nor user.name is set, to name you in the "
                           "signers file", fix=fix)
    problem = signers_edit.principal_problem(principal)
    if problem:
        return Signing(why=f"{source} cannot name you in the signers file ({problem})",
                       fix=fix)
    return Signing(principal, key, setting,
                   signs_every_commit=_config(git, "commit.gpgsign", "bool") == "true")


def plan_signers(plan: "Plan", signing: Signing, top: str) -> None:
    """The allowed signers file the contract's authority names: a new one with the
    user's signing key; one that is there already is kept as it is."""
    from oracle_guard.authority import allowed_signers
    from oracle_guard.commands import signers as signers_edit
    from oracle_guard.git import worktree

    authority = plan.data.get("authority")
    if authority is None:
        plan.notes.append(f"no authority section: {signing.why}; to have owners change the "
                          f"oracle with SSH-signed commits, run {signing.fix} and rerun "
                          "oracle-guard init")
        return
    path = authority["signers"]
    try:
        full = worktree.full_path(top, path)
    except worktree.WorktreeError as exc:
        raise InitError(str(exc)) from None
    if os.path.isdir(full):
        raise InitError(f"{path} is a folder; authority.signers names a file")
    if os.path.lexists(full):
        text = _read_text(full)
        plan.files.append(Planned(path, text or "", "the owners' keys, kept as they are",
                                  state="same"))
        if text is None:
            plan.notes.append(f"{path} is not a UTF-8 text file: oracle-guard check refuses "
                              "the contract until it is fixed")
            return
        try:
            listed = allowed_signers.parse(text)
        except allowed_signers.AllowedSignersError as exc:
            plan.notes.append(f"{path}:{exc.line}: {exc.message}: oracle-guard check refuses "
                              "the contract until the file is fixed")
            return
        if signing.key is not None and all(s.public_key != signing.key.blob for s in listed):
            literal = signing.setting[len("key::"):] if signing.setting.startswith("key::") \
                else signing.setting
            plan.notes.append(f"your signing key ({signing.key.fingerprint}) is not in {path}: "
                              "to sign oracle changes with it, run oracle-guard signers add "
                              f"{shlex.quote(signing.principal)} {shlex.quote(literal)} "
                              "once the contract is staged")
        elif signing.key is None:
            plan.notes.append(f"owners sign oracle changes, but {signing.why}: "
                              f"{signing.fix} sets it up")
        return
    if signing.key is None:
        plan.notes.append(f"{path} does not exist yet: oracle-guard signers add PRINCIPAL "
                          f"KEYFILE writes it once the contract is staged; {signing.why}: "
                          f"{signing.fix} sets up yours")
        return
    plan.files.append(Planned(
        path, signers_edit.new_file(signing.principal, signing.key),
        f"the owners' keys: {signing.principal}, {signing.key.key_type} "
        f"{signing.key.fingerprint}, from user.signingkey"))
    if not signing.signs_every_commit:
        plan.notes.append("git here does not sign every commit: run git config "
                          "commit.gpgsign true, so the pre-commit hook can tell your oracle "
                          "commits will be signed")


# -- the run ----------------------------------------------------------------
MODELINE_WHAT = "the editor schema line"


@dataclass
class Planned:
    path: str
    text: str
    what: str
    state: str = "new"  # new | same | differs | edit | retarget
    needs_force: bool = False  # an edit that replaces a value someone chose
    detail: str = ""  # retarget: the values it replaces
    why: str = ""  # what differs, for the refusal without --force


@dataclass
class Plan:
    layout: str
    evidence: List[Tuple[str, int]]
    contract_text: str
    data: Dict[str, Any]
    files: List[Planned] = field(default_factory=list)
    blocked_locks: List[Tuple[str, List[str]]] = field(default_factory=list)
    snippet: Optional[str] = None
    snippet_why: str = ""
    notes: List[str] = field(default_factory=list)
    pending_oracle: List[str] = field(default_factory=list)
    config_text: Optional[str] = None  # .pre-commit-config.yaml as init leaves it
    config_todo: str = ""  # a repo:/rev: change init could not make itself
    now_arg: Optional[str] = None  # --now, passed on to the commands init prints
    ci: Optional[str] = None  # --ci: github or gitlab
    ci_snippet: Optional[str] = None  # the CI job to paste into a file init leaves alone
    ci_todo: str = ""  # the install source to set in the CI file by hand
    unchecked: List[str] = field(default_factory=list)  # files preflight could not judge


def choose_layout(name: Optional[str], paths: Paths) -> Tuple[str, List[Tuple[str, int]]]:
    recognised, evidence = recognise(paths)
    if name is not None:
        if name not in LAYOUTS:
            raise InitError(f"unknown layout {name!r}; choose one of {', '.join(LAYOUTS)}")
        return name, evidence[name]
    if recognised is None:
        found = {layout: e for layout, e in evidence.items() if e}
        if found:
            what = "; ".join(f"{layout}: {_describe(e)}" for layout, e in found.items())
            raise InitError(f"the repository matches several layouts equally ({what}); "
                            f"pass --layout NAME, one of {', '.join(LAYOUTS)}")
        raise InitError(
            "no known layout recognised (none of seeds/, fixtures/, freeze.json, oracle/, "
            "replays/, seeds.lock, quarantine/ holds a tracked or new file); pass --layout "
            f"NAME, one of {', '.join(LAYOUTS)} (README: \"Examples\"), or write the "
            "contract by hand")
    return recognised, evidence[recognised]


def resolve_rev(repo: str, rev: Optional[str]) -> Tuple[str, str]:
    """(repo as written into the config, rev): a local clone gives its HEAD commit."""
    from oracle_guard.git.plumbing import Git

    if not os.path.isdir(repo):
        return repo, rev or REV_PLACEHOLDER
    where = os.path.abspath(repo)
    if rev is None:
        clone = Git(where, use_cache=False)
        try:
            rev = clone.resolve_commit("HEAD") if clone.ok("rev-parse", "--git-dir") else None
        finally:
            clone.close()
        if rev is None:
            raise InitError(f"--repo {repo!r} is a folder but not a git clone with commits; "
                            "pre-commit installs hooks from a git repository")
    return where, rev


def make_plan(args, git, top: str) -> Plan:
    from oracle_guard.snapshot import Snapshot

    index = Snapshot.of_index(git)
    unstaged = git.unstaged_paths()
    paths = Paths(list(index.entries) + unstaged)
    layout, evidence = choose_layout(args.layout, paths)
    data = propose(layout, paths, args.allow)
    budget_notes = add_budget(data, layout, paths, index)
    signing = signing_identity(git, top)
    if signing.key is not None:
        from oracle_guard.commands.signers import SIGNERS_FILE

        data["authority"] = {"signers": SIGNERS_FILE}
    left_out = proposed_allow(layout, paths)[1] if args.allow is None else []
    kept_text, kept, problem = existing_contract(top)
    contract = Planned(CONTRACT, "", "the contract", why=problem)
    added: List[str] = []
    if kept is not None:  # the human's contract: keep it, add only what it lacks
        data, added = merge_contract(data, kept, args.allow is not None)
        budget_notes = budget_notes if "budget" not in kept else []
        left_out = left_out if "write_set" not in kept else []
        if added:
            contract.what = f"the contract, adding {'; '.join(added)}; the rest kept"
            contract.why = f"init would add {'; '.join(added)}; it keeps the rest"
    contract.text = kept_text if kept is not None and not added else \
        checked_contract(data, layout)
    check_allow_file(data["write_set"].get("allow_file"), index, top)
    notes = list(budget_notes)
    if left_out and "allow" in data["write_set"]:
        notes.append(f"write_set.allow leaves out {', '.join(left_out)} (nothing there yet): "
                     "add it once it exists, or rerun init with --allow PATTERN")
    plan = Plan(layout, evidence, contract.text, data, notes=notes, now_arg=args.now,
                ci=args.ci)
    plan.files.append(contract)
    for name in ["contract"] + yaml_freeze_schemas(data):
        plan.files.append(Planned(f"{SCHEMA_DIR}/{name}.schema.json", editor_schema_text(name),
                                  f"the {name} schema, for your editor"))

    for entry in data.get("fixtures", []):
        pending = fixture_lock.pending_fixtures(entry, unstaged)
        if pending:
            plan.blocked_locks.append((entry["lock"], pending))
            continue
        problems = fixture_lock.unlockable(entry, index)
        if problems:
            raise InitError(f"cannot lock {entry['lock']}: {problems[0]}")
        content, count = fixture_lock.build_lock(entry, index)  # as 'oracle-guard lock' would
        plan.files.append(Planned(entry["lock"], content,
                                  f"the fixture lock, {count} file{'s' if count != 1 else ''}"))

    plan_signers(plan, signing, top)
    rev = plan_pre_commit_config(plan, args, top)
    plan_ci(plan, args, top, rev)

    for planned in plan.files:
        if planned.state != "new":
            continue
        target = os.path.join(top, planned.path)
        if os.path.isdir(target):
            raise InitError(f"{planned.path} is a folder; init writes a file there")
        if os.path.lexists(target):
            planned.state = "same" if _read_text(target) == planned.text else "differs"

    probe = contract_mod.Contract(data, index, from_base=False)
    protected = PatternSet(probe.oracle_globs() + data["write_set"]["deny"])
    written = {p.path for p in plan.files}
    plan.pending_oracle = sorted(
        p for p in set(unstaged) if p not in written and p in paths
        and (protected.matches(p) or p in probe.oracle_files())
        and os.path.lexists(os.path.join(top, p)))
    plan_modelines(plan, paths, top)
    return plan


def plan_pre_commit_config(plan: Plan, args, top: str) -> str:
    """A new config; our entry added first to an existing one; or, with --repo/--rev,
    the repo:/rev: of the entry that is there set to them. Returns the rev."""
    repo, rev = resolve_rev(args.repo, args.rev)
    _plan_config(plan, top, repo, rev, args.repo)
    return rev


def _plan_config(plan: Plan, top: str, repo: str, rev: str, asked_repo: str) -> None:
    wanted = {}
    if asked_repo != REPO_PLACEHOLDER:
        wanted["repo"] = repo
    if rev != REV_PLACEHOLDER:
        wanted["rev"] = rev
    config_path = os.path.join(top, PRE_COMMIT_CONFIG)
    if not os.path.lexists(config_path):
        plan.config_text = new_pre_commit_config(repo, rev)
        plan.files.append(Planned(PRE_COMMIT_CONFIG, plan.config_text,
                                  "the oracle-guard hooks, at pre-commit and pre-push"))
        return
    current = plan.config_text = _read_text(config_path)
    edited, why = (None, "it is not a UTF-8 text file") if current is None else \
        edit_pre_commit_config(current, repo, rev)
    if edited is None:
        plan.snippet = "\n".join(["repos:"] + repo_entry(repo, rev, "  "))
        plan.snippet_why = why
    elif edited != current:
        plan.config_text = edited
        plan.files.append(Planned(PRE_COMMIT_CONFIG, edited,
                                  "the oracle-guard hooks, first in repos:", "edit"))
    elif not wanted:
        plan.files.append(Planned(PRE_COMMIT_CONFIG, current, "the oracle-guard hooks"))
    else:
        change = retarget_pre_commit_config(current, wanted)
        asked = " and ".join(f"{key}: {wanted[key]}" for key in wanted)
        if change.text is None:
            plan.config_todo = (f"in {PRE_COMMIT_CONFIG}, set the oracle-guard entry's "
                                f"{asked} yourself ({change.why})")
            plan.notes.append(f"{PRE_COMMIT_CONFIG} not edited: {change.why}")
        elif change.why:
            plan.notes.append(f"{PRE_COMMIT_CONFIG}: {change.why}, so --repo and --rev "
                              "are not applied")
        if change.text is None or not change.changed:
            plan.files.append(Planned(PRE_COMMIT_CONFIG, current, "the oracle-guard hooks"))
            return
        plan.config_text = change.text
        was = ", ".join(f"{key}: {scalar(old) if isinstance(old, str) else old}"
                        for key, old in change.changed.items())
        plan.files.append(Planned(
            PRE_COMMIT_CONFIG, change.text,
            f"the oracle-guard entry's {' and '.join(k + ':' for k in change.changed)}",
            "retarget", change.needs_force, was, f"its oracle-guard entry has {was}"))


# -- the CI recipe (--ci) --------------------------------------------------------
# The recipes' install source: one `ORACLE_GUARD: "..."` line, whose value init sets.
_SOURCE_LINE = re.compile(r'^(?P<head>[ \t]*ORACLE_GUARD:[ \t]*)"(?P<value>[^"\\\r\n]*)"',
                          re.M)


def recipe_text(name: str) -> str:
    """A CI recipe as shipped: package data ``oracle_guard.recipes``, copies of
    examples/ci/ that a test keeps byte for byte the same."""
    import importlib.util

    spec = importlib.util.find_spec("oracle_guard.recipes")
    folder = list(spec.submodule_search_locations)[0]
    with open(os.path.join(folder, name), "rb") as f:
        return f.read().decode("utf-8")


def pip_source(asked_repo: str, rev: str) -> Tuple[Optional[str], str]:
    """(where CI's pip installs oracle-guard from, git+URL@REV; or None and why not)."""
    if asked_repo == REPO_PLACEHOLDER or rev == REV_PLACEHOLDER:
        return None, ""
    if os.path.isdir(asked_repo):
        return None, f"--repo {asked_repo} is a local folder, which CI cannot reach"
    url = asked_repo
    scp = re.fullmatch(r"([^@/:\s]+@)?([^@/:\s]+):(?!//)(\S+)", url)  # git@host:path
    if scp:
        url = f"ssh://{scp.group(1) or ''}{scp.group(2)}/{scp.group(3)}"
    url = url if url.startswith("git+") else "git+" + url
    if not re.fullmatch(r"git\+[A-Za-z][A-Za-z0-9+.-]*://\S+", url) or re.search(r"\s", rev):
        return None, f"--repo {asked_repo} --rev {rev} is no URL pip installs from"
    return f"{url}@{rev}", ""


def _source_line(text: str) -> Optional["re.Match[str]"]:
    found = list(_SOURCE_LINE.finditer(text))
    return found[0] if len(found) == 1 else None


def fill_recipe(template: str, source: Optional[str]) -> Tuple[str, str]:
    """(the recipe with ``source`` as its install source, or as shipped for None;
    the placeholder it ships with). Read back to be sure only that value changed."""
    import yaml

    match = _source_line(template)
    if match is None:
        raise InitError("internal error: a CI recipe without one ORACLE_GUARD line")
    shipped = match.group("value")
    if source is None:
        return template, shipped
    text = (template[:match.start()] + match.group("head")
            + json.dumps(source, ensure_ascii=False) + template[match.end():])
    if yaml.safe_load(text) != _replaced(yaml.safe_load(template), shipped, source):
        raise InitError(f"cannot write {source!r} as the CI recipe's ORACLE_GUARD")
    return text, shipped


def _replaced(node: Any, old: str, new: str) -> Any:
    if isinstance(node, dict):
        return {k: _replaced(v, old, new) for k, v in node.items()}
    if isinstance(node, list):
        return [_replaced(v, old, new) for v in node]
    return new if node == old else node


def recipe_source(text: Optional[str], template: str) -> Optional[str]:
    """The install source of ``text`` when it is the recipe with only that value set."""
    ours, theirs = _source_line(template), _source_line(text or "")
    if ours is None or theirs is None or text is None:
        return None
    if (text[:theirs.start()], text[theirs.end():]) != (template[:ours.start()],
                                                        template[ours.end():]):
        return None
    return theirs.group("value")


def plan_ci(plan: Plan, args, top: str, rev: str) -> None:
    """--ci: the recipe written with the install source filled in from --repo/--rev
    (a file that is the recipe already gets that value set); an existing .gitlab-ci.yml
    of your own is left alone and the job printed to paste."""
    if not args.ci:
        return
    name, path, what = CI_RECIPES[args.ci]
    template = recipe_text(name)
    source, why = pip_source(args.repo, rev)
    text, shipped = fill_recipe(template, source)
    target = os.path.join(top, path)
    current = _read_text(target) if os.path.isfile(target) else None
    had = recipe_source(current, template)
    todo = (f"in {path}, set ORACLE_GUARD to where CI installs oracle-guard from, as pip "
            f"reads it: git+URL@REV, the repo: and rev: of {PRE_COMMIT_CONFIG} (or rerun "
            f"init with --ci {args.ci} --repo URL --rev REV)")
    if had is None and args.ci == "gitlab" and os.path.lexists(target):
        if re.search(r"^['\"]?oracle-guard['\"]?[ \t]*:", current or "", re.M):
            plan.notes.append(f"{path} already has an oracle-guard job: left as it is")
            return
        plan.ci_snippet = text  # your own pipeline: the job to paste into it
    elif had is not None and (source is None or had == source):
        plan.files.append(Planned(path, current or "", what))
        source = had if had != shipped else None
    elif had is not None:
        plan.files.append(Planned(path, text, "the ORACLE_GUARD install source", "retarget",
                                  had != shipped, f"ORACLE_GUARD: {had}",
                                  f"its ORACLE_GUARD is {had}"))
    else:
        plan.files.append(Planned(path, text, what))
    if source is None:
        plan.ci_todo = todo
        if why:
            plan.notes.append(f"{why}: {path} keeps the ORACLE_GUARD placeholder")


def plan_modelines(plan: Plan, paths: Paths, top: str) -> None:
    """The schema line put first in each YAML freeze file without one, so editors check it."""
    yaml_schemas = yaml_freeze_schemas(plan.data)
    for entry in plan.data.get("freeze", []):
        if entry["schema"] not in yaml_schemas:
            continue
        for path in PatternSet(entry["paths"]).select(paths.all):
            if path.endswith((".yaml", ".yml")):
                planned, note = modeline_edit(top, path, entry["schema"])
                if planned is not None:
                    plan.files.append(planned)
                if note:
                    plan.notes.append(note)


def modeline_edit(top: str, path: str, schema: str) -> Tuple[Optional[Planned], str]:
    """The file with the schema line first; None when it has one already, is no regular
    file, or its data would not stay the same (then a note says why)."""
    from oracle_guard.parsing import loaders

    target = os.path.join(top, path)
    if os.path.islink(target) or not os.path.isfile(target):
        return None, ""
    try:
        with open(target, "rb") as f:
            data = f.read()
    except OSError:
        return None, ""
    first = data.split(b"\n", 1)[0]
    if re.match(rb"[ \t]*#[ \t]*yaml-language-server:", first):
        return None, ""
    try:
        before = loaders.load_yaml(data).value
    except loaders.LoadError as exc:
        return None, f"{path} does not load ({exc}), so init does not add its schema line"
    newline = "\r\n" if first.endswith(b"\r") else "\n"
    text = modeline_for(path, schema) + newline + data.decode("utf-8")
    try:
        after = loaders.load_yaml(text.encode("utf-8")).value
    except loaders.LoadError:
        after = None
    if _canonical(after) != _canonical(before):  # a comment must change no data
        return None, f"putting the schema line first would change {path}'s data: add it yourself"
    return Planned(path, text, MODELINE_WHAT, "edit"), ""


def check_allow_file(path: Optional[str], index, top: str) -> None:
    """The allow_file the contract names holds only path prefixes, as check reads it:
    its working-tree copy (which the printed git add stages), else the index's. A
    line check would refuse stops init, which never turns it into a pattern."""
    from oracle_guard.parsing import loaders
    from oracle_guard.checks.write_set import allow_file_lines

    if path is None:
        return
    full = os.path.join(top, *path.split("/"))
    try:
        if os.path.isfile(full) and not os.path.islink(full):
            with open(full, "rb") as f:
                data = f.read()
        elif path in index:
            data = index.read(path)
        else:
            return  # not there: check says it is missing from the commit
        allow_file_lines(loaders.decode_text(data), path)
    except OSError as exc:
        raise InitError(f"cannot read {path}: {exc.strerror or exc}") from None
    except loaders.LoadError as exc:
        raise InitError(f"{path}: {exc}; nothing was written") from None
    except contract_mod.ContractError as exc:
        raise InitError(f"{exc}; nothing was written") from None


def _canonical(value: Any) -> str:
    """The value with its types, so that 1, 1.0 and true stay apart."""
    return json.dumps(value, sort_keys=True, default=repr)


def _read_text(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def protected_list(data: Dict[str, Any]) -> List[str]:
    from oracle_guard.snapshot import Snapshot

    probe = contract_mod.Contract(data, Snapshot.empty(), from_base=False)
    out: List[str] = []
    for item in probe.oracle_files() + probe.oracle_globs() + data["write_set"]["deny"]:
        shown = ".gitattributes (every one)" if item == ".gitattributes" else item
        if shown not in out:
            out.append(shown)
    return out


# What fixes a finding of flake-budget on one entry: the freeze commands (README:
# "Editing the oracle"), which init names with the entry's id.
RENEWABLE = ("budget-expired", "budget-too-far", "budget-no-expiry")


def preflight(data: Dict[str, Any], git, now, now_arg: Optional[str], top: str,
              to_add: Sequence[str]) -> Tuple[List[Tuple[str, str]], List[str]]:
    """What freeze-schema and flake-budget will report on the index as the printed
    ``git add`` leaves it (the working-tree copies of the files it names, over the
    index): each error line, with the command that fixes it where there is one; and
    the files it names that could not be judged that way."""
    from oracle_guard.checks import freeze_schema
    from oracle_guard.snapshot import Overlay
    from oracle_guard.judge import judge
    from oracle_guard.snapshot import Snapshot

    files, unchecked = added_files(data, top, to_add)
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


def added_files(data: Dict[str, Any], top: str, to_add: Sequence[str]
                ) -> Tuple[Dict[str, Optional[bytes]], List[str]]:
    """The working-tree bytes (None: deleted) of the files in ``to_add`` that the two
    hooks read (freeze files, and the files known_ids names), and those that are no
    regular file, which the overlay cannot stand for."""
    patterns = [p for e in data.get("freeze", []) for p in e["paths"]]
    patterns += data.get("budget", {}).get("known_ids", [])
    files: Dict[str, Optional[bytes]] = {}
    unchecked = []
    for path in PatternSet(patterns).select(to_add) if patterns else []:
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


def fix_for(finding, entries, budget: Dict[str, Any], when: str) -> str:
    if finding.code == "budget-exceeded":
        return (f"oracle-guard freeze remove ID{when} for each entry to drop "
                f"(oracle-guard freeze list{when} shows them)")
    if finding.code not in RENEWABLE:
        return ""
    entry = next((e for e in entries if e.path == finding.path and e.line == finding.line
                  and finding.message.startswith(repr(e.id))), None)
    if entry is None:
        return ""
    days = budget.get("max_days")
    ident = shlex.quote(entry.id)
    return (f"oracle-guard freeze renew {ident} --days N{when}"
            f"{f' (N at most {days})' if days else ''}, "
            f"or oracle-guard freeze remove {ident}{when}")


def quote_all(paths: Iterable[str]) -> str:
    return " ".join(shlex.quote(p) for p in paths)


def main(args, env: Mapping[str, str]) -> int:
    from oracle_guard import clock
    from oracle_guard.git.plumbing import Git

    now = clock.now_from(args.now, env)
    git = Git(args.C, use_cache=False)
    try:
        git.check_repository()
        top = git.toplevel()
        if top is None:
            raise InitError("'oracle-guard init' needs a working tree (not a bare repository)")
        plan = make_plan(args, git, top)
        conflicts = [p for p in plan.files if p.state == "differs" or p.needs_force]
        if conflicts and not args.force and not args.dry_run:
            first = conflicts[0]
            locks = [e["lock"] for e in plan.data.get("fixtures", [])
                     if e["lock"] in [p.path for p in conflicts]]
            others = [p.path for p in conflicts[1:]]
            raise InitError(
                f"{first.path} exists and differs from what init would write"
                f"{' (' + first.why + ')' if first.why else ''}"
                f"{' (and ' + ', '.join(others) + ')' if others else ''}; "
                "nothing was written: rerun with --force to overwrite, or with --dry-run to "
                "see the proposal"
                + ("; to refresh only a stale fixture lock, run 'oracle-guard lock'"
                   if locks else ""))
        report(plan, args)
        if args.dry_run:
            say(f"\n{CONTRACT} as proposed:\n")
            say(plan.contract_text, end="")
            return 0
        write(plan, top)
        to_add, locks = staging(plan, set(git.unstaged_paths()))
        findings, plan.unchecked = preflight(plan.data, git, now, plan.now_arg, top, to_add)
        uncommitted = not_committed(git, [p.path for p in plan.files])
    finally:
        git.close()
    next_steps(plan, to_add, locks, uncommitted, findings)
    return 0


def write(plan: Plan, top: str) -> None:
    """Every planned file or none, never through a symlink (worktree.write_files)."""
    from oracle_guard.git import worktree

    try:
        worktree.write_files(top, {planned.path: planned.text.encode("utf-8")
                                   for planned in plan.files if planned.state != "same"})
    except worktree.WorktreeError as exc:
        raise InitError(str(exc)) from None


def report(plan: Plan, args) -> None:
    """What init found and what it writes (or would write, with --dry-run)."""
    evidence = _describe(plan.evidence) or "none of its files yet"
    how = "as asked (--layout)" if args.layout else "recognised from"
    say(f"oracle-guard init: layout '{plan.layout}', {how}: {evidence}")
    verbs = {"new": ("wrote", "would write"), "edit": ("added", "would add"),
             "retarget": ("set", "would set"),
             "differs": ("overwrote", "would overwrite (needs --force)"),
             "same": ("unchanged", "unchanged")}
    modelines = [p for p in plan.files if p.what == MODELINE_WHAT]
    for planned in plan.files:
        if planned.what == MODELINE_WHAT:
            continue
        verb = verbs[planned.state][1 if args.dry_run else 0]
        if planned.path == PRE_COMMIT_CONFIG and planned.state == "new":
            verb = "would create" if args.dry_run else "created"
        if planned.state == "edit":
            say(f"  {verb} {planned.what} to {planned.path}")
        elif planned.state == "retarget":
            force = " (needs --force)" if planned.needs_force and args.dry_run else ""
            say(f"  {verb} {planned.what} in {planned.path}{force} (it had {planned.detail})")
        else:
            say(f"  {verb} {planned.path} ({planned.what})")
    for planned in modelines[:5]:
        say(f"  {verbs['edit'][1 if args.dry_run else 0]} {MODELINE_WHAT} to "
              f"{planned.path}: {planned.text.split(chr(10), 1)[0].rstrip()}")
    if len(modelines) > 5:
        say(f"  ... and to {len(modelines) - 5} more YAML freeze files")
    for lock, pending in plan.blocked_locks:
        say(f"  not written: {lock} (the fixtures are not all staged: {pending[0]}"
              f"{' and more' if len(pending) > 1 else ''})")
    if plan.snippet is not None:
        say(f"  not edited: {PRE_COMMIT_CONFIG} ({plan.snippet_why}); add this entry "
              "first under its 'repos:' yourself:")
        say("\n".join("    " + ln for ln in plan.snippet.splitlines()))
    if plan.ci_snippet is not None:
        say(f"  not edited: {CI_RECIPES[plan.ci or ''][1]} (it exists); add this job to it "
              "yourself:")
        say("\n".join(("    " + ln).rstrip() for ln in plan.ci_snippet.splitlines()))
    if all(p.state == "same" for p in plan.files) and plan.snippet is None \
            and not plan.blocked_locks and not plan.config_todo and plan.ci_snippet is None:
        say("  nothing changed: every file init writes is already in place")
    for note in plan.notes:
        say(f"  note: {note}")


def not_committed(git, paths: Sequence[str]) -> List[str]:
    """Those of ``paths`` whose staged blob is not the one in HEAD."""
    from oracle_guard.snapshot import Snapshot

    head = git.resolve_commit("HEAD")
    committed = Snapshot.of_commit(git, head, "HEAD").entries if head else {}
    staged = Snapshot.of_index(git).entries
    return [p for p in paths if staged.get(p) != committed.get(p)]


def allowed_line(write_set: Mapping[str, Any]) -> str:
    """What the write set lets a change touch, in one line."""
    allowed = [", ".join(write_set.get("allow", []))] if write_set.get("allow") else []
    if "allow_file" in write_set:
        allowed.append(f"what {write_set['allow_file']} lists")
    if not allowed:
        return ("The write set allows: every path the contract does not protect (it has "
                "no allow)")
    return f"The write set allows: {' and '.join(allowed)} (nothing else)"


def install_step(config_text: Optional[str]) -> str:
    if installs_both_stages(config_text):
        return ("pre-commit install   # the pre-commit and pre-push hooks "
                "(default_install_hook_types)")
    return "pre-commit install --hook-type pre-commit --hook-type pre-push"


def hand_steps(plan: Plan) -> List[Tuple[str, str]]:
    """The edits init leaves to you, in order, each with the file it changes (which
    the git add then stages)."""
    steps = []
    config = next((p for p in plan.files if p.path == PRE_COMMIT_CONFIG), None)
    if plan.config_todo:
        steps.append((plan.config_todo, PRE_COMMIT_CONFIG))
    elif config is not None and (REPO_PLACEHOLDER in config.text
                                 or REV_PLACEHOLDER in config.text):
        steps.append((f"in {PRE_COMMIT_CONFIG}, set repo: to where you host or mirror "
                      "oracle-guard and rev: to the tag or commit you reviewed (or rerun "
                      "init with --repo and --rev)", PRE_COMMIT_CONFIG))
    if plan.snippet is not None:
        unset = REPO_PLACEHOLDER in plan.snippet or REV_PLACEHOLDER in plan.snippet
        steps.append((f"add the oracle-guard entry above to {PRE_COMMIT_CONFIG}"
                      + (", with its repo: and rev: set to where you host or mirror "
                         "oracle-guard and the tag or commit you reviewed" if unset else ""),
                      PRE_COMMIT_CONFIG))
    if plan.ci is not None:
        path = CI_RECIPES[plan.ci][1]
        if plan.ci_snippet is not None:
            steps.append((f"add the oracle-guard job above to {path}", path))
        if plan.ci_todo:
            steps.append((plan.ci_todo, path))
    write_set = plan.data["write_set"]
    if "allow" not in write_set and "allow_file" not in write_set:
        steps.append((f"narrow the write set: rerun init with --allow PATTERN (once a "
                      f"pattern; --force to overwrite), or add write_set.allow to {CONTRACT}",
                      CONTRACT))
    return steps


def staging(plan: Plan, pending: Set[str]) -> Tuple[List[str], List[str]]:
    """What the printed git add stages: the files init wrote or asks you to edit, the
    oracle files not staged yet, the fixtures of a lock not written; and those locks."""
    to_add = [p.path for p in plan.files if p.path in pending]
    to_add += [p for p in plan.pending_oracle if p in pending and p not in to_add]
    for _, path in hand_steps(plan):
        if path not in to_add:
            to_add.append(path)
    locks = []
    for lock, fixtures in plan.blocked_locks:
        to_add += [f for f in fixtures if f not in to_add]
        locks.append(lock)
    return to_add, locks


def next_steps(plan: Plan, to_add: List[str], locks: List[str], uncommitted: List[str],
               findings: List[Tuple[str, str]]) -> None:
    say("The contract protects (write-set denies every change to these):")
    for item in protected_list(plan.data):
        say(f"  {item}")
    say(allowed_line(plan.data["write_set"]))
    steps = [step for step, _ in hand_steps(plan)]
    if to_add:
        steps.append(f"git add {quote_all(to_add)}")
    if locks:
        steps.append(f"oracle-guard lock && git add {quote_all(locks)}")
    if findings:
        steps.append("fix what the hooks will report (below, each with its command) and "
                     "git add what the command names")
    if to_add or locks or uncommitted or findings:
        steps.append("oracle-guard check   # judges what you staged: it should pass")
    steps.append(install_step(plan.config_text))
    if to_add or locks or uncommitted or findings:
        ci_path = CI_RECIPES[plan.ci][1] if plan.ci else None
        ci_note = ""
        if ci_path in to_add or ci_path in uncommitted:
            what = "the workflow" if plan.ci == "github" else ci_path
            ci_note = (f" ({what} too: the contract denies it, so it goes in this first "
                       "guard commit)")
        steps.append("git commit -m 'Guard the test oracle with oracle-guard'   # one "
                     "human-made commit of what the steps above staged, nothing else"
                     + ci_note)
    say("Next steps:")
    for n, step in enumerate(steps, 1):
        say(f"  {n}. {step}")
    if findings:
        say("What the hooks will report today on the oracle as the git add step stages it:")
        for text, fix in findings:
            say(f"  {text}")
            if fix:
                say(f"    fix: {fix}")
    if plan.unchecked:
        say("Not judged before the git add (oracle-guard check judges them once staged): "
              + ", ".join(plan.unchecked))
    say(CI_NEXT[plan.ci or ""])


CI_NEXT = {
    "": "Then add CI and make it a required check: oracle-guard init --ci github|gitlab "
        "writes the recipe (README, \"CI\").",
    "github": "Then, once the workflow is on the default branch, make the oracle-guard-gate "
              "job a required status check (branch protection or a ruleset): README, \"CI\".",
    "gitlab": "Then make the oracle-guard job the gate where a merge request cannot change "
              "it (a CI/CD configuration file kept in another project, or a pipeline "
              "execution policy) and turn on \"Pipelines must succeed\": README, \"CI\".",
}
