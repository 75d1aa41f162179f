"""Code a generator writes, never a hand: each module's header names the command
that rewrites it and the test that fails while it is stale. It imports nothing
of oracle_guard, so the lowest layer (parsing/) may import it."""
