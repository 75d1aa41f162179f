"""What a check's module holds beside its ``check``: ``SAMPLE``, its smallest oracle.

The tests build trees from every check's sample (the registry finds it as
``Check.sample()``): a contract of the sample's sections and its files, which the
check passes, and the sample's change, which it rejects with the sample's finding.
Its ``example`` is the check's part of the contract page's complete example."""

from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional


class Sample(NamedTuple):  # not a dataclass: every hook run would import inspect
    # the contract's sections: the check's own, and any other it reads (flake-budget
    # counts the freeze files' entries)
    sections: Dict[str, Any]
    files: Dict[str, str]  # the tree beside the contract: path to its text
    change: Dict[str, Optional[str]]  # what a rejected change writes (None: removes)
    finding: str  # what the check finds in it: 'path: code'
    # its section as the complete example of docs/reference/contract.md shows it,
    # each key annotated (the site's build writes them there in the registry's order)
    example: str
