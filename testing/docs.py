"""The documentation's examples as tests: its fenced blocks, and its console
sessions run in a fresh folder and compared with what they show."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# ```lang or ~~~lang, with optional attributes after the language
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$", re.M)
SNIPPET = re.compile(r'^--8<-- "(?P<path>[^"]+)"$')
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)\1")
SHELL_LANGUAGES = {"sh", "bash", "shell", "zsh", "shell-session"}
# the languages a block may have: console is run, text is output, the rest parse
LANGUAGES = {"console", "text", "yaml", "toml", "json", "ini", "python", "dockerfile", "diff", "sh"}

# every session's environment: a fixed identity and clock for git, so commit ids
# are the same every run; nothing of the machine's git config or CI variables
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Alice Owner",
    "GIT_AUTHOR_EMAIL": "alice@example.com",
    "GIT_COMMITTER_NAME": "Alice Owner",
    "GIT_COMMITTER_EMAIL": "alice@example.com",
    "GIT_AUTHOR_DATE": "2026-09-25T09:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-09-25T09:00:00+00:00",
}


class Block(NamedTuple):
    page: str  # relative to the repository
    line: int  # of the opening fence, 1-based
    language: str
    body: str


def quick_start() -> List[str]:
    """The README's Quick start commands: the demo's, then the tests' (.ci/run's)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Quick start", 1)[1].split("\n## ", 1)[0]
    return [b.strip() for b in re.findall(r"```sh\n(.*?)```", section, re.S)]


@functools.cache
def reference() -> ModuleType:
    """docs/_generate/reference.py, the site's hook that writes the generated parts."""
    spec = importlib.util.spec_from_file_location("reference", DOCS / "_generate" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pages() -> List[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "_generate" not in p.parts)


def blocks(path: Path) -> Iterator[Block]:
    """The fenced blocks of a Markdown file (nested fences inside a longer one stay text)."""
    text = path.read_text(encoding="utf-8")
    relative = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    opened: Optional[Tuple[re.Match, int]] = None
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        if opened is None:
            opened = (match, line)
            continue
        start, start_line = opened
        closes = (
            match.group("fence")[0] == start.group("fence")[0]
            and len(match.group("fence")) >= len(start.group("fence"))
            and not match.group("info").strip()
        )
        if closes:
            body = text[start.end() + 1 : match.start()]
            indent = len(start.group("indent"))
            body = "".join(ln[indent:] for ln in body.splitlines(keepends=True))
            language = start.group("info").strip().split(" ", 1)[0].lstrip("{.").rstrip("}")
            if "<!-- generated: " in body:  # as the site shows it (contract.md's example)
                body = reference().expand(body, str(path.relative_to(DOCS)))
            yield Block(relative, start_line, language, body)
            opened = None
    if opened is not None:
        raise AssertionError(f"{relative}:{opened[1]}: a code fence that never closes")


SETTINGS = re.compile(r"^<!-- console: (?P<settings>\{.*\}) -->$", re.M)


def session_settings(path: Path) -> Dict:
    """A page's console settings: its first line, when that is an HTML comment
    ``<!-- console: {oracle_guard_clone: true, programs: [...]} -->`` (a comment,
    so neither GitHub nor the site shows it)."""
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    match = SETTINGS.match(first)
    if not match:
        return {}
    data = yaml.safe_load(match.group("settings"))
    unknown = set(data) - {"oracle_guard_clone", "programs", "work_from_example"}
    if unknown:
        raise AssertionError(f"{path}:1: unknown console settings {sorted(unknown)}")
    return data


# -- console sessions -----------------------------------------------------------------------


class Command(NamedTuple):
    line: int  # in the page
    text: str  # as bash gets it: continuation lines and heredoc bodies included
    expected: List[str]  # the output lines shown


def commands(block: Block) -> List[Command]:
    """A console block's commands: `$ ` lines, their continuations (a line ending in
    a backslash, a heredoc's body), and the output lines below each."""
    out: List[Command] = []
    lines = block.body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            if not out:
                raise AssertionError(
                    f"{block.page}:{block.line + 1 + i}: a console block starts with a "
                    f"'$ ' command, not {line!r}"
                )
            out[-1].expected.append(line)
            i += 1
            continue
        start = i
        text = [line[2:]]
        while text[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            text.append(lines[i])
        for heredoc in HEREDOC.finditer("\n".join(text)):
            while i + 1 < len(lines):
                i += 1
                text.append(lines[i])
                if lines[i] == heredoc.group("word"):
                    break
            else:
                raise AssertionError(f"{block.page}:{block.line + 1 + start}: an unended heredoc")
        out.append(Command(block.line + 1 + start, "\n".join(text), []))
        i += 1
    return out


# the programs a reader installed, from this environment; a page's settings may
# name fewer (<!-- console: {programs: [oracle-guard, pre-commit]} -->)
PROGRAMS = ("oracle-guard", "pre-commit", "prek")


def session_environment(home: Path, programs: Tuple[str, ...] = PROGRAMS) -> Dict[str, str]:
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = master\n")
    bin_dir = home.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    for program in programs:
        if program not in PROGRAMS:
            raise AssertionError(f"console.programs: {program!r} is not one of {PROGRAMS}")
        (bin_dir / program).symlink_to(Path(sys.executable).parent / program)
    env = {
        "PATH": os.pathsep.join([str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": str(home.parent / "tmp"),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PRE_COMMIT_COLOR": "never",
        "NO_COLOR": "1",
        **GIT_IDENTITY,
    }
    Path(env["TMPDIR"]).mkdir(exist_ok=True)
    return env


SEPARATOR = "\x1e"  # between two commands' output: a byte no example prints


@contextlib.contextmanager
def page_home(page: Path) -> Iterator[Path]:
    """The same home folder for a page every run, held by one run at a time: what a
    session writes with its absolute path in it (a local clone as pre-commit's
    repo:) must hash to the same commit ids every time."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(page.relative_to(ROOT)).lower()).strip("-")
    folder = Path(tempfile.gettempdir()) / "oracle-guard-docs" / slug
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for leftover in ("home", "bin", "tmp"):
            shutil.rmtree(folder / leftover, ignore_errors=True)
        try:
            yield folder / "home"
        finally:
            for made in ("home", "bin", "tmp"):
                shutil.rmtree(folder / made, ignore_errors=True)


def run_session(
    page: Path, home: Path, timeout: float = 600, settings: Optional[Dict] = None
) -> List[Tuple[Command, List[str]]]:
    """Every console block of ``page`` in one bash process, from ``~/work``: each
    command with the output lines it printed (the home folder shown as ``~``).
    ``settings`` are the page's own (session_settings) unless given."""
    cmds = [c for b in blocks(page) if b.language == "console" for c in commands(b)]
    home.mkdir(parents=True, exist_ok=True)
    if settings is None:
        settings = session_settings(page)
    env = session_environment(home, tuple(settings.get("programs", PROGRAMS)))
    (home / "work").mkdir()
    clone = settings.get("oracle_guard_clone")
    if clone not in (None, False, True, "untagged"):
        raise AssertionError(f"console.oracle_guard_clone: {clone!r} is not true or untagged")
    if clone:
        clone_oracle_guard(home / "oracle-guard", tagged=clone is True)
    if settings.get("work_from_example"):
        example_repository(home / "work", settings["work_from_example"], env)
    script = ["exec 2>&1", "cd ~/work"]
    for n, cmd in enumerate(cmds):
        script += [f"printf '{SEPARATOR}%s{SEPARATOR}' {n}", cmd.text]
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc"],
        input="\n".join(script) + "\n",
        stdout=subprocess.PIPE,
        cwd=home,
        env=env,
        text=True,
        errors="backslashreplace",
        timeout=timeout,
    )
    printed = proc.stdout.replace(str(home), "~").split(SEPARATOR)
    # '', '0', output of 0, '1', output of 1, ...
    outputs = printed[2::2]
    if len(outputs) < len(cmds):
        outputs += [f"(the session ended before this command: exit {proc.returncode})"] * (
            len(cmds) - len(outputs)
        )
    return [
        (cmd, [ln.rstrip() for ln in out.rstrip("\n").splitlines()])
        for cmd, out in zip(cmds, outputs)
    ]


def example_repository(work: Path, layout: str, env: Dict[str, str]) -> None:
    """``work`` as a repository of examples/LAYOUT before oracle-guard: its files
    committed, without the contract."""
    shutil.copytree(ROOT / "examples" / layout, work, dirs_exist_ok=True)
    (work / ".oracle-guard.yaml").unlink()
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "."],
        ["commit", "-qm", "before oracle-guard"],
    ):
        subprocess.run(["git", *args], cwd=work, env=env, check=True)


def clone_oracle_guard(dest: Path, tagged: bool = True) -> None:
    """What a reader who followed the Quick start has: a clone of this checkout,
    with this version's tag; ``tagged=False``: with no tag at all, as a clone of a
    mirror may be."""
    from oracle_guard import __version__
    from testing.checkout import snapshot_checkout
    from testing.git import git

    snapshot_checkout(dest)
    git(dest, "tag", "-d", "v-test")
    if tagged:
        git(dest, "tag", "-a", "-m", f"oracle-guard {__version__}", f"v{__version__}")


def matches(expected: List[str], printed: List[str]) -> bool:
    """Line for line, trailing spaces aside; a line that is exactly '...' stands
    for any number of lines."""
    expected = [ln.rstrip() for ln in expected]
    while expected and not expected[-1]:
        expected.pop()
    return _match(expected, printed)


def _match(expected: List[str], printed: List[str]) -> bool:
    while expected and expected[0] != "...":
        if not printed or printed[0] != expected[0]:
            return False
        expected, printed = expected[1:], printed[1:]
    if not expected:
        return not printed
    rest = expected[1:]
    return any(_match(rest, printed[i:]) for i in range(len(printed) + 1))


# -- what a block may be ---------------------------------------------------------------------


def tested_files() -> str:
    """The tests' source, where a file a page shows must be named to count as tested."""
    return "".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py"))


def block_problems(block: Block, tests_source: str) -> List[str]:
    """Why a fenced block breaks the documentation's rules (nothing when it keeps them)."""
    where = f"{block.page}:{block.line}"
    if block.language not in LANGUAGES:
        return [
            f"{where}: a ```{block.language} block: use console (run), text (output) or a "
            f"file's language ({', '.join(sorted(LANGUAGES - {'console', 'text'}))})"
        ]
    body = block.body.strip()
    snippet = SNIPPET.match(body)
    if snippet:
        path = snippet.group("path")
        if not (ROOT / path).is_file():
            return [f"{where}: includes {path}, which is not a file of the repository"]
        if block.language == "sh" and path not in tests_source:
            return [f"{where}: shows {path}, which no test under tests/ names"]
        body = (ROOT / path).read_text(encoding="utf-8")
    elif block.language == "sh":
        return [
            f"{where}: a ```sh block runs nowhere: make it a console session (run by "
            "tests/docs_test.py), or include a file a test runs"
        ]
    try:
        parse(block.language, body)
    except Exception as error:  # any parser's error is the finding
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return [f"{where}: the {block.language} block does not parse: {first}"]
    return []


def parse(language: str, body: str) -> None:
    if language == "yaml":
        data = yaml.safe_load(body)
        if isinstance(data, dict) and next(iter(data), None) == "version":
            from oracle_guard.contract import parse as parse_contract

            parse_contract(body.encode())
    elif language == "json":
        import json

        json.loads(body)
    elif language == "toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:
            import tomli as tomllib
        tomllib.loads(body)
    elif language == "python":
        compile(body, "<docs>", "exec")


# -- python -m testing.docs PAGE [--write] ---------------------------------------------------


def rewrite_outputs(page: Path, ran: List[Tuple[Command, List[str]]]) -> int:
    """Put what each command printed under it in the page, where the page shows
    something else; the number of commands rewritten. Review the diff: a page must
    show what is meant, not only what is printed."""
    lines = page.read_text(encoding="utf-8").split("\n")
    changed = 0
    for command, printed in reversed(ran):  # from the end: earlier line numbers hold
        if matches(command.expected, printed):
            continue
        first = command.line - 1 + command.text.count("\n") + 1
        end = first
        while end < len(lines) and not lines[end].startswith(("$ ", "```")):
            end += 1
        lines[first:end] = printed
        changed += 1
    page.write_text("\n".join(lines), encoding="utf-8")
    return changed


def main(argv: List[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m testing.docs",
        description="Run a docs page's console sessions as tests/docs_test.py does.",
    )
    parser.add_argument("page", type=Path)
    parser.add_argument(
        "--write", action="store_true", help="put what was printed into the page where it differs"
    )
    options = parser.parse_args(argv)
    page = options.page.resolve()
    with page_home(page) as home:
        ran = run_session(page, home)
    if options.write:
        print(f"{rewrite_outputs(page, ran)} commands' output rewritten in {options.page}")
        return 0
    differ = 0
    for command, printed in ran:
        same = matches(command.expected, printed)
        differ += not same
        print(f"{options.page}:{command.line}: {'same' if same else 'DIFFERS'}")
        print("$ " + command.text)
        print("\n".join(printed))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
