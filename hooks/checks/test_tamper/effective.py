"""runner-options on the configuration pytest reads, not on each file's own text.

For each folder that holds a configuration file the change adds, modifies or
deletes, the file pytest takes for runs from that folder (the nearest folder, it
or above, holding a file that counts; in a folder the first that counts of
pytest.toml, .pytest.toml, pytest.ini, .pytest.ini, pyproject.toml, tox.ini,
setup.cfg: see options.py) is found in the base and in the candidate, and the
options each yields are compared:

- the same file, or another file of the same folder (setup.cfg's
  ``[tool:pytest]`` moved to pyproject.toml): option by option, so options moved
  unchanged are no mark, and a file pytest never read there (a tox.ini
  ``[pytest]`` beside a pytest.ini) changes nothing;
- a file in a folder below the one pytest read before: it replaces that
  configuration for the runs under its folder, and its rootdir, a mark
  whatever it holds (options.changed_options says so);
- no file before: the new one is judged by the options it sets.
"""

from __future__ import annotations

from typing import Callable, Dict, List, NamedTuple, Optional, Set, Tuple

from oracle_guard.checks.test_tamper.marks import Mark
from oracle_guard.checks.test_tamper.options import Config, Unloadable, compare, is_config, load
from oracle_guard.git.objects import BlobTooLarge
from oracle_guard.snapshot import Snapshot

ORDER = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)


class Read(NamedTuple):
    path: str
    config: Optional[Config]  # None: too large to read, taken to count


def folder_of(path: str) -> str:
    return path.rpartition("/")[0]


class Configurations:
    """A snapshot's configuration files, by folder, read as pytest reads them."""

    def __init__(self, snapshot: Snapshot, limit: int) -> None:
        self.snapshot = snapshot
        self.limit = limit
        self._by_folder: Optional[Dict[str, Dict[str, str]]] = None
        self._read: Dict[str, Optional[Read]] = {}

    def _files(self) -> Dict[str, Dict[str, str]]:
        if self._by_folder is None:
            self._by_folder = {}
            for path, entry in self.snapshot.entries.items():
                if entry.is_regular and is_config(path):
                    name = path.rpartition("/")[2].lower()
                    self._by_folder.setdefault(folder_of(path), {}).setdefault(name, path)
        return self._by_folder

    def read(self, path: str) -> Optional[Read]:
        """The file's configuration, or None when pytest does not take it as one
        (or it does not load: the file's own mark says so)."""
        if path not in self._read:
            name = path.rpartition("/")[2].lower()
            found: Optional[Read]
            try:
                config = load(name, self.snapshot.read(path, self.limit))
                found = Read(path, config) if config.counts else None
            except BlobTooLarge:
                found = Read(path, None)
            except Unloadable:
                found = None
            self._read[path] = found
        return self._read[path]

    def effective(self, folder: str) -> Optional[Read]:
        """The configuration pytest reads for runs from ``folder``."""
        files = self._files()
        at: Optional[str] = folder
        while at is not None:
            for name in ORDER:
                path = files.get(at, {}).get(name)
                found = self.read(path) if path is not None else None
                if found is not None:
                    return found
            at = None if at == "" else folder_of(at)
        return None


PerFile = Callable[[str], List[Mark]]  # a file's marks judged by its own text


def marks(
    changed: Set[str],
    added: Set[str],
    base: Snapshot,
    candidate: Snapshot,
    limit: int,
    per_file: PerFile,
) -> List[Tuple[str, Mark]]:
    """The runner-options marks of the configuration pytest reads from each folder
    a changed configuration file lies in, base against candidate. ``per_file``
    judges a file by itself: one that does not load, a first configuration, one
    that replaces the configuration of a folder above."""
    before, after = Configurations(base, limit), Configurations(candidate, limit)
    out: List[Tuple[str, Mark]] = []
    judged: Set[str] = set()
    alone: Set[str] = set()  # the files per_file judged
    for folder in sorted({folder_of(path) for path in changed}):
        here = sorted(path for path in changed if folder_of(path) == folder)
        broken = [p for p in here if candidate.entry(p) is not None and not _loads(after, p)]
        if broken:
            for path in broken:
                out += [(path, m) for m in per_file(path)]
                judged.add(path)
            continue
        old, new = before.effective(folder), after.effective(folder)
        if new is not None and (old is None or _below(new.path, old.path)):
            if new.path not in alone:  # new here, or closer than the one before
                alone.add(new.path)
                own = per_file(new.path)
                out += [(new.path, m) for m in own]
                if any(m.subject.startswith("configuration file") for m in own):
                    judged.add(new.path)  # its replacement mark says what the rootdir would
            continue
        if old is None or (new is not None and old.path == new.path and old.path not in changed):
            continue  # pytest reads no file, or an unchanged one, from here
        if new is not None and new.config is None:
            continue  # too large to read: per_file's mark on the changed file says so
        old_settings = old.config.settings if old.config is not None else {}
        if new is None:
            scope = old.config.scope if old.config is not None else ""
            compared = compare(old_settings, Config(scope, 0, {}, counts=False))
        else:
            compared = compare(old_settings, new.config)  # type: ignore[arg-type]
        where = new.path if new is not None and new.path in changed else old.path
        key = f"{where}:{old.path}"
        if key in judged:
            continue
        judged.add(key)
        out += [
            (where, m if new is not None and where == new.path else m._replace(line=1))
            for m in compared
        ]
    for path in sorted(added - judged):
        from oracle_guard.checks.test_tamper.rootdir import moved  # cold: a new configuration file

        try:
            data = candidate.read(path, limit)
        except BlobTooLarge:
            continue
        out += [(path, m) for m in moved(path, data, base, candidate, limit)]
    return out


def _loads(configurations: Configurations, path: str) -> bool:
    """Does the file load (whether or not pytest takes it as its configuration)?"""
    name = path.rpartition("/")[2].lower()
    try:
        load(name, configurations.snapshot.read(path, configurations.limit))
    except BlobTooLarge:
        return False
    except Unloadable:
        return False
    return True


def _below(path: str, other: str) -> bool:
    """Is ``path``'s folder strictly below ``other``'s?"""
    folder, above = folder_of(path), folder_of(other)
    return folder != above and (above == "" or folder.startswith(above + "/"))
