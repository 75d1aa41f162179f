"""Python test code: the marks its syntax holds (stdlib ast; nothing is imported or run).

Names are resolved through the file's imports, so ``from sys import exit as
bye; bye()`` is ``sys.exit``, and ``getattr(__import__("sys"), "exit")`` is too.
What only running the code could tell (a name built from strings at run time,
an alias kept in a variable) is not followed: exec, eval, a computed getattr on
a module that matters, and a module-level ``__getattr__`` are findings of their
own, since they hide code from this reading."""

from __future__ import annotations

import ast
import copy
import gc
import re
from collections import Counter
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from oracle_guard.checks.test_tamper.marks import Mark, package_of  # noqa: F401  # python.package_of, as before

# Does a dotted module name name the oracle's code? It answers with the
# contract's pattern that protects its file ("oracle/**"), or None.
OracleOf = Callable[[str], Optional[str]]

SKIP_MARKERS = {
    "pytest.mark.skip": "a skipped test scores as a pass",
    "pytest.mark.skipif": "a skipped test scores as a pass",
    "pytest.mark.xfail": "a failing xfail test scores as expected",
    "unittest.skip": "a skipped test scores as a pass",
    "unittest.skipIf": "a skipped test scores as a pass",
    "unittest.skipUnless": "a skipped test scores as a pass",
    "unittest.expectedFailure": "a failing test scores as expected",
    "unittest.case.skip": "a skipped test scores as a pass",
}
# attributes that take a test out of collection, or make unittest skip or xfail it
SKIP_ATTRIBUTES = {
    "__test__": "it hides the test from collection: it never runs",
    "__unittest_skip__": "unittest skips the test",
    "__unittest_expecting_failure__": "a failing test scores as expected",
}
SKIP_CALLS = {
    "pytest.skip": "skips the test",
    "pytest.xfail": "marks the test as an expected failure",
    "pytest.importorskip": "skips the test when the import fails",
    "_pytest.outcomes.skip": "skips the test",
    "_pytest.outcomes.xfail": "marks the test as an expected failure",
    "_pytest.outcomes.importorskip": "skips the test when the import fails",
}
SKIP_EXCEPTIONS = {
    "unittest.SkipTest",
    "unittest.case.SkipTest",
    "pytest.skip.Exception",
    "pytest.xfail.Exception",
    "_pytest.outcomes.skip.Exception",
    "_pytest.outcomes.xfail.Exception",
    "_pytest.outcomes.Skipped",
    "_pytest.outcomes.XFailed",
}

COLLECTION_HOOKS = {
    "pytest_collection",
    "pytest_collection_modifyitems",
    "pytest_collection_finish",
    "pytest_ignore_collect",
    "pytest_collect_directory",
    "pytest_collect_file",
    "pytest_pycollect_makemodule",
    "pytest_pycollect_makeitem",
    "pytest_make_collect_report",
    "pytest_itemcollected",
    "pytest_deselected",
    "pytest_generate_tests",  # an empty parameter set skips the test
}
OUTCOME_HOOKS = {
    "pytest_pyfunc_call",
    "pytest_report_teststatus",
    "pytest_runtestloop",
    "pytest_collectreport",
    "pytest_sessionstart",
    "pytest_markeval_namespace",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_fixture_setup",
    "pytest_exception_interact",
    "pytest_report_to_serializable",
    "pytest_report_from_serializable",
    "pytest_unconfigure",
}
OPTION_HOOKS = {
    "pytest_load_initial_conftests",
    "pytest_cmdline_parse",
    "pytest_cmdline_preparse",
    "pytest_cmdline_main",
}
# pytest hooks that only add options, describe, or name what runs; the rest of
# the pytest_* names are findings, as pytest takes any pytest_* function for a hook
QUIET_HOOKS = {
    "pytest_addoption",
    "pytest_configure",  # what it assigns is judged where it is written
    "pytest_report_header",
    "pytest_report_collectionfinish",
    "pytest_assertrepr_compare",
    "pytest_make_parametrize_id",
    "pytest_addhooks",
}
# names that look like hooks and are module-level settings judged on their own
_NOT_HOOKS = {"pytest_plugins"}
# what a plugin manager loads plugins with
_PLUGIN_LOADS = {
    "register",
    "import_plugin",
    "consider_module",
    "consider_conftest",
    "consider_pluginarg",
    "consider_preparse",
    "load_setuptools_entrypoints",
}
_MAPPING_WRITES = {"update", "setdefault", "__setitem__"}
OUTCOME_ATTRIBUTES = {"exitstatus", "testsfailed", "testscollected", "shouldstop", "shouldfail"}

EXITS = {
    "sys.exit",
    "os._exit",
    "posix._exit",
    "os.kill",
    "os.killpg",
    "os.abort",
    "exit",
    "quit",
    "pytest.exit",
    "_pytest.outcomes.exit",
    "signal.raise_signal",
    "signal.pthread_kill",
    "os.execl",
    "os.execle",
    "os.execlp",
    "os.execlpe",
    "os.execv",
    "os.execve",
    "os.execvp",
    "os.execvpe",
}
# the last part of the names worth resolving where they are only referred to
_REFERENCED = {name.rpartition(".")[2] for name in [*SKIP_MARKERS, *EXITS, *SKIP_CALLS]}
_REFERENCED.add("__path__")
# what pytest.exit raises: the session ends with the return code it carries
EXIT_EXCEPTIONS = {
    "pytest.exit.Exception",
    "_pytest.outcomes.exit.Exception",
    "_pytest.outcomes.Exit",
}
_ENDINGS = EXIT_EXCEPTIONS | {"SystemExit", "builtins.SystemExit", "SkipTest"}
# what raises SystemExit, which pytest turns into a failure inside a test
_SYSTEM_EXITS = {
    "sys.exit",
    "exit",
    "quit",
    "builtins.exit",
    "builtins.quit",
    "SystemExit",
    "builtins.SystemExit",
}
DYNAMIC = {"exec", "eval", "compile", "builtins.exec", "builtins.eval", "builtins.compile"}
_LOADS = "it runs code this reading cannot see"
# what runs, or hooks into, code that is not written in the test's source
HOOKED_DYNAMIC = {
    "runpy.run_path": _LOADS,
    "runpy.run_module": _LOADS,
    "importlib.machinery.SourceFileLoader": _LOADS,
    "importlib.machinery.SourcelessFileLoader": _LOADS,
    "importlib.util.spec_from_file_location": _LOADS,
    "importlib.util.spec_from_loader": _LOADS,
    "pickle.loads": _LOADS,
    "pickle.load": _LOADS,
    "marshal.loads": _LOADS,
    "marshal.load": _LOADS,
    "sys.settrace": "it runs code on every line, and can change what the oracle computes",
    "sys.setprofile": "it runs code on every call, and can change what the oracle computes",
    "threading.settrace": "it runs code on every line, and can change what the oracle computes",
    "sys.meta_path.insert": "it changes how imports are found",
    "sys.meta_path.append": "it changes how imports are found",
    "sys.path_hooks.insert": "it changes how imports are found",
    "sys.path_hooks.append": "it changes how imports are found",
}
_CTYPES = "ctypes reaches the interpreter and the process directly"
WARNING_FILTERS = {
    "pytest.mark.filterwarnings",
    "warnings.simplefilter",
    "warnings.filterwarnings",
    "warnings.resetwarnings",
}
# modules whose attributes, reached by a computed name, could be an exit or a patch
GUARDED_MODULES = {"sys", "os", "posix", "signal", "builtins", "pytest", "_pytest", "unittest"}

CLOCK = {
    "datetime.datetime.now",
    "datetime.datetime.utcnow",
    "datetime.datetime.today",
    "datetime.date.today",
    "time.time",
    "time.time_ns",
    "time.monotonic",
    "time.monotonic_ns",
    "time.perf_counter",
    "time.perf_counter_ns",
    "time.localtime",
    "time.gmtime",
    "time.ctime",
    "time.asctime",
}
ENTROPY = {"uuid.uuid1", "uuid.uuid4", "os.urandom", "os.getrandom", "random.SystemRandom"}
SEEDED = {
    "random.Random",
    "random.seed",
    "numpy.random.default_rng",
    "numpy.random.RandomState",
    "numpy.random.seed",
}
# the parts of a statement that hold statements and expressions of their own
_CLAUSES = (ast.excepthandler, getattr(ast, "match_case", ast.excepthandler))  # match: 3.10+
_LISTS = ("collect_ignore", "collect_ignore_glob", "pytest_plugins")
NETWORK = {
    "requests",
    "httpx",
    "aiohttp",
    "urllib3",
    "urllib.request",
    "http.client",
    "socket",
    "ftplib",
    "smtplib",
    "websocket",
    "websockets",
}
SEAM_CLOCK = "take the time from a fake clock fixture"
SEAM_ENTROPY = "use committed seeds (random.Random(SEED))"
SEAM_NETWORK = "use a recorded transport (a fixture that replays recorded responses)"

HYPOTHESIS_SETTINGS = {
    "hypothesis.settings",
    "hypothesis.settings.register_profile",
    "hypothesis.settings.load_profile",
}
HYPOTHESIS_DEFAULT_EXAMPLES = 100

# A file none of these can be in holds no mark but its imports'; those are
# looked at separately (the oracle's modules, the network's). Words found
# inside identifiers are looked for by bytes.find; whole identifiers among the
# file's words (one translate and split, far faster than a regex of alternatives).
_INSIDE = (
    *(b"pytest_", b"exit", b"Exit", b"skip", b"Skip", b"xfail", b"__test__", b"__unittest"),
    *(b"settrace", b"setprofile", b"MARK_GEN", b"kill"),
)
_WORDS = frozenset(
    b"""quit abort raise_signal builtins __builtins__ modules testsfailed
    testscollected shouldstop shouldfail outcome force_result force_exception option
    known_args_namespace addinivalue_line settings register_profile load_profile seed
    pluginmanager getattr __import__ import_module __dir__ __getattr__ runtest __setattr__
    __delattr__ __dict__ vars TestCase globals locals add_marker applymarker attrgetter
    import_plugin consider_module consider_conftest consider_pluginarg consider_preparse
    load_setuptools_entrypoints ctypes runpy SourceFileLoader SourcelessFileLoader
    spec_from_file_location spec_from_loader pickle marshal meta_path path_hooks __path__
    filterwarnings simplefilter resetwarnings _pytest pluggy _inicache inicfg
    expectedFailure collect_ignore collect_ignore_glob""".split()
)
_NOT_WORD = bytes(c for c in range(256) if not (chr(c).isalnum() or c == ord("_")))
_TO_SPACE = bytes.maketrans(_NOT_WORD, b" " * len(_NOT_WORD))
# Words too common in honest tests to read every file that holds them
# (re.compile, cursor.execute, *args, monkeypatch.setattr on the code under
# test): each needs what makes it matter in the bytes too.
_CODE = re.compile(rb"(?<![\w.])(?:exec|eval|compile)\b|exec[lv]")  # the builtins, os.exec*
_ARGS = re.compile(rb"config\w*\s*\.\s*args\b")  # config.args
_PATCHES = (b"setattr", b"delattr", b"patch", b"setitem", b"delitem")  # need an oracle name
_DOTTED_STRING = re.compile(rb"""["']([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)["']""")
# pytest's or unittest's own names assigned (pytest.approx = ...), session.items
# written, a star import, an empty parameter set
_FRAMEWORK_WRITE = re.compile(rb"pytest\.[\w.]*[ \t]*=(?!=)")
_UNITTEST_WRITE = re.compile(rb"unittest\.[\w.]*[ \t]*=(?!=)")
_SESSION_ITEMS = re.compile(rb"session\s*\.\s*items")
_STAR = re.compile(rb"import[ \t(]+\*")
_EMPTY = {  # parametrize(NAMES, []), params=[], argvalues=(): one literal start each, fast
    b"parametrize": re.compile(
        rb"parametrize\(\s*(?:\"[^\"]*\"|'[^']*'|\[[^\]]*\]|\([^)]*\)|[\w.]+)\s*,\s*"
        rb"(?:\[\s*\]|\(\s*\))"
    ),
    b"params": re.compile(rb"params\s*=\s*(?:\[\s*\]|\(\s*\))"),
    b"argvalues": re.compile(rb"argvalues\s*=\s*(?:\[\s*\]|\(\s*\))"),
}


def _triggered(data: bytes, oracle_of: OracleOf) -> bool:
    """Could the file hold a mark? A file that cannot is only compiled."""
    if any(word in data for word in _INSIDE):
        return True
    words = set(data.translate(_TO_SPACE).split())
    if not _WORDS.isdisjoint(words):
        return True
    if (b"exec" in data or b"eval" in words or b"compile" in words) and _CODE.search(data):
        return True
    if b"args" in words and _ARGS.search(data):
        return True
    if b"pytest" in words and _FRAMEWORK_WRITE.search(data):
        return True
    if b"unittest" in words and _UNITTEST_WRITE.search(data):
        return True
    if b"session" in words and b"items" in words and _SESSION_ITEMS.search(data):
        return True
    if b"*" in data and _STAR.search(data):
        return True
    if any(word in words and empty.search(data) for word, empty in _EMPTY.items()):
        return True
    if _imports_oracle(data, oracle_of):
        return True
    # a patch reaches the oracle through an import (above) or a name in a string
    return any(word in data for word in _PATCHES) and _names_oracle_in_strings(data, oracle_of)


def _names_oracle_in_strings(data: bytes, oracle_of: OracleOf) -> bool:
    for text in {m.group(1) for m in _DOTTED_STRING.finditer(data)}:
        parts = text.decode("ascii").split(".")
        if any(oracle_of(".".join(parts[:end])) for end in range(1, len(parts) + 1)):
            return True
    return False


# The bytes are the text only when they are ASCII read as UTF-8: Python folds
# identifiers with NFKC (``sys.ｅｘｉｔ`` is ``sys.exit``), and a coding cookie can
# spell any name in other bytes (utf-7); such files are always read in full.
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.M)
_PLAIN_CODINGS = {"utf-8", "utf8", "ascii", "us-ascii"}
_IMPORT = re.compile(  # one line's import statement
    rb"[ \t]*(?:from[ \t]+(?P<module>[\w.]+)[ \t]+(?P<from>import)"
    rb"|(?P<import>import)[ \t]+(?P<names>[^#;\n]+))"
)
_IMPORT_WORD = re.compile(rb"\bimport\b")


def marks(
    data: bytes, package: str, hermetic: bool, oracle_of: OracleOf, conftest: bool = True
) -> List[Mark]:
    """Every mark in one file's bytes. ``package`` is the dotted package the
    file is in (for relative imports); ``hermetic`` says whether the file lies
    in a hermetic path."""
    if not hermetic and _plain(data) and not _triggered(data, oracle_of):
        try:  # only whether it parses: compiling makes no Python objects, a tree does
            compile(data, "<test>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            return [_unparsable(exc)]
        return []
    collecting = gc.isenabled()
    gc.disable()  # a tree holds no cycles: the collector would only walk it, over and over
    try:
        tree = ast.parse(data)
        reader = _Reader(package, hermetic, oracle_of, conftest)
        reader.read(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return [_unparsable(exc)]
    finally:
        if collecting:
            gc.enable()
    return reader.marks


def _plain(data: bytes) -> bool:
    """Do the bytes spell the names the parser will read?"""
    if not data.isascii():
        return False
    head = b"\n".join(data.split(b"\n", 2)[:2])
    for match in _COOKIE.finditer(head):
        coding = match.group(1).decode("ascii").lower().replace("_", "-")
        if coding not in _PLAIN_CODINGS and not coding.startswith("utf-8-"):
            return False
    return True


def _imports_oracle(data: bytes, oracle_of: OracleOf) -> bool:
    """Could the file import the oracle? Only an import that is a statement of
    its own, at the start of a line, is read here; an import after a semicolon
    or a colon, or continued with a backslash, sends the file to the parser."""
    if b"\\\n" in data or b"\\\r" in data:  # a line continued: read it properly
        return True
    for line in data.splitlines():
        if b"import" not in line:
            continue  # most lines: one find, no regex
        match = _IMPORT.match(line)
        start = (match.start("from") if match["from"] else match.start("import")) if match else -1
        if any(word.start() != start for word in _IMPORT_WORD.finditer(line)):
            return True  # "import" where no import statement starts: read it properly
        if match is None:
            continue
        if match["module"] is not None:
            names = [match["module"]]
        else:
            names = [part.split()[0] for part in match["names"].split(b",") if part.split()]
        for name in names:
            text = name.decode("ascii", "replace").strip("()\\ \t")
            if text.startswith(".") or (text and oracle_of(text) is not None):
                return True
        if match["names"] is not None and b"(" in match["names"]:
            return True  # a parenthesized list: read the file properly
    return False


def _unparsable(exc: BaseException) -> Mark:
    if isinstance(exc, SyntaxError):
        where = f" (column {exc.offset})" if exc.offset else ""
        return Mark(
            "test-unparsable",
            exc.lineno or 1,
            "syntax",
            "",
            f"does not parse: {exc.msg}{where}",
        )
    if isinstance(exc, (RecursionError, MemoryError)):
        return Mark("test-unparsable", 1, "syntax", "", "does not parse: nested too deeply")
    return Mark("test-unparsable", 1, "syntax", "", f"does not parse: {exc}")


_PROMPT = re.compile(rb"^([ \t]*)(?:>>>|\.\.\.)(?: |$)(.*)$")


def doctest_source(data: bytes) -> bytes:
    """A doctest file's examples as one module: each example line at its own line
    (prompts and their indent dropped), every other line blank, so a mark keeps
    the line it has in the file."""
    lines = []
    for line in data.split(b"\n"):
        match = _PROMPT.match(line.rstrip(b"\r"))
        lines.append(match.group(2) if match else b"")
    return b"\n".join(lines) + b"\n"


class _Reader:
    def __init__(
        self, package: str, hermetic: bool, oracle_of: OracleOf, conftest: bool = True
    ) -> None:
        self.package = package
        self.hermetic = hermetic
        self.oracle_of = oracle_of
        self.conftest = conftest  # a conftest or plugin: its module level runs at startup
        self.kinds: List[str] = []  # "class" or "function", for each name of the scope
        self.marks: List[Mark] = []
        self.imports: Dict[str, str] = {}  # bound name -> dotted name it stands for
        self.scope: List[str] = []
        self.assigned: Set[str] = set()  # names the file binds itself (variables, arguments)
        self.bindings: Counter = Counter()  # how often the file binds each of them
        self.dumped: Set[str] = set()  # names bound to pickle.dumps(...)
        self.clean_profiles: Set[str] = set()  # Hypothesis profiles registered with no mark

    # -- names -----------------------------------------------------------------------

    def read(self, tree: ast.Module) -> None:
        for node in _statements(tree):  # imports are statements: no expression holds one
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.imports[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.imports[top] = top
            elif isinstance(node, ast.ImportFrom):
                module = self._absolute(node.module, node.level)
                for alias in node.names:
                    if alias.name != "*":
                        bound = alias.asname or alias.name
                        self.imports[bound] = f"{module}.{alias.name}" if module else alias.name
            else:
                names = list(_bound_by(node))
                self.assigned.update(names)
                self.bindings.update(names)
                if isinstance(node, ast.Assign) and len(names) == 1:
                    value = node.value
                    if isinstance(value, ast.Call) and self.dotted(value.func) == "pickle.dumps":
                        self.dumped.add(names[0])
        self._body(tree.body)

    def _absolute(self, module: Optional[str], level: int) -> str:
        if not level:
            return module or ""
        parts = self.package.split(".") if self.package else []
        if level > 1:
            parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
        if module:
            parts.append(module)
        return ".".join(parts)

    def dotted(self, node: ast.AST) -> Optional[str]:
        """The dotted name an expression stands for, through the imports, in its
        canonical spelling (unittest.case.skip is unittest.skip)."""
        found = self._dotted(node)
        return _canonical(found) if found is not None else None

    def _dotted(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return self.imports.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            value = self.dotted(node.value)
            return f"{value}.{node.attr}" if value is not None else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and node.args:
            getter = node.func  # operator.attrgetter("mark.skip")(pytest)
            if self.dotted(getter.func) == "operator.attrgetter" and getter.args:
                path = getter.args[0]
                value = self.dotted(node.args[0])
                if _constant_str(path) and value is not None:
                    return f"{value}.{path.value}"  # type: ignore[attr-defined]
        if isinstance(node, ast.Call) and node.args:
            func = self.dotted(node.func)
            first = node.args[0]
            constant = first.value if isinstance(first, ast.Constant) else None
            if func in ("__import__", "importlib.import_module") and isinstance(constant, str):
                return constant
            if func is not None and func.endswith(".__getattr__") and isinstance(constant, str):
                return f"{func[: -len('.__getattr__')]}.{constant}"
            if func == "getattr" and len(node.args) >= 2:
                name = node.args[1]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    value = self.dotted(first)
                    return f"{value}.{name.value}" if value is not None else None
        if isinstance(node, ast.Subscript) and self.dotted(node.value) == "sys.modules":
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return key.value
        return None

    def _own(self, node: ast.expr) -> bool:
        """A bare name the file binds itself (``exit = proc.returncode``), not the builtin:
        what it was bound to is judged where the binding is written."""
        return (
            isinstance(node, ast.Name) and node.id in self.assigned and node.id not in self.imports
        )

    def oracle(self, dotted: Optional[str]) -> Optional[str]:
        """The oracle file a dotted name lies in, trying each module prefix."""
        if not dotted:
            return None
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            found = self.oracle_of(".".join(parts[:end]))
            if found is not None:
                return found
        return None

    def _arguments(self, call: ast.Call) -> str:
        """A call's arguments as a key holds them (names no import binds as ``_``)."""
        given = [self.shape(arg) for arg in call.args]
        given += [f"{k.arg}={self.shape(k.value)}" for k in call.keywords]
        return f"({', '.join(given)})"

    def shape(self, node: ast.AST) -> str:
        """An expression as a mark's subject holds it: written out, with each name
        no import binds as ``_``, so that renaming a variable changes no key."""
        copied = copy.deepcopy(node)
        for child in ast.walk(copied):
            if isinstance(child, ast.Name) and child.id not in self.imports:
                child.id = "_"
        return _show(copied)

    # -- the walk --------------------------------------------------------------------

    @property
    def where(self) -> str:
        return ".".join(self.scope)

    def _failure_only(self, dotted: Optional[str]) -> bool:
        """SystemExit raised in a function of a test module (not a conftest or a
        plugin) is caught by pytest and reported as that test's failure."""
        return dotted in _SYSTEM_EXITS and not self.conftest and "function" in self.kinds

    def _in(self) -> str:
        return f" in {self.where}" if self.scope else " at module level"

    def add(self, rule: str, node: ast.AST, subject: str, message: str, scope=None) -> None:
        line = getattr(node, "lineno", 1)
        self.marks.append(
            Mark(rule, line, subject, self.where if scope is None else scope, message)
        )

    def _body(self, body: Sequence[ast.stmt]) -> None:
        for statement in body:
            self._statement(statement)

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._definition(node)
            return
        if isinstance(node, ast.If) and _is_main_guard(node.test):
            # what runs only as a script is not what runs on import: its own scope
            self.scope.append("__main__")
            self._body(node.body)
            self.scope.pop()
            self._body(node.orelse)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            self._assignment(node)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self._target(target, node, deleting=True)
        elif isinstance(node, ast.Raise) and node.exc is not None:
            self._raise(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                self._statement(child)
            elif isinstance(child, ast.expr):
                self._expression(child)
            elif isinstance(child, _CLAUSES):
                for grandchild in ast.iter_child_nodes(child):
                    if isinstance(grandchild, ast.stmt):
                        self._statement(grandchild)
                    elif isinstance(grandchild, ast.expr):
                        self._expression(grandchild)
            elif isinstance(child, ast.withitem):
                self._expression(child.context_expr)

    def _definition(self, node) -> None:
        name = node.name
        self._hook_name(name, node)
        if isinstance(node, ast.ClassDef) and any(
            (self.dotted(base) or "").endswith("TestCase") for base in node.bases
        ):
            for method in node.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if method.name in _TESTCASE_RUNNERS:
                        self.add(
                            "outcome-changed",
                            method,
                            f"{name}.{method.name}",
                            f"defines {name}.{method.name}: it decides how unittest runs and "
                            "scores the case's tests",
                        )
        for decorator in node.decorator_list:
            # @pytest.hookimpl(specname="pytest_runtest_makereport") on any name
            for keyword in decorator.keywords if isinstance(decorator, ast.Call) else []:
                if keyword.arg == "specname" and _constant_str(keyword.value):
                    self._hook_name(keyword.value.value, node)  # type: ignore[attr-defined]
        if (
            not self.scope
            and name in ("__getattr__", "__dir__")
            and not isinstance(node, ast.ClassDef)
        ):
            self.add(
                "dynamic-code",
                node,
                f"module {name}",
                f"defines a module-level {name}: the module's names (pytest's hooks among "
                "them) are then made at run time, where this reading cannot follow",
            )
        self.scope.append(name)
        self.kinds.append("class" if isinstance(node, ast.ClassDef) else "function")
        for decorator in node.decorator_list:
            self._decorator(decorator, name)
        if not isinstance(node, ast.ClassDef):
            arguments = node.args
            for default in arguments.defaults + [d for d in arguments.kw_defaults if d]:
                self._expression(default)
        else:
            for base in node.bases + [k.value for k in node.keywords]:
                self._kept_ending(node, base, "subclasses")
                self._expression(base)
        self._body(node.body)
        self.scope.pop()
        self.kinds.pop()

    def _decorator(self, node: ast.expr, name: str) -> None:
        target = node.func if isinstance(node, ast.Call) else node
        dotted = self.dotted(node) if isinstance(node, ast.Call) else None
        if dotted not in SKIP_MARKERS:  # getattr(pytest.mark, "skip") is the marker itself
            dotted = self.dotted(target)
        if dotted in SKIP_MARKERS:
            # its arguments are in its key: skipif(py < (3, 8)) is not skipif(py < (3, 80))
            given = self._arguments(node) if isinstance(node, ast.Call) else ""
            self.add(
                "skip-added",
                node,
                f"{dotted}{given}",
                f"@{dotted} on {name}: {SKIP_MARKERS[dotted]}",
            )
            if isinstance(node, ast.Call):
                for arg in list(node.args) + [k.value for k in node.keywords]:
                    self._expression(arg)
            return
        self._expression(node)

    def _hook_name(self, name: str, node: ast.AST, anywhere: bool = False) -> None:
        """A name pytest takes for a hook, however it is bound (def, assignment, import),
        where a plugin's attributes can hold it: at module level or in a class body
        (a name bound in a function is a local; a plugin made there is registered,
        which is a finding of its own). ``anywhere``: bound as a module global
        from wherever it is written (globals()["pytest_..."] = f)."""
        if "function" in self.kinds and not anywhere:
            return
        if name == "pytest_generate_tests":
            self.add(
                "collection-changed",
                node,
                name,
                f"defines {name}: it decides which parameter sets tests run with, and an "
                "empty set skips them",
            )
        elif name in COLLECTION_HOOKS:
            self.add(
                "collection-changed",
                node,
                name,
                f"defines {name}: it can deselect tests before they run",
            )
        elif name.startswith("pytest_runtest_") or name in OUTCOME_HOOKS:
            self.add(
                "outcome-changed",
                node,
                name,
                f"defines {name}: it can turn a failure into a pass",
            )
        elif name in OPTION_HOOKS:
            self.add(
                "runner-options",
                node,
                name,
                f"defines {name}: it can rewrite the command line's options",
            )
        elif name.startswith("pytest_") and name not in QUIET_HOOKS and name not in _NOT_HOOKS:
            self.add(
                "outcome-changed",
                node,
                name,
                f"defines {name}, a pytest hook: it runs inside the session and can change "
                "which tests run or how they score",
            )

    def _import(self, node) -> None:
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
            for alias in node.names:
                if alias.asname:
                    self._hook_name(alias.asname, node)
        else:
            module = self._absolute(node.module, node.level)
            modules = [module] + [f"{module}.{alias.name}" for alias in node.names]
            for alias in node.names:
                bound = alias.asname or alias.name
                self._hook_name(bound, node)
                if bound == "pytest_plugins":
                    self.add(
                        "collection-changed",
                        node,
                        f"imports pytest_plugins {module}",
                        f"imports pytest_plugins from {module}: the plugins it lists load, and a "
                        "plugin can change which tests run and how they score",
                    )
                elif alias.name == "*":
                    self.add(
                        "dynamic-code",
                        node,
                        f"import * {module}",
                        f"imports every name of {module or 'a module'}{self._in()}: which names "
                        "(pytest's hooks among them) this reading cannot see",
                    )
        if self.hermetic:
            for module in modules:
                # a package's submodule loads the package: requests.adapters is requests
                parts = module.split(".")
                prefixes = (".".join(parts[:end]) for end in range(1, len(parts) + 1))
                network = next((p for p in prefixes if p in NETWORK), None)
                if network is not None:
                    self.add(
                        "non-hermetic",
                        node,
                        f"import {network}",
                        f"imports {module}, which reaches the network: {SEAM_NETWORK}",
                    )
                    break

    def _assignment(self, node) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if isinstance(node, ast.AugAssign) and self.dotted(node.target) == "sys.modules":
            self._sys_modules(node, "|=", [node.value])  # sys.modules |= {...}
        for target in targets:
            for each in _unpacked(target):
                self._target(each, node)
        value = node.value
        self._kept_ending(node, value, "keeps")
        for target in targets:
            if value is None:
                continue
            if isinstance(target, ast.Name):
                self._named_value(target.id, value, node)
            elif _global_key(target) is not None:
                if "function" in self.kinds:  # a module global, from inside a function
                    self._hook_name(_global_key(target), node, anywhere=True)  # type: ignore[arg-type]
                self._named_value(_global_key(target), value, node)  # type: ignore[arg-type]

    def _named_value(self, name: str, value: ast.expr, node) -> None:
        if name in SKIP_ATTRIBUTES and name != "__test__" and not _false(value):
            self.add(
                "skip-added",
                node,
                name,
                f"{name} = {_show(value)} in {self.where or 'the module'}: {SKIP_ATTRIBUTES[name]}",
            )
        elif name == "__test__" and not (isinstance(value, ast.Constant) and value.value is True):
            where = self.where or "the module"
            self.add(
                "skip-added",
                node,
                "__test__",
                f"__test__ = {_show(value)} hides {where} from collection: its tests never run",
            )
        elif name in ("collect_ignore", "collect_ignore_glob"):
            for item, shape in zip(_items(value, _show), _items(value, self.shape)):
                self.add(
                    "collection-changed",
                    node,
                    f"{name} {shape}",
                    f"{name} gains {item}: pytest will not collect it",
                )
        elif name == "pytest_plugins":
            for item, shape in zip(_items(value, _show), _items(value, self.shape)):
                self.add(
                    "collection-changed",
                    node,
                    f"pytest_plugins {shape}",
                    f"pytest_plugins loads {item}: a plugin can change which tests run and "
                    "how they score",
                )
        elif name == "pytestmark":
            pass  # its markers are found by _expression
        else:
            self._hook_name(name, node)

    def _target(self, target: ast.expr, node: ast.stmt, deleting: bool = False) -> None:
        verb = "deletes" if deleting else "assigns"
        if isinstance(target, ast.Name):
            bound = self.imports.get(target.id)
            found = self.oracle(bound) if bound and target.id in self.imports else None
            if found is not None and not deleting:
                self.add(
                    "oracle-patched",
                    node,
                    f"rebinds {bound}",
                    f"rebinds {target.id}, imported from {bound}, which the contract protects "
                    f"({found!r}): the test would compare against a stand-in",
                )
            return
        if isinstance(target, ast.Attribute):
            owner = self.dotted(target.value)
            if target.attr in SKIP_ATTRIBUTES:
                self.add(
                    "skip-added",
                    node,
                    f"{verb} .{target.attr}",
                    f"{verb} {_show(target)}: {SKIP_ATTRIBUTES[target.attr]}",
                )
                return
            if target.attr == "items" and (owner or "").rpartition(".")[2] == "session":
                self.add(
                    "collection-changed",
                    node,
                    f"{verb} session.items",
                    f"{verb} {_show(target)}: it changes which collected tests run",
                )
                return
            if target.attr == "runtest" or _is_framework(owner):
                self.add(
                    "outcome-changed",
                    node,
                    f"{verb} {owner}.{target.attr}" if owner else f"{verb} .{target.attr}",
                    f"{verb} {_show(target)}: it patches how pytest or unittest runs and "
                    "scores tests",
                )
                return
            if target.attr in OUTCOME_ATTRIBUTES:
                self.add(
                    "outcome-changed",
                    node,
                    f"{verb} .{target.attr}",
                    f"{verb} {_show(target)}: it changes what the run reports",
                )
                return
            if target.attr == "outcome":
                self.add(
                    "outcome-changed",
                    node,
                    f"{verb} .outcome",
                    f"{verb} {_show(target)}: it changes a test's reported outcome",
                )
                return
            if owner is not None and (owner == "builtins" or owner == "__builtins__"):
                self.add(
                    "oracle-patched",
                    node,
                    f"builtins.{target.attr}",
                    f"{verb} builtins.{target.attr}: it changes every module's {target.attr}",
                )
                return
            if _is_option(target):
                self.add(
                    "runner-options",
                    node,
                    f"{verb} {_option_name(target)}",
                    f"{verb} {_show(target)}: it changes the command line's options",
                )
                return
            found = self.oracle(owner)
            if found is not None:
                self.add(
                    "oracle-patched",
                    node,
                    f"{owner}.{target.attr}",
                    f"{verb} {owner}.{target.attr}, which the contract protects ({found!r})",
                )
            return
        if isinstance(target, ast.Subscript):
            owner = self.dotted(target.value)
            table = target.value
            if (
                isinstance(table, ast.Call)
                and not table.args
                and self.dotted(table.func) in ("globals", "locals", "vars")
                and not _constant_str(target.slice)
            ):
                self.add(
                    "dynamic-code",
                    node,
                    f"{verb} {self.dotted(table.func)}()[]",
                    f"{verb} {_show(target)}{self._in()}: a name made at run time (a pytest hook "
                    "among them) cannot be judged",
                )
                return
            namespace = _namespace_of(target.value, self)
            written = self.dotted(namespace) if namespace is not target.value else None
            if written is not None and self._namespace_patched(node, written, verb, target):
                return
            value = getattr(node, "value", None)
            if isinstance(target.value, ast.Name) and target.value.id in _LISTS and value:
                self._named_value(target.value.id, value, node)  # collect_ignore[:] = [...]
                return
            if isinstance(target.value, ast.Attribute) and target.value.attr == "items":
                if (self.dotted(target.value.value) or "").rpartition(".")[2] == "session":
                    self.add(
                        "collection-changed",
                        node,
                        f"{verb} session.items[]",
                        f"{verb} {_show(target)}: it changes which collected tests run",
                    )
                    return
            if owner in ("sys.meta_path", "sys.path_hooks"):
                self.add(
                    "dynamic-code",
                    node,
                    f"{verb} {owner}",
                    f"{verb} {_show(target)}: it changes how imports are found",
                )
                return
            if isinstance(namespace, ast.Attribute) and _is_option(namespace, whole=True):
                self.add(
                    "runner-options",
                    node,
                    f"{verb} option[]",
                    f"{verb} {_show(target)}{self._in()}: it changes the command line's options",
                )
            elif owner in ("__builtins__", "builtins.__dict__"):
                self.add(
                    "oracle-patched",
                    node,
                    "builtins[]",
                    f"{verb} {_show(target)}: it changes every module's builtins",
                )
            elif owner == "sys.modules":
                name = self.dotted(target)
                found = self.oracle(name)
                if found is not None:
                    self.add(
                        "oracle-patched",
                        node,
                        f"sys.modules {name}",
                        f"{verb} sys.modules[{name!r}], which the contract protects "
                        f"({found!r}): it replaces the oracle's module",
                    )

    def _ending(self, node: Optional[ast.expr]) -> Optional[str]:
        """The exception that skips or ends the run that ``node`` is, or makes."""
        if node is None:
            return None
        target = node.func if isinstance(node, ast.Call) else node
        dotted = self.dotted(target)
        if dotted in SKIP_EXCEPTIONS or dotted in _ENDINGS:
            return dotted
        return None

    def _kept_ending(self, node: ast.AST, value: Optional[ast.expr], how: str) -> None:
        """An exception that skips or ends the run, subclassed or kept in a name:
        raised later under another name, it would not be seen at the raise."""
        dotted = self._ending(value)
        if dotted is None or self._failure_only(dotted):
            return
        rule = "skip-added" if dotted in SKIP_EXCEPTIONS or dotted == "SkipTest" else "process-exit"
        effect = "skips the test" if rule == "skip-added" else "ends the run with its status"
        self.add(
            rule,
            node,
            f"{how} {dotted}",
            f"{how} {dotted}{self._in()}: raised under another name, it {effect}",
        )

    def _raise(self, node: ast.Raise) -> None:
        exc = node.exc
        target = exc.func if isinstance(exc, ast.Call) else exc
        dotted = self.dotted(target) if target is not None else None
        if dotted in SKIP_EXCEPTIONS or dotted == "SkipTest":
            self.add(
                "skip-added",
                node,
                f"raise {dotted}",
                f"raises {dotted}{self._in()}: a skipped test scores as a pass",
            )
        elif dotted in ("SystemExit", "builtins.SystemExit") and not self._failure_only(dotted):
            self.add(
                "process-exit",
                node,
                "raise SystemExit",
                f"raises SystemExit{self._in()}: the run would end with its status, not the tests'",
            )
        elif dotted in EXIT_EXCEPTIONS:
            self.add(
                "process-exit",
                node,
                f"raise {dotted}",
                f"raises {dotted}{self._in()}: the run would end with its status, not the tests'",
            )

    def _expression(self, node: ast.expr) -> None:
        nodes = list(_walk_expression(node))
        # a name that is called, or that is the start of a longer one, is judged there
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        inner = called | {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
        for child in nodes:
            if isinstance(child, ast.Call):
                self._call(child, id(child) in called)
            elif (
                isinstance(child, ast.Attribute)
                and child.attr in _REFERENCED
                or isinstance(child, ast.Name)
                and (child.id in self.imports or child.id in _REFERENCED)
            ) and isinstance(child.ctx, ast.Load):
                dotted = self.dotted(child)
                if dotted in SKIP_MARKERS and id(child) not in called:  # a call: judged there
                    self.add(
                        "skip-added",
                        child,
                        dotted,
                        f"{dotted}{self._in()}: {SKIP_MARKERS[dotted]}",
                    )
                elif dotted is not None and dotted.endswith(".__path__"):
                    found = self.oracle(dotted[: -len(".__path__")])
                    if found is not None:
                        self.add(
                            "oracle-patched",
                            child,
                            f"{dotted}",
                            f"reaches {dotted}{self._in()}: the folders the oracle's package is "
                            f"imported from, which the contract protects ({found!r})",
                        )
                elif dotted in SKIP_CALLS and id(child) not in inner and not self._own(child):
                    self.add(
                        "skip-added",
                        child,
                        dotted,
                        f"refers to {dotted}{self._in()} without calling it: whatever calls it "
                        f"{SKIP_CALLS[dotted]}",
                    )
                elif dotted in EXITS and id(child) not in inner and not self._own(child):
                    self.add(
                        "process-exit",
                        child,
                        dotted,
                        f"refers to {dotted}{self._in()} without calling it: whatever calls it "
                        "(an atexit handler, a finalizer) would end the run with its status, "
                        "not the tests'",
                    )

    def _call(self, node: ast.Call, called: bool = False) -> None:
        """``called``: the call's result is called in turn (getattr(os, "_exit")(0))."""
        func = self.dotted(node.func)
        name = node.func.attr if isinstance(node.func, ast.Attribute) else func
        resolved = self.dotted(node)  # getattr(pytest.mark, "xfail") is the marker
        if resolved in SKIP_MARKERS or func in SKIP_MARKERS:
            marker = resolved if resolved in SKIP_MARKERS else func
            given = self._arguments(node) if func == marker else ""  # skipif(py < (3, 8))
            self.add(
                "skip-added",
                node,
                f"{marker}{given}",
                f"{marker}{self._in()}: {SKIP_MARKERS[marker]}",  # type: ignore[index]
            )
        elif resolved in EXITS and func == "getattr" and not called:
            self.add(
                "process-exit",
                node,
                resolved,
                f"refers to {resolved}{self._in()} without calling it: whatever calls it would "
                "end the run with its status, not the tests'",
            )
        elif func in SKIP_CALLS:
            self.add(
                "skip-added",
                node,
                f"{func}{self._arguments(node)}",
                f"{func}(){self._in()} {SKIP_CALLS[func]}",
            )
        elif name in ("add_marker", "applymarker") and node.args and _marker_named(node.args[0]):
            self.add(
                "skip-added",
                node,
                f"{name} {node.args[0].value}",  # type: ignore[attr-defined]
                f"{name}({node.args[0].value!r}){self._in()}: a skipped or xfail test scores "  # type: ignore[attr-defined]
                "as a pass",
            )
        elif func in ("pytest.mark.parametrize", "pytest.fixture") and _no_parameters(node):
            self.add(
                "skip-added",
                node,
                f"{func} empty",
                f"{func} with an empty parameter set{self._in()}: pytest skips the tests it "
                "would parametrize",
            )
        elif name in ("__setattr__", "__delattr__"):
            self._dunder_setattr(node, func or name)
        elif func in ("dict.__setitem__", "dict.update", "dict.setdefault") and node.args:
            if self.dotted(node.args[0]) == "sys.modules":
                self._sys_modules(node, func, node.args[1:])
        elif func in ("pickle.loads", "pickle.load") and _round_trip(node, self):
            pass  # pickle.loads(pickle.dumps(x)): only the code pickled here runs
        elif func in HOOKED_DYNAMIC or (func or "").startswith("ctypes."):
            self.add(
                "dynamic-code",
                node,
                func or "",
                f"calls {func}{self._in()}: {HOOKED_DYNAMIC.get(func or '', _CTYPES)}",
            )
        elif func in WARNING_FILTERS and not _errors_only(node):
            self.add(
                "runner-options",
                node,
                f"{func}{self._arguments(node)}",
                f"{func}{self._in()} can silence warnings that would fail tests",
            )
        elif name == "skipTest":
            self.add("skip-added", node, "skipTest", f"skipTest(){self._in()} skips the test")
        elif func in EXITS and not self._failure_only(func):
            self.add(
                "process-exit",
                node,
                f"{func}{self._arguments(node)}",  # sys.exit(pytest.main()) is not sys.exit(0)
                f"calls {func}{self._in()}: the run would end with its status, not the tests'",
            )
        elif func in DYNAMIC:
            self.add(
                "dynamic-code",
                node,
                func,
                f"calls {func}{self._in()}: code made at run time cannot be judged",
            )
        elif func in ("__import__", "importlib.import_module", "importlib.__import__") and (
            not node.args or not _constant_str(node.args[0])
        ):
            self.add(
                "dynamic-code",
                node,
                func,
                f"calls {func} with a computed name{self._in()}: the module it imports "
                "cannot be judged",
            )
        elif func == "getattr" and len(node.args) >= 2 and not _constant_str(node.args[1]):
            owner = self.dotted(node.args[0])
            if owner is not None and owner.split(".")[0] in GUARDED_MODULES | {"__builtins__"}:
                self.add(
                    "dynamic-code",
                    node,
                    f"getattr {owner}",
                    f"getattr on {owner} with a computed name{self._in()}: what it reaches "
                    "cannot be judged",
                )
        elif name in ("setattr", "delattr", "setitem", "delitem", "patch", "object", "dict"):
            self._patch_call(node, func, name)
        elif name in _MAPPING_WRITES and isinstance(node.func, ast.Attribute):
            self._mapping_write(node, node.func.value, func or name)
        elif name in ("append", "extend", "insert") and isinstance(node.func, ast.Attribute):
            listed = node.func.value
            if isinstance(listed, ast.Name) and listed.id in _LISTS and node.args:
                self._named_value(listed.id, node.args[-1], node)
        elif name in _PLUGIN_LOADS and func is not None and ".pluginmanager." in f".{func}":
            self.add(
                "collection-changed",
                node,
                "pluginmanager.register",
                f"registers a plugin{self._in()}: a plugin can change which tests run and "
                "how they score",
            )
        elif name == "addinivalue_line":
            key = node.args[0] if node.args else None
            if not (isinstance(key, ast.Constant) and key.value == "markers"):
                self.add(
                    "runner-options",
                    node,
                    f"addinivalue_line {self.shape(key) if key is not None else ''}",
                    f"adds to the ini option {_show(key) if key is not None else '?'}"
                    f"{self._in()}: it changes how the suite runs",
                )
        elif name == "force_result" or name == "force_exception":
            self.add(
                "outcome-changed",
                node,
                name,
                f"calls {name}{self._in()}: it replaces a hook's result",
            )
        elif func in HYPOTHESIS_SETTINGS:
            self._hypothesis(node, func)
        elif func == "hypothesis.seed":
            self.add(
                "runner-options",
                node,
                "hypothesis.seed",
                f"@hypothesis.seed{self._in()} fixes Hypothesis's seed: it explores one path only",
            )
        if self.hermetic:
            self._hermetic(node, func)

    def _patch_call(self, node: ast.Call, func: Optional[str], name: str) -> None:
        if name in ("object", "dict") and (func is None or ".patch." not in f".{func}"):
            return
        if not node.args:
            return
        first = node.args[0]
        how = func or name
        if isinstance(first, ast.Attribute) and _is_option(first, whole=True):
            self.add(
                "runner-options",
                node,
                f"{name} option",
                f"{how} on {_show(first)}{self._in()}: it changes the command line's options",
            )
            return
        modules = self.dotted(first) == "sys.modules" or (
            isinstance(first, ast.Constant) and first.value == "sys.modules"
        )
        if modules:
            self._sys_modules(node, how, node.args[1:] + [k.value for k in node.keywords])
            return
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            target = first.value
            found = self.oracle(target)
        else:
            owner = self.dotted(first)
            target = owner or _show(first)
            found = self.oracle(owner)
            attribute = node.args[1] if len(node.args) >= 2 else None
            if attribute is not None and _constant_str(attribute):
                target = f"{target}.{attribute.value}"  # type: ignore[attr-defined]
                if name in ("setattr", "delattr") and attribute.value in SKIP_ATTRIBUTES:  # type: ignore[attr-defined]
                    self.add(
                        "skip-added",
                        node,
                        f"{name} {attribute.value}",  # type: ignore[attr-defined]
                        f"{how} of {attribute.value}{self._in()}: "  # type: ignore[attr-defined]
                        f"{SKIP_ATTRIBUTES[attribute.value]}",  # type: ignore[attr-defined]
                    )
                    return
                outcome = attribute.value in OUTCOME_ATTRIBUTES | {"runtest", "outcome"}  # type: ignore[attr-defined]
                if name in ("setattr", "delattr") and outcome:
                    self.add(
                        "outcome-changed",
                        node,
                        f"{name} .{attribute.value}",  # type: ignore[attr-defined]
                        f"{how} of {attribute.value}{self._in()}: it changes what the run "  # type: ignore[attr-defined]
                        "reports",
                    )
                    return
            if _is_framework(owner):
                self.add(
                    "outcome-changed",
                    node,
                    f"{name} {target}",
                    f"{how} on {target}{self._in()}: it patches how pytest or unittest runs and "
                    "scores tests",
                )
                return
            if func in ("setattr", "delattr", "builtins.setattr", "builtins.delattr"):
                if owner in ("builtins", "__builtins__"):
                    self.add(
                        "oracle-patched",
                        node,
                        f"{name} builtins",
                        f"{name}() on builtins{self._in()}: it changes every module's builtins",
                    )
                    return
        if found is not None:
            self.add(
                "oracle-patched",
                node,
                f"{name} {target}",
                f"{how} on {target}{self._in()}, which the contract protects ({found!r})",
            )

    def _namespace_patched(self, node: ast.AST, written: str, how: str, shown: ast.AST) -> bool:
        """vars(X) or X.__dict__ written, for X the oracle, builtins or pytest itself."""
        found = self.oracle(written)
        if written in ("builtins", "__builtins__"):
            self.add(
                "oracle-patched",
                node,
                f"{how} vars(builtins)",
                f"{how} {_show(shown)}: it changes every module's builtins",
            )
        elif found is not None:
            self.add(
                "oracle-patched",
                node,
                f"{how} vars({written})",
                f"{how} {_show(shown)}{self._in()}: it writes {written}, which the contract "
                f"protects ({found!r})",
            )
        elif _is_framework(written):
            self.add(
                "outcome-changed",
                node,
                f"{how} vars({written})",
                f"{how} {_show(shown)}{self._in()}: it patches how pytest or unittest runs and "
                "scores tests",
            )
        else:
            return False
        return True

    def _dunder_setattr(self, node: ast.Call, how: str) -> None:
        """object.__setattr__(X, "a", v), type.__setattr__(...), X.__setattr__("a", v)."""
        func = node.func
        if how in ("object.__setattr__", "type.__setattr__", "object.__delattr__"):
            if node.args:
                self._patch_call(node, "setattr", "setattr")
            return
        if isinstance(func, ast.Attribute) and node.args and _constant_str(node.args[0]):
            receiver = func.value
            written = self.dotted(receiver)
            if isinstance(receiver, ast.Attribute) and _is_option(receiver, whole=True):
                self.add(
                    "runner-options",
                    node,
                    "__setattr__ option",
                    f"{how} on {_show(receiver)}{self._in()}: it changes the command line's "
                    "options",
                )
            elif written is not None:
                self._namespace_patched(node, written, how, node)

    def _mapping_write(self, node: ast.Call, mapping: ast.expr, how: str) -> None:
        """vars(config.option).update(...), config.option.__dict__[...], sys.modules.update(...)."""
        original = mapping
        mapping = _namespace_of(mapping, self)
        written = self.dotted(mapping) if mapping is not original else None
        if written is not None and self._namespace_patched(node, written, how, node):
            return
        if isinstance(mapping, ast.Call) and self.dotted(mapping.func) in ("globals", "locals"):
            for keyword in node.keywords:  # globals().update(pytest_collection_modifyitems=f)
                if keyword.arg is not None:
                    self._hook_name(keyword.arg, node, anywhere=True)
            return
        if isinstance(mapping, ast.Attribute) and _is_option(mapping, whole=True):
            self.add(
                "runner-options",
                node,
                f"{how.rpartition('.')[2]} option",
                f"{how} on {_show(mapping)}{self._in()}: it changes the command line's options",
            )
        elif self.dotted(mapping) == "sys.modules":
            self._sys_modules(node, how, list(node.args))

    def _sys_modules(self, node: ast.AST, how: str, given: Sequence[ast.expr]) -> None:
        """sys.modules changed through a call: the oracle's modules named as keys or
        arguments are replaced (a key not written out could be any module)."""
        names: List[object] = []
        for value in given:
            if isinstance(value, ast.Dict):
                names += [k.value for k in value.keys if isinstance(k, ast.Constant)]
            elif isinstance(value, ast.Constant):
                names.append(value.value)
            elif isinstance(value, (ast.List, ast.Tuple)):  # update([("oracle.x", m)])
                pairs = [e for e in value.elts if isinstance(e, ast.Tuple) and e.elts]
                names += [p.elts[0].value for p in pairs if isinstance(p.elts[0], ast.Constant)]
        for name in names:
            found = self.oracle(name) if isinstance(name, str) else None
            if found is not None:
                self.add(
                    "oracle-patched",
                    node,
                    f"sys.modules {name}",
                    f"{how} replaces sys.modules[{name!r}]{self._in()}, which the contract "
                    f"protects ({found!r})",
                )

    def _hypothesis(self, node: ast.Call, func: str) -> None:
        name = node.args[0].value if node.args and _constant_str(node.args[0]) else None  # type: ignore[attr-defined]
        if func.endswith("load_profile") and name in self.clean_profiles:
            return  # registered above in this file, with nothing lowered
        if func.endswith("register_profile") and name is not None:
            before = len(self.marks)
            self._hypothesis_settings(node, func)
            clean = len(self.marks) == before and "parent" not in {k.arg for k in node.keywords}
            given = node.args[1:]
            if len(given) == 1 and isinstance(given[0], ast.Call):
                # register_profile(NAME, settings(...)): the settings are judged where
                # the walk reaches them; here only whether they lower anything
                self._hypothesis_settings(given[0], "hypothesis.settings")
                clean = clean and len(self.marks) == before
                del self.marks[before:]
                given = [] if self.dotted(given[0].func) == "hypothesis.settings" else given
            if clean and not given:
                self.clean_profiles.add(name)
            return
        self._hypothesis_settings(node, func)

    def _hypothesis_settings(self, node: ast.Call, func: str) -> None:
        if func.endswith("load_profile"):
            self.add(
                "runner-options",
                node,
                f"{func} {self.shape(node.args[0]) if node.args else ''}",
                f"loads a Hypothesis profile{self._in()}: it can lower the example count",
            )
            return
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg is None:
                self.add(
                    "runner-options",
                    node,
                    f"{func} **{self.shape(value)}",
                    f"sets Hypothesis settings from a mapping{self._in()}: they can lower the "
                    "example count or switch phases off",
                )
            elif keyword.arg == "max_examples":
                if isinstance(value, ast.Constant) and type(value.value) is int:
                    if value.value >= HYPOTHESIS_DEFAULT_EXAMPLES:
                        continue
                self.add(
                    "runner-options",
                    node,
                    f"max_examples={self.shape(value)}",
                    f"sets max_examples={_show(value)}{self._in()}: fewer examples than "
                    f"Hypothesis's default {HYPOTHESIS_DEFAULT_EXAMPLES}",
                )
            elif keyword.arg == "deadline" and isinstance(value, ast.Constant):
                if value.value is None:
                    self.add(
                        "runner-options",
                        node,
                        "deadline=None",
                        f"sets deadline=None{self._in()}: it switches Hypothesis's deadline off",
                    )
            elif keyword.arg == "phases":
                self.add(
                    "runner-options",
                    node,
                    f"phases={self.shape(value)}",
                    f"sets phases{self._in()}: it can switch off generating examples",
                )

    def _hermetic(self, node: ast.Call, func: Optional[str]) -> None:
        if func is None:
            return
        if func in CLOCK:
            self.add(
                "non-hermetic",
                node,
                func,
                f"{func} reads the wall clock{self._in()}: {SEAM_CLOCK}",
            )
        elif func in ENTROPY or func.startswith("secrets."):
            self.add(
                "non-hermetic",
                node,
                func,
                f"{func} draws unseeded entropy{self._in()}: {SEAM_ENTROPY}",
            )
        elif func in SEEDED:
            unseeded = not node.args and not node.keywords
            if node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is None:
                unseeded = True
            if unseeded:
                self.add(
                    "non-hermetic",
                    node,
                    f"{func}()",
                    f"{func}() without a seed{self._in()} is seeded from the system: "
                    f"{SEAM_ENTROPY}",
                )
        elif func.startswith(("random.", "numpy.random.")):
            self.add(
                "non-hermetic",
                node,
                func,
                f"{func} uses the module's unseeded generator{self._in()}: {SEAM_ENTROPY}",
            )


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement, however deeply nested in other statements."""
    stack = [tree]
    while stack:
        current = stack.pop()
        yield current
        for name in _STATEMENT_FIELDS:
            children = getattr(current, name, None)
            if children.__class__ is list:
                stack.extend(children)
        for handler in getattr(current, "handlers", None) or getattr(current, "cases", None) or ():
            stack.extend(handler.body)


def _bound_by(statement: ast.AST) -> Iterator[str]:
    """The names a statement binds (walrus and comprehension targets aside)."""
    targets: List[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [statement.target]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in statement.items if item.optional_vars]
    elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = statement.args
        every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        yield from (argument.arg for argument in every)
    for handler in getattr(statement, "handlers", ()):
        if handler.name:
            yield handler.name
    for target in targets:
        yield from (t.id for t in _unpacked(target) if isinstance(t, ast.Name))


_STATEMENT_FIELDS = ("body", "orelse", "finalbody")
_NOT_EXPRESSIONS = {"ctx", "op", "ops"}  # contexts and operators: nodes, but never a call or name
_FIELDS: Dict[type, Tuple[str, ...]] = {}


_SPELLINGS = (  # another spelling of a name, and the one the rules know
    ("unittest.case.", "unittest."),
    ("_pytest.mark.structures.MARK_GEN.", "pytest.mark."),
    ("_pytest.mark.MARK_GEN.", "pytest.mark."),
    ("pytest.MARK_GEN.", "pytest.mark."),
)


_FRAMEWORKS = ("pytest", "_pytest", "unittest", "pluggy")
# TestCase methods that run the tests themselves, and so decide their outcome
_TESTCASE_RUNNERS = {"run", "__call__", "debug", "_callTestMethod", "_callSetUp", "_callTearDown"}


def _is_main_guard(test: ast.expr) -> bool:
    """if __name__ == "__main__":"""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _is_framework(dotted: Optional[str]) -> bool:
    """pytest, unittest or pluggy themselves: patching them changes how every test scores."""
    return dotted is not None and dotted.split(".")[0] in _FRAMEWORKS


def _false(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and not value.value


def _round_trip(call: ast.Call, reader: _Reader) -> bool:
    """pickle.loads(pickle.dumps(...)), or of a name the file binds once, to
    pickle.dumps(...): what it loads was made from the test's own objects."""
    made = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if isinstance(made, ast.Name):
        return made.id in reader.dumped and reader.bindings[made.id] == 1
    return isinstance(made, ast.Call) and reader.dotted(made.func) == "pickle.dumps"


def _marker_named(node: ast.expr) -> bool:
    """add_marker("xfail"): a skip or xfail named by a string."""
    return _constant_str(node) and node.value.partition("(")[0] in ("skip", "skipif", "xfail")  # type: ignore[attr-defined]


def _no_parameters(call: ast.Call) -> bool:
    """parametrize("x", []) or fixture(params=[]): nothing to run the test with."""
    values = call.args[1] if len(call.args) >= 2 else None
    for keyword in call.keywords:
        if keyword.arg in ("argvalues", "params"):
            values = keyword.value
    return isinstance(values, (ast.List, ast.Tuple)) and not values.elts


def _errors_only(call: ast.Call) -> bool:
    """A warnings filter that only turns warnings into errors (stricter)."""
    action = call.args[0] if call.args else None
    for keyword in call.keywords:
        if keyword.arg == "action":
            action = keyword.value
    if isinstance(action, ast.Constant) and isinstance(action.value, str):
        return action.value.partition(":")[0] == "error"
    return False


def _canonical(name: str) -> str:
    while name.endswith(".__call__"):  # f.__call__(...) is f(...)
        name = name[: -len(".__call__")]
    for spelling, canonical in _SPELLINGS:
        if name.startswith(spelling):
            return canonical + name[len(spelling) :]
    return name


def _walk_expression(node: ast.AST) -> Iterator[ast.AST]:
    """Every node of an expression, lambdas and comprehensions included, but
    the contexts and operators, which hold nothing."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        kind = current.__class__
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _NOT_EXPRESSIONS)
        for name in fields:
            child = getattr(current, name, None)
            if child.__class__ is list:
                stack.extend(c for c in child if isinstance(c, ast.AST))
            elif isinstance(child, ast.AST):
                stack.append(child)


def _unpacked(target: ast.expr) -> List[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [each for element in target.elts for each in _unpacked(element)]
    if isinstance(target, ast.Starred):
        return _unpacked(target.value)
    return [target]


def _items(value: ast.expr, show: Callable[[ast.AST], str]) -> List[str]:
    """The strings a list, tuple or string names; anything else, as ``show`` writes it."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [value.value]
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return [item for element in value.elts for item in _items(element, show)]
    return [show(value)]


def _global_key(target: ast.expr) -> Optional[str]:
    """NAME in ``globals()["NAME"]`` or ``vars()["NAME"]``: a binding of NAME."""
    if not isinstance(target, ast.Subscript) or not _constant_str(target.slice):
        return None
    call = target.value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and not call.args:
        if call.func.id in ("globals", "vars", "locals"):
            return target.slice.value  # type: ignore[attr-defined]
    return None


def _constant_str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


# what holds the command line's options and the ini values pytest read
_OPTION_HOLDERS = {"option", "known_args_namespace", "_inicache", "inicfg"}


def _namespace_of(mapping: ast.expr, reader: _Reader) -> ast.expr:
    """The object whose attributes a mapping is: X for vars(X) and X.__dict__."""
    if isinstance(mapping, ast.Call) and reader.dotted(mapping.func) == "vars" and mapping.args:
        return mapping.args[0]
    if isinstance(mapping, ast.Attribute) and mapping.attr == "__dict__":
        return mapping.value
    return mapping


def _is_option(target: ast.Attribute, whole: bool = False) -> bool:
    """config.option.X, config.known_args_namespace.X, config.args; with
    ``whole``, also config.option itself (the namespace written through)."""
    if whole and target.attr in _OPTION_HOLDERS:
        return True
    chain: Set[str] = set()
    value: ast.expr = target.value
    while isinstance(value, ast.Attribute):
        chain.add(value.attr)
        value = value.value
    return bool(chain & _OPTION_HOLDERS) or (
        target.attr == "args" and isinstance(value, ast.Name) and "config" in value.id
    )


def _option_name(target: ast.Attribute) -> str:
    return f"option.{target.attr}" if target.attr != "args" else "config.args"


def _show(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:59] + "…"
