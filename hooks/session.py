"""One run's state, and its owner: the repository (``Git``, its cache), the
contracts parsed in the run, and what is built once from each contract (its
write set, its owners' keys). A command makes one session a run and closes it;
nothing outlives it, and no two runs share it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple, TypeVar

from oracle_guard.errors import GitError

if TYPE_CHECKING:
    from oracle_guard.cache import Cache
    from oracle_guard.git.plumbing import Git

T = TypeVar("T")


class Session:
    """``git``: the run's repository; None for trees held in memory."""

    def __init__(self, git: Optional[Git] = None) -> None:
        self._git = git
        self._cache: Optional[Cache] = None
        # parsed contracts, by cache.contract_key: one blob is often read for several revisions
        self.parsed: Dict[str, Dict[str, Any]] = {}
        self._memos: Dict[Tuple[object, str], Any] = {}

    @property
    def repository(self) -> Optional[Git]:
        return self._git

    @property
    def git(self) -> Git:
        """The run's repository; GitError for a session of trees in memory."""
        if self._git is None:
            raise GitError("this run reads no repository (its trees are in memory)")
        return self._git

    @property
    def cache(self) -> Cache:
        """The repository's cache, or one that holds nothing."""
        if self._git is not None:
            return self._git.cache
        if self._cache is None:
            # deferred: 5 ms to import, only for a session of trees in memory
            from oracle_guard.cache import Cache

            self._cache = Cache(None)
        return self._cache

    def memo(self, owner: object, kind: str, build: Callable[[], T]) -> T:
        """What ``build`` makes for ``owner`` (a contract, by identity), built once a session."""
        key = (owner, kind)
        if key not in self._memos:
            self._memos[key] = build()
        value: T = self._memos[key]
        return value

    def close(self) -> None:
        """Save the cache and stop git's batch; the memos go with the session."""
        if self._git is not None:
            self._git.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
