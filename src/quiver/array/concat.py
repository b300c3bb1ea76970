"""Concatenation of arrays of one type, driven by the layout table.

Used for dictionary deltas (the delta's values are appended to the dictionary with that
id) and for combining chunks.  Each input is first flattened with the IPC assembler's
normalisation (offset 0, rebased offsets), then buffers are joined with numpy: bitmaps
via unpack/pack, offsets shifted by the running data length, view buffer indices shifted
by the number of variadic buffers before them, dense union offsets by the child lengths.
Dictionary arrays sharing one dictionary keep it; others get one unified dictionary (the
distinct values in order of first appearance, compared bit for bit by
:func:`quiver.array.keys.first_seen`) and their indices remapped onto it, as pyarrow does.

>>> import quiver as qv
>>> concat_arrays([qv.array([1, 2]), qv.array([3])]).to_pylist()
[1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import types as t
from ..buffers import pack_bits, unpack_bits
from ..errors import ArrowInvalid, ArrowInvalidArgument, NotSupported
from ..layout import layout_of, storage_numpy_dtype
from .base import Array, make_array, typed_view
from .equal import array_equals
from .keys import first_seen


def _validity(arrays: Sequence[Array]) -> np.ndarray | None:
    if not any(a.null_count for a in arrays):
        return None
    parts = []
    for a in arrays:
        v = a.buffers[0] if a.buffers else None
        if v is None or a.null_count == 0:
            parts.append(np.ones(len(a), dtype=bool))
        else:
            parts.append(unpack_bits(v, a.offset, len(a)))
    return pack_bits(np.concatenate(parts))


def _offsets(a: Array, width: int) -> np.ndarray:
    dt = np.dtype("<i4") if width == 4 else np.dtype("<i8")
    buf = a.buffers[1]
    if buf is None or len(a) == 0:
        return np.zeros(1, dtype=dt)
    return typed_view(buf, dt, a.offset, len(a) + 1, "offsets")


def _fits(total: int, width: int) -> None:
    if width == 4 and total > np.iinfo(np.int32).max:
        raise ArrowInvalid(
            f"expected concatenated values to fit 32-bit offsets, found {total} values; "
            "use the large_ variant of the type"
        )


def _joined_offsets(
    arrays: Sequence[Array], width: int
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The offsets buffer of ``arrays`` joined (each one's offsets rebased onto the values
    before it) and the ``(first, last)`` offsets of each, the range of its data or child
    values to join."""
    offs, ranges, base = [np.zeros(1, dtype=f"<i{width}")], [], 0
    for a in arrays:
        o = _offsets(a, width)
        start, end = int(o[0]), int(o[-1])
        _fits(base + end - start, width)
        offs.append((o[1:] - start + base).astype(f"<i{width}"))
        ranges.append((start, end))
        base += end - start
    return np.concatenate(offs).view(np.uint8), ranges


def run_end_window(arr: Array, off: int, n: int) -> list[Array]:
    """The children (run ends, values) of a run-end encoded array's rows ``off .. off+n``,
    rebased to start at 0: what writing or concatenating a sliced one needs."""
    run_ends, values = arr.children
    dt = storage_numpy_dtype(run_ends.type)
    if off == 0 and (
        len(run_ends) == 0
        or int(typed_view(run_ends.buffers[1], dt, run_ends.offset + len(run_ends) - 1, 1,
                          "run ends")[0]) == n
    ):
        return [run_ends, values]
    if n == 0:  # no runs at all: run ends must be positive, so none may remain
        return [run_ends.slice(0, 0), values.slice(0, 0)]
    ends = typed_view(run_ends.buffers[1], dt, run_ends.offset, len(run_ends), "run ends")
    first = int(np.searchsorted(ends, off, side="right"))
    last = int(np.searchsorted(ends, off + n - 1, side="right"))
    new_ends = np.minimum(ends[first : last + 1].astype(np.int64) - off, n).astype(dt)
    rebased = make_array(run_ends.type, len(new_ends), [None, new_ends.view(np.uint8)], (), 0, 0)
    return [rebased, values.slice(first, len(new_ends))]


def _unify_dictionaries(
    arrays: Sequence[Array], storage: t.DictionaryType, vals: np.ndarray
) -> tuple[Array, np.ndarray]:
    """One dictionary for dictionary arrays whose dictionaries differ, and their indices
    remapped onto it (the index buffer, joined), as pyarrow's ``concat_arrays``: the
    distinct values in order of first appearance across the dictionaries (unused ones
    too); a null inside a dictionary stays one value (pyarrow refuses those), a null index
    stays null.  Dictionaries equal bit for bit keep the first one and ``vals``, the
    indices as joined."""
    dicts = [a.dictionary for a in arrays]
    if any(d is None for d in dicts):
        raise ArrowInvalid(f"expected a dictionary with every {storage} array, found None")
    if all(
        array_equals(d, dicts[0], floats_by_bits=True)  # type: ignore[arg-type]
        for d in dicts[1:]
    ):  # the common case (each chunk imported with its own copy): a vectorized check
        return dicts[0], vals  # type: ignore[return-value]
    sizes = np.array([len(d) for d in dicts], dtype=np.int64)  # type: ignore[arg-type]
    bases = np.concatenate([[0], np.cumsum(sizes)])
    groups, firsts = first_seen(concat_arrays(dicts))  # type: ignore[arg-type]
    idx_dt = storage_numpy_dtype(storage.index_type)
    if len(firsts) > np.iinfo(idx_dt).max:  # pyarrow's bound: the largest index, not +1
        raise ArrowInvalid(
            f"expected a unified dictionary of at most {np.iinfo(idx_dt).max} values "
            f"for index type {storage.index_type}, found {len(firsts)}; use a wider index type"
        )
    if (sizes == sizes[0]).all() and (
        groups.reshape(len(dicts), -1) == groups[: sizes[0]]
    ).all():  # the same values bit for bit (floats: -0.0 is not 0.0): the first one serves
        return dicts[0], vals  # type: ignore[return-value]
    parts = []
    for a, base, size in zip(arrays, bases.tolist(), sizes.tolist()):
        idx = typed_view(a.buffers[1], idx_dt, a.offset, len(a), "indices")
        if size == 0:  # every slot must be null: no value to point at
            parts.append(np.zeros(len(a), dtype=idx_dt))
            continue
        # a null slot may hold any index: clipped, its remapped value does not matter
        at = np.clip(idx.astype(np.int64), 0, size - 1) + base
        parts.append(groups[at].astype(idx_dt))
    indices = np.concatenate(parts).view(np.uint8)
    if len(firsts) == sizes[0] and (firsts == np.arange(sizes[0])).all():
        return dicts[0], indices  # type: ignore[return-value]  # nothing new: kept zero-copy
    # the first appearances as runs of consecutive entries of one dictionary, joined
    owner = np.searchsorted(bases, firsts, side="right") - 1
    starts = np.flatnonzero(
        np.concatenate([[True], (np.diff(firsts) != 1) | (np.diff(owner) != 0)])
    )
    ends = np.append(starts[1:], len(firsts))
    runs = [
        dicts[k].slice(int(firsts[s] - bases[k]), int(e - s))  # type: ignore[union-attr]
        for k, s, e in zip(owner[starts].tolist(), starts.tolist(), ends.tolist())
    ]
    return concat_arrays(runs), indices


def concat_arrays(arrays: Sequence[Array]) -> Array:
    """One array holding the values of ``arrays`` in order (all of the same type)."""
    if not arrays:
        raise ArrowInvalidArgument("expected at least one array to concatenate, found none")
    dtype = arrays[0].type
    for a in arrays[1:]:
        if a.type != dtype:
            raise ArrowInvalidArgument(
                f"expected arrays of type {dtype} to concatenate, found {a.type}"
            )
    if len(arrays) == 1:
        return arrays[0]
    storage = t.storage_of(dtype)
    lay = layout_of(storage)
    total = sum(len(a) for a in arrays)
    validity = _validity(arrays) if lay.has_validity else None
    nulls = sum(a.null_count for a in arrays) if lay.has_validity else -1
    if isinstance(storage, t.NullType):
        return make_array(dtype, total, [], (), total, 0)
    kinds = [b.kind for b in lay.buffers]
    if isinstance(storage, t.BoolType):
        bits = np.concatenate([unpack_bits(a.buffers[1], a.offset, len(a)) for a in arrays])
        return make_array(dtype, total, [validity, pack_bits(bits)], (), nulls, 0)
    if kinds == ["validity", "values"]:
        w = lay.buffers[1].byte_width
        vals = np.concatenate(
            [a.buffers[1][a.offset * w : (a.offset + len(a)) * w] for a in arrays]
        )
        dictionary = arrays[0].dictionary
        if isinstance(storage, t.DictionaryType) and any(
            a.dictionary is not dictionary for a in arrays[1:]
        ):
            dictionary, vals = _unify_dictionaries(arrays, storage, vals)
        return make_array(dtype, total, [validity, vals], (), nulls, 0, dictionary)
    if lay.children == "none" and "offsets" in kinds:  # binary and string
        offsets, ranges = _joined_offsets(arrays, lay.buffers[1].byte_width)
        datas = [a.buffers[2][start:end] if a.buffers[2] is not None else np.zeros(0)
                 for a, (start, end) in zip(arrays, ranges)]
        data = np.concatenate(datas).astype(np.uint8, copy=False)
        return make_array(dtype, total, [validity, offsets, data], (), nulls, 0)
    if lay.variadic:
        views, variadic, nbuf = [], [], 0
        for a in arrays:
            v = a.buffers[1][a.offset * 16 : (a.offset + len(a)) * 16].copy().view("<i4")
            v = v.reshape(-1, 4)
            long = v[:, 0] > 12
            v[long, 2] += nbuf
            views.append(v.reshape(-1).view(np.uint8))
            data = list(a.buffers[2:])
            variadic.extend(data)
            nbuf += len(data)
        return make_array(dtype, total, [validity, np.concatenate(views), *variadic], (), nulls)
    if lay.children == "offsets":
        offsets, ranges = _joined_offsets(arrays, lay.buffers[1].byte_width)
        child = concat_arrays([a.children[0].slice(start, end - start)
                               for a, (start, end) in zip(arrays, ranges)])
        return make_array(dtype, total, [validity, offsets], [child], nulls, 0)
    if lay.children == "same" and lay.has_validity:  # struct
        kids = [
            concat_arrays([a.children[i].slice(a.offset, len(a)) for a in arrays])
            for i in range(len(storage.fields))
        ]
        return make_array(dtype, total, [validity], kids, nulls, 0)
    if lay.children == "fixed":
        size = storage.list_size  # type: ignore[attr-defined]
        child = concat_arrays([a.children[0].slice(a.offset * size, len(a) * size) for a in arrays])
        return make_array(dtype, total, [validity], [child], nulls, 0)
    if lay.children == "same":  # sparse union
        ids = np.concatenate([a.buffers[0][a.offset : a.offset + len(a)] for a in arrays])
        kids = [
            concat_arrays([a.children[i].slice(a.offset, len(a)) for a in arrays])
            for i in range(len(storage.fields))
        ]
        return make_array(dtype, total, [ids], kids, 0, 0)
    if lay.children == "dense":
        codes = storage.type_codes  # type: ignore[attr-defined]
        ids_parts, off_parts = [], []
        child_base = [0] * len(codes)
        lut = np.full(128, -1, dtype=np.int64)
        lut[list(codes)] = np.arange(len(codes))
        for a in arrays:
            ids = a.buffers[0][a.offset : a.offset + len(a)]
            offs = typed_view(a.buffers[1], "<i4", a.offset, len(a), "offsets").astype(np.int64)
            child_idx = lut[ids.astype(np.int64) & 127]
            offs = offs + np.asarray(child_base, dtype=np.int64)[child_idx]
            ids_parts.append(ids)
            off_parts.append(offs.astype("<i4"))
            for i in range(len(codes)):
                child_base[i] += len(a.children[i])
        kids = [concat_arrays([a.children[i] for a in arrays]) for i in range(len(codes))]
        return make_array(
            dtype,
            total,
            [np.concatenate(ids_parts), np.concatenate(off_parts).view(np.uint8)],
            kids,
            0,
            0,
        )
    if lay.children == "run_end":
        ends_parts, value_parts, base = [], [], 0
        dt = storage_numpy_dtype(storage.run_end_type)  # type: ignore[attr-defined]
        for a in arrays:
            re, vals = run_end_window(a, a.offset, len(a))
            e = typed_view(re.buffers[1], dt, re.offset, len(re), "run ends").astype(np.int64)
            ends_parts.append(e + base)
            value_parts.append(vals)
            base += len(a)
        ends = np.concatenate(ends_parts).astype(dt)
        run_ends = make_array(storage.run_end_type, len(ends), [None, ends.view(np.uint8)], (), 0)
        return make_array(dtype, total, [], [run_ends, concat_arrays(value_parts)], 0, 0)
    if lay.children == "views":  # list views: shift offsets by the child lengths before
        w = lay.buffers[1].byte_width
        dt = np.dtype(f"<i{w}")
        offs, sizes, base = [], [], 0
        for a in arrays:
            o = typed_view(a.buffers[1], dt, a.offset, len(a), "offsets")
            offs.append((o.astype(np.int64) + base).astype(dt))
            sizes.append(typed_view(a.buffers[2], dt, a.offset, len(a), "sizes"))
            base += len(a.children[0])
        child = concat_arrays([a.children[0] for a in arrays])
        bufs = [validity, np.concatenate(offs).view(np.uint8), np.concatenate(sizes).view(np.uint8)]
        return make_array(dtype, total, bufs, [child], nulls, 0)
    raise NotSupported(f"concatenation of {dtype} arrays is not implemented")
