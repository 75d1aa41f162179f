"""init's CI recipes: the install source pip reads, filled into a shipped recipe."""

import pytest

from oracle_guard.commands.init.ci_recipes import (
    fill_recipe,
    pip_source,
    recipe_source,
    recipe_text,
)
from oracle_guard.commands.init.files import REPO_PLACEHOLDER, REV_PLACEHOLDER


@pytest.mark.parametrize(
    "repo, rev, source",
    [
        ("https://h/og.git", "v1", "git+https://h/og.git@v1"),
        ("git@host:org/og.git", "v1", "git+ssh://git@host/org/og.git@v1"),
        ("git+ssh://host/og", "abc", "git+ssh://host/og@abc"),
    ],
)
def test_pip_source(repo, rev, source):
    assert pip_source(repo, rev) == (source, "")


def test_no_pip_source_for_placeholders_a_folder_or_a_rev_with_a_space(tmp_path):
    assert pip_source(REPO_PLACEHOLDER, "v1") == (None, "")
    assert pip_source("https://h/og", REV_PLACEHOLDER) == (None, "")
    assert pip_source(str(tmp_path), "v1") == (
        None,
        f"--repo {tmp_path} is a local folder, which CI cannot reach",
    )
    assert pip_source("https://h/og", "v 1") == (
        None,
        "--repo https://h/og --rev v 1 is no URL pip installs from",
    )


@pytest.mark.parametrize("name", ["gitlab-ci.yml", "github-actions-base-branch.yml"])
def test_a_filled_recipe_reads_back_as_its_source_and_nothing_else(name):
    template = recipe_text(name)
    text, shipped = fill_recipe(template, "git+https://h/og@v1")
    assert recipe_source(template, template) == shipped
    assert recipe_source(text, template) == "git+https://h/og@v1"
    assert recipe_source(text + "# more\n", template) is None
    assert fill_recipe(template, None) == (template, shipped)
