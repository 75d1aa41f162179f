"""The editor schemas init writes under .oracle-guard/: the built-in schemas as
draft-07 documents for YAML editors, and the modeline that points a YAML freeze
file at its schema."""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from oracle_guard import __version__
from oracle_guard.commands.init.files import SCHEMA_DIR, Planned
from oracle_guard.parsing import validation
from oracle_guard.parsing.patterns import PatternSet

MODELINE_WHAT = "the editor schema line"
_URN = "urn:oracle-guard:schema:"


def editor_schema(name: str) -> Dict[str, Any]:
    """The built-in schema ``name`` as one self-contained draft-07 document, the
    draft YAML editors (yaml-language-server) validate with: ``$defs`` become
    ``definitions`` and references to other built-ins are copied in."""
    definitions: Dict[str, Any] = {}

    def ref(target: str, owner: str) -> str:
        where, _, pointer = target.partition("#")
        source = where[len(_URN) :] if where.startswith(_URN) else owner
        if where and not where.startswith(_URN) or not pointer.startswith("/$defs/"):
            raise ValueError(f"unexpected $ref {target!r} in the {owner} schema")
        # a definition, or a pointer inside one ("#/$defs/patterns/items"): the
        # definition is copied whole and the pointer kept below it
        key, slash, inside = pointer[len("/$defs/") :].partition("/")
        local = key if source == name else f"{source}.{key}"
        if local not in definitions:
            definitions[local] = None  # reserved before converting: no endless recursion
            definitions[local] = convert(validation.builtin_schema(source)["$defs"][key], source)
        return "#/definitions/" + local + slash + inside

    def convert(node: Any, owner: str) -> Any:
        if isinstance(node, list):
            return [convert(item, owner) for item in node]
        if not isinstance(node, dict):
            return node
        out = {
            k: convert(v, owner)
            for k, v in node.items()
            if k not in ("$ref", "$schema", "$id", "$defs")
        }
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

    schema: Dict[str, Any]
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$comment": f"oracle-guard {__version__}: the built-in '{name}' schema as draft-07 "
        "for editors; the hooks use the built-in. Rewrite it with "
        "'oracle-guard init --force'.",
    }
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
        if (
            entry["schema"] in validation.BUILTIN
            and entry["schema"] not in names
            and any(p.endswith((".yaml", ".yml")) for p in entry["paths"])
        ):
            names.append(entry["schema"])
    return names


def modeline_for(path: str, schema: str) -> str:
    depth = path.count("/")
    return f"# yaml-language-server: $schema={'../' * depth}{SCHEMA_DIR}/{schema}.schema.json"


def modeline_edits(
    data: Dict[str, Any], paths: Sequence[str], top: str
) -> Tuple[List[Planned], List[str]]:
    """The schema line put first in each YAML freeze file without one, so editors check
    it; and notes on the files it cannot be put in."""
    planned_files: List[Planned] = []
    notes: List[str] = []
    yaml_schemas = yaml_freeze_schemas(data)
    for entry in data.get("freeze", []):
        if entry["schema"] not in yaml_schemas:
            continue
        for path in PatternSet(entry["paths"]).select(paths):
            if path.endswith((".yaml", ".yml")):
                planned, note = modeline_edit(top, path, entry["schema"])
                if planned is not None:
                    planned_files.append(planned)
                if note:
                    notes.append(note)
    return planned_files, notes


def modeline_edit(top: str, path: str, schema: str) -> Tuple[Optional[Planned], str]:
    """The file with the schema line first; None when it has one already, is no regular
    file, or its data would not stay the same (then a note says why)."""
    # deferred: 1 ms to import, only for modeline_edit()
    from oracle_guard.parsing import strict_input, strict_yaml

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
        before = strict_yaml.load_yaml(data).value
    except strict_input.LoadError as exc:
        return None, f"{path} does not load ({exc}), so init does not add its schema line"
    newline = "\r\n" if first.endswith(b"\r") else "\n"
    text = modeline_for(path, schema) + newline + data.decode("utf-8")
    try:
        after = strict_yaml.load_yaml(text.encode("utf-8")).value
    except strict_input.LoadError:
        after = None
    if _canonical(after) != _canonical(before):  # a comment must change no data
        return None, f"putting the schema line first would change {path}'s data: add it yourself"
    return Planned(path, text, MODELINE_WHAT, "edit"), ""


def _canonical(value: Any) -> str:
    """The value with its types, so that 1, 1.0 and true stay apart."""
    return json.dumps(value, sort_keys=True, default=repr)
