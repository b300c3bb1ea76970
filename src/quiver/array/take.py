"""The one gather walk: rows of any array by index, for ``take``, ``filter`` and casts.

Not an Arrow spec section: the results compare equal to ``pyarrow.compute.take``.

Theory of operation
-------------------
One walk, :func:`gather`, gathers rows of any array.  It asks the layout table
(:func:`quiver.layout.layout_of`) what each buffer holds and how the children relate to the
parent, and each buffer kind and child rule has one vectorized gather:

- ``validity`` / ``bits``: unpack, index, repack (a null index makes a null slot);
- ``values`` (fixed width), ``views``, ``type_ids`` and the per-slot ``offsets``/``sizes`` of
  list views and dense unions: rows of ``byte_width`` bytes, indexed as a 2-d uint8 array;
- ``offsets`` + ``data`` (binary, string) and ``offsets`` + child (lists, maps): the selected
  ranges, turned into one position array (``np.repeat`` of the range starts plus a running
  count), which indexes the data bytes or is taken from the child;
- children ``same`` (struct, sparse union): the same rows of every child; ``fixed``
  (fixed-size list): each row widened to its ``list_size`` child rows; ``views`` and
  ``dense``: children kept whole (the gathered offsets point into them); ``run_end``: the
  runs that hold the rows, equal neighbours merged back into runs.

Dictionary arrays gather their indices and keep the dictionary; extension arrays gather
their storage.  No Python loop runs per row.

"""

from __future__ import annotations

import numpy as np

from .. import types as t
from ..buffers import pack_bits, unpack_bits
from ..errors import ArrowInvalid, NotSupported
from ..layout import layout_of, storage_numpy_dtype
from .base import Array, make_array
from .build import array
from .concat import concat_arrays
from .data import ranges as _ranges

_I32_MAX = (1 << 31) - 1


def _bits(buf: np.ndarray | None, offset: int, length: int) -> np.ndarray | None:
    return None if buf is None else unpack_bits(buf, offset, length)


def _rows(buf: np.ndarray, width: int, start: int, count: int) -> np.ndarray:
    """``count`` rows of ``width`` bytes from row ``start`` of ``buf`` (a 2-d view)."""
    need = (start + count) * width
    if len(buf) < need:
        raise ArrowInvalid(f"expected a buffer of at least {need} bytes, found {len(buf)}")
    return buf[start * width : need].reshape(count, width)


def _new_offsets(lengths: np.ndarray, width: int) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if width == 4 and offsets[-1] > _I32_MAX:
        raise ArrowInvalid(
            f"expected at most {_I32_MAX} values under 32-bit offsets, found {offsets[-1]} "
            "(take into the large_ type)"
        )
    return offsets.astype(f"<i{width}").view(np.uint8)


def gather(arr: Array, idx: np.ndarray, valid: np.ndarray | None) -> Array:
    """Rows ``idx`` (relative to ``arr``'s offset) of ``arr``; ``valid`` False makes a null."""
    dtype = arr.type
    st = t.storage_of(dtype)
    lay = layout_of(dtype)
    k = len(idx)
    off = arr.offset
    at = idx + off if off else idx  # positions in the buffers' element space
    if isinstance(st, t.NullType):
        return make_array(dtype, k, [], (), k, 0)
    if isinstance(st, t.RunEndEncodedType):
        return _take_run_end(arr, at, valid)
    out_valid = valid
    buffers: list[np.ndarray | None] = []
    positions: np.ndarray | None = None  # child (or data) positions of offset ranges
    src = arr.buffers
    for i, spec in enumerate(lay.buffers):
        buf = src[i] if i < len(src) else None
        kind = spec.kind
        if kind == "validity":
            mask = None if arr.null_count == 0 else _bits(buf, off, len(arr))
            if mask is not None:
                out_valid = mask[idx] if out_valid is None else mask[idx] & out_valid
            buffers.append(None)  # filled in at the end
        elif kind == "bits":
            bits = unpack_bits(buf, off, len(arr)) if len(arr) else np.zeros(0, bool)
            got = bits[idx] if len(arr) else np.zeros(k, bool)
            buffers.append(pack_bits(got))
        elif kind == "offsets" and lay.children in ("offsets", "none"):
            w = spec.byte_width
            if buf is None or len(arr) == 0:
                offsets = np.zeros(len(arr) + 1 + off, dtype=f"<i{w}")
            else:
                offsets = _rows(buf, w, 0, off + len(arr) + 1).reshape(-1).view(f"<i{w}")
            starts = offsets[at].astype(np.int64) if k else np.zeros(0, np.int64)
            lengths = offsets[at + 1].astype(np.int64) - starts if k else starts
            if valid is not None:
                lengths = np.where(valid, lengths, 0)
            buffers.append(_new_offsets(lengths, w))
            positions = _ranges(starts, lengths)
        elif kind == "data":
            data = buf if buf is not None else np.zeros(0, np.uint8)
            buffers.append(data[positions] if positions is not None and len(positions)
                           else np.zeros(0, np.uint8))
        elif kind in ("values", "views", "type_ids", "offsets", "sizes"):
            w = spec.byte_width
            if len(arr) == 0:
                buffers.append(np.zeros(k * w, np.uint8))
                continue
            rows = _rows(buf, w, off, len(arr))[idx]  # type: ignore[arg-type]
            if kind == "sizes" and valid is not None:
                rows[~valid] = 0  # a null list view covers nothing
            buffers.append(rows.reshape(-1))
        else:  # pragma: no cover - the layout table has no other kinds
            raise NotSupported(f"take does not know buffer kind {kind!r} of {dtype}")
    if lay.variadic:  # view types keep their data buffers; the views point into them
        buffers.extend(src[len(lay.buffers):])

    children: list[Array] = []
    rule = lay.children
    if rule == "same":
        # struct and sparse union children hold the same rows; a null index makes a null
        # in every child too (for a sparse union, that is how its slot becomes null)
        children = [gather(c, at, valid) for c in arr.children]
    elif rule == "offsets":
        children = [gather(arr.children[0], positions, None)]  # type: ignore[arg-type]
    elif rule == "fixed":
        size = st.list_size  # type: ignore[attr-defined]
        pos = (at[:, None] * size + np.arange(size, dtype=np.int64)).reshape(-1)
        cv = None if valid is None else np.repeat(valid, size)
        children = [gather(arr.children[0], pos, cv)]
    elif rule in ("views", "dense"):
        children = list(arr.children)
        if rule == "dense" and valid is not None and not valid.all():
            # a dense union has no validity: a null index points at a null appended to
            # the first child
            first = children[0]
            null_at = len(first)
            children[0] = concat_arrays([first, all_null(first.type, 1)])
            ids = buffers[0].view(np.int8)
            offs = buffers[1].view("<i4")
            ids[~valid] = st.type_codes[0]  # type: ignore[attr-defined]
            offs[~valid] = null_at
    if lay.has_validity:
        if out_valid is not None and not out_valid.all():
            buffers[0] = pack_bits(out_valid)
            null_count = int(k - np.count_nonzero(out_valid))
        else:
            null_count = 0
    else:
        null_count = 0
    return make_array(dtype, k, buffers, children, null_count, 0, arr.dictionary)


def _take_run_end(arr: Array, at: np.ndarray, valid: np.ndarray | None) -> Array:
    """Rows of a run-end encoded array, as runs again (equal neighbours merged)."""
    ends_arr, values = arr.children[0], arr.children[1]
    ends = ends_arr._fixed_values_view(storage_numpy_dtype(ends_arr.type))  # type: ignore[arg-type]
    ends = ends.astype(np.int64)
    k = len(at)
    run = np.searchsorted(ends, at, side="right")
    if k and int(run.max()) >= len(values):
        raise ArrowInvalid(f"expected run ends covering row {int(at.max())}, found fewer runs")
    key = run if valid is None else np.where(valid, run, -1)
    change = np.flatnonzero(key[1:] != key[:-1]) + 1 if k else np.zeros(0, np.int64)
    firsts = np.concatenate(([0], change)).astype(np.int64) if k else change
    new_ends = np.append(change, k).astype(np.int64) if k else change
    run_values = gather(values, run[firsts], None if valid is None else valid[firsts])
    end_type = ends_arr.type
    end_dtype = storage_numpy_dtype(end_type)
    ends_out = make_array(end_type, len(new_ends),
                          [None, new_ends.astype(end_dtype).view(np.uint8)], (), 0, 0)
    return make_array(arr.type, k, [], [ends_out, run_values], 0, 0)


def all_null(dtype: t.DataType, n: int) -> Array:
    return array([None] * n, type=dtype)
