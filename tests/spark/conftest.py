"""One real local Spark session for every Spark test (they run in one xdist group)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest


def _require_spark() -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java 17 (apt-get install openjdk-17-jre-headless)")


@pytest.fixture(scope="session")
def spark():
    """A local[2] session (each task may be tried twice), stopped at the end."""
    _require_spark()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from quiver.spark import register

    session = (
        SparkSession.builder.master("local[2, 2]")
        .appName("quiver-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()
