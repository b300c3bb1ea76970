"""Integration JSON columns -> arrays: the IPC body walk reading JSON instead of a body.

A JSON ``FieldData`` holds what an IPC body holds, in another form: its ``count`` and the
nulls of its VALIDITY are the FieldNode, and its keys (VALIDITY, DATA, OFFSET, SIZE,
TYPE_ID, VIEWS, VARIADIC_DATA_BUFFERS) are the buffers.  :class:`JsonColumnLoader` is
:class:`quiver.ipc.body.BodyLoader` with only those reads replaced (as arrow-js's
JSONVectorLoader extends its VectorLoader), so that the walk over the compiled plan and
its structural checks (buffer sizes, offsets within their data or child, the child rules
of :mod:`quiver.layout_rules`) are the ones IPC reading applies.  Dictionaries
are decoded lazily, by JSON id, the first time a column needs them
(:class:`JsonDictionaries`), so nested dictionaries resolve in any order.

Buffers are ``numpy.uint8`` arrays.  Malformed data raises
:class:`~quiver.errors.FormatError` (the walk's :class:`~quiver.errors.BodyError` is one)
naming the field path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import types as t
from ..array.base import Array
from ..array.decimal import from_ints, value_range
from ..array.validate import validate_array
from ..buffers import pack_bits
from ..errors import ArrowError, ArrowInvalid, FormatError, NotSupported
from ..ipc import metadata as md
from ..ipc.body import BodyLoader, LoadContext, PlanNode
from ..layout import storage_numpy_dtype

#: the largest ``count`` accepted: JSON test files are small, and a huge count on a type
#: without data (null, run-end encoded) would only make later walks allocate without bound
MAX_COUNT = 2**31 - 1


#: numpy record layouts of the two interval types that are not plain integers
DAY_TIME_DTYPE = np.dtype([("days", "<i4"), ("milliseconds", "<i4")])
MONTH_DAY_NANO_DTYPE = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanoseconds", "<i8")])
#: a 16-byte binary view, inline form and reference form
VIEW_INLINE_DTYPE = np.dtype([("size", "<i4"), ("inlined", "V12")])
VIEW_REF_DTYPE = np.dtype([("size", "<i4"), ("prefix", "V4"), ("buffer_index", "<i4"),
                           ("offset", "<i4")])


@dataclass(frozen=True, slots=True)
class FieldNode:
    """One schema field as read from JSON.

    ``field`` is the quiver field (its type includes the dictionary and extension wrappers),
    ``dictionary_id`` the JSON dictionary id when the field is dictionary-encoded, and
    ``children`` the nodes of the value type's child fields.
    """

    field: t.Field
    dictionary_id: int | None
    children: tuple[FieldNode, ...]



def need(obj: Any, key: str, kind: type | tuple[type, ...], where: str, what: str) -> Any:
    if not isinstance(obj, dict):
        raise FormatError(f"expected a JSON object for {what}, found {type(obj).__name__}",
                          field_path=where or None)
    if key not in obj:
        raise FormatError(f"expected key {key!r} in {what}, found keys {sorted(obj)}",
                          field_path=where or None)
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise FormatError(f"expected {what} key {key!r} to be {names}, found {value!r:.60}",
                          field_path=where or None)
    return value


_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


# --------------------------------------------------------------------------------------
# leaf decoders


def _np(values: Any, dtype: Any, path: str, what: str) -> np.ndarray:
    if not isinstance(values, list):
        raise FormatError(f"expected {what} as a JSON list, found {type(values).__name__}",
                          field_path=path)
    try:
        return np.array(values, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as exc:
        raise FormatError(f"expected {what} values of {np.dtype(dtype)}, found an entry "
                          f"that does not fit ({exc})", field_path=path) from None


def _list_of(col: dict[str, Any], key: str, count: int, path: str) -> list[Any]:
    values = need(col, key, list, path, "column")
    if len(values) != count:
        raise FormatError(f"expected {count} {key} entries, found {len(values)}",
                          field_path=path)
    return values


def _validity(col: dict[str, Any], count: int, path: str) -> tuple[np.ndarray | None, int]:
    if "VALIDITY" not in col:
        return None, 0
    bits = _np(_list_of(col, "VALIDITY", count, path), np.uint8, path, "VALIDITY")
    if bits.size and int(bits.max()) > 1:
        raise FormatError(f"expected VALIDITY entries 0 or 1, found {int(bits.max())}",
                          field_path=path)
    nulls = int(count - np.count_nonzero(bits))
    return (pack_bits(bits) if nulls else None), nulls


def _hex_bytes(values: list[Any], path: str, what: str) -> list[bytes]:
    try:
        return [bytes.fromhex(v) for v in values]
    except (ValueError, TypeError):
        raise FormatError(f"expected hex strings in {what}, found a non-hex entry",
                          field_path=path) from None


def _utf8_bytes(values: list[Any], path: str, what: str) -> list[bytes]:
    try:
        return [v.encode("utf-8") for v in values]
    except AttributeError:
        raise FormatError(f"expected strings in {what}, found a non-string entry",
                          field_path=path) from None
    except UnicodeEncodeError as exc:
        raise FormatError(f"expected valid Unicode strings in {what}, found a lone "
                          f"surrogate {exc.object[exc.start:exc.end]!r}",
                          field_path=path) from None


def _decimal_values(values: list[Any], width: int, path: str) -> np.ndarray:
    """The value buffer of decimals of ``width`` bits from their unscaled integer strings."""
    try:
        ints = np.array([int(v) for v in values], dtype=object)
    except (ValueError, TypeError):
        raise FormatError(f"expected integer strings that fit in {width} bits, found one that "
                          "is not an integer", field_path=path) from None
    low, high = value_range(width)
    if len(ints) and ((ints < low) | (ints > high)).any():
        raise FormatError(f"expected decimal values that fit in {width} bits, found one that "
                          "does not", field_path=path)
    return from_ints(ints, width)


def _values(st: t.DataType, col: dict[str, Any], count: int, path: str) -> np.ndarray:
    """The fixed-width value buffer of a primitive column from its DATA entries."""
    data = _list_of(col, "DATA", count, path)
    nd = storage_numpy_dtype(st)
    if nd is not None:
        if nd.kind == "f" and nd.itemsize < 8:
            arr = _np(data, np.float64, path, "DATA").astype(nd)
        else:
            arr = _np(data, nd, path, "DATA")
        return arr.view(np.uint8)
    if isinstance(st, t.DecimalType):
        return _decimal_values(data, st.width, path)
    if isinstance(st, t.IntervalType):
        if st.unit == "year_month":
            return _np(data, np.int32, path, "DATA").view(np.uint8)
        rec = DAY_TIME_DTYPE if st.unit == "day_time" else MONTH_DAY_NANO_DTYPE
        out = np.zeros(count, dtype=rec)
        for name in rec.names:
            try:
                column = [d[name] for d in data]
            except (KeyError, TypeError):
                raise FormatError(f"expected interval objects with key {name!r}, found one "
                                  "without", field_path=path) from None
            out[name] = _np(column, rec[name], path, f"interval {name}")
        return out.view(np.uint8)
    if isinstance(st, t.FixedSizeBinaryType):
        raw = b"".join(_hex_bytes(data, path, "DATA"))
        if len(raw) != count * st.width:
            raise FormatError(f"expected {count} values of {st.width} bytes, found "
                              f"{len(raw)} bytes in all", field_path=path)
        return np.frombuffer(raw, dtype=np.uint8)
    raise NotSupported(f"no JSON value decoder for {st}; add one in json_columns._values")


def _offsets(col: dict[str, Any], key: str, n: int, width: int, path: str) -> np.ndarray:
    """The ``n`` integers of ``width`` bytes under ``key`` (OFFSET, SIZE)."""
    arr = _np(need(col, key, list, path, "column"), f"<i{width}", path, key)
    if arr.size != n:
        raise FormatError(f"expected {n} {key} entries, found {arr.size}", field_path=path)
    return arr


def _binary(
    st: t.DataType, col: dict[str, Any], count: int, width: int, path: str
) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, data) of a binary/string column, offsets rebuilt from DATA and checked
    against OFFSET."""
    data = _list_of(col, "DATA", count, path)
    is_text = isinstance(st, t.StringType)
    pieces = _utf8_bytes(data, path, "DATA") if is_text else _hex_bytes(data, path, "DATA")
    lengths = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=count)
    offsets = np.zeros(count + 1, dtype=f"<i{width}")
    offsets[1:] = np.cumsum(lengths)
    if "OFFSET" in col:
        given = _offsets(col, "OFFSET", count + 1, width, path)
        bad = np.flatnonzero(np.diff(given.astype(np.int64)) != lengths)
        if bad.size:
            i = int(bad[0])
            raise FormatError(f"expected OFFSET to give slot {i} a length of "
                              f"{int(lengths[i])} bytes, found {int(given[i + 1] - given[i])}",
                              field_path=path)
    return offsets.view(np.uint8), np.frombuffer(b"".join(pieces), dtype=np.uint8)


def _views(
    st: t.DataType, col: dict[str, Any], count: int, path: str
) -> list[np.ndarray]:
    """(views, data buffers...) of a binary/string view column."""
    views = _list_of(col, "VIEWS", count, path)
    jbuffers = need(col, "VARIADIC_DATA_BUFFERS", list, path, "column")
    buffers = [np.frombuffer(b, dtype=np.uint8) for b in
               _hex_bytes(jbuffers, path, "VARIADIC_DATA_BUFFERS")]
    is_text = isinstance(st, t.StringViewType)
    sizes = np.zeros(count, dtype=np.int64)
    inline = np.zeros(count, dtype=bool)
    inlined: list[bytes] = []
    refs: list[tuple[bytes, int, int]] = []
    for i, v in enumerate(views):
        size = need(v, "SIZE", int, path, f"view {i}")
        if not 0 <= size < 2**31:
            raise FormatError(f"expected view {i} size in 0..2**31-1, found {size}",
                              field_path=path)
        sizes[i] = size
        if size <= 12:
            value = need(v, "INLINED", str, path, f"view {i}")
            if is_text:
                raw = _utf8_bytes([value], path, f"INLINED of view {i}")[0]
            else:
                raw = _hex_bytes([value], path, "INLINED")[0]
            if len(raw) != size:
                raise FormatError(f"expected view {i} to inline {size} bytes, found {len(raw)}",
                                  field_path=path)
            inline[i] = True
            inlined.append(raw.ljust(12, b"\0"))
        else:
            prefix = _hex_bytes([need(v, "PREFIX_HEX", str, path, f"view {i}")], path,
                                "PREFIX_HEX")[0]
            index = need(v, "BUFFER_INDEX", int, path, f"view {i}")
            offset = need(v, "OFFSET", int, path, f"view {i}")
            if len(prefix) != 4:
                raise FormatError(f"expected a 4-byte view prefix, found {len(prefix)} bytes "
                                  f"at view {i}", field_path=path)
            if not 0 <= index < len(buffers) or offset < 0 or offset + size > len(
                buffers[index]
            ):
                raise FormatError(f"expected view {i} inside a data buffer, found buffer "
                                  f"{index} offset {offset} size {size}", field_path=path)
            if bytes(buffers[index][offset : offset + 4]) != prefix:
                raise FormatError(f"expected view {i} prefix {prefix.hex()} to match its data, "
                                  f"found {bytes(buffers[index][offset:offset + 4]).hex()}",
                                  field_path=path)
            refs.append((prefix, index, offset))
    if sizes.size and sizes.max() > np.iinfo(np.int32).max:
        raise FormatError("expected view sizes below 2**31, found a larger one",
                          field_path=path)
    out = np.zeros(count, dtype=VIEW_REF_DTYPE)
    out["size"] = sizes
    if refs:
        ref_rows = ~inline
        out["prefix"][ref_rows] = np.frombuffer(b"".join(r[0] for r in refs), dtype="V4")
        out["buffer_index"][ref_rows] = [r[1] for r in refs]
        out["offset"][ref_rows] = [r[2] for r in refs]
    as_inline = out.view(VIEW_INLINE_DTYPE)
    if inlined:
        as_inline["inlined"][inline] = np.frombuffer(b"".join(inlined), dtype="V12")
    return [out.view(np.uint8), *buffers]



# --------------------------------------------------------------------------------------
# the walk: the IPC loader with JSON leaf reads


def _read_buffer(column: _Column, kind: str, width: int) -> np.ndarray | None:
    """The buffer of ``kind`` (a :class:`~quiver.layout.BufferSpec` kind, entries of
    ``width`` bytes) of ``column``, from its JSON keys; the data buffers decoded along with
    it wait in ``column.extra``."""
    col, count, path, st = column.col, column.count, column.path, column.storage
    if kind == "validity":
        return column.validity
    if kind == "bits":
        return pack_bits(_np(_list_of(col, "DATA", count, path), bool, path, "DATA"))
    if kind == "values":
        index = st.index_type if isinstance(st, t.DictionaryType) else st
        return _values(index, col, count, path)
    if kind == "offsets" and column.node.rule == "none":  # binary, string: from DATA
        offsets, data = _binary(st, col, count, width, path)
        column.extra.append(data)
        return offsets
    if kind == "offsets":
        n = count if column.node.rule in ("views", "dense") else count + 1
        return _offsets(col, "OFFSET", n, width, path).view(np.uint8)
    if kind == "sizes":
        return _offsets(col, "SIZE", count, width, path).view(np.uint8)
    if kind == "views":
        views, *data = _views(st, col, count, path)
        column.extra.extend(data)
        return views
    if kind == "type_ids":
        return _np(_list_of(col, "TYPE_ID", count, path), np.int8, path, "TYPE_ID").view(np.uint8)
    raise NotSupported(f"no JSON decoder for buffer kind {kind!r}")  # pragma: no cover


class _Column:
    """One JSON ``FieldData`` in the walk: its FieldNode numbers, then its buffers in the
    order the walk asks for them, then its children's ``FieldData``."""

    __slots__ = ("col", "count", "extra", "kinds", "next_child", "node", "nulls", "path",
                 "storage", "validity")

    def __init__(self, node: PlanNode, col: Any, v4: bool) -> None:
        path = node.name
        count = need(col, "count", int, path, "column")
        if not 0 <= count <= MAX_COUNT:
            raise FormatError(f"expected a count in 0..{MAX_COUNT}, found {count}",
                              field_path=path)
        self.node, self.col, self.count, self.path = node, col, count, path
        self.storage = t.storage_of(node.dtype)
        self.validity: np.ndarray | None = None
        self.nulls = count if isinstance(self.storage, t.NullType) else 0
        if node.has_validity or v4:
            self.validity, self.nulls = _validity(col, count, path)
        # a V4 union's VALIDITY comes first, as the walk reads it (V4 bodies have it there)
        kinds = [(spec.kind, spec.byte_width) for spec in node.specs]
        self.kinds = iter([("validity", 0), *kinds] if v4 else kinds)
        self.extra: list[np.ndarray] = []
        self.next_child = 0

    def child(self) -> Any:
        """The next child's ``FieldData`` (the walk asks for each child once, in order)."""
        i = self.next_child
        self.next_child = i + 1
        jchildren = need(self.col, "children", list, self.path, "column")
        if i == 0 and len(jchildren) != len(self.node.children):
            raise FormatError(f"expected {len(self.node.children)} children, found "
                              f"{len(jchildren)}", field_path=self.path)
        return jchildren[i]


class JsonColumnLoader(BodyLoader):
    """:class:`quiver.ipc.body.BodyLoader` reading FieldNodes and buffers from JSON.

    The walk (V4 union validity, buffer sizes, offsets, the child rules, dictionaries) is
    the IPC loader's; this class supplies the next node, buffer and variadic count from
    the ``FieldData`` being walked, and the dictionaries from ``dictionaries``.
    """

    def __init__(self, dictionaries: JsonDictionaries) -> None:
        # no FieldNodes and no body: the base state of an empty batch, which also keeps
        # the walk off its plain-leaf shortcut (that slices a body)
        empty = np.zeros((0, 2), dtype=np.int64)
        super().__init__(md.RecordBatch(0, empty, empty), memoryview(b""), 0,
                         LoadContext(max_unbacked_rows=_UNBACKED_ROWS))
        self._dictionaries = dictionaries
        self._open: list[_Column] = []
        self._top: Any = None

    def read(self, node: PlanNode, col: Any) -> Array:
        """The array of the top-level ``FieldData`` ``col`` of ``node``'s field."""
        self._top = col
        return self.load(node, True)  # type: ignore[return-value]  # load=True builds it

    def load(self, node: PlanNode, load: bool) -> Array | None:
        """One array and its children (the walk calls back here for each child)."""
        col = self._open[-1].child() if self._open else self._top
        v4 = node.v4_validity and isinstance(col, dict) and "VALIDITY" in col
        self._open.append(_Column(node, col, v4))
        self.v4 = v4  # read by the walk before it descends
        try:
            return super().load(node, load)
        finally:
            self._open.pop()

    def next_node(self, path: str) -> tuple[int, int]:
        """The column's ``count`` and the nulls its VALIDITY holds."""
        column = self._open[-1]
        return column.count, column.nulls

    def next_buffer(self, path: str, load: bool) -> np.ndarray | None:
        """The column's next buffer: the layout's next kind, then its data buffers."""
        column = self._open[-1]
        kind, width = next(column.kinds, ("data", 1))
        if kind == "data":
            return column.extra.pop(0)
        return _read_buffer(column, kind, width)

    def next_variadic(self, path: str) -> int:
        """How many data buffers a view column has (its VARIADIC_DATA_BUFFERS)."""
        return len(self._open[-1].extra)

    def error(self, cls: type[ArrowError], msg: str, path: str, offset: int | None = None):
        """The walk's errors name the field (a JSON document has no byte offsets)."""
        return cls(msg, field_path=path or None)

    def _dictionary(self, node: PlanNode) -> Array:
        did = node.dictionary_id
        dictionary = self._dictionaries.get(did, node.name)  # type: ignore[arg-type]
        value_type = t.storage_of(node.dtype).value_type  # type: ignore[attr-defined]
        if not dictionary.type.equals(value_type):
            raise FormatError(f"expected dictionary {did} to hold {value_type}, found "
                              f"{dictionary.type} (one id used for two value types)",
                              field_path=node.name)
        return dictionary


# layouts whose values point into other memory (a child, a dictionary, a data buffer):
# a value out of range there makes any later reader index outside it
_POINTING = (t.ListViewType, t.LargeListViewType, t.UnionType, t.DictionaryType,
             t.RunEndEncodedType, t.BinaryViewType, t.StringViewType)


def _points_elsewhere(dtype: t.DataType) -> bool:
    storage = t.storage_of(dtype)
    if isinstance(storage, _POINTING):
        return True
    return any(_points_elsewhere(f.type) for f in getattr(storage, "fields", ()) or ())


def check_json_array(arr: Array, path: str, validate: bool) -> None:
    """What every decoded JSON column gets: with ``validate``, :func:`validate_json_array`;
    without, the same full checks still for columns whose values point into other memory
    (list views, unions, dictionaries, run ends, views), so that ``validate=False`` never
    gives arrays that index outside their buffers."""
    if validate or _points_elsewhere(arr.type):
        validate_json_array(arr, path)


def validate_json_array(arr: Array, path: str) -> None:
    """:func:`quiver.array.validate.validate_array` at the full level (decimal precision
    excepted: old gold files hold decimals beyond it), its findings raised as
    :class:`~quiver.errors.FormatError`: the JSON document is what is malformed."""
    try:
        validate_array(arr, full=True, path=path)
    except ArrowInvalid as exc:
        raise FormatError(exc.reason, field_path=exc.field_path) from None


_UNBACKED_ROWS = 1 << 62  # null and run-end encoded columns: MAX_COUNT bounds each one


def dictionary_ids(nodes: Sequence[FieldNode], prefix: tuple[int, ...] = ()) -> dict:
    """The JSON dictionary id of each dictionary-encoded field, by its index path (as
    :func:`quiver.ipc.body.compile_plan` takes them)."""
    out: dict[tuple[int, ...], int] = {}
    for i, n in enumerate(nodes):
        path = (*prefix, i)
        if n.dictionary_id is not None:
            out[path] = n.dictionary_id
        out.update(dictionary_ids(n.children, path))
    return out


class JsonDictionaries:
    """The dictionary batches of one JSON document, decoded by id when first asked for."""

    def __init__(self, nodes: Sequence[FieldNode], jdicts: Any, validate: bool) -> None:
        self._jdicts: dict[int, Any] = {}
        if jdicts is not None:
            if not isinstance(jdicts, list):
                raise FormatError(f"expected 'dictionaries' as a list, found "
                                  f"{type(jdicts).__name__}")
            for d in jdicts:
                did = need(d, "id", int, "", "dictionary batch")
                if did in self._jdicts:
                    raise FormatError(f"expected one dictionary batch per id, found id {did} "
                                      "twice (JSON cannot express deltas)")
                self._jdicts[did] = d
        self._validate = validate
        # the plan of each dictionary id's values (from the first field that uses it)
        self._plans: dict[int, PlanNode] = {}
        self._collect(nodes)
        self._decoded: dict[int, Array] = {}
        self._busy: set[int] = set()

    def _collect(self, nodes: Sequence[FieldNode]) -> None:
        for n in nodes:
            did = n.dictionary_id
            if did is not None and did not in self._plans:
                value = t.storage_of(n.field.type).value_type  # type: ignore[attr-defined]
                self._plans[did] = PlanNode(value, (0,), f"<dictionary {did}>",
                                            dictionary_ids(n.children, (0,)))
            self._collect(n.children)

    def get(self, did: int, path: str) -> Array:
        """The decoded dictionary with JSON id ``did`` (for the field at ``path``)."""
        done = self._decoded.get(did)
        if done is not None:
            return done
        jd = self._jdicts.get(did)
        if jd is None:
            raise FormatError(f"expected a dictionary batch with id {did}, found none",
                              field_path=path)
        if did in self._busy:
            raise FormatError(f"expected dictionaries without cycles, found id {did} "
                              "inside its own values", field_path=path)
        self._busy.add(did)
        try:
            data = need(jd, "data", dict, path, "dictionary batch")
            count = need(data, "count", int, path, "dictionary batch data")
            if not 0 <= count <= MAX_COUNT:
                raise FormatError(f"expected a dictionary count in 0..{MAX_COUNT}, found "
                                  f"{count}", field_path=path)
            cols = need(data, "columns", list, path, "dictionary batch data")
            if len(cols) != 1:
                raise FormatError(f"expected one column in dictionary batch {did}, found "
                                  f"{len(cols)}", field_path=path)
            plan = self._plans[did]
            arr = JsonColumnLoader(self).read(plan, cols[0])
            if len(arr) != count:
                raise FormatError(f"expected dictionary {did} of {count} values, found "
                                  f"{len(arr)}", field_path=path)
            check_json_array(arr, plan.name, self._validate)
        finally:
            self._busy.discard(did)
        self._decoded[did] = arr
        return arr

    def all(self) -> dict[int, Array]:
        """Every dictionary named by the schema (and present in the document), decoded."""
        for did in self._plans:
            if did in self._jdicts:
                self.get(did, f"<dictionary {did}>")
        return dict(self._decoded)
