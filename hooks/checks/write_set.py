"""write-set: did the change stay inside the allowed paths and out of the protected ones?"""

from __future__ import annotations

import datetime
import re
from typing import Collection, Dict, List, Optional, Sequence, Tuple

from oracle_guard.checks.sample import Sample
from oracle_guard.contract import Contract, ContractError, literal_pattern
from oracle_guard.findings import Finding
from oracle_guard.git.process import decode_path
from oracle_guard.parsing import strict_input
from oracle_guard.parsing.patterns import AnyOf, Pattern, PatternSet, compile_pattern
from oracle_guard.snapshot import Snapshot, changed_paths

HOOK = "write-set"
# the smallest oracle: the paths a change may touch, and a change outside them
# its lines in the complete example of docs/reference/contract.md
EXAMPLE = """\
write_set:                   # write-set
  allow: ["src/**", "tests/**", "/README.md"]  # optional; when set, every changed path must match one
  allow_file: oracle/write_set.txt            # optional: one path prefix from the root a line, no globs (# comments)
  deny: ["oracle/**", "seeds/**", "/freeze.json", "/.pre-commit-config.yaml", ".github/workflows/**"]
  owners: [alice]            # server side: accounts that may change protected paths
"""
SAMPLE = Sample(
    sections={"write_set": {"allow": ["src/**"]}},
    files={"src/app.py": "x = 1\n"},
    change={"docs/notes.md": "notes\n"},
    finding="docs/notes.md: write-outside-set",
    example=EXAMPLE,
)


def allow_file_patterns(path: str, source: Snapshot) -> List[str]:
    """The allow patterns of ``write_set.allow_file`` in ``source``: one per line."""
    if path not in source:
        raise ContractError(f"write_set.allow_file {path!r} is missing from {source.label}")
    try:
        text = strict_input.decode_text(source.read(path))
    except strict_input.LoadError as exc:
        raise ContractError(f"{path}: {exc}") from None
    return allow_file_lines(text, path)


def allow_file_lines(text: str, path: str) -> List[str]:
    """Each line of an allow file is a path prefix anchored at the repository root:
    ``src/`` is everything under the root folder ``src``; ``README.md`` is that file or,
    when it is a folder, everything under it (as a git pathspec). A leading ``/`` means
    the same. Blank lines and ``#`` comments are skipped. Glob characters, ``!``, ``.``
    and ``..`` parts and empty parts are contract errors naming ``path`` and the line:
    a pattern belongs in ``write_set.allow``, never guessed at here."""
    patterns = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{number}"
        if line.startswith("!"):
            raise ContractError(f"{where}: negation ('!') is not supported")
        if _GLOB.search(line):
            raise ContractError(
                f"{where}: {line!r} has a glob character (* ? [ \\); allow_file lines are "
                "path prefixes from the repository root: use write_set.allow for patterns"
            )
        prefix = line[1:] if line.startswith("/") else line
        parts = prefix[:-1].split("/") if prefix.endswith("/") else prefix.split("/")
        if not prefix:
            raise ContractError(
                f"{where}: '/' names no path; list the folders and files a change may touch"
            )
        if "" in parts:
            raise ContractError(
                f"{where}: {line!r} has an empty path part ('//'); "
                "allow_file lines are path prefixes from the repository root"
            )
        if "." in parts or ".." in parts:
            raise ContractError(
                f"{where}: {line!r} has a '.' or '..' part; allow_file "
                "lines are normalized path prefixes from the repository root"
            )
        patterns.append(literal_pattern(prefix))  # keeps a trailing '/': folders only
    return patterns


class WriteSet:
    """The contract's write set: which paths a change may touch, and why not."""

    def __init__(self, contract: Contract) -> None:
        ws = contract.section("write_set") or {}
        allow_list = list(ws.get("allow", []))
        if "allow_file" in ws:
            allow_list += allow_file_patterns(ws["allow_file"], contract.source)
        self.restricted = "allow" in ws or "allow_file" in ws
        self.allow = PatternSet(allow_list)
        self.protected = _protected(contract)
        self._any_protected = AnyOf([pattern for pattern, _, _ in self.protected])
        self._verdicts: Dict[Tuple[str, bool], Optional[Finding]] = {}
        self._last: Optional[Tuple[Sequence[bytes], Tuple[bytes, ...], Dict[bytes, Finding]]] = None

    @classmethod
    def of(cls, contract: Contract) -> WriteSet:
        """One per contract in its session, so its verdicts are shared by every rule that asks."""
        return contract.session.memo(contract, "write_set", lambda: cls(contract))

    def protects(self, path: str) -> bool:
        """Is ``path`` protected (write-denied), not merely outside the set?"""
        found = self.finding(path)
        return found is not None and found.code == "write-denied"

    def finding(self, path: str, opaque: bool = False) -> Optional[Finding]:
        """None when the write set lets a change touch ``path``. ``opaque``: the
        path is (or was) a symlink or submodule, a folder whose files git does
        not list here, so it is denied when protected files could lie below it."""
        key = (path, opaque)
        if key not in self._verdicts:
            self._verdicts[key] = self._judge(path, opaque)
        return self._verdicts[key]

    def findings(
        self, paths: Sequence[bytes], opaque: Collection[bytes] = ()
    ) -> Dict[bytes, Finding]:
        """``finding`` for many paths (git's bytes) at once, by path, the ones
        with none left out: one regex pass over all of them per pattern set picks
        the few a rule could deny, and only those are judged one by one."""
        odd = tuple(opaque)
        if self._last is not None and self._last[1] == odd and self._last[0] == paths:
            return self._last[2]  # a range of one commit: the change, asked again
        suspects = self._any_protected.hits(paths)
        suspects.update(self._any_protected.hits(paths, fold_case=True))
        if self.restricted:
            suspects.update(self.allow.misses(paths))
        suspects.update(odd)
        opaque_set = set(odd)
        found = {}
        for raw in suspects:
            denied = self.finding(decode_path(raw), raw in opaque_set)
            if denied is not None:
                found[raw] = denied
        self._last = (paths, odd, found)
        return found

    def _judge(self, path: str, opaque: bool) -> Optional[Finding]:
        reason = None
        if self._any_protected.matches(path) or self._any_protected.matches(path, True):
            reason = _denied(path, self.protected)
        if reason is None and opaque:
            reason = _covers_protected(path, self.protected)
        if reason is not None:
            return Finding(HOOK, "write-denied", path, reason)
        if self.restricted and not self.allow.matches(path):
            return Finding(
                HOOK, "write-outside-set", path, "matches no allowed pattern of the write set"
            )
        return None


def check(
    contract: Contract, base: Snapshot, candidate: Snapshot, now: datetime.datetime
) -> List[Finding]:
    paths, opaque = changed_paths(base, candidate)
    found = WriteSet.of(contract).findings(paths, opaque)
    return [found[raw] for raw in sorted(found, key=decode_path)]  # as ``changes`` sorts


Protection = Tuple[Pattern, str, str]  # pattern, what it is, why a path matching it is denied


def _protected(contract: Contract) -> List[Protection]:
    return [(compile_pattern(p), what, why) for p, what, why in contract.protections()]


def _denied(path: str, protected: List[Protection]) -> Optional[str]:
    for pattern, _, reason in protected:
        if pattern.matches(path):
            return reason
    for pattern, what, _ in protected:
        if pattern.matches(path, fold_case=True):
            return (
                f"matches {what} when letter case and Unicode normalization are "
                "ignored (the same file on macOS and Windows)"
            )
    return None


_GLOB = re.compile(r"[*?\[\\]")


def _covers_protected(folder: str, protected: List[Protection]) -> Optional[str]:
    """Why a link or submodule at ``folder`` could stand in for protected files."""
    inside = folder + "/"
    for pattern, what, _ in protected:
        text = pattern.text
        literal = _GLOB.split(text, 1)[0].lstrip("/")
        anchored = "/" in text.rstrip("/")
        if (
            (anchored and literal.startswith(inside))
            or pattern.matches(inside + "\0")
            or pattern.matches(inside + "\0", fold_case=True)
        ):
            return (
                f"is a symlink or submodule where {what} protects files below it "
                "(git does not list what lies behind it)"
            )
    return None
