"""The main job's behaviour on a machine without Java: one line saying how to install it."""

from __future__ import annotations

import subprocess
import sys


def test_job_without_java_says_so_in_one_line(tmp_path):
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}  # no java on this PATH
    run = subprocess.run(
        [sys.executable, "-m", "quiver.job", "--rows", "10", "--out", str(tmp_path / "o")],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs Java 17" in lines[0] and "apt-get install" in lines[0]
    assert not (tmp_path / "o").exists()
