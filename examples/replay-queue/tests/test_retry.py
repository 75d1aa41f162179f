from src.retry import retry_budget


def test_the_budget_shrinks_with_each_attempt():
    assert [retry_budget(n) for n in range(3)] == [7, 6, 5]


def test_the_budget_never_goes_negative():
    assert retry_budget(9) == 0
