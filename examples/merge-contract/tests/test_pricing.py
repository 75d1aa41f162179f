from src.pricing import price


def test_price_adds_the_rate_in_basis_points():
    assert price(1000, 250) == 1025


def test_price_without_a_rate_is_the_price():
    assert price(1999, 0) == 1999
