"""Tests for quiver.pandas_out: quiver arrays, batches and tables to pandas."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import quiver as qv
import quiver.ipc as ipc
from quiver.errors import ArrowTypeError, NotSupported
from quiver.interop import import_batch
from quiver.interop.numpy_pandas import batch_from_pandas, batch_to_pandas
from tests.roundtrip.test_array_props import SETTINGS

batch_mod = pytest.importorskip("quiver.batch")


pd = pytest.importorskip("pandas")



def _frame() -> Any:
    return pd.DataFrame(
        {
            "i": [1, 2, 3],
            "I": pd.array([1, None, 3], dtype="Int64"),
            "u": pd.array([1, None, 3], dtype="UInt8"),
            "b": pd.array([True, None, False], dtype="boolean"),
            "F": pd.array([1.5, None, 2.0], dtype="Float64"),
            "s": pd.array(["a", None, "c"], dtype="str"),
            "S": pd.array(["a", None, "é"], dtype=pd.StringDtype("python")),
            "c": pd.Categorical(["u", "v", "u"], ordered=True),
            "t": pd.date_range("2020", periods=3, tz="Europe/Paris"),
            "n": pd.date_range("2020", periods=3),
            "f": [0.5, np.nan, 1.0],
            "d": [dt.date(2020, 1, 1), None, dt.date(2021, 1, 1)],
            "o": [b"x", None, b"z"],
            "bb": [True, False, True],
            "td": pd.to_timedelta([1, 2, None], unit="s"),
        },
        index=pd.Index([10, 20, 30], name="idx"),
    )


def _pa_round_trip(df: Any, **kw: Any) -> Any:
    return pa.Table.from_pandas(df, **kw).to_pandas()


def test_round_trip_matches_pyarrows() -> None:
    df = _frame()
    back = qv.Table.from_pandas(df).to_pandas()
    pd.testing.assert_frame_equal(back, _pa_round_trip(df))
    for name in ("I", "u", "b", "F", "s", "c", "t", "i", "f"):
        assert back[name].dtype == df[name].dtype, name
    assert back.index.name == "idx"


def test_quiver_and_pyarrow_read_each_others_pandas_metadata() -> None:
    df = _frame()
    ours = qv.Table.from_pandas(df)
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, ours.schema) as w:
        w.write_table(ours)
    theirs = pa.ipc.open_file(bytes(sink.getvalue())).read_pandas()
    pd.testing.assert_frame_equal(theirs, _pa_round_trip(df))
    pd.testing.assert_frame_equal(qv.table(pa.Table.from_pandas(df)).to_pandas(),
                                  _pa_round_trip(df))


@pytest.mark.parametrize("index", [
    pd.RangeIndex(3), pd.RangeIndex(5, 11, 2, name="r"), pd.Index(["a", "b", "c"]),
    pd.MultiIndex.from_arrays([[1, 1, 2], ["a", "b", "c"]], names=["x", None]),
    pd.DatetimeIndex(["2020-01-01", "2020-01-02", "2020-01-03"], name="when"),
])
@pytest.mark.parametrize("preserve_index", [None, True, False])
def test_the_index_survives_as_pyarrows(index: Any, preserve_index: bool | None) -> None:
    df = _frame().set_axis(index)
    ours = qv.Table.from_pandas(df, preserve_index=preserve_index)
    theirs = pa.Table.from_pandas(df, preserve_index=preserve_index)
    assert ours.column_names == theirs.column_names
    pd.testing.assert_frame_equal(ours.to_pandas(), theirs.to_pandas())


def test_a_sliced_table_falls_back_to_a_default_range_index() -> None:
    df = pd.DataFrame({"a": range(5)})
    ours = qv.Table.from_pandas(df).slice(1, 2).to_pandas()
    pd.testing.assert_frame_equal(ours, pa.Table.from_pandas(df).slice(1, 2).to_pandas())


def test_feather_files_round_trip_between_pandas_and_quiver(tmp_path: Path) -> None:
    df = _frame()
    path = tmp_path / "pandas.feather"
    df.to_feather(path)
    expected = pd.read_feather(path)
    ours = ipc.open_file(str(path)).read_pandas()
    pd.testing.assert_frame_equal(ours, expected)
    # and pandas reads quiver's file back to what pyarrow's round trip gives
    qpath = tmp_path / "quiver.feather"
    table = qv.Table.from_pandas(df)
    with ipc.new_file(str(qpath), table.schema) as w:
        w.write_table(table)
    pd.testing.assert_frame_equal(pd.read_feather(qpath), _pa_round_trip(df))
    # without the python-storage string column (pyarrow too gives it back with its own
    # storage), both give back the very frame they were given
    plain = df.drop(columns=["S"])
    table = qv.Table.from_pandas(plain)
    with ipc.new_file(str(qpath), table.schema) as w:
        w.write_table(table)
    pd.testing.assert_frame_equal(pd.read_feather(qpath), plain)
    pd.testing.assert_frame_equal(table.to_pandas(), plain)


def test_to_pandas_takes_pyarrows_options() -> None:
    table = qv.table({"d": qv.array([dt.date(2020, 1, 2), None]),
                      "t": qv.array([dt.datetime(2020, 1, 2, 3), None]),
                      "i": qv.array([1, None])})
    ptable = pa.table({"d": pa.array([dt.date(2020, 1, 2), None]),
                       "t": pa.array([dt.datetime(2020, 1, 2, 3), None]),
                       "i": pa.array([1, None])})
    for kw in ({}, {"date_as_object": False}, {"timestamp_as_object": True},
               {"split_blocks": True, "self_destruct": True}):
        pd.testing.assert_frame_equal(table.to_pandas(**kw), ptable.to_pandas(**kw))
    mapped = table.to_pandas(types_mapper={qv.int64(): pd.Int64Dtype()}.get)
    assert str(mapped["i"].dtype) == "Int64" and mapped["i"].isna().tolist() == [False, True]


def test_array_to_pandas_is_a_series() -> None:
    s = qv.array(["a", None]).to_pandas()
    pd.testing.assert_series_equal(s, pa.array(["a", None]).to_pandas())


# -- hypothesis: random frames ------------------------------------------------------------

_COLUMN_KINDS = ["int64", "Int64", "Float64", "boolean", "float", "str", "object",
                 "string", "category", "tz", "naive", "bool"]


@st.composite
def frames(draw: Any) -> Any:
    n = draw(st.integers(0, 8))
    kinds = draw(st.lists(st.sampled_from(_COLUMN_KINDS), min_size=1, max_size=5))
    cols: dict[str, Any] = {}
    ints = st.integers(-1000, 1000)
    for i, kind in enumerate(kinds):
        maybe = st.one_of(st.none(), ints)
        if kind == "int64":
            cols[f"c{i}"] = np.array(draw(st.lists(ints, min_size=n, max_size=n)), np.int64)
        elif kind in ("Int64", "Float64"):
            cols[f"c{i}"] = pd.array(draw(st.lists(maybe, min_size=n, max_size=n)), dtype=kind)
        elif kind == "boolean":
            vals = draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n))
            cols[f"c{i}"] = pd.array(vals, dtype="boolean")
        elif kind == "bool":
            cols[f"c{i}"] = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        elif kind == "float":
            vals = draw(st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), min_size=n,
                                 max_size=n))
            cols[f"c{i}"] = np.array([np.nan if v is None else v for v in vals], np.float64)
        elif kind == "str":
            vals = draw(st.lists(st.one_of(st.none(), st.text(max_size=5)), min_size=n,
                                 max_size=n))
            cols[f"c{i}"] = pd.array(vals, dtype="str")
        elif kind in ("object", "string"):  # object strings with None; string[python]
            vals = draw(st.lists(st.one_of(st.none(), st.text(max_size=5)), min_size=n,
                                 max_size=n))
            cols[f"c{i}"] = (pd.Series(vals, dtype=object) if kind == "object"
                             else pd.array(vals, dtype="string[python]"))
        elif kind == "category":
            vals = draw(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "cc"])),
                                 min_size=n, max_size=n))
            cols[f"c{i}"] = pd.Categorical(vals, ordered=draw(st.booleans()))
        else:
            vals = draw(st.lists(st.one_of(st.none(), st.integers(0, 10**9)), min_size=n,
                                 max_size=n))
            stamps = pd.to_datetime([None if v is None else v for v in vals], unit="s")
            cols[f"c{i}"] = stamps.tz_localize("UTC").tz_convert("Asia/Tokyo") \
                if kind == "tz" else stamps
    df = pd.DataFrame(cols)
    index_kind = draw(st.sampled_from(["range", "offset range", "named", "multi"]))
    if index_kind == "offset range":
        df.index = pd.RangeIndex(3, 3 + 2 * n, 2, name=draw(st.sampled_from([None, "r"])))
    elif index_kind == "named":
        df.index = pd.Index(draw(st.lists(ints, min_size=n, max_size=n)), name="k",
                            dtype=np.int64)
    elif index_kind == "multi":
        df.index = pd.MultiIndex.from_arrays(
            [np.arange(n), np.array([str(i % 2) for i in range(n)], dtype=object)],
            names=["m", None])
    return df


@SETTINGS
@given(frames(), st.sampled_from([None, True, False]))
def test_random_frames_round_trip_as_pyarrows(df: Any, preserve_index: bool | None) -> None:
    ours = qv.Table.from_pandas(df, preserve_index=preserve_index)
    theirs = pa.Table.from_pandas(df, preserve_index=preserve_index)
    assert ours.column_names == theirs.column_names
    pd.testing.assert_frame_equal(ours.to_pandas(), theirs.to_pandas())
    # through an IPC file, each reading the other's
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, ours.schema) as w:
        w.write_table(ours)
    pd.testing.assert_frame_equal(pa.ipc.open_file(bytes(sink.getvalue())).read_pandas(),
                                  theirs.to_pandas())


@pytest.mark.parametrize("df", [
    pd.DataFrame({0: [1], 1: [2]}),
    pd.DataFrame({"a": [1]}).rename_axis("cols", axis=1),
    pd.DataFrame({("a", "b"): [1], ("a", "c"): [2]}).rename_axis(["x", "y"], axis=1),
    pd.DataFrame({1.5: [1]}),
], ids=["int labels", "named columns", "multi-level columns", "float labels"])
def test_column_labels_come_back_as_pyarrows(df: Any) -> None:
    theirs = pa.Table.from_pandas(df).to_pandas()
    ours = qv.Table.from_pandas(df)
    pd.testing.assert_frame_equal(ours.to_pandas(), theirs)
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, ours.schema) as w:
        w.write_table(ours)
    pd.testing.assert_frame_equal(pa.ipc.open_file(bytes(sink.getvalue())).read_pandas(), theirs)
    pd.testing.assert_frame_equal(qv.table(pa.Table.from_pandas(df)).to_pandas(), theirs)


@pytest.mark.parametrize("options", [{}, {"timestamp_as_object": True}, {"date_as_object": False}])
def test_columns_without_pandas_metadata_convert_as_pyarrows(options: dict) -> None:
    table = pa.table({
        "t": pa.array([dt.datetime(2020, 1, 1, 5), None], pa.timestamp("us", "Asia/Tokyo")),
        "b": pa.array([True, None]),
        "dec": pa.array([1, None], pa.decimal128(5, 0)),
        "tm": pa.array([dt.time(1), None]),
        "du": pa.array([1, None], pa.duration("ms")),
        "bin": pa.array([b"x", None]),
        "lb": pa.array([b"x", None], pa.large_binary()),
        "d": pa.array([dt.date(2020, 1, 2), None]),
        "i": pa.array([1, None], pa.int16()),
        "s": pa.array(["x", None], pa.string_view()),
        "dict": pa.array(["a", None, "a"][:2]).dictionary_encode(),
    })
    pd.testing.assert_frame_equal(qv.table(table).to_pandas(**options), table.to_pandas(**options))


RecordBatch = batch_mod.RecordBatch


def _batch(**columns):
    arrays = list(columns.values())
    schema = qv.schema([qv.field(n, a.type) for n, a in columns.items()])
    return RecordBatch(schema, arrays)


def test_numeric_columns_without_nulls_are_zero_copy():
    data = np.arange(10, dtype=np.int64)
    col = qv.array(data)
    df = batch_to_pandas(_batch(a=col))
    out = df["a"].to_numpy()
    assert out.dtype == np.int64
    assert out.tolist() == list(range(10))
    assert np.shares_memory(out, col.buffers[1])


def test_nulls_follow_pyarrow_rules():
    df = batch_to_pandas(
        _batch(
            i=qv.array([1, None, 3]),
            f=qv.array([1.5, None, 2.5]),
            s=qv.array(["a", None, "c"]),
            b=qv.array([True, None, False]),
        )
    )
    assert df["i"].dtype == np.float64
    assert np.isnan(df["i"][1])
    assert np.isnan(df["f"][1])
    assert df["s"].tolist()[0] == "a" and df["s"].isna().tolist() == [False, True, False]
    assert df["b"].tolist() == [True, None, False]


def test_timestamps_keep_time_zone_and_nat():
    ts = qv.array(
        np.array(["2024-01-01T00:00", "NaT"], dtype="M8[us]"), qv.timestamp("us", "Asia/Tokyo")
    )
    df = batch_to_pandas(_batch(t=ts))
    assert str(df["t"].dt.tz) == "Asia/Tokyo"
    assert df["t"][0] == pd.Timestamp("2024-01-01T09:00", tz="Asia/Tokyo")
    assert pd.isna(df["t"][1])


def test_dictionary_becomes_categorical():
    col = qv.array(["x", "y", None, "x"], qv.dictionary(qv.int8(), qv.string()))
    df = batch_to_pandas(_batch(c=col))
    cat = df["c"]
    assert isinstance(cat.dtype, pd.CategoricalDtype)
    assert cat.cat.codes.tolist()[2] == -1
    assert cat.astype(object).where(cat.notna(), None).tolist() == ["x", "y", None, "x"]


def test_round_trip_through_pandas_keeps_values():
    batch = _batch(a=qv.array([1, 2, 3]), s=qv.array(["x", "y", "z"]))
    back = batch_from_pandas(batch_to_pandas(batch))
    assert back.to_pydict() == batch.to_pydict()


def test_rejects_non_dataframes_and_duplicate_names():
    with pytest.raises(ArrowTypeError, match="DataFrame"):
        batch_from_pandas({"a": [1]})
    with pytest.raises(ArrowTypeError, match="RecordBatch or Table"):
        batch_to_pandas([1, 2])
    dup = RecordBatch(
        qv.schema([qv.field("a", qv.int64()), qv.field("a", qv.int64())]),
        [qv.array([1]), qv.array([2])],
    )
    with pytest.raises(NotSupported, match="duplicate"):
        batch_to_pandas(dup)


def test_pandas_out_imports_first_in_a_fresh_interpreter():
    # it sits in the array layer and imports array.data, whose package imports it back
    import subprocess
    import sys
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src"
    done = subprocess.run([sys.executable, "-c", "import quiver.pandas_out"],
                          capture_output=True, text=True, env={"PYTHONPATH": str(src)})
    assert done.returncode == 0, done.stderr


# -- pyarrow's result options act as in pyarrow (never accepted and ignored) ---------------


def test_to_pandas_strings_to_categorical() -> None:
    t = qv.table(pd.DataFrame({"s": ["a", None, "a"]}))
    assert isinstance(t.to_pandas(strings_to_categorical=True)["s"].dtype, pd.CategoricalDtype)


def _option_table() -> pa.Table:
    return pa.table({
        "s": ["b", None, "a", "b"], "i": pa.array([3, None, 1, 3]), "j": [1, 2, 3, 1],
        "bin": pa.array([b"x", b"y", None, b"x"]),
        "ls": pa.array(["p", "q", "p", None], pa.large_string()),
        "f": [1.0, 2.0, None, 1.0],
        "ts": pa.array([dt.datetime(2020, 1, 1), None, dt.datetime(1970, 1, 2),
                        dt.datetime(2020, 1, 1)], pa.timestamp("us")),
        "tz": pa.array([dt.datetime(2020, 1, 1)] * 4, pa.timestamp("ms", "Asia/Tokyo")),
        "d": pa.array([1, 2, None, 4], pa.duration("s")),
        "da": pa.array([dt.date(2020, 1, 1), None, dt.date(1969, 12, 31),
                        dt.date(2020, 1, 1)]),
        "dict": pa.array(["a", "b", None, "a"]).dictionary_encode(),
    })


@pytest.mark.parametrize("options", [
    {"strings_to_categorical": True},
    {"categories": ["j", "f", "i", "ts", "s"]},
    {"integer_object_nulls": True},
    {"coerce_temporal_nanoseconds": True},
    {"coerce_temporal_nanoseconds": True, "date_as_object": False},
    {"integer_object_nulls": True, "strings_to_categorical": True, "use_threads": False,
     "split_blocks": True, "deduplicate_objects": False},
], ids=repr)
def test_to_pandas_options_as_pyarrow(options: dict) -> None:
    theirs = _option_table()
    ours = qv.table(theirs)
    pd.testing.assert_frame_equal(ours.to_pandas(**options), theirs.to_pandas(**options))
    for name in ("s", "i", "bin", "ts", "d"):
        expected = theirs[name].chunk(0).to_pandas(**{k: v for k, v in options.items()
                                                     if k != "categories"})
        got = ours[name].chunks[0].to_pandas(**{k: v for k, v in options.items()
                                                 if k != "categories"})
        pd.testing.assert_series_equal(got, expected, check_names=False)


def test_to_pandas_coerce_nanoseconds_out_of_range() -> None:
    t = qv.table({"t": qv.array([dt.datetime(3000, 1, 1)], qv.timestamp("us"))})
    with pytest.raises(qv.ArrowInvalid, match="nanosecond range"):
        t.to_pandas(coerce_temporal_nanoseconds=True)
    with pytest.raises(pa.ArrowInvalid):  # pyarrow refuses it as well
        pa.table(t).to_pandas(coerce_temporal_nanoseconds=True)


@pytest.mark.parametrize("name", ["s", "i", "j", "bin", "f", "ts", "tz", "d", "da", "dict",
                                  "b", "bnn", "jj", "fnn", "lst"])
def test_to_pandas_zero_copy_only_as_pyarrow(name: str) -> None:
    table = _option_table().append_column("b", pa.array([True, None, False, True])) \
        .append_column("bnn", pa.array([True, False, False, True])) \
        .append_column("jj", pa.chunked_array([[1, 2], [3, 4]])) \
        .append_column("fnn", pa.array([1.0, 2.0, 3.0, 4.0])) \
        .append_column("lst", pa.array([[1], [2], [], [3]]))
    theirs = table.select([name])
    ours = qv.table(theirs)
    if name == "jj":
        assert ours[name].num_chunks == 2
    for extra in ({}, {"coerce_temporal_nanoseconds": True}):
        try:
            expected = theirs.to_pandas(zero_copy_only=True, split_blocks=True, **extra)
        except pa.ArrowInvalid:
            with pytest.raises(qv.ArrowInvalid, match="zero_copy_only"):
                ours.to_pandas(zero_copy_only=True, **extra)
        else:
            got = ours.to_pandas(zero_copy_only=True, **extra)
            pd.testing.assert_frame_equal(got, expected)


def test_to_pandas_refuses_unknown_and_unsupported_options() -> None:
    t = qv.table({"a": [1]})
    with pytest.raises(qv.ArrowTypeError, match="stings_to_categorical"):
        t.to_pandas(stings_to_categorical=True)
    with pytest.raises(NotSupported, match="maps_as_pydicts"):
        t.to_pandas(maps_as_pydicts="strict")
    with pytest.raises(qv.ArrowTypeError, match="bogus"):
        qv.array([1]).to_pandas(bogus=1)
    assert t.to_pandas(maps_as_pydicts=None, self_destruct=True)["a"].tolist() == [1]


def test_to_pandas_time64_ns_below_microseconds_is_refused_as_pyarrow() -> None:
    # datetime.time holds microseconds: pyarrow refuses a time64[ns] value with non-zero
    # nanoseconds rather than drop them; quiver gave 00:00:00 for 1 ns, silently
    theirs = pa.table({"t": pa.array([1000, None, 86_399_999_999_001], pa.time64("ns"))})
    ours = qv.table(theirs)
    with pytest.raises(pa.ArrowInvalid, match="non-zero nanoseconds"):
        theirs.to_pandas()
    with pytest.raises(qv.ArrowInvalid, match=r"non-zero nanoseconds.*row 2"):
        ours.to_pandas()
    with pytest.raises(qv.ArrowInvalid, match="non-zero nanoseconds"):
        ours["t"].chunks[0].to_pandas()
    whole = pa.table({"t": pa.array([1000, None, 86_399_999_999_000], pa.time64("ns"))})
    pd.testing.assert_frame_equal(qv.table(whole).to_pandas(), whole.to_pandas())


@pytest.mark.parametrize("mapper", [
    {pa.int64(): pd.Int64Dtype()}.get,  # pyarrow's types as keys: ignored silently before
    pd.ArrowDtype,                      # refused a quiver type ("must be a pyarrow.DataType")
    {pa.string(): pd.StringDtype()}.get,
], ids=["pyarrow-keyed-dict", "ArrowDtype", "string-dtype"])
def test_a_types_mapper_written_for_pyarrow_maps_as_in_pyarrow(mapper) -> None:
    pb = pa.record_batch({"i": pa.array([1, None, 2**60]), "f": pa.array([1.5, None, 2.0]),
                          "s": pa.array(["a", None, "c"])})
    expected = pb.to_pandas(types_mapper=mapper)
    got = import_batch(pb).to_pandas(types_mapper=mapper)
    assert list(got.dtypes) == list(expected.dtypes)
    assert got.equals(expected)  # (2**60 kept exactly where the mapper asks for Int64)
