"""The text report: a ruff-style line a finding, a summary line a hook, and one
hint naming the first error's fix and who to ask."""

from __future__ import annotations

import pytest

from oracle_guard.checks.codes import CODES
from oracle_guard.findings import Finding, HookResult
from oracle_guard.report.text import finding_line, painter, render_text, summary_lines


def failed(*codes):
    return [HookResult("write-set", [Finding("write-set", code, "a.json", "m") for code in codes])]


@pytest.mark.parametrize(
    ("codes", "owners", "why"),
    [
        (["merge-conflict"], [], ""),
        (["write-outside-set"], ["alice"], "; to widen the write set, ask an owner (alice)"),
        (["write-outside-set"], [], "; to widen the write set, ask the oracle's owners"),
        (
            ["write-denied"],
            ["alice", "bob"],
            "; the oracle is human-owned: to change it, ask an owner (alice, bob)",
        ),
        (
            ["write-outside-set", "write-denied"],
            [],
            "; the oracle is human-owned: to change it, ask the oracle's owners",
        ),
    ],
)
def test_the_hint_names_the_first_errors_fix_and_who_to_ask(codes, owners, why):
    *_, hint = summary_lines(failed(*codes), owners=owners)
    first = sorted(codes)[0] if len(codes) > 1 else codes[0]
    assert hint == (f"hint: {CODES[first].fix}{why}. See 'oracle-guard explain {first}'.")


def test_no_hint_without_an_error():
    warned = [
        HookResult(
            "flake-budget",
            [Finding("flake-budget", "budget-expiring", "f", "m", 3, "warning")],
            note="n",
        )
    ]
    assert summary_lines(warned) == ["flake-budget: passed (1 warning) (n)"]


def test_summary_counts_errors_and_warnings():
    result = HookResult(
        "flake-budget",
        [
            Finding("flake-budget", "budget-expired", "f", "m", 1),
            Finding("flake-budget", "budget-expired", "f", "n", 2),
            Finding("flake-budget", "budget-expiring", "f", "o", 3, "warning"),
        ],
    )
    assert summary_lines([result])[0] == "flake-budget: failed (2 errors, 1 warning)"


def test_finding_line_and_its_colours():
    f = Finding("flake-budget", "budget-expiring", "x\x1b.yaml", "e\x1bm", 3, "warning")
    assert finding_line(f) == "x\\x1b.yaml:3: budget-expiring (warning): e\\x1bm"
    assert finding_line(f, painter(True)) == (
        "\x1b[1mx\\x1b.yaml:3\x1b[0m: \x1b[1;33mbudget-expiring (warning)\x1b[0m: e\\x1bm"
    )
    assert finding_line(f, painter(False)) == finding_line(f)


def test_render_text_makes_every_line_inert():
    out = render_text(
        [
            HookResult(
                "write-set", [Finding("write-set", "write-denied", None, "::error::x ##[group]")]
            )
        ]
    )
    assert out.splitlines()[0] == ".: write-denied: ::error::x ##\\[group]"
    assert out.endswith("\n")
