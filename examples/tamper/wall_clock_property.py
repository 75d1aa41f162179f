# As properties/test_retry_after.py, under tamper.hermetic: passes or fails by the hour it runs; test-tamper reports non-hermetic.
import datetime

from src.harness import parse_header


def test_retry_after_is_before_the_end_of_the_day():
    _, seconds = parse_header("Retry-After: 3600")
    now = datetime.datetime.now()
    later = now + datetime.timedelta(seconds=int(seconds))
    assert later.date() == now.date()
