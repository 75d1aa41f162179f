"""The scoring seed and Hypothesis settings, from the target's contract: inline
(``pin: {randomly_seed: N, hypothesis: {...}}``) or from a TOML file of the
target (``pin: {file: oracle/seeds.toml}``, with ``[random]`` and ``[hypothesis]``
tables as the oracle layout keeps them)."""

from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional, Tuple

from oracle_guard.errors import OracleGuardError
from oracle_guard.snapshot import Snapshot

DEFAULT_SEED = 0
# the seeds file's keys: (table, key) -> (the setting, its type)
FILE_KEYS: Dict[Tuple[str, str], Tuple[Optional[str], type]] = {
    ("random", "pytest_randomly_seed"): ("seed", int),
    ("hypothesis", "deadline_ms"): ("deadline", int),
    ("hypothesis", "max_examples_score"): ("max_examples", int),
    ("hypothesis", "suppress_database_write"): (None, bool),  # a score never keeps a database
}


class PinError(OracleGuardError):
    """The pin cannot be read (exit 2)."""


class Pin(NamedTuple):
    seed: int
    hypothesis: Dict[str, Any]  # deadline (ms or None), max_examples
    source: str  # where it came from, for the report


def read_pin(section: Dict[str, Any], target: Snapshot) -> Pin:
    pin = section.get("pin") or {}
    if "file" in pin:
        inline = sorted(set(pin) - {"file"})
        if inline:
            raise PinError(
                f"score.pin names a file and {', '.join(inline)} too: the seed comes from one place"
            )
        return _from_file(pin["file"], target)
    hypothesis = dict(pin.get("hypothesis") or {})
    seed = pin.get("randomly_seed", DEFAULT_SEED)
    source = "from the contract" if "randomly_seed" in pin else "the default: no score.pin"
    return Pin(seed, hypothesis, source)


def _from_file(path: str, target: Snapshot) -> Pin:
    # deferred: under 1 ms to import, only for _from_file()
    from oracle_guard.parsing.toml_reader import load_toml

    if target.entry(path) is None:
        raise PinError(f"score.pin.file {path!r} is not in {target.label}")
    try:
        document = load_toml(target.read(path, 1 << 20))
    except ValueError as exc:
        raise PinError(f"{path}: not TOML: {exc}") from None
    seed: int = DEFAULT_SEED
    hypothesis: Dict[str, Any] = {}
    for table in ("random", "hypothesis"):
        values: Any = document.get(table, {})
        if not isinstance(values, dict):
            raise PinError(f"{path}: [{table}] is not a table")
        for key, value in values.items():
            if (table, key) not in FILE_KEYS:
                known = ", ".join(k for t, k in FILE_KEYS if t == table)
                raise PinError(f"{path}: unknown key {key!r} in [{table}] (known: {known})")
            name, kind = FILE_KEYS[(table, key)]
            if type(value) is not kind:
                raise PinError(f"{path}: [{table}] {key} must be {kind.__name__}, not {value!r}")
            if name == "seed" and isinstance(value, int):
                seed = value
            elif name is not None:
                hypothesis[name] = value
    return Pin(seed, hypothesis, f"from {path}")
