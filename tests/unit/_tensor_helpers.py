"""Helpers shared by the tensor and ipc.tensor tests."""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa

from quiver.ipc import metadata as md
from quiver.ipc import tensor as it
from quiver.ipc.framing import frame_message
from tests.conftest import SUPPLEMENT

# --------------------------------------------------------------------------------------
# gold files


def _gold_tensors() -> list[dict]:
    manifest = SUPPLEMENT / "manifest.json"
    if not manifest.exists():
        return []
    return [f for f in json.loads(manifest.read_text())["files"] if f["file"].endswith(".tensor")]


GOLD = _gold_tensors()


def _pa_read(data: bytes) -> np.ndarray:
    return pa.ipc.read_tensor(pa.BufferReader(data)).to_numpy()


def _pa_bytes(arr: np.ndarray, dim_names=None) -> bytes:
    sink = pa.BufferOutputStream()
    pa.ipc.write_tensor(pa.Tensor.from_numpy(arr, dim_names=dim_names), sink)
    return sink.getvalue().to_pybytes()


def _ours(obj) -> bytes:
    sink = io.BytesIO()
    n = it.write_tensor(obj, sink)
    out = sink.getvalue()
    assert n == len(out)
    return out


# --------------------------------------------------------------------------------------
# malformed input


def _message(header, body: bytes, body_length: int | None = None) -> bytes:
    blen = len(body) if body_length is None else body_length
    meta = md.encode_message(md.Message(md.V5, header, blen))
    return frame_message(meta, blen, alignment=64) + body


# --------------------------------------------------------------------------------------
# sparse tensors

DENSE = np.array(
    [[0, 1, 2, 0], [0, 0, 3, 0], [0, 4, 0, 5], [0, 0, 0, 0], [6, 0, 7, 8], [0, 9, 0, 0]],
    dtype=np.float64,
)


def _round_trip(st):
    sink = io.BytesIO()
    n = it.write_sparse_tensor(st, sink)
    data = sink.getvalue()
    assert n == len(data)
    return it.read_sparse_tensor(data), data
