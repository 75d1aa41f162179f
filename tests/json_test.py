"""The JSON report, and the JSON writer every machine format shares."""

from __future__ import annotations

import json

from oracle_guard.findings import Finding, HookResult
from oracle_guard.report.json import dump_json, render_json


def test_dump_json_hides_runner_markers_inside_strings_only():
    doc = {"b": "x ##[group] y", "a": [1, "\x1b"]}
    text = dump_json(doc)
    assert "##[" not in text and "##\\u005b" in text
    assert json.loads(text) == doc
    assert text == json.dumps(doc, indent=2, sort_keys=True).replace("##[", "##\\u005b") + "\n"


def test_render_json_lists_findings_in_order_with_paths_shown():
    results = [
        HookResult(
            "write-set",
            [
                Finding("write-set", "write-denied", "z\x1b.json", "m"),
                Finding("write-set", "write-outside-set", "a.json", "m", 3),
            ],
        ),
        HookResult("fixture-lock", note="nothing to check"),
    ]
    doc = json.loads(render_json(results, meta={"now": "2026-09-25T00:00:00+00:00"}))
    assert [(f["code"], f["path"]) for f in doc["findings"]] == [
        ("write-outside-set", "a.json"),
        ("write-denied", "z\\x1b.json"),
    ]
    assert doc["checks"] == {
        "write-set": {"status": "failed", "errors": 2, "warnings": 0, "note": None},
        "fixture-lock": {
            "status": "passed",
            "errors": 0,
            "warnings": 0,
            "note": "nothing to check",
        },
    }
    assert doc["now"] == "2026-09-25T00:00:00+00:00" and "error" not in doc


def test_render_json_of_an_error_has_no_checks():
    assert json.loads(render_json([], error="boom")) == {
        "findings": [],
        "checks": {},
        "error": "boom",
    }
