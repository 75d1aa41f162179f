"""The byte prefilter: can a file's bytes hold a mark at all?

A file it lets through unread is only compiled; it must never change what a
full reading finds (tests/adversarial/prefilter_test.py holds that)."""

from __future__ import annotations

import re

from oracle_guard.checks.test_tamper.names import (
    SHARED_READERS,
    TEST_FUNCTION_ATTRIBUTES,
    TEST_ITEMS,
    OracleOf,
)

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
    expectedFailure collect_ignore collect_ignore_glob flaky methodcaller""".split()
)
_ITEMS = frozenset(name.encode() for name in TEST_ITEMS)
_TEST_FUNCTIONS = frozenset(name.encode() for name in TEST_FUNCTION_ATTRIBUTES)
_SHARED_READERS = frozenset(name.encode() for name in SHARED_READERS)
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
# written, a star import
_FRAMEWORK_WRITE = re.compile(rb"pytest\.[\w.]*[ \t]*=(?!=)")
_UNITTEST_WRITE = re.compile(rb"unittest\.[\w.]*[ \t]*=(?!=)")
_SESSION_ITEMS = re.compile(rb"session\s*\.\s*items")
_STAR = re.compile(rb"import[ \t(]+\*")
# a parameter set: what syntax.is_empty takes for empty has one of these in its
# bytes (an empty literal as a value, [1] * 0, list(), range(0), a comprehension
# over nothing or under a constant false if); a file that has none holds no empty set
_PARAMETERS = re.compile(rb"(?:params|argvalues)\s*=")
_GAP = rb"(?:\s|#[^\n]*)*"
_EMPTY_SET = re.compile(
    rb"(?:[,=(\[*+]|\bin)" + _GAP + rb"(?:\[" + _GAP + rb"\]|\(" + _GAP + rb"\)|\{" + _GAP + rb"\})"
    rb"|\*\s*0\b|\b0\s*\*"
    rb"|\b(?:list|tuple|set|frozenset|sorted|reversed|iter|dict)\(" + _GAP + rb"\)"
    rb"|\bif\s+(?:False|None|0|''|\"\")"
)


# A string's value is its bytes unless an escape spells a character in others
# ("_\x65xit") or literals side by side join ("_ex" "it", across lines and
# comments in parentheses). An escape, or a comment holding a quote right after
# a string, sends the file to the parser; joins are undone (every quote, gap,
# prefix and quote run removed) and the joined bytes are looked at too. Each
# pattern starts at a quote and scans no quote in its gap: linear in the file.
_ESCAPE = re.compile(rb"\\[xuUN0-7]")
_QUOTED_COMMENT = re.compile(rb"""['"][ \t\f]*#[^\r\n]*['"]""")
_JOIN = re.compile(
    rb"""['"][ \t\f]*(?:(?:#[^\r\n'"]*)?\\?(?:\r\n?|\n)[ \t\f]*)*[rRbBuUfF]{0,2}['"]"""
)


def triggered(data: bytes, oracle_of: OracleOf, conftest: bool = True) -> bool:
    """Could the file hold a mark? A file that cannot is only compiled."""
    if b"'" not in data and b'"' not in data:
        return _triggered(data, oracle_of, conftest)
    if _ESCAPE.search(data) or _QUOTED_COMMENT.search(data):
        return True
    if _triggered(data, oracle_of, conftest):
        return True
    joined = _JOIN.sub(b"", data)
    return joined != data and _triggered(joined, oracle_of, conftest)


def _triggered(data: bytes, oracle_of: OracleOf, conftest: bool) -> bool:
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
    parameters = b"parametrize" in words or (
        (b"params" in words or b"argvalues" in words) and _PARAMETERS.search(data)
    )
    if parameters and (_EMPTY_SET.search(data) or _empty_range(data)):
        return True
    if not _ITEMS.isdisjoint(words) and not _TEST_FUNCTIONS.isdisjoint(words):
        return True  # request.node.obj = ...: the function a test runs, replaced
    if conftest and not _SHARED_READERS.isdisjoint(words):
        return True  # a conftest that replaces time.* or random.* for every module
    if _imports_oracle(data, oracle_of):
        return True
    # a patch reaches the oracle through an import (above) or a name in a string
    if not any(word in data for word in _PATCHES):
        return False
    return _patches_framework(data) or _names_oracle_in_strings(data, oracle_of)


# what a patch call patches: the first name of its first argument (a comment or a
# quote before it allowed), and the names a file binds to pytest, unittest or pluggy
_PATCHED = re.compile(
    rb"""(?:setattr|delattr|setitem|delitem|object|patch|dict)\s*\((?:\s|#[^\n]*)*['"]?([A-Za-z_]\w*)"""
)
_FRAMEWORKS = frozenset((b"pytest", b"_pytest", b"unittest", b"pluggy"))
_ANY_IMPORT = re.compile(
    rb"(?:^|[;\s])(?:from[ \t]+(?P<module>[\w.]+)[ \t]+)?import[ \t]+(?P<names>[^#;\n]*)"
)


def _patches_framework(data: bytes) -> bool:
    """Could a patch call patch pytest, unittest or pluggy themselves (pytest.approx,
    unittest.TestCase.run), under their names or names bound to them?"""
    targets = {match.group(1) for match in _PATCHED.finditer(data)}
    if not targets:
        return False
    if not _FRAMEWORKS.isdisjoint(targets):
        return True
    for match in _ANY_IMPORT.finditer(data):
        module, names = match["module"], match["names"]
        words = names.replace(b",", b" ").split()
        tops = [module] if module is not None else words
        if _FRAMEWORKS.isdisjoint(top.split(b".")[0] for top in tops):
            continue
        if b"(" in names or b"\\" in names:
            return True  # a list over several lines: read the file properly
        if not targets.isdisjoint(words):
            return True
    return False


_INT = rb"(\d\w*)"
_RANGE = re.compile(
    rb"\brange\("
    + _GAP
    + _INT
    + _GAP
    + rb"(?:,"
    + _GAP
    + _INT
    + _GAP
    + rb"(?:,"
    + _GAP
    + _INT
    + _GAP
    + rb")?)?,?"
    + _GAP
    + rb"\)"
)


def _empty_range(data: bytes) -> bool:
    """range(...) of integer literals that is empty (range(0), range(3, 3)); one
    whose literals this cannot read counts as empty."""
    for match in _RANGE.finditer(data):
        try:
            bounds = [int(g.decode("ascii"), 0) for g in match.groups() if g is not None]
            if len(bounds) == 3 and bounds[2] == 0:
                continue  # a ValueError where it runs: no parameter set
            if len(range(*bounds)) == 0:
                return True
        except ValueError:
            return True
    return False


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


def plain(data: bytes) -> bool:
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
