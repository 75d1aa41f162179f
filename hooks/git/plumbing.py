"""The Git facade: one repository's facts and refs, and its reads through objects, trees and history."""

from __future__ import annotations

import os
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    cast,
)

if TYPE_CHECKING:
    from oracle_guard.cache import Cache

from oracle_guard.errors import GitError
from oracle_guard.git import history, trees
from oracle_guard.git.history import Commit
from oracle_guard.git.objects import FULL_ID, Entry, ObjectReader
from oracle_guard.git.process import Runner
from oracle_guard.git.trees import MERGE_TREE_VERSION, Change


class Git:
    """One repository: ``git -C <dir>`` (process.py) for its facts, refs and
    queries, and one ``cat-file --batch`` (objects.py) for its objects. Add a
    git call here, as a method, backed by the module of its concern."""

    def __init__(self, directory: str = ".", use_cache: bool = True) -> None:
        self.directory = directory
        self.use_cache = use_cache
        self._runner = Runner(directory)
        self._objects = ObjectReader(self._runner)
        self._cache: Optional[Cache] = None
        self._trees: Dict[str, Dict[str, Entry]] = {}
        self._version: Optional[Tuple[int, ...]] = None
        self._git_dir: Optional[str] = None
        self._facts_found: Optional[Tuple[str, bool]] = None  # by check_repository
        self._checked = False  # check_repository's answer holds for the whole run
        self._remerged: Dict[str, List[str]] = {}
        self._commits: Dict[str, Optional[str]] = {}  # by object id
        self._parents: Dict[str, Tuple[str, ...]] = {}  # of the commits rev-list listed
        # the last diff_paths: its answer, and git's output when small (diff_trees')
        self._diffs: Dict[
            Tuple[str, str], Tuple[Tuple[List[bytes], List[bytes]], Optional[bytes]]
        ] = {}
        # (object format, common git dir, objects directory) from one rev-parse
        self._layout_found: Optional[Tuple[bytes, str, str]] = None
        # resolve revisions through the open cat-file --batch, not a rev-parse
        # each (pre-receive: HEAD, then every pushed old and new id)
        self.resolve_in_batch = False

    # -- processes -----------------------------------------------------
    def run(self, *args: str, check: bool = True, stdin: Optional[bytes] = None) -> bytes:
        return self._runner.run(*args, check=check, stdin=stdin)

    def ok(self, *args: str) -> bool:
        return self._runner.ok(*args)

    @property
    def cache(self) -> Cache:
        """The content-addressed cache in this repository's git directory."""
        if self._cache is None:
            # deferred: only a run that asks for the cache loads it (json, hashlib)
            from oracle_guard.cache import Cache

            path = None
            if self.use_cache:
                common = self._facts()[0] or self._layout()[1]
                path = os.path.join(self.directory, common, "oracle-guard", "cache.json")
            self._cache = Cache(path)
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.save()
        self._objects.close()

    # -- repository facts ----------------------------------------------
    def toplevel(self) -> Optional[str]:
        out = self.run("rev-parse", "--show-toplevel", check=False).rstrip(b"\n")
        return os.fsdecode(out) if out else None

    def check_repository(self) -> None:
        """Is this a repository? One rev-parse also answers where its common git
        directory is and whether it is bare, which a run asks later. Asked once a
        run: a range judges each commit through the same check."""
        if self._checked:
            return
        out = self.run(
            "rev-parse", "--git-dir", "--git-common-dir", "--is-bare-repository", check=False
        )
        paths, _, bare = out.rstrip(b"\n").rpartition(b"\n")
        if not paths or bare not in (b"true", b"false"):
            where = os.path.abspath(self.directory)
            if not os.path.isdir(where):  # a typo in -C is not a repository question
                what = "is not a folder" if os.path.exists(where) else "does not exist"
                raise GitError(f"{where} {what}, so it is not a git repository")
            raise GitError(f"not a git repository: {where}")
        if paths.count(b"\n") == 1:
            git_dir, common = paths.split(b"\n")
            self._facts_found = (os.fsdecode(common), bare == b"true")
        else:  # a path holds a newline: which one is ambiguous, so ask for it alone
            git_dir = self.run("rev-parse", "--git-dir").rstrip(b"\n")
        self._git_dir = os.path.join(self.directory, os.fsdecode(git_dir))
        self._checked = True

    def _facts(self) -> Tuple[Optional[str], Optional[bool]]:
        """(common git directory, bare) as check_repository found them, else Nones."""
        return self._facts_found or (None, None)

    def _layout(self) -> Tuple[bytes, str, str]:
        """(object format, common git dir, objects directory, a quarantine's
        GIT_OBJECT_DIRECTORY included) from one rev-parse; each alone when a
        path holds a newline (which line is which would be ambiguous)."""
        if self._layout_found is None:
            out = self.run(
                "rev-parse", "--show-object-format", "--git-common-dir", "--git-path", "objects"
            )
            lines = out.split(b"\n")
            if len(lines) == 4 and lines[3] == b"":
                form, common, objects = lines[0], lines[1], lines[2]
            else:
                form = self.run("rev-parse", "--show-object-format").strip()
                common = self.run("rev-parse", "--git-common-dir").rstrip(b"\n")
                objects = self.run("rev-parse", "--git-path", "objects").rstrip(b"\n")
            self._layout_found = (form.strip(), os.fsdecode(common), os.fsdecode(objects))
        return self._layout_found

    def git_dir(self) -> str:
        """This work tree's git directory (where MERGE_HEAD lives)."""
        if self._git_dir is None:
            self.check_repository()
        assert self._git_dir is not None
        return self._git_dir

    def is_shallow(self) -> bool:
        return self.run("rev-parse", "--is-shallow-repository").strip() == b"true"

    def resolve_commit(self, rev: str) -> Optional[str]:
        """Full commit id of ``rev``, or None when it does not name a commit here.
        An object id's answer is kept: objects do not change, refs may."""
        if rev in self._commits:
            return self._commits[rev]
        if self.resolve_in_batch and rev and not any(c in rev for c in "\n\r\0"):
            # cat-file reads a line as one name (no option, spaces kept) and
            # strips a CR at its end: those names, and a newline, go to rev-parse
            oid = self._objects.resolve(rev)
        else:
            out = self._runner.answer(
                "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
            )
            oid = (out or b"").decode().strip() or None
        if FULL_ID.match(rev):
            self._commits[rev] = oid
        return oid

    def has_refs(self) -> bool:
        """Does the repository hold any branch or tag yet?"""
        return bool(
            self.run(
                "for-each-ref", "--count=1", "--format=%(refname)", "refs/heads", "refs/tags"
            ).strip()
        )

    def tag_names(self, count: int) -> List[str]:
        """Up to ``count`` tag names, the newest first."""
        out = self.run(
            "for-each-ref", f"--count={count}", "--sort=-creatordate", "--format=%(refname:short)",
            "refs/tags",
        )  # fmt: skip
        return out.decode("utf-8", "replace").split()

    def head_target(self) -> Optional[str]:
        """The branch HEAD names (``refs/heads/main``), or None when detached."""
        out = self._runner.answer(
            "symbolic-ref", "-q", "HEAD"
        )  # exit 1: detached; a dying git fails
        return (out or b"").decode("utf-8", "surrogateescape").strip() or None

    def full_ref_name(self, name: str) -> Optional[str]:
        """``refs/...`` when ``name`` names a branch or tag, else None (a commit id,
        ``HEAD~1`` and the like)."""
        if name.startswith("-"):
            return None
        out = self.run("rev-parse", "--symbolic-full-name", name, check=False)
        full = out.decode("utf-8", "replace").strip()
        return full if full.startswith("refs/") else None

    def merge_base(self, a: str, b: str) -> Optional[str]:
        out = self._runner.answer("merge-base", a, b)
        return (out or b"").decode().strip() or None

    def config(self, key: str, kind: Optional[str] = None) -> Optional[str]:
        """A configuration value as git reads it here (``kind``: bool, path), or None."""
        typed = [f"--type={kind}"] if kind else []
        out = self._runner.answer("config", *typed, "--get", key)
        return None if out is None else out.decode("utf-8", "surrogateescape").rstrip("\n")

    def merge_bases(self, a: str, b: str) -> List[str]:
        """Every best common ancestor: a criss-cross history has several."""
        return (self._runner.answer("merge-base", "--all", a, b) or b"").decode().split()

    def merge_heads(self) -> List[str]:
        """The commits a merge in progress brings (MERGE_HEAD), none outside a merge."""
        try:
            with open(os.path.join(self.git_dir(), "MERGE_HEAD"), encoding="ascii") as f:
                names = f.read().split()
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise GitError(f"cannot read MERGE_HEAD: {exc}") from None
        commits = [self.resolve_commit(name) for name in names]
        if None in commits:
            raise GitError("MERGE_HEAD names an object that is not a commit")
        return cast(List[str], commits)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        if ancestor in self._parents.get(descendant, ()):  # a parent rev-list printed
            return True
        return history.is_ancestor(self._runner, ancestor, descendant)

    def version(self) -> Tuple[int, ...]:
        if self._version is None:
            words = self.run("version").decode("utf-8", "replace").split()
            numbers = words[2].split(".") if len(words) > 2 else []
            self._version = tuple(int(n) for n in numbers[:3] if n.isdigit())
        return self._version

    def object_id_length(self) -> int:
        """40 hex digits in a SHA-1 repository, 64 in a SHA-256 one."""
        return 64 if self._layout()[0] == b"sha256" else 40

    def merge_tree(self, ours: str, theirs: str, unrelated: bool = False) -> Tuple[str, List[str]]:
        """(tree, conflicted paths) of git's 3-way merge of two commits (trees.merge_tree);
        the tree may stand where a commit is read for its tree."""
        if self.version() < MERGE_TREE_VERSION:
            have = ".".join(map(str, self.version())) or "unknown"
            raise GitError(
                f"judging a merge needs git {'.'.join(map(str, MERGE_TREE_VERSION))}"
                f" or later (git merge-tree --write-tree); this git is {have}"
            )
        tree, conflicts = trees.merge_tree(self._runner, ours, theirs, unrelated)
        return self.known_tree(tree), conflicts

    def known_tree(self, tree: str) -> str:
        """Let a tree id stand where a commit is read for its tree."""
        return self._objects.known_tree(tree)

    def differing_paths(self, old: str, new: str) -> List[str]:
        """The files that differ between two trees or commits."""
        return [path for path, _, _ in self.diff_trees(old, new)]

    def is_bare(self) -> bool:
        bare = self._facts()[1]
        if bare is not None:
            return bare
        return self.run("rev-parse", "--is-bare-repository").strip() == b"true"

    def records_a_parent(self, commit: str) -> bool:
        """True when the commit object names a parent (a shallow clone may lack it)."""
        header = self.read_commit(commit).split(b"\n\n", 1)[0]  # the open batch
        return any(line.startswith(b"parent ") for line in header.split(b"\n"))

    # -- snapshots -------------------------------------------------------
    def tree_entries(self, commit: str) -> Dict[str, Entry]:
        """Every file of the commit's tree, from one ls-tree, kept."""
        if commit not in self._trees:
            self._trees[commit] = trees.list_tree(self._runner, commit)
        return self._trees[commit]

    def tree_entries_under(self, commit: str, folders: Sequence[str]) -> Dict[str, Entry]:
        """The files at or below each folder, walked through the open batch
        (ObjectReader.entries_under)."""
        return self._objects.entries_under(commit, folders)

    def tree_entry(self, commit: str, path: str) -> Optional[Entry]:
        """One file of a commit's tree, found by walking trees through the
        ``cat-file --batch`` already open: no listing, no process."""
        found = self._objects.walk(commit, path)
        if found is None or found[0] == "040000":
            return None
        return Entry(*found)

    def object_at(self, commit: str, path: str) -> Optional[Tuple[str, str]]:
        """(mode, id) of what ``path`` names in the commit's tree (a folder's tree
        included), None when nothing: found by walking, no process."""
        return self._objects.walk(commit, path)

    def root_tree(self, commit: str) -> str:
        """The commit's tree id, read once: every walked lookup starts here."""
        return self._objects.root_tree(commit)

    def diff_trees(self, old: str, new: str) -> List[Change]:
        """(path, entry before, entry after) for each file that differs (trees.diff_trees)."""
        kept = self._diffs.get((old, new))
        if kept is not None and kept[1] is not None:  # diff_paths kept git's output
            return trees.parse_changes(kept[1], new)
        return trees.diff_trees(self._runner, old, new)

    def diff_paths(self, old: str, new: str) -> Tuple[List[bytes], List[bytes]]:
        """(every path that differs between two commits, the symlinks and
        submodules among them), as git's bytes (trees.diff_paths); the last
        pair asked is kept."""
        known = self._diffs.get((old, new))
        if known is not None:
            return known[0]
        found = trees.diff_paths(self._runner, old, new)
        self._diffs = {(old, new): found}  # the last: a range of one commit asks again
        return found[0]

    def index_listing(self) -> bytes:
        """What ``ls-files --stage -z`` prints for the whole index (trees.index_listing)."""
        return trees.index_listing(self._runner)

    def index_entries(self) -> Dict[str, Entry]:
        return trees.parse_index(self.index_listing())

    def read_blob(self, oid: str, limit: Optional[int] = None) -> bytes:
        """Blob bytes via one long-lived ``git cat-file --batch``; a blob above
        ``limit`` bytes is skipped without being held in memory (BlobTooLarge)."""
        return self._objects.read_blob(oid, limit)

    def read_ahead(self, oids: Sequence[str], limit: Optional[int] = None) -> None:
        """The small blobs of ``oids``, read in a few round trips and kept for
        read_blob (ObjectReader.read_ahead)."""
        self._objects.read_ahead(oids, limit)

    def peeled_commit(self, rev: str) -> Optional[str]:
        """``resolve_commit``'s answer asked of the cat-file --batch (which the
        run opens anyway) instead of one more rev-parse; the commit's tree is
        kept for ``root_tree``. A name a batch line could not carry as rev-parse
        reads it goes to rev-parse."""
        if not rev or rev.startswith("-") or any(c in rev for c in "\n\r\0 \t"):
            return self.resolve_commit(rev)
        return self._objects.resolve(rev)

    def sha256_blobs(
        self, oids: Sequence[str], expected: Optional[Mapping[str, str]] = None
    ) -> Dict[str, str]:
        """The SHA-256 of each blob, in the order asked: from the packs, or
        streamed from cat-file (ObjectReader.sha256_blobs)."""
        return self._objects.sha256_blobs(oids, self.objects_directory, expected)

    def objects_directory(self) -> str:
        """Where git reads objects here: a server's quarantine (GIT_OBJECT_DIRECTORY)
        included, as git itself resolves it."""
        return os.path.join(self.directory, self._layout()[2])

    # -- history -----------------------------------------------------------
    def history(self, tip: str, exclude: Sequence[str]) -> Callable[[], List[Commit]]:
        """Each commit reachable from ``tip`` and not from ``exclude``, with its
        parents and paths (history.history): started now, parsed when the
        returned function is called. A commit ``commits_in_order`` listed with
        ``exclude`` as its one parent is that whole history, with no rev-list."""
        if len(exclude) == 1 and self._parents.get(tip) == tuple(exclude):
            parent = exclude[0]
            return lambda: [history.Commit(tip, (parent,), self.diff_paths(parent, tip)[0])]
        return history.history(self._runner, tip, exclude, self.diff_paths)

    def commits_in_order(self, tip: str, exclude: str) -> List[Tuple[str, Tuple[str, ...]]]:
        """(commit, parents) of ``exclude..tip``, parents first (history.in_order);
        each commit and its parents are kept for the rest of the run."""
        listed = history.in_order(self._runner, tip, exclude)
        for commit, parents in listed:
            self._commits[commit] = commit
            self._parents[commit] = parents
        return listed

    def remerge_differences(self, merge: str, parents: Sequence[str]) -> List[str]:
        """The files where a two-parent merge commit differs from git's clean
        remerge of its parents, and every file that remerge conflicts at (a
        conflict committed as is, markers and all, is the merge's own doing):
        what the merge commit changed itself."""
        if merge not in self._remerged:
            remerged, conflicts = self.merge_tree(parents[0], parents[1], unrelated=True)
            self._remerged[merge] = sorted(
                set(self.differing_paths(remerged, merge)) | set(conflicts)
            )
        return self._remerged[merge]

    def last_change(self, tip: str, path: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """(the commit, its parents) that last changed ``path`` (history.last_change)."""
        return history.last_change(self._runner, tip, path)

    def same_change_in_history(
        self, tip: str, parents: Tuple[str, ...], tree: str, other_than: str
    ) -> Optional[str]:
        """A commit of ``tip``'s history with these parents and this tree
        (history.same_change_in_history)."""
        return history.same_change_in_history(self._runner, tip, parents, tree, other_than)

    def outside_history(self, oids: Sequence[str], tip: str) -> Set[str]:
        """Those of ``oids`` that are not ancestors of ``tip``, in one rev-list."""
        return history.outside_history(self._runner, oids, tip)

    def read_commit(self, oid: str) -> bytes:
        """A commit object's raw bytes, as ``git cat-file commit`` prints them."""
        return self._objects.read(oid, "commit")

    # -- working tree (only for `oracle-guard lock`, which writes files) --
    def unstaged_paths(self) -> List[str]:
        return trees.unstaged_paths(self._runner)
