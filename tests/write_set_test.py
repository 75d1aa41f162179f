import json
import subprocess
import sys

import pytest

from oracle_guard.git.objects import MODE_GITLINK, Entry
from oracle_guard.git.plumbing import Git
from oracle_guard.snapshot import GitSnapshot, Snapshot, changes
from testing import oracle
from testing.git import commit, git, init_repo, run_guard, stage, write
from testing.oracle import NOW
from testing.trees import MemoryRepo, gitlink, memory

CONTRACT = oracle.GUARDED_SEEDS

BASE_FILES = {
    ".oracle-guard.yaml": CONTRACT,
    "src/app.py": "print('hi')\n",
    "tests/app_test.py": "def test(): pass\n",
    "README.md": "# app\n",
    "oracle/expected.json": {"answer": 42},
    "seeds/a.json": [1, 2],
}


def guarded_repo(files=None):
    """HEAD holds ``files`` (the guarded base by default); the index starts as HEAD."""
    repo = MemoryRepo()
    repo.commit(files or BASE_FILES)
    return repo


def guarded_git_repo(tmp_path, files=None):
    """The same in a real repository: for case folding and names as git's index holds
    them, and for revisions git names."""
    repo = init_repo(tmp_path / "r")
    commit(repo, files or BASE_FILES, message="base")
    return repo


def write_set(repo, fmt="text"):
    return repo.check("write-set", now=NOW, fmt=fmt)


def write_set_git(capsys, repo, *args, env=None):
    return run_guard(capsys, repo, "check", "--only", "write-set", *args, env=env)


def finding_lines(out):
    return sorted(line for line in out.splitlines() if ": write-" in line)


def add_cacheinfo(repo, path, content=b"x\n", mode="100644"):
    """Stage ``path`` (bytes: any name git allows, kept as git's -z plumbing decodes it)."""
    name = path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else path
    repo.stage(
        {
            name: gitlink(memory({"x": content}).entry("x").oid)
            if mode == MODE_GITLINK
            else (mode, content)
        }
    )


def add_git_cacheinfo(repo, path, content=b"x\n", mode="100644"):
    """Stage a blob under ``path`` (bytes: any name git allows) without a working-tree file."""
    oid = git(repo, "hash-object", "-w", "--stdin", input=content).strip()
    raw = path if isinstance(path, bytes) else path.encode()
    # -z --index-info takes the name as raw bytes: newlines and invalid UTF-8 included
    git(repo, "update-index", "-z", "--index-info", input=f"{mode} {oid}\t".encode() + raw + b"\0")


# -- the changed paths --------------------------------------------------------


def test_changes_inside_the_allowed_set_pass():
    repo = guarded_repo()
    repo.stage(
        {
            "src/app.py": "print('bye')\n",
            "src/new/mod.py": "x = 1\n",
            "tests/new_test.py": "",
            "README.md": "# app!\n",
        }
    )
    repo.remove("tests/app_test.py")
    rc, out, _ = write_set(repo)
    assert rc == 0, out
    assert out == "write-set: passed\n"


def test_added_file_outside_the_allowed_set():
    repo = guarded_repo()
    repo.stage({"docs/guide.md": "hi\n"})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "docs/guide.md: write-outside-set: matches no allowed pattern of the write set"
    ]
    assert "write-set: failed (1 error)" in out


def test_allowed_name_is_anchored_by_its_pattern():
    # 'README.md' has no slash: it matches at any depth, like gitignore
    repo = guarded_repo()
    repo.stage({"docs/README.md": "hi\n"})
    rc, out, _ = write_set(repo)
    assert rc == 0, out
    repo.stage({"README.markdown": "hi\n"})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "README.markdown: write-outside-set: matches no allowed pattern of the write set"
    ]


@pytest.mark.parametrize("change", ["modify", "delete"])
def test_modified_or_deleted_path_outside_the_set(change):
    repo = guarded_repo(dict(BASE_FILES, **{"setup.cfg": "[x]\n"}))
    if change == "modify":
        repo.stage({"setup.cfg": "[y]\n"})
    else:
        repo.remove("setup.cfg")
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "setup.cfg: write-outside-set: matches no allowed pattern of the write set"
    ]


@pytest.mark.parametrize(
    "source, target, finding",
    [
        (
            "oracle/expected.json",
            "src/expected.json",
            "oracle/expected.json: write-denied: matches deny pattern 'oracle/**'",
        ),
        (
            "src",
            "lib",
            "lib/app.py: write-outside-set: matches no allowed pattern of the write set",
        ),
    ],
    ids=[
        "fires-rename-into-the-set-reports-the-source",
        "fires-rename-out-of-the-set-reports-the-target",
    ],
)
def test_rename_across_the_set_edge_is_reported(source, target, finding):
    repo = guarded_repo()
    repo.move(source, target)
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [finding]


def test_rename_within_the_set_passes():
    repo = guarded_repo()
    repo.move("src/app.py", "tests/app.py")
    rc, out, _ = write_set(repo)
    assert rc == 0, out


def test_mode_change_counts_as_a_change():
    repo = guarded_repo()
    repo.make_executable("oracle/expected.json")
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "oracle/expected.json: write-denied: matches deny pattern 'oracle/**'"
    ]
    repo.make_executable("oracle/expected.json", False)
    rc, out, _ = write_set(repo)
    assert rc == 0, out


def test_type_change_file_to_symlink_counts_as_a_change():
    repo = guarded_repo()
    content = repo.head().read("oracle/expected.json")
    # same bytes, now a symlink: only the mode differs
    add_cacheinfo(repo, "oracle/expected.json", content, mode="120000")
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "oracle/expected.json: write-denied: matches deny pattern 'oracle/**'"
    ]


def test_unchanged_protected_files_are_not_reported(tmp_path, capsys):
    repo = guarded_git_repo(tmp_path)
    write(repo, {"oracle/expected.json": {"answer": 41}})  # unstaged: not the candidate
    rc, out, _ = write_set_git(capsys, repo)
    assert rc == 0, out


def test_changes_lists_every_kind_of_change():
    base = GitSnapshot(
        None,
        "base",
        {
            "same": Entry("100644", "1" * 40),
            "modified": Entry("100644", "2" * 40),
            "deleted": Entry("100644", "3" * 40),
            "chmod": Entry("100644", "4" * 40),
            "typechange": Entry("100644", "5" * 40),
            "renamed-from": Entry("100644", "6" * 40),
        },
    )
    candidate = GitSnapshot(
        None,
        "candidate",
        {
            "same": Entry("100644", "1" * 40),
            "modified": Entry("100644", "7" * 40),
            "chmod": Entry("100755", "4" * 40),
            "typechange": Entry("120000", "5" * 40),
            "renamed-to": Entry("100644", "6" * 40),
            "added": Entry("100644", "8" * 40),
        },
    )
    assert [path for path, _, _ in changes(base, candidate)] == [
        "added",
        "chmod",
        "deleted",
        "modified",
        "renamed-from",
        "renamed-to",
        "typechange",
    ]


def test_diff_tree_and_full_listings_see_the_same_changes(tmp_path):
    """Between two commits the change comes from diff-tree; it must be what
    comparing the two full listings gives, entry for entry."""
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            "same": "1",
            "modified": "2",
            "deleted": "3",
            "chmod": "4",
            "typechange": "5",
            "renamed-from": "6",
            "dir/file": "7",
            "file": "8",
            "a.b": "9",
            "a/b": "10",
        },
    )
    (repo / "chmod").chmod(0o755)
    (repo / "typechange").unlink()
    (repo / "typechange").symlink_to("same")
    git(repo, "rm", "-q", "deleted", "dir/file", "file")
    git(repo, "mv", "renamed-from", "renamed-to")
    write(
        repo,
        {
            "modified": "changed",
            "dir": "now a file",
            "file/inside": "now a folder",
            "a/b": "11",
            "added": "new",
        },
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "every kind of change")
    handle = Git(str(repo))
    old, new = (git(repo, "rev-parse", rev).strip() for rev in ("HEAD~1", "HEAD"))
    from_diff = changes(
        Snapshot.of_commit(handle, old, "old"), Snapshot.of_commit(handle, new, "new")
    )
    listed = (
        GitSnapshot(handle, "old", handle.tree_entries(old), old),
        GitSnapshot(handle, "new", handle.tree_entries(new), new),
    )
    assert from_diff == changes(*listed)
    assert [path for path, _, _ in from_diff] == [
        "a/b",
        "added",
        "chmod",
        "deleted",
        "dir",
        "dir/file",
        "file",
        "file/inside",
        "modified",
        "renamed-from",
        "renamed-to",
        "typechange",
    ]
    handle.close()


# -- deny ------------------------------------------------------------------------


def test_denied_path_without_allow_list():
    contract = 'version: 1\nwrite_set:\n  deny: [".pre-commit-config.yaml"]\n'
    repo = guarded_repo({".oracle-guard.yaml": contract, "a.txt": ""})
    repo.stage({"anything/else.txt": "fine\n"})
    rc, out, _ = write_set(repo)
    assert rc == 0, out  # no allow list: only deny restricts
    repo.stage({".pre-commit-config.yaml": "repos: []\n"})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        ".pre-commit-config.yaml: write-denied: matches deny pattern '.pre-commit-config.yaml'"
    ]


def test_deny_wins_over_allow():
    contract = CONTRACT.replace('"README.md"]', '"README.md", "oracle/**"]')
    repo = guarded_repo(dict(BASE_FILES, **{".oracle-guard.yaml": contract}))
    repo.stage({"oracle/expected.json": {"answer": 41}})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "oracle/expected.json: write-denied: matches deny pattern 'oracle/**'"
    ]


@pytest.mark.parametrize(
    "twin", ["Oracle/expected.json", "ORACLE/new.json", ".Pre-Commit-Config.yaml"]
)
def test_case_fold_twin_of_a_protected_path_is_denied(tmp_path, capsys, twin):
    repo = guarded_git_repo(tmp_path)
    add_git_cacheinfo(repo, twin)
    rc, out, _ = write_set_git(capsys, repo)
    assert rc == 1
    [line] = finding_lines(out)
    assert line.startswith(f"{twin}: write-denied: matches deny pattern ")
    assert line.endswith(
        " when letter case and Unicode normalization are ignored "
        "(the same file on macOS and Windows)"
    )


def test_case_fold_near_miss():
    repo = guarded_repo()
    repo.stage({"src/Oracle/x.py": "", "src/oracles.py": ""})
    rc, out, _ = write_set(repo)
    assert rc == 0, out


def test_case_fold_twin_of_a_contract_named_file_is_denied(tmp_path, capsys):
    repo = guarded_git_repo(tmp_path)
    add_git_cacheinfo(repo, "Seeds/b.json", b"[]\n")
    add_git_cacheinfo(repo, ".Oracle-Guard.yaml", b"version: 1\n")
    rc, out, _ = write_set_git(capsys, repo)
    assert rc == 1
    assert finding_lines(out) == [
        ".Oracle-Guard.yaml: write-denied: matches oracle file '.oracle-guard.yaml' when "
        "letter case and Unicode normalization are ignored (the same file on macOS and "
        "Windows)",
        "Seeds/b.json: write-denied: matches oracle pattern 'seeds/*.json' when "
        "letter case and Unicode normalization are ignored (the same file on macOS and "
        "Windows)",
    ]


# -- files the contract names are denied without being listed -------------------

FULL_CONTRACT = """\
version: 1
fixtures:
  - lock: locks/fixtures.lock.json
    root: inputs
    paths: ["inputs/**"]
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
freeze:
  - {paths: ["freeze.json"], schema: freeze}
  - {paths: ["quarantine/*.json"], schema: schemas/quarantine.json}
write_set:
  allow_file: policy/write_set.txt
"""

FULL_FILES = {
    ".oracle-guard.yaml": FULL_CONTRACT,
    "policy/write_set.txt": "# what agents may touch: every top-level name here\n\n"
    ".oracle-guard.yaml\nlocks/\ninputs/\nseeds/\nfreeze.json\n"
    "quarantine/\nschemas/\npolicy/\nsrc/\n",
    "locks/fixtures.lock.json": {},
    "inputs/a.bin": "a\n",
    "seeds/a.json": [1],
    "freeze.json": {"excluded_property_ids": [], "reason": {}},
    "quarantine/q.json": [],
    "schemas/quarantine.json": {"type": "array"},
    "src/app.py": "",
}


@pytest.mark.parametrize(
    ("path", "why"),
    [
        (".oracle-guard.yaml", "is oracle file '.oracle-guard.yaml'"),
        ("locks/fixtures.lock.json", "is oracle file 'locks/fixtures.lock.json'"),
        ("inputs/a.bin", "matches oracle pattern 'inputs/**'"),
        ("seeds/a.json", "matches oracle pattern 'seeds/*.json'"),
        ("freeze.json", "matches oracle pattern 'freeze.json'"),
        ("quarantine/q.json", "matches oracle pattern 'quarantine/*.json'"),
        ("schemas/quarantine.json", "is oracle file 'schemas/quarantine.json'"),
        ("policy/write_set.txt", "is oracle file 'policy/write_set.txt'"),
    ],
)
def test_files_the_contract_names_are_denied(path, why):
    repo = guarded_repo(FULL_FILES)
    # the allow file allows every top-level name, and there is no deny list
    repo.stage({"src/app.py": "x = 1\n"})
    rc, out, _ = write_set(repo)
    assert rc == 0, out
    repo.stage({path: "changed\n"})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [f"{path}: write-denied: {why} named by the contract"]


def test_deleting_a_file_the_contract_names_is_denied():
    repo = guarded_repo(FULL_FILES)
    repo.remove("locks/fixtures.lock.json")
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "locks/fixtures.lock.json: write-denied: is oracle file "
        "'locks/fixtures.lock.json' named by the contract"
    ]


def test_contract_named_file_with_glob_characters_is_matched_literally():
    contract = (
        "version: 1\nfixtures:\n  - {lock: 'locks/[ab]*.lock', paths: [fx/**]}\n"
        "write_set:\n  allow: ['**']\n"
    )
    repo = guarded_repo({".oracle-guard.yaml": contract, "locks/[ab]*.lock": "{}\n"})
    repo.stage({"locks/a.lock": "", "locks/b-x.lock": ""})
    rc, out, _ = write_set(repo)
    assert rc == 0, out
    repo.stage({"locks/[ab]*.lock": '{"x": 1}\n'})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "locks/[ab]*.lock: write-denied: is oracle file 'locks/[ab]*.lock' named by the contract"
    ]


# -- allow_file -------------------------------------------------------------------

ALLOW_FILE_CONTRACT = "version: 1\nwrite_set:\n  allow_file: oracle/write_set.txt\n"
ALLOW_LINES = """\
# root-anchored path prefixes agents may write
src/

README.md
   /docs/guide/
"""


def allow_file_files(lines):
    return {
        ".oracle-guard.yaml": ALLOW_FILE_CONTRACT,
        "oracle/write_set.txt": lines,
        "src/a.py": "",
    }


def allow_file_repo(lines=ALLOW_LINES):
    return guarded_repo(allow_file_files(lines))


def allow_file_git_repo(tmp_path, lines=ALLOW_LINES):
    return guarded_git_repo(tmp_path, allow_file_files(lines))


def test_allow_file_lines_allow_prefixes_and_names():
    repo = allow_file_repo()
    repo.stage({"src/deep/b.py": "", "src/conftest.py": "", "README.md": "", "docs/guide/x.md": ""})
    rc, out, _ = write_set(repo)
    assert rc == 0, out


@pytest.mark.parametrize(
    "path",
    [
        "tests/src/conftest.py",  # the attack: 'src/' is the root folder, not any 'src'
        "srcs/a.py",  # 'src/' is a folder, not a prefix of a name
        "src",  # ...and not a file called src
        "docs/README.md",  # 'README.md' is the root file, not a name at any depth
        "README.md.bak",  # ...and not a prefix of a name
        "x/docs/guide/a.md",  # '/docs/guide/' is anchored, as every line is
        "docs/guide.md",  # ...and a folder
        "# root-anchored path prefixes agents may write",  # comments are not prefixes
    ],
)
def test_allow_file_near_misses_are_outside_the_set(path):
    repo = allow_file_repo()
    add_cacheinfo(repo, path)
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        f"{path}: write-outside-set: matches no allowed pattern of the write set"
    ]


def test_allow_file_prefix_does_not_admit_a_nested_folder_of_the_same_name():
    # a conftest.py under tests/src/ would run with the oracle tests and could
    # deselect them; 'src/' must not reach it
    repo = allow_file_repo(lines="src/\n")
    repo.stage({"tests/src/conftest.py": "collect_ignore_glob = ['*']\n"})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "tests/src/conftest.py: write-outside-set: matches no allowed pattern of the write set"
    ]
    repo.remove("tests/src/conftest.py")  # git add -A stages the deletion
    # near miss: the same file under the root folder src/ is inside the set
    repo.stage({"src/conftest.py": "collect_ignore_glob = ['*']\n"})
    rc, out, _ = write_set(repo)
    assert rc == 0, out


@pytest.mark.parametrize(
    ("line", "inside", "outside"),
    [
        ("README.md", "README.md", "docs/README.md"),
        ("README.md", "README.md/notes.md", "README.md.bak"),  # a folder: all below it
        ("/README.md", "README.md", "docs/README.md"),  # a leading '/' changes nothing
        ("/src/", "src/a/b.py", "lib/src/a.py"),
        ("src/", "src/a.py", "src"),  # a trailing '/': folders only
        ("src", "src", "srcs/a.py"),  # without it, a file or a folder
        ("src/app", "src/app/x.py", "src/application.py"),
        ("  src/  ", "src/a.py", "tests/src/a.py"),  # surrounding blanks are dropped
    ],
)
def test_allow_file_line_admits_a_root_prefix_only(line, inside, outside):
    repo = guarded_repo(
        {".oracle-guard.yaml": ALLOW_FILE_CONTRACT, "oracle/write_set.txt": line + "\n", "x": ""}
    )
    add_cacheinfo(repo, inside)
    rc, out, _ = write_set(repo)
    assert rc == 0, out
    repo.remove(inside)
    add_cacheinfo(repo, outside)
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        f"{outside}: write-outside-set: matches no allowed pattern of the write set"
    ]


GLOB_ERROR = (
    "has a glob character (* ? [ \\); allow_file lines are path prefixes from "
    "the repository root: use write_set.allow for patterns\n"
)


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("src/**", "'src/**'"),
        ("*.py", "'*.py'"),
        ("docs/*.md", "'docs/*.md'"),
        ("src/?.py", "'src/?.py'"),
        ("[st]rc/", "'[st]rc/'"),
        ("src\\app\\", "'src\\\\app\\\\'"),  # a backslash: an escape, or Windows
        ("/src/**", "'/src/**'"),
    ],
)
def test_allow_file_glob_line_is_a_contract_error(line, shown):
    repo = allow_file_repo(lines=f"# ok\nsrc/\n{line}\n")
    repo.stage({"src/b.py": ""})
    rc, out, err = write_set(repo)
    assert rc == 2
    assert out == ""
    assert err == f"oracle-guard: error: oracle/write_set.txt:3: {shown} " + GLOB_ERROR


def test_allow_file_characters_that_are_not_globs_are_literal():
    # near miss of the glob rule: ']', '{', '!' and '#' inside a line are plain characters
    repo = allow_file_repo(lines="lib/v{1}]!#/\n")
    add_cacheinfo(repo, "lib/v{1}]!#/a.py")
    rc, out, _ = write_set(repo)
    assert rc == 0, out
    add_cacheinfo(repo, "lib/v1/a.py")
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "lib/v1/a.py: write-outside-set: matches no allowed pattern of the write set"
    ]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("./src/", "'./src/' has a '.' or '..' part"),
        ("src/../tests/", "'src/../tests/' has a '.' or '..' part"),
        ("src/.", "'src/.' has a '.' or '..' part"),
        ("..", "'..' has a '.' or '..' part"),
        ("/./src", "'/./src' has a '.' or '..' part"),
    ],
)
def test_allow_file_dot_parts_are_a_contract_error(line, error):
    repo = allow_file_repo(lines=f"src/\n{line}\n")
    repo.stage({"src/b.py": ""})
    rc, out, err = write_set(repo)
    assert rc == 2
    assert out == ""
    assert err == (
        f"oracle-guard: error: oracle/write_set.txt:2: {error}; allow_file lines "
        "are normalized path prefixes from the repository root\n"
    )


def test_allow_file_names_with_dots_are_not_dot_parts():
    # near miss: '.github-docs/' and 'src/..x' are names, not '.' or '..' parts
    repo = allow_file_repo(lines=".github-docs/\nsrc/..x\n.env.example\n")
    repo.stage({".github-docs/a.md": "", "src/..x": "", ".env.example": ""})
    rc, out, _ = write_set(repo)
    assert rc == 0, out
    repo.stage({".github/workflows/ci.yml": ""})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        ".github/workflows/ci.yml: write-outside-set: matches no allowed pattern of the write set"
    ]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (
            "src//app/",
            "'src//app/' has an empty path part ('//'); allow_file lines are path "
            "prefixes from the repository root",
        ),
        (
            "//src/",
            "'//src/' has an empty path part ('//'); allow_file lines are path "
            "prefixes from the repository root",
        ),
        (
            "src//",
            "'src//' has an empty path part ('//'); allow_file lines are path "
            "prefixes from the repository root",
        ),
        ("/", "'/' names no path; list the folders and files a change may touch"),
    ],
)
def test_allow_file_empty_parts_are_a_contract_error(line, error):
    repo = allow_file_repo(lines=f"src/\n{line}\n")
    repo.stage({"src/b.py": ""})
    rc, out, err = write_set(repo)
    assert rc == 2
    assert out == ""
    assert err == f"oracle-guard: error: oracle/write_set.txt:2: {error}\n"


def test_allow_file_leading_slash_line_works():
    # near miss of the empty-part rule: one leading '/' is the root, as in '/src/'
    repo = allow_file_repo(lines="/src/\n/README.md\n")
    repo.stage({"src/b.py": "", "README.md": ""})
    rc, out, _ = write_set(repo)
    assert rc == 0, out
    repo.stage({"tests/src/b.py": ""})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "tests/src/b.py: write-outside-set: matches no allowed pattern of the write set"
    ]


def test_allow_file_errors_go_through_the_cli_with_exit_codes(tmp_path):
    """``oracle-guard check`` as a process: 0 inside the set, 1 for the attack, 2 and
    one error line for a glob line."""
    repo = allow_file_git_repo(tmp_path, lines="src/\n")

    def check():
        proc = subprocess.run(
            [sys.executable, "-m", "oracle_guard", "check", "-C", str(repo), "--only", "write-set"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    stage(repo, {"src/conftest.py": ""})
    rc, out, err = check()
    assert (rc, out, err) == (0, "write-set: passed\n", "")
    stage(repo, {"tests/src/conftest.py": ""})
    rc, out, err = check()
    assert rc == 1, (out, err)
    assert finding_lines(out) == [
        "tests/src/conftest.py: write-outside-set: matches no allowed pattern of the write set"
    ]
    commit(
        repo,
        {"oracle/write_set.txt": "src/\ntests/**/conftest.py\n"},
        message="an owner writes a pattern into the allow file",
    )
    stage(repo, {"src/b.py": ""})
    rc, out, err = check()
    assert rc == 2
    assert out == ""
    assert err == (
        "oracle-guard: error: oracle/write_set.txt:2: 'tests/**/conftest.py' " + GLOB_ERROR
    )


def test_allow_file_and_allow_combine():
    contract = ALLOW_FILE_CONTRACT + "  allow: [lib/**]\n"
    repo = guarded_repo({".oracle-guard.yaml": contract, "oracle/write_set.txt": "src/\n"})
    repo.stage({"lib/a.py": "", "src/b.py": ""})
    rc, out, _ = write_set(repo)
    assert rc == 0, out
    repo.stage({"bin/c": ""})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "bin/c: write-outside-set: matches no allowed pattern of the write set"
    ]


def test_empty_allow_file_allows_nothing():
    repo = allow_file_repo(lines="# nothing yet\n")
    repo.stage({"src/b.py": ""})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "src/b.py: write-outside-set: matches no allowed pattern of the write set"
    ]


def test_allow_file_negation_is_a_contract_error():
    repo = allow_file_repo(lines="src/\n!src/secret.py\n")
    repo.stage({"src/b.py": ""})
    rc, out, err = write_set(repo)
    assert rc == 2
    assert out == ""
    assert err == ("oracle-guard: error: oracle/write_set.txt:2: negation ('!') is not supported\n")


def test_missing_allow_file_is_a_contract_error():
    repo = guarded_repo({".oracle-guard.yaml": ALLOW_FILE_CONTRACT, "x": ""})
    repo.stage({"src/b.py": ""})
    rc, _, err = write_set(repo)
    assert rc == 2
    assert err == (
        "oracle-guard: error: write_set.allow_file 'oracle/write_set.txt' is missing from HEAD\n"
    )


def test_allow_file_is_read_from_the_base():
    repo = allow_file_repo()
    # widening the allow file in the same change does not widen what it allows
    repo.stage({"oracle/write_set.txt": ALLOW_LINES + "bin/\n", "bin/tool": ""})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "bin/tool: write-outside-set: matches no allowed pattern of the write set",
        "oracle/write_set.txt: write-denied: is oracle file "
        "'oracle/write_set.txt' named by the contract",
    ]


# -- the contract comes from the base ---------------------------------------------


def test_widening_allow_in_the_same_change_still_fails():
    repo = guarded_repo()
    widened = CONTRACT.replace('"README.md"]', '"README.md", "docs/**"]')
    repo.stage({".oracle-guard.yaml": widened, "docs/guide.md": "hi\n"})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        ".oracle-guard.yaml: write-denied: is oracle file '.oracle-guard.yaml' "
        "named by the contract",
        "docs/guide.md: write-outside-set: matches no allowed pattern of the write set",
    ]
    # once the widened contract is the base, the same kind of write passes
    repo.commit()
    repo.stage({"docs/other.md": "hi\n"})
    rc, out, _ = write_set(repo)
    assert rc == 0, out


def test_dropping_deny_in_the_same_change_still_fails():
    repo = guarded_repo()
    repo.stage(
        {
            ".oracle-guard.yaml": CONTRACT.replace('"oracle/**", ', ""),
            "oracle/expected.json": {"answer": 41},
        }
    )
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert "oracle/expected.json: write-denied: matches deny pattern 'oracle/**'" in out


def test_change_that_introduces_the_contract_passes_with_a_notice():
    repo = MemoryRepo()
    repo.commit({"README.md": ""})
    repo.stage({".oracle-guard.yaml": CONTRACT, "oracle/expected.json": {"answer": 1}})
    rc, out, _ = write_set(repo)
    assert rc == 0, out
    assert out == (
        "write-set: passed (nothing to check: the base (HEAD) has no contract; "
        "this change introduces it)\n"
    )


def test_contract_without_write_set_section_passes_with_a_notice():
    repo = guarded_repo({".oracle-guard.yaml": "version: 1\n"})
    repo.stage({"anything": ""})
    rc, out, _ = write_set(repo)
    assert rc == 0
    assert out == (
        "write-set: passed (no 'write_set' section: only what the contract names is guarded)\n"
    )


# -- names git allows but shells and terminals do not like -------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (b"docs/with space.md", "docs/with space.md"),
        (b"docs/with\ttab.md", "docs/with\\ttab.md"),
        (b"docs/with\nnewline.md", "docs/with\\nnewline.md"),
        (b"docs/\"quoted\" 'name'.md", "docs/\"quoted\" 'name'.md"),
        (b"-leading-dash.md", "-leading-dash.md"),
        (b"docs/caf\xe9-latin1.md", "docs/caf\\xe9-latin1.md"),
        (b"docs/\xc3\xa9t\xc3\xa9.md", "docs/\u00e9t\u00e9.md"),
    ],
)
def test_awkward_names_are_reported_exactly(raw, shown):
    repo = guarded_repo()
    add_cacheinfo(repo, raw)
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        f"{shown}: write-outside-set: matches no allowed pattern of the write set"
    ]


@pytest.mark.parametrize(
    "raw", [b"src/with\nnewline.py", b"src/caf\xe9.py", b"src/-n", b'src/a\tb "c".py']
)
def test_awkward_names_inside_the_set_pass(raw):
    repo = guarded_repo()
    add_cacheinfo(repo, raw)
    rc, out, _ = write_set(repo)
    assert rc == 0, out


def test_awkward_names_in_committed_history(tmp_path, capsys):
    # tree entries (ls-tree -z) as well as index entries (ls-files -z)
    repo = guarded_git_repo(tmp_path)
    add_git_cacheinfo(repo, b"oracle/new\nline \xff.json")
    git(repo, "commit", "-q", "-m", "awkward")
    rc, out, _ = write_set_git(capsys, repo, "--base", "HEAD~1", "--head", "HEAD")
    assert rc == 1
    assert finding_lines(out) == [
        "oracle/new\\nline \\xff.json: write-denied: matches deny pattern 'oracle/**'"
    ]


def test_json_output_keeps_awkward_names_printable():
    repo = guarded_repo()
    add_cacheinfo(repo, b"oracle/a\nb\xff")
    rc, out, _ = write_set(repo, fmt="json")
    assert rc == 1
    doc = json.loads(out)
    assert [(f["path"], f["code"]) for f in doc["findings"]] == [
        ("oracle/a\\nb\\xff", "write-denied")
    ]


NFC = "donn\u00e9es"  # é as one code point
NFD = "donne\u0301es"  # e + combining acute: the same name on macOS


@pytest.mark.parametrize("protected,written", [(NFC, NFD), (NFD, NFC)])
def test_unicode_normalization_twin_of_a_protected_path_is_denied(
    tmp_path, capsys, protected, written
):
    contract = f"version: 1\nwrite_set:\n  deny: ['{protected}/**']\n"
    repo = guarded_git_repo(tmp_path, {".oracle-guard.yaml": contract, "src/a.py": ""})
    add_git_cacheinfo(repo, f"{written}/expected.txt")
    rc, out, _ = write_set_git(capsys, repo)
    assert rc == 1
    [line] = finding_lines(out)
    assert "when letter case and Unicode normalization are ignored" in line


def test_unicode_normalization_near_miss(tmp_path, capsys):
    contract = f"version: 1\nwrite_set:\n  deny: ['{NFC}/**']\n"
    repo = guarded_git_repo(tmp_path, {".oracle-guard.yaml": contract, "src/a.py": ""})
    add_git_cacheinfo(repo, "donnees/expected.txt")  # a different name, not a twin
    rc, out, _ = write_set_git(capsys, repo)
    assert rc == 0, out


@pytest.mark.parametrize("path", [".gitattributes", "src/.gitattributes"])
def test_gitattributes_anywhere_is_denied(tmp_path, capsys, path):
    # eol, encoding and filter attributes change the bytes a checkout of the oracle gets
    repo = guarded_git_repo(tmp_path)
    stage(repo, {path: "*.json eol=crlf\n"})
    rc, out, _ = write_set_git(capsys, repo)
    assert rc == 1
    assert finding_lines(out) == [
        f"{path}: write-denied: matches oracle pattern '.gitattributes' named by the contract"
    ]


def test_known_id_files_are_denied():
    contract = (
        "version: 1\nbudget:\n  max_frozen: 1\n  known_ids: ['props/*.txt']\n"
        "write_set:\n  allow: ['src/**', 'props/**']\n"
    )
    repo = guarded_repo({".oracle-guard.yaml": contract, "src/a.py": ""})
    repo.stage({"props/flaky_prop.txt": "", "src/a.py": "x\n"})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "props/flaky_prop.txt: write-denied: matches oracle pattern 'props/*.txt' named "
        "by the contract"
    ]


def test_without_a_write_set_section_the_oracle_is_still_denied():
    contract = "version: 1\nseeds:\n  - {paths: ['seeds/*.json'], format: json-array}\n"
    repo = guarded_repo({".oracle-guard.yaml": contract, "seeds/a.json": [1], "src/a.py": ""})
    repo.stage({"seeds/a.json": [1, 2], "src/a.py": "x\n", "anything/else.txt": ""})
    rc, out, _ = write_set(repo)
    assert rc == 1
    assert finding_lines(out) == [
        "seeds/a.json: write-denied: matches oracle pattern 'seeds/*.json' named by the contract"
    ]


@pytest.mark.parametrize(
    "deny", ["testdata/", "testdata/**", "/testdata/golden.txt", "testdata/*.txt", "golden/"]
)
def test_submodule_at_a_protected_folder_is_denied(deny):
    folder = "testdata" if deny != "golden/" else "tests/golden"
    contract = f"version: 1\nwrite_set:\n  allow: ['**']\n  deny: ['{deny}']\n"
    repo = guarded_repo({".oracle-guard.yaml": contract, "src/a.py": ""})
    add_cacheinfo(repo, folder, b"", mode="160000")  # a gitlink: its oid names a commit
    rc, out, _ = write_set(repo)
    assert rc == 1, out
    [line] = finding_lines(out)
    assert line.startswith(f"{folder}: write-denied: is a symlink or submodule where ")


def test_symlink_standing_in_for_a_protected_folder_is_denied():
    contract = (
        "version: 1\nfreeze:\n  - {paths: ['quarantine/active/*.yaml'], "
        "schema: quarantine-entry}\nbudget:\n  max_frozen: 0\n"
        "write_set:\n  allow: ['**']\n"
    )
    repo = guarded_repo({".oracle-guard.yaml": contract, "src/q/flaky.yaml": "x\n"})
    add_cacheinfo(repo, "quarantine/active", b"../src/q", mode="120000")
    rc, out, _ = write_set(repo)
    assert rc == 1, out
    assert finding_lines(out) == [
        "quarantine/active: write-denied: is a symlink or submodule where oracle pattern "
        "'quarantine/active/*.yaml' protects files below it (git does not list what lies "
        "behind it)"
    ]


def test_symlink_and_submodule_elsewhere_pass():
    contract = "version: 1\nwrite_set:\n  allow: ['**']\n  deny: ['testdata/', 'oracle/**']\n"
    repo = guarded_repo({".oracle-guard.yaml": contract, "src/a.py": ""})
    add_cacheinfo(repo, "vendor/lib", b"", mode="160000")
    add_cacheinfo(repo, "src/link", b"a.py", mode="120000")
    add_cacheinfo(repo, "testdata2", b"", mode="160000")
    rc, out, _ = write_set(repo)
    assert rc == 0, out
