""".pre-commit-config.yaml: a new one, the oracle-guard entry added first to one
that is there, or that entry's repo: and rev: set in place; each edit read back to
be sure it changed nothing else."""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from oracle_guard.commands.init.files import (
    PRE_COMMIT_CONFIG,
    REPO_PLACEHOLDER,
    REV_PLACEHOLDER,
    Planned,
    read_text,
)
from oracle_guard.commands.init.yaml_lines import line, scalar
from oracle_guard.errors import InitError
from oracle_guard.findings import HOOKS

HOOK_IDS = HOOKS + ("oracle-guard",)


def repo_entry(repo: str, rev: str, indent: str) -> List[str]:
    return [
        line(f"{indent}- repo: {scalar(repo)}", "where you host or mirror oracle-guard"),
        line(f"{indent}  rev: {scalar(rev)}", "a tag or the full commit id you reviewed"),
        f"{indent}  hooks:",
        line(f"{indent}    - id: oracle-guard", "every check in one process"),
    ]


def new_pre_commit_config(repo: str, rev: str) -> str:
    lines = [
        "# pre-commit hooks. oracle-guard comes first: with fail_fast, nothing else runs once",
        "# it fails. Written by 'oracle-guard init'.",
        line('minimum_pre_commit_version: "3.2.0"', "the stage names the hooks use"),
        line(
            "default_install_hook_types: [pre-commit, pre-push]",
            "'pre-commit install' installs both",
        ),
        line("fail_fast: true", "stop before the test hooks when the oracle was touched"),
        "repos:",
        *repo_entry(repo, rev, "  "),
    ]
    return "\n".join(lines) + "\n"


def our_entry(repo: str, rev: str) -> Dict[str, Any]:
    """The entry init writes, as a config's parser reads it back (YAML or TOML)."""
    return {"repo": repo, "rev": rev, "hooks": [{"id": "oracle-guard"}]}


def our_entries(config: Any) -> List[int]:
    """The indexes of the ``repos:`` entries that run an oracle-guard hook."""
    repos = config.get("repos") if isinstance(config, dict) else None
    if not isinstance(repos, list):
        return []
    return [
        n
        for n, r in enumerate(repos)
        if isinstance(r, dict)
        and isinstance(r.get("hooks"), list)
        and any(isinstance(h, dict) and h.get("id") in HOOK_IDS for h in r["hooks"])
    ]


def has_our_hooks(config: Any) -> bool:
    return bool(our_entries(config))


def installs_both_stages(text: Optional[str]) -> bool:
    """Does this config make a bare 'pre-commit install' install pre-commit and pre-push?"""
    # deferred: PyYAML: 10 ms to import, only for installs_both_stages()
    import yaml

    try:
        config = yaml.safe_load(text) if text is not None else None
    except yaml.YAMLError:
        return False
    types = config.get("default_install_hook_types") if isinstance(config, dict) else None
    return isinstance(types, list) and {"pre-commit", "pre-push"} <= set(
        t for t in types if isinstance(t, str)
    )


PLACEHOLDERS = {"repo": REPO_PLACEHOLDER, "rev": REV_PLACEHOLDER}
# One `repo:` or `rev:` key on a line of its own, with a plain or quoted value.
_KEY_LINE = re.compile(
    r"(?P<head>[ \t]*(?:-[ \t]+)?(?P<key>repo|rev):)[ \t]+"
    r"(?P<value>[^#\s](?:[^#]*[^#\s])?)(?P<comment>[ \t]+#.*)?"
)


@dataclass
class Retarget:
    """Setting repo:/rev: of the oracle-guard entry that is there already."""

    text: Optional[str]  # the edited file; None when it cannot be edited safely
    changed: Dict[str, Any] = field(default_factory=dict)  # key -> the value it had
    why: str = ""  # why nothing was edited (text None, or the entry is 'repo: local')

    @property
    def needs_force(self) -> bool:  # a value other than init's own placeholder goes
        return any(old != PLACEHOLDERS[key] for key, old in self.changed.items())


def _set_value(match: re.Match[str], value: str) -> str:
    """The line with the key's value replaced, its comment kept in its column."""
    head = f"{match.group('head')} {scalar(value)}"
    comment = match.group("comment")
    if not comment:
        return head
    column = match.start("comment") + len(comment) - len(comment.lstrip())
    return (head.ljust(column) if len(head) < column else head + " ") + comment.lstrip()


def retarget_pre_commit_config(text: str, wanted: Mapping[str, str]) -> Retarget:
    """The config with the oracle-guard entry's ``repo:``/``rev:`` set to ``wanted``,
    each line edited in place; init reads the result back to be sure nothing else
    changed."""
    # deferred: PyYAML: 10 ms to import, only for retarget_pre_commit_config()
    import yaml

    def load(edited: str) -> Any:
        try:
            return yaml.safe_load(edited)
        except yaml.YAMLError:
            return None

    return retarget_lines(text, yaml.safe_load(text), wanted, load, _KEY_LINE, _set_value)


def retarget_lines(
    text: str,
    config: Any,
    wanted: Mapping[str, str],
    load: Callable[[str], Any],
    key_line: re.Pattern[str],
    set_value: Callable[[re.Match[str], str], str],
    names: Tuple[str, str] = ("'repos:' entries", "'{}:'"),
) -> Retarget:
    """The retarget of either config format: each key's line is the one line
    ``key_line`` matches whose edit (``set_value``) loads back as the config with
    that one value changed; ``names`` say the list and a key in its syntax."""
    ours = our_entries(config)
    if len(ours) != 1:
        return Retarget(None, why=f"{len(ours)} of its {names[0]} run oracle-guard hooks")
    where = ours[0]
    entry = config["repos"][where]
    if entry.get("repo") in ("local", "meta"):
        return Retarget(text, why=f"its oracle-guard hooks run from 'repo: {entry['repo']}'")
    changed = {key: entry.get(key) for key, value in wanted.items() if entry.get(key) != value}
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    expected = copy.deepcopy(config)
    for key in changed:
        expected["repos"][where][key] = wanted[key]
        found = []
        for n, ln in enumerate(lines):
            match = key_line.fullmatch(ln)
            if match is None or match.group("key") != key:
                continue
            edited = lines[:n] + [set_value(match, wanted[key])] + lines[n + 1 :]
            if load(newline.join(edited)) == expected:
                found.append(edited)
        if len(found) != 1:
            return Retarget(
                None,
                changed,
                f"its oracle-guard entry's {names[1].format(key)} is not a plain key on a "
                "line of its own",
            )
        lines = found[0]
    return Retarget(newline.join(lines), changed)


def edit_pre_commit_config(text: str, repo: str, rev: str) -> Tuple[Optional[str], str]:
    """(new text, "") with our repo entry first in ``repos:``; (text, "") when the hooks
    are there already; (None, why) when the file is not simple enough to edit safely."""
    # deferred: PyYAML: 10 ms to import, only for edit_pre_commit_config()
    import yaml

    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return None, f"it does not parse as YAML ({str(exc).splitlines()[0]})"
    if has_our_hooks(config):
        return text, ""
    if (
        not isinstance(config, dict)
        or not isinstance(config.get("repos"), list)
        or not config["repos"]
    ):
        return None, "it has no non-empty 'repos:' list"
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    starts = [n for n, ln in enumerate(lines) if re.fullmatch(r"repos:[ \t]*(#.*)?", ln)]
    if len(starts) != 1:
        return None, "its 'repos:' list is not a plain block list"
    first = next(
        (
            n
            for n in range(starts[0] + 1, len(lines))
            if lines[n].strip() and not lines[n].lstrip().startswith("#")
        ),
        None,
    )
    match = re.match(r"([ \t]*)- ", lines[first]) if first is not None else None
    if match is None:
        return None, "its 'repos:' list is not a plain block list"
    edited = newline.join(lines[:first] + repo_entry(repo, rev, match.group(1)) + lines[first:])
    expected = dict(config, repos=[our_entry(repo, rev)] + config["repos"])
    try:
        if yaml.safe_load(edited) != expected:
            return None, "adding the entry would change more than the 'repos:' list"
    except yaml.YAMLError:
        return None, "adding the entry would not parse"
    return edited, ""


def resolve_rev(repo: str, rev: Optional[str]) -> Tuple[str, str]:
    """(repo as written into the config, rev): a local clone gives its HEAD commit."""
    # deferred: 4 ms to import, only for resolve_rev()
    from oracle_guard.git.plumbing import Git

    if not os.path.isdir(repo):
        return repo, rev or REV_PLACEHOLDER
    where = os.path.abspath(repo)
    clone = Git(where, use_cache=False)
    try:
        head = clone.resolve_commit("HEAD") if clone.ok("rev-parse", "--git-dir") else None
        if head is None:
            raise InitError(
                f"--repo {repo!r} is a folder but not a git clone with commits; "
                "pre-commit installs hooks from a git repository"
            )
        if rev is not None and clone.resolve_commit(rev) is None:
            raise InitError(missing_rev(repo, rev, clone.tag_names(6), head))
    finally:
        clone.close()
    return where, rev or head


def missing_rev(repo: str, rev: str, tags: List[str], head: str) -> str:
    """--rev names nothing in the local clone: say what it does hold, so the user
    pins that instead of a rev the hook's first run fails to check out."""
    if tags:
        held = f"its tags include {', '.join(tags[:5])}{', ...' if len(tags) > 5 else ''}"
    else:
        held = "it has no tags"
    return (
        f"--rev {rev!r} names no commit in --repo {repo!r} ({held}; its HEAD is {head}): "
        "pass one of those, or leave --rev out to pin HEAD's commit id (the one "
        "'oracle-guard --version' names when installed from that clone)"
    )


@dataclass
class ConfigPlan:
    """What init does with the hook runner's config."""

    text: Optional[str]  # the config as init leaves it
    planned: Optional[Planned] = None  # the file written or kept; None: the snippet instead
    snippet: Optional[str] = None  # the entry to add by hand, when the file is not edited
    snippet_why: str = ""
    todo: str = ""  # a repo:/rev: change init could not make itself
    notes: List[str] = field(default_factory=list)


@dataclass(frozen=True)
class ConfigFormat:
    """How init writes, edits and retargets one config format."""

    new: Callable[[str, str], str]
    edit: Callable[[str, str, str], Tuple[Optional[str], str]]
    retarget: Callable[[str, Mapping[str, str]], Retarget]
    snippet: Callable[[str, str], str]  # the entry to paste
    first: str  # where the entry goes, as init's report says it
    paste: str  # where to paste the snippet


YAML_FORMAT = ConfigFormat(
    new_pre_commit_config,
    edit_pre_commit_config,
    retarget_pre_commit_config,
    lambda repo, rev: "\n".join(["repos:"] + repo_entry(repo, rev, "  ")),
    "first in repos:",
    "first under its 'repos:'",
)


def plan_config(
    top: str,
    repo: str,
    rev: str,
    asked_repo: str,
    path: str = PRE_COMMIT_CONFIG,
    fmt: ConfigFormat = YAML_FORMAT,
) -> ConfigPlan:
    """A new config; our entry added first to an existing one; or, with --repo/--rev,
    the repo:/rev: of the entry that is there set to them."""
    wanted = {}
    if asked_repo != REPO_PLACEHOLDER:
        wanted["repo"] = repo
    if rev != REV_PLACEHOLDER:
        wanted["rev"] = rev
    config_path = os.path.join(top, path)
    if not os.path.lexists(config_path):
        text = fmt.new(repo, rev)
        return ConfigPlan(
            text, Planned(path, text, "the oracle-guard hooks, at pre-commit and pre-push")
        )
    current = read_text(config_path)
    edited, why = (
        (None, "it is not a UTF-8 text file") if current is None else fmt.edit(current, repo, rev)
    )
    if edited is None:
        return ConfigPlan(current, snippet=fmt.snippet(repo, rev), snippet_why=why)
    if edited != current:
        return ConfigPlan(
            edited, Planned(path, edited, f"the oracle-guard hooks, {fmt.first}", "edit")
        )
    kept = ConfigPlan(current, Planned(path, current, "the oracle-guard hooks"))
    if not wanted:
        return kept
    change = fmt.retarget(current, wanted)
    asked = " and ".join(f"{key}: {wanted[key]}" for key in wanted)
    if change.text is None:
        kept.todo = f"in {path}, set the oracle-guard entry's {asked} yourself ({change.why})"
        kept.notes.append(f"{path} not edited: {change.why}")
    elif change.why:
        kept.notes.append(f"{path}: {change.why}, so --repo and --rev are not applied")
    if change.text is None or not change.changed:
        return kept
    was = ", ".join(
        f"{key}: {scalar(old) if isinstance(old, str) else old}"
        for key, old in change.changed.items()
    )
    return ConfigPlan(
        change.text,
        Planned(
            path,
            change.text,
            f"the oracle-guard entry's {' and '.join(k + ':' for k in change.changed)}",
            "retarget",
            change.needs_force,
            was,
            f"its oracle-guard entry has {was}",
        ),
        notes=kept.notes,
    )
