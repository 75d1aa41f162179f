"""A GitHub Actions job run here as the runner runs it, for action.yml and the recipes
that use it.

The workspace is laid out as actions/checkout leaves it, from a real bare 'origin';
the runner's variables are set (GITHUB_WORKSPACE, GITHUB_EVENT_PATH with a real event,
GITHUB_BASE_REF, GITHUB_ACTION_PATH, RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY,
CI, GITHUB_ACTIONS); each `run:` step is a script file run by bash with the runner's
flags. Only the `${{ }}` expressions the action and its recipes use are evaluated;
anything else is an error, so a wrong script is never run silently.

Two `uses:` steps are emulated, not run: actions/checkout and actions/setup-python are
JavaScript actions that talk to GitHub (its git servers, its Python builds). The
emulation does what they leave behind: a full clone of origin detached at the ref
(fetch-depth 0, no stored token), and a Python with its path as the step's output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

import yaml

from testing.git import GIT_ENV, git

# the shells the runner starts: `shell: bash` and no shell at all (on Linux)
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]
NO_SHELL = ["bash", "-e"]
PINNED = re.compile(r"[0-9a-f]{40}")
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.S)
COMPARISON = re.compile(r"^(?P<ref>[A-Za-z0-9_.-]+)\s*(?P<op>==|!=)\s*'(?P<lit>[^']*)'$")


class HarnessError(Exception):
    """The workflow or action asks for something this harness does not emulate."""


@dataclass
class Runner:
    """One job's machine: its folders, its event, where `uses:` names resolve."""

    root: Path
    origin: Path  # the bare repository actions/checkout clones
    event_name: str
    event: Dict[str, Any]
    actions: Dict[str, Path]  # `uses:` as written -> the action's folder
    python: str = sys.executable  # what setup-python "installs"
    env: Dict[str, str] = field(default_factory=dict)  # more job variables
    log: List[str] = field(default_factory=list)
    summary: str = ""

    @property
    def workspace(self) -> Path:
        return self.root / "work"

    @property
    def temp(self) -> Path:
        return self.root / "temp"

    def base_env(self) -> Dict[str, str]:
        """The runner's variables, and nothing of the test process's CI context."""
        keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(GIT_ENV)
        pr = self.event.get("pull_request") or {}
        event_path = self.root / "event.json"
        event_path.write_text(json.dumps(self.event), encoding="utf-8")
        env.update(
            CI="true",
            GITHUB_ACTIONS="true",
            GITHUB_EVENT_NAME=self.event_name,
            GITHUB_EVENT_PATH=str(event_path),
            GITHUB_WORKSPACE=str(self.workspace),
            GITHUB_REPOSITORY=self.event["repository"]["full_name"],
            GITHUB_BASE_REF=pr.get("base", {}).get("ref", ""),
            GITHUB_HEAD_REF=pr.get("head", {}).get("ref", ""),
            GITHUB_SHA=self.env.get("GITHUB_SHA", ""),
            RUNNER_TEMP=str(self.temp),
            RUNNER_OS="Linux",
        )
        env.update(self.env)
        return env

    # -- the job ---------------------------------------------------------------------
    def run_workflow(self, path: Path) -> int:
        """Run the workflow's one job; its exit code (the first failing step's)."""
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        (job,) = doc["jobs"].values()
        self.workspace.mkdir(parents=True)
        self.temp.mkdir(parents=True)
        env = self.base_env()
        scope = Scope(env, event=self.event)
        env.update(self._evaluated_env(doc.get("env") or {}, scope))
        env.update(self._evaluated_env(job.get("env") or {}, scope))
        return self._steps(job["steps"], env, scope, action=None)

    def _steps(
        self, steps: List[Dict[str, Any]], env: Dict[str, str], scope: Scope, action: Optional[Path]
    ) -> int:
        for step in steps:
            scope.env = env
            if "if" in step and not condition(step["if"], scope):
                if "id" in step:  # a skipped step's outputs read as empty, as on GitHub
                    scope.steps[step["id"]] = {}
                continue
            code = self._step(step, env, scope, action)
            if code != 0:
                return code
        return 0

    def _step(
        self, step: Dict[str, Any], env: Dict[str, str], scope: Scope, action: Optional[Path]
    ) -> int:
        unknown = set(step) - {"name", "id", "if", "uses", "with", "run", "shell", "env"}
        if unknown:
            raise HarnessError(f"step keys not emulated: {sorted(unknown)}")
        with_ = {k: evaluate(scalar(v), scope) for k, v in (step.get("with") or {}).items()}
        if "uses" in step:
            try:
                outputs = self._uses(step["uses"], with_, env)
            except StepFailed as failed:  # a step of the composite action failed
                return failed.code
        else:
            shell = step.get("shell")
            if action is not None and shell is None:
                raise HarnessError("a composite action's run step must name its shell")
            if shell not in (None, "bash"):
                raise HarnessError(f"shell {shell!r} is not emulated")
            step_env = dict(env, **self._evaluated_env(step.get("env") or {}, scope))
            if action is not None:
                step_env["GITHUB_ACTION_PATH"] = str(action)
            # the runner writes ${{ }} into the script before bash sees it
            script = evaluate(step["run"], scope)
            code, outputs = self._run(script, BASH if shell else NO_SHELL, step_env)
            if code != 0:
                return code
        if "id" in step:
            scope.steps[step["id"]] = outputs
        return 0

    @staticmethod
    def _evaluated_env(values: Mapping[str, Any], scope: Scope) -> Dict[str, str]:
        return {k: evaluate(scalar(v), scope) for k, v in values.items()}

    def _run(self, script: str, shell: List[str], env: Dict[str, str]) -> tuple:
        """A run step as the runner starts it: the script in a file, bash given its path."""
        n = len(list(self.temp.glob("step-*.sh")))
        path = self.temp / f"step-{n}.sh"
        path.write_text(script, encoding="utf-8")
        output, summary = self.temp / f"output-{n}", self.temp / f"summary-{n}"
        output.write_text("")
        summary.write_text("")
        done = subprocess.run(
            [*shell, str(path)],
            cwd=self.workspace,
            env=dict(env, GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.log.append(done.stdout)
        self.summary += summary.read_text(encoding="utf-8")
        return done.returncode, read_outputs(output.read_text(encoding="utf-8"))

    # -- uses: -----------------------------------------------------------------------
    def _uses(self, uses: str, with_: Dict[str, str], env: Dict[str, str]) -> Dict[str, str]:
        name, _, ref = uses.partition("@")
        if uses in self.actions:
            return self._composite(self.actions[uses], with_, env)
        if name in ("actions/checkout", "actions/setup-python"):
            if not PINNED.fullmatch(ref):
                raise HarnessError(f"{uses}: not pinned by a full commit id")
            if name == "actions/checkout":
                return self._checkout(with_, env)
            return self._setup_python(with_, env)
        raise HarnessError(f"uses: {uses} is not emulated")

    def _composite(
        self, folder: Path, with_: Dict[str, str], env: Dict[str, str]
    ) -> Dict[str, str]:
        doc = yaml.safe_load((folder / "action.yml").read_text(encoding="utf-8"))
        if doc["runs"]["using"] != "composite":
            raise HarnessError("only composite actions are run")
        declared = doc.get("inputs") or {}
        unknown = set(with_) - set(declared)
        if unknown:
            raise HarnessError(f"inputs the action does not declare: {sorted(unknown)}")
        inputs = {k: with_.get(k, str(v.get("default", ""))) for k, v in declared.items()}
        scope = Scope(env, inputs=inputs, action_path=str(folder), event=self.event)
        inner = dict(env)
        code = self._steps(doc["runs"]["steps"], inner, scope, action=folder)
        if code != 0:
            raise StepFailed(code)
        scope.env = inner
        return {k: evaluate(str(v["value"]), scope) for k, v in (doc.get("outputs") or {}).items()}

    def _checkout(self, with_: Dict[str, str], env: Dict[str, str]) -> Dict[str, str]:
        known = {"ref", "fetch-depth", "persist-credentials", "allow-unsafe-pr-checkout"}
        if set(with_) - known:
            raise HarnessError(
                f"actions/checkout inputs not emulated: {sorted(set(with_) - known)}"
            )
        if with_.get("fetch-depth") != "0" or with_.get("persist-credentials") != "false":
            raise HarnessError("only a full clone without a stored token is emulated")
        work = self.workspace
        for entry in work.iterdir():  # checkout's clean: the folder is the clone
            raise HarnessError(f"the workspace is not empty: {entry.name}")
        ref = with_.get("ref") or env.get("GITHUB_SHA", "")
        if not ref:
            raise HarnessError("nothing to check out: no ref and no GITHUB_SHA")
        git(work, "init", "-q")
        git(work, "remote", "add", "origin", str(self.origin))
        git(
            work,
            "fetch",
            "-q",
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/tags/*:refs/tags/*",
        )
        present = ["git", "-C", str(work), "cat-file", "-e", f"{ref}^{{commit}}"]
        if subprocess.run(present, stderr=subprocess.DEVNULL).returncode:
            git(work, "fetch", "-q", "origin", ref)  # a fork's head: by its id
        git(work, "checkout", "-q", "--force", "--detach", ref)
        commit = git(work, "rev-parse", "HEAD").strip()
        self.log.append(f"[checkout] {commit}\n")
        return {"ref": ref, "commit": commit}

    def _setup_python(self, with_: Dict[str, str], env: Dict[str, str]) -> Dict[str, str]:
        known = {"python-version", "update-environment"}
        if set(with_) - known:
            raise HarnessError(
                f"actions/setup-python inputs not emulated: {sorted(set(with_) - known)}"
            )
        if with_.get("update-environment", "true") != "false":
            env["PATH"] = os.path.dirname(self.python) + os.pathsep + env["PATH"]
        # python-version is not honoured: the test's own interpreter stands in
        return {"python-path": self.python, "python-version": sys.version.split()[0]}


class StepFailed(Exception):
    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


@dataclass
class Scope:
    """What `${{ }}` may name here."""

    env: Dict[str, str]
    inputs: Optional[Dict[str, str]] = None
    action_path: Optional[str] = None
    event: Optional[Dict[str, Any]] = None
    steps: Dict[str, Dict[str, str]] = field(default_factory=dict)


def lookup(name: str, scope: Scope) -> str:
    parts = name.split(".")
    if parts[0] == "inputs" and scope.inputs is not None and len(parts) == 2:
        if parts[1] not in scope.inputs:
            raise HarnessError(f"no input {parts[1]!r}")
        return scope.inputs[parts[1]]
    if name == "github.action_path" and scope.action_path is not None:
        return scope.action_path
    if name == "runner.temp":
        return scope.env["RUNNER_TEMP"]
    if parts[:3] == ["github", "event", "pull_request"] and len(parts) > 3:
        node: Any = scope.event
        for part in parts[2:]:
            node = node.get(part) if isinstance(node, dict) else None
        return "" if node is None else str(node)
    if parts[0] == "env" and len(parts) == 2:
        return scope.env.get(parts[1], "")
    if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
        if parts[1] not in scope.steps:
            raise HarnessError(f"no step {parts[1]!r} has run")
        return scope.steps[parts[1]].get(parts[3], "")
    raise HarnessError(f"expression not emulated: {name}")


def scalar(value: Any) -> str:
    """A YAML value as the runner hands it on: booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def evaluate(text: str, scope: Scope) -> str:
    return EXPRESSION.sub(lambda m: lookup(m.group(1), scope), text)


def condition(text: str, scope: Scope) -> bool:
    """An `if:`: NAME == 'literal', NAME != 'literal', with or without ${{ }}."""
    found = EXPRESSION.fullmatch(text.strip())
    inner = found.group(1) if found else text.strip()
    compared = COMPARISON.match(inner)
    if compared is None:
        raise HarnessError(f"condition not emulated: {text}")
    value = lookup(compared.group("ref"), scope)
    return (value == compared.group("lit")) == (compared.group("op") == "==")


def read_outputs(text: str) -> Dict[str, str]:
    """$GITHUB_OUTPUT: name=value lines, and name<<DELIMITER blocks."""
    out: Dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            else:
                raise HarnessError(f"$GITHUB_OUTPUT: {name} has no closing {delimiter}")
            out[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        elif line:
            raise HarnessError(f"$GITHUB_OUTPUT: not name=value: {line!r}")
    return out


def offline_pip_env(root: Path) -> Dict[str, str]:
    """Stands in for the network the runner has: pip takes oracle-guard's dependencies
    and its build backend from this venv (a folder of links to its site-packages, on
    PYTHONPATH, without oracle-guard itself) and asks no index."""
    site = Path(sysconfig.get_paths()["purelib"])
    deps = root / "site-deps"
    deps.mkdir(parents=True)
    for entry in site.iterdir():
        if entry.name.startswith(("oracle_guard", "__editable__", "pip", "__pycache__")):
            continue
        if entry.suffix == ".pth":
            continue
        (deps / entry.name).symlink_to(entry)
    # pip reads a "no-" option's variable inverted: 0 turns build isolation off
    return {"PYTHONPATH": str(deps), "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0"}
