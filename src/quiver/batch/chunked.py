"""Chunked arrays: one column made of several arrays of one type (``pyarrow.ChunkedArray``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import types as t
from .._readonly import readonly
from ..array import select as _select
from ..array.base import Array, item_position, slice_bounds, step_one_slice
from ..array.build import array as array_from_values
from ..array.concat import concat_arrays
from ..array.equal import array_equals
from ..array.validate import validate_array
from ..errors import ArrowError, ArrowIndexError, ArrowInvalidArgument, ArrowTypeError
from ._common import cast_type, export_c_stream, preview_chunks, window_of


def build(values: Any, dtype: t.DataType | None, name: str) -> Array:
    """An Array from ``values`` (an Array, a ChunkedArray, or Python / numpy data)."""
    if isinstance(values, ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, Array):
        if dtype is not None and not values.type.equals(dtype):
            raise ArrowTypeError(
                f"expected column {name!r} of type {dtype}, found {values.type}"
            )
        return values
    try:
        return array_from_values(values, type=dtype)
    except ArrowError as exc:
        raise exc.locate(field_path=name or None) from None


def chunks_equal(a: Sequence[Array], b: Sequence[Array]) -> bool:
    """Equality of two chunk lists of the same total length, whatever their chunking."""
    ia = ib = 0  # current chunk
    oa = ob = 0  # position inside it
    while ia < len(a) and ib < len(b):
        ra, rb = len(a[ia]) - oa, len(b[ib]) - ob
        if ra == 0:
            ia, oa = ia + 1, 0
            continue
        if rb == 0:
            ib, ob = ib + 1, 0
            continue
        n = min(ra, rb)
        if not array_equals(a[ia].slice(oa, n), b[ib].slice(ob, n)):
            return False
        oa += n
        ob += n
    return True


class ChunkedArray:
    """A column made of several arrays of one type, like ``pyarrow.ChunkedArray``."""

    __slots__ = ("_chunks", "_length", "_type")

    def __init__(self, chunks: Sequence[Array], type: t.DataType | None = None) -> None:
        chunks = tuple(chunks)
        if type is None:
            if not chunks:
                raise ArrowInvalidArgument("expected a type for a ChunkedArray without chunks")
            type = chunks[0].type if isinstance(chunks[0], Array) else None
        if not isinstance(type, t.DataType):
            raise ArrowTypeError(f"expected a DataType, found {type!r}")
        for i, c in enumerate(chunks):
            if not isinstance(c, Array):
                raise ArrowTypeError(f"expected chunk {i} as a quiver Array, found {c!r}")
            if not c.type.equals(type):
                raise ArrowInvalidArgument(f"expected chunk {i} of type {type}, found {c.type}")
        self._chunks = chunks
        self._type = type
        self._length = sum(len(c) for c in chunks)

    type: t.DataType = readonly("_type", "The type of every chunk.")

    @property
    def chunks(self) -> list[Array]:
        """The chunks in order."""
        return list(self._chunks)

    @property
    def num_chunks(self) -> int:
        """Number of chunks."""
        return len(self._chunks)

    @property
    def null_count(self) -> int:
        """Total nulls over all chunks."""
        return sum(c.null_count for c in self._chunks)

    def chunk(self, i: int) -> Array:
        """Chunk ``i``."""
        n = len(self._chunks)
        if not isinstance(i, int) or not -n <= i < n:
            raise ArrowIndexError(f"expected a chunk index below {n}, found {i!r}")
        return self._chunks[i]

    def __len__(self) -> int:
        return self._length

    def length(self) -> int:
        """Total number of values (pyarrow's spelling)."""
        return self._length

    def to_pylist(self) -> list[Any]:
        """All values as Python objects."""
        out: list[Any] = []
        for c in self._chunks:
            out.extend(c.to_pylist())
        return out

    def slice(self, offset: int = 0, length: int | None = None) -> ChunkedArray:
        """Values ``offset .. offset + length`` without copying."""
        offset, length = slice_bounds(self._length, offset, length)
        return ChunkedArray(window_of(self._chunks, offset, length), self._type)

    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, slice):
            return self.slice(*step_one_slice(key, self._length))
        if isinstance(key, bool) or not hasattr(key, "__index__"):
            raise ArrowTypeError(f"expected an int or slice index, found {key!r}")
        i = item_position(key.__index__(), self._length, key)
        for c in self._chunks:
            if i < len(c):
                return c[i]
            i -= len(c)
        raise ArrowIndexError(f"expected an index below {self._length}, found {key}")

    def to_numpy(self, zero_copy_only: bool = False) -> Any:
        """All values as one numpy array (copies when there is more than one chunk)."""
        if len(self._chunks) == 1:
            return self._chunks[0].to_numpy(zero_copy_only=zero_copy_only)
        if zero_copy_only:
            raise ArrowInvalidArgument(
                f"expected one chunk for a zero-copy conversion, found {len(self._chunks)}"
            )
        if not self._chunks:
            return self.combine_chunks().to_numpy(zero_copy_only=False)
        return np.concatenate([c.to_numpy(zero_copy_only=False) for c in self._chunks])

    def combine_chunks(self) -> Array:
        """One array with every value (copies unless there is exactly one chunk)."""
        if not self._chunks:
            return build([], self._type, "")
        return concat_arrays(list(self._chunks))

    def take(self, indices: Any) -> ChunkedArray:
        """The values at ``indices`` (one chunk)."""
        return ChunkedArray([self.combine_chunks().take(indices)], self._type)  # type: ignore[attr-defined]

    def filter(self, mask: Any) -> ChunkedArray:
        """The values where ``mask`` is True (one chunk)."""
        return self.take(_select.selection(mask, self._length))

    def is_null(self) -> ChunkedArray:
        """Booleans, True where a value is null (chunk by chunk)."""
        return ChunkedArray([_select.is_null(c) for c in self._chunks], t.bool_())

    def fill_null(self, fill_value: Any) -> ChunkedArray:
        """Nulls replaced by ``fill_value`` (chunk by chunk)."""
        return ChunkedArray([_select.fill_null(c, fill_value) for c in self._chunks], self._type)

    def cast(self, target_type: Any, safe: bool = True) -> ChunkedArray:
        """Every chunk cast to ``target_type``."""
        chunks = [c.cast(target_type, safe=safe) for c in self._chunks]  # type: ignore[attr-defined]
        dtype = chunks[0].type if chunks else cast_type(target_type)
        return ChunkedArray(chunks, dtype)

    def to_pandas(self) -> Any:
        """A pandas Series of the values (see :func:`quiver.pandas_out.batch_to_pandas`)."""
        return self.combine_chunks().to_pandas()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """An ``arrow_array_stream`` PyCapsule of the chunks (a stream of arrays of this
        type, the Arrow PyCapsule protocol), zero-copy.

        >>> import pyarrow as pa
        >>> pa.chunked_array(chunked_array([[1], [2, 3]])).num_chunks
        2
        """
        return export_c_stream.call(self, requested_schema)

    def validate(self, *, full: bool = False) -> None:
        """Validate every chunk."""
        for c in self._chunks:
            validate_array(c, full=full)

    def equals(self, other: object) -> bool:
        """Same type and values, whatever the chunking."""
        if not isinstance(other, ChunkedArray):
            return False
        if not self._type.equals(other._type) or self._length != other._length:
            return False
        return chunks_equal(self._chunks, other._chunks)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChunkedArray):
            return NotImplemented
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        head = f"<quiver.ChunkedArray {self._type} length={self._length}>"
        return f"{head} {preview_chunks(self._chunks)}"


def chunked_array(arrays: Sequence[Any], type: t.DataType | None = None) -> ChunkedArray:
    """A ChunkedArray from Arrays (or Python lists built with ``type``)."""
    chunks = [build(a, type, "") for a in arrays]
    return ChunkedArray(chunks, type)


# ChunkedArray names quiver.batch as its module, so doctest finds its methods' examples
# only when pointed at them
__test__ = {"ChunkedArray": ChunkedArray}
