"""test-tamper: did the change leave how the suite collects, runs and scores its tests alone?

It judges the change only: each Python file the candidate adds or modifies in
the scoring tree (``tamper.paths``, and every conftest.py) is read with the
standard library's ast, and so is the base's file at that path (or the file a
new one was moved from); a mark is new when the candidate holds more of it
than the base did, and a changed file that cannot be read is reported however
the base's was. pytest's configuration files are compared option by option
(options.py). Nothing is imported or run."""

from __future__ import annotations

import datetime
import hashlib
import json
import posixpath
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple

from oracle_guard.checks.test_tamper import moves, options
from oracle_guard.checks.test_tamper.marks import Mark, new_marks, package_of
from oracle_guard.checks.test_tamper.names import FRAMEWORKS
from oracle_guard.checks.test_tamper.sample import SAMPLE  # noqa: F401 (Check.sample())
from oracle_guard.checks.test_tamper.startup import start_up_file
from oracle_guard.checks.test_tamper.stdlib import STDLIB_MODULES
from oracle_guard.contract import Contract
from oracle_guard.findings import Finding
from oracle_guard.git.objects import MODE_GITLINK, MODE_SYMLINK, BlobTooLarge, Entry
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.snapshot import Snapshot, changes

HOOK = "test-tamper"
COMPILED = (".pyc", ".pyo", ".so", ".pyd")  # code that runs but cannot be read here


class Scope(NamedTuple):
    """What the contract's ``tamper`` section (and the rest of it) says."""

    paths: PatternSet
    hermetic: PatternSet
    allow: List[Tuple[str, PatternSet]]
    oracle: PatternSet  # the files the contract protects: the oracle's code among them
    oracle_patterns: Tuple[str, ...]
    limit: int
    frozen: Optional[PatternSet] = None  # tamper.frozen_tests: existing tests are oracle

    @classmethod
    def of(cls, contract: Contract) -> Scope:
        section = contract.section("tamper")
        # what the write set protects: the oracle's code among it
        protected = list(dict.fromkeys(pattern for pattern, _, _ in contract.protections()))
        return cls(
            PatternSet(section["paths"]),
            PatternSet(section.get("hermetic", [])),
            [(entry["rule"], PatternSet([entry["path"]])) for entry in section.get("allow", [])],
            PatternSet(protected),
            tuple(protected),
            contract.limit("test_bytes"),
            PatternSet(section["frozen_tests"]) if "frozen_tests" in section else None,
        )

    def is_python(self, path: str) -> bool:
        """Test code wherever it is: in the scoring tree, every conftest.py, and
        every module pytest collects by its default names (test_*.py, *_test.py),
        letter case as a case-insensitive checkout (macOS, Windows) sees it."""
        name = path.rpartition("/")[2].lower()
        if not name.endswith(".py"):
            return False
        collected = name.startswith("test_") or name.endswith("_test.py")
        return self.tree(path) or name == "conftest.py" or collected

    def is_doctest(self, path: str) -> bool:
        """A text file pytest runs as a doctest by default (--doctest-glob test*.txt)."""
        name = path.rpartition("/")[2].lower()
        return name.startswith("test") and name.endswith(".txt")

    def tree(self, path: str) -> bool:
        return self.paths.matches(path) or self.hermetic.matches(path)

    def allowed(self, rule: str, path: str) -> bool:
        return any(rule == allowed and where.matches(path) for allowed, where in self.allow)


def check(
    contract: Contract, base: Snapshot, candidate: Snapshot, now: datetime.datetime
) -> List[Finding]:
    scope = Scope.of(contract)
    reader = _Reader(scope)
    # the frameworks the repository is itself, as the base holds them: a change
    # cannot make one its own
    reader.own = frozenset(
        name
        for name in FRAMEWORKS
        if any(base.entry(f"{top}{name}/__init__.py") for top in ("", "src/"))
    )
    found: List[Tuple[str, Mark]] = []
    changed = changes(base, candidate)
    gone = {
        path: before
        for path, before, after in changed
        if after is None and before is not None and before.is_regular and scope.is_python(path)
    }
    reader.read_ahead(
        candidate,
        [(p, a) for p, _, a in changed if a is not None and a.is_regular and scope.is_python(p)],
    )
    tests: List[Tuple[str, Mark]] = []  # test code's new marks
    configs: Dict[str, Optional[Entry]] = {}  # changed configuration files: their base entry
    for path, before, after in changed:
        if after is None:
            if before is not None and before.is_regular and options.is_config(path):
                configs[path] = before  # a deleted configuration: what pytest reads instead
            continue
        startup = start_up_file(path, after, candidate, scope.limit)
        if startup is not None:
            found.append((path, startup))
            continue
        if _is_source(path, after, scope):
            found += [
                (path, m) for m in _source_marks(path, before, after, base, candidate, reader)
            ]
            continue
        is_config = options.is_config(path)
        compiled = path.lower().endswith(COMPILED)  # runs from anywhere a module is found
        doctest = scope.is_doctest(path)
        if not (scope.is_python(path) or is_config or scope.tree(path) or compiled or doctest):
            continue
        problem = _not_judgeable(path, after, scope, candidate)
        if problem is not None:
            found.append((path, Mark("test-unparsable", 1, "file", "", problem)))
            continue
        if is_config:
            configs[path] = before  # judged below, by what pytest reads
            continue
        if doctest and after.is_regular:
            found += [
                (path, m) for m in _doctest_marks(path, before, after, base, candidate, reader)
            ]
            continue
        if not scope.is_python(path):
            continue  # data beside the tests
        if before is None and scope.tree(path):
            found += [(path, m) for m in _shadowing(path, candidate, reader)]
        marks = reader.marks(candidate, path, after)
        if not marks:
            continue  # nothing for the base to hold: its file need not be read
        old_path, old = (
            (path, before)
            if before is not None and before.is_regular
            else moves.moved_from(path, after, gone, base, candidate, reader)
        )
        old_marks = reader.marks(base, old_path, old) if old is not None else []
        unjudged = [m for m in marks if m.rule == "test-unparsable"]
        if unjudged and (old is None or old.oid != after.oid):
            # whatever the change wrote cannot be read, though the base's could not either
            found += [(path, m) for m in unjudged]
            continue
        new = new_marks(old_marks, marks)
        if any(mark.rule == "skip-added" for mark in new):  # by meaning, across files
            from oracle_guard.checks.test_tamper import meaning  # cold: a skip looks new

            new = meaning.renew(old_marks, marks, base, candidate, scope.limit)
        tests += [(path, mark) for mark in new]
    tests = moves.skips_moved_dropped(
        tests, changed, base, candidate, scope.is_python, reader.marks
    )
    if configs:
        from oracle_guard.checks.test_tamper import effective  # cold: a configuration changed

        def per_file(path: str) -> List[Mark]:
            gone = candidate.entry(path) is None
            return _config_marks(path, configs[path], None if gone else candidate, base, scope)

        added = {path for path, before in configs.items() if before is None}
        found += effective.marks(set(configs), added, base, candidate, scope.limit, per_file)
    found += moves.skips_on_new_tests(tests, changed, base, candidate, scope.frozen, reader.tests)
    found += _frozen_skipped(contract, candidate, scope, reader)
    if scope.frozen is not None:
        from oracle_guard.checks.test_tamper import frozen  # cold: only with frozen_tests

        found += frozen.marks(scope.frozen, base, candidate, scope.limit)
    return [
        Finding(
            HOOK,
            mark.rule,
            path,
            mark.message,
            mark.line,
            _severity(mark.rule),
        )
        for path, mark in found
        if not scope.allowed(mark.rule, path)
    ]


def _doctest_marks(
    path: str,
    before: Optional[Entry],
    after: Entry,
    base: Snapshot,
    candidate: Snapshot,
    reader: _Reader,
) -> List[Mark]:
    """A doctest file's examples, read as the Python they run; what the base's
    examples held is not new."""
    new = reader.doctest_marks(candidate, path, after)
    if not new:
        return []
    old = reader.doctest_marks(base, path, before) if before is not None else []
    return new_marks(old, new)


def _shadowing(path: str, candidate: Snapshot, reader: _Reader) -> List[Mark]:
    """A new module whose name, from a folder pytest puts on sys.path, is that of a
    module outside the scoring tree (the oracle's, or the code under test's):
    ``tests/oracle/invariants.py`` is ``oracle.invariants`` to a test that imports
    it with tests/ on the path (pytest's default import mode)."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    for start in range(1, len(parts)):
        names = parts[start:]
        if not all(name.isidentifier() for name in names):
            continue
        folder = "/".join(parts[:start])
        if candidate.entry(f"{folder}/__init__.py") is not None:
            continue  # a package: pytest puts a folder above it on sys.path, not this one
        module = ".".join(names)
        if names[-1] == "conftest":
            continue  # pytest imports each conftest.py by its own path
        real = reader.module_file(candidate, module)
        if real is None and len(names) == 1:
            installed = _installed_shadowed(module, folder, candidate, reader)
            if installed is not None:
                return [installed]
        if real is None or real == path or reader.scope.tree(real):
            continue
        pattern = reader.oracle_of(module)
        whose = (
            f"the oracle's module, which the contract protects ({pattern!r})"
            if pattern
            else (f"the module in {real}")
        )
        return [
            Mark(
                "module-shadowed",
                1,
                f"shadows {module}",
                "",
                f"shadows {module}, {whose}: with {folder}/ on sys.path, importing {module} "
                "gets this file",
            )
        ]
    return []


def _installed_shadowed(
    module: str, folder: str, candidate: Snapshot, reader: _Reader
) -> Optional[Mark]:
    """A new top-level module named as a standard-library module, or as one the
    oracle's Python files import that the tree does not hold (an installed one):
    with the folder first on sys.path, every module that imports it gets this file."""
    if module in STDLIB_MODULES:
        whose = "a standard-library module"
    elif module in reader.oracle_imports(candidate):
        whose = "an installed module the oracle's code imports"
    else:
        return None
    return Mark(
        "module-shadowed",
        1,
        f"shadows {module}",
        "",
        f"shadows {module}, {whose}: with {folder}/ on sys.path, importing {module} gets this "
        "file, in the code under test and the oracle too",
    )


def _is_source(path: str, entry: Entry, scope: Scope) -> bool:
    """Python the code under test is written in: outside the scoring tree, and no
    test module or conftest (those get the test reading)."""
    return (
        path.lower().endswith(".py")
        and entry.is_regular
        and not scope.is_python(path)
        and not options.is_config(path)
    )


def _source_marks(
    path: str,
    before: Optional[Entry],
    after: Entry,
    base: Snapshot,
    candidate: Snapshot,
    reader: _Reader,
) -> List[Mark]:
    """The source-side marks (source.py) the candidate's file holds beyond the base's."""
    from oracle_guard.checks.test_tamper import source  # cold: a changed source file

    scope = reader.scope

    def protected(text: str) -> Optional[str]:
        pattern = scope.oracle.first_match(text)
        if pattern is not None:
            return f"the contract protects ({pattern!r})"
        return "lies in the scoring tree (tamper.paths)" if scope.tree(text) else None

    def read(snapshot: Snapshot, entry: Entry) -> List[Mark]:
        try:
            data = snapshot.read(path, scope.limit)
        except BlobTooLarge as exc:
            return [_too_large(exc, scope)]
        return source.marks(data, package_of(path), reader.oracle_of, protected)

    new = read(candidate, after)
    if not new:
        return []
    old = read(base, before) if before is not None and before.is_regular else []
    return new_marks(old, new)


def _severity(rule: str) -> str:
    return "warning" if rule == "frozen-skipped" else "error"


def _not_judgeable(path: str, entry: Entry, scope: Scope, candidate: Snapshot) -> Optional[str]:
    if entry.mode == MODE_SYMLINK and not _link_within(path, entry, scope, candidate):
        return (
            "is a symlink (mode 120000): pytest follows it, and test code is judged as "
            "regular files only"
        )
    if entry.mode == MODE_GITLINK:
        return "is a submodule (mode 160000): its test code cannot be judged from this repository"
    if path.lower().endswith(COMPILED):
        return "is compiled code: it can run in the suite but cannot be read; commit the source"
    return None


def _link_within(path: str, entry: Entry, scope: Scope, candidate: Snapshot) -> bool:
    """A relative symlink to data inside the scoring tree (certificates, a data
    folder): what it points at is judged under its own path. A link named as
    test code, or pointing out of the tree, is not."""

    name = path.rpartition("/")[2].lower()
    if scope.is_python(path) or scope.is_doctest(path) or options.is_config(path):
        return False
    if name.endswith(".py") or name == "conftest.py":
        return False
    try:
        target = candidate.read(path, 4096).decode("utf-8")
    except (BlobTooLarge, UnicodeDecodeError):
        return False
    if target.startswith("/"):
        return False
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if resolved == ".." or resolved.startswith("../"):
        return False
    return scope.tree(resolved) or scope.tree(resolved + "/x")


def _config_marks(
    path: str,
    before: Optional[Entry],
    candidate: Optional[Snapshot],
    base: Snapshot,
    scope: Scope,
) -> List[Mark]:
    """The options the candidate's file (None: it is deleted) sets or drops."""
    data = b""
    if candidate is not None:
        try:
            data = candidate.read(path, scope.limit)
        except BlobTooLarge as exc:
            return [_too_large(exc, scope)]
    old: Optional[bytes] = None
    if before is not None and before.is_regular:
        try:
            old = base.read(path, scope.limit)
        except BlobTooLarge:
            old = None  # judged as new: every option it sets counts
    marks = options.changed_options(
        path, old, data, replaces=lambda: _replaces_a_configuration(path, base, scope)
    )
    return marks


def _replaces_a_configuration(path: str, base: Snapshot, scope: Scope) -> bool:
    """Did pytest read another configuration file in the base for runs in this
    file's folder: one in the same folder or above it?"""
    folder = path.rpartition("/")[0]
    for other, entry in base.entries.items():
        if other == path or not entry.is_regular or not options.is_config(other):
            continue
        above = other.rpartition("/")[0]
        if above == folder or above == "" or folder.startswith(above + "/"):
            try:
                if options.counts(other, base.read(other, scope.limit)):
                    return True
            except BlobTooLarge:
                return True  # not read: taken to count
    return False


def _too_large(exc: BlobTooLarge, scope: Scope) -> Mark:
    return Mark("test-unparsable", 1, "size", "", f"{exc}: limits.test_bytes is {scope.limit}")


class _Reader:
    """The marks of a file, cached by its blob id and what else made them."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self._oracle: Dict[str, Optional[str]] = {}
        self._texts: Dict[str, Optional[bytes]] = {}
        self._oracle_imports: Optional[FrozenSet[str]] = None
        self.own: FrozenSet[str] = frozenset()  # the frameworks the repository is itself

    def oracle_of(self, module: str) -> Optional[str]:
        if module not in self._oracle:
            stem = module.replace(".", "/")
            forms = [f"{stem}.py", f"{stem}/__init__.py"]
            forms += [f"src/{form}" for form in forms]
            matched = (self.scope.oracle.first_match(form) for form in forms)
            self._oracle[module] = next((m for m in matched if m is not None), None)
        return self._oracle[module]

    def doctest_marks(self, snapshot: Snapshot, path: str, entry: Entry) -> List[Mark]:
        try:
            data = snapshot.read(path, self.scope.limit)
        except BlobTooLarge as exc:
            return [_too_large(exc, self.scope)]
        from oracle_guard.checks.test_tamper import python  # the ast reader: cold work only

        source = python.doctest_source(data)
        hermetic = self.scope.hermetic.matches(path)
        found = python.marks(source, package_of(path), hermetic, self.oracle_of)
        return found + python.doctest_skips(data)

    def oracle_imports(self, snapshot: Snapshot) -> FrozenSet[str]:
        """The top-level modules the oracle's Python files import by absolute name."""
        if self._oracle_imports is None:
            import ast  # cold work: only for a new top-level module in the tree

            names: Set[str] = set()
            for path in snapshot.select(self.scope.oracle):
                if not path.endswith(".py"):
                    continue
                try:
                    tree = ast.parse(snapshot.read(path, self.scope.limit))
                except (BlobTooLarge, SyntaxError, ValueError, RecursionError, MemoryError):
                    continue  # an oracle file that cannot be read imports nothing seen here
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        names.update(alias.name.split(".")[0] for alias in node.names)
                    elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                        names.add(node.module.split(".")[0])
            self._oracle_imports = frozenset(names)
        return self._oracle_imports

    def module_file(self, snapshot: Snapshot, module: str) -> Optional[str]:
        """The file the snapshot holds for a module (or its package's __init__)."""
        stem = module.replace(".", "/")
        forms = [f"{stem}.py", f"{stem}/__init__.py"]
        return next(
            (form for form in forms + [f"src/{f}" for f in forms] if snapshot.entry(form)), None
        )

    def text(self, snapshot: Snapshot, path: str, entry: Entry) -> Optional[bytes]:
        if entry.oid not in self._texts:
            try:
                self._texts[entry.oid] = snapshot.read(path, self.scope.limit)
            except BlobTooLarge:
                self._texts[entry.oid] = None
        return self._texts[entry.oid]

    def tests(self, snapshot: Snapshot, path: str, entry: Entry) -> Optional[FrozenSet[str]]:
        data = self.text(snapshot, path, entry)
        return moves.test_names(data) if data is not None else None

    def key(self, path: str, entry: Entry) -> str:
        """The cache's key for a file's marks: its blob, and what else made them."""
        package = package_of(path)
        hermetic = self.scope.hermetic.matches(path)
        conftest = path.rpartition("/")[2].lower() == "conftest.py"
        made_of = json.dumps(
            [package, hermetic, conftest, self.scope.oracle_patterns, self.scope.limit]
            + sorted(self.own)
        )
        return f"{entry.oid}:{hashlib.sha256(made_of.encode()).hexdigest()}"

    def read_ahead(self, snapshot: Snapshot, files: List[Tuple[str, Entry]]) -> None:
        """The files whose marks the cache lacks, read in a few round trips."""
        cache = snapshot.cache
        wanted = [
            path for path, entry in files if cache.get("tamper", self.key(path, entry)) is None
        ]
        snapshot.read_ahead(wanted, self.scope.limit)

    def marks(self, snapshot: Snapshot, path: str, entry: Entry) -> List[Mark]:
        package = package_of(path)
        hermetic = self.scope.hermetic.matches(path)
        conftest = path.rpartition("/")[2].lower() == "conftest.py"
        key = self.key(path, entry)
        cache = snapshot.cache
        cached = cache.get("tamper", key)
        if cached is not None:
            return [Mark(*each) for each in cached]
        try:
            data = snapshot.read(path, self.scope.limit)
        except BlobTooLarge as exc:
            found = [_too_large(exc, self.scope)]
        else:
            from oracle_guard.checks.test_tamper import python  # the ast reader: cold work only

            self._texts[entry.oid] = data
            found = python.marks(data, package, hermetic, self.oracle_of, conftest, self.own)
        cache.put("tamper", key, [list(mark) for mark in found])
        return found


def _frozen_skipped(
    contract: Contract, candidate: Snapshot, scope: Scope, reader: _Reader
) -> List[Tuple[str, Mark]]:
    """A frozen test that is still collected, with a skip marker: the freeze file
    is the record, and the harness asks for exclusion, not a skip. Ids map to
    files statically: a node id names its file, a property id is a module stem."""
    if not contract.section("freeze"):
        return []
    # deferred: under 1 ms to import, only for _frozen_skipped()
    from oracle_guard.checks import freeze_files

    state = freeze_files.load(contract, candidate, HOOK)
    out: List[Tuple[str, Mark]] = []
    stems: Dict[str, List[Any]] = {}
    for frozen in state.entries:
        if "::" in frozen.id:
            path, _, rest = frozen.id.partition("::")
            target = ".".join(part.partition("[")[0] for part in rest.split("::"))
            out += _skips_of(candidate, path, target, frozen, scope, reader)
        elif "/" not in frozen.id:
            stems.setdefault(frozen.id, []).append(frozen)
    if stems:
        for path in candidate.select(scope.paths):
            stem = path.rpartition("/")[2][:-3] if path.endswith(".py") else None
            for name in (stem, stem[5:] if stem and stem.startswith("test_") else None):
                for frozen in stems.get(name or "", []):
                    out += _skips_of(candidate, path, "", frozen, scope, reader)
    return out


def _skips_of(
    candidate: Snapshot, path: str, target: str, frozen: Any, scope: Scope, reader: _Reader
) -> List[Tuple[str, Mark]]:
    entry = candidate.entry(path)
    if entry is None or not entry.is_regular or not scope.is_python(path):
        return []
    out = []
    for mark in reader.marks(candidate, path, entry):
        if mark.rule != "skip-added":
            continue
        on_target = not target or mark.scope == target or target.startswith(mark.scope + ".")
        if mark.scope == "" or on_target:
            out.append(
                (
                    path,
                    Mark(
                        "frozen-skipped",
                        mark.line,
                        mark.subject,
                        mark.scope,
                        f"{frozen.id!r} is frozen in {frozen.path}, yet still collected with "
                        f"{mark.subject}: exclude it from collection instead",
                    ),
                )
            )
    return out
