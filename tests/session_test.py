"""A run's state has one owner, its Session (issue #35): the repository, its cache,
the contracts parsed in the run and what is built once from each contract. Nothing
of it is kept on a Contract or in a module, so two runs share none of it."""

from __future__ import annotations

from typing import Any, List, cast

import pytest

from oracle_guard.checks.write_set import WriteSet
from oracle_guard.contract import Contract, choose
from oracle_guard.errors import GitError
from oracle_guard.git.plumbing import Git
from oracle_guard.session import Session
from testing.trees import memory

CONTRACT = "version: 1\nwrite_set:\n  allow: ['src/**']\n"


def tree() -> Any:
    return memory({".oracle-guard.yaml": CONTRACT, "src/a.py": "x = 1\n"})


def contract_in(session: Session) -> Contract:
    snapshot = tree()
    found = choose(snapshot, snapshot, session)
    assert found is not None
    return found


class RecordingGit:
    """Stands in for Git: says whether the session closed it."""

    def __init__(self) -> None:
        self.calls: List[str] = []

    def close(self) -> None:
        self.calls.append("close")


def test_one_session_builds_a_contracts_write_set_once():
    session = Session()
    contract = contract_in(session)
    assert WriteSet.of(contract) is WriteSet.of(contract)


def test_two_sessions_build_two_write_sets_for_the_same_contract():
    data = contract_in(Session()).data
    first = Contract(data, tree(), from_base=True, session=Session())
    second = Contract(data, tree(), from_base=True, session=Session())
    assert WriteSet.of(first) is not WriteSet.of(second)


def test_near_miss_two_contracts_of_one_session_have_a_write_set_each():
    session = Session()
    first, second = contract_in(session), contract_in(session)
    assert WriteSet.of(first) is not WriteSet.of(second)
    assert WriteSet.of(first) is WriteSet.of(first)


def test_a_memo_is_built_once_a_session_and_owner():
    session, owner = Session(), object()
    built: List[int] = []

    def build() -> int:
        built.append(1)
        return len(built)

    assert session.memo(owner, "kind", build) == 1
    assert session.memo(owner, "kind", build) == 1
    # near miss: another kind, another owner or another session builds again
    assert session.memo(owner, "other", build) == 2
    assert session.memo(object(), "kind", build) == 3
    assert Session().memo(owner, "kind", build) == 4


def test_a_session_parses_its_contract_blob_once():
    session = Session()
    contract_in(session)
    assert len(session.parsed) == 1
    contract_in(session)
    assert len(session.parsed) == 1
    # near miss: another session has parsed nothing
    assert Session().parsed == {}


def test_a_contract_is_immutable_and_keeps_its_session():
    session = Session()
    contract = contract_in(session)
    assert contract.session is session
    with pytest.raises(AttributeError):
        contract.session = Session()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        contract._write_set = WriteSet.of(contract)  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        del contract.data
    assert not hasattr(contract, "_write_set")
    assert contract.session is session


def test_close_closes_the_sessions_git():
    git = RecordingGit()
    session = Session(cast(Git, git))
    assert session.git is git and session.repository is git
    session.close()
    assert git.calls == ["close"]


def test_a_with_block_closes_git_even_when_the_run_fails():
    git = RecordingGit()
    with pytest.raises(RuntimeError):
        with Session(cast(Git, git)):
            raise RuntimeError("the run failed")
    assert git.calls == ["close"]


def test_near_miss_a_session_left_open_does_not_close_its_git():
    git = RecordingGit()
    Session(cast(Git, git))
    assert git.calls == []


def test_a_session_of_trees_in_memory_has_a_cache_that_holds_nothing():
    session = Session()
    assert session.repository is None
    session.cache.put("contract", "key", {"version": 1})
    assert session.cache.get("contract", "key") is None
    assert session.cache is session.cache
    session.close()  # nothing to close


def test_a_session_of_trees_in_memory_has_no_git():
    with pytest.raises(GitError):
        _ = Session().git


def test_near_miss_a_session_on_a_repository_hands_out_its_git_and_its_cache(tmp_path):
    git = Git(str(tmp_path), use_cache=False)
    with Session(git) as session:
        assert session.git is git
        assert session.cache is git.cache
