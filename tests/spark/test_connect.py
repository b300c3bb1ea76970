"""Spark Connect: quiver's batch and streaming source and sink from a Connect client.

The test starts a Spark Connect server from the installed pyspark (its jars ship the
server) on 127.0.0.1 and a free port, with workers on this Python, and stops it by its
process id at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import quiver as qv
import quiver.ipc as ipc

from .helpers import die_with

pytestmark = pytest.mark.xdist_group("spark")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, log: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the Spark Connect server exited ({process.returncode}):\n"
                        + log.read_text()[-3000:])
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(1)
    pytest.fail(f"the Spark Connect server did not listen on {port} in {seconds} s:\n"
                + log.read_text()[-3000:])


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    """A Spark Connect server (started here, stopped by pid) and a client session."""
    pyspark = pytest.importorskip("pyspark")
    pytest.importorskip("grpc", reason="Spark Connect needs pyspark[connect] (grpcio)")
    if not os.environ.get("JAVA_HOME") and not any(
            os.access(os.path.join(d, "java"), os.X_OK)
            for d in os.environ.get("PATH", "").split(os.pathsep)):
        pytest.skip("Spark needs Java 17 (apt-get install openjdk-17-jre-headless)")
    home = Path(pyspark.__file__).parent
    if not list((home / "jars").glob("spark-connect_*.jar")):
        pytest.skip("this pyspark ships no Spark Connect server jar")
    port = _free_port()
    log = tmp_path_factory.mktemp("connect") / "server.log"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               SPARK_HOME=str(home))
    # the server's Python workers import quiver from the same place as this process
    source = str(Path(qv.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    command = [
        str(home / "bin" / "spark-submit"),
        "--master", "local[2]",
        "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.session.timeZone=UTC",
        "--conf", "spark.sql.shuffle.partitions=4",
        "spark-internal",
    ]
    with log.open("wb") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True, preexec_fn=die_with(os.getpid()))
    try:
        _wait_for_port(port, server, log, 240)
        yield f"sc://127.0.0.1:{port}"
    finally:
        with_group = server.pid
        try:
            os.killpg(with_group, signal.SIGTERM)
            server.wait(60)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):  # it may be gone already
                os.killpg(with_group, signal.SIGKILL)
            server.wait(30)


def _write_input(directory: Path, start: int, n: int, name: str) -> None:
    ids = np.arange(start, start + n, dtype=np.int64)
    batch = qv.record_batch({"id": qv.array(ids), "x": qv.array(ids.astype(np.float64))})
    with ipc.new_file(str(directory / name), batch.schema, compression="zstd") as w:
        w.write_batch(batch)


def _client(url: str, code: str, tmp_path: Path) -> dict:
    """Run ``code`` in a separate Python process holding a Connect session ``spark``
    (a client process of its own, as a user's would be: pyspark's Connect mode is
    process-wide, so it stays out of the test process and its classic session); the code
    leaves its findings in the dict ``result``."""
    script = tmp_path / "client.py"
    script.write_text(textwrap.dedent("""
        import json, sys
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
        result = {}
    """) + textwrap.dedent(code) + textwrap.dedent("""
        spark.stop()
        print("RESULT " + json.dumps(result))
    """))
    done = subprocess.run([sys.executable, str(script), url], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, SPARK_LOCAL_IP="127.0.0.1"))
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_batch_read_and_write_through_connect(remote, tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    _write_input(src, 0, 1000, "a.arrow")
    result = _client(remote, f"""
        from quiver.spark import register
        register(spark)  # registration goes through Connect too
        df = spark.read.format("quiver").load({str(src)!r})
        result["count"] = df.count()
        result["filtered"] = df.filter("id >= 990").count()
        (df.withColumn("k", df.id % 3).write.format("arrow").option("partitionBy", "k")
         .mode("overwrite").save({str(out)!r}))
        back = spark.read.format("arrow").load({str(out)!r})
        result["ids"] = sorted(r.id for r in back.select("id").collect())
        result["keys"] = sorted(r.k for r in back.select("k").distinct().collect())
    """, tmp_path)
    assert result["count"] == 1000
    assert result["filtered"] == 10
    assert result["ids"] == list(range(1000))
    assert result["keys"] == [0, 1, 2]
    assert sorted(p.name for p in out.glob("k=*")) == ["k=0", "k=1", "k=2"]


def test_streaming_query_through_connect(remote, tmp_path):
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    _write_input(src, 0, 100, "a.arrow")
    _write_input(src, 100, 50, "b.arrow")
    code = f"""
        from quiver.spark import register
        register(spark)
        q = (spark.readStream.format("arrow").schema("id long, x double").load({str(src)!r})
             .writeStream.format("arrow").option("checkpointLocation", {str(ck)!r})
             .trigger(availableNow=True).start({str(out)!r}))
        q.awaitTermination(300)
        result["error"] = None if q.exception() is None else str(q.exception())
        df = spark.read.format("arrow").load({str(out)!r})
        result["ids"] = sorted(r.id for r in df.select("id").collect())
    """
    first = _client(remote, code, tmp_path)
    assert first["error"] is None
    assert first["ids"] == list(range(150))
    _write_input(src, 150, 25, "c.arrow")
    second = _client(remote, code, tmp_path)  # a restart from the checkpoint
    assert second["error"] is None
    assert second["ids"] == list(range(175))
