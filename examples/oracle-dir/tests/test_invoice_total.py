from src.invoice import total


def test_total_sums_quantity_times_price():
    assert total([{"qty": 2, "price": 3}, {"qty": 1, "price": 4}]) == 10


def test_an_empty_invoice_totals_zero():
    assert total([]) == 0
