"""The YAML scalars init writes read back as the values they stand for."""

import pytest
import yaml

from oracle_guard.commands.init.yaml_lines import line, scalar


@pytest.mark.parametrize(
    "value, text",
    [
        ("plain", "plain"),
        ("a # b", '"a # b"'),
        ("yes", '"yes"'),
        ("1", '"1"'),
        ("", '""'),
        (True, "true"),
        (3, "3"),
        (1.5, "1.5"),
        (["a", 1], '["a", 1]'),
        ({"k": 1}, '{"k": 1}'),
    ],
)
def test_scalar(value, text):
    assert scalar(value) == text
    assert yaml.safe_load(f"k: {text}\n") == {"k": value}


@pytest.mark.parametrize("value", [1e20, None, float("nan")])
def test_a_value_yaml_would_not_read_back_is_refused(value):
    with pytest.raises(TypeError, match="cannot write"):
        scalar(value)


def test_the_comment_starts_in_its_column():
    assert line("version: 1", "the format") == "version: 1" + " " * 29 + " # the format"
    assert line("version: 1") == "version: 1"
