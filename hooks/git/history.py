"""History queries: a range's commits (rev-list) and what each changes (one diff-tree --stdin)."""

from __future__ import annotations

import subprocess
import threading
from typing import IO, Callable, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from oracle_guard.errors import GitError
from oracle_guard.git.objects import FULL_ID
from oracle_guard.git.process import Runner, failure


class Commit(NamedTuple):
    id: str
    parents: Tuple[str, ...]
    paths: List[bytes]  # what it changes against its parent, as git's bytes; empty for a merge

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


def _one_commit_one_parent(listing: bytes) -> bool:
    """Does ``rev-list --parents`` list one commit, with one parent?"""
    return listing.count(b"\n") == 1 and listing.count(b" ") == 1


def _paths_by_commit(out: bytes) -> Dict[str, List[bytes]]:
    """Parse ``diff-tree --stdin -z --raw``: a commit id, then its changes (a
    record of modes and ids, then a path), as git's bytes."""
    result: Dict[str, List[bytes]] = {}
    tokens = out.split(b"\0")
    if tokens.pop() != b"":
        raise GitError(f"git diff-tree printed {out[-80:]!r} at its end")
    at = 0
    while at < len(tokens):
        header = tokens[at].decode("ascii", "replace")
        if not FULL_ID.match(header):
            raise GitError(f"git diff-tree printed {tokens[at][:80]!r} where a commit id belongs")
        start = at = at + 1
        while at < len(tokens) and tokens[at][:1] == b":":
            at += 2
        if at > len(tokens):
            raise GitError("git diff-tree printed a change without its path")
        result.setdefault(header, []).extend(tokens[start + 1 : at : 2])
    return result


def history(
    runner: Runner,
    tip: str,
    exclude: Sequence[str],
    diff_paths: Callable[[str, str], Tuple[List[bytes], List[bytes]]],
) -> Callable[[], List[Commit]]:
    """Each commit reachable from ``tip`` and not from ``exclude``, with its
    parents and, unless it is a merge, the paths it changes: ``rev-list
    --parents`` fed to one ``diff-tree --stdin`` whatever the number of
    commits. They start now and run beside this process; the returned
    function waits for them and parses. A merge lists no paths: what it
    changes is judged against a remerge of its parents. A range of one
    commit with one parent runs no diff-tree of its own: its paths are the
    change between the two (``diff_paths``), which the write set has
    usually asked for already."""
    listing = runner.start(["rev-list", "--parents", tip, "--not", *exclude, "--"])
    listed = listing.stdout
    assert listed is not None  # made with a PIPE
    outputs: Dict[str, bytes] = {}
    diffs: List[subprocess.Popen[bytes]] = []
    failed: List[GitError] = []

    def drain(name: str, stream: IO[bytes]) -> None:
        outputs[name] = stream.read()

    def feed() -> None:  # keep rev-list's lines: merges print nothing in diff-tree
        outputs["listing"] = listed.read()
        if _one_commit_one_parent(outputs["listing"]):
            return
        try:
            diffing = runner.start(
                [
                    "diff-tree",
                    "--stdin",
                    "-r",
                    "-z",
                    "--no-renames",
                    "--raw",
                    "--root",
                    "--ignore-submodules=none",
                ],
                stdin=True,
            )
        except GitError as exc:  # git could not be started
            failed.append(exc)
            return
        diffs.append(diffing)
        readers = [
            threading.Thread(target=drain, args=(name, stream), daemon=True)
            for name, stream in (("out", diffing.stdout), ("err", diffing.stderr))
        ]
        for reader in readers:
            reader.start()
        to_diff = diffing.stdin
        assert to_diff is not None  # made with a PIPE
        try:
            to_diff.write(outputs["listing"])
            to_diff.close()
        except OSError:
            pass  # diff-tree died: collect() reports its exit
        for reader in readers:
            reader.join()

    threads = [
        threading.Thread(target=feed, daemon=True),
        threading.Thread(target=drain, args=("listing_err", listing.stderr), daemon=True),
    ]
    for thread in threads:
        thread.start()

    def collect() -> List[Commit]:
        for thread in threads:
            thread.join()
        ran = [("rev-list", listing, outputs["listing_err"])]
        ran += [("diff-tree", diffing, outputs["err"]) for diffing in diffs]
        for what, proc, err in ran:
            if proc.wait() != 0:
                raise failure(what, proc.returncode, err)
        if failed:
            raise failed[0]
        rows = [line.split(" ") for line in outputs["listing"].decode().splitlines()]
        if diffs:
            paths = _paths_by_commit(outputs["out"])
        else:  # one commit, one parent
            paths = {rows[0][0]: diff_paths(rows[0][1], rows[0][0])[0]}
        return [Commit(row[0], tuple(row[1:]), paths.get(row[0], [])) for row in rows]

    return collect


def in_order(runner: Runner, tip: str, exclude: str) -> List[Tuple[str, Tuple[str, ...]]]:
    """(commit, parents) of each commit reachable from ``tip`` and not from
    ``exclude``, parents before children (``rev-list --reverse --topo-order``)."""
    out = runner.run(
        "rev-list", "--reverse", "--topo-order", "--parents", tip, "--not", exclude, "--"
    )
    rows = [line.split(" ") for line in out.decode("ascii").splitlines()]
    return [(row[0], tuple(row[1:])) for row in rows]


def is_ancestor(runner: Runner, ancestor: str, descendant: str) -> bool:
    return runner.answer("merge-base", "--is-ancestor", ancestor, descendant) is not None


def last_change(runner: Runner, tip: str, path: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """(the commit, its parents) of ``tip``'s history that last changed
    ``path``, as ``git log -1 -- PATH`` finds it; None when none did."""
    out = runner.run("rev-list", "-1", "--parents", tip, "--", f":(literal,top){path}")
    words = out.decode("ascii").split()
    return (words[0], tuple(words[1:])) if words else None


def same_change_in_history(
    runner: Runner, tip: str, parents: Tuple[str, ...], tree: str, other_than: str
) -> Optional[str]:
    """A commit reachable from ``tip``, other than ``other_than``, with these
    parents and this tree: the same change from the same state. Only the
    commits that descend from the first parent are listed, so the cost is
    the history since it."""
    if parents:
        if not is_ancestor(runner, parents[0], tip):
            return None
        scope = ["--ancestry-path", f"{parents[0]}..{tip}"]
    else:
        scope = ["--max-parents=0", tip]
    out = runner.run("rev-list", "--no-commit-header", "--format=%H %T %P", *scope, "--")
    for line in out.decode("ascii").splitlines():
        oid, commit_tree, *commit_parents = line.split()
        if commit_tree == tree and tuple(commit_parents) == parents and oid != other_than:
            return oid
    return None


def outside_history(runner: Runner, oids: Sequence[str], tip: str) -> Set[str]:
    """Those of ``oids`` that are not ancestors of ``tip``, in one rev-list
    (``is_ancestor`` would start a git for each)."""
    if not oids:
        return set()
    listing = "".join(f"{oid}\n" for oid in oids) + f"^{tip}\n"
    out = runner.run("rev-list", "--stdin", stdin=listing.encode("ascii"))
    return set(oids) & set(out.decode("ascii").split())
