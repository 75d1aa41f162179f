"""oracle-guard: keep a repository's test oracle out of reach of the patches it judges."""

__version__ = "0.2.0"
