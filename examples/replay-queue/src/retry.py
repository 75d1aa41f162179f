def retry_budget(attempts):
    return max(0, 7 - attempts)
