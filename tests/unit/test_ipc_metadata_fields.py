"""Tests for quiver.ipc.metadata.fields: schema fields and types in IPC flatbuffer metadata."""

from __future__ import annotations

import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc.decoder import IpcLimits
from tests.unit._helpers import _file, _stream


def test_nesting_and_field_limits_are_the_callers_to_raise() -> None:
    deep = pa.array([[[[1]]]])
    data = _stream(pa.table({"d": deep}))
    assert list(ipc.open_stream(data))
    with pytest.raises(qv.LimitExceeded, match="nested"):
        ipc.open_stream(data, limits=IpcLimits(max_depth=2))
    wide = _stream(pa.table({f"c{i}": [i] for i in range(50)}))
    with pytest.raises(qv.LimitExceeded, match="fields"):
        ipc.open_stream(wide, limits=IpcLimits(max_fields=10))
    with pytest.raises(qv.LimitExceeded):
        ipc.open_file(_file(pa.table({f"c{i}": [i] for i in range(50)})),
                      limits=IpcLimits(max_fields=10))
