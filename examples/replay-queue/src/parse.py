def parse_header(raw):
    name, sep, value = raw.partition(":")
    if not sep or not name.strip():
        raise ValueError(f"not a header: {raw!r}")
    return name.strip(), value.strip()
