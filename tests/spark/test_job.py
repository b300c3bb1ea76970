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


def test_both_names_work_without_registering(tmp_path):
    """Spark finds the source by itself (the pyspark_quiver modules), in a fresh session."""
    import os
    import shutil

    import pytest

    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java 17 (apt-get install openjdk-17-jre-headless)")
    script = f"""
import os, sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
path = {str(tmp_path / "data")!r}
spark.range(5).write.format("arrow").mode("overwrite").save(path)
print(spark.read.format("arrow").load(path).count(), spark.read.format("quiver").load(path).count())
spark.stop()
"""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == "5 5"
