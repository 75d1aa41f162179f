"""The project's address and what an index shows of it: one address in
setup.cfg, mkdocs.yml and the changelog's links; a classifier for each Python
version python_requires admits. The wheel's fields are held by
tests/release_test.py, the site's sitemap by tests/docs_test.py."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def metadata() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "setup.cfg", encoding="utf-8")
    return parser["metadata"]


def listed(value: str) -> list:
    return [line.strip() for line in value.splitlines() if line.strip()]


def test_one_address_in_setup_cfg_mkdocs_and_the_changelog():
    source = metadata()["url"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/oracle-guard", source), source
    urls = dict(line.split(" = ", 1) for line in listed(metadata()["project_urls"]))
    site = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert site["repo_url"] == urls["Source"] == source
    assert urls["Issues"] == f"{source}/issues"
    assert site["site_url"].endswith("/") and urls["Documentation"] == site["site_url"]
    assert urls["Changelog"] == site["site_url"] + "changelog/"
    links = re.findall(r"^\[[^\]]+\]: (\S+)$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert links and all(link.startswith(f"{source}/") for link in links), links


def test_a_classifier_for_each_python_python_requires_admits():
    classifiers = listed(metadata()["classifiers"])
    assert "License :: OSI Approved :: MIT License" in classifiers
    assert metadata()["license"] == "MIT"
    minors = sorted(
        int(c.rsplit(".", 1)[1])
        for c in classifiers
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    options = configparser.ConfigParser(interpolation=None)
    options.read(ROOT / "setup.cfg", encoding="utf-8")
    lowest = int(re.fullmatch(r">=3\.(\d+)", options["options"]["python_requires"]).group(1))
    assert minors[0] == lowest and minors == list(range(lowest, minors[-1] + 1)), minors
    # ruff's target is the lowest, so no syntax a listed version lacks passes lint
    assert f'target-version = "py3{lowest}"' in (ROOT / "pyproject.toml").read_text()
