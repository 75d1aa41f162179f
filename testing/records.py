"""Records of the two built-in shapes, with real digests: a corpus line and a replay
case, as the oracle-dir and replay-queue layouts keep them."""

from __future__ import annotations

from typing import Any, Dict

from oracle_guard.checks.records import digest_of

CORPUS_TEST = "tests/test_invoice.py::test_total"


def corpus_line(ident: str, payload: Any, **extra: Any) -> Dict[str, Any]:
    line = {"id": ident, "test": CORPUS_TEST, "payload": payload, "expect": "fail"}
    line["payload_sha256"] = digest_of(payload)
    line.update(extra)
    return line


def replay_case(ident: str, payload: Any, seed: int = 1729, **extra: Any) -> Dict[str, Any]:
    case = {
        "id": ident,
        "command": ["pytest", "tests/test_parse.py::test_header", "-q"],
        "seed": seed,
        "input_sha256": digest_of(payload),
        "payload": payload,
        "observed": {"status": 500},
        "expected": None,
        "promoted_to": None,
    }
    case.update(extra)
    return case
