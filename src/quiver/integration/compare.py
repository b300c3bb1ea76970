"""Logical comparison of schemas, arrays and record batches, with a readable diff.

This is the "validate" half of the integration harness (Integration.rst, "Strategy": the
consumer "validates that both datasets are identical").  Two sets of batches -- typically one
decoded from integration JSON and one read from IPC -- are compared per batch, per column
path and per row, and every difference reads like::

    batch 0, column a.b, row 5: expected 3, found 4

Theory of operation: one walk over the type tree compares *selections*: for each side an
array and an ``int64`` vector of logical positions in it, plus the top-level row each position
belongs to.  Validity is compared first (null slots are otherwise ignored), then the leaf
values of the kept positions in one numpy operation, and nested types turn their selection into
their children's selection (list offsets expanded with ``numpy.repeat``, struct positions
shifted by the parent offset, union positions grouped by type code, run-end positions mapped
with ``searchsorted``, dictionary positions mapped through the indices).  Nothing loops in
Python per row except the formatting of the (few) reported differences.

Tolerances follow archery's consumers: floats compare approximately (``rtol``/``atol``, NaN
equal to NaN); everything else compares exactly, including values a producer left out of
range (decimals beyond their precision, date64 values that are not whole days, times beyond
a day -- the known quirks of the 0.14.1, 0.17.1 and 1.0.0 gold folders): they are compared
as stored, never rejected.  Dictionary-encoded columns compare by decoded value, so the two
sides may use different dictionaries or dictionary ids.

>>> from quiver.integration.json_reader import parse_json
>>> def doc(values):
...     return {"schema": {"fields": [{"name": "a", "nullable": True, "children": [],
...             "type": {"name": "int", "bitWidth": 8, "isSigned": True}}]},
...             "batches": [{"count": 2, "columns": [{"name": "a", "count": 2,
...             "VALIDITY": [1, 1], "DATA": values}]}]}
>>> [str(d) for d in compare_batches(parse_json(doc([1, 2])).batches,
...                                  parse_json(doc([1, 3])).batches)]
['batch 0, column a, row 1: expected 2, found 3']
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import types as t
from ..array.base import Array
from ..array.decimal import limbs, to_ints
from ..errors import ArrowInvalid
from ..layout import layout_of, storage_numpy_dtype

EXTENSION_NAME = b"ARROW:extension:name"
EXTENSION_METADATA = b"ARROW:extension:metadata"

DEFAULT_LIMIT = 20
DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-5
_CHUNK_ROWS = 1 << 16


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference between the expected and the found data.

    ``batch`` and ``row`` are None when the difference is not about one batch or row.
    """

    batch: int | None
    column: str
    row: int | None
    expected: str
    found: str

    def __str__(self) -> str:
        where = []
        if self.batch is not None:
            where.append(f"batch {self.batch}")
        if self.column == "schema":
            where.append("schema")
        elif self.column:
            where.append(f"column {self.column}")
        if self.row is not None:
            where.append(f"row {self.row}")
        head = ", ".join(where) or "data"
        return f"{head}: expected {self.expected}, found {self.found}"


# --------------------------------------------------------------------------------------
# schemas


def _normalize_type(typ: t.DataType) -> t.DataType:
    if isinstance(typ, t.ExtensionType):
        return t.ExtensionType(typ.extension_name, _normalize_type(typ.storage_type),
                               typ.serialized)
    if isinstance(typ, t.DictionaryType):
        value = typ.value_type
        if isinstance(value, t.ExtensionType):
            # an extension over dictionary values: spell it as Arrow C++ does, the
            # extension outside with the dictionary as its storage
            inner = t.DictionaryType(typ.index_type, _normalize_type(value.storage_type),
                                     typ.ordered)
            return t.ExtensionType(value.extension_name, inner, value.serialized)
        return t.DictionaryType(typ.index_type, _normalize_type(value), typ.ordered)
    if isinstance(typ, t.MapType):
        # map child names are not significant (Columnar spec, "Map"; Arrow C++ ignores them
        # too: the cpp-21.0.0 map_non_canonical gold stream spells them canonically while
        # its JSON and file do not)
        entries = normalize_field(typ.entries_field)
        key, item = entries.type.fields
        inner = t.StructType((key.with_name("key"), item.with_name("value")))
        return t.MapType(t.Field("entries", inner, entries.nullable, entries.metadata),
                         typ.keys_sorted)
    if typ.fields:
        return typ.with_fields(tuple(normalize_field(f) for f in typ.fields))  # type: ignore
    return typ


def normalize_field(f: t.Field) -> t.Field:
    """``f`` spelled one way for comparison: extension types as an ExtensionType whose field
    metadata does not repeat the ``ARROW:extension:*`` keys (IPC readers may use either
    spelling), an extension over dictionary values outside the dictionary, and map children
    named ``entries``/``key``/``value``."""
    md = f.metadata
    typ = f.type
    if md is not None and md.get(EXTENSION_NAME) is not None and not isinstance(
        typ, t.ExtensionType
    ):
        name = (md.get(EXTENSION_NAME) or b"").decode("utf-8", "replace")
        typ = t.ExtensionType(name, typ, md.get(EXTENSION_METADATA) or b"")
    if md is not None:
        md = md.without(EXTENSION_NAME, EXTENSION_METADATA)
    return t.Field(f.name, _normalize_type(typ), f.nullable, md)


def _md_str(md: t.KeyValueMetadata | None) -> str:
    if not md:
        return "no metadata"
    pairs = md.items() if hasattr(md, "items") else md
    return "{" + ", ".join(f"{k.decode(errors='replace')!r}: {v.decode(errors='replace')!r}"
                           for k, v in pairs) + "}"


def _compare_fields(
    exp: Sequence[t.Field], got: Sequence[t.Field], path: str, out: list[Difference]
) -> None:
    if len(exp) != len(got):
        out.append(Difference(None, path or "schema", None, f"{len(exp)} child fields"
                              if path else f"{len(exp)} fields", f"{len(got)}"))
        return
    for i, (e, g) in enumerate(zip(exp, got)):
        here = f"{path}.{e.name}" if path else (e.name or f"[{i}]")
        if e.name != g.name:
            out.append(Difference(None, here, None, f"field name {e.name!r}",
                                  f"{g.name!r}"))
        if e.nullable != g.nullable:
            out.append(Difference(None, here, None, f"nullable={e.nullable}",
                                  f"nullable={g.nullable}"))
        if e.metadata != g.metadata:
            out.append(Difference(None, here, None, f"field metadata {_md_str(e.metadata)}",
                                  _md_str(g.metadata)))
        if e.type == g.type:
            continue
        et, gt = e.type, g.type
        if (type(et) is type(gt) and et.fields and len(et.fields) == len(gt.fields)
                and _shallow(et) == _shallow(gt)):
            _compare_fields(et.fields, gt.fields, here, out)
        else:
            out.append(Difference(None, here, None, f"type {et}", f"type {gt}"))


def _shallow(typ: t.DataType) -> t.DataType:
    """``typ`` with child fields replaced by a placeholder, to compare the parameters only."""
    if not typ.fields or not hasattr(typ, "with_fields"):
        return typ
    blank = tuple(t.Field("", t.null()) for _ in typ.fields)
    if isinstance(typ, t.RunEndEncodedType):
        blank = (t.Field("", t.int16(), False), t.Field("", t.null()))
    if isinstance(typ, t.MapType):
        blank = (t.Field("", t.struct([("", t.null()), ("", t.null())])),)
    return typ.with_fields(blank)  # type: ignore[attr-defined]


def compare_schemas(expected: t.Schema, found: t.Schema) -> list[Difference]:
    """Differences between two schemas: field names, types, nullability and metadata
    (field and schema level, order kept), extension spellings normalized."""
    out: list[Difference] = []
    _compare_fields([normalize_field(f) for f in expected.fields],
                    [normalize_field(f) for f in found.fields], "", out)
    if expected.metadata != found.metadata:
        out.append(Difference(None, "schema", None,
                              f"schema metadata {_md_str(expected.metadata)}",
                              _md_str(found.metadata)))
    return out


# --------------------------------------------------------------------------------------
# single values, for the diff text


def _bits_at(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return ((buf[pos >> 3] >> (pos & 7).astype(np.uint8)) & 1).astype(bool)


def _valid_at(arr: Array, idx: np.ndarray) -> np.ndarray:
    """Whether the positions ``idx`` of ``arr`` are valid at this level."""
    st = t.storage_of(arr.type)
    if isinstance(st, t.NullType):
        return np.zeros(idx.size, dtype=bool)
    if not layout_of(st).has_validity or not arr.buffers or arr.buffers[0] is None:
        return np.ones(idx.size, dtype=bool)
    return _bits_at(arr.buffers[0], idx + arr.offset)


def _fixed_rows(arr: Array, width: int) -> np.ndarray:
    buf = arr.buffers[1]
    if width == 0:
        return np.zeros((max(len(arr) + arr.offset, 0), 0), dtype=np.uint8)
    n = len(buf) // width
    return buf[: n * width].reshape(n, width)


def _ints(buf: np.ndarray, width: int) -> np.ndarray:
    return buf[: len(buf) // width * width].view(f"<i{width}")


def _view_bytes(arr: Array, i: int) -> bytes:
    view = arr.buffers[1][16 * i : 16 * i + 16]
    size = int(view[:4].view("<i4")[0])
    if size <= 12:
        return bytes(view[4 : 4 + size])
    index, offset = (int(x) for x in view[8:16].view("<i4"))
    data = arr.buffers[2 + index]
    return bytes(data[offset : offset + size])


def _list_range(arr: Array, st: t.DataType, p: int) -> tuple[int, int]:
    starts, lengths = _list_ranges(st, arr, np.array([p]))
    return int(starts[0]), int(starts[0] + lengths[0])


def value_at(arr: Array, i: int) -> Any:
    """The value at logical position ``i`` as a plain Python object (JSON style: temporal
    values stay integers, decimals become :class:`decimal.Decimal`, maps lists of pairs).
    Slow, for diffs and tests."""
    st = t.storage_of(arr.type)
    if isinstance(st, t.NullType) or not _valid_at(arr, np.array([i]))[0]:
        return None
    p = arr.offset + i
    if isinstance(st, t.DictionaryType):
        idx = int(_typed(arr.buffers[1], storage_numpy_dtype(st.index_type))[p])
        return value_at(arr.dictionary, idx) if arr.dictionary is not None else idx
    if isinstance(st, t.BoolType):
        return bool(_bits_at(arr.buffers[1], np.array([p]))[0])
    nd = storage_numpy_dtype(st)
    if nd is not None:
        return _typed(arr.buffers[1], nd)[p].item()
    if isinstance(st, t.DecimalType):
        unscaled = to_ints(limbs(_fixed_rows(arr, st.width // 8)[p], st.width, 0, 1))[0]
        # an explicit exponent, like to_pylist: scaleb's default context limits scales
        return decimal.Decimal(f"{unscaled}E{-st.scale}")
    if isinstance(st, t.IntervalType):
        raw = _fixed_rows(arr, st.bit_width // 8)[p]
        if st.unit == "year_month":
            return int(raw.view("<i4")[0])
        if st.unit == "day_time":
            d, ms = raw.view("<i4").tolist()
            return {"days": d, "milliseconds": ms}
        m, d = raw[:8].view("<i4").tolist()
        return {"months": m, "days": d, "nanoseconds": int(raw[8:].view("<i8")[0])}
    if isinstance(st, t.FixedSizeBinaryType):
        return bytes(_fixed_rows(arr, st.width)[p])
    if isinstance(st, (t.BinaryType, t.StringType)):
        offs = _ints(arr.buffers[1], 8 if st.large else 4)
        raw = bytes(arr.buffers[2][int(offs[p]) : int(offs[p + 1])])
        return raw.decode("utf-8", "replace") if isinstance(st, t.StringType) else raw
    if isinstance(st, (t.BinaryViewType, t.StringViewType)):
        raw = _view_bytes(arr, p)
        return raw.decode("utf-8", "replace") if isinstance(st, t.StringViewType) else raw
    if isinstance(st, t.MapType):
        lo, hi = _list_range(arr, st, p)
        entries = arr.children[0]
        return [(value_at(entries.children[0], entries.offset + j),
                 value_at(entries.children[1], entries.offset + j)) for j in range(lo, hi)]
    if isinstance(st, (t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType,
                       t.FixedSizeListType)):
        lo, hi = _list_range(arr, st, p)
        return [value_at(arr.children[0], j) for j in range(lo, hi)]
    if isinstance(st, t.StructType):
        return {f.name: value_at(c, p) for f, c in zip(st.fields, arr.children)}
    if isinstance(st, t.UnionType):
        code = int(arr.buffers[0].view(np.int8)[p])
        child = st.type_codes.index(code)
        j = int(_ints(arr.buffers[1], 4)[p]) if st.mode == "dense" else p
        return value_at(arr.children[child], j)
    if isinstance(st, t.RunEndEncodedType):
        ends, values = arr.children
        re = ends.buffers[1].view(storage_numpy_dtype(ends.type))
        re = re[ends.offset : ends.offset + len(ends)]
        return value_at(values, int(np.searchsorted(re, p, side="right")))
    return f"<{st}>"


def array_values(arr: Array) -> list[Any]:
    """All values of ``arr`` as :func:`value_at` gives them (slow; for diffs and tests)."""
    return [value_at(arr, i) for i in range(len(arr))]


def _show(arr: Array, i: int) -> str:
    try:
        v = value_at(arr, i)
    except (IndexError, ValueError, TypeError):
        return "<unreadable>"
    text = "null" if v is None else repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


# --------------------------------------------------------------------------------------
# the selection walk


class _Walk:
    def __init__(self, batch: int | None, limit: int, rtol: float, atol: float) -> None:
        self.batch = batch
        self.limit = limit
        self.rtol = rtol
        self.atol = atol
        self.diffs: list[Difference] = []

    @property
    def full(self) -> bool:
        return len(self.diffs) >= self.limit

    def note(self, path: str, row: int | None, expected: str, found: str) -> None:
        if not self.full:
            self.diffs.append(Difference(self.batch, path, row, expected, found))

    def report(
        self, path: str, bad: np.ndarray, e: Array, ei: np.ndarray, g: Array, gi: np.ndarray,
        rows: np.ndarray,
    ) -> None:
        for k in np.flatnonzero(bad)[: max(self.limit - len(self.diffs), 0)]:
            self.note(path, int(rows[k]), _show(e, int(ei[k])), _show(g, int(gi[k])))

    # ------------------------------------------------------------------------------
    def walk(
        self, e: Array, ei: np.ndarray, g: Array, gi: np.ndarray, rows: np.ndarray, path: str
    ) -> None:
        if self.full or ei.size == 0:
            return
        # validity (the values of null slots are never compared)
        ve, vg = _valid_at(e, ei), _valid_at(g, gi)
        bad = ve != vg
        if bad.any():
            self.report(path, bad, e, ei, g, gi, rows)
        keep = ve & vg
        if not keep.all():
            ei, gi, rows = ei[keep], gi[keep], rows[keep]
        if ei.size == 0:
            return
        e2, ei2 = _decode_dictionary(e, ei)
        g2, gi2 = _decode_dictionary(g, gi)
        if e2 is not e or g2 is not g:
            # compare by decoded value: the dictionaries' own validity comes next
            self.walk(e2, ei2, g2, gi2, rows, path)
            return
        se, sg = t.storage_of(e.type), t.storage_of(g.type)
        if type(se) is not type(sg) or _shallow(se) != _shallow(sg):
            self.note(path, None, f"type {se}", f"type {sg}")
            return
        self._values(se, e, ei, g, gi, rows, path)

    def _values(
        self, st: t.DataType, e: Array, ei: np.ndarray, g: Array, gi: np.ndarray,
        rows: np.ndarray, path: str,
    ) -> None:
        pe, pg = ei + e.offset, gi + g.offset
        if isinstance(st, t.NullType):
            return
        if isinstance(st, t.BoolType):
            bad = _bits_at(e.buffers[1], pe) != _bits_at(g.buffers[1], pg)
        elif (nd := storage_numpy_dtype(st)) is not None:
            a = _typed(e.buffers[1], nd)[pe]
            b = _typed(g.buffers[1], nd)[pg]
            if nd.kind == "f":
                bad = ~np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=self.rtol,
                                  atol=self.atol, equal_nan=True)
            else:
                bad = a != b
        elif t.is_fixed_width(st):
            w = st.bit_width // 8
            bad = np.any(_fixed_rows(e, w)[pe] != _fixed_rows(g, w)[pg], axis=1)
        elif isinstance(st, (t.BinaryType, t.StringType, t.BinaryViewType,
                             t.StringViewType)):
            (da, sa, la), (db, sb, lb) = _byte_ranges(st, e, pe), _byte_ranges(st, g, pg)
            bad = la != lb
            same = ~bad
            bad[same] = ~_bytes_equal(da, sa[same], db, sb[same], la[same])
        elif isinstance(st, t.StructType):
            for f, ce, cg in zip(st.fields, e.children, g.children):
                self.walk(ce, pe, cg, pg, rows, f"{path}.{f.name}")
            return
        elif isinstance(st, t.UnionType):
            self._union(st, e, pe, g, pg, ei, gi, rows, path)
            return
        elif isinstance(st, t.RunEndEncodedType):
            self.walk(e.children[1], _physical(e, pe), g.children[1], _physical(g, pg), rows,
                      f"{path}.{st.fields[1].name}")
            return
        else:  # the list family
            (se, le), (sg, lg) = _list_ranges(st, e, pe), _list_ranges(st, g, pg)
            bad = le != lg
            if bad.any():
                self.report(path, bad, e, ei, g, gi, rows)
            ok = ~bad
            se, sg, le, rows = se[ok], sg[ok], le[ok], rows[ok]
            child_rows = np.repeat(rows, le)
            within = np.arange(int(le.sum()), dtype=np.int64) - np.repeat(np.cumsum(le) - le, le)
            self.walk(e.children[0], np.repeat(se, le) + within, g.children[0],
                      np.repeat(sg, le) + within, child_rows, f"{path}.{st.fields[0].name}")
            return
        if bad.any():
            self.report(path, bad, e, ei, g, gi, rows)

    def _union(
        self, st: t.UnionType, e: Array, pe: np.ndarray, g: Array, pg: np.ndarray,
        ei: np.ndarray, gi: np.ndarray, rows: np.ndarray, path: str,
    ) -> None:
        ids_e = e.buffers[0].view(np.int8)[pe]
        ids_g = g.buffers[0].view(np.int8)[pg]
        bad = ids_e != ids_g
        if bad.any():
            self.report(path, bad, e, ei, g, gi, rows)
        for child, code in enumerate(st.type_codes):
            sel = (ids_e == code) & ~bad
            if not sel.any():
                continue
            if st.mode == "dense":
                ce = _ints(e.buffers[1], 4)[pe[sel]].astype(np.int64)
                cg = _ints(g.buffers[1], 4)[pg[sel]].astype(np.int64)
            else:
                ce, cg = pe[sel], pg[sel]
            self.walk(e.children[child], ce, g.children[child], cg, rows[sel],
                      f"{path}.{st.fields[child].name}")


def _typed(buf: np.ndarray, nd: np.dtype) -> np.ndarray:
    return buf[: len(buf) // nd.itemsize * nd.itemsize].view(nd)


def _decode_dictionary(arr: Array, idx: np.ndarray) -> tuple[Array, np.ndarray]:
    st = t.storage_of(arr.type)
    if not isinstance(st, t.DictionaryType) or arr.dictionary is None:
        return arr, idx
    nd = storage_numpy_dtype(st.index_type)
    return arr.dictionary, _typed(arr.buffers[1], nd)[idx + arr.offset].astype(np.int64)


def _physical(arr: Array, pos: np.ndarray) -> np.ndarray:
    ends = arr.children[0]
    re = _typed(ends.buffers[1], storage_numpy_dtype(ends.type))
    re = re[ends.offset : ends.offset + len(ends)]
    return np.searchsorted(re, pos, side="right").astype(np.int64)


def _list_ranges(st: t.DataType, arr: Array, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Child start positions and lengths of the lists at physical positions ``pos``."""
    if isinstance(st, t.FixedSizeListType):
        n = st.list_size
        return pos * n, np.full(pos.size, n, dtype=np.int64)
    width = 8 if isinstance(st, (t.LargeListType, t.LargeListViewType)) else 4
    offs = _ints(arr.buffers[1], width)
    starts = offs[pos].astype(np.int64)
    if isinstance(st, (t.ListViewType, t.LargeListViewType)):
        return starts, _ints(arr.buffers[2], width)[pos].astype(np.int64)
    return starts, offs[pos + 1].astype(np.int64) - starts


def _byte_ranges(
    st: t.DataType, arr: Array, pos: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bytes, starts, lengths) addressing each selected value in one byte array."""
    if isinstance(st, (t.BinaryType, t.StringType)):
        offs = _ints(arr.buffers[1], 8 if st.large else 4)
        starts = offs[pos].astype(np.int64)
        return arr.buffers[2], starts, offs[pos + 1].astype(np.int64) - starts
    views = arr.buffers[1]
    rows = views[: len(views) // 16 * 16].reshape(-1, 16)[pos]
    sizes = rows[:, :4].copy().view("<i4").ravel().astype(np.int64)
    index = rows[:, 8:12].copy().view("<i4").ravel().astype(np.int64)
    offset = rows[:, 12:16].copy().view("<i4").ravel().astype(np.int64)
    data = list(arr.buffers[2:])
    bases = np.cumsum([len(views)] + [len(d) for d in data]).astype(np.int64)
    inline = sizes <= 12
    starts = np.where(inline, pos * 16 + 4, 0)
    ref = ~inline
    if ref.any():
        if int(index[ref].max()) >= len(data) or int(index[ref].min()) < 0:
            raise ArrowInvalid(f"expected view buffer indices below {len(data)}, found "
                               f"{int(index[ref].max())}")
        starts[ref] = bases[index[ref]] + offset[ref]
    joined = np.concatenate([views, *data]) if data else views
    return joined, starts, sizes


def _bytes_equal(
    da: np.ndarray, sa: np.ndarray, db: np.ndarray, sb: np.ndarray, lengths: np.ndarray
) -> np.ndarray:
    """Per value: whether ``da[sa:sa+len]`` equals ``db[sb:sb+len]``, vectorized."""
    total = int(lengths.sum())
    if total == 0:
        return np.ones(lengths.size, dtype=bool)
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    a = da[np.repeat(sa, lengths) + within]
    b = db[np.repeat(sb, lengths) + within]
    owner = np.repeat(np.arange(lengths.size), lengths)
    bad = np.zeros(lengths.size, dtype=bool)
    bad[owner[a != b]] = True
    return ~bad


# --------------------------------------------------------------------------------------
# public entry points


def compare_arrays(
    expected: Array, found: Array, *, column: str = "", batch: int | None = None,
    limit: int = DEFAULT_LIMIT, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
) -> list[Difference]:
    """Differences between two arrays of the same logical type, at most ``limit``."""
    walk = _Walk(batch, limit, rtol, atol)
    if len(expected) != len(found):
        walk.note(column, None, f"{len(expected)} rows", f"{len(found)}")
        return walk.diffs
    n = len(expected)
    if isinstance(t.storage_of(expected.type), t.NullType) and isinstance(
        t.storage_of(found.type), t.NullType
    ):
        return walk.diffs  # all slots null on both sides
    try:
        # row chunks bound the memory of the selections, whatever the length
        for start in range(0, n, _CHUNK_ROWS):
            idx = np.arange(start, min(n, start + _CHUNK_ROWS), dtype=np.int64)
            walk.walk(expected, idx, found, idx, idx, column)
            if walk.full:
                break
    except (IndexError, ValueError, TypeError) as exc:
        # an array whose buffers do not hold what its offsets say: say so, in our words
        raise ArrowInvalid(f"expected arrays whose buffers cover their offsets, found one "
                           f"that does not ({exc})", field_path=column or None) from None
    return sorted(walk.diffs, key=lambda d: -1 if d.row is None else d.row)


def batch_parts(batch: Any) -> tuple[t.Schema, list[Array], int]:
    """(schema, columns, num_rows) of a quiver RecordBatch or JsonBatch."""
    columns = getattr(batch, "columns", None)
    if columns is None or callable(columns):
        columns = [batch.column(i) for i in range(batch.num_columns)]
    return batch.schema, list(columns), int(batch.num_rows)


def compare_batches(
    expected: Sequence[Any], found: Sequence[Any], *, limit: int = DEFAULT_LIMIT,
    rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
) -> list[Difference]:
    """Differences between two sequences of record batches: batch count, row counts, and
    then every column by logical value (at most ``limit`` differences)."""
    out: list[Difference] = []
    if len(expected) != len(found):
        out.append(Difference(None, "", None, f"{len(expected)} record batches",
                              f"{len(found)}"))
    for b, (eb, fb) in enumerate(zip(expected, found)):
        es, ecols, en = batch_parts(eb)
        _, fcols, fn = batch_parts(fb)
        if en != fn:
            out.append(Difference(b, "", None, f"{en} rows", f"{fn}"))
            continue
        if len(ecols) != len(fcols):
            out.append(Difference(b, "", None, f"{len(ecols)} columns", f"{len(fcols)}"))
            continue
        for c, (ea, fa) in enumerate(zip(ecols, fcols)):
            name = es.fields[c].name if c < len(es.fields) else f"[{c}]"
            out.extend(compare_arrays(ea, fa, column=name or f"[{c}]", batch=b,
                                      limit=limit - len(out), rtol=rtol, atol=atol))
            if len(out) >= limit:
                return out[:limit]
    return out[:limit]


def compare(
    expected_schema: t.Schema, expected: Sequence[Any], found_schema: t.Schema,
    found: Sequence[Any], *, limit: int = DEFAULT_LIMIT, rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
) -> list[Difference]:
    """Schema differences, and when the schemas agree, batch differences."""
    diffs = compare_schemas(expected_schema, found_schema)
    if diffs:
        return diffs[:limit]
    return compare_batches(expected, found, limit=limit, rtol=rtol, atol=atol)


__all__ = [
    "Difference",
    "array_values",
    "batch_parts",
    "compare",
    "compare_arrays",
    "compare_batches",
    "compare_schemas",
    "normalize_field",
    "value_at",
]
