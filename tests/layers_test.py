"""The package's shape (CONTRIBUTING.md): no import cycles between modules, imports
inside functions counted, and no module but cli and the commands imports a command."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

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
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            skipped.update(id(child) for child in node.body for child in ast.walk(child))
    return [node for node in ast.walk(tree) if id(node) not in skipped]


def import_graph(root: Path) -> Dict[str, Set[str]]:
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: Dict[str, Set[str]] = {name: set() for name in files}
    for name, path in files.items():
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("oracle_guard"):
                # "from package import a, b" imports the modules a and b; a name that
                # is no module (a function, a class) imports the module it is in
                modules = [f"{node.module}.{a.name}" for a in node.names]
                targets = [m for m in modules if m in files] or [node.module or ""]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t in files and t != name)
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


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph(HOOKS)) == []


def test_no_module_but_cli_and_the_commands_imports_a_command():
    assert command_importers(import_graph(HOOKS)) == []


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
    ],
    ids=["function-level-cycle", "type-checking-only"],
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


def test_no_module_of_test_tamper_is_over_600_lines():
    """Issue 31: the check is split by concern, each module short enough to read."""
    folder = HOOKS / "checks" / "test_tamper"
    long = {
        path.name: count
        for path in sorted(folder.glob("*.py"))
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert long == {}
