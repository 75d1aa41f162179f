import os
import subprocess
import sys

from oracle_guard.commands import demo


def test_demo_passes_the_honest_change_and_rejects_every_edit(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "demo"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.count("-> accepted") == 2
    assert out.count("-> rejected (exit 1)") == len(demo.SCENARIOS) - 2
    for code in (
        "fixture-mismatch",
        "seed-reordered",
        "seed-file-deleted",
        "budget-too-far",
        "write-denied",
    ):
        assert f": {code}:" in out
    assert "NOT AS EXPECTED" not in out
    assert list(tmp_path.iterdir()) == []  # no leftovers


def test_demo_output_is_the_same_every_run(tmp_path):
    runs = [
        subprocess.run(
            [sys.executable, "-m", "oracle_guard", "demo"], stdout=subprocess.PIPE, text=True
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
