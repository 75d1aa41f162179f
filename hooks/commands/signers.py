"""``oracle-guard signers add | remove | list``: the owners' SSH keys, in the
allowed signers file the contract in the index names (``authority.signers``).

Like the other authoring commands they edit the working-tree file (never through
a symlink, never outside the repository), keep its other lines, comments and
line endings, and print the ``git add`` to run. The result must read back with
``allowed_signers.parse`` as exactly the intended signers, or nothing is written.
A key is listed once; a person with several keys has a line for each.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, List, Tuple

from oracle_guard.authority import allowed_signers
from oracle_guard.authority.keys import (
    ADD_AUTHORITY,
    KeyProblem,
    fingerprint,
    key_argument,
    new_file,
    principal_problem,
)
from oracle_guard.commands.options import common
from oracle_guard.commands.workspace import Workspace, edit
from oracle_guard.errors import Refused
from oracle_guard.parsing import strict_input
from oracle_guard.report.escaping import inert, show_path, show_text

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers


def _unchanged(signer: allowed_signers.Signer) -> Tuple:
    return (
        signer.principals,
        signer.namespaces,
        signer.key_type,
        signer.public_key,
        signer.comment,
    )


class SignersFile:
    """The working-tree signers file the contract in the index names."""

    def __init__(self, ws: Workspace, must_exist: bool = True) -> None:

        section = ws.contract.section("authority")
        if section is None:
            raise Refused(
                f"the contract in the index has no 'authority' section: add "
                f"'{ADD_AUTHORITY}' to .oracle-guard.yaml and git add it"
            )
        self.ws = ws
        self.path: str = section["signers"]
        data = ws.read_worktree(self.path)  # refuses a symlink, .git, outside the repository
        self.exists = data is not None
        if data is None and must_exist:
            raise Refused(
                f"{show_path(self.path)} does not exist in the working tree: "
                "'oracle-guard signers add PRINCIPAL KEYFILE' writes it"
            )
        try:
            self.text = strict_input.decode_text(data or b"")
        except strict_input.LoadError as exc:
            raise Refused(f"{show_path(self.path)}: {exc}; fix the file by hand first") from None
        self.signers = self.parse(self.text, "fix the file by hand first")
        first = self.text.find("\n")
        self.newline = "\r\n" if first > 0 and self.text[first - 1] == "\r" else "\n"

    def parse(self, text: str, hint: str) -> List[allowed_signers.Signer]:
        try:
            return allowed_signers.parse(text)
        except allowed_signers.AllowedSignersError as exc:
            raise Refused(f"{show_path(self.path)}:{exc.line}: {exc.message}; {hint}") from None

    def write(self, text: str, expected: List[Tuple], done: str) -> None:
        """Write ``text`` when it reads back as the ``expected`` signers."""
        # deferred: cli imports this module for its parser; under 1 ms, for a run
        from oracle_guard.authority.signatures import SIGNERS_MAX_BYTES

        data = text.encode("utf-8")
        if len(data) > SIGNERS_MAX_BYTES:
            raise Refused(
                f"cannot edit {show_path(self.path)}: it would be {len(data):,} "
                f"bytes, above the {SIGNERS_MAX_BYTES:,} oracle-guard reads"
            )
        got = [_unchanged(s) for s in self.parse(text, "nothing was written")]
        if got != expected:
            raise Refused(
                f"cannot edit {show_path(self.path)} safely: the result would not "
                "read back as intended; edit it by hand"
            )
        self.ws.write({self.path: data})
        print(
            inert(
                f"wrote {show_path(self.path)} ({show_text(done)}); stage it with: "
                f"{show_text(self.ws.git_add(self.path))}"
            )
        )


def signers_add(ws: Workspace, principal: str, key_text: str) -> int:
    """Add ``key_text`` (KEYFILE or KEYTEXT) for ``principal``."""
    problem = principal_problem(principal)
    if problem:
        raise Refused(f"cannot add {principal!r}: {problem}")
    try:
        key = key_argument(key_text, ws.here)
    except KeyProblem as exc:
        raise Refused(f"cannot add {principal!r}: {exc}") from None
    file = SignersFile(ws, must_exist=False)
    for signer in file.signers:
        if signer.public_key == key.blob:
            raise Refused(
                f"{show_path(file.path)}:{signer.line}: the key {key.fingerprint} "
                f"is listed already (for {', '.join(signer.principals)}); a key is "
                "listed once"
            )
    if not file.exists:
        text = new_file(principal, key)
    else:
        text = file.text
        if text and not text.endswith("\n"):
            text += file.newline
        text += key.line(principal) + file.newline
    expected = [_unchanged(s) for s in file.signers] + [
        ((principal,), None, key.key_type, key.blob, key.comment)
    ]
    others = sum(principal in s.principals for s in file.signers)
    what = "a key" if not others else f"key {others + 1}"
    file.write(text, expected, f"added {what} for {principal}: {key.key_type} {key.fingerprint}")
    return 0


def signers_remove(ws: Workspace, principal: str) -> int:
    file = SignersFile(ws)
    hits = [s for s in file.signers if principal in s.principals]
    if not hits:
        named = sorted({p for s in file.signers for p in s.principals})
        raise Refused(
            f"{show_path(file.path)} lists no key for {principal!r} "
            f"(principals: {', '.join(named) or 'none'})"
        )
    lines = file.text.split("\n")
    dropped = []
    for signer in hits:
        raw = lines[signer.line - 1]
        cr = "\r" if raw.endswith("\r") else ""
        body = raw[:-1] if cr else raw
        lead = body[: len(body) - len(body.lstrip(" \t\r\n"))]
        field = body[len(lead) :].split(" ", 1)[0].split("\t", 1)[0]
        kept = [p for p in signer.principals if p != principal]
        if kept:
            lines[signer.line - 1] = lead + ",".join(kept) + body[len(lead) + len(field) :] + cr
        else:
            dropped.append(signer.line - 1)
    for number in reversed(dropped):
        del lines[number]
    expected = []
    for signer in file.signers:
        remaining = tuple(p for p in signer.principals if p != principal)
        if remaining:
            expected.append((remaining, *_unchanged(signer)[1:]))
    count = len(hits)
    file.write(
        "\n".join(lines), expected, f"removed {principal}: {count} key{'s' if count != 1 else ''}"
    )
    if not expected:
        print(
            inert(
                f"note: {show_path(file.path)} lists no key now: no signed commit can "
                "change the oracle until an owner is added"
            )
        )
    return 0


def signers_list(ws: Workspace) -> int:
    file = SignersFile(ws)
    rows = []
    for signer in file.signers:
        where = f"(line {signer.line})"
        if not signer.allows("git"):
            where = (
                f'(line {signer.line}; namespaces="{",".join(signer.namespaces or ())}": '
                "cannot sign commits)"
            )
        for principal in signer.principals:
            rows.append(
                (show_text(principal), signer.key_type, fingerprint(signer.public_key), where)
            )
    if not rows:
        print(
            inert(
                f"no keys in {show_path(file.path)}: 'oracle-guard signers add PRINCIPAL "
                "KEYFILE' adds one"
            )
        )
        return 0
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print(inert("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[3]))
    return 0


def add_parser(sub: Subparsers) -> None:
    """The ``signers`` subcommands."""
    signers = sub.add_parser(
        "signers", help="add, remove or list the owners' SSH keys (authority.signers)"
    )
    actions = signers.add_subparsers(dest="signers_action", metavar="ACTION")
    actions.required = True
    add = actions.add_parser(
        "add", parents=[common()], help="add an owner's public key (one line a key)"
    )
    add.add_argument(
        "principal",
        metavar="PRINCIPAL",
        help="the owner's name, e.g. an email address (no patterns)",
    )
    add.add_argument(
        "key",
        metavar="KEYFILE|KEYTEXT",
        help="a .pub file (or a private key with its .pub beside it), or the key "
        "itself: 'ssh-ed25519 AAAA... [comment]'",
    )
    remove = actions.add_parser(
        "remove",
        parents=[common()],
        help="remove a principal from every line (a line left with none goes)",
    )
    remove.add_argument("principal", metavar="PRINCIPAL")
    listing = actions.add_parser(
        "list", parents=[common()], help="each principal with its key type, fingerprint and line"
    )
    for parser in (add, remove, listing):
        parser.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    action = options.signers_action
    if action == "add":
        return edit(lambda ws: signers_add(ws, options.principal, options.key), options.C)
    if action == "remove":
        return edit(lambda ws: signers_remove(ws, options.principal), options.C)
    return edit(signers_list, options.C)
