from src.harness import parse_header


def test_parse_header_strips_the_name_and_the_value():
    assert parse_header("Retry-After :  120 ") == ("Retry-After", "120")


def test_parse_header_splits_at_the_first_colon():
    assert parse_header("Link: <https://example.test>") == ("Link", "<https://example.test>")
