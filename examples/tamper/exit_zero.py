# As tests/test_zz_done.py: ends pytest with status 0 while it collects, before a test fails; test-tamper reports process-exit.
import os

os._exit(0)
