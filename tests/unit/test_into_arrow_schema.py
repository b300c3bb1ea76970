"""``Table.from_pandas(df, schema=...)`` and ``table(df, schema=...)`` side by side with
pyarrow (issue 25): an unnamed index level chosen by the field name pyarrow gives it,
object columns built with the field's type, text fields refusing numbers."""

from __future__ import annotations

import datetime as dt

import pytest

import quiver as qv
from quiver.errors import ArrowError

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")


def test_an_unnamed_index_level_is_chosen_by_its_field_name() -> None:
    df = pd.DataFrame({"a": [1, 2]}, index=pd.Index([7, 8]))
    schema = pa.schema([("__index_level_0__", pa.int32()), ("a", pa.int64())])
    want = pa.Table.from_pandas(df, schema=schema)
    got = pa.table(qv.Table.from_pandas(df, schema=qv.schema(schema)))
    assert got.schema.remove_metadata() == want.schema.remove_metadata()
    assert got.to_pylist() == want.to_pylist()
    assert got.schema.pandas_metadata["index_columns"] == ["__index_level_0__"]


@pytest.mark.parametrize(("values", "field"), [
    ([False, True], pa.int8()),  # bools are no integers to pyarrow's builder
    ([dt.date(2000, 1, 2), None], pa.int64()),
    ([1.5, None], pa.int64()),  # a fraction: quiver refuses, pyarrow truncates
])
def test_object_columns_are_built_with_the_fields_type(values: list, field) -> None:
    # quiver inferred the column's type and cast it: bools became 0/1, dates their days
    df = pd.DataFrame({"c": pd.Series(values, dtype=object)})
    schema = pa.schema([("c", field)])
    with pytest.raises(ArrowError):
        qv.Table.from_pandas(df, schema=qv.schema(schema))


def test_object_columns_with_the_fields_type_give_pyarrows_values() -> None:
    df = pd.DataFrame({"c": pd.Series([1, None, 3], dtype=object),
                       "d": pd.Series(["x", None], dtype=object).reindex([0, 1, 2])})
    schema = pa.schema([("c", pa.int8()), ("d", pa.large_string())])
    want = pa.Table.from_pandas(df, schema=schema)
    got = pa.table(qv.table(df, schema=qv.schema(schema)))
    assert got.schema.remove_metadata() == want.schema.remove_metadata()
    assert got.to_pylist() == want.to_pylist()


@pytest.mark.parametrize(("column", "field"), [
    (pd.Series([True, False]), pa.string()),
    (pd.Series([1, 2]), pa.large_string()),
    (pd.Series([1, None], dtype="Int64"), pa.string()),
])
def test_text_fields_refuse_numbers_and_bools_as_pyarrow(column, field) -> None:
    df = pd.DataFrame({"c": column})
    schema = pa.schema([("c", field)])
    with pytest.raises(pa.ArrowException):
        pa.Table.from_pandas(df, schema=schema)
    with pytest.raises(ArrowError, match="text or binary"):
        qv.Table.from_pandas(df, schema=qv.schema(schema))


def test_a_time_zone_with_braces_is_refused_with_its_text():
    """A zone's text goes into the message as it is (braces included), never through a
    format template (a fuzzed file's zone "}{" once raised ValueError)."""
    import pytest

    import quiver as qv
    from quiver.array.primitive import resolve_tz
    from quiver.types.checks import tz_problem

    for tz in ("}", "{what}", "a{b}c"):
        assert tz_problem(tz).endswith(f"found {tz!r}")
        with pytest.raises(qv.ArrowInvalid, match="time zone"):
            resolve_tz(tz)
        with pytest.raises(qv.ArrowInvalidArgument, match="tz as an IANA"):
            qv.timestamp("us", tz=tz)
