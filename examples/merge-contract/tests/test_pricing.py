import json
import os

from src.pricing import price


def test_price_adds_the_rate_in_basis_points():
    assert price(1000, 250) == 1025


def test_price_without_a_rate_is_the_price():
    assert price(1999, 0) == 1999


def test_price_of_a_replay():
    case = json.loads(os.environ.get("REPLAY_PAYLOAD") or '{"cents": 1000, "rate_bps": 250}')
    assert case["cents"] <= price(case["cents"], case["rate_bps"]) <= 2 * case["cents"]
