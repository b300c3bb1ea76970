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
    from quiver.spark import session

    spark = session("local[2, 2]", "quiver-tests", **{
        "spark.sql.shuffle.partitions": "4", "spark.ui.showConsoleProgress": "false"})
    yield spark
    spark.stop()
