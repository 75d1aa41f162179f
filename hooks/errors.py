"""The failures oracle-guard expects, and the one handler every entry uses.

An ``OracleGuardError`` is an expected failure: the run stops with its one-line
message and its ``exit_code``. Anything else is a bug, reported as an internal
error; either way the run never exits 0 (fail closed). This module imports
nothing of oracle-guard: every layer may raise these."""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

INTERNAL_EXIT_CODE = 2


class OracleGuardError(Exception):
    """An expected failure: one line, and the run exits ``exit_code``."""

    exit_code = 2


class UsageError(OracleGuardError):
    """The command cannot do what its arguments ask."""


Problem = Tuple[Optional[int], Optional[int], str]  # (line, column, text)


class ContractError(OracleGuardError):
    """The contract is unusable. ``problems``: each one found, as (line, column,
    text), in ``path`` (the contract itself when None)."""

    def __init__(
        self, message: str, problems: Tuple[Problem, ...] = (), path: Optional[str] = None
    ) -> None:
        super().__init__(message)
        self.problems = problems
        self.path = path  # the file at fault, when it is another file the contract names


class GitError(OracleGuardError):
    """git failed or an object could not be read: always fatal."""


class RevisionError(OracleGuardError):
    """The base or candidate cannot be determined."""


class ClockError(OracleGuardError, ValueError):
    """A time that cannot be read (a ValueError too, as date parsing raises)."""


class WorktreeError(OracleGuardError):
    """A working-tree file cannot be written where it must be, or there is no
    working tree."""


class Refused(OracleGuardError):
    """An authoring command will not write what the hooks would reject."""


class InstallError(OracleGuardError):
    """The pre-receive hook cannot be installed as asked."""


class ProtocolError(OracleGuardError):
    """A push cannot be judged: git's pre-receive input or the repository's
    default branch is not what the gate needs."""


class ReportError(OracleGuardError):
    """A report file cannot be written where --output asks."""


class InitError(OracleGuardError):
    """init cannot go on; nothing has been written."""


class Failure(NamedTuple):
    exit_code: int
    message: str  # one line, before show_text escapes it
    expected: bool  # False: an internal error, a bug


def failure(exc: BaseException) -> Failure:
    """What a run that raised ``exc`` reports."""
    if isinstance(exc, OracleGuardError):
        return Failure(exc.exit_code, str(exc), True)
    return Failure(INTERNAL_EXIT_CODE, f"internal error: {type(exc).__name__}: {exc}", False)
