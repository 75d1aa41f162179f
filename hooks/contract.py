"""The merge contract, ``.oracle-guard.yaml``: loaded strictly, from the base."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from oracle_guard.cache import contract_key
from oracle_guard.errors import ContractError
from oracle_guard.git.objects import BlobTooLarge
from oracle_guard.parsing import strict_input, strict_yaml, validation
from oracle_guard.sections import RECORD_SHAPES, SECTIONS
from oracle_guard.session import Session
from oracle_guard.snapshot import Snapshot

CONTRACT_PATH = ".oracle-guard.yaml"
CONTRACT_MAX_BYTES = 1 << 20
LIMITS = {
    "freeze_bytes": 4 << 20,
    "seed_bytes": 32 << 20,
    "lock_bytes": 16 << 20,
    "test_bytes": 4 << 20,
}


# The variable each host sets for the pusher; one is named, never guessed.
IDENTITY_HINT = (
    "GL_USERNAME (GitLab), GITEA_PUSHER_NAME (Gitea, Forgejo), GL_USER "
    "(gitolite), GITHUB_USER_LOGIN (GitHub Enterprise Server) or REMOTE_USER "
    "(git http-backend)"
)


class Contract:
    """Immutable: every field is given here, and what is built from it (its write
    set, its owners' keys) is held by ``session``, the run it was read in (by
    default a session of its own, on ``source``'s repository)."""

    data: Dict[str, Any]
    source: Snapshot  # the revision the rules (and repo schema files) come from
    from_base: bool
    rules_label: str  # where the rules were looked for (the source, or the base that had none)
    session: Session

    def __init__(
        self,
        data: Dict[str, Any],
        source: Snapshot,
        from_base: bool,
        rules_label: Optional[str] = None,
        session: Optional[Session] = None,
    ) -> None:
        if session is None:
            session = Session(source.repository)
        fields = {
            "data": data,
            "source": source,
            "from_base": from_base,
            "rules_label": source.label if rules_label is None else rules_label,
            "session": session,
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Contract is immutable: {name!r} is set only when it is made")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Contract is immutable: {name!r} cannot be deleted")

    def section(self, name: str) -> Any:
        return self.data.get(name)

    def section_names(self) -> List[str]:
        """The sections it has, sorted: what a report's hints may name."""
        return sorted(key for key in self.data if key != "version")

    def limit(self, name: str) -> int:
        """A size cap from the contract's ``limits``, or its default."""
        return (self.data.get("limits") or {}).get(name, LIMITS[name])

    @property
    def owners(self) -> List[str]:
        return list((self.data.get("write_set") or {}).get("owners", []))

    def oracle_files(self) -> List[str]:
        """Files the contract names: itself, what each check's section names (locks,
        repo schemas, the allow file), the allowed signers, the score's seeds file."""
        files = [CONTRACT_PATH]
        for section in SECTIONS:
            if self.data.get(section.name):
                files.extend(section.oracle_files(self.data[section.name]))
        if "authority" in self.data:
            files.append(self.data["authority"]["signers"])
        pin_file = ((self.data.get("score") or {}).get("pin") or {}).get("file")
        if pin_file:  # the scoring seed: a patch that moves it changes what is scored
            files.append(pin_file)
        return files

    def oracle_globs(self) -> List[str]:
        """The patterns each check's section names (fixtures, seeds, freeze files,
        known ids), and every .gitattributes (it changes the bytes a checkout of
        them gets)."""
        globs = [
            pattern
            for section in SECTIONS
            if self.data.get(section.name)
            for pattern in section.oracle_globs(self.data[section.name])
        ]
        return globs + [".gitattributes"]

    def protections(self) -> List[Tuple[str, str, str]]:
        """What the write set protects, as (pattern, what it is, why a path matching it
        is denied): the deny patterns first, then every file and pattern the contract
        names."""
        deny = (self.data.get("write_set") or {}).get("deny", [])
        items = [(p, f"deny pattern {p!r}", f"matches deny pattern {p!r}") for p in deny]
        items += [
            (
                literal_pattern(f),
                f"oracle file {f!r}",
                f"is oracle file {f!r} named by the contract",
            )
            for f in self.oracle_files()
        ]
        items += [
            (p, f"oracle pattern {p!r}", f"matches oracle pattern {p!r} named by the contract")
            for p in self.oracle_globs()
        ]
        return items


def literal_pattern(path: str) -> str:
    """A pattern matching exactly this repo-relative path."""
    escaped = "".join("\\" + ch if ch in "*?[\\" else ch for ch in path)
    return "/" + escaped


def parse(
    data: bytes, label: str = CONTRACT_PATH, revision: Optional[str] = None
) -> Dict[str, Any]:
    """The validated contract; ContractError names ``label``, the line and
    ``revision``, and lists every problem (``problems``: line, column, text)."""
    suffix = f" (the contract in {revision})" if revision else ""
    try:
        doc = strict_yaml.load_yaml(data)
    except strict_input.LoadError as exc:
        line, column, text = exc.explained or (exc.line, exc.column, exc.message)
        where = f"{label}:{line}" if line else label
        raise ContractError(f"{where}: {text}{suffix}", ((line, column, text),)) from None
    found = validation.problems(doc.value, "contract")
    if found:
        problems = []
        for path, message in found:
            line, column = _place_of_problem(doc, path, message)
            text = (
                f"invalid contract at {strict_input.json_pointer(path)}: "
                f"{_readable(message)}{_did_you_mean(path, message)}"
            )
            problems.append((line, column, text))
        problems.sort(key=lambda p: (p[0] or 0, p[1] or 0))
        first_line, _, first = problems[0]
        where = f"{label}:{first_line}" if first_line else label
        rest = "".join(
            f"; {f'line {line}: ' if line else ''}{text}" for line, _, text in problems[1:]
        )
        raise ContractError(f"{where}: {first}{rest}{suffix}", tuple(problems))
    for index, entry in enumerate(doc.value.get("seeds") or []):
        wrong = _record_rule_misfit(entry)
        if wrong:
            line = doc.line_of(("seeds", index, wrong[0]))
            column = doc.column_of(("seeds", index, wrong[0]))
            where = f"{label}:{line}" if line else label
            text = f"seeds[{index}].{wrong[0]}: {wrong[1]}"
            raise ContractError(f"{where}: {text}{suffix}", ((line, column, text),))
    if (doc.value.get("write_set") or {}).get("owners") and not doc.value.get("identity_env"):
        line = doc.line_of(("write_set", "owners"))
        where = f"{label}:{line}" if line else label
        text = (
            "write_set.owners names server accounts, but no "
            "identity_env names the variable your server sets for the pusher: "
            f"add identity_env: {IDENTITY_HINT}"
        )
        column = doc.column_of(("write_set", "owners"))
        raise ContractError(f"{where}: {text}{suffix}", ((line, column, text),))
    return doc.value


def _record_rule_misfit(entry: Dict[str, Any]) -> Optional[Tuple[str, str]]:
    """(key, why) when a seeds entry's record rule does not fit its format."""
    fmt = entry["format"]
    if fmt == "json-object":
        for key in ("records", "digest", "id_field", "lock", "seed_field", "promote", "replay"):
            if key in entry:
                return (
                    key,
                    "a json-object seed file holds no records (json-array, jsonl, immutable)",
                )
    if "promote" in entry and fmt != "immutable":
        return (
            "promote",
            "only an immutable set's files are promoted (appended records never change)",
        )
    if "lock" in entry and "id_field" not in entry and entry.get("records") not in RECORD_SHAPES:
        return "lock", "maps ids to seeds: name the records' id_field (or a built-in records shape)"
    if "replay" in entry and entry.get("records") not in RECORD_SHAPES:
        return (
            "replay",
            "replays corpus-line or replay-case records: name one as the entry's records",
        )
    if "seed_field" in entry and "lock" not in entry:
        return "seed_field", "names the field a lock's entry must equal, but the entry has no lock"
    return None


def _unexpected(message: str) -> List[str]:
    """The keys jsonschema names in an additionalProperties message."""
    unexpected = re.search(r"\((.*) (?:was|were) unexpected\)$", message)
    return re.findall(r"'([^'\\]*)'", unexpected.group(1)) if unexpected else []


def _place_of_problem(
    doc: strict_input.Document, path: Tuple[Any, ...], message: str
) -> Tuple[Optional[int], Optional[int]]:
    """(line, column) of the first offending key for an unknown key, else of the
    value at ``path`` (of its key, for a mapping's value)."""
    places = [
        (doc.line_of(tuple(path) + (name,)), doc.column_of(tuple(path) + (name,)))
        for name in _unexpected(message)
    ]
    known = [(line, column or 0) for line, column in places if line is not None]
    if known:
        line, column = min(known)
        return line, column or None
    return doc.line_of(path), doc.column_of(path)


def _did_you_mean(path: Tuple[Any, ...], message: str) -> str:
    """'; did you mean ...?' for unknown keys close to a key the schema knows there."""
    names = _unexpected(message)
    if not names:
        return ""
    import difflib  # only for a contract with an unknown key

    known = _known_keys(path)
    pairs = []
    for name in names:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        if close:
            pairs.append((name, close[0]))
    if not pairs:
        return f"; the keys allowed here: {', '.join(known)}" if known else ""
    if len(pairs) == 1 and len(names) == 1:
        return f"; did you mean {pairs[0][1]!r}?"
    return "; did you mean " + ", ".join(f"{good!r} for {bad!r}" for bad, good in pairs) + "?"


def _known_keys(path: Tuple[Any, ...]) -> List[str]:
    """The property names the contract schema allows at ``path``."""
    root = validation.builtin_schema("contract")

    def expand(node: Any) -> List[Dict[str, Any]]:
        """``node`` and the subschemas it combines, with $refs followed."""
        if not isinstance(node, dict):
            return []
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = root
            for part in ref[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, dict) else {}
            return expand(target)
        out = [node]
        for word in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(word, []):
                out.extend(expand(sub))
        return out

    nodes = expand(root)
    for part in path:
        nxt: List[Dict[str, Any]] = []
        for node in nodes:
            if isinstance(part, int):
                nxt.extend(expand(node.get("items")))
            else:
                nxt.extend(expand((node.get("properties") or {}).get(part)))
        nodes = nxt
    return sorted({key for node in nodes for key in node.get("properties") or {}})


# What the schema's path regexes mean, for messages a person can act on.
_MEANING = {
    "file": "a normalized repo-relative file path (no leading '/', no '.' or '..' "
    "parts, no '//', '\\' or trailing '/')",
    "folder": "a normalized repo-relative folder path (no leading '/', no '.' or '..' "
    "parts, no '//' or '\\')",
    "branch": "a branch name such as origin/main (not a commit id or a relative "
    "revision like HEAD~1)",
}


def _readable(message: str) -> str:
    """Replace "does not match '<regex>'" with what the regex means."""
    defs = validation.builtin_schema("contract")["$defs"]
    for name, meaning in _MEANING.items():
        tail = f" does not match {defs[name]['pattern']!r}"
        if message.endswith(tail):
            return message[: -len(tail)] + f" is not {meaning}"
    tail = f" does not match {defs['pattern']['pattern']!r}"
    if message.endswith(tail):
        return message[: -len(tail)] + (
            " is not a pattern: negation ('!') and '.' or '..' parts are not supported"
        )
    return message


def read(snapshot: Snapshot, session: Optional[Session] = None) -> Optional[Dict[str, Any]]:
    """The contract in ``snapshot``, parsed once a ``session`` (without one, once
    a call), from the cache on disk when it has it."""
    parsed = {} if session is None else session.parsed
    entry = snapshot.entry(CONTRACT_PATH)
    if entry is None:
        return None
    if not entry.is_regular:
        raise ContractError(f"{CONTRACT_PATH} in {snapshot.label} is not a regular file")
    key = contract_key(entry.oid, CONTRACT_MAX_BYTES)  # always YAML, whatever the name
    if key not in parsed:  # the same contract blob is often read for several revisions
        cache = snapshot.cache
        cached = cache.get("contract", key)
        if cached is None:
            try:
                data = snapshot.read(CONTRACT_PATH, CONTRACT_MAX_BYTES)
            except BlobTooLarge as exc:
                raise ContractError(f"{CONTRACT_PATH} in {snapshot.label} {exc}") from None
            cached = parse(data, CONTRACT_PATH, snapshot.label)
        parsed[key] = cached
    snapshot.cache.put("contract", key, parsed[key])
    return _copied(parsed[key])


def _copied(value: Any) -> Any:
    """copy.deepcopy for what a contract parses to (dicts, lists, scalars),
    without importing copy on every run; anything else goes to deepcopy."""
    if type(value) is dict:
        return {k: _copied(v) for k, v in value.items()}
    if type(value) is list:
        return [_copied(v) for v in value]
    if value is None or type(value) in (str, int, float, bool):
        return value  # immutable: deepcopy returns it too
    # deferred: copy: under 1 ms to import, only for _copied()
    import copy

    return copy.deepcopy(value)


def choose(
    base: Snapshot, candidate: Snapshot, session: Optional[Session] = None
) -> Optional[Contract]:
    """The base's contract when it has one, else the candidate's, else None,
    read in ``session`` (by default a new one, on the snapshots' repository)."""
    if session is None:
        session = Session(base.repository or candidate.repository)
    data = read(base, session)
    if data is not None:
        return Contract(data, base, from_base=True, session=session)
    data = read(candidate, session)
    if data is not None:
        return Contract(data, candidate, False, rules_label=base.label, session=session)
    return None
