"""The CI recipes ``oracle-guard init --ci`` writes: copies of examples/ci/, kept byte
for byte the same by tests/init_test.py (package data: the installed package has no
examples/)."""
