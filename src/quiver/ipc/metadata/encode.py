"""IPC metadata, the encoder: the plain objects of :mod:`.model` -> flatbuffer bytes
(Schema.fbs, Message.fbs, File.fbs, Tensor.fbs, SparseTensor.fbs).

:func:`encode_message` writes plain RecordBatch messages from a prebuilt
:class:`RecordBatchTemplate` (one ``struct.pack`` per message, byte for byte what the
general builder writes); everything else goes through :class:`~quiver.ipc.flatbuf.Builder`.

>>> from quiver import types as t
>>> from quiver.ipc.metadata import decode_message
>>> sm = SchemaMessage(t.schema([t.field("a", t.int32())]), {})
>>> msg = decode_message(encode_message(Message(4, sm, 0)))
>>> msg.version, str(msg.header.schema)
(4, 'a: int32')
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import registry
from ... import types as t
from ...errors import ArrowInvalidArgument
from ...types import DataType, Field, KeyValueMetadata
from ..flatbuf import Builder

# the model's tensor classes and rarer header codes as m.X (cold paths); the names the
# hot paths use, imported
from . import model as m
from .fields import (
    BINARY,
    DATE,
    DECIMAL,
    DURATION,
    FIXED_BINARY,
    FIXED_LIST,
    FLOAT,
    FLOAT_WIDTHS,
    INT,
    INTERVAL,
    INTERVAL_UNITS,
    LARGE_BINARY,
    LARGE_UTF8,
    MAP,
    TIME,
    TIME_UNITS,
    TIMESTAMP,
    UNION,
    UTF8,
)
from .model import (
    CODECS,
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    H_RECORD_BATCH,
    SUPPORTED_VERSIONS,
    Block,
    Buffer,
    DictionaryBatch,
    Footer,
    Message,
    RecordBatch,
    SchemaMessage,
)

_QQ = struct.Struct("<qq")


def _pairs(value: Any) -> np.ndarray:
    """``value`` as an (n, 2) little-endian int64 array (a view when it already is one)."""
    arr = np.asarray(value, dtype="<i8")
    if arr.size == 0:
        return np.zeros((0, 2), dtype="<i8")
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ArrowInvalidArgument(f"expected (n, 2) integer pairs, found shape {arr.shape}")
    return arr


def _encode_key_values(b: Builder, md: Any) -> int:
    if not md:
        return 0
    if not isinstance(md, KeyValueMetadata):
        md = KeyValueMetadata(md)  # a mapping or pairs of str/bytes
    handles = []
    for k, v in md.items():
        kh = b.create_string(k)
        vh = b.create_string(v)
        handles.append(b.table([(0, "offset", kh), (1, "offset", vh)]))
    return b.create_offset_vector(handles)


def _encode_int(b: Builder, typ: DataType) -> int:
    if not isinstance(typ, t.IntegerType):
        raise ArrowInvalidArgument(f"expected an integer type, found {typ}")
    return b.table([(0, "<i", typ.width), (1, "<?", typ.signed, False)])


_UNIT_INDEX = {u: i for i, u in enumerate(TIME_UNITS)}


def _encode_type(b: Builder, typ: DataType) -> tuple[int, int]:
    """Write the Type union member for ``typ``: (type code, table handle)."""
    encode = _ENCODERS.get(typ.__class__)
    if encode is None:
        raise ArrowInvalidArgument(
            f"expected a type that IPC metadata can describe, found {typ} "
            f"(DataType {typ.__class__.__name__} has no ipc_encode)"
        )
    return encode(b, typ)


# -- the registry's "ipc_encode" piece: (builder, dtype) -> (Type code, table handle) --
_ENCODERS = registry.table("ipc_encode")

# the types whose Type table is empty: each class has one code, the one its row declares
for _cls in (
    t.NullType, t.BoolType, t.BinaryViewType, t.StringViewType, t.ListType, t.LargeListType,
    t.ListViewType, t.LargeListViewType, t.StructType, t.RunEndEncodedType,
):
    ((_code, _name),) = registry.row(_cls).ipc_types
    registry.register("ipc_encode", lambda b, typ, code=_code: (code, b.table([])), _cls)


@registry.implements("ipc_encode", t.BinaryType)
def _encode_binary(b: Builder, typ: t.BinaryType) -> tuple[int, int]:
    return (LARGE_BINARY if typ.large else BINARY), b.table([])


@registry.implements("ipc_encode", t.StringType)
def _encode_string(b: Builder, typ: t.StringType) -> tuple[int, int]:
    return (LARGE_UTF8 if typ.large else UTF8), b.table([])


@registry.implements("ipc_encode", t.IntegerType)
def _encode_int_type(b: Builder, typ: t.IntegerType) -> tuple[int, int]:
    return INT, _encode_int(b, typ)


@registry.implements("ipc_encode", t.FloatingPointType)
def _encode_float(b: Builder, typ: t.FloatingPointType) -> tuple[int, int]:
    return FLOAT, b.table([(0, "<h", FLOAT_WIDTHS.index(typ.width))])


@registry.implements("ipc_encode", t.DecimalType)
def _encode_decimal(b: Builder, typ: t.DecimalType) -> tuple[int, int]:
    return DECIMAL, b.table([(0, "<i", typ.precision), (1, "<i", typ.scale), (2, "<i", typ.width)])


@registry.implements("ipc_encode", t.DateType)
def _encode_date(b: Builder, typ: t.DateType) -> tuple[int, int]:
    return DATE, b.table([(0, "<h", 0 if typ.unit == "day" else 1)])


@registry.implements("ipc_encode", t.TimeType)
def _encode_time(b: Builder, typ: t.TimeType) -> tuple[int, int]:
    return TIME, b.table([(0, "<h", _UNIT_INDEX[typ.unit]), (1, "<i", typ.width)])


@registry.implements("ipc_encode", t.TimestampType)
def _encode_timestamp(b: Builder, typ: t.TimestampType) -> tuple[int, int]:
    tz = b.create_string(typ.tz) if typ.tz is not None else 0
    return TIMESTAMP, b.table([(0, "<h", _UNIT_INDEX[typ.unit]), (1, "offset", tz)])


@registry.implements("ipc_encode", t.IntervalType)
def _encode_interval(b: Builder, typ: t.IntervalType) -> tuple[int, int]:
    return INTERVAL, b.table([(0, "<h", INTERVAL_UNITS.index(typ.unit))])


@registry.implements("ipc_encode", t.DurationType)
def _encode_duration(b: Builder, typ: t.DurationType) -> tuple[int, int]:
    return DURATION, b.table([(0, "<h", _UNIT_INDEX[typ.unit])])


@registry.implements("ipc_encode", t.FixedSizeBinaryType)
def _encode_fixed_binary(b: Builder, typ: t.FixedSizeBinaryType) -> tuple[int, int]:
    return FIXED_BINARY, b.table([(0, "<i", typ.width)])


@registry.implements("ipc_encode", t.FixedSizeListType)
def _encode_fixed_list(b: Builder, typ: t.FixedSizeListType) -> tuple[int, int]:
    return FIXED_LIST, b.table([(0, "<i", typ.list_size)])


@registry.implements("ipc_encode", t.MapType)
def _encode_map(b: Builder, typ: t.MapType) -> tuple[int, int]:
    return MAP, b.table([(0, "<?", typ.keys_sorted, False)])


@registry.implements("ipc_encode", t.UnionType)
def _encode_union(b: Builder, typ: t.UnionType) -> tuple[int, int]:
    ids = b.create_scalar_vector("i", typ.type_codes)
    return UNION, b.table([(0, "<h", 0 if typ.mode == "sparse" else 1), (1, "offset", ids)])


class _SchemaEncoder:
    __slots__ = ("builder", "dictionary_ids")

    def __init__(self, builder: Builder, dictionary_ids: dict[tuple[int, ...], int]) -> None:
        self.builder = builder
        self.dictionary_ids = dictionary_ids

    def fields(self, fields: Sequence[Field], path: tuple[int, ...]) -> int:
        handles = [self.field(f, (*path, k)) for k, f in enumerate(fields)]
        return self.builder.create_offset_vector(handles)

    def field(self, f: Field, path: tuple[int, ...]) -> int:
        b = self.builder
        typ = f.type
        metadata = f.metadata.items() if f.metadata else []
        dictionary = None
        if isinstance(typ, t.ExtensionType):
            metadata += self._extension_md(typ)
            typ = typ.storage_type
        if isinstance(typ, t.DictionaryType):
            dictionary = typ
            typ = typ.value_type
            if isinstance(typ, t.ExtensionType):
                metadata += self._extension_md(typ)
                typ = typ.storage_type
        if isinstance(typ, (t.ExtensionType, t.DictionaryType)):
            raise ArrowInvalidArgument(
                f"expected at most one extension and one dictionary level on field "
                f"{f.name!r}, found {f.type}"
            )
        children = self.fields(typ.fields, path) if typ.fields else 0
        dict_handle = 0
        if dictionary is not None:
            dict_id = self.dictionary_ids.get(path)
            if dict_id is None:
                raise ArrowInvalidArgument(
                    f"expected a dictionary id for dictionary field {f.name!r} at path {path}, "
                    f"found none in dictionary_ids"
                )
            index = _encode_int(b, dictionary.index_type)
            dict_handle = b.table(
                [
                    (0, "<q", int(dict_id)),
                    (1, "offset", index),
                    (2, "<?", dictionary.ordered, False),
                ]
            )
        code, type_handle = _encode_type(b, typ)
        name = b.create_string(f.name)
        md = _encode_key_values(b, metadata)
        return b.table(
            [
                (0, "offset", name),
                (1, "<?", f.nullable, False),
                (2, "<B", code),
                (3, "offset", type_handle),
                (4, "offset", dict_handle),
                (5, "offset", children),
                (6, "offset", md),
            ]
        )

    @staticmethod
    def _extension_md(typ: t.ExtensionType) -> list[tuple[bytes, bytes]]:
        return [
            (EXTENSION_NAME_KEY, typ.extension_name.encode("utf-8")),
            (EXTENSION_METADATA_KEY, bytes(typ.serialized)),
        ]


def encode_schema_table(b: Builder, sm: SchemaMessage) -> int:
    if sm.endianness not in ("little", "big"):
        raise ArrowInvalidArgument(
            f"expected endianness 'little' or 'big', found {sm.endianness!r}"
        )
    try:
        fields = _SchemaEncoder(b, sm.dictionary_ids).fields(sm.schema.fields, ())
    except RecursionError:
        raise ArrowInvalidArgument(
            "expected a schema shallow enough for Python's recursion limit, found deeper nesting"
        ) from None
    md = _encode_key_values(b, sm.schema.metadata)
    features = b.create_scalar_vector("q", list(sm.features)) if sm.features else 0
    return b.table(
        [
            (0, "<h", 0 if sm.endianness == "little" else 1, 0),
            (1, "offset", fields),
            (2, "offset", md),
            (3, "offset", features),
        ]
    )


def _encode_record_batch(b: Builder, rb: RecordBatch) -> int:
    nodes = b.create_struct_vector(_pairs(rb.nodes))
    buffers = b.create_struct_vector(_pairs(rb.buffers))
    comp = 0
    if rb.compression is not None:
        if rb.compression.codec not in CODECS:
            raise ArrowInvalidArgument(
                f"expected a codec in {CODECS}, found {rb.compression.codec!r}"
            )
        if rb.compression.method != "buffer":
            raise ArrowInvalidArgument(
                f"expected compression method 'buffer', found {rb.compression.method!r}"
            )
        comp = b.table([(0, "<b", CODECS.index(rb.compression.codec), 0)])
    variadic = (
        b.create_scalar_vector("q", list(rb.variadic_buffer_counts))
        if len(rb.variadic_buffer_counts)
        else 0
    )
    return b.table(
        [
            (0, "<q", int(rb.length)),
            (1, "offset", nodes),
            (2, "offset", buffers),
            (3, "offset", comp),
            (4, "offset", variadic),
        ]
    )


def _encode_buffer(buf: Buffer | tuple[int, int]) -> bytes:
    return _QQ.pack(int(buf[0]), int(buf[1]))


def _encode_dims(b: Builder, shape: Sequence[int], names: Sequence[str | None]) -> int:
    names = list(names) + [None] * (len(shape) - len(names))
    handles = []
    for size, name in zip(shape, names):
        nh = b.create_string(name) if name is not None else 0
        handles.append(b.table([(0, "<q", int(size)), (1, "offset", nh)]))
    return b.create_offset_vector(handles)


def _encode_tensor(b: Builder, tensor: m.Tensor) -> int:
    code, th = _encode_type(b, tensor.type)
    shape = _encode_dims(b, tensor.shape, tensor.dim_names)
    strides = b.create_scalar_vector("q", list(tensor.strides)) if tensor.strides else 0
    return b.table(
        [
            (0, "<B", code),
            (1, "offset", th),
            (2, "offset", shape),
            (3, "offset", strides),
            (4, "struct", _encode_buffer((tensor.data_offset, tensor.data_length)), 8),
        ]
    )


def _encode_buffer_vector(b: Builder, bufs: Sequence[Buffer]) -> int:
    arr = np.array([(int(o), int(n)) for o, n in bufs], dtype="<i8").reshape(-1, 2)
    return b.create_struct_vector(arr)


def _encode_sparse_index(b: Builder, index: m.SparseIndex) -> tuple[int, int]:
    if isinstance(index, m.SparseTensorIndexCOO):
        it = _encode_int(b, index.indices_type)
        strides = (
            b.create_scalar_vector("q", list(index.indices_strides)) if index.indices_strides else 0
        )
        return 1, b.table(
            [
                (0, "offset", it),
                (1, "offset", strides),
                (2, "struct", _encode_buffer(index.indices_buffer), 8),
                (3, "<?", index.is_canonical, False),
            ]
        )
    if isinstance(index, m.SparseMatrixIndexCSX):
        pt = _encode_int(b, index.indptr_type)
        it = _encode_int(b, index.indices_type)
        return 2, b.table(
            [
                (0, "<h", 0 if index.compressed_axis == "row" else 1, 0),
                (1, "offset", pt),
                (2, "struct", _encode_buffer(index.indptr_buffer), 8),
                (3, "offset", it),
                (4, "struct", _encode_buffer(index.indices_buffer), 8),
            ]
        )
    if isinstance(index, m.SparseTensorIndexCSF):
        pt = _encode_int(b, index.indptr_type)
        pb = _encode_buffer_vector(b, index.indptr_buffers)
        it = _encode_int(b, index.indices_type)
        ib = _encode_buffer_vector(b, index.indices_buffers)
        ao = b.create_scalar_vector("i", list(index.axis_order))
        return 3, b.table(
            [
                (0, "offset", pt),
                (1, "offset", pb),
                (2, "offset", it),
                (3, "offset", ib),
                (4, "offset", ao),
            ]
        )
    raise ArrowInvalidArgument(f"expected a sparse tensor index, found {index!r}")


def _encode_sparse_tensor(b: Builder, st: m.SparseTensor) -> int:
    code, th = _encode_type(b, st.type)
    shape = _encode_dims(b, st.shape, st.dim_names)
    icode, ih = _encode_sparse_index(b, st.sparse_index)
    return b.table(
        [
            (0, "<B", code),
            (1, "offset", th),
            (2, "offset", shape),
            (3, "<q", int(st.non_zero_length)),
            (4, "<B", icode),
            (5, "offset", ih),
            (6, "struct", _encode_buffer(st.data), 8),
        ]
    )


def _encode_header(b: Builder, header: m.Header) -> tuple[int, int]:
    if header is None:
        return 0, 0
    if isinstance(header, RecordBatch):
        return H_RECORD_BATCH, _encode_record_batch(b, header)
    if isinstance(header, SchemaMessage):
        return m.H_SCHEMA, encode_schema_table(b, header)
    if isinstance(header, DictionaryBatch):
        data = _encode_record_batch(b, header.data)
        return m.H_DICTIONARY_BATCH, b.table(
            [(0, "<q", int(header.id)), (1, "offset", data), (2, "<?", header.is_delta, False)]
        )
    if isinstance(header, m.Tensor):
        return m.H_TENSOR, _encode_tensor(b, header)
    if isinstance(header, m.SparseTensor):
        return m.H_SPARSE_TENSOR, _encode_sparse_tensor(b, header)
    raise ArrowInvalidArgument(f"expected a message header object, found {header!r}")


def _check_write_version(version: int) -> None:
    if version not in SUPPORTED_VERSIONS:
        raise ArrowInvalidArgument(f"expected metadata version V4 (3) or V5 (4), found {version}")


def _finish_message(
    b: Builder, version: int, header_code: int, header: int, body_length: int, custom: Any
) -> bytes:
    """Write the Message root table over an encoded header and finish the flatbuffer."""
    md = _encode_key_values(b, custom)
    root = b.table(
        [
            (0, "<h", version),
            (1, "<B", header_code, 0),
            (2, "offset", header),
            (3, "<q", int(body_length), 0),
            (4, "offset", md),
        ]
    )
    return b.finish(root)


def field_position(buf: bytes, table: int, index: int) -> int:
    """Where field ``index`` of the table at ``table`` sits (0: absent), from its vtable."""
    (soffset,) = struct.unpack_from("<i", buf, table)
    vtable = table - soffset
    vt_size, _ = struct.unpack_from("<HH", buf, vtable)
    if 4 + 2 * index >= vt_size:
        return 0
    (pos,) = struct.unpack_from("<H", buf, vtable + 4 + 2 * index)
    return table + pos if pos else 0


def follow(buf: bytes, pos: int) -> int:
    """The target of the uoffset at ``pos``."""
    (rel,) = struct.unpack_from("<I", buf, pos)
    return pos + rel


class RecordBatchTemplate:
    """The Message flatbuffer of a plain RecordBatch, prebuilt for a number of FieldNodes
    and Buffers.

    "Plain" means no compression, no variadic buffer counts, no custom metadata and a
    non-zero body length (the general builder leaves a zero bodyLength out, which changes
    the layout).  The general builder writes one such message once; its fixed structure
    is kept as bytes and each message fills in only bodyLength, length and the FieldNode
    and Buffer structs, with one ``struct.pack``.  The result is byte for byte what
    :func:`encode_message` builds through the general builder for the same message.

    ``prefix`` goes before the flatbuffer (the writer passes the framing prefix, which
    depends only on the metadata size).

    >>> from quiver.ipc.metadata import decode_message
    >>> tmpl = RecordBatchTemplate(4, 1, 2)
    >>> meta = tmpl.encode(8, 1, [1, 0], [0, 0, 0, 8])
    >>> msg = decode_message(meta)
    >>> msg.body_length, msg.header.length, msg.header.buffers.tolist()
    (8, 1, [[0, 0], [0, 8]])
    """

    __slots__ = (
        "_c0", "_c1", "_c2", "_c3", "_pack", "num_buffers", "num_nodes", "size", "version"
    )  # fmt: skip

    def __init__(
        self, version: int, num_nodes: int, num_buffers: int, prefix: bytes = b""
    ) -> None:
        _check_write_version(version)
        if num_nodes < 0 or num_buffers < 0:
            raise ArrowInvalidArgument(
                f"expected non-negative FieldNode and Buffer counts, found {num_nodes} "
                f"and {num_buffers}"
            )
        self.version = version
        self.num_nodes = num_nodes
        self.num_buffers = num_buffers
        rb = RecordBatch(
            1, np.ones((num_nodes, 2), dtype="<i8"), np.ones((num_buffers, 2), dtype="<i8")
        )
        b = Builder()
        buf = _finish_message(b, version, H_RECORD_BATCH, _encode_record_batch(b, rb), 1, None)
        self.size = len(buf)
        root = follow(buf, 0)
        body_length_at = field_position(buf, root, 3)
        rb_table = follow(buf, field_position(buf, root, 2))
        length_at = field_position(buf, rb_table, 0)
        nodes_at = follow(buf, field_position(buf, rb_table, 1)) + 4
        buffers_at = follow(buf, field_position(buf, rb_table, 2)) + 4
        # the order in which the general builder places them (it writes back to front:
        # nodes first, so they end up last); the one pack below relies on it
        if not 0 < body_length_at < length_at < buffers_at < nodes_at:
            raise AssertionError("the RecordBatch template does not match the builder's layout")
        end_buffers = buffers_at + 16 * num_buffers
        self._c0 = prefix + buf[:body_length_at]
        self._c1 = buf[body_length_at + 8 : length_at]
        self._c2 = buf[length_at + 8 : buffers_at]
        self._c3 = buf[end_buffers:nodes_at]
        if buf[nodes_at + 16 * num_nodes :]:
            raise AssertionError("the RecordBatch template does not end with its FieldNodes")
        self._pack = struct.Struct(
            f"<{len(self._c0)}sq{len(self._c1)}sq{len(self._c2)}s{2 * num_buffers}q"
            f"{len(self._c3)}s{2 * num_nodes}q"
        ).pack

    def with_prefix(self, prefix: bytes) -> RecordBatchTemplate:
        """The same template with ``prefix`` written before the flatbuffer."""
        return RecordBatchTemplate(self.version, self.num_nodes, self.num_buffers, prefix)

    def encode(
        self, body_length: int, length: int, nodes: Sequence[int], buffers: Sequence[int]
    ) -> bytes:
        """The message for ``length`` rows: ``nodes`` flat ``[length, null_count, ...]``,
        ``buffers`` flat ``[offset, length, ...]`` (pre-order), ``body_length`` > 0."""
        return self._pack(
            self._c0, body_length, self._c1, length, self._c2, *buffers, self._c3, *nodes
        )


_TEMPLATES: dict[tuple[int, int, int], RecordBatchTemplate] = {}


def record_batch_template(version: int, num_nodes: int, num_buffers: int) -> RecordBatchTemplate:
    """The (cached) :class:`RecordBatchTemplate` for these counts."""
    key = (version, num_nodes, num_buffers)
    found = _TEMPLATES.get(key)
    if found is None:
        found = RecordBatchTemplate(version, num_nodes, num_buffers)
        if len(_TEMPLATES) < 1024:
            _TEMPLATES[key] = found
    return found


def encode_message(msg: Message) -> bytes:
    """Encode a Message as a flatbuffer (not framed, not padded beyond 8-byte alignment)."""
    _check_write_version(msg.version)
    header = msg.header
    body_length = int(msg.body_length)
    if (
        type(header) is RecordBatch
        and body_length > 0
        and header.compression is None
        and not len(header.variadic_buffer_counts)
        and not msg.custom_metadata
    ):
        nodes = _pairs(header.nodes)
        buffers = _pairs(header.buffers)
        tmpl = record_batch_template(msg.version, nodes.shape[0], buffers.shape[0])
        return tmpl.encode(
            body_length, int(header.length), nodes.ravel().tolist(), buffers.ravel().tolist()
        )
    return encode_message_general(msg)


def encode_message_general(msg: Message) -> bytes:
    """:func:`encode_message` through the general builder only (no template shortcut)."""
    _check_write_version(msg.version)
    b = Builder()
    code, header = _encode_header(b, msg.header)
    return _finish_message(b, msg.version, code, header, msg.body_length, msg.custom_metadata)


def encode_schema(schema_msg: SchemaMessage) -> bytes:
    """Encode a bare Schema table as a flatbuffer root."""
    b = Builder()
    return b.finish(encode_schema_table(b, schema_msg))


_BLOCK_DTYPE = np.dtype(
    [("offset", "<i8"), ("meta_data_length", "<i4"), ("pad", "<i4"), ("body_length", "<i8")]
)


def _blocks_bytes(blocks: Sequence[Block]) -> np.ndarray:
    arr = np.zeros(len(blocks), dtype=_BLOCK_DTYPE)
    if len(blocks):
        arr["offset"] = [blk.offset for blk in blocks]
        arr["meta_data_length"] = [blk.meta_data_length for blk in blocks]
        arr["body_length"] = [blk.body_length for blk in blocks]
    return arr


def encode_footer(footer: Footer) -> bytes:
    """Encode an IPC file Footer as a flatbuffer."""
    _check_write_version(footer.version)
    b = Builder()
    schema = encode_schema_table(b, footer.schema)
    dicts = b.create_struct_vector(_blocks_bytes(footer.dictionaries))
    batches = b.create_struct_vector(_blocks_bytes(footer.record_batches))
    md = _encode_key_values(b, footer.custom_metadata)
    root = b.table(
        [
            (0, "<h", footer.version),
            (1, "offset", schema),
            (2, "offset", dicts),
            (3, "offset", batches),
            (4, "offset", md),
        ]
    )
    return b.finish(root)
