"""Storage faults, named: a missing bucket or key, denied access, a connection dropped
mid-read, 5xx/throttling (retried with backoff, a bounded number of times), an object
shorter than asked.  Each is a quiver error naming the URL (never the secret) and,
where it applies, the byte range.  The faults come from a proxy in front of moto."""

from __future__ import annotations

import numpy as np
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver import errors as E
from quiver.fs import errors as FE
from quiver.fs.errors import ATTEMPTS
from quiver.fs.ranged import RangedObject

from .conftest import SECRET


@pytest.fixture
def stored(s3) -> tuple[str, qv.Table]:
    rows = 200_000
    table = qv.table({"a": qv.array(np.arange(rows)), "b": qv.array(np.arange(rows) * 2.0)})
    url = s3.url("f.arrow")
    with ipc.new_file(url, table.schema, storage_options=s3.options) as w:
        w.write_table(table, max_chunksize=rows // 4)
    return url, table


def _check_named(err: BaseException, url: str, ranged: bool) -> None:
    text = str(err)
    assert url in text, text
    assert SECRET not in text and "testing-key-id" not in text, text
    assert "\n" not in text
    if ranged:
        assert err.byte_range is not None
        start, end = err.byte_range
        assert f"bytes {start}..{end}" in text and 0 <= start < end


def test_missing_key(s3):
    url = s3.url("nothing-here.arrow")
    for call in (lambda: ipc.open_file(url, storage_options=s3.options),
                 lambda: ipc.open_stream(url, storage_options=s3.options),
                 lambda: ipc.read_table(url, storage_options=s3.options)):
        with pytest.raises(FE.ObjectNotFound) as got:
            call()
        assert isinstance(got.value, FileNotFoundError) and isinstance(got.value, E.ArrowError)
        _check_named(got.value, url, ranged=False)
        assert "no such bucket or key" in str(got.value)


def test_missing_bucket(s3):
    url = "s3://no-such-bucket-quiver/k.arrow"
    with pytest.raises(FE.ObjectNotFound) as got:
        ipc.open_file(url, storage_options=s3.options)
    _check_named(got.value, url, ranged=False)


def test_denied_access(s3, stored, faults):
    url, _ = stored
    faults.set("403")
    with pytest.raises(FE.AccessDenied) as got:
        ipc.read_table(url, storage_options=s3.options)
    _check_named(got.value, url, ranged=True)
    assert faults.served == 1  # not retried


def test_throttling_is_retried_then_succeeds(s3, stored, faults):
    url, table = stored
    faults.set("503", times=ATTEMPTS - 1)
    assert ipc.read_table(url, storage_options=s3.options).equals(table)
    assert faults.served == ATTEMPTS - 1


def test_throttling_without_end_is_raised_after_bounded_attempts(s3, stored, faults):
    url, _ = stored
    faults.set("503")
    with pytest.raises(FE.ServiceUnavailable) as got:
        ipc.open_file(url, storage_options=s3.options)
    _check_named(got.value, url, ranged=True)
    assert f"after {ATTEMPTS} attempts" in str(got.value)
    # the bound, counted: at least one request per attempt of quiver's, at most the
    # requests one s3fs call makes (its client's own retries, which botocore's retry
    # quota may cut short as a session's failures add up) times quiver's attempts
    faults.set("503")
    with pytest.raises(OSError):
        s3.fs().cat_file(url, start=0, end=10)
    per_call = faults.served
    faults.set("503")
    with pytest.raises(FE.ServiceUnavailable):
        RangedObject(url, s3.options).get(0, 10)
    assert ATTEMPTS <= faults.served <= ATTEMPTS * per_call


def test_a_dropped_connection_is_retried(s3, stored, faults):
    url, table = stored
    faults.set("drop", times=1)
    assert ipc.read_table(url, storage_options=s3.options).equals(table)
    assert faults.served == 1


def test_a_connection_that_keeps_dropping(s3, stored, faults):
    url, _ = stored
    with ipc.open_file(url, storage_options=s3.options) as reader:
        faults.set("drop")
        with pytest.raises(FE.ConnectionLost) as got:
            reader.read_all()
    _check_named(got.value, url, ranged=True)
    assert isinstance(got.value, ConnectionError)


def test_an_object_shorter_than_asked(s3, stored, faults):
    url, _ = stored
    with ipc.open_file(url, storage_options=s3.options) as reader:
        block = reader.footer.record_batches[0]
        faults.set("short")
        with pytest.raises(E.TruncatedError) as got:
            reader.get_batch(0)
    text = str(got.value)
    assert url in text and "shorter" in text
    assert f"bytes {block.offset}.." in text


def test_an_object_cut_short_in_storage(s3, stored):
    # the object itself lost its end: the footer's trailer is not where it should be
    url, _ = stored
    data = s3.fs().cat_file(url)
    cut = s3.url("cut.arrow")
    s3.fs().pipe_file(cut, data[: len(data) - 1000])
    with pytest.raises(E.FormatError):
        ipc.open_file(cut, storage_options=s3.options)


def test_a_write_denied_leaves_nothing(s3, faults):
    # a PUT refused by the store: the writer's error names the URL; nothing appears
    url = s3.url("denied.arrow")
    options = {**s3.options, "key": "testing-key-id", "secret": SECRET}
    table = qv.table({"a": qv.array(np.arange(10))})
    with pytest.raises(E.ArrowError) as got, \
            ipc.new_file("s3://no-such-bucket-quiver/x.arrow", table.schema,
                         storage_options=options) as w:
        w.write_table(table)
    assert SECRET not in str(got.value)
    assert "s3://no-such-bucket-quiver/x.arrow" in str(got.value)
    assert not s3.fs().exists(url)
