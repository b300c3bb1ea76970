"""IPC files and streams at s3:// URLs from Python: round trips against pyarrow, ranged
reads (the tail, coalescing, ``columns=``, ``filters=``) counted at the server, writes as
uploads, and what stays local."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pa_ipc
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver import errors as E

from .conftest import SECRET


def _table(rows: int, cols: int = 2, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    data = {f"c{k}": rng.integers(-1 << 40, 1 << 40, rows) for k in range(cols)}
    data["s"] = pa.array([f"v{i % 97}" if i % 13 else None for i in range(rows)])
    return pa.table(data)


def _pa_file(table: pa.Table, chunk: int) -> bytes:
    sink = pa.BufferOutputStream()
    with pa_ipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=chunk)
    return sink.getvalue().to_pybytes()


def _as_pa(table: qv.Table) -> pa.Table:
    return pa.table(table)


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_quiver_writes_pyarrow_reads(s3, fmt):
    table = _table(10_000)
    url = s3.url(f"x.{fmt}")
    new = ipc.new_file if fmt == "file" else ipc.new_stream
    with new(url, table.schema, storage_options=s3.options) as w:
        w.write_table(table, max_chunksize=1_000)
    data = s3.fs().cat_file(url)
    opened = pa_ipc.open_file(data) if fmt == "file" else pa_ipc.open_stream(data)
    assert opened.read_all().equals(table)


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_pyarrow_writes_quiver_reads(s3, fmt):
    table = _table(10_000)
    url = s3.url(f"x.{fmt}")
    if fmt == "file":
        data = _pa_file(table, 1_000)
    else:
        sink = pa.BufferOutputStream()
        with pa_ipc.new_stream(sink, table.schema) as w:
            w.write_table(table, max_chunksize=1_000)
        data = sink.getvalue().to_pybytes()
    s3.fs().pipe_file(url, data)
    opener = ipc.open_file if fmt == "file" else ipc.open_stream
    with opener(url, storage_options=s3.options) as reader:
        assert _as_pa(reader.read_all()).equals(table)
    assert _as_pa(ipc.read_table(url, storage_options=s3.options)).equals(table)
    assert ipc.read_schema(url, storage_options=s3.options).names == table.schema.names
    # the same bytes from memory read the same (differential: the local path)
    assert ipc.read_table(data).equals(ipc.read_table(url, storage_options=s3.options))


def test_random_access_and_dictionaries(s3):
    arr = pa.array(["a", "b", None, "c"] * 500).dictionary_encode()
    table = pa.table({"d": arr, "n": pa.array(range(2000))})
    url = s3.url("dict.arrow")
    s3.fs().pipe_file(url, _pa_file(table, 300))
    with ipc.open_file(url, storage_options=s3.options) as reader:
        assert reader.num_record_batches == 7
        last = reader.get_batch(-1)
        first = reader.get_batch(0)
        assert _as_pa(qv.Table.from_batches([first])).equals(table.slice(0, 300))
        assert last.num_rows == 200


def test_the_tail_is_one_get_unless_the_footer_is_larger(s3):
    # 4,000 batches: a footer of ~96 KB, larger than the guessed tail (64 KB)
    small, large = _table(4_000, 1), _table(4_000, 1)
    for batches, chunk, extra in ((small, 1_000, 0), (large, 1, 1)):
        url = s3.url("t.arrow")
        data = _pa_file(batches, chunk)
        s3.fs().pipe_file(url, data)
        s3.reset_counts()
        reader = ipc.open_file(url, storage_options=s3.options)
        footer_len = int.from_bytes(data[-10:-6], "little")
        assert (footer_len > 64 << 10) == bool(extra)
        # one HEAD for the size, one GET for head and tail (the file is larger than the
        # tail: two ranges, far apart, still one round), a second only for a big footer
        assert s3.counts()["gets"] == (2 if len(data) > (64 << 10) + 64 else 1) + extra
        reader.close()


def _wide(rows: int, cols: int, batches: int) -> tuple[pa.Table, bytes]:
    rng = np.random.default_rng(1)
    table = pa.table({f"c{k}": rng.integers(0, 1 << 50, rows) for k in range(cols)})
    return table, _pa_file(table, rows // batches)


def test_full_read_is_coalesced(s3):
    table, data = _wide(200_000, 4, 20)
    url = s3.url("w.arrow")
    s3.fs().pipe_file(url, data)
    s3.reset_counts()
    got = ipc.read_table(url, storage_options=s3.options)
    assert _as_pa(got).equals(table)
    counts = s3.counts()
    # the batches' blocks are adjacent: a handful of requests (6.4 MB, below the range size)
    assert counts["gets"] <= 4, counts
    assert counts["bytes"] <= len(data) + (64 << 10)


def test_columns_fetch_only_the_selected_buffers(s3):
    table, data = _wide(400_000, 8, 20)
    url = s3.url("w8.arrow")
    s3.fs().pipe_file(url, data)
    s3.reset_counts()
    with ipc.open_file(url, storage_options=s3.options, columns=["c5"]) as reader:
        got = reader.read_all()
        stats = reader.io_stats
    assert _as_pa(got).equals(table.select(["c5"]))
    counts = s3.counts()
    assert counts["bytes"] == stats["bytes"]
    # 1 of 8 equal columns: an eighth of the bodies, the metadata and the footer
    assert counts["bytes"] <= 0.2 * len(data), (counts, len(data))
    # two columns, asked out of order
    got = ipc.read_table(url, storage_options=s3.options, columns=["c7", "c0"])
    assert _as_pa(got).equals(table.select(["c7", "c0"]))


def test_columns_with_strings_and_nulls(s3):
    table = _table(30_000, 3)
    url = s3.url("s.arrow")
    s3.fs().pipe_file(url, _pa_file(table, 2_000))
    for cols in (["s"], ["c1", "s"], ["c2"]):
        got = ipc.read_table(url, storage_options=s3.options, columns=cols)
        assert _as_pa(got).equals(table.select(cols)), cols


def test_filters_fetch_only_batches_that_can_match(s3):
    rows = 500_000
    table = qv.table({"k": qv.array(np.arange(rows)), "v": qv.array(np.arange(rows) * 0.5)})
    url = s3.url("f.arrow")
    with ipc.new_file(url, table.schema, storage_options=s3.options, statistics=True) as w:
        w.write_table(table, max_chunksize=rows // 100)
    size = s3.fs().size(url)
    s3.reset_counts()
    lo, hi = 123_000, 123_000 + rows // 100
    with ipc.open_file(url, storage_options=s3.options,
                       filters=[("k", ">=", lo), ("k", "<", hi)]) as reader:
        got = reader.read_all()
        assert reader.batches_skipped >= 97
    assert got.column("k").to_pylist() == list(range(lo, hi))
    assert s3.counts()["bytes"] <= 0.05 * size, (s3.counts(), size)


def test_filters_on_columns_not_read_fetch_their_buffers_only(s3):
    # pyarrow.parquet.read_table(columns=, filters=) reads the filter's columns too and
    # returns only columns=; a URL's reader fetches just those columns' buffers
    rows = 400_000
    table = qv.table({f"c{k}": qv.array(np.arange(rows) * (k + 1)) for k in range(8)})
    url = s3.url("fc.arrow")
    with ipc.new_file(url, table.schema, storage_options=s3.options, statistics=True) as w:
        w.write_table(table, max_chunksize=rows // 20)
    size = s3.fs().size(url)
    s3.reset_counts()
    filters = [("c0", ">=", rows // 2), ("c7", "<", 8 * (rows // 2 + 10))]
    got = ipc.read_table(url, storage_options=s3.options, columns=["c5"], filters=filters)
    assert got.schema.names == ["c5"]
    assert got.column("c5").to_pylist() == [k * 6 for k in range(rows // 2, rows // 2 + 10)]
    # three of 8 columns, of the one batch of 20 the statistics keep
    assert s3.counts()["bytes"] <= 0.05 * size, (s3.counts(), size)
    stream_url = s3.url("fc.arrows")
    with ipc.new_stream(stream_url, table.schema, storage_options=s3.options) as w:
        w.write_table(table, max_chunksize=rows // 20)
    got = ipc.read_table(stream_url, storage_options=s3.options, columns=["c5"],
                         filters=filters)
    assert got.schema.names == ["c5"]
    assert got.column("c5").to_pylist() == [k * 6 for k in range(rows // 2, rows // 2 + 10)]


def test_stream_reads_in_large_blocks(s3):
    table, _ = _wide(300_000, 4, 30)
    sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(sink, table.schema) as w:
        w.write_table(table, max_chunksize=10_000)
    data = sink.getvalue().to_pybytes()
    url = s3.url("w.arrows")
    s3.fs().pipe_file(url, data)
    s3.reset_counts()
    with ipc.open_stream(url, storage_options=s3.options) as reader:
        got = reader.read_all()
    assert _as_pa(got).equals(table)
    assert s3.counts()["gets"] <= 2  # 9.6 MB: one block of 16 MB (not one GET per message)


def test_large_compressed_write_is_a_multipart_upload_without_seeking(s3):
    # a compressed batch above the pipelined size: the writer must not seek back on an
    # upload; with a 5 MB block size, s3fs uploads parts as the writer goes
    rows = 2_000_000
    table = qv.table({"a": qv.array(np.arange(rows)), "b": qv.array(np.arange(rows) % 7)})
    url = s3.url("big.arrow")
    options = {**s3.options, "default_block_size": 5 << 20}
    s3.reset_counts()
    with ipc.new_file(url, table.schema, storage_options=options, compression="lz4") as w:
        w.write_table(table)
    posts = [m for m, _, _ in s3.log if m == "POST"]
    assert len(posts) >= 2  # CreateMultipartUpload and CompleteMultipartUpload
    assert ipc.read_table(url, storage_options=s3.options).equals(table)
    assert pa_ipc.open_file(s3.fs().cat_file(url)).read_all().equals(pa.table(table))


def _pending_uploads(s3, url: str) -> list:
    key = url.split("/", 3)[3]
    out = s3.fs().call_s3("list_multipart_uploads", Bucket=url.split("/")[2], Prefix=key)
    return out.get("Uploads", [])


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_a_writer_left_by_an_exception_leaves_no_object(s3, fmt):
    rows = 1_000_000
    table = qv.table({"a": qv.array(np.arange(rows))})
    url = s3.url(f"half.{fmt}")
    options = {**s3.options, "default_block_size": 5 << 20}
    new = ipc.new_file if fmt == "file" else ipc.new_stream
    with pytest.raises(RuntimeError, match="boom"), \
            new(url, table.schema, storage_options=options) as w:
        w.write_table(table)  # 8 MB: a part is uploaded already
        raise RuntimeError("boom")
    s3.fs().invalidate_cache()
    assert not s3.fs().exists(url)
    assert _pending_uploads(s3, url) == []


def test_local_paths_do_not_import_fsspec(tmp_path):
    path = tmp_path / "a.arrow"
    with ipc.new_file(str(path), qv.schema([("a", qv.int64())])) as w:
        w.write_batch(qv.record_batch({"a": [1, 2]}))
    code = ("import sys, quiver.ipc as ipc\n"
            f"t = ipc.read_table({str(path)!r})\n"
            f"r = ipc.open_file({str(path)!r}, memory_map=True)\n"
            "assert t.num_rows == 2 and r.num_record_batches == 1\n"
            "assert 'fsspec' not in sys.modules, 'fsspec imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


def test_a_missing_filesystem_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "fsspec", None)
    monkeypatch.setitem(sys.modules, "fsspec.core", None)
    with pytest.raises(E.NotSupported, match=r"pip install 'quiver\[s3\]'") as got:
        ipc.read_table("s3://bucket/key.arrow")
    assert "\n" not in str(got.value)


def test_a_scheme_without_its_filesystem_says_so():
    pytest.importorskip("fsspec")
    with pytest.raises(E.NotSupported, match=r"gs://.*install") as got:
        ipc.open_file("gs://bucket/key.arrow")
    assert "\n" not in str(got.value)


def test_storage_options_need_a_url(tmp_path):
    with pytest.raises(E.ArrowInvalidArgument, match="storage_options apply to URLs"):
        ipc.open_file(str(tmp_path / "x.arrow"), storage_options={"anon": True})


def test_secrets_stay_out_of_errors(s3):
    url = s3.url("missing.arrow").replace("s3://", f"s3://{s3.options['key']}:{SECRET}@")
    with pytest.raises(E.ArrowError) as got:
        ipc.open_file(s3.url("missing.arrow"), storage_options=s3.options)
    assert SECRET not in str(got.value)
    from quiver.fs.url import redact, scrub
    assert SECRET not in redact(url)
    assert scrub(f"bad secret {SECRET}", s3.options) == "bad secret ***"


def test_appending_to_a_url_is_refused_clearly(s3):
    # an object cannot be carried on in place: say so, and leave the object as it was
    table = qv.table({"a": qv.array([1, 2])})
    url = s3.url("append.arrow")
    with ipc.new_file(url, table.schema, storage_options=s3.options) as w:
        w.write_table(table)
    before = s3.fs().cat_file(url)
    with pytest.raises(E.ArrowInvalidArgument,
                       match=r"expected a local path to append to, found the URL .*"
                             r"append\.arrow.*new object") as info:
        ipc.new_file(url, table.schema, storage_options=s3.options, append=True)
    assert "Upload" not in str(info.value) and SECRET not in str(info.value)
    assert s3.fs().cat_file(url) == before
    missing = s3.url("append-missing.arrow")  # a URL with nothing there yet, too
    with pytest.raises(E.ArrowInvalidArgument, match="expected a local path to append to"):
        ipc.new_file(missing, table.schema, storage_options=s3.options, append=True)
    assert not s3.fs().exists(missing)
