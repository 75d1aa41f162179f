"""GitLab CI for tests: a component's two YAML documents, its ``$[[ ... ]]`` blocks
filled as GitLab fills them, and a job's script run in a clone laid out as
GitLab's runner lays it for a merge-request pipeline.

The interpolator knows only what the component uses: ``inputs.NAME`` and the
``component.FIELD`` its spec lists, no functions. Anything else is an error, so a
test never runs a script GitLab would have refused or filled differently."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

import yaml

from testing.git import git

BLOCK = re.compile(r"\$\[\[(.*?)\]\]")
# the keys GitLab's spec:inputs takes that this interpolator honours
INPUT_KEYS = {"default", "description", "type", "options"}
COMPONENT_FIELDS = {"name", "sha", "version", "reference"}


class InterpolationError(Exception):
    pass


def documents(text: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(the header, the jobs): a component is a ``spec:`` document, ``---``, then
    the configuration."""
    docs = list(yaml.safe_load_all(text))
    if len(docs) != 2 or not isinstance(docs[0], dict) or list(docs[0]) != ["spec"]:
        raise InterpolationError("a component is two documents: 'spec:' alone, then the jobs")
    if not isinstance(docs[1], dict):
        raise InterpolationError("the second document is not a mapping of jobs")
    return docs[0], docs[1]


def values(spec: Mapping[str, Any], given: Mapping[str, Any]) -> Dict[str, Any]:
    """Every input's value: what the include gives, else the default; an input the
    spec does not declare, or a required one not given, is an error (as in GitLab)."""
    declared = spec.get("inputs") or {}
    unknown = set(given) - set(declared)
    if unknown:
        raise InterpolationError(f"unknown inputs: {sorted(unknown)}")
    out = {}
    for name, rule in declared.items():
        rule = rule or {}
        extra = set(rule) - INPUT_KEYS
        if extra:
            raise InterpolationError(f"input {name}: keys this interpolator cannot honour: {extra}")
        if rule.get("type", "string") != "string":
            raise InterpolationError(f"input {name}: only string inputs are supported")
        if name in given:
            value = given[name]
        elif "default" in rule:
            value = rule["default"]
        else:
            raise InterpolationError(f"input {name} is required and not given")
        if not isinstance(value, str):
            raise InterpolationError(f"input {name}: {value!r} is not a string")
        if "options" in rule and value not in rule["options"]:
            raise InterpolationError(f"input {name}: {value!r} is not one of {rule['options']}")
        out[name] = value
    return out


def interpolate(
    text: str,
    given: Optional[Mapping[str, Any]] = None,
    component: Optional[Mapping[str, str]] = None,
) -> Dict[str, Any]:
    """The jobs of component ``text`` with every block filled: keys and string
    values, each node on its own, after the YAML is read (as GitLab does, so a
    value never changes the document's structure)."""
    header, jobs = documents(text)
    spec = header["spec"]
    inputs = values(spec, given or {})
    listed = spec.get("component") or []
    if set(listed) - COMPONENT_FIELDS:
        raise InterpolationError(f"spec:component lists unknown fields: {listed}")
    context = {field: (component or {}).get(field) for field in listed}

    def one(match: re.Match) -> str:
        expression = match.group(1).strip()
        if "|" in expression:
            raise InterpolationError(f"functions are not supported: $[[ {expression} ]]")
        scope, _, name = expression.partition(".")
        if scope == "inputs" and name in inputs:
            return inputs[name]
        if scope == "component" and name in context:
            if context[name] is None:
                raise InterpolationError(f"component.{name} has no value in this test")
            return str(context[name])
        raise InterpolationError(f"$[[ {expression} ]] names nothing the spec declares")

    def fill(node: Any) -> Any:
        if isinstance(node, str):
            return BLOCK.sub(one, node)
        if isinstance(node, list):
            return [fill(item) for item in node]
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                key = fill(key)
                if key in out:
                    raise InterpolationError(f"two keys interpolate to {key!r}")
                out[key] = fill(value)
            return out
        return node

    filled = fill(jobs)
    if "$[[" in yaml.safe_dump(filled):
        raise InterpolationError("a block is left after interpolation")
    return filled


# -- the runner ----------------------------------------------------------------
def merge_request_clone(
    origin: Path, dest: Path, head: str, pipeline: int = 1, depth: int = 0
) -> Path:
    """The clone GitLab's runner makes for a merge-request pipeline: git init, origin,
    a fetch of the refspecs GitLab hands the runner, a detached checkout of the head.
    With GIT_DEPTH 0 those are every branch and tag; with a depth, only the
    pipeline's own ref (refs/pipelines/ID, which GitLab points at the head), shallow."""
    git(origin, "update-ref", f"refs/pipelines/{pipeline}", head)
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    git(dest, "remote", "add", "origin", Path(origin).resolve().as_uri())
    if depth:
        refspecs = [f"+refs/pipelines/{pipeline}:refs/pipelines/{pipeline}"]
        git(dest, "fetch", "-q", "--prune", f"--depth={depth}", "origin", *refspecs)
    else:
        refspecs = ["+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"]
        git(dest, "fetch", "-q", "--prune", "origin", *refspecs)
    git(dest, "checkout", "-q", "-f", head)
    return dest


def job_environment(job: Mapping[str, Any], base: Mapping[str, str]) -> Dict[str, str]:
    """``base`` (the predefined variables) and the job's own variables. GitLab would
    expand a ``$NAME`` in a variable's value; no value here holds one, and one that
    did would be an error rather than run unexpanded."""
    env = dict(base)
    for name, value in (job.get("variables") or {}).items():
        value = str(value)
        if "$" in value:
            raise InterpolationError(f"variable {name}={value!r}: expansion is not simulated")
        env[name] = value
    return env


def run_script(
    job: Mapping[str, Any], cwd: Path, env: Mapping[str, str]
) -> subprocess.CompletedProcess:
    """The job's script as the runner runs it with the bash shell: every line in one
    shell, stopping at the first that fails."""
    lines = job["script"]
    assert isinstance(lines, list) and all(isinstance(line, str) for line in lines)
    script = "set -eo pipefail\n" + "\n".join(lines) + "\n"
    return subprocess.run(
        ["bash", "-c", script],
        cwd=str(cwd),
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )


def predefined(
    clone: Path,
    server_url: str,
    target: str,
    source: str,
    diff_base: str = "",
    path: str = "group/app",
) -> Dict[str, str]:
    """The variables GitLab sets for a merge-request pipeline's job (``target``
    empty: GitLab names none, as outside a merge request)."""
    head = git(clone, "rev-parse", "HEAD").strip()
    host = "gitlab.example.test"
    merge_request = {
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": target,
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": diff_base,
    }
    return {
        **{name: value for name, value in merge_request.items() if value},
        "CI": "true",
        "GITLAB_CI": "true",
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_PIPELINE_ID": "1",
        "CI_MERGE_REQUEST_IID": "1",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": source,
        "CI_COMMIT_SHA": head,
        "CI_COMMIT_REF_NAME": source,
        "CI_PROJECT_DIR": str(clone),
        "CI_PROJECT_PATH": path,
        "CI_SERVER_URL": server_url,
        "CI_SERVER_HOST": host,
        "CI_SERVER_FQDN": host,
        "CI_BUILDS_DIR": str(Path(clone).parent),
        "HOME": str(Path(clone).parent / "home"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
