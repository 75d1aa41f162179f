def price(cents, rate_bps):
    return cents + cents * rate_bps // 10000
