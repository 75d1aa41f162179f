"""init on ordinary pytest projects, built as real repositories shaped like well-known
ones (minimal look-alikes named after them, never the projects themselves): the
pytest layout guards tests/fixtures/, tests/data/ and tests/seeds/, the write set
covers src/ and root packages, testing/ is a test tree, and --layout warns about
every data folder it leaves writable."""

import os

import pytest
import yaml

from testing.git import commit, git, init_repo, run_guard
from testing.oracle import NOW

PYPROJECT = '[project]\nname = "shop"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'


@pytest.fixture(autouse=True)
def _no_global_git_config(monkeypatch):
    """init reads git's signing configuration: the machine's own is never read."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)


def project(tmp_path, name, files):
    repo = init_repo(tmp_path / name)
    commit(repo, files, message="the project, before oracle-guard")
    return repo


def init(capsys, repo, *args):
    return run_guard(capsys, repo, "init", "--now", NOW, *args)


def contract(repo):
    return yaml.safe_load((repo / ".oracle-guard.yaml").read_text())


def src_project(tmp_path):
    return project(
        tmp_path,
        "shop",
        {
            "pyproject.toml": PYPROJECT,
            "src/shop/__init__.py": "",
            "src/shop/cart.py": "def total(items):\n    return sum(items)\n",
            "tests/conftest.py": "import pytest\n",
            "tests/test_cart.py": "def test_total():\n    assert True\n",
            "tests/fixtures/cart.json": '{"items": [1, 2]}\n',
            "tests/fixtures/big/order.csv": "id,total\n1,3\n",
            "tests/seeds/carts.jsonl": '{"items": [1]}\n',
            "tests/seeds/names.txt": "alice\n",
        },
    )


def test_a_src_project_with_fixtures_and_seeds_is_recognised_and_guarded(tmp_path, capsys):
    repo = src_project(tmp_path)
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert (
        "layout 'pytest', recognised from: tests/fixtures/ (2 files), tests/seeds/ (2 files)" in out
    )
    data = contract(repo)
    assert data["fixtures"] == [
        {
            "lock": "tests/fixtures/SHA256SUMS",
            "root": "tests/fixtures",
            "paths": ["tests/fixtures/**"],
        }
    ]
    assert data["seeds"] == [
        {"paths": ["tests/seeds/**/*.jsonl"], "format": "jsonl"},
        {"paths": ["tests/seeds/**/*.txt"], "format": "immutable"},
    ]
    assert data["write_set"]["allow"] == ["src/**", "tests/**"]
    assert "warning:" not in out
    # what init printed, staged and checked, passes; the lock holds both fixtures
    assert "  big/order.csv\n" in (repo / "tests/fixtures/SHA256SUMS").read_text()
    git(repo, "add", "-A")
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out + err


def test_an_agent_edit_of_a_guarded_fixture_or_seed_is_stopped(tmp_path, capsys):
    repo = src_project(tmp_path)
    assert init(capsys, repo)[0] == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "guard")
    (repo / "src/shop/cart.py").write_text("def total(items):\n    return 0\n")
    git(repo, "add", "-A")
    assert run_guard(capsys, repo, "check", "--now", NOW)[0] == 0  # near miss: source only
    (repo / "tests/fixtures/cart.json").write_text('{"items": []}\n')
    (repo / "tests/seeds/names.txt").write_text("mallory\n")
    git(repo, "add", "-A")
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 1
    assert "tests/fixtures/cart.json" in out and "tests/seeds/names.txt" in out


def test_layout_harness_warns_about_each_data_folder_it_leaves_writable(tmp_path, capsys):
    repo = src_project(tmp_path)
    (repo / "tests/data").mkdir()
    (repo / "tests/data/a.bin").write_bytes(b"\x00")
    git(repo, "add", "-A")
    rc, out, err = init(capsys, repo, "--layout", "harness")
    assert rc == 0, err
    warnings = [ln for ln in out.splitlines() if ln.startswith("  warning:")]
    assert warnings == [
        f"  warning: tests/{name}/ holds {n} file{'s' if n > 1 else ''} the contract leaves "
        f"writable (no fixtures or seeds section names {'them' if n > 1 else 'it'}): add a "
        f"section for tests/{name}/, or rerun init with --layout pytest"
        for name, n in (("fixtures", 2), ("data", 1), ("seeds", 2))
    ]


def test_a_root_data_folder_the_pytest_layout_leaves_open_is_warned_about(tmp_path, capsys):
    repo = src_project(tmp_path)
    (repo / "data").mkdir()
    (repo / "data/prices.csv").write_text("a,1\n")
    git(repo, "add", "-A")
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert [ln for ln in out.splitlines() if ln.startswith("  warning:")] == [
        "  warning: data/ holds 1 file the contract leaves writable (no fixtures or seeds "
        "section names it): add a section for data/"
    ]


def test_the_pytest_layout_leaves_no_data_folder_writable(tmp_path, capsys):
    # near miss of the warning: the same project, with the layout that guards them
    repo = src_project(tmp_path)
    rc, out, err = init(capsys, repo, "--layout", "pytest")
    assert rc == 0, err
    assert "warning:" not in out


# The look-alikes: a root package (with a subpackage), tests/, pytest configuration.
ROOT_PACKAGES = {
    "httpx": {"httpx/__init__.py": "", "httpx/_client.py": "", "httpx/_transports/__init__.py": ""},
    "tenacity": {"tenacity/__init__.py": "", "tenacity/retry.py": ""},
    "rich": {"rich/__init__.py": "", "rich/console.py": "", "rich/py.typed": ""},
}


@pytest.mark.parametrize("name", sorted(ROOT_PACKAGES))
def test_a_root_package_is_in_the_write_set(tmp_path, capsys, name):
    files = dict(ROOT_PACKAGES[name])
    files.update(
        {
            "pyproject.toml": PYPROJECT,
            "tests/__init__.py": "",
            "tests/test_core.py": "def test_core():\n    assert True\n",
            "docs/conf.py": "",
            "docs/__init__.py": "",  # near miss: docs/ is never the source
            "README.md": "# x\n",
        }
    )
    repo = project(tmp_path, name, files)
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "layout 'pytest', recognised from: tests/**/test_*.py (1 file)" in out
    assert contract(repo)["write_set"]["allow"] == ["tests/**", f"{name}/**"]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "guard")
    (repo / name / "__init__.py").write_text("VERSION = 2\n")
    git(repo, "add", "-A")
    assert run_guard(capsys, repo, "check", "--now", NOW)[0] == 0  # a source change passes
    (repo / "docs/conf.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    assert run_guard(capsys, repo, "check", "--now", NOW)[0] == 1  # outside the write set


def test_a_testing_folder_is_a_test_tree(tmp_path, capsys):
    repo = project(
        tmp_path,
        "pytest-like",
        {
            "src/_pytest/__init__.py": "",
            "testing/conftest.py": "",
            "testing/test_main.py": "def test_main():\n    assert True\n",
            "tox.ini": "[pytest]\ntestpaths = testing\n",
        },
    )
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    data = contract(repo)
    assert data["tamper"]["paths"] == ["testing/**"]
    assert data["tamper"]["frozen_tests"] == ["testing/**"]
    assert data["write_set"]["allow"] == ["src/**", "testing/**"]


def test_a_project_without_tests_or_data_is_still_refused(tmp_path, capsys):
    repo = project(tmp_path, "plain", {"main.py": "print(1)\n", "README.md": "x\n"})
    rc, _, err = init(capsys, repo)
    assert rc == 2 and "no known layout recognised" in err
