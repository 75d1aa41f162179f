"""Tree queries through git's commands: ls-tree listings, diff-tree changes, merge-tree merges, ls-files."""

from __future__ import annotations

import os
import re
import threading
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from oracle_guard.errors import GitError
from oracle_guard.git.objects import Entry, duplicate_entry
from oracle_guard.git.process import Runner, decode_path, failure, read_chunks

Change = Tuple[str, Optional[Entry], Optional[Entry]]  # path, before, after


def list_tree(
    runner: Runner, treeish: str, within: Optional[str] = None, prefix: str = ""
) -> Dict[str, Entry]:
    """Every file of a commit's tree, or of the tree object of its folder
    ``prefix`` (``within``: the commit). No pathspec, so nothing in the caller's
    environment can change what is listed."""
    out = runner.run("ls-tree", "-r", "-z", "--full-tree", treeish)
    entries = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, _type, oid = meta.decode().split(" ")
        path = prefix + raw_path.decode("utf-8", "surrogateescape")
        if path in entries:
            raise duplicate_entry(within or treeish, path)
        entries[path] = Entry(mode, oid)
    return entries


# diff-tree's arguments for a change between two trees, file by file;
# --ignore-submodules=none: .gitmodules' 'ignore = all' would hide a gitlink change
_DIFF_TREE = ("-r", "-z", "--raw", "--no-renames", "--full-index", "--ignore-submodules=none")
_DIFF_READ = 64 << 10  # bytes of diff-tree's output parsed at a time
_PLAIN_MODES = (b"000000", b"100644", b"100755")  # none, a file, an executable file
# a record with a mode of neither kind, in records joined by NULs
_ODD_MODE = re.compile(rb"\0:(?!(?:000000|100644|100755) (?:000000|100644|100755) )")


def diff_trees(runner: Runner, old: str, new: str) -> List[Change]:
    """(path, entry before, entry after) for each file that differs between two
    commits, from one ``diff-tree``: the cost grows with the change, not the tree.
    A path listed twice comes from a tree with duplicate entries: never judged."""
    return parse_changes(runner.run("diff-tree", *_DIFF_TREE, old, new), new)


def parse_changes(out: bytes, new: str) -> List[Change]:
    """``diff_trees``'s changes from what its ``diff-tree`` printed."""
    tokens = out.split(b"\0")
    changes: List[Change] = []
    seen = set()
    for at in range(0, len(tokens) - 1, 2):
        old_mode, new_mode, old_oid, new_oid, _status = tokens[at][1:].decode().split(" ")
        path = decode_path(tokens[at + 1])
        if path in seen:
            raise duplicate_entry(new, path)
        seen.add(path)
        changes.append(
            (
                path,
                None if old_mode == "000000" else Entry(old_mode, old_oid),
                None if new_mode == "000000" else Entry(new_mode, new_oid),
            )
        )
    return changes


def _changed_paths(chunks: Iterable[bytes]) -> Tuple[List[bytes], List[bytes]]:
    """Parse ``diff-tree -z --raw`` as git writes it, cut anywhere: (the paths
    of each chunk joined by NULs, the opaque paths), parsed while git still
    writes. No object per path outlives its chunk: small objects kept between
    git's records would pin the memory the records took (pymalloc's arenas)
    while git holds every change it found."""
    blocks: List[bytes] = []
    opaque: List[bytes] = []
    carry = b""  # the end of a token the next read completes
    held: List[bytes] = []  # a record's modes and ids, its path still to come
    for chunk in chunks:
        tokens = (carry + chunk).split(b"\0")
        carry = tokens.pop()
        if held:
            tokens = held + tokens
        held = [tokens.pop()] if len(tokens) % 2 else []
        records = tokens[0::2]
        named = tokens[1::2]
        joined = b"\0" + b"\0".join(records)
        if joined.count(b"\0:") != len(records):
            raise GitError(f"git diff-tree printed a change it does not document: {joined[:80]!r}")
        if _ODD_MODE.search(joined):  # rare: a symlink or submodule on either side
            for record, path in zip(records, named):
                if record[1:7] not in _PLAIN_MODES or record[8:14] not in _PLAIN_MODES:
                    opaque.append(path)
        if named:
            blocks.append(b"\0".join(named))
        del tokens, records, named, joined
    if carry or held:
        raise GitError("git diff-tree stopped in the middle of a change")
    return blocks, opaque


def _split_paths(blocks: List[bytes], commit: str) -> List[bytes]:
    """The paths of ``_changed_paths``' blocks, one object each; a path listed
    twice comes from a tree with duplicate entries, never judged."""
    paths = b"\0".join(blocks).split(b"\0") if blocks else []
    if len(set(paths)) != len(paths):
        seen = set()
        for raw in paths:
            if raw in seen:
                raise duplicate_entry(commit, decode_path(raw))
            seen.add(raw)
    return paths


KEPT_DIFF_BYTES = 1 << 16  # a change this small is kept whole, for parse_changes


def diff_paths(
    runner: Runner, old: str, new: str
) -> Tuple[Tuple[List[bytes], List[bytes]], Optional[bytes]]:
    """(every path that differs between two commits, the ones among them
    that are or were a symlink or submodule), as git's bytes in its order:
    ``diff_trees`` without an object per path, for changes of any size; and
    what git printed, when it is at most KEPT_DIFF_BYTES (else None). The
    paths become objects only once git has exited: it holds every change
    until it has printed the last (some 40 MiB for 100,000)."""
    proc = runner.start(["diff-tree", *_DIFF_TREE, old, new])
    stdout, stderr = proc.stdout, proc.stderr
    assert stdout is not None and stderr is not None  # made with PIPEs
    said: List[bytes] = []
    reader = threading.Thread(target=lambda: said.append(stderr.read()), daemon=True)
    reader.start()  # drained beside: git never waits on it
    unparsed: Optional[GitError] = None
    blocks: List[bytes] = []
    opaque: List[bytes] = []
    kept: Optional[List[bytes]] = []

    def keeping(chunks: Iterable[bytes]) -> Iterator[bytes]:
        nonlocal kept
        size = 0
        for chunk in chunks:
            size += len(chunk)
            if kept is not None and size <= KEPT_DIFF_BYTES:
                kept.append(chunk)
            else:
                kept = None
            yield chunk

    try:
        # small reads: a chunk's objects are held while parsed, beside git's peak
        blocks, opaque = _changed_paths(keeping(read_chunks(stdout, _DIFF_READ)))
    except GitError as exc:
        unparsed = exc
    finally:
        stdout.close()
        code = proc.wait()
        reader.join()
    if code != 0:  # git's own reason first: what it printed may be cut short
        raise failure("diff-tree -r", code, b"".join(said))
    if unparsed is not None:
        raise unparsed
    return (_split_paths(blocks, new), opaque), None if kept is None else b"".join(kept)


MERGE_TREE_VERSION = (2, 38)  # git merge-tree --write-tree
# How the platform merges: git's defaults, whatever the configuration says. No
# attributes file of the caller's choosing, and the built-in text driver for every
# path without a merge attribute: a driver could hide a change (the trees'
# .gitattributes are protected files). Global and system configuration still
# count for the rest: CI runners keep safe.directory there.
_MERGE_CONFIG = (
    "-c",
    "merge.renames=true",
    "-c",
    "diff.renames=true",
    "-c",
    "merge.directoryRenames=conflict",
    "-c",
    "merge.default=text",
    "-c",
    "merge.renormalize=false",
    "-c",
    f"core.attributesFile={os.devnull}",
)


def merge_tree(
    runner: Runner, ours: str, theirs: str, unrelated: bool = False
) -> Tuple[str, List[str]]:
    """(tree, conflicted paths) of git's 3-way merge of two commits, as
    ``git merge`` makes it (merge-ort, virtual bases for criss-cross
    histories, renames followed), by a git of MERGE_TREE_VERSION or later. The
    tree is written to the object store; a conflicted path holds conflict
    markers there."""
    proc = runner.completed(
        *_MERGE_CONFIG,
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        "-z",
        *(["--allow-unrelated-histories"] if unrelated else []),
        ours,
        theirs,
    )
    if proc.returncode not in (0, 1):
        raise failure("merge-tree", proc.returncode, proc.stderr)
    tree, *rest = proc.stdout.split(b"\0")
    conflicts: List[str] = []
    # a file/folder conflict moves the file aside as PATH~<the side's name>
    asides = tuple(f"~{side}" for side in (ours, theirs))
    for raw in rest:
        if not raw:  # the end of the conflicted paths
            break
        path = decode_path(raw)
        for aside in asides:
            if path.endswith(aside):
                path = path[: -len(aside)]
        if path not in conflicts:
            conflicts.append(path)
    if proc.returncode == 1 and not conflicts:
        raise GitError("git merge-tree reported a conflict but named no path")
    return tree.decode(), conflicts


def parse_index(out: bytes) -> Dict[str, Entry]:
    """Every stage-0 entry of an ``ls-files --stage -z`` listing, by path; an
    unmerged index is a GitError naming a path."""
    entries: Dict[str, Entry] = {}
    unmerged: List[str] = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, oid, stage = meta.decode().split()
        path = decode_path(raw_path)
        if stage != "0":  # stages 1-3 of one path: name it once
            if path not in unmerged:
                unmerged.append(path)
            continue
        entries[path] = Entry(mode, oid)
    if unmerged:
        raise GitError(
            f"the index has unmerged entries ({unmerged[0]!r}"
            f"{' and more' if len(unmerged) > 1 else ''}): finish or abort the merge first"
        )
    return entries


def index_listing(runner: Runner) -> bytes:
    """What ``ls-files --stage -z`` prints for the whole index, read no further
    than to refuse an unmerged one (as parse_index does)."""
    # ':(top)' and --full-name: the whole index, repo-relative, from any subfolder
    out = runner.run("ls-files", "--stage", "-z", "--full-name", "--", ":(top)")
    # ' 1\t' to ' 3\t' end an unmerged record's meta; a hit inside a path parses
    # for nothing, once
    if any(stage in out for stage in (b" 1\t", b" 2\t", b" 3\t")):
        parse_index(out)  # names the paths
    return out


def unstaged_paths(runner: Runner) -> List[str]:
    """The working tree's changed and untracked files (only for `oracle-guard
    lock`, which writes files)."""
    out = runner.run("diff", "--name-only", "-z", "--no-renames")
    out += runner.run(
        "ls-files", "--others", "--exclude-standard", "-z", "--full-name", "--", ":(top)"
    )
    return [decode_path(p) for p in out.split(b"\0") if p]
