"""`oracle-guard freeze add | renew | remove | list`: on each example layout, the
written file passes every hook; each refusal is one clear line, exit 2, and
leaves the files byte-identical; comments in a YAML budget survive."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from testing import oracle
from testing.git import commit, git, init_repo, run_guard, write
from testing.oracle import NOW
from testing.samples import EXAMPLES, example_repo

FOUR = oracle.all_but_write_set()
BUDGET = "oracle/flake_budget.yaml"
RECORD = [
    "--seed",
    "1729",
    "--command",
    "pytest tests/test_parse.py -q",
    "--pass-count",
    "5",
    "--fail-count",
    "2",
    "--repro",
    "python harness/replay.py --id parse_header_a3f1\n",
]


def og(capsys, repo, *args, env=None):
    """``oracle-guard ARGS -C REPO`` in-process; (exit code, stdout, stderr)."""
    from oracle_guard.cli import main

    capsys.readouterr()
    rc = main([*args, "-C", str(repo)], env=dict(env or {}))
    out, err = capsys.readouterr()
    return rc, out, err


def freeze(capsys, repo, *args, env=None):
    return og(capsys, repo, "freeze", *args, *([] if env else ["--now", NOW]), env=env)


def tree_bytes(repo):
    """Every working-tree file outside .git, for byte-identical checks."""
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }


def stage_as_printed(repo, out):
    """Run each 'git add' the command printed."""
    commands = re.findall(r"stage it with: (git add .+)$", out, re.M)
    assert commands, out
    for command in commands:
        git(repo, *shlex.split(command)[1:])


def assert_every_hook_passes(capsys, repo, out):
    """Staged as printed, the change passes the four hooks that judge content (write-set
    denies oracle edits to everyone by design: an owner commits them with SKIP=write-set);
    committed, the repository passes every check."""
    stage_as_printed(repo, out)
    rc, check_out, err = run_guard(capsys, repo, "check", "--only", FOUR, "--now", NOW)
    assert rc == 0, check_out + err
    assert "failed" not in check_out
    commit(repo, message="owner's oracle change")
    rc, check_out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, check_out + err
    assert "failed" not in check_out


def assert_refused(capsys, repo, args, *expected, env=None):
    """Exit 2, one line naming ``expected``, and not a byte changed."""
    before = tree_bytes(repo)
    rc, out, err = freeze(capsys, repo, *args, env=env)
    assert rc == 2, out + err
    assert out == ""
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1, err
    for text in expected:
        assert text in err, (text, err)
    assert tree_bytes(repo) == before
    return err


def listed(capsys, repo, *args):
    rc, out, err = freeze(capsys, repo, "list", "--format", "json", *args)
    assert rc == 0, out + err
    return json.loads(out)["entries"]


# (layout, the file, a new id and extra options, an id the example freezes)
LAYOUTS = [
    ("harness", "freeze.json", ["header_name"], "prop.http.retry_after_parse"),
    ("merge-contract", BUDGET, ["new_check"], "canonicalize_unicode_hyphen"),
    (
        "oracle-dir",
        "oracle/quarantine.json",
        ["tests/test_x.py::test_y"],
        "tests/test_invoice_total.py::test_rounding_half_even",
    ),
    (
        "replay-queue",
        "quarantine/active/parse_header_a3f1.yaml",
        ["parse_header_a3f1", *RECORD],
        "retry_budget_9c2",
    ),
]


# -- add, renew, remove: the result passes every hook ------------------------------------
@pytest.mark.parametrize("name,path,new,_", LAYOUTS)
def test_add_writes_a_file_every_hook_accepts(tmp_path, capsys, name, path, new, _):
    repo = example_repo(tmp_path, name)
    rc, out, err = freeze(
        capsys, repo, "add", *new, "--owner", "qa", "--reason", "timing on CI", "--days", "7"
    )
    assert (rc, err) == (0, "")
    assert out.startswith(
        f"wrote {path} (froze {new[0]!r} until 2026-10-02); stage it with: git add {path}\n"
    )
    entry = [e for e in listed(capsys, repo) if e["id"] == new[0]]
    assert entry == [
        {
            "id": new[0],
            "owner": "qa",
            "expires": "2026-10-02",
            "days_left": 8,
            "expired": False,
            "path": path,
            "line": entry[0]["line"],
        }
    ]
    assert_every_hook_passes(capsys, repo, out)


@pytest.mark.parametrize("name,path,_,frozen", LAYOUTS)
def test_renew_writes_a_file_every_hook_accepts(tmp_path, capsys, name, path, _, frozen):
    repo = example_repo(tmp_path, name)
    rc, out, err = freeze(capsys, repo, "renew", frozen, "--days", "9")
    assert (rc, err) == (0, "")
    written = path if name != "replay-queue" else "quarantine/active/retry_budget.yaml"
    assert f"wrote {written} (renewed {frozen!r} until 2026-10-04 (was " in out
    assert [e["expires"] for e in listed(capsys, repo) if e["id"] == frozen] == ["2026-10-04"]
    assert_every_hook_passes(capsys, repo, out)


@pytest.mark.parametrize("name,path,_,frozen", LAYOUTS)
def test_remove_writes_a_file_every_hook_accepts(tmp_path, capsys, name, path, _, frozen):
    repo = example_repo(tmp_path, name)
    rc, out, err = freeze(capsys, repo, "remove", frozen)
    assert (rc, err) == (0, "")
    assert f"(unfroze {frozen!r}); stage it with: git add " in out
    assert frozen not in [e["id"] for e in listed(capsys, repo)]
    assert_every_hook_passes(capsys, repo, out)


def test_remove_deletes_a_quarantine_entry_file(tmp_path, capsys):
    repo = example_repo(tmp_path, "replay-queue")
    rc, out, _ = freeze(capsys, repo, "remove", "retry_budget_9c2")
    assert rc == 0
    assert out == (
        "removed quarantine/active/retry_budget.yaml (unfroze 'retry_budget_9c2'); "
        "stage it with: git add quarantine/active/retry_budget.yaml\n"
    )
    assert not (repo / "quarantine/active/retry_budget.yaml").exists()
    assert_every_hook_passes(capsys, repo, out)
    assert "quarantine/active/retry_budget.yaml" not in git(repo, "ls-files")


def test_add_creates_one_file_an_entry_in_the_layout_of_the_others(tmp_path, capsys):
    repo = example_repo(tmp_path, "replay-queue")
    rc, _, _ = freeze(
        capsys,
        repo,
        "add",
        "parse_header_a3f1",
        "--owner",
        "alice",
        "--reason",
        "header parser flakes",
        "--days",
        "7",
        *RECORD,
    )
    assert rc == 0
    # the key order of retry_budget.yaml, a block scalar for the multi-line repro
    assert (repo / "quarantine/active/parse_header_a3f1.yaml").read_text() == (
        "id: parse_header_a3f1\n"
        "seed: 1729\n"
        "command: pytest tests/test_parse.py -q\n"
        "runs: 7\n"
        "pass_count: 5\n"
        "fail_count: 2\n"
        "expires_at: 2026-10-02\n"
        "repro: |\n"
        "  python harness/replay.py --id parse_header_a3f1\n"
        "owner: alice\n"
        "reason: header parser flakes\n"
    )


def test_add_edits_json_in_its_own_layout(tmp_path, capsys):
    repo = example_repo(tmp_path, "oracle-dir")
    rc, _, _ = freeze(
        capsys,
        repo,
        "add",
        "tests/test_x.py::test_y",
        "--owner",
        "qa",
        "--reason",
        "naïve rounding",
        "--until",
        "2026-10-01",
    )
    assert rc == 0
    shipped = (EXAMPLES / "oracle-dir/oracle/quarantine.json").read_text()
    new = (
        '  {"test": "tests/test_x.py::test_y", "owner": "qa", "expires": "2026-10-01", '
        '"reason": "naïve rounding"}\n'
    )
    assert (repo / "oracle/quarantine.json").read_text() == shipped.replace(
        "}\n]", "},\n" + new + "]"
    )


def test_add_to_freeze_json_fills_every_map_in_key_order(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    rc, _, _ = freeze(
        capsys, repo, "add", "header_name", "--owner", "alice", "--reason", "flaky", "--days", "5"
    )
    assert rc == 0
    assert json.loads((repo / "freeze.json").read_text()) == {
        "excluded_property_ids": ["prop.http.retry_after_parse", "header_name"],
        "reason": {
            "prop.http.retry_after_parse": "intermittent under parallel workers; "
            "excluded from scoring until retimed",
            "header_name": "flaky",
        },
        "owner": {"prop.http.retry_after_parse": "http-platform", "header_name": "alice"},
        "expires": {"prop.http.retry_after_parse": "2026-10-02", "header_name": "2026-09-30"},
    }
    text = (repo / "freeze.json").read_text()
    assert text == json.dumps(json.loads(text), indent=2) + "\n"  # the shipped layout


def test_freeze_json_without_owner_and_expires_maps_gets_them(tmp_path, capsys):
    repo = example_repo(
        tmp_path,
        "harness",
        {
            "freeze.json": {
                "excluded_property_ids": ["header_name"],
                "reason": {"header_name": "old"},
            }
        },
    )
    rc, out, _ = freeze(capsys, repo, "renew", "header_name", "--days", "3")
    assert rc == 0, out
    assert json.loads((repo / "freeze.json").read_text())["expires"] == {
        "header_name": "2026-09-28"
    }


# -- the clock and the default expiry ---------------------------------------------
def test_days_default_to_max_days_and_the_clock_comes_from_the_environment(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    rc, out, _ = freeze(
        capsys,
        repo,
        "add",
        "new_check",
        "--owner",
        "qa",
        "--reason",
        "r",
        env={"ORACLE_GUARD_NOW": "2026-09-26"},
    )
    assert rc == 0
    assert "until 2026-10-10" in out  # 2026-09-26 + max_days 14


def test_add_close_to_expiry_warns_like_the_hook(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    rc, out, _ = freeze(
        capsys, repo, "add", "header_name", "--owner", "a", "--reason", "r", "--days", "1"
    )
    assert rc == 0
    assert re.search(
        r"^warning: freeze\.json:\d+: budget-expiring \(warning\): "
        r"'header_name' expires 2026-09-26, within 3 days$",
        out,
        re.M,
    ), out


def test_no_expiry_and_no_max_days_is_refused(tmp_path, capsys):
    repo = example_repo(
        tmp_path,
        "merge-contract",
        {
            ".oracle-guard.yaml": "version: 1\nfreeze:\n  - {paths: [oracle/flake_budget.yaml], "
            "schema: flake-budget}\nbudget:\n  max_frozen: 3\n"
        },
    )
    assert_refused(
        capsys, repo, ["add", "x", "--owner", "o", "--reason", "r"], "--days N or --until DATE"
    )


# -- refusals -----------------------------------------------------------------------
def test_over_the_cap_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")  # max_frozen 3, two frozen
    assert freeze(capsys, repo, "add", "third", "--owner", "o", "--reason", "r")[0] == 0
    assert_refused(
        capsys,
        repo,
        ["add", "fourth", "--owner", "o", "--reason", "r"],
        "cannot add 'fourth' to oracle/flake_budget.yaml",
        "budget-exceeded",
        "4 entries frozen, budget.max_frozen in the contract allows 3",
    )


def test_the_file_own_cap_counts_too(tmp_path, capsys):
    budget = (EXAMPLES / "merge-contract" / BUDGET).read_text()
    repo = example_repo(
        tmp_path, "merge-contract", {BUDGET: budget.replace("max_frozen: 3", "max_frozen: 2")}
    )
    assert_refused(
        capsys,
        repo,
        ["add", "third", "--owner", "o", "--reason", "r"],
        "budget-exceeded",
        f"max_frozen in {BUDGET} allows 2",
    )


def test_unstaged_entries_count_toward_the_cap(tmp_path, capsys):
    repo = example_repo(tmp_path, "replay-queue")  # max_frozen 3, one frozen
    for ident in ("case_a", "case_b"):
        rc, out, _ = freeze(
            capsys,
            repo,
            "add",
            ident,
            "--owner",
            "o",
            "--reason",
            "r",
            *RECORD[:-2],
            "--repro",
            "replay",
        )
        assert rc == 0, out
    assert_refused(
        capsys,
        repo,
        ["add", "case_c", "--owner", "o", "--reason", "r", *RECORD[:-2], "--repro", "replay"],
        "budget-exceeded",
    )


def test_beyond_max_days_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    assert_refused(
        capsys,
        repo,
        ["add", "x", "--owner", "o", "--reason", "r", "--days", "15"],
        "budget-too-far",
        "'x' expires 2026-10-10, beyond 14 days from now",
    )
    assert_refused(
        capsys,
        repo,
        ["renew", "discount_inverse_leap_promo", "--until", "2026-10-09T00:00:01Z"],
        "budget-too-far",
    )


def test_max_days_itself_is_allowed(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    rc, out, _ = freeze(capsys, repo, "add", "x", "--owner", "o", "--reason", "r", "--days", "14")
    assert rc == 0, out
    assert_every_hook_passes(capsys, repo, out)


def test_an_expiry_in_the_past_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    assert_refused(
        capsys,
        repo,
        ["add", "x", "--owner", "o", "--reason", "r", "--until", "2026-09-24"],
        "2026-09-24 has already passed",
    )
    assert_refused(
        capsys, repo, ["renew", "discount_inverse_leap_promo", "--days", "-1"], "has already passed"
    )
    rc, _, _ = freeze(
        capsys, repo, "add", "x", "--owner", "o", "--reason", "r", "--until", NOW
    )  # valid through today
    assert rc == 0


@pytest.mark.parametrize(
    "example, args, expected",
    [
        (
            "merge-contract",
            ["add", "x", "--owner", "o", "--reason", "r", "--until", "2026-02-30"],
            ("--until", "not a valid date"),
        ),
        (
            "merge-contract",
            ["add", "x", "--owner", " ", "--reason", "r"],
            ("--owner must name", "budget-no-owner"),
        ),
        (
            "harness",  # known_ids: stems of seeds/*.json
            ["add", "header_nam", "--owner", "o", "--reason", "r"],
            ("budget-unknown-id", "'header_nam' is not a known id"),
        ),
        (
            "merge-contract",
            ["add", "canonicalize_unicode_hyphen", "--owner", "o", "--reason", "r"],
            (f"'canonicalize_unicode_hyphen' is already frozen in {BUDGET}", "freeze renew"),
        ),
        (
            "replay-queue",
            ["add", "retry_budget_9c2", "--owner", "o", "--reason", "r", *RECORD],
            ("already frozen in quarantine/active/retry_budget",),
        ),
    ],
    ids=[
        "a-bad-date",
        "an-empty-owner",
        "an-id-that-is-not-known",
        "a-duplicate-id",
        "a-duplicate-quarantine-entry-id-across-files",
    ],
)
def test_a_bad_add_is_refused(tmp_path, capsys, example, args, expected):
    repo = example_repo(tmp_path, example)
    assert_refused(capsys, repo, args, *expected)


@pytest.mark.parametrize("action", [["renew", "nope", "--days", "3"], ["remove", "nope"]])
def test_an_unknown_id_is_refused(tmp_path, capsys, action):
    repo = example_repo(tmp_path, "merge-contract")
    assert_refused(capsys, repo, action, "unknown id 'nope'", BUDGET)


def test_a_file_that_fails_freeze_schema_is_never_edited(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    budget = repo / BUDGET
    budget.write_text(budget.read_text().replace("    owner: billing\n", ""))  # unstaged
    for action in (
        ["add", "x", "--owner", "o", "--reason", "r"],
        ["renew", "canonicalize_unicode_hyphen", "--days", "3"],
        ["remove", "canonicalize_unicode_hyphen"],
        ["list"],
    ):
        assert_refused(
            capsys,
            repo,
            action,
            f"{BUDGET}:",
            "freeze-invalid",
            "'owner' is a required property",
            "fix that file by hand first",
        )


def test_yaml_anchors_are_refused_before_editing(tmp_path, capsys):
    budget = (
        'max_frozen: 3\nfrozen:\n  - &first {id: a, owner: o, expires: "2026-10-01", reason: r}\n'
    )
    repo = example_repo(tmp_path, "merge-contract", {BUDGET: budget})
    assert_refused(
        capsys, repo, ["add", "x", "--owner", "o", "--reason", "r"], "anchor &first is not allowed"
    )


def test_a_flow_style_list_is_refused_as_unsafe(tmp_path, capsys):
    budget = 'max_frozen: 3\nfrozen: [{id: a, owner: o, expires: "2026-10-01", reason: r}]\n'
    repo = example_repo(tmp_path, "merge-contract", {BUDGET: budget})
    assert_refused(
        capsys,
        repo,
        ["add", "x", "--owner", "o", "--reason", "r"],
        f"cannot edit {BUDGET} safely:",
        "flow-style list",
        "edit it by hand",
    )
    assert_refused(capsys, repo, ["remove", "a"], f"cannot edit {BUDGET} safely:")
    # its scalars can still be edited in place
    rc, out, _ = freeze(capsys, repo, "renew", "a", "--days", "3")
    assert rc == 0, out
    assert (repo / BUDGET).read_text() == budget.replace("2026-10-01", "2026-09-28")


def test_an_empty_flow_list_becomes_a_block_list(tmp_path, capsys):
    repo = example_repo(
        tmp_path, "merge-contract", {BUDGET: "max_frozen: 3\nfrozen: []  # nothing frozen\n"}
    )
    rc, out, _ = freeze(
        capsys, repo, "add", "x", "--owner", "o", "--reason", "r: yes", "--days", "2"
    )
    assert rc == 0, out
    assert (repo / BUDGET).read_text() == (
        "max_frozen: 3\nfrozen:  # nothing frozen\n"
        '  - id: x\n    owner: o\n    expires: "2026-09-27"\n    reason: "r: yes"\n'
    )
    rc, out, _ = freeze(capsys, repo, "remove", "x")
    assert rc == 0, out
    assert (repo / BUDGET).read_text() == "max_frozen: 3\nfrozen: []  # nothing frozen\n"


# -- several files -----------------------------------------------------------------------
TWO_FILES = """\
version: 1
freeze:
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
  - {paths: ["oracle/quarantine.json"], schema: quarantine-list}
budget:
  max_frozen: 5
  max_days: 14
"""


def test_several_files_need_file(tmp_path, capsys):
    repo = example_repo(
        tmp_path, "merge-contract", {".oracle-guard.yaml": TWO_FILES, "oracle/quarantine.json": []}
    )
    args = ["add", "x", "--owner", "o", "--reason", "r"]
    assert_refused(
        capsys,
        repo,
        args,
        "choose one with --file PATH",
        "oracle/flake_budget.yaml; oracle/quarantine.json",
    )
    assert_refused(
        capsys,
        repo,
        args + ["--file", "oracle/other.json"],
        "--file oracle/other.json is not a freeze file the contract names",
    )
    rc, out, _ = freeze(capsys, repo, *args, "--file", "./oracle/quarantine.json")
    assert rc == 0, out
    assert json.loads((repo / "oracle/quarantine.json").read_text())[-1]["test"] == "x"
    # renew and remove find the id wherever it is
    rc, out, _ = freeze(capsys, repo, "renew", "x", "--days", "3")
    assert rc == 0 and "wrote oracle/quarantine.json" in out
    assert_refused(capsys, repo, ["remove", "x", "--file", BUDGET], "unknown id 'x'")


def test_an_id_in_two_files_needs_file(tmp_path, capsys):
    repo = example_repo(
        tmp_path,
        "merge-contract",
        {
            ".oracle-guard.yaml": TWO_FILES,
            "oracle/quarantine.json": [{"test": "canonicalize_unicode_hyphen"}],
        },
    )
    assert_refused(
        capsys, repo, ["remove", "canonicalize_unicode_hyphen"], "frozen in several files", "--file"
    )
    rc, out, _ = freeze(
        capsys, repo, "remove", "canonicalize_unicode_hyphen", "--file", "oracle/quarantine.json"
    )
    assert rc == 0, out
    assert json.loads((repo / "oracle/quarantine.json").read_text()) == []


def test_record_fields_are_required_for_a_quarantine_entry_and_refused_elsewhere(tmp_path, capsys):
    repo = example_repo(tmp_path, "replay-queue")
    assert_refused(
        capsys,
        repo,
        ["add", "x", "--owner", "o", "--reason", "r"],
        "also needs --seed, --command, --pass-count, --fail-count, --repro",
    )
    other = example_repo(tmp_path, "merge-contract")
    assert_refused(
        capsys,
        other,
        ["add", "x", "--owner", "o", "--reason", "r", "--seed", "1"],
        "--seed is for quarantine-entry records",
    )


def test_an_id_that_makes_no_file_name_needs_file(tmp_path, capsys):
    repo = example_repo(tmp_path, "replay-queue")
    args = ["add", "tests/x.py::y", "--owner", "o", "--reason", "r", *RECORD]
    assert_refused(capsys, repo, args, "does not make a file name", "--file PATH")
    rc, out, _ = freeze(capsys, repo, *args, "--file", "quarantine/active/x_y.yaml")
    assert rc == 0, out
    assert_every_hook_passes(capsys, repo, out)


def test_no_contract_in_the_index_is_an_error(tmp_path, capsys):
    repo = init_repo(tmp_path / "repo")
    commit(repo, {"README.md": "x\n"})
    rc, _, err = freeze(capsys, repo, "list")
    assert rc == 2
    assert err == (
        "oracle-guard: error: no .oracle-guard.yaml in the index: write and "
        "'git add' the contract first\n"
    )


# -- renewing and removing what already fails --------------------------------------------
def test_an_expired_entry_can_be_renewed_or_removed_while_another_stays_expired(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    later = ["--now", "2026-10-03"]  # canonicalize_unicode_hyphen expired 2026-09-30
    budget = repo / BUDGET
    budget.write_text(budget.read_text().replace('"2026-10-07"', '"2026-10-01"'))
    rc, out, err = og(
        capsys, repo, "freeze", "renew", "canonicalize_unicode_hyphen", "--days", "5", *later
    )
    assert rc == 0, out + err
    assert re.search(
        r"^note: still failing, not changed by this edit: .*budget-expired: "
        r"'discount_inverse_leap_promo' expired 2026-10-01$",
        out,
        re.M,
    ), out
    rc, out, err = og(capsys, repo, "freeze", "remove", "discount_inverse_leap_promo", *later)
    assert rc == 0, out + err
    assert "note:" not in out


def test_removing_from_a_budget_over_its_cap_is_allowed(tmp_path, capsys):
    budget = (EXAMPLES / "merge-contract" / BUDGET).read_text()
    repo = example_repo(
        tmp_path, "merge-contract", {BUDGET: budget.replace("max_frozen: 3", "max_frozen: 0")}
    )
    rc, out, _ = freeze(capsys, repo, "remove", "canonicalize_unicode_hyphen")
    assert rc == 0, out
    assert "budget-exceeded" in out  # still one over: a note, not a refusal
    assert_refused(capsys, repo, ["add", "x", "--owner", "o", "--reason", "r"], "budget-exceeded")


# -- comments survive ---------------------------------------------------------------------
COMMENTED = """\
# flake budget: owners renew, nobody else
max_frozen: 3   # the cap

frozen:
  # platform team
  - id: canonicalize_unicode_hyphen
    owner: platform-api   # pager: platform
    expires: "2026-09-30"
    reason: "locale-dependent hyphen folding on CI image"

  # billing
  - id: discount_inverse_leap_promo
    owner: billing
    expires: "2026-10-07"  # promo ends
    reason: "promo calendar not pinned in fixture"
# end of budget
"""


def test_comments_in_a_yaml_budget_survive_add_and_remove(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract", {BUDGET: COMMENTED})
    rc, out, _ = freeze(
        capsys,
        repo,
        "add",
        "new_check",
        "--owner",
        "qa team",
        "--reason",
        "timing on CI # not a comment",
        "--days",
        "7",
    )
    assert rc == 0, out
    added = COMMENTED.replace(
        '    reason: "promo calendar not pinned in fixture"\n',
        '    reason: "promo calendar not pinned in fixture"\n'
        "  - id: new_check\n"
        "    owner: qa team\n"
        '    expires: "2026-10-02"\n'
        '    reason: "timing on CI # not a comment"\n',
    )
    assert (repo / BUDGET).read_text() == added
    rc, out, _ = freeze(capsys, repo, "remove", "canonicalize_unicode_hyphen")
    assert rc == 0, out
    assert (repo / BUDGET).read_text() == added.replace(
        "  - id: canonicalize_unicode_hyphen\n"
        "    owner: platform-api   # pager: platform\n"
        '    expires: "2026-09-30"\n'
        '    reason: "locale-dependent hyphen folding on CI image"\n',
        "",
    )
    rc, out, _ = freeze(capsys, repo, "renew", "discount_inverse_leap_promo", "--days", "3")
    assert rc == 0, out
    final = (repo / BUDGET).read_text()
    assert '    expires: "2026-09-28"  # promo ends\n' in final
    assert final.startswith(
        "# flake budget: owners renew, nobody else\nmax_frozen: 3   "
        "# the cap\n\nfrozen:\n  # platform team\n\n  # billing\n"
    )
    assert final.endswith("# end of budget\n")
    assert_every_hook_passes(capsys, repo, out)


def test_a_budget_with_flow_items_and_aligned_values_keeps_its_style(tmp_path, capsys):
    budget = "max_frozen: 3\nfrozen:\n- {id: a, owner: o, expires: '2026-10-01', reason: first}\n"
    repo = example_repo(tmp_path, "merge-contract", {BUDGET: budget})
    rc, out, _ = freeze(
        capsys, repo, "add", "b", "--owner", "p", "--reason", "why, then?", "--days", "2"
    )
    assert rc == 0, out
    assert (
        repo / BUDGET
    ).read_text() == budget + "- {id: b, owner: p, expires: '2026-09-27', reason: \"why, then?\"}\n"
    aligned = (
        "max_frozen: 3\n"
        "frozen:\n"
        "  -   id:      a\n"
        "      owner:   o\n"
        "      expires: '2026-10-01'\n"
        "      reason:  first\n"
    )
    write(repo, {BUDGET: aligned})
    rc, out, _ = freeze(capsys, repo, "add", "c", "--owner", "p", "--reason", "r", "--days", "2")
    assert rc == 0, out
    assert (repo / BUDGET).read_text() == aligned + (
        "  -   id:      c\n      owner:   p\n      expires: '2026-09-27'\n      reason:  r\n"
    )


# -- list ---------------------------------------------------------------------------------
def test_list_is_sorted_by_expiry_with_days_left_and_expired_marked(tmp_path, capsys):
    repo = example_repo(
        tmp_path,
        "merge-contract",
        {
            ".oracle-guard.yaml": TWO_FILES,
            "oracle/quarantine.json": [
                {"test": "t::late", "owner": "qa", "expires": "2026-10-03T12:00:00+02:00"},
                {"test": "t::none"},
            ],
        },
    )
    rc, out, err = og(capsys, repo, "freeze", "list", "--now", "2026-10-01")
    assert rc == 0, out + err
    assert out == (
        "EXPIRES                    LEFT       ID                           OWNER         FILE\n"
        "2026-09-30                 EXPIRED    canonicalize_unicode_hyphen  platform-api  "
        "oracle/flake_budget.yaml:3\n"
        "2026-10-03T12:00:00+02:00  2 days     t::late                      qa            "
        "oracle/quarantine.json:2\n"
        "2026-10-07                 7 days     discount_inverse_leap_promo  billing       "
        "oracle/flake_budget.yaml:7\n"
        "-                          no expiry  t::none                      -             "
        "oracle/quarantine.json:7\n"
        "4 frozen, 1 expired (now 2026-10-01T00:00:00+00:00)\n"
    )
    rc, out, _ = og(
        capsys,
        repo,
        "freeze",
        "list",
        "--format",
        "json",
        "--now",
        "2026-10-01",
        "--file",
        "oracle/quarantine.json",
    )
    assert rc == 0
    assert json.loads(out) == {
        "now": "2026-10-01T00:00:00+00:00",
        "entries": [
            {
                "id": "t::late",
                "owner": "qa",
                "expires": "2026-10-03T12:00:00+02:00",
                "days_left": 2,
                "expired": False,
                "path": "oracle/quarantine.json",
                "line": 2,
            },
            {
                "id": "t::none",
                "owner": None,
                "expires": None,
                "days_left": None,
                "expired": False,
                "path": "oracle/quarantine.json",
                "line": 7,
            },
        ],
    }


def test_list_reads_the_working_tree_and_says_when_nothing_is_frozen(tmp_path, capsys):
    repo = example_repo(tmp_path, "oracle-dir", {"oracle/quarantine.json": []})
    rc, out, _ = freeze(capsys, repo, "list")
    assert (rc, out) == (0, "no frozen entries\n")
    (repo / "oracle/quarantine.json").write_text('[{"test": "t::x", "expires": "2026-09-25"}]')
    rc, out, _ = freeze(capsys, repo, "list")
    assert "2026-09-25  1 day  t::x" in out  # through the end of the day
    rc, out, _ = og(capsys, repo, "freeze", "list", "--now", "2026-09-25T12:00:00Z")
    assert "2026-09-25  under a day  t::x" in out


def test_list_json_error_is_json(tmp_path, capsys):
    repo = example_repo(tmp_path, "oracle-dir", {"oracle/quarantine.json": "[{}]"})
    rc, out, err = freeze(capsys, repo, "list", "--format", "json")
    assert rc == 2
    assert "freeze-invalid" in json.loads(out)["error"]
    assert err.startswith("oracle-guard: error: oracle/quarantine.json")


def test_block_scalars_and_an_indentless_list_are_edited_by_whole_lines(tmp_path, capsys):
    budget = (
        "frozen:\n"
        "- id: a\n"
        "  owner: o\n"
        "  expires: '2026-10-01'\n"
        "  reason: |\n"
        "    line one\n"
        "    line two\n"
        "\n"
        "# about b\n"
        "- id: b\n"
        "  owner: o\n"
        "  expires: '2026-10-01'\n"
        "  reason: >-\n"
        "    folded\n"
        "    text\n"
        "max_frozen: 3\n"
    )
    repo = example_repo(tmp_path, "merge-contract", {BUDGET: budget})
    rc, out, _ = freeze(capsys, repo, "remove", "a")
    assert rc == 0, out
    assert (repo / BUDGET).read_text() == budget.replace(
        "- id: a\n  owner: o\n  expires: '2026-10-01'\n  reason: |\n    line one\n    line two\n",
        "",
    )
    rc, out, _ = freeze(
        capsys, repo, "add", "c", "--owner", "o", "--reason", "two\nlines", "--days", "2"
    )
    assert rc == 0, out
    assert (
        (repo / BUDGET)
        .read_text()
        .endswith(
            "    text\n- id: c\n  owner: o\n  expires: '2026-09-27'\n  reason: |-\n    two\n"
            "    lines\nmax_frozen: 3\n"
        )
    )
    assert_every_hook_passes(capsys, repo, out)


# -- writes stay inside the repository, all or none -------------------------------------
def test_remove_never_deletes_a_record_behind_a_symlinked_folder(tmp_path, capsys):
    import os

    repo = example_repo(tmp_path, "replay-queue")
    outside = tmp_path / "elsewhere"
    os.rename(repo / "quarantine/active", outside)
    os.symlink(outside, repo / "quarantine/active")
    err = assert_refused(capsys, repo, ["remove", "retry_budget_9c2"], "symlink")
    assert "quarantine/active" in err
    assert (outside / "retry_budget.yaml").is_file()


def test_a_symlinked_freeze_file_is_refused_and_a_real_one_beside_it_is_not(tmp_path, capsys):
    import os

    repo = example_repo(tmp_path, "merge-contract")
    (repo / "elsewhere.yaml").write_bytes((repo / BUDGET).read_bytes())
    os.remove(repo / BUDGET)
    os.symlink(repo / "elsewhere.yaml", repo / BUDGET)
    assert_refused(
        capsys,
        repo,
        ["renew", "canonicalize_unicode_hyphen", "--days", "3"],
        f"{BUDGET} in the working tree is a symlink",
    )
    os.remove(repo / BUDGET)
    os.rename(repo / "elsewhere.yaml", repo / BUDGET)
    rc, out, err = freeze(capsys, repo, "renew", "canonicalize_unicode_hyphen", "--days", "3")
    assert rc == 0, out + err
    assert not [p for p in (repo / "oracle").iterdir() if p.name.endswith(".tmp")]


def test_a_new_record_keeps_the_file_mode_umask_and_leaves_no_temporary_file(tmp_path, capsys):
    import os
    import stat

    repo = example_repo(tmp_path, "merge-contract")
    os.chmod(repo / BUDGET, 0o640)
    rc, out, err = freeze(
        capsys, repo, "add", "late_check", "--owner", "qa", "--reason", "timing", "--days", "3"
    )
    assert rc == 0, out + err
    assert stat.S_IMODE(os.stat(repo / BUDGET).st_mode) == 0o640
    assert sorted(p.name for p in (repo / "oracle").iterdir()) == sorted(
        p.name for p in (EXAMPLES / "merge-contract" / "oracle").iterdir()
    )


# -- renew: the expiry written must pass flake-budget ----------------------------------
TOO_FAR = (
    'max_frozen: 3\nfrozen:\n  - id: a\n    owner: o\n    expires: "2026-12-01"\n    reason: r\n'
)


def test_renewing_a_too_far_entry_to_an_allowed_date_works(tmp_path, capsys):
    """Near miss of renewing it to the same too-far date (refused): the entry failed
    before the edit, and the edit fixes it."""
    repo = example_repo(tmp_path, "merge-contract", {BUDGET: TOO_FAR})
    rc, out, err = freeze(capsys, repo, "renew", "a", "--days", "3")
    assert rc == 0, out + err
    assert '    expires: "2026-09-28"\n' in (repo / BUDGET).read_text()
    assert_refused(capsys, repo, ["renew", "a", "--until", "2026-12-01"], "budget-too-far")


def test_renew_keeps_the_quoting_and_tag_of_the_expiry(tmp_path, capsys):
    budget = (
        "max_frozen: 3\nfrozen:\n  - id: a\n    owner: o\n"
        "    expires: !!str   2026-09-30  # tagged\n    reason: r\n"
        "  - id: b\n    owner: o\n    expires: '2026-09-30'\n    reason: r\n"
    )
    repo = example_repo(tmp_path, "merge-contract", {BUDGET: budget})
    assert freeze(capsys, repo, "renew", "a", "--days", "4")[0] == 0
    assert freeze(capsys, repo, "renew", "b", "--days", "6")[0] == 0
    assert (repo / BUDGET).read_text() == budget.replace(
        "!!str   2026-09-30", "!!str   2026-09-29"
    ).replace("'2026-09-30'", "'2026-10-01'")


@pytest.mark.parametrize("days", ["٣", "3_0", " 3", "3 ", "+3", "0x3", "3.0"])
def test_days_takes_ascii_digits_only(tmp_path, capsys, days):
    from oracle_guard.cli import main

    repo = example_repo(tmp_path, "merge-contract")
    before = tree_bytes(repo)
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "freeze",
                "renew",
                "canonicalize_unicode_hyphen",
                "--days",
                days,
                "--now",
                NOW,
                "-C",
                str(repo),
            ],
            env={},
        )
    assert exc.value.code == 2
    assert "ASCII digits" in capsys.readouterr().err
    assert tree_bytes(repo) == before


@pytest.mark.parametrize("days", ["999999999", "-999999999", "1" + "0" * 60])
def test_days_out_of_the_calendar_is_refused(tmp_path, capsys, days):
    repo = example_repo(tmp_path, "merge-contract")
    assert_refused(
        capsys,
        repo,
        ["renew", "canonicalize_unicode_hyphen", "--days", days],
        "outside the calendar",
    )


# -- line endings -------------------------------------------------------------------------
def test_add_beside_crlf_records_writes_crlf_and_lf_beside_lf(tmp_path, capsys):
    record = "quarantine/active/retry_budget.yaml"
    shipped = (EXAMPLES / "replay-queue" / record).read_text()
    repo = example_repo(tmp_path, "replay-queue", {record: shipped.replace("\n", "\r\n")})
    rc, out, err = freeze(
        capsys,
        repo,
        "add",
        "parse_header_a3f1",
        "--owner",
        "qa",
        "--reason",
        "r",
        "--days",
        "3",
        *RECORD,
    )
    assert rc == 0, out + err
    data = (repo / "quarantine/active/parse_header_a3f1.yaml").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") > 5, data
    assert_every_hook_passes(capsys, repo, out)
    repo = example_repo(tmp_path / "lf", "replay-queue")
    assert (
        freeze(
            capsys,
            repo,
            "add",
            "parse_header_a3f1",
            "--owner",
            "qa",
            "--reason",
            "r",
            "--days",
            "3",
            *RECORD,
        )[0]
        == 0
    )
    assert b"\r" not in (repo / "quarantine/active/parse_header_a3f1.yaml").read_bytes()


def test_new_freeze_json_maps_in_a_crlf_file_are_crlf(tmp_path, capsys):
    text = (
        '{\r\n  "excluded_property_ids": [\r\n    "p1"\r\n  ],\r\n'
        '  "reason": {\r\n    "p1": "r"\r\n  }\r\n}\r\n'
    )
    repo = example_repo(tmp_path, "harness", {"freeze.json": text})
    rc, out, err = freeze(
        capsys, repo, "add", "header_name", "--owner", "qa", "--reason", "r", "--days", "3"
    )
    assert rc == 0, out + err
    data = (repo / "freeze.json").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n"), data
    assert b'"owner": {\r\n    "header_name": "qa"\r\n  }' in data


# -- JSON lists: empty ones and compact ones -----------------------------------------
@pytest.mark.parametrize(
    "shipped, test_id, expected",
    [
        (
            "[\n]\n",
            "t::a",
            '[\n  {\n    "test": "t::a",\n    "owner": "qa",\n    "expires": "2026-09-28",\n'
            '    "reason": "r"\n  }\n]\n',
        ),
        (
            '[{"test":"t::a","owner":"qa","expires":"2026-09-28","reason":"r"}]\n',
            "t::b",
            '[{"test":"t::a","owner":"qa","expires":"2026-09-28","reason":"r"},'
            '{"test":"t::b","owner":"qa","expires":"2026-09-28","reason":"r"}]\n',
        ),
    ],
    ids=["an-empty-list-on-two-lines-gets-one-object-a-line", "a-compact-list-stays-compact"],
)
def test_add_to_a_quarantine_list_keeps_its_layout(tmp_path, capsys, shipped, test_id, expected):
    repo = example_repo(tmp_path, "oracle-dir", {"oracle/quarantine.json": shipped})
    rc, out, err = freeze(
        capsys, repo, "add", test_id, "--owner", "qa", "--reason", "r", "--days", "3"
    )
    assert rc == 0, out + err
    assert (repo / "oracle/quarantine.json").read_text() == expected


# -- what is printed ------------------------------------------------------------------
def test_the_printed_git_add_works_from_a_subfolder_for_every_action(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    sub = repo / "src"
    for args in (
        ["add", "late_check", "--owner", "qa", "--reason", "t", "--days", "3"],
        ["renew", "late_check", "--days", "4"],
        ["remove", "late_check"],
    ):
        rc, out, err = og(capsys, sub, "freeze", *args, "--now", NOW)
        assert rc == 0, out + err
        assert f"stage it with: git add ../{BUDGET}\n" in out
        stage_as_printed(sub, out)
        assert git(repo, "diff", "--name-only") == ""  # all staged


def test_list_escapes_what_the_files_hold_and_shows_now_in_seconds(tmp_path, capsys):
    repo = example_repo(
        tmp_path,
        "merge-contract",
        {
            BUDGET: (
                'max_frozen: 3\nfrozen:\n  - id: "##[group]x"\n    owner: "o\\u0085\\u001b"\n'
                '    expires: "2026-09-30"\n    reason: r\n'
            )
        },
    )
    rc, out, err = og(capsys, repo, "freeze", "list", "--now", "2026-09-25T12:00:00.123456Z")
    assert rc == 0, err
    assert "##[" not in out and "\x1b" not in out and "\x85" not in out
    assert "o\\x85\\x1b" in out
    assert out.endswith("1 frozen (now 2026-09-25T12:00:00+00:00)\n")


def test_list_says_when_a_staged_freeze_file_is_deleted(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    (repo / BUDGET).unlink()
    rc, out, err = freeze(capsys, repo, "list")
    assert rc == 0, err
    assert out == (
        f"note: {BUDGET} is deleted in the working tree but the index still holds "
        "it: its entries are not listed (restore it with 'git restore', or stage "
        "the deletion)\nno frozen entries in the working tree\n"
    )
    rc, out, err = freeze(capsys, repo, "list", "--format", "json")
    assert json.loads(out)["entries"] == [] and f"note: {BUDGET} is deleted" in err


def test_renewing_to_the_date_an_entry_has_writes_nothing_and_says_so(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract", {BUDGET: TOO_FAR})
    rc, out, _ = freeze(capsys, repo, "renew", "a", "--days", "3")
    assert rc == 0, out
    before = (repo / BUDGET).read_bytes()
    rc, out, err = freeze(capsys, repo, "renew", "a", "--days", "3")
    assert (rc, err) == (0, "")
    assert out == (
        f"'a' already expires 2026-09-28 in {BUDGET}: nothing written (pass "
        "--days N or --until DATE for another date)\n"
    )
    assert (repo / BUDGET).read_bytes() == before
