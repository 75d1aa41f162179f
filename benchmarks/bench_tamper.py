"""Wall time of test-tamper on a change of 200 honest test files (about 200 lines
each, 40,000 lines), side by side with `python -m py_compile` over the same files
in one process, in one run (medians, with the spread), in wall time and in CPU
time (user + system, the command's and its children's: it holds under load).

    python benchmarks/bench_tamper.py [--runs N] [--files N] [--profile]

Four repositories, each with its change staged: the change adds the test files,
or modifies every one of them (the base's file is read too), each once with
`tamper: {paths: ["tests/**"]}` and once with `hermetic: ["tests/**"]` as well
(every file then gets the full ast walk, whatever the regex prefilter says). In
each, `oracle-guard check --only test-tamper` runs with --no-cache, with its cache
emptied before every run (a cold run that fills it), and warm (the cache filled
by the warm-up); `python -m py_compile` compiles the candidate's files from the
work tree. Goal: --no-cache at most 1.5x py_compile.

--profile also runs the --no-cache check of each repository in a fresh process
twice: once with wall-clock timers on its parts (git reads, the regex prefilter,
ast.parse, the walk in test_tamper's ast reader and its import scan), once under
cProfile (own time summed by what it is spent on); and times Python's start-up
and the imports the check needs.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Sequence, Tuple

GOAL = 1.5
BINDIR = os.path.dirname(sys.executable)
GUARD = os.path.join(BINDIR, "oracle-guard")
ENV = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith(("CI", "GITHUB_", "GITLAB_", "PRE_COMMIT", "GIT_", "ORACLE_GUARD_"))
}
ENV.update(
    GIT_AUTHOR_NAME="bench",
    GIT_AUTHOR_EMAIL="bench@example.invalid",
    GIT_COMMITTER_NAME="bench",
    GIT_COMMITTER_EMAIL="bench@example.invalid",
    GIT_CONFIG_NOSYSTEM="1",
    GIT_CONFIG_GLOBAL=os.devnull,
)
CONTRACT = """\
version: 1
write_set:
  allow: ["src/**", "tests/**"]
  deny: ["oracle/**"]
tamper:
  paths: ["tests/**"]
"""
HERMETIC = '  hermetic: ["tests/**"]\n'


# -- honest pytest code ----------------------------------------------------------------
def honest_test_file(i: int, rng: random.Random, revision: int = 0) -> str:
    """About 200 lines of the pytest code a project has: imports, a dataclass of
    cases, helpers, fixtures, parametrized tests, a test class; some files patch
    the code under test with monkeypatch or compile a regex (words the prefilter
    looks for), none tampers. ``revision`` 1 is the same file after an honest
    edit: a case changed, a test added."""
    module = f"pricing_{i % 17}"
    rows = [
        (f"case_{n}", [rng.randrange(1, 500) for _ in range(rng.randrange(1, 6))])
        for n in range(12)
    ]
    if revision:
        rows[3] = (rows[3][0], rows[3][1] + [7])
    out: List[str] = [
        f'"""Tests for shop.{module}: carts, discounts and totals (suite {i})."""',
        "",
        "from __future__ import annotations",
        "",
        "import dataclasses",
        "import json",
        "import math",
        "import re" if i % 4 == 0 else "import itertools",
        "from decimal import Decimal",
        "from typing import Dict, List, Optional",
        "",
        "import pytest",
        "",
        f"from shop import {module}",
        f"from shop.{module} import Cart, Item, discounted, total",
        "",
        "",
        "@dataclasses.dataclass(frozen=True)",
        "class Case:",
        "    name: str",
        "    prices: List[int]",
        "    expected: int",
        '    currency: str = "EUR"',
        "",
        "",
        "CASES = [",
    ]
    out += [f"    Case({name!r}, {prices!r}, {sum(prices)})," for name, prices in rows]
    out += [
        "]",
        "",
        "",
        'def make_cart(prices: List[int], *, currency: str = "EUR") -> Cart:',
        '    """A cart holding one item per price."""',
        "    cart = Cart(currency=currency)",
        "    for n, price in enumerate(prices):",
        '        cart.add(Item(f"item-{n}", Decimal(price)))',
        "    return cart",
        "",
        "",
        "def assert_close(a: float, b: float, tol: float = 1e-9) -> None:",
        '    assert math.isclose(a, b, rel_tol=tol), f"{a} != {b}"',
        "",
        "",
        "def as_table(cart: Cart) -> Dict[str, Decimal]:",
        "    return {item.name: item.price for item in cart}",
        "",
        "",
        "@pytest.fixture",
        "def cart() -> Cart:",
        f"    return make_cart({rows[0][1]!r})",
        "",
        "",
        '@pytest.fixture(params=["EUR", "USD", "GBP"])',
        "def currency(request) -> str:",
        "    return request.param",
        "",
        "",
        "@pytest.fixture",
        "def saved(tmp_path, cart):",
        '    path = tmp_path / "cart.json"',
        '    path.write_text(json.dumps({"items": [[i.name, str(i.price)] for i in cart]}))',
        "    return path",
        "",
        "",
        '@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)',
        f"def test_total_{i}(case: Case) -> None:",
        "    assert total(make_cart(case.prices, currency=case.currency)) == case.expected",
        "",
        "",
        "@pytest.mark.parametrize(",
        '    ("price", "percent", "expected"),',
        "    [",
    ]
    for _ in range(10):
        price, percent = rng.randrange(10, 1000), rng.choice((0, 5, 10, 20, 25, 50))
        out.append(f"        ({price}, {percent}, {price - price * percent // 100}),")
    out += [
        "    ],",
        ")",
        f"def test_discounted_{i}(price: int, percent: int, expected: int) -> None:",
        f"    assert {module}.discounted(price, percent) == expected",
        "",
        "",
        "def test_discount_never_negative() -> None:",
        "    for price in range(0, 1000, 37):",
        "        for percent in (0, 10, 50, 100):",
        "            assert discounted(price, percent) >= 0",
        "",
        "",
        "def test_empty_cart_totals_zero() -> None:",
        "    assert total(make_cart([])) == 0",
        "",
        "",
    ]
    if i % 3 == 0:
        out += [
            "def test_rate_is_read_at_call_time(monkeypatch) -> None:",
            f'    monkeypatch.setattr({module}, "VAT", Decimal("0.25"))',
            "    assert total(make_cart([100])) == 125",
            "",
            "",
        ]
    if i % 4 == 0:
        out += [
            'SKU = re.compile(r"^[A-Z]{3}-\\d{4}$")',
            "",
            "",
            '@pytest.mark.parametrize("sku", ["ABC-0001", "XYZ-9999", "QQQ-1234"])',
            "def test_sku_format(sku: str) -> None:",
            "    assert SKU.match(sku)",
            "",
            "",
        ]
    out += [
        f"class TestCart{i}:",
        '    """The cart\'s own behaviour."""',
        "",
        "    def test_add(self, cart: Cart) -> None:",
        "        before = len(cart)",
        '        cart.add(Item("extra", Decimal(4)))',
        "        assert len(cart) == before + 1",
        "",
        "    def test_remove(self, cart: Cart) -> None:",
        "        name = next(iter(cart)).name",
        "        cart.remove(name)",
        "        assert name not in as_table(cart)",
        "",
        "    def test_currency(self, currency: str) -> None:",
        "        assert make_cart([1], currency=currency).currency == currency",
        "",
        "    def test_roundtrip(self, saved, cart: Cart) -> None:",
        '        items = json.loads(saved.read_text())["items"]',
        "        assert [name for name, _ in items] == [item.name for item in cart]",
        "",
        "    def test_negative_price_is_refused(self) -> None:",
        '        with pytest.raises(ValueError, match="negative"):',
        '            Item("bad", Decimal(-1))',
        "",
        '    @pytest.mark.parametrize("count", [1, 2, 5, 10])',
        "    def test_many(self, count: int) -> None:",
        "        cart = make_cart([10] * count)",
        "        assert total(cart) == 10 * count",
        "        assert_close(float(total(cart)) / count, 10.0)",
        "",
    ]
    n = 0
    while len(out) < 196:
        a, b = rng.randrange(1, 100), rng.randrange(1, 100)
        out += [
            f"    def test_pair_{n}(self) -> None:",
            f"        cart = make_cart([{a}, {b}])",
            f"        assert total(cart) == {a + b}",
            '        assert sorted(as_table(cart)) == ["item-0", "item-1"]',
            "",
        ]
        n += 1
    if revision:
        out += [
            "",
            "def test_added_in_review() -> None:",
            "    assert total(make_cart([1, 2, 3])) == 6",
        ]
    return "\n".join(out).rstrip("\n") + "\n"


def git(repo: str, *args: str) -> None:
    subprocess.run(["git", "-C", repo, *args], env=ENV, check=True, stdout=subprocess.DEVNULL)


def write(repo: str, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = os.path.join(repo, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def build(repo: str, count: int, *, modified: bool, hermetic: bool) -> List[str]:
    """The repository with its change staged; returns the test files' paths."""
    names = [f"tests/area_{i % 10}/test_suite_{i:03d}.py" for i in range(count)]
    contract = CONTRACT + (HERMETIC if hermetic else "")
    subprocess.run(["git", "init", "-q", "-b", "main", repo], env=ENV, check=True)
    base = {".oracle-guard.yaml": contract, "src/shop/__init__.py": ""}
    if modified:
        base.update({name: honest_test_file(i, random.Random(i)) for i, name in enumerate(names)})
    write(repo, base)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    write(
        repo,
        {
            name: honest_test_file(i, random.Random(i), int(modified))
            for i, name in enumerate(names)
        },
    )
    git(repo, "add", "-A")
    return names


# -- timing ------------------------------------------------------------------------------
# the CPU time (user + system) of each timed command and its children, by command:
# it holds better than wall time when other work shares the cores
CPU: Dict[str, List[float]] = {}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: Sequence[str], cwd: str, before: Callable[[], None] = lambda: None) -> float:
    before()
    cpu = children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    CPU.setdefault(" ".join(cmd), []).append(children_cpu() - cpu)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-600:]}")
    return elapsed


def spread(values: Sequence[float]) -> str:
    return f"{min(values) * 1000:.0f}-{max(values) * 1000:.0f}"


def drop_cache(repo: str) -> Callable[[], None]:
    """Before a run: no cache file (.git/oracle-guard/cache.json)."""
    path = os.path.join(repo, ".git", "oracle-guard", "cache.json")

    def drop() -> None:
        if os.path.exists(path):
            os.remove(path)

    return drop


def bench(repo: str, names: List[str], runs: int) -> Dict[str, List[float]]:
    check = [GUARD, "check", "--only", "test-tamper", "--now", "2026-09-25"]
    jobs: Dict[str, Tuple[Sequence[str], Callable[[], None]]] = {
        "check --no-cache": ([*check, "--no-cache"], lambda: None),
        "check, cache emptied": (check, drop_cache(repo)),
        "check, cache warm": (check, lambda: None),
        "py_compile": ([sys.executable, "-m", "py_compile", *names], lambda: None),
    }
    for cmd, before in jobs.values():  # page cache, .pyc files, the warm cache
        timed(cmd, repo, before)
    samples: Dict[str, List[float]] = {name: [] for name in jobs}
    cpu: Dict[str, List[float]] = {f"{name} (CPU)": [] for name in jobs}
    for _ in range(runs):
        for name, (cmd, before) in jobs.items():  # interleaved, so drift hits all alike
            samples[name].append(timed(cmd, repo, before))  # the emptied one refills it
            cpu[f"{name} (CPU)"].append(CPU[" ".join(cmd)][-1])
    return {**samples, **cpu}


# -- where the time goes -----------------------------------------------------------------
def profile(repo: str) -> List[Tuple[str, float]]:
    """The --no-cache check in this process under cProfile, its own time (tottime)
    summed by what it is spent on, slowest first."""
    from oracle_guard import cli

    profiler = cProfile.Profile()
    out, err = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        profiler.enable()
        code = cli.main(
            ["check", "-C", repo, "--only", "test-tamper", "--no-cache", "--now", "2026-09-25"],
            env={},
        )
        profiler.disable()
    if code != 0:
        raise SystemExit(f"the profiled check exited {code}: {out.getvalue()[-600:]}")
    stats = pstats.Stats(profiler)
    groups: Dict[str, float] = {}
    for (filename, _line, name), row in stats.stats.items():  # type: ignore[attr-defined]
        tottime = row[2]
        groups[_group(filename, name)] = groups.get(_group(filename, name), 0.0) + tottime
    return sorted(groups.items(), key=lambda kv: -kv[1])


def phases(repo: str) -> List[Tuple[str, float, int]]:
    """The --no-cache check in this process with wall-clock timers on its parts
    (no profiler overhead): (part, seconds, calls)."""
    import ast
    import contextlib

    from oracle_guard import cli
    from oracle_guard.checks import test_tamper
    from oracle_guard.checks.test_tamper import python, scan, statements
    from oracle_guard.git import objects, process

    spent: Dict[str, float] = {}
    calls: Dict[str, int] = {}
    depth: Dict[str, int] = {}

    def timer(label: str, fn: Callable) -> Callable:
        def timed_call(*args, **kwargs):
            if depth.get(label):  # recursion: the outer call counts
                return fn(*args, **kwargs)
            depth[label] = 1
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - start
                calls[label] = calls.get(label, 0) + 1
                depth[label] = 0

        return timed_call

    patched = [
        (cli, "main", timer("the whole check (cli.main)", cli.main)),
        (test_tamper, "check", timer("test-tamper's check()", test_tamper.check)),
        (
            objects.ObjectReader,
            "read",
            timer("git: blob reads (cat-file --batch)", objects.ObjectReader.read),
        ),
        (
            objects.ObjectReader,
            "read_ahead",
            timer("git: blobs read ahead (64 a request)", objects.ObjectReader.read_ahead),
        ),
        (
            process.Runner,
            "run",
            timer("git: other commands (diff, ls-files, rev-parse)", process.Runner.run),
        ),
        (ast, "parse", timer("ast.parse (files the prefilter lets through)", ast.parse)),
        (python, "compile", timer("compile() (files it skips)", compile)),
        (python, "triggered", timer("byte prefilter (scan.triggered)", scan.triggered)),
        (
            statements.Reader,
            "read",
            timer("Reader.read (the walk, all of it)", statements.Reader.read),
        ),
        (
            statements.Reader,
            "_body",
            timer("  of which the statement walk (_body)", statements.Reader._body),
        ),
    ]
    saved = [(owner, name, owner.__dict__.get(name)) for owner, name, _ in patched]
    try:
        for owner, name, value in patched:
            setattr(owner, name, value)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(
                ["check", "-C", repo, "--only", "test-tamper", "--no-cache", "--now", "2026-09-25"],
                env={},
            )
    finally:
        for owner, name, value in saved:
            if value is None:
                delattr(owner, name)
            else:
                setattr(owner, name, value)
    if code != 0:
        raise SystemExit(f"the timed check exited {code}: {out.getvalue()[-600:]}")
    walk, body = "Reader.read (the walk, all of it)", "  of which the statement walk (_body)"
    imports = "  of which the import scan (the statements)"
    if walk in spent:
        spent[imports], calls[imports] = spent[walk] - spent[body], calls[walk]
    order = [
        "the whole check (cli.main)",
        "test-tamper's check()",
        "git: other commands (diff, ls-files, rev-parse)",
        "git: blobs read ahead (64 a request)",
        "git: blob reads (cat-file --batch)",
        "byte prefilter (scan.triggered)",
        "compile() (files it skips)",
        "ast.parse (files the prefilter lets through)",
        walk,
        body,
        imports,
    ]
    return [(label, spent[label], calls[label]) for label in order if label in spent]


def startup() -> List[Tuple[str, float]]:
    """Median wall time of starting Python, and of importing what the check needs."""
    jobs = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import oracle_guard.cli' (+ the check's modules)": [
            sys.executable,
            "-c",
            "import oracle_guard.cli, oracle_guard.judge, oracle_guard.checks.test_tamper",
        ],
    }
    return [
        (name, statistics.median(timed(cmd, os.getcwd()) for _ in range(11)))
        for name, cmd in jobs.items()
    ]


# the modules that run git and read what it prints (pack.py reads pack files itself)
GIT_MODULES = ("plumbing.py", "process.py", "objects.py", "trees.py", "history.py")


def _group(filename: str, name: str) -> str:
    base = os.path.basename(filename)
    if name == "<built-in method builtins.compile>":
        return "parsing: builtins.compile (ast.parse, syntax check)"
    if base in ("_parser.py", "_compiler.py", "sre_parse.py", "sre_compile.py", "_casefix.py"):
        return "regex compiling (modules' patterns, at import)"
    if "re.Pattern" in name:
        return "regex matching (prefilter, import scan, others)"
    if os.path.join("test_tamper", "") in filename and base not in ("options.py", "arguments.py"):
        if name in ("_imports_oracle",):
            return "regex matching (prefilter, import scan, others)"
        return "the walk (test_tamper's ast reader)"
    if base == "ast.py":
        return "the walk: ast.walk/iter_child_nodes (ast.py)"
    if "isinstance" in name or "getattr" in name or "hasattr" in name:
        return "the walk: isinstance/getattr builtins"
    if any(filename.endswith(os.path.join("git", module)) for module in GIT_MODULES) or base in (
        "subprocess.py",
        "selectors.py",
    ):
        return "git reads (plumbing, subprocess)"
    if any(
        k in name
        for k in (
            "posix.read",
            "_io.BufferedReader",
            "readline",
            "posix.waitpid",
            "_posixsubprocess",
            "select",
        )
    ):
        return "git reads (plumbing, subprocess)"
    if (
        "importlib" in filename
        or "frozen" in filename
        or name in ("<built-in method marshal.loads>", "<built-in method _imp.create_dynamic>")
    ):
        return "imports"
    if filename.endswith(os.path.join("test_tamper", "__init__.py")) or base == "marks.py":
        return "test_tamper/__init__.py, marks.py"
    if base in ("snapshot.py", "patterns.py", "wildmatch.py"):
        return "snapshot, patterns"
    return "other"


def measured(kind: str, repo: str) -> list:
    """``profile(repo)`` or ``phases(repo)`` in a fresh process, as a cold check
    runs: its lazy imports are part of it."""
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--measure", kind, repo],
        env=ENV,
        stdout=subprocess.PIPE,
        check=True,
    )
    return json.loads(proc.stdout)


def report(label: str, samples: Dict[str, List[float]], parts: dict) -> None:
    print(f"  the change {label}:")
    for name, values in samples.items():
        value = statistics.median(values)
        cpu = name.endswith(" (CPU)")
        ratio = value / statistics.median(samples["py_compile (CPU)" if cpu else "py_compile"])
        goal = ""
        if name in ("check --no-cache", "check --no-cache (CPU)"):
            goal = f"  (goal <= {GOAL}x: {'meets' if ratio <= GOAL else 'MISSES'})"
        print(f"    {name:30s} {value * 1000:7.1f} ({spread(values):>9})  {ratio:4.2f}x{goal}")
    if "phases" in parts:
        print(
            "    check --no-cache in a fresh process, wall clock by part (nested parts indented):"
        )
        for part, seconds, count in parts["phases"]:
            print(f"      {part:58s} {seconds * 1000:7.1f} ms  {count:4d} calls")
    if "profile" in parts:
        total = sum(seconds for _, seconds in parts["profile"])
        print(
            f"    cProfile of check --no-cache, in a fresh process: {total * 1000:.0f} ms own time"
        )
        for group, seconds in parts["profile"]:
            print(f"      {group:50s} {seconds * 1000:7.1f} ms {seconds / total * 100:4.0f}%")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "REPO"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        kind, repo = args.measure
        print(json.dumps({"profile": profile, "phases": phases}[kind](repo)))
        return 0

    results = {}
    with tempfile.TemporaryDirectory(prefix="oracle-guard-bench-tamper-") as tmp:
        lines = 0
        for modified in (False, True):
            for hermetic in (False, True):
                label = ("modifies" if modified else "adds") + (", hermetic" if hermetic else "")
                repo = os.path.join(tmp, label.replace(", ", "-"))
                names = build(repo, args.files, modified=modified, hermetic=hermetic)
                lines = sum(open(os.path.join(repo, n)).read().count("\n") for n in names)
                parts = {}
                if args.profile:
                    parts = {kind: measured(kind, repo) for kind in ("phases", "profile")}
                results[label] = (bench(repo, names, args.runs), parts)
    print(
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; {args.files} test files, {lines} lines; "
        f"{args.runs} interleaved runs each, medians (min-max) in ms"
    )
    for label, (samples, parts) in results.items():
        report(label, samples, parts)
    if args.profile:
        print("  start-up, medians of 11:")
        for name, seconds in startup():
            print(f"    {name:60s} {seconds * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
