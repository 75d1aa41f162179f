"""The package's shape (CONTRIBUTING.md): no import cycles between modules, imports
inside functions counted, and no module but cli and the commands imports a command."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest

HOOKS = Path(__file__).resolve().parents[1] / "hooks"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["oracle_guard", *parts])


def _runtime_nodes(tree: ast.AST) -> List[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:``, which never run."""
    skipped: Set[int] = set()
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        named = getattr(test, "id", None) or getattr(test, "attr", None)  # or typing.TYPE_CHECKING
        if isinstance(node, ast.If) and named == "TYPE_CHECKING":
            skipped.update(id(child) for child in node.body for child in ast.walk(child))
    return [node for node in ast.walk(tree) if id(node) not in skipped]


def _packages_above(name: str) -> List[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _imported(node: ast.AST, name: str, package: str, files: Dict[str, Path]) -> Set[str]:
    """The modules an import statement in module ``name`` runs or reads.

    ``from P import a`` reads the package P (its ``__init__``), and the module
    P.a when there is one. Importing P.a runs each package above it, but not
    the packages ``name`` is in itself: those have started before it."""
    if isinstance(node, ast.ImportFrom):
        if node.level:  # relative: from the package ``name`` is in, or above it
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        read = {module} | {f"{module}.{a.name}" for a in node.names}
        run = _packages_above(module)
    elif isinstance(node, ast.Import):
        read = {a.name for a in node.names}
        run = [p for a in node.names for p in _packages_above(a.name)]
    else:
        return set()
    own = set(_packages_above(name))
    targets = read | {p for p in run if p not in own}
    return {t for t in targets if t in files and t != name}


def import_graph(root: Path) -> Dict[str, Set[str]]:
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: Dict[str, Set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            graph[name] |= _imported(node, name, package, files)
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    found: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def command_importers(graph: Dict[str, Set[str]]) -> List[str]:
    def is_command(name: str) -> bool:
        return name.startswith("oracle_guard.commands.") and name != "oracle_guard.commands.options"

    allowed = ("oracle_guard.cli", "oracle_guard.commands")
    return sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        for target in targets
        if is_command(target) and not name.startswith(allowed)
    )


# what the checks read: none of it reads a check, or the registry of them
BELOW_THE_CHECKS = (
    "oracle_guard.contract",
    "oracle_guard.session",
    "oracle_guard.sections",
    "oracle_guard.findings",
    "oracle_guard.snapshot",
    "oracle_guard.errors",
    "oracle_guard.cache",
    "oracle_guard.clock",
    "oracle_guard.parsing",
    "oracle_guard.git",
)


def _within(name: str, folders: Tuple[str, ...]) -> bool:
    return any(name == f or name.startswith(f + ".") for f in folders)


def upward_imports(
    graph: Dict[str, Set[str]], lower: Tuple[str, ...], upper: Tuple[str, ...]
) -> List[str]:
    return sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        if _within(name, lower)
        for target in targets
        if _within(target, upper)
    )


# what the commands share, which any of them may import
SHARED_BY_COMMANDS = ("oracle_guard.commands.options", "oracle_guard.commands.workspace")
# commands that still import another (issue #35 moved pre-receive's and
# install-pre-receive's): each leaves this list when it is moved below commands/
NOT_YET_MOVED = [
    "oracle_guard.commands.demo imports oracle_guard.commands.lock",
    "oracle_guard.commands.demo imports oracle_guard.commands.score",
]


def _command(name: str) -> Optional[str]:
    """The command a module of commands/ is part of (init's modules are init's)."""
    parts = name.split(".")
    command = ".".join(parts[:3])
    if len(parts) < 3 or parts[1] != "commands" or command in SHARED_BY_COMMANDS:
        return None
    return command


def commands_importing_commands(graph: Dict[str, Set[str]]) -> List[str]:
    return sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        for target in targets
        if _command(name) and _command(target) and _command(name) != _command(target)
    )


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph(HOOKS)) == []


def test_no_module_but_cli_and_the_commands_imports_a_command():
    assert command_importers(import_graph(HOOKS)) == []


def test_the_contract_and_what_it_reads_import_no_check():
    """The hook ids and what each section makes oracle live in sections.py, below both."""
    assert upward_imports(import_graph(HOOKS), BELOW_THE_CHECKS, ("oracle_guard.checks",)) == []


# what a run's session holds: it sits below the contract, judge and authority that receive it
BELOW_THE_SESSION = ("oracle_guard.errors", "oracle_guard.cache", "oracle_guard.git")


def test_the_session_imports_only_what_it_holds():
    graph = import_graph(HOOKS)
    assert graph["oracle_guard.session"]
    assert [
        t for t in sorted(graph["oracle_guard.session"]) if not _within(t, BELOW_THE_SESSION)
    ] == []


def test_no_command_imports_another_command():
    assert commands_importing_commands(import_graph(HOOKS)) == NOT_YET_MOVED


def test_generated_code_imports_nothing_of_the_package():
    """parsing/, the lowest layer, imports _generated/: it stands on nothing."""
    graph = import_graph(HOOKS)
    generated = sorted(name for name in graph if _within(name, ("oracle_guard._generated",)))
    assert "oracle_guard._generated.validators" in generated
    assert {name: graph[name] for name in generated} == {name: set() for name in generated}


def write(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # an import inside a function closes a cycle too
        (
            {
                "a.py": "from oracle_guard import b\n",
                "b.py": "def f():\n    import oracle_guard.a\n",
            },
            [["oracle_guard.a", "oracle_guard.b"]],
        ),
        # near-miss: one way only, and the way back only for the type checker
        (
            {
                "a.py": "from oracle_guard import b\n",
                "b.py": "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from oracle_guard import a\n",
            },
            [],
        ),
        # the package's __init__ imports a part, which reads the package for a sibling
        (
            {
                "p/__init__.py": "from oracle_guard.p import part\n",
                "p/part.py": "from oracle_guard.p import sibling\n",
                "p/sibling.py": "",
            },
            [["oracle_guard.p", "oracle_guard.p.part"]],
        ),
        # the same, written relative
        (
            {
                "p/__init__.py": "def f():\n    from . import part\n",
                "p/part.py": "from . import sibling\n",
                "p/sibling.py": "",
            },
            [["oracle_guard.p", "oracle_guard.p.part"]],
        ),
        # importing q.x runs q's __init__, which imports a.py back
        (
            {
                "a.py": "import oracle_guard.q.x\n",
                "q/__init__.py": "from oracle_guard import a\n",
                "q/x.py": "",
            },
            [["oracle_guard.a", "oracle_guard.q"]],
        ),
        # near-miss: a part names its sibling by its own path, not through the package
        (
            {
                "p/__init__.py": "from oracle_guard.p import part\n",
                "p/part.py": "from oracle_guard.p.sibling import VALUE\nimport typing\n"
                "if typing.TYPE_CHECKING:\n    from oracle_guard.p import other\n",
                "p/sibling.py": "VALUE = 1\n",
                "p/other.py": "",
            },
            [],
        ),
    ],
    ids=[
        "function-level-cycle",
        "type-checking-only",
        "through-a-package-init",
        "relative",
        "running-a-package-init",
        "parts-by-their-own-path",
    ],
)
def test_cycles_are_found_where_they_run(tmp_path, files, expected):
    assert cycles(import_graph(write(tmp_path, files))) == expected


def test_a_core_module_importing_a_command_is_named(tmp_path):
    root = write(
        tmp_path,
        {
            "commands/__init__.py": "",
            "commands/lock.py": "",
            "commands/options.py": "",
            "judge.py": "from oracle_guard.commands import lock\n",
            "cli.py": "from oracle_guard.commands import lock, options\n",
            "hosts.py": "from oracle_guard.commands import options, lock\n",  # the second name
            "revisions.py": "from oracle_guard.commands import options\n",  # near-miss
        },
    )
    assert command_importers(import_graph(root)) == [
        "oracle_guard.hosts imports oracle_guard.commands.lock",
        "oracle_guard.judge imports oracle_guard.commands.lock",
    ]


def test_a_data_module_reading_the_registry_is_named(tmp_path):
    root = write(
        tmp_path,
        {
            "checks/__init__.py": "",
            "checks/registry.py": "from oracle_guard.sections import HOOKS\n",
            "checks/write_set.py": "from oracle_guard.contract import Contract\n",  # near-miss
            "sections.py": "HOOKS = ()\n",
            "findings.py": "def order():\n    from oracle_guard.checks.registry import HOOKS\n",
            "contract.py": "from oracle_guard.sections import HOOKS\n",  # near-miss
        },
    )
    assert upward_imports(import_graph(root), BELOW_THE_CHECKS, ("oracle_guard.checks",)) == [
        "oracle_guard.findings imports oracle_guard.checks",
        "oracle_guard.findings imports oracle_guard.checks.registry",
    ]


def test_a_command_importing_another_command_is_named(tmp_path):
    root = write(
        tmp_path,
        {
            "commands/__init__.py": "",
            "commands/check.py": "",
            "commands/options.py": "",
            "commands/workspace.py": "",
            "commands/pre_receive.py": "def f():\n    from oracle_guard.commands.check import run\n",
            "commands/init/__init__.py": "from oracle_guard.commands.init import plan\n",
            "commands/init/plan.py": "from oracle_guard.commands import check\n",
            # near-misses: what the commands share, and a command's own parts
            "commands/lock.py": "from oracle_guard.commands import options, workspace\n",
            "commands/init/report.py": "from oracle_guard.commands.init.plan import x\n",
        },
    )
    assert commands_importing_commands(import_graph(root)) == [
        "oracle_guard.commands.init.plan imports oracle_guard.commands.check",
        "oracle_guard.commands.pre_receive imports oracle_guard.commands.check",
    ]


def test_no_module_of_test_tamper_is_over_600_lines():
    """Issue 31: the check is split by concern, each module short enough to read."""
    folder = HOOKS / "checks" / "test_tamper"
    long = {
        path.name: count
        for path in sorted(folder.glob("*.py"))
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert long == {}
