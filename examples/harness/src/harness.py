def parse_header(raw):
    name, _, value = raw.partition(":")
    return name.strip(), value.strip()
