"""IPC metadata, the model: the plain objects that the rest of quiver sees (Message.fbs,
File.fbs, Tensor.fbs, SparseTensor.fbs), and the enum numbers of the ``.fbs`` files.

:class:`Message`, :class:`SchemaMessage`, :class:`RecordBatch`, :class:`DictionaryBatch`,
:class:`Footer`, :class:`Block`, :class:`Tensor` and :class:`SparseTensor` (both a
:class:`TensorHead`: type, shape, dimension names) are frozen dataclasses of quiver's own
types (:mod:`quiver.types`); :mod:`.decode` and :mod:`.fast` build them from
flatbuffers, :mod:`.encode` writes them back.  ``RecordBatch.nodes`` and
``RecordBatch.buffers`` are ``(n, 2)`` int64 numpy arrays, but this module does not import
numpy, so that reading a schema or a footer runs without it.

:data:`CODECS` and :data:`CODEC_ALIASES` are quiver's one table of compression codec
names: the writer's options, the compression package and the metadata coder all use it.

>>> RecordBatch(2, [[2, 0]], [[0, 0], [0, 16]]) == RecordBatch(2, [[2, 0]], [[0, 0], [0, 16]])
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from ...types import DataType, KeyValueMetadata, Schema

if TYPE_CHECKING:
    import numpy as np

# enums (the numbers of the .fbs files)

V4 = 3
V5 = 4
SUPPORTED_VERSIONS = (V4, V5)

# MessageHeader union
H_SCHEMA, H_DICTIONARY_BATCH, H_RECORD_BATCH, H_TENSOR, H_SPARSE_TENSOR = 1, 2, 3, 4, 5

# Message.fbs: enum CompressionType : byte { LZ4_FRAME, ZSTD } (position = enum value)
CODECS: tuple[str, ...] = ("lz4_frame", "zstd")
#: every codec name a caller may give (lower case), with the canonical name it stands for
CODEC_ALIASES: dict[str, str] = {
    "lz4": "lz4_frame",
    "lz4_frame": "lz4_frame",
    "lz4frame": "lz4_frame",
    "zstd": "zstd",
}

EXTENSION_NAME_KEY = b"ARROW:extension:name"
EXTENSION_METADATA_KEY = b"ARROW:extension:metadata"


def unchecked_maker(cls: type, names: tuple[str, ...]) -> Any:
    """A function ``(*values)`` -> a ``cls`` whose slots ``names`` hold the values, built
    without the generic frozen ``__init__`` (half the cost of a small object on the
    decoders' hot paths); for dataclasses without ``__post_init__`` whose values the
    caller has already checked.  Generated once per class, unrolled."""
    setters = {f"_s{i}": getattr(cls, n).__set__ for i, n in enumerate(names)}
    source = (
        f"def make({', '.join(names)}):\n  obj = _new(_cls)\n"
        + "".join(f"  _s{i}(obj, {n})\n" for i, n in enumerate(names))
        + "  return obj\n"
    )
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls, **setters}
    exec(compile(source, f"<{cls.__name__} maker>", "exec"), scope)
    return scope["make"]


def version_name(version: int) -> str:
    """The MetadataVersion enum name of ``version`` (``3`` -> ``'V4'``)."""
    return f"V{version + 1}"


# --------------------------------------------------------------------------------------
# the plain objects


@dataclass(frozen=True)
class MetadataLimits:
    """Safety limits for decoding metadata; raise them for trusted sources.

    ``max_depth`` bounds field nesting, ``max_fields`` the number of fields in a schema,
    ``max_nodes`` / ``max_buffers`` the FieldNodes and Buffers of one record batch,
    ``max_metadata_items`` the key/value pairs of one custom metadata list, ``max_blocks`` the
    Blocks of a footer and ``max_count`` every vector element turned into a Python object.
    """

    max_depth: int = 64
    max_fields: int = 100_000
    max_nodes: int = 10_000_000
    max_buffers: int = 10_000_000
    max_metadata_items: int = 1_000_000
    max_blocks: int = 10_000_000
    max_count: int = 1_000_000


DEFAULT_LIMITS = MetadataLimits()


@dataclass(frozen=True, slots=True)
class BodyCompression:
    """How the body buffers of a batch are compressed (one codec, buffer by buffer)."""

    codec: str  # "lz4_frame" or "zstd"
    method: str = "buffer"


COMPRESSIONS = {name: BodyCompression(name) for name in CODECS}


def _pair_rows(value: Any) -> list[list[int]]:
    """``value`` (an (n, 2) array or a sequence of pairs) as a list of ``[a, b]`` ints."""
    if hasattr(value, "tolist"):
        rows = value.tolist()
        return [] if not rows or rows == [[]] else [[int(a), int(b)] for a, b in rows]
    return [[int(a), int(b)] for a, b in value]


@dataclass(frozen=True, slots=True, eq=False)
class RecordBatch:
    """The RecordBatch table: row count, FieldNodes, Buffers (metadata only, no body).

    ``nodes`` is an (n, 2) int64 array of ``[length, null_count]`` and ``buffers`` an (m, 2)
    int64 array of ``[offset, length]``, in depth-first pre-order of the schema.
    """

    length: int
    nodes: np.ndarray
    buffers: np.ndarray
    compression: BodyCompression | None = None
    variadic_buffer_counts: tuple[int, ...] = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecordBatch):
            return NotImplemented
        return (
            self.length == other.length
            and _pair_rows(self.nodes) == _pair_rows(other.nodes)
            and _pair_rows(self.buffers) == _pair_rows(other.buffers)
            and self.compression == other.compression
            and tuple(self.variadic_buffer_counts) == tuple(other.variadic_buffer_counts)
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class DictionaryBatch:
    """A dictionary's values for dictionary ``id``; ``is_delta`` appends to the existing one."""

    id: int
    data: RecordBatch
    is_delta: bool = False


@dataclass(frozen=True, slots=True)
class SchemaMessage:
    """A Schema table: quiver schema, dictionary ids by field path, endianness, features."""

    schema: Schema
    dictionary_ids: dict[tuple[int, ...], int]
    endianness: str = "little"
    features: tuple[int, ...] = ()


class Buffer(NamedTuple):
    """The ``Buffer`` struct: a region of a message body."""

    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class TensorHead:
    """What the Tensor and SparseTensor tables (Tensor.fbs, SparseTensor.fbs) both begin
    with: the value type, and the shape as each dimension's size and optional name."""

    type: DataType
    shape: tuple[int, ...]
    dim_names: tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class Tensor(TensorHead):
    """A dense tensor's metadata (Tensor.fbs); the data is ``data_length`` body bytes."""

    strides: tuple[int, ...]
    data_offset: int
    data_length: int


@dataclass(frozen=True, slots=True)
class SparseTensorIndexCOO:
    """Coordinate-format index: an (N, ndim) matrix of ``indices_type`` coordinates."""

    indices_type: DataType
    indices_buffer: Buffer
    indices_strides: tuple[int, ...] = ()
    is_canonical: bool = False


@dataclass(frozen=True, slots=True)
class SparseMatrixIndexCSX:
    """Compressed sparse row (``compressed_axis='row'``) or column matrix index."""

    compressed_axis: str  # "row" or "column"
    indptr_type: DataType
    indptr_buffer: Buffer
    indices_type: DataType
    indices_buffer: Buffer


@dataclass(frozen=True, slots=True)
class SparseTensorIndexCSF:
    """Compressed sparse fiber index: one indptr / indices buffer per level."""

    indptr_type: DataType
    indptr_buffers: tuple[Buffer, ...]
    indices_type: DataType
    indices_buffers: tuple[Buffer, ...]
    axis_order: tuple[int, ...]


SparseIndex = SparseTensorIndexCOO | SparseMatrixIndexCSX | SparseTensorIndexCSF


@dataclass(frozen=True, slots=True)
class SparseTensor(TensorHead):
    """A sparse tensor's metadata (SparseTensor.fbs)."""

    non_zero_length: int
    sparse_index: SparseIndex
    data: Buffer


Header = SchemaMessage | RecordBatch | DictionaryBatch | Tensor | SparseTensor | None

# the spec's name of each kind of message header
_HEADER_NAMES = {
    SchemaMessage: "Schema",
    RecordBatch: "RecordBatch",
    DictionaryBatch: "DictionaryBatch",
    Tensor: "Tensor",
    SparseTensor: "SparseTensor",
}


def header_name(header: Header) -> str:
    """The spec's name of a message header (``"Schema"``, ``"RecordBatch"``...), or
    ``"NONE"`` for none."""
    return _HEADER_NAMES.get(type(header), "NONE")


@dataclass(frozen=True, slots=True)
class Message:
    """An encapsulated message's metadata: version, header, body length, custom metadata."""

    version: int  # MetadataVersion enum value: V4 = 3, V5 = 4
    header: Header
    body_length: int
    custom_metadata: KeyValueMetadata | None = None


@dataclass(frozen=True, slots=True)
class Block:
    """Where one message sits in an IPC file."""

    offset: int
    meta_data_length: int
    body_length: int


_block = unchecked_maker(Block, ("offset", "meta_data_length", "body_length"))


class Blocks(Sequence[Block]):
    """A footer's Blocks as a read-only sequence, each :class:`Block` made when asked for
    (a file of many batches has many, and a reader usually wants a few).  It equals the
    tuple of the same Blocks, and added to a tuple (or Blocks) gives a tuple;
    ``offsets``, ``meta_data_lengths`` and ``body_lengths`` hold the fields as lists."""

    __slots__ = ("body_lengths", "meta_data_lengths", "offsets")

    def __init__(self, offsets: list[int], meta_data_lengths: list[int],
                 body_lengths: list[int]) -> None:
        self.offsets, self.meta_data_lengths, self.body_lengths = (
            offsets, meta_data_lengths, body_lengths)

    def __len__(self) -> int:
        return len(self.offsets)

    @overload
    def __getitem__(self, i: int) -> Block: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Block, ...]: ...

    def __getitem__(self, i: int | slice) -> Block | tuple[Block, ...]:
        if isinstance(i, slice):
            return tuple(self)[i]
        return _block(self.offsets[i], self.meta_data_lengths[i], self.body_lengths[i])

    def __iter__(self) -> Iterator[Block]:
        return map(_block, self.offsets, self.meta_data_lengths, self.body_lengths)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Blocks):
            return (self.offsets, self.meta_data_lengths, self.body_lengths) == (
                other.offsets, other.meta_data_lengths, other.body_lengths)
        if isinstance(other, tuple):  # (as a tuple: never equal to a list)
            return tuple(self) == other
        return NotImplemented

    def __add__(self, other: object) -> tuple[Block, ...]:
        if not isinstance(other, (tuple, Blocks)):
            return NotImplemented
        return (*self, *other)

    def __radd__(self, other: object) -> tuple[Block, ...]:
        if not isinstance(other, tuple):
            return NotImplemented
        return (*other, *self)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))


@dataclass(frozen=True, slots=True)
class Footer:
    """The IPC file footer: schema and the Blocks of dictionaries and record batches
    (tuples, or :class:`Blocks` as decoded)."""

    version: int
    schema: SchemaMessage
    dictionaries: Sequence[Block]
    record_batches: Sequence[Block]
    custom_metadata: KeyValueMetadata | None = None


__all__ = [
    "CODECS",
    "CODEC_ALIASES",
    "EXTENSION_METADATA_KEY",
    "EXTENSION_NAME_KEY",
    "V4",
    "V5",
    "Block",
    "Blocks",
    "BodyCompression",
    "Buffer",
    "DictionaryBatch",
    "Footer",
    "Header",
    "Message",
    "MetadataLimits",
    "RecordBatch",
    "SchemaMessage",
    "SparseIndex",
    "SparseMatrixIndexCSX",
    "SparseTensor",
    "SparseTensorIndexCOO",
    "SparseTensorIndexCSF",
    "Tensor",
    "TensorHead",
    "header_name",
    "version_name",
]
