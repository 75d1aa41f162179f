"""The plan: from what the user asked for and what the repository holds, every
file init writes (or keeps, or cannot write) and the notes it prints; nothing is
written here."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, cast

from oracle_guard import contract as contract_mod
from oracle_guard.checks import fixture_lock
from oracle_guard.commands.init.ci_recipes import plan_recipe
from oracle_guard.commands.init.contract_writer import (
    CONTRACT,
    checked_contract,
    existing_contract,
    merge_contract,
)
from oracle_guard.commands.init.editor_schemas import (
    editor_schema_text,
    modeline_edits,
    yaml_freeze_schemas,
)
from oracle_guard.commands.init.files import (
    PRE_COMMIT_CONFIG,
    PREK_CONFIG,
    REPO_PLACEHOLDER,
    SCHEMA_DIR,
    Planned,
    read_text,
)
from oracle_guard.commands.init.layouts import (
    Paths,
    add_budget,
    choose_layout,
    missing_tests_note,
    propose,
    proposed_allow,
    unguarded_data,
)
from oracle_guard.commands.init.precommit_config import YAML_FORMAT, plan_config, resolve_rev
from oracle_guard.commands.init.signing import plan_signers, signing_identity
from oracle_guard.errors import InitError
from oracle_guard.parsing import strict_input
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.snapshot import Snapshot

if TYPE_CHECKING:
    from oracle_guard.git.plumbing import Git


@dataclass(frozen=True)
class Settings:
    """What the user asked init for (the command line, as plain values)."""

    directory: str = "."  # -C
    layout: Optional[str] = None  # None: the one recognised
    force: bool = False
    dry_run: bool = False
    repo: str = REPO_PLACEHOLDER
    rev: Optional[str] = None
    allow: Optional[Sequence[str]] = None  # None: the example's patterns that match
    ci: Optional[str] = None  # github or gitlab
    now: Optional[str] = None  # --now, passed on to the commands init prints


@dataclass
class Plan:
    layout: str
    evidence: List[Tuple[str, int]]
    contract_text: str
    data: Dict[str, Any]
    files: List[Planned] = field(default_factory=list)
    blocked_locks: List[Tuple[str, List[str]]] = field(default_factory=list)
    snippet: Optional[str] = None
    snippet_why: str = ""
    notes: List[str] = field(default_factory=list)
    pending_oracle: List[str] = field(default_factory=list)
    config_text: Optional[str] = None  # the runner's config as init leaves it
    config_path: str = PRE_COMMIT_CONFIG  # the config the runner reads
    runner: str = "pre-commit"  # the hook runner: pre-commit or prek
    snippet_where: str = ""  # where to paste the snippet in config_path
    config_todo: str = ""  # a repo:/rev: change init could not make itself
    now_arg: Optional[str] = None  # --now, passed on to the commands init prints
    ci: Optional[str] = None  # --ci: github or gitlab
    ci_snippet: Optional[str] = None  # the CI job to paste into a file init leaves alone
    ci_todo: str = ""  # the install source to set in the CI file by hand
    unchecked: List[str] = field(default_factory=list)  # files preflight could not judge
    warnings: List[str] = field(default_factory=list)  # data folders the contract leaves open


def make_plan(
    settings: Settings, git: Git, top: str, env: Optional[Mapping[str, str]] = None
) -> Plan:
    """What init writes in the work tree at ``top``, in the order it reports it."""

    index = Snapshot.of_index(git)
    unstaged = git.unstaged_paths()
    paths = Paths(list(index.entries) + unstaged)
    layout, evidence = choose_layout(settings.layout, paths)
    data = propose(layout, paths, settings.allow)
    budget_notes = add_budget(data, layout, paths, index)
    signing = signing_identity(git, top)
    if signing.key is not None:
        # deferred: 3 ms to import, only for make_plan()
        from oracle_guard.authority.keys import SIGNERS_FILE

        data["authority"] = {"signers": SIGNERS_FILE}
    contract, data, notes = plan_contract(
        data, layout, paths, top, budget_notes, allow_given=settings.allow is not None
    )
    check_allow_file(data["write_set"].get("allow_file"), index, top)
    plan = Plan(
        layout, evidence, contract.text, data, notes=notes, now_arg=settings.now, ci=settings.ci
    )
    plan.warnings = unguarded_data(data, paths, layout)
    plan.files.append(contract)
    for name in ["contract"] + yaml_freeze_schemas(data):
        plan.files.append(
            Planned(
                f"{SCHEMA_DIR}/{name}.schema.json",
                editor_schema_text(name),
                f"the {name} schema, for your editor",
            )
        )
    plan_locks(plan, index, unstaged)
    add_files_and_notes(plan, plan_signers(data.get("authority"), signing, top))
    rev = plan_pre_commit_config(plan, settings, top, env or {})
    if settings.ci:
        plan_ci(plan, settings.ci, settings.repo, rev, top)
    mark_existing(plan.files, top)
    plan.pending_oracle = pending_oracle(data, index, paths, unstaged, plan.files, top)
    add_files_and_notes(plan, modeline_edits(data, paths.all, top))
    return plan


def plan_contract(
    data: Dict[str, Any],
    layout: str,
    paths: Paths,
    top: str,
    budget_notes: List[str],
    allow_given: bool,
) -> Tuple[Planned, Dict[str, Any], List[str]]:
    """The contract: the proposal, or the human's contract kept with only what it
    lacks added; the data it holds, and the notes on what the proposal left out."""
    left_out = proposed_allow(layout, paths)[1] if not allow_given else []
    tamper_notes = missing_tests_note(paths)
    kept_text, kept, problem = existing_contract(top)
    contract = Planned(CONTRACT, "", "the contract", why=problem)
    added: List[str] = []
    if kept is not None:
        data, added = merge_contract(data, kept, allow_given)
        budget_notes = budget_notes if "budget" not in kept else []
        left_out = left_out if "write_set" not in kept else []
        tamper_notes = tamper_notes if "tamper" not in kept else []
        if added:
            contract.what = f"the contract, adding {'; '.join(added)}; the rest kept"
            contract.why = f"init would add {'; '.join(added)}; it keeps the rest"
    # existing_contract gives the text whenever it gives the data
    contract.text = (
        cast(str, kept_text) if kept is not None and not added else checked_contract(data, layout)
    )
    notes = list(budget_notes)
    if left_out and "allow" in data["write_set"]:
        notes.append(
            f"write_set.allow leaves out {', '.join(left_out)} (nothing there yet): "
            "add it once it exists, or rerun init with --allow PATTERN"
        )
    notes.extend(tamper_notes)
    return contract, data, notes


def add_files_and_notes(plan: Plan, planned: Tuple[List[Planned], List[str]]) -> None:
    files, notes = planned
    plan.files.extend(files)
    plan.notes.extend(notes)


def plan_locks(plan: Plan, index: Snapshot, unstaged: Sequence[str]) -> None:
    """Each fixture lock, as 'oracle-guard lock' would write it; a lock whose fixtures
    are not all staged is left for after the git add."""
    for entry in plan.data.get("fixtures", []):
        pending = fixture_lock.pending_fixtures(entry, unstaged)
        if pending:
            plan.blocked_locks.append((entry["lock"], pending))
            continue
        problems = fixture_lock.unlockable(entry, index)
        if problems:
            raise InitError(f"cannot lock {entry['lock']}: {problems[0]}")
        content, count = fixture_lock.build_lock(entry, index)
        plan.files.append(
            Planned(
                entry["lock"], content, f"the fixture lock, {count} file{'s' if count != 1 else ''}"
            )
        )


def plan_pre_commit_config(plan: Plan, settings: Settings, top: str, env: Mapping[str, str]) -> str:
    """The config the repository's hook runner reads, with the oracle-guard entry at
    --repo and --rev. Returns the rev."""
    # deferred: 5 ms to import, only for plan_pre_commit_config()
    from oracle_guard.commands.init.prek_config import PREK_FORMAT, choose_config

    repo, rev = resolve_rev(settings.repo, settings.rev)
    choice = choose_config(top, env)
    fmt = PREK_FORMAT if choice.path == PREK_CONFIG else YAML_FORMAT
    config = plan_config(top, repo, rev, settings.repo, choice.path, fmt)
    plan.config_text, plan.config_path, plan.runner = config.text, choice.path, choice.runner
    if choice.why:
        plan.notes.append(f"the hooks go in {choice.path}: {choice.why}")
    if config.planned is not None:
        plan.files.append(config.planned)
    plan.snippet, plan.snippet_why, plan.snippet_where = (
        config.snippet,
        config.snippet_why,
        fmt.paste,
    )
    plan.config_todo = config.todo
    plan.notes.extend(config.notes)
    return rev


def plan_ci(plan: Plan, ci_name: str, asked_repo: str, rev: str, top: str) -> None:
    """--ci: the recipe, installing oracle-guard from --repo at ``rev``."""
    ci = plan_recipe(ci_name, asked_repo, rev, top, plan.config_path)
    if ci.planned is not None:
        plan.files.append(ci.planned)
    plan.ci_snippet, plan.ci_todo = ci.snippet, ci.todo
    plan.notes.extend(ci.notes)


def mark_existing(files: Sequence[Planned], top: str) -> None:
    """A new file that is there already is the same, or differs."""
    for planned in files:
        if planned.state != "new":
            continue
        target = os.path.join(top, planned.path)
        if os.path.isdir(target):
            raise InitError(f"{planned.path} is a folder; init writes a file there")
        if os.path.lexists(target):
            planned.state = "same" if read_text(target) == planned.text else "differs"


def pending_oracle(
    data: Dict[str, Any],
    index: Snapshot,
    paths: Paths,
    unstaged: Sequence[str],
    files: Sequence[Planned],
    top: str,
) -> List[str]:
    """The oracle files not staged yet that init does not write: the git add stages them."""
    probe = contract_mod.Contract(data, index, from_base=False)
    protected = PatternSet(probe.oracle_globs() + data["write_set"]["deny"])
    written = {p.path for p in files}
    return sorted(
        p
        for p in set(unstaged)
        if p not in written
        and p in paths
        and (protected.matches(p) or p in probe.oracle_files())
        and os.path.lexists(os.path.join(top, p))
    )


def check_allow_file(path: Optional[str], index: Snapshot, top: str) -> None:
    """The allow_file the contract names holds only path prefixes, as check reads it:
    its working-tree copy (which the printed git add stages), else the index's. A
    line check would refuse stops init, which never turns it into a pattern."""
    # deferred: under 1 ms to import, only for check_allow_file()
    from oracle_guard.checks.write_set import allow_file_lines

    if path is None:
        return
    full = os.path.join(top, *path.split("/"))
    try:
        if os.path.isfile(full) and not os.path.islink(full):
            with open(full, "rb") as f:
                data = f.read()
        elif path in index:
            data = index.read(path)
        else:
            return  # not there: check says it is missing from the commit
        allow_file_lines(strict_input.decode_text(data), path)
    except OSError as exc:
        raise InitError(f"cannot read {path}: {exc.strerror or exc}") from None
    except strict_input.LoadError as exc:
        raise InitError(f"{path}: {exc}; nothing was written") from None
    except contract_mod.ContractError as exc:
        raise InitError(f"{exc}; nothing was written") from None
