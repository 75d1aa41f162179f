"""What the analysis of one file finds: marks, compared between base and candidate.

A mark is new when the candidate's file holds more marks of its key than the
base's file did. The key leaves out lines and local names, so moving code,
reformatting it or renaming a variable changes no key; renaming the test a
marker sits on does (the marker now sits on another test)."""

from __future__ import annotations

from collections import Counter
from typing import Iterable, List, NamedTuple, Tuple


def package_of(path: str) -> str:
    """The dotted package a file is in, as its folders name it."""
    return ".".join(path.split("/")[:-1])


class Mark(NamedTuple):
    rule: str  # the finding code
    line: int  # in the file the mark was found in (1-based)
    subject: str  # what: "pytest.mark.skip", "sys.exit", "addopts -k"
    scope: str  # where: the enclosing qualname ("" at module level), or the config section
    message: str  # the finding's text, after "PATH:LINE: CODE: "

    @property
    def key(self) -> Tuple[str, str, str]:
        return (self.rule, self.subject, self.scope)


def new_marks(base: Iterable[Mark], candidate: Iterable[Mark]) -> List[Mark]:
    """The candidate's marks beyond what the base held, key by key, in line order."""
    left = Counter(mark.key for mark in base)
    out = []
    for mark in sorted(candidate, key=lambda m: (m.line, m.rule, m.subject)):
        if left[mark.key] > 0:
            left[mark.key] -= 1
        else:
            out.append(mark)
    return out
