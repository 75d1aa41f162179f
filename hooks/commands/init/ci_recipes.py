"""--ci NAME: the CI recipe init writes, with the install source filled in from
--repo and --rev."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

from oracle_guard.commands.init.files import (
    PRE_COMMIT_CONFIG,
    REPO_PLACEHOLDER,
    REV_PLACEHOLDER,
    Planned,
    read_text,
)
from oracle_guard.errors import InitError

# --ci NAME: the recipe (examples/ci/, shipped as package data oracle_guard.recipes) and
# where it goes. GitHub gets the gate: on pull_request_target the workflow runs as the
# base branch has it, so a pull request cannot edit the check that judges it (the
# pull_request recipe runs as the pull request has it: feedback, not a gate). GitLab has
# one recipe; a merge request can edit .gitlab-ci.yml, which the next steps say.
CI_RECIPES = {
    "github": (
        "github-actions-base-branch.yml",
        ".github/workflows/oracle-guard-gate.yml",
        "the CI gate: GitHub Actions on pull_request_target, from the base branch",
    ),
    "gitlab": ("gitlab-ci.yml", ".gitlab-ci.yml", "the CI job, in GitLab merge-request pipelines"),
}
# The recipes' install source: one `ORACLE_GUARD: "..."` line, whose value init sets.
_SOURCE_LINE = re.compile(r'^(?P<head>[ \t]*ORACLE_GUARD:[ \t]*)"(?P<value>[^"\\\r\n]*)"', re.M)


def recipe_text(name: str) -> str:
    """A CI recipe as shipped: package data ``oracle_guard.recipes``, copies of
    examples/ci/ that a test keeps byte for byte the same."""

    spec = importlib.util.find_spec("oracle_guard.recipes")
    # shipped with the package: a missing one is a broken install
    assert spec is not None and spec.submodule_search_locations is not None
    folder = list(spec.submodule_search_locations)[0]
    with open(os.path.join(folder, name), "rb") as f:
        return f.read().decode("utf-8")


def pip_source(asked_repo: str, rev: str) -> Tuple[Optional[str], str]:
    """(where CI's pip installs oracle-guard from, git+URL@REV; or None and why not)."""
    if asked_repo == REPO_PLACEHOLDER or rev == REV_PLACEHOLDER:
        return None, ""
    if os.path.isdir(asked_repo):
        return None, f"--repo {asked_repo} is a local folder, which CI cannot reach"
    url = asked_repo
    scp = re.fullmatch(r"([^@/:\s]+@)?([^@/:\s]+):(?!//)(\S+)", url)  # git@host:path
    if scp:
        url = f"ssh://{scp.group(1) or ''}{scp.group(2)}/{scp.group(3)}"
    url = url if url.startswith("git+") else "git+" + url
    if not re.fullmatch(r"git\+[A-Za-z][A-Za-z0-9+.-]*://\S+", url) or re.search(r"\s", rev):
        return None, f"--repo {asked_repo} --rev {rev} is no URL pip installs from"
    return f"{url}@{rev}", ""


def _source_line(text: str) -> Optional[re.Match[str]]:
    found = list(_SOURCE_LINE.finditer(text))
    return found[0] if len(found) == 1 else None


def fill_recipe(template: str, source: Optional[str]) -> Tuple[str, str]:
    """(the recipe with ``source`` as its install source, or as shipped for None;
    the placeholder it ships with). Read back to be sure only that value changed."""
    # deferred: PyYAML: 15 ms to import, only for fill_recipe()
    import yaml

    match = _source_line(template)
    if match is None:
        raise InitError("internal error: a CI recipe without one ORACLE_GUARD line")
    shipped = match.group("value")
    if source is None:
        return template, shipped
    text = (
        template[: match.start()]
        + match.group("head")
        + json.dumps(source, ensure_ascii=False)
        + template[match.end() :]
    )
    if yaml.safe_load(text) != _replaced(yaml.safe_load(template), shipped, source):
        raise InitError(f"cannot write {source!r} as the CI recipe's ORACLE_GUARD")
    return text, shipped


def _replaced(node: Any, old: str, new: str) -> Any:
    if isinstance(node, dict):
        return {k: _replaced(v, old, new) for k, v in node.items()}
    if isinstance(node, list):
        return [_replaced(v, old, new) for v in node]
    return new if node == old else node


def recipe_source(text: Optional[str], template: str) -> Optional[str]:
    """The install source of ``text`` when it is the recipe with only that value set."""
    ours, theirs = _source_line(template), _source_line(text or "")
    if ours is None or theirs is None or text is None:
        return None
    if (text[: theirs.start()], text[theirs.end() :]) != (
        template[: ours.start()],
        template[ours.end() :],
    ):
        return None
    return theirs.group("value")


@dataclass
class CiPlan:
    """What init does with the CI file of --ci."""

    planned: Optional[Planned] = None  # the recipe written or kept
    snippet: Optional[str] = None  # the job to paste into a file init leaves alone
    todo: str = ""  # the install source to set in the CI file by hand
    notes: List[str] = field(default_factory=list)


def plan_recipe(
    ci: str, asked_repo: str, rev: str, top: str, config: str = PRE_COMMIT_CONFIG
) -> CiPlan:
    """The recipe written with the install source filled in from --repo/--rev (a file
    that is the recipe already gets that value set); an existing .gitlab-ci.yml of your
    own is left alone and the job printed to paste."""
    name, path, what = CI_RECIPES[ci]
    template = recipe_text(name)
    source, why = pip_source(asked_repo, rev)
    text, shipped = fill_recipe(template, source)
    target = os.path.join(top, path)
    current = read_text(target) if os.path.isfile(target) else None
    had = recipe_source(current, template)
    todo = (
        f"in {path}, set ORACLE_GUARD to where CI installs oracle-guard from, as pip "
        f"reads it: git+URL@REV, the repo: and rev: of {config} (or rerun "
        f"init with --ci {ci} --repo URL --rev REV)"
    )
    out = CiPlan()
    if had is None and ci == "gitlab" and os.path.lexists(target):
        if re.search(r"^['\"]?oracle-guard['\"]?[ \t]*:", current or "", re.M):
            out.notes.append(f"{path} already has an oracle-guard job: left as it is")
            return out
        out.snippet = text  # your own pipeline: the job to paste into it
    elif had is not None and (source is None or had == source):
        out.planned = Planned(path, current or "", what)
        source = had if had != shipped else None
    elif had is not None:
        out.planned = Planned(
            path,
            text,
            "the ORACLE_GUARD install source",
            "retarget",
            had != shipped,
            f"ORACLE_GUARD: {had}",
            f"its ORACLE_GUARD is {had}",
        )
    else:
        out.planned = Planned(path, text, what)
    if source is None:
        out.todo = todo
        if why:
            out.notes.append(f"{why}: {path} keeps the ORACLE_GUARD placeholder")
    return out
