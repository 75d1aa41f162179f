"""A reader that goes away before the output is written is not a pass, and
not an internal error either."""

import subprocess
import sys


def test_output_into_a_closed_pipe_exits_nonzero_quietly():
    proc = subprocess.Popen(
        [sys.executable, "-m", "oracle_guard", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait() == 2
    assert "internal error" not in err and "Traceback" not in err
