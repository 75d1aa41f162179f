"""Time: parsed once at start, passed to every check."""
from __future__ import annotations

import datetime as dt
import re
from typing import Mapping, Optional

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$")


class ClockError(ValueError):
    pass


def parse_when(text: str) -> dt.datetime:
    """The instant an expiry ends: a date lasts through its day in UTC; a
    date-time needs an offset and is exact."""
    if not isinstance(text, str):
        raise ClockError(f"{text!r} is not a date string")
    try:
        if _DATE.match(text):
            day = dt.date.fromisoformat(text)
            return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc) \
                + dt.timedelta(days=1)
        if _DATETIME.match(text):
            return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ClockError(f"{text!r} is not a valid date: {exc}") from None
    raise ClockError(
        f"{text!r} is not a date (YYYY-MM-DD) or a date-time with offset "
        "(YYYY-MM-DDTHH:MM[:SS]Z or +HH:MM)")


def parse_now(text: str) -> dt.datetime:
    """--now: a date means its start (00:00 UTC); a date-time needs an offset."""
    text = text.strip()
    if _DATE.match(text):
        try:
            day = dt.date.fromisoformat(text)
        except ValueError as exc:
            raise ClockError(f"--now {text!r}: {exc}") from None
        return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)
    try:
        return parse_when(text)
    except ClockError:
        raise ClockError(
            f"--now/ORACLE_GUARD_NOW {text!r} is not an ISO-8601 date or a date-time "
            "with offset (e.g. 2026-09-25 or 2026-09-25T12:00:00Z)") from None


def now_from(option: Optional[str], env: Mapping[str, str]) -> dt.datetime:
    if option is not None:
        return parse_now(option)
    if env.get("ORACLE_GUARD_NOW"):
        return parse_now(env["ORACLE_GUARD_NOW"])
    return dt.datetime.now(dt.timezone.utc)
