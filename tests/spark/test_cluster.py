"""The main job on a standalone Spark cluster (one master, one worker, on 127.0.0.1),
started from the installed pyspark and stopped by process id: once to a local directory,
once to S3 (moto's server on 127.0.0.1)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import die_with

pytestmark = [pytest.mark.xdist_group("spark"), pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(log: Path, text: str, process: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"process exited early:\n{log.read_text()[-3000:]}")
        if log.exists() and text in log.read_text(errors="replace"):
            return
        time.sleep(0.5)
    raise AssertionError(f"no {text!r} after {seconds} s:\n{log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)


def _job_over_s3(port: int, env: dict[str, str], tmp_path: Path) -> None:
    """The same job with ``--out s3://...`` against moto's S3 server on 127.0.0.1: the
    executors in the worker reach it through the storage options the job passes on."""
    moto_server = pytest.importorskip("moto.server")
    s3fs = pytest.importorskip("s3fs")
    s3_port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=s3_port)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{s3_port}"
        options = {"key": "cluster-key", "secret": "cluster-secret-Xy7",
                   "endpoint_url": endpoint}
        fs = s3fs.S3FileSystem(**options, client_kwargs={"region_name": "us-east-1"})
        fs.call_s3("create_bucket", Bucket="cluster-bucket")
        args = [a for k, v in options.items() for a in ("--storage-option", f"{k}={v}")]
        args += ["--storage-option", "client_kwargs.region_name=us-east-1"]
        job = subprocess.run(
            [sys.executable, "-m", "quiver.job", "--master", f"spark://127.0.0.1:{port}",
             "--rows", "40000", "--out", "s3://cluster-bucket/job", *args],
            env=env, capture_output=True, text=True, timeout=600,
        )
        assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
        assert "job finished: all outputs verified" in job.stdout
        assert "cluster-secret-Xy7" not in job.stdout + job.stderr
        fs.invalidate_cache()
        written = fs.find("cluster-bucket/job")
        assert any("/country=" in p for p in written)
        assert any(p.endswith("_SUCCESS") for p in written)
        assert not [p for p in written if "_temporary" in p]
    finally:
        server.stop()


def test_job_runs_on_a_standalone_master_and_worker(tmp_path):
    pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed")
    import shutil

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java 17 (apt-get install openjdk-17-jre-headless)")
    spark_home = Path(pyspark.__file__).parent
    env = dict(os.environ, SPARK_HOME=str(spark_home), SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_PYTHON=sys.executable, SPARK_LOG_DIR=str(tmp_path / "logs"),
               SPARK_WORKER_DIR=str(tmp_path / "work"))
    port, ui = _free_port(), _free_port()
    spark_class = str(spark_home / "bin" / "spark-class")
    started: list[subprocess.Popen] = []
    try:
        master_log = tmp_path / "master.log"
        with open(master_log, "wb") as log:
            master = subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(ui)],
                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=die_with(os.getpid()),
            )
        started.append(master)
        _wait_for(master_log, "I have been elected leader", master, 120)
        worker_log = tmp_path / "worker.log"
        with open(worker_log, "wb") as log:
            worker = subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker",
                 f"spark://127.0.0.1:{port}", "--host", "127.0.0.1", "--cores", "2",
                 "--memory", "2g", "--webui-port", str(_free_port())],
                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=die_with(os.getpid()),
            )
        started.append(worker)
        _wait_for(worker_log, "Successfully registered with master", worker, 120)
        out = tmp_path / "out"
        job = subprocess.run(
            [sys.executable, "-m", "quiver.job", "--master", f"spark://127.0.0.1:{port}",
             "--rows", "40000", "--out", str(out)],
            env=env, capture_output=True, text=True, timeout=600,
        )
        assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
        assert "job finished: all outputs verified" in job.stdout
        assert "rows validated   40,008" in job.stdout
        # the executor ran in the worker, not in the driver
        assert list((tmp_path / "work").glob("app-*")), "no application ran on the worker"
        _job_over_s3(port, env, tmp_path)
    finally:
        for process in reversed(started):
            _stop(process)
    assert all(p.poll() is not None for p in started)
