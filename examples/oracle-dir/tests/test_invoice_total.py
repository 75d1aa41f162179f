import json
import os

from src.invoice import total


def test_total_sums_quantity_times_price():
    assert total([{"qty": 2, "price": 3}, {"qty": 1, "price": 4}]) == 10


def test_an_empty_invoice_totals_zero():
    assert total([]) == 0


def invoices():
    """The corpus line's invoice when oracle-guard score replays one, else the usual ones."""
    raw = os.environ.get("CORPUS_PAYLOAD")
    if raw:
        return [json.loads(raw)]
    return [{"items": [{"qty": 2, "price": 3}]}, {"items": []}]


def test_totals_are_non_negative():
    for invoice in invoices():
        assert total(invoice["items"]) >= 0
