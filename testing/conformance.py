"""The public suites' data the conformance tests read: JSONTestSuite, yaml-test-suite,
git's t3070 wildmatch table, the SARIF 2.1.0 schema, Jenkins' JUnit schema and the
Code Quality fields GitLab documents.

None of it is committed here. It is read from ``../shared/conformance/`` beside the
checkout, or from the folder ``ORACLE_GUARD_CONFORMANCE_DATA`` names; tests marked
``needs("conformance")`` are not run without it (testing/prerequisites.py)."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any, List, Mapping, Optional

ENV = "ORACLE_GUARD_CONFORMANCE_DATA"
CHECKOUT = Path(__file__).resolve().parent.parent
DEFAULT = CHECKOUT.parent / "shared" / "conformance"

# what the tests read: a suite that lacks one is reported missing, not half run
ENTRIES = (
    "JSONTestSuite/LICENSE",
    "JSONTestSuite/test_parsing",
    "yaml-test-suite/LICENSE",
    "yaml-test-suite/cases.jsonl",
    "t3070-wildmatch/cases.txt",
    "sarif-schema-2.1.0.json",
    "junit/junit-10.xsd",
    "gitlab-codequality/schema.json",
)


def folder(env: Optional[Mapping[str, str]] = None) -> Path:
    named = (os.environ if env is None else env).get(ENV)
    return Path(named) if named else DEFAULT


def missing(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """Why the data cannot be read, in one line, or None when it is all there."""
    where = folder(env)
    absent = [entry for entry in ENTRIES if not (where / entry).exists()]
    if not absent:
        return None
    what = "is missing" if not where.is_dir() else f"lacks {', '.join(absent)}"
    return (
        f"the public suites' data: {where} {what}; put a copy of shared/conformance "
        f"there, or name one with {ENV}=DIR (CONTRIBUTING.md, Conformance data)"
    )


def path(entry: str) -> Path:
    """One file or folder of the data (read lazily: a test without it is not run)."""
    return folder() / entry


def names(entry: str) -> List[str]:
    """The sorted file names of a data folder, for parametrize; one placeholder when
    the data is missing, so collection works and the tests are reported as not run."""
    where = path(entry)
    if not where.is_dir():
        return ["(data missing)"]
    return sorted(os.listdir(where))


@functools.cache
def json_document(entry: str) -> Any:
    """A JSON file of the data (the SARIF schema, the Code Quality schema), read once."""
    return json.loads(path(entry).read_text("utf-8"))


@functools.cache
def junit_schema() -> Any:
    """Jenkins' JUnit schema, as xmlschema reads it, once."""
    import xmlschema  # the test extra's; only the tests that validate JUnit need it

    return xmlschema.XMLSchema(str(path("junit/junit-10.xsd")))


SARIF_SCHEMA = "sarif-schema-2.1.0.json"
CODE_QUALITY_SCHEMA = "gitlab-codequality/schema.json"
