"""Time: parsed once at start, passed to every check."""

from __future__ import annotations

import datetime as dt
import re
from typing import Mapping, Optional

from oracle_guard.errors import ClockError

# ASCII digits only, whole string only (``re.fullmatch``): ``\d`` would take
# other scripts' digits and ``$`` a trailing newline.
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATETIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})"
    r"(?::([0-9]{2})(?:\.([0-9]+))?)?(Z|([+-])([0-9]{2}):([0-9]{2}))"
)
_FORMS = "a date (YYYY-MM-DD) or a date-time with offset (YYYY-MM-DDTHH:MM[:SS]Z or +HH:MM)"


def _date(match: re.Match[str]) -> dt.date:
    year, month, day = (int(g) for g in match.groups()[:3])
    return dt.date(year, month, day)


def _datetime(match: re.Match[str]) -> dt.datetime:
    year, month, day, hour, minute = (int(g) for g in match.groups()[:5])
    second = int(match.group(6) or 0)
    micro = int((match.group(7) or "0")[:6].ljust(6, "0"))
    if match.group(8) == "Z":
        tz = dt.timezone.utc
    else:
        hours, minutes = int(match.group(10)), int(match.group(11))
        if hours > 23 or minutes > 59:
            raise ValueError("offset out of range")
        sign = -1 if match.group(9) == "-" else 1
        tz = dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    return dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)


def parse_when(text: str) -> dt.datetime:
    """The instant an expiry ends: a date lasts through its day in UTC; a
    date-time needs an offset and is exact."""
    if not isinstance(text, str):
        raise ClockError(f"{text!r} is not a date string")
    try:
        match = _DATE.fullmatch(text)
        if match:
            day = _date(match)
            return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc) + dt.timedelta(
                days=1
            )
        match = _DATETIME.fullmatch(text)
        if match:
            return _datetime(match)
    except (ValueError, OverflowError) as exc:
        raise ClockError(f"{text!r} is not a valid date: {exc}") from None
    raise ClockError(f"{text!r} is not {_FORMS}")


def parse_now(text: str) -> dt.datetime:
    """--now: a date means its start (00:00 UTC); a date-time needs an offset."""
    text = text.strip()
    try:
        match = _DATE.fullmatch(text)
        if match:
            day = _date(match)
            return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)
        match = _DATETIME.fullmatch(text)
        if match:
            return _datetime(match)
        problem = f"is not {_FORMS}"
    except (ValueError, OverflowError) as exc:
        problem = f"is not a valid date: {exc}"
    raise ClockError(
        f"--now/ORACLE_GUARD_NOW {text!r} {problem} (e.g. 2026-09-25 or 2026-09-25T12:00:00Z)"
    )


def now_from(option: Optional[str], env: Mapping[str, str]) -> dt.datetime:
    """--now wins over ORACLE_GUARD_NOW; else the system clock in UTC."""
    if option is not None:
        return parse_now(option)
    if env.get("ORACLE_GUARD_NOW"):
        return parse_now(env["ORACLE_GUARD_NOW"])
    return dt.datetime.now(dt.timezone.utc)
