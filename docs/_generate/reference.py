"""MkDocs hook: reference pages written from the code at build time."""
