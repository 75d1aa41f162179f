def total(items):
    return sum(i["qty"] * i["price"] for i in items)
