"""The files init writes, and what every part of it shares about them: a file
planned, the error that stops init before it writes any, reading one back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

SCHEMA_DIR = ".oracle-guard"
PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"
PRE_COMMIT_YML = ".pre-commit-config.yml"  # prek reads it too, pre-commit does not
PREK_CONFIG = "prek.toml"  # prek reads it in preference to the YAML configs
# The hook runners' configs, in the order prek prefers them.
RUNNER_CONFIGS = (PREK_CONFIG, PRE_COMMIT_CONFIG, PRE_COMMIT_YML)
# The docs' placeholders: there is no public home, so the user fills them in.
REPO_PLACEHOLDER = "https://your.git.server/mirrors/oracle-guard"
REV_PLACEHOLDER = "0123abc…"


@dataclass
class Planned:
    path: str
    text: str
    what: str
    state: str = "new"  # new | same | differs | edit | retarget
    needs_force: bool = False  # an edit that replaces a value someone chose
    detail: str = ""  # retarget: the values it replaces
    why: str = ""  # what differs, for the refusal without --force


def read_text(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
