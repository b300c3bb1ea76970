"""An S3 endpoint for the object-storage tests: moto's ``ThreadedMotoServer`` on
127.0.0.1 (a free port, offline, in-process, one per test session, stopped at the end),
reached through s3fs with ``storage_options``; and a fault-injecting proxy in front of it
(5xx/throttling, denied access, a connection dropped mid-body, a short body).

``S3.url(name)`` gives a fresh ``s3://`` URL per test; ``S3.counts()`` the requests the
server answered (method, ranged or not, bytes sent), for tests that count what a read
fetched.
"""

from __future__ import annotations

import http.client
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

moto_server = pytest.importorskip("moto.server")
fsspec = pytest.importorskip("fsspec")
pytest.importorskip("s3fs")

BUCKET = "quiver-tests"
KEY_ID = "testing-key-id"
SECRET = "testing-secret-Zq8v"  # a made-up secret the tests look for in every message


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def storage_options(endpoint: str, **extra: Any) -> dict[str, Any]:
    """s3fs options for ``endpoint`` with the test credentials."""
    return {"key": KEY_ID, "secret": SECRET, "endpoint_url": endpoint,
            "client_kwargs": {"region_name": "us-east-1"}, **extra}


@dataclass
class Faults:
    """What the proxy does to the ranged GETs it forwards (``kind`` None: nothing)."""

    kind: str | None = None  # "503", "403", "drop", "short"
    times: int = 0  # how many requests get the fault (then they pass); -1: all
    served: int = 0  # faults served so far
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> str | None:
        with self.lock:
            if self.kind is None or self.times == 0:
                return None
            if self.times > 0:
                self.times -= 1
            self.served += 1
            return self.kind

    def set(self, kind: str | None, times: int = -1) -> None:
        with self.lock:
            self.kind, self.times, self.served = kind, times, 0


_XML = {"503": (503, "SlowDown", "Please reduce your request rate."),
        "403": (403, "AccessDenied", "Access Denied")}


def _proxy(target_port: int, faults: Faults,
           log: list[tuple[str, bool, int]]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _forward(self) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else None
            ranged = self.command == "GET" and "Range" in self.headers
            fault = faults.take() if ranged else None
            if fault in _XML:
                status, code, msg = _XML[fault]
                payload = (f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code>"
                           f"<Message>{msg}</Message></Error>").encode()
                log.append((self.command, ranged, 0))
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            conn = http.client.HTTPConnection("127.0.0.1", target_port, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            conn.close()
            sent = data
            if fault == "short":
                sent = data[: len(data) // 2]
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() in ("transfer-encoding", "connection") or (
                        k.lower() == "content-length" and self.command != "HEAD"):
                    continue
                self.send_header(k, v)
            if self.command != "HEAD":
                self.send_header("Content-Length",
                                 str(len(data) if fault == "drop" else len(sent)))
            if fault == "drop":
                self.send_header("Connection", "close")
            self.end_headers()
            if fault == "drop":
                log.append((self.command, ranged, len(data) // 2))
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            # counted before the bytes go out: the client may go on as soon as they arrive
            log.append((self.command, ranged, len(sent)))
            if self.command != "HEAD":
                self.wfile.write(sent)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    server = ThreadingHTTPServer(("127.0.0.1", _free_port()), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def key_of(url: str) -> str:
    """The ``bucket/key`` of an ``s3://`` URL (what s3fs calls a path)."""
    return url[len("s3://"):].rstrip("/")


class TaskStandIn:
    """A stand-in for Spark's TaskContext: partition ``task``, attempt ``attempt``."""

    def __init__(self, task: int = 0, attempt: int = 0) -> None:
        self.task, self.attempt = task, attempt

    def partitionId(self) -> int:
        return self.task

    def attemptNumber(self) -> int:
        return self.attempt

    def getLocalProperty(self, key: str) -> str | None:
        return None  # no session settings (partitionOverwriteMode, ...)


@dataclass
class S3:
    """The test endpoint: the moto server, and the counting proxy the tests go through."""

    endpoint: str  # the proxy (counts, faults)
    direct: str  # moto itself
    faults: Faults
    log: list[tuple[str, bool, int]]

    @property
    def options(self) -> dict[str, Any]:
        """storage_options through the proxy, with botocore's and s3fs's own retries off
        (so that quiver's bounded retries are what the fault tests see)."""
        return storage_options(self.endpoint,
                               config_kwargs={"retries": {"max_attempts": 1,
                                                          "mode": "standard"}})

    @property
    def spark_options(self) -> dict[str, str]:
        """The Spark read and write options (``storage.*``) of this endpoint."""
        return {"storage.key": KEY_ID, "storage.secret": SECRET,
                "storage.endpoint_url": self.endpoint,
                "storage.client_kwargs.region_name": "us-east-1"}

    def fs(self) -> Any:
        """The s3fs filesystem of :attr:`options` (the instance quiver gets too)."""
        fs = fsspec.filesystem("s3", **self.options)
        fs.retries = 1
        return fs

    def url(self, name: str) -> str:
        """A fresh ``s3://`` URL for one test."""
        return f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}/{name}"

    def reset_counts(self) -> None:
        self.log.clear()

    def counts(self) -> dict[str, int]:
        """Requests answered since :meth:`reset_counts`: ranged GETs and their bytes."""
        gets = [n for method, ranged, n in self.log if method == "GET"]
        return {"requests": len(self.log), "gets": len(gets), "bytes": sum(gets)}


@pytest.fixture(scope="session")
def s3() -> Iterator[S3]:
    """The moto server and the proxy, one per session; stopped at the end."""
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    faults = Faults()
    log: list[tuple[str, bool, int]] = []
    proxy = _proxy(port, faults, log)
    endpoint = f"http://127.0.0.1:{proxy.server_address[1]}"
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    try:
        box = S3(endpoint, f"http://127.0.0.1:{port}", faults, log)
        box.fs().call_s3("create_bucket", Bucket=BUCKET)
        yield box
    finally:
        proxy.shutdown()
        proxy.server_close()
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def faults(s3: S3) -> Iterator[Faults]:
    """The proxy's faults, cleared after the test."""
    yield s3.faults
    s3.faults.set(None)
