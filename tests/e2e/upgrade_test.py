"""An upgrade of the server's hook with no rejected push (docs/how-to/upgrade.md):
the new version installed side by side, then install-pre-receive switches the
hook to it by writing a new file and renaming it into place. Real pushes to a
bare repository run in a loop the whole time."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import threading
from pathlib import Path
from typing import List

from testing import oracle
from testing.git import commit
from testing.server import Push, make_client, make_server, push

CONTRACT = oracle.OWNERLESS_SEEDS


def side_by_side(folder: Path) -> Path:
    """A second installation: a venv of its own whose site-packages reach this
    one's (what a fresh `pip install` there would hold). Returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (lib,) = (folder / "lib").iterdir()
    # addsitedir: that folder's own .pth files count too (the editable install's)
    (lib / "site-packages" / "oracle_guard_here.pth").write_text(
        "".join(f"import site; site.addsitedir({path!r})\n" for path in site.getsitepackages())
    )
    python = folder / "bin" / "python"
    assert python.exists()
    return python


def install(python: Path, server: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            str(python),
            "-I",
            "-m",
            "oracle_guard",
            "install-pre-receive",
            str(server),
            "--host",
            "plain",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


def test_switching_the_hook_between_installations_rejects_no_push(tmp_path):
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(client, {".oracle-guard.yaml": CONTRACT, "seeds/a.json": "[1]\n", "src/app.py": ""})
    assert push(client, "main").rc == 0
    new = side_by_side(tmp_path / "new")
    hook = server / "hooks" / "pre-receive"
    pushes: List[Push] = []
    done = threading.Event()

    def pushing() -> None:
        number = 0
        while not done.is_set():
            number += 1
            commit(client, {"src/app.py": f"v{number}\n"}, f"change {number}")
            pushes.append(push(client, "main"))

    pusher = threading.Thread(target=pushing)
    pusher.start()
    switches = 0
    try:
        # switch back and forth until both have happened many times over
        while switches < 20 or len(pushes) < 10:
            python = new if switches % 2 == 0 else Path(sys.executable)
            installed = install(python, server)
            assert installed.returncode == 0, installed.stdout + installed.stderr
            assert f"runs {python} -I -m oracle_guard" in installed.stdout, installed.stdout
            switches += 1
    finally:
        done.set()
        pusher.join(timeout=300)
    rejected = [p for p in pushes if p.rc != 0]
    assert not rejected, rejected[0].stderr
    assert all("push accepted" in "\n".join(p.guard) for p in pushes)
    assert len(pushes) >= 10 and switches >= 20
    # each switch was a rename: nothing half-written is left beside the hook
    assert sorted(os.listdir(hook.parent)) == sorted(
        name for name in os.listdir(hook.parent) if not name.endswith(".new")
    )
    assert str(sys.executable) in hook.read_text()  # the last switch went back
