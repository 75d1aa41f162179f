"""The CI recipes in examples/ci/: valid for their CI systems, and they judge a branch
as docs/how-to/ci-*.md say when their steps run in a clone laid out as that CI system lays it."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from oracle_guard.cli import build_parser
from testing.git import commit, git, init_repo
from testing.oracle import NOW

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "examples" / "ci"
GITHUB_WORKFLOWS = [
    "github-actions.yml",
    "github-actions-base-branch.yml",
    "github-action-gate.yml",
    "github-action-required.yml",
    "github-action-sarif.yml",
]
WORKFLOWS = [(name, "vendor.github-workflows") for name in GITHUB_WORKFLOWS] + [
    ("gitlab-ci.yml", "vendor.gitlab-ci"),
]
# pre-commit runs the hooks from this checkout's venv: the recipes, not the install, are tested
LOCAL_HOOKS = """\
repos:
  - repo: local
    hooks:
      - id: oracle-guard
        name: oracle-guard
        entry: oracle-guard check
        language: system
        pass_filenames: false
        always_run: true
"""


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.parametrize("name,schema", WORKFLOWS)
def test_each_recipe_validates_against_its_published_schema(name, schema):
    checked = check_jsonschema(schema, CI / name)
    assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize("name,schema", WORKFLOWS)
def test_the_schema_check_bites(tmp_path, name, schema):
    doc = yaml.safe_load((CI / name).read_text())
    if "jobs" in doc:
        next(iter(doc["jobs"].values()))["steps"] = "not a list"
    else:
        doc["oracle-guard"]["when"] = "sometimes"
    broken = tmp_path / name
    broken.write_text(json.dumps(doc))
    assert check_jsonschema(schema, broken).returncode == 1


def test_the_github_recipes_follow_the_docs():
    pr = yaml.safe_load((CI / "github-actions.yml").read_text())
    gate = yaml.safe_load((CI / "github-actions-base-branch.yml").read_text())
    # PyYAML reads the key 'on' as True (YAML 1.1); GitHub reads it as "on"
    assert list(pr[True]) == ["pull_request"] and list(gate[True]) == ["pull_request_target"]
    for doc in (pr, gate):
        assert doc["permissions"] == {"contents": "read"}
        (job,) = doc["jobs"].values()
        checkout = job["steps"][0]
        assert checkout["uses"].startswith("actions/checkout@")
        assert checkout["with"]["fetch-depth"] == 0
        assert checkout["with"]["persist-credentials"] is False
        runs = [s["run"] for s in job["steps"] if "run" in s]
        assert "oracle-guard check --format github" in runs
    pr_runs = [s["run"] for s in next(iter(pr["jobs"].values()))["steps"] if "run" in s]
    assert any(r.startswith("pre-commit run --all-files") for r in pr_runs)
    assert any("pip install pre-commit" in r for r in pr_runs)
    # the gate runs nothing the pull request names: no pre-commit, a pinned install
    gate_text = (CI / "github-actions-base-branch.yml").read_text()
    assert "pre-commit run" not in gate_text
    assert "github.event.pull_request.head.sha" in gate_text
    for text in (gate_text, (CI / "github-actions.yml").read_text()):
        assert "Trust" in text or "gate" in text


def test_the_gitlab_recipe_follows_the_docs():
    job = yaml.safe_load((CI / "gitlab-ci.yml").read_text())["oracle-guard"]
    assert job["stage"] == ".pre"
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    assert job["variables"]["GIT_DEPTH"] == "0"
    assert any(
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME" in line and "git fetch" in line
        for line in job["script"]
    )
    assert "pre-commit run --all-files --show-diff-on-failure" in job["script"]


def test_the_recipes_command_lines_are_ones_the_cli_accepts():
    args = build_parser().parse_args(["check", "--format", "github"])
    assert args.format == "github"


# -- the recipes' steps, run in clones laid out as each CI system lays them --------
def tool_env(tmp_path, **extra):
    """The test's environment with this venv's oracle-guard and pre-commit first on PATH
    and the revision variables of the test process removed."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "CI_", "PRE_COMMIT_")) and k != "CI"
    }
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.update(
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        PRE_COMMIT_COLOR="never",
        ORACLE_GUARD_NOW=NOW,
    )
    env.update(extra)
    return env


RETRY_SEEDS = "seeds/prop.http.retry_after_parse.json"


@pytest.fixture
def origin(tmp_path):
    """A bare 'origin' whose main holds the harness example under its contract, and
    three branches cut from it: honest, reorders-seeds and (main then gains a seed)."""
    work = init_repo(tmp_path / "work")
    shutil.copytree(ROOT / "examples" / "harness", work, dirs_exist_ok=True)
    commit(work, {".pre-commit-config.yaml": LOCAL_HOOKS}, "guard the oracle")
    git(work, "branch", "honest")
    git(work, "branch", "reorders-seeds")
    git(work, "checkout", "-q", "honest")
    commit(work, {"src/harness.py": "def parse_header(raw):\n    return raw\n"}, "honest")
    git(work, "checkout", "-q", "reorders-seeds")
    seeds = json.loads((work / "seeds/header_name.json").read_text())
    commit(work, {"seeds/header_name.json": seeds[::-1]}, "reorder seeds")
    git(work, "checkout", "-q", "main")  # an owner appends a seed on main after the branches
    retry = json.loads((work / RETRY_SEEDS).read_text())
    commit(
        work,
        {RETRY_SEEDS: retry + [{"header": "Retry-After: 0", "expect_seconds": 0}]},
        "append a seed",
    )
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return bare


def full_clone(origin: Path, dest: Path, branch: str) -> Path:
    """What actions/checkout with fetch-depth: 0 leaves: every branch as origin/*."""
    git(origin.parent, "clone", "-q", str(origin), str(dest))
    git(dest, "checkout", "-q", "--detach", f"origin/{branch}")
    return dest


def run(script: str, cwd: Path, env) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-euc", script],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def github_steps():
    doc = yaml.safe_load((CI / "github-actions.yml").read_text())
    (job,) = doc["jobs"].values()
    return [s["run"] for s in job["steps"] if "run" in s and "pip install" not in s["run"]]


@pytest.mark.parametrize("branch,passes", [("honest", True), ("reorders-seeds", False)])
def test_the_github_steps_judge_the_pull_request_against_its_target(
    tmp_path, origin, branch, passes
):
    clone = full_clone(origin, tmp_path / "ci", branch)
    env = tool_env(tmp_path, CI="true", GITHUB_BASE_REF="main")
    results = [run(step, clone, env) for step in github_steps()]
    assert [r.returncode == 0 for r in results] == [passes] * len(results), [
        r.stdout for r in results
    ]
    annotations = results[0].stdout
    if not passes:
        assert "::error file=seeds/header_name.json" in annotations
        assert "seed-reordered" in annotations
        assert "seeds/header_name.json" in results[1].stdout


@pytest.mark.parametrize("branch,passes", [("honest", True), ("reorders-seeds", False)])
def test_the_gitlab_script_fetches_the_target_and_judges_the_merge_request(
    tmp_path, origin, branch, passes
):
    # GitLab's runner fetches the pipeline's ref only: no origin/main until the script's fetch
    clone = init_repo(tmp_path / "ci")
    git(clone, "remote", "add", "origin", str(origin))
    git(clone, "fetch", "-q", "origin", f"+refs/heads/{branch}:refs/remotes/origin/{branch}")
    git(clone, "checkout", "-q", "--detach", f"origin/{branch}")
    diff_base = git(clone, "rev-parse", "HEAD~1").strip()
    env = tool_env(
        tmp_path,
        CI="true",
        CI_MERGE_REQUEST_DIFF_BASE_SHA=diff_base,
        CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main",
    )
    job = yaml.safe_load((CI / "gitlab-ci.yml").read_text())["oracle-guard"]
    env.update({k: v for k, v in job["variables"].items() if k != "ORACLE_GUARD"})  # as GitLab
    script = [line for line in job["script"] if "pip install" not in line]
    results = [run(line, clone, env) for line in script]
    assert results[0].returncode == 0, results[0].stdout  # the fetch of the target branch
    assert git(clone, "rev-parse", "refs/remotes/origin/main").strip()
    (score,) = [i for i, line in enumerate(script) if "oracle-guard score" in line]
    judged = [r for i, r in enumerate(results) if i not in (0, score)]
    assert [r.returncode == 0 for r in judged] == [passes] * len(judged), [
        r.stdout for r in results
    ]
    # ORACLE_GUARD_RUN_SCORE is "false" in the recipe: no score runs
    assert (results[score].returncode, results[score].stdout) == (0, "")
    if not passes:
        assert "seeds/header_name.json:2: seed-reordered:" in results[1].stdout


def plain(clone: Path, env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["sh", str(CI / "plain.sh"), *args],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_plain_script_passes_an_honest_branch_though_main_gained_a_seed(tmp_path, origin):
    clone = full_clone(origin, tmp_path / "ci", "honest")
    done = plain(clone, tool_env(tmp_path))
    assert done.returncode == 0, done.stdout
    assert "plain.sh: judging" in done.stdout and "Passed" in done.stdout
    # comparing with main itself would call the seed main gained a removal
    direct = subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "run",
            "--from-ref",
            "origin/main",
            "--to-ref",
            "HEAD",
        ],
        cwd=clone,
        env=tool_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert direct.returncode == 1 and "seed-removed" in direct.stdout


def test_plain_script_fails_a_branch_that_reorders_seeds(tmp_path, origin):
    clone = full_clone(origin, tmp_path / "ci", "reorders-seeds")
    done = plain(clone, tool_env(tmp_path), "origin/main", "HEAD")
    assert done.returncode == 1, done.stdout
    assert "seeds/header_name.json:2: seed-reordered:" in done.stdout


def test_the_github_steps_fail_a_branch_whose_merge_conflicts_in_the_oracle(tmp_path, origin):
    """The merge the platform would record cannot be made: a conflicted seed file is
    never judged as one side, and the gate fails naming the path."""
    work = tmp_path / "conflict"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "conflicts", "origin/reorders-seeds")
    retry = json.loads((work / RETRY_SEEDS).read_text())
    commit(work, {RETRY_SEEDS: retry[::-1]}, "reorder the other seeds too")
    git(work, "push", "-q", "origin", "conflicts")
    clone = full_clone(origin, tmp_path / "ci", "conflicts")
    env = tool_env(tmp_path, CI="true", GITHUB_BASE_REF="main")
    done = run(github_steps()[0], clone, env)
    assert done.returncode == 1, done.stdout
    assert f"::error file={RETRY_SEEDS},title=oracle-guard merge-conflict::" in done.stdout


def test_a_push_build_stays_red_until_the_oracle_is_restored(tmp_path, origin):
    """Each push of a branch is judged as its merge into the target, never against
    the previous push: a later honest push does not turn a red branch green, and
    restoring the seed does."""
    work = tmp_path / "dev"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "agent", "origin/honest")
    seeds = (work / "seeds/header_name.json").read_text()
    pushes = [
        (
            {
                "seeds/header_name.json": seeds.replace(
                    "[", '[\n  {"raw": "X: y", "expect_name": "X"},', 1
                )
            },
            1,
            "first push: prepends a seed",
        ),
        ({"src/more.py": "Y = 2\n"}, 1, "second push: honest, on top of the first"),
        ({"seeds/header_name.json": seeds}, 0, "third push: restores the seed file"),
    ]
    for files, want, what in pushes:
        commit(work, files, what)
        git(work, "push", "-q", "origin", "agent")
        clone = full_clone(origin, tmp_path / f"ci-{want}-{len(what)}", "agent")
        done = plain(clone, tool_env(tmp_path, CI="true"))
        assert done.returncode == want, (what, done.stdout)
        if want:
            assert "seeds/header_name.json" in done.stdout, (what, done.stdout)


def test_plain_script_judges_a_branch_cut_before_the_contract_by_the_targets_rules(tmp_path):
    """An existing repository adopts oracle-guard; an agent's branch starts from a
    commit before that and rewrites a fixture. From the merge-base the range has
    no rules of its own: the target's tip must supply them."""
    work = init_repo(tmp_path / "work")
    shutil.copytree(
        ROOT / "examples" / "harness",
        work,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(".oracle-guard.yaml"),
    )
    commit(work, {}, "before oracle-guard")
    git(work, "branch", "old-agent")
    contract = (ROOT / "examples" / "harness" / ".oracle-guard.yaml").read_text()
    commit(
        work,
        {".oracle-guard.yaml": contract, ".pre-commit-config.yaml": LOCAL_HOOKS},
        "guard the oracle",
    )
    git(work, "checkout", "-q", "old-agent")
    commit(
        work,
        {
            "fixtures/exchange_example.json": '{"rewritten": true}\n',
            ".pre-commit-config.yaml": LOCAL_HOOKS,
        },
        "agent rewrites a fixture",
    )
    git(work, "checkout", "-q", "main")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    clone = full_clone(bare, tmp_path / "ci", "old-agent")
    done = plain(clone, tool_env(tmp_path))
    assert done.returncode == 1, done.stdout
    assert "fixtures/exchange_example.json: write-denied:" in done.stdout
    # the near-miss: the same range with the merge-base's own rules has none to apply
    unnamed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "run",
            "--from-ref",
            git(clone, "merge-base", "origin/main", "HEAD").strip(),
            "--to-ref",
            "HEAD",
        ],
        cwd=clone,
        env=tool_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert unnamed.returncode == 0, unnamed.stdout


def test_plain_script_gates_a_branch_that_empties_its_pre_commit_config(tmp_path, origin):
    """pre-commit takes its hooks from the candidate's own config: the script runs
    oracle-guard itself, so dropping the hooks from that file drops nothing."""
    work = tmp_path / "agent"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "no-hooks", "origin/honest")
    commit(
        work,
        {
            ".pre-commit-config.yaml": "repos: []\n",
            "fixtures/exchange_example.json": '{"rewritten": true}\n',
        },
        "no hooks",
    )
    git(work, "push", "-q", "origin", "no-hooks")
    clone = full_clone(origin, tmp_path / "ci", "no-hooks")
    done = plain(clone, tool_env(tmp_path))
    assert done.returncode == 1, done.stdout
    assert "fixtures/exchange_example.json: fixture-mismatch:" in done.stdout


def test_plain_script_exits_2_when_it_cannot_judge(tmp_path, origin):
    clone = full_clone(origin, tmp_path / "ci", "honest")
    env = tool_env(tmp_path)
    missing = plain(clone, env, "origin/nope")
    assert missing.returncode == 2 and "origin/nope is not in this clone" in missing.stdout
    git(clone, "checkout", "-q", "--detach", "origin/main")
    same = plain(clone, env)
    assert same.returncode == 2 and "nothing to judge" in same.stdout
    unrelated = init_repo(tmp_path / "other")
    commit(unrelated, {"a": "1\n"})
    git(clone, "fetch", "-q", str(unrelated), "main:refs/remotes/other/main")
    disjoint = plain(clone, env, "other/main")
    assert disjoint.returncode == 2 and "share no history" in disjoint.stdout


def test_plain_script_is_executable_posix_sh():
    assert os.access(CI / "plain.sh", os.X_OK)
    assert (CI / "plain.sh").read_text().startswith("#!/bin/sh\n")
    assert subprocess.run(["sh", "-n", str(CI / "plain.sh")]).returncode == 0


# -- zizmor and the workflow schemas on everything GitHub runs that this repository
# ships or init writes: any finding fails ---------------------------------------------
PACKAGED = ROOT / "hooks" / "recipes"
SHIPPED = (
    [ROOT / "action.yml"]
    + [CI / name for name in GITHUB_WORKFLOWS]
    + sorted(p for p in PACKAGED.glob("github-*.yml"))
)
CHECKOUT = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1"
SETUP_PYTHON = "actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97 # v7.0.0"
UPLOAD_SARIF = (
    "github/codeql-action/upload-sarif@8aad20d150bbac5944a9f9d289da16a4b0d87c1e # v4.36.2"
)


def zizmor(*paths: Path, ignores: bool = True) -> subprocess.CompletedProcess:
    """zizmor offline, with no configuration file a user may have and the strictest
    persona, as JSON."""
    args = ["--offline", "--no-config", "--persona", "auditor", "--format", "json"]
    return subprocess.run(
        [str(Path(sys.executable).with_name("zizmor")), *args]
        + ([] if ignores else ["--no-ignores"])
        + [str(p) for p in paths],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))},
    )


def findings(done: subprocess.CompletedProcess) -> list:
    return [f["ident"] for f in json.loads(done.stdout or "[]")]


@pytest.fixture(scope="module")
def init_workflow(tmp_path_factory):
    """The workflow `oracle-guard init --ci github` writes, with a real install source."""
    tmp = tmp_path_factory.mktemp("init")
    repo = init_repo(tmp / "repo")
    shutil.copytree(ROOT / "examples" / "harness", repo, dirs_exist_ok=True)
    for path in (".oracle-guard.yaml", "fixtures/SHA256SUMS"):
        (repo / path).unlink()
    git(repo, "add", "-A")
    source = ["--repo", "https://git.example.org/mirrors/oracle-guard", "--rev", "v0.2.0"]
    done = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "init", "-C", str(repo), "--now", NOW]
        + ["--ci", "github", *source],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert done.returncode == 0, done.stdout
    written = repo / ".github/workflows/oracle-guard-gate.yml"
    assert "git+https://git.example.org/mirrors/oracle-guard@v0.2.0" in written.read_text()
    return written


def test_zizmor_finds_nothing_in_what_is_shipped_or_written(init_workflow):
    done = zizmor(*SHIPPED, init_workflow)
    assert done.returncode == 0 and findings(done) == [], done.stdout + done.stderr
    for path in (*SHIPPED, init_workflow):
        # audited, not skipped as a file zizmor could not read
        assert re.search(rf"completed \S*{re.escape(path.name)}$", done.stderr, re.M), done.stderr


@pytest.mark.parametrize("path", [p.name for p in SHIPPED[1:]] + ["init"])
def test_every_github_workflow_passes_the_vendored_and_the_timeout_schema(path, init_workflow):
    target = init_workflow if path == "init" else CI / path
    for schema in ("vendor.github-workflows", "custom.github-workflows-require-timeout"):
        checked = check_jsonschema(schema, target)
        assert checked.returncode == 0, (schema, checked.stdout)


def test_the_action_passes_the_published_action_schema():
    checked = check_jsonschema("vendor.github-actions", ROOT / "action.yml")
    assert checked.returncode == 0, checked.stdout


def test_every_action_is_pinned_by_commit_with_its_tag(init_workflow):
    pins = {"actions/checkout": CHECKOUT, "actions/setup-python": SETUP_PYTHON}
    pins["github/codeql-action/upload-sarif"] = UPLOAD_SARIF
    for path in (*SHIPPED, init_workflow):
        for line in path.read_text().splitlines():
            if "uses:" not in line or line.lstrip().startswith("#"):
                continue
            uses = line.split("uses:", 1)[1].strip()
            name = uses.split("@", 1)[0]
            if name == "your-org/oracle-guard":  # the placeholder a user sets
                assert re.fullmatch(r"your-org/oracle-guard@[0-9a-f]{40} # v\d+\.\d+\.\d+", uses)
            else:
                assert uses == pins[name], (path.name, uses)


def test_the_workflows_follow_the_hardening_rules(init_workflow):
    for path in [CI / name for name in GITHUB_WORKFLOWS] + [init_workflow]:
        doc = yaml.safe_load(path.read_text())
        (job,) = doc["jobs"].values()
        assert job["timeout-minutes"] <= 15, path.name
        assert doc["concurrency"]["cancel-in-progress"] is True, path.name
        granted = dict(doc["permissions"], **job.get("permissions", {}))
        sarif = any("upload-sarif" in s.get("uses", "") for s in job["steps"])
        expected = {"contents": "read", **({"security-events": "write"} if sarif else {})}
        assert granted == expected, path.name
        trigger = list(doc[True])
        cached = any(s.get("with", {}).get("cache") for s in job["steps"])
        # a cache is written by one run and trusted by the next: never in the gate
        assert not (cached and trigger == ["pull_request_target"]), path.name
        if trigger == ["pull_request_target"]:
            assert "# zizmor: ignore[dangerous-triggers] the gate must run as the base" in (
                path.read_text()
            )
    pr = yaml.safe_load((CI / "github-actions.yml").read_text())
    setup = next(
        s for s in pr["jobs"]["oracle-guard"]["steps"] if "setup-python" in s.get("uses", "")
    )
    assert setup["with"]["cache"] == "pip" and setup["with"]["cache-dependency-path"]


# near-misses: the same files, each with one thing wrong, and the checks say so
def test_zizmor_fails_an_unpinned_copy(tmp_path):
    broken = tmp_path / "github-actions.yml"
    text = (CI / "github-actions.yml").read_text()
    broken.write_text(text.replace(CHECKOUT, "actions/checkout@v7"))
    done = zizmor(broken)
    assert done.returncode != 0 and "unpinned-uses" in findings(done), done.stdout


def test_zizmor_fails_the_gate_without_its_ignore_comment():
    done = zizmor(
        CI / "github-actions-base-branch.yml", CI / "github-action-gate.yml", ignores=False
    )
    assert findings(done).count("dangerous-triggers") == 2, done.stdout


def test_zizmor_fails_an_action_that_expands_an_input_in_its_script(tmp_path):
    text = (ROOT / "action.yml").read_text()
    assert 'args+=(--target "refs/remotes/origin/$TARGET")' in text
    broken = tmp_path / "action.yml"
    broken.write_text(
        text.replace('"refs/remotes/origin/$TARGET"', '"refs/remotes/origin/${{ inputs.target }}"')
    )
    done = zizmor(broken)
    assert done.returncode != 0 and "template-injection" in findings(done), done.stdout


def test_the_timeout_schema_fails_a_copy_without_timeout_minutes(tmp_path):
    doc = yaml.safe_load((CI / "github-action-gate.yml").read_text())
    del doc["jobs"]["oracle-guard-gate"]["timeout-minutes"]
    doc["on"] = doc.pop(True)
    broken = tmp_path / "gate.yml"
    broken.write_text(json.dumps(doc))
    assert check_jsonschema("vendor.github-workflows", broken).returncode == 0
    failed = check_jsonschema("custom.github-workflows-require-timeout", broken)
    assert failed.returncode == 1, failed.stdout


def test_the_action_schema_fails_a_broken_action(tmp_path):
    doc = yaml.safe_load((ROOT / "action.yml").read_text())
    doc["runs"]["using"] = "docker-compose"
    broken = tmp_path / "action.yml"
    broken.write_text(json.dumps(doc))
    assert check_jsonschema("vendor.github-actions", broken).returncode == 1
