import json
import os

from src.harness import parse_header


def test_parse_header_strips_the_name_and_the_value():
    assert parse_header("Retry-After :  120 ") == ("Retry-After", "120")


def test_parse_header_splits_at_the_first_colon():
    assert parse_header("Link: <https://example.test>") == ("Link", "<https://example.test>")


def test_parse_header_of_a_corpus_line():
    case = json.loads(
        os.environ.get("CORPUS_PAYLOAD") or '{"raw": "A: b", "name": "A", "value": "b"}'
    )
    assert parse_header(case["raw"]) == (case["name"], case["value"])
