"""Arrow logical data types, fields and schemas (Columnar spec, "Data Types"; Schema.fbs).

Types are immutable values: hashable and equal by value.  They are built with the same
factory names and arguments as pyarrow's type API and print the way pyarrow prints them:

>>> import quiver as qv
>>> str(qv.list_(qv.int32()))
'list<item: int32>'
>>> qv.timestamp("us", tz="UTC") == qv.timestamp("us", "UTC")
True
>>> qv.schema([qv.field("a", qv.int64(), nullable=False)]).field("a").type
DataType(int64)

Key/value metadata keeps its order and duplicate keys (:class:`KeyValueMetadata`).
Physical layouts (which buffers each type has) live in :mod:`quiver.layout`, not here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, ClassVar

from . import registry
from .errors import (
    ArrowIndexError,
    ArrowInvalidArgument,
    ArrowKeyError,
    ArrowTypeError,
    NotSupported,
)

TIME_UNITS = ("s", "ms", "us", "ns")
INTERVAL_UNITS = ("year_month", "day_time", "month_day_nano")


# --------------------------------------------------------------------------------------
# key/value metadata


def _as_bytes(value: str | bytes, what: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise ArrowTypeError(f"metadata {what} must be str or bytes, found {type(value).__name__}")


class KeyValueMetadata(Mapping[bytes, bytes]):
    """Ordered key/value pairs of bytes, read as a read-only mapping (as pyarrow's
    ``schema.metadata``); duplicate keys are kept, as the spec allows.

    ``m[b"k"]`` (or ``m["k"]``) is the first value under the key; iteration gives the keys
    in order and ``dict(m)`` a plain dict; :meth:`items` keeps every pair, duplicates
    included, and :meth:`get_all` every value of one key.  ``m[i]`` with an int is the
    ``i``-th pair (positional access, kept for code written before this was a mapping).

    >>> m = KeyValueMetadata([("k", "v1"), ("k", "v2"), ("n", "x")])
    >>> m[b"k"], m["n"], len(m), m.get_all("k")
    (b'v1', b'x', 3, [b'v1', b'v2'])
    >>> dict(KeyValueMetadata({"a": "1"}))
    {b'a': b'1'}
    """

    __slots__ = ("_hash", "_items")

    def __init__(
        self,
        items: Mapping[Any, Any] | Iterable[tuple[Any, Any]] | KeyValueMetadata | None = None,
    ) -> None:
        if items is None:
            pairs: tuple[tuple[bytes, bytes], ...] = ()
        elif isinstance(items, KeyValueMetadata):
            pairs = items._items
        else:
            source = items.items() if isinstance(items, Mapping) else items
            try:
                pairs = tuple((_as_bytes(k, "key"), _as_bytes(v, "value")) for k, v in source)
            except (TypeError, ValueError) as exc:
                if isinstance(exc, ArrowTypeError):
                    raise
                raise ArrowTypeError(
                    f"metadata must be a mapping or (key, value) pairs, found {items!r}"
                ) from None
        self._items = pairs
        self._hash: int | None = None

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, (int, slice)) and not isinstance(key, bool):
            return self._items[key]
        try:
            k = _as_bytes(key, "key")
        except ArrowTypeError:
            raise ArrowKeyError(f"expected a str or bytes metadata key, found {key!r}") from None
        for kk, vv in self._items:
            if kk == k:
                return vv
        raise ArrowKeyError(f"expected a metadata key {k!r}, found none (keys {self.keys()})")

    def __contains__(self, key: object) -> bool:
        try:
            k = _as_bytes(key, "key")  # type: ignore[arg-type]
        except ArrowTypeError:
            return False
        return any(kk == k for kk, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[bytes]:
        return (k for k, _ in self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, KeyValueMetadata):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self == KeyValueMetadata(other)
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._items)
        return self._hash

    def __repr__(self) -> str:
        return f"KeyValueMetadata({list(self._items)!r})"

    def get(self, key: str | bytes, default: bytes | None = None) -> bytes | None:
        """The first value stored under ``key``, or ``default``."""
        k = _as_bytes(key, "key")
        for kk, vv in self._items:
            if kk == k:
                return vv
        return default

    def get_all(self, key: str | bytes) -> list[bytes]:
        """Every value stored under ``key``, in order."""
        k = _as_bytes(key, "key")
        return [vv for kk, vv in self._items if kk == k]

    def keys(self) -> list[bytes]:  # type: ignore[override]
        """The keys in order (duplicates included)."""
        return [k for k, _ in self._items]

    def values(self) -> list[bytes]:  # type: ignore[override]
        """The values in order (one per pair)."""
        return [v for _, v in self._items]

    def items(self) -> list[tuple[bytes, bytes]]:  # type: ignore[override]
        """Every ``(key, value)`` pair in order, duplicates included."""
        return list(self._items)

    def to_dict(self) -> dict[bytes, bytes]:
        """A plain dict (later duplicates win), like pyarrow's ``metadata``."""
        return dict(self._items)

    def without(self, *keys: str | bytes) -> KeyValueMetadata:
        """A copy without the given keys."""
        drop = {_as_bytes(k, "key") for k in keys}
        return KeyValueMetadata([(k, v) for k, v in self._items if k not in drop])


def _metadata(value: Any) -> KeyValueMetadata | None:
    if value is None:
        return None
    md = value if isinstance(value, KeyValueMetadata) else KeyValueMetadata(value)
    return md if len(md) else None


# --------------------------------------------------------------------------------------
# the base class


class DataType:
    """Base of every Arrow data type. Subclasses are frozen dataclasses."""

    __slots__ = ()
    name: ClassVar[str] = "?"

    # nested types override these
    @property
    def fields(self) -> tuple[Field, ...]:
        """The child fields (empty for non-nested types)."""
        return ()

    @property
    def num_fields(self) -> int:
        """How many child fields this type has."""
        return len(self.fields)

    def field(self, i: int | str) -> Field:
        """Child field by position or name."""
        fields = self.fields
        if isinstance(i, str):
            for f in fields:
                if f.name == i:
                    return f
            raise ArrowKeyError(f"expected a child field named {i!r} in {self}, found none")
        if not -len(fields) <= i < len(fields):
            raise ArrowIndexError(
                f"expected a child index below {len(fields)} for {self}, found {i}"
            )
        return fields[i]

    @property
    def bit_width(self) -> int:
        """Bits per value for fixed-width types; a TypeError for the others."""
        raise ArrowTypeError(f"expected a fixed-width type, found {self}")

    @property
    def byte_width(self) -> int:
        """Bytes per value for fixed-width types (booleans: a TypeError)."""
        bw = self.bit_width
        if bw % 8:
            raise ArrowTypeError(f"expected a byte-aligned type, found {self}")
        return bw // 8

    def equals(self, other: object, *, check_metadata: bool = False) -> bool:
        """Equality, optionally ignoring child field metadata (the default, like pyarrow)."""
        if not isinstance(other, DataType):
            return False
        if check_metadata:
            return self == other
        return _strip_metadata(self) == _strip_metadata(other)

    def __arrow_c_schema__(self) -> Any:
        """This type as an ``arrow_schema`` PyCapsule (the Arrow PyCapsule protocol), for
        pyarrow, polars, nanoarrow and other consumers.

        >>> import pyarrow as pa, quiver as qv
        >>> pa.DataType._import_from_c_capsule(qv.list_(qv.int8()).__arrow_c_schema__())
        ListType(list<item: int8>)
        """
        return _c_schema_capsule("", self, True, c_field_metadata(Field("", self)))

    def __repr__(self) -> str:
        return f"DataType({self})"

    def __str__(self) -> str:
        return self.name


def _strip_metadata(t: DataType) -> DataType:
    if isinstance(t, ExtensionType):
        return ExtensionType(t.extension_name, _strip_metadata(t.storage_type), t.serialized)
    if isinstance(t, DictionaryType):
        return DictionaryType(t.index_type, _strip_metadata(t.value_type), t.ordered)
    if not t.fields:
        return t
    return t.with_fields(tuple(f.remove_metadata() for f in t.fields))  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------
# fixed-width and simple types


@dataclass(frozen=True, slots=True, repr=False)
class NullType(DataType):
    """All values null; no buffers."""

    name: ClassVar[str] = "null"


@dataclass(frozen=True, slots=True, repr=False)
class BoolType(DataType):
    """Booleans packed one bit per value."""

    name: ClassVar[str] = "bool"

    @property
    def bit_width(self) -> int:
        return 1


@dataclass(frozen=True, slots=True, repr=False)
class IntegerType(DataType):
    """Signed or unsigned integers of 8, 16, 32 or 64 bits."""

    width: int
    signed: bool = True

    def __post_init__(self) -> None:
        if self.width not in (8, 16, 32, 64):
            raise ArrowInvalidArgument(f"expected an int width of 8/16/32/64, found {self.width}")

    @property
    def bit_width(self) -> int:
        return self.width

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{'' if self.signed else 'u'}int{self.width}"

    def __str__(self) -> str:
        return self.name


_FLOAT_NAMES = {16: "halffloat", 32: "float", 64: "double"}


@dataclass(frozen=True, slots=True, repr=False)
class FloatingPointType(DataType):
    """IEEE floats: half (16), single (32) or double (64) precision."""

    width: int

    def __post_init__(self) -> None:
        if self.width not in _FLOAT_NAMES:
            raise ArrowInvalidArgument(f"expected a float width of 16/32/64, found {self.width}")

    @property
    def bit_width(self) -> int:
        return self.width

    def __str__(self) -> str:
        return _FLOAT_NAMES[self.width]


_DECIMAL_MAX_PRECISION = {32: 9, 64: 18, 128: 38, 256: 76}


@dataclass(frozen=True, slots=True, repr=False)
class DecimalType(DataType):
    """Fixed-point decimals stored as little-endian two's complement integers."""

    width: int
    precision: int
    scale: int = 0

    def __post_init__(self) -> None:
        maxp = _DECIMAL_MAX_PRECISION.get(self.width)
        if maxp is None:
            raise ArrowInvalidArgument(
                f"expected a decimal width of 32/64/128/256, found {self.width}"
            )
        if not isinstance(self.precision, int) or not 1 <= self.precision <= maxp:
            raise ArrowInvalidArgument(
                f"expected decimal{self.width} precision in 1..{maxp}, found {self.precision}"
            )
        if not isinstance(self.scale, int):
            raise ArrowInvalidArgument(f"expected an integer scale, found {self.scale!r}")

    @property
    def bit_width(self) -> int:
        return self.width

    def __str__(self) -> str:
        return f"decimal{self.width}({self.precision}, {self.scale})"


@dataclass(frozen=True, slots=True, repr=False)
class DateType(DataType):
    """Days since the epoch (``day``, 32-bit) or milliseconds (``ms``, 64-bit)."""

    unit: str = "day"

    def __post_init__(self) -> None:
        if self.unit not in ("day", "ms"):
            raise ArrowInvalidArgument(f"expected a date unit 'day' or 'ms', found {self.unit!r}")

    @property
    def bit_width(self) -> int:
        return 32 if self.unit == "day" else 64

    def __str__(self) -> str:
        return "date32[day]" if self.unit == "day" else "date64[ms]"


def _check_unit(unit: str, allowed: tuple[str, ...], what: str) -> None:
    if unit not in allowed:
        raise ArrowInvalidArgument(f"expected a {what} unit in {allowed}, found {unit!r}")


@dataclass(frozen=True, slots=True, repr=False)
class TimeType(DataType):
    """Time of day: time32 in s/ms, time64 in us/ns."""

    width: int
    unit: str

    def __post_init__(self) -> None:
        allowed = ("s", "ms") if self.width == 32 else ("us", "ns") if self.width == 64 else ()
        if not allowed:
            raise ArrowInvalidArgument(f"expected a time width of 32 or 64, found {self.width}")
        _check_unit(self.unit, allowed, f"time{self.width}")

    @property
    def bit_width(self) -> int:
        return self.width

    def __str__(self) -> str:
        return f"time{self.width}[{self.unit}]"


@dataclass(frozen=True, slots=True, repr=False)
class TimestampType(DataType):
    """64-bit time since the epoch, with an optional time zone."""

    unit: str
    tz: str | None = None

    def __post_init__(self) -> None:
        _check_unit(self.unit, TIME_UNITS, "timestamp")
        if self.tz is not None and not isinstance(self.tz, str):
            raise ArrowInvalidArgument(f"expected tz as str or None, found {self.tz!r}")

    @property
    def bit_width(self) -> int:
        return 64

    def __str__(self) -> str:
        if self.tz is None:
            return f"timestamp[{self.unit}]"
        return f"timestamp[{self.unit}, tz={self.tz}]"


@dataclass(frozen=True, slots=True, repr=False)
class DurationType(DataType):
    """64-bit elapsed time."""

    unit: str

    def __post_init__(self) -> None:
        _check_unit(self.unit, TIME_UNITS, "duration")

    @property
    def bit_width(self) -> int:
        return 64

    def __str__(self) -> str:
        return f"duration[{self.unit}]"


_INTERVAL_WIDTH = {"year_month": 32, "day_time": 64, "month_day_nano": 128}
_INTERVAL_NAME = {
    "year_month": "month_interval",
    "day_time": "day_time_interval",
    "month_day_nano": "month_day_nano_interval",
}


@dataclass(frozen=True, slots=True, repr=False)
class IntervalType(DataType):
    """Calendar intervals: months (32), days+ms (64), or months+days+ns (128 bits)."""

    unit: str

    def __post_init__(self) -> None:
        _check_unit(self.unit, INTERVAL_UNITS, "interval")

    @property
    def bit_width(self) -> int:
        return _INTERVAL_WIDTH[self.unit]

    def __str__(self) -> str:
        return _INTERVAL_NAME[self.unit]


# --------------------------------------------------------------------------------------
# binary-like types


@dataclass(frozen=True, slots=True, repr=False)
class BinaryType(DataType):
    """Variable-size bytes with 32-bit (or 64-bit, ``large``) offsets."""

    large: bool = False

    def __str__(self) -> str:
        return "large_binary" if self.large else "binary"


@dataclass(frozen=True, slots=True, repr=False)
class StringType(DataType):
    """Variable-size UTF-8 with 32-bit (or 64-bit, ``large``) offsets."""

    large: bool = False

    def __str__(self) -> str:
        return "large_string" if self.large else "string"


@dataclass(frozen=True, slots=True, repr=False)
class BinaryViewType(DataType):
    """16-byte views into inline bytes or variadic data buffers."""

    name: ClassVar[str] = "binary_view"


@dataclass(frozen=True, slots=True, repr=False)
class StringViewType(DataType):
    """16-byte views of UTF-8 strings."""

    name: ClassVar[str] = "string_view"


@dataclass(frozen=True, slots=True, repr=False)
class FixedSizeBinaryType(DataType):
    """Byte strings that all have ``byte_width`` bytes."""

    width: int

    def __post_init__(self) -> None:
        if not isinstance(self.width, int) or self.width < 0:
            raise ArrowInvalidArgument(
                f"expected a non-negative fixed_size_binary width, found {self.width!r}"
            )

    @property
    def bit_width(self) -> int:
        return self.width * 8

    def __str__(self) -> str:
        return f"fixed_size_binary[{self.width}]"


# --------------------------------------------------------------------------------------
# nested types


def _field_str(f: Field) -> str:
    return f"{f.name}: {f.type}" + ("" if f.nullable else " not null")


@dataclass(frozen=True, slots=True, repr=False)
class _ListBase(DataType):
    value_field: Field

    @property
    def fields(self) -> tuple[Field, ...]:
        return (self.value_field,)

    @property
    def value_type(self) -> DataType:
        """The type of the list's elements."""
        return self.value_field.type

    def with_fields(self, fields: tuple[Field, ...]) -> DataType:
        """A copy with new child fields (one, for lists)."""
        return type(self)(fields[0])

    def __str__(self) -> str:
        return f"{self.name}<{_field_str(self.value_field)}>"


@dataclass(frozen=True, slots=True, repr=False)
class ListType(_ListBase):
    """Lists with 32-bit offsets."""

    name: ClassVar[str] = "list"


@dataclass(frozen=True, slots=True, repr=False)
class LargeListType(_ListBase):
    """Lists with 64-bit offsets."""

    name: ClassVar[str] = "large_list"


@dataclass(frozen=True, slots=True, repr=False)
class ListViewType(_ListBase):
    """Lists given by 32-bit offsets and sizes (out of order allowed)."""

    name: ClassVar[str] = "list_view"


@dataclass(frozen=True, slots=True, repr=False)
class LargeListViewType(_ListBase):
    """Lists given by 64-bit offsets and sizes."""

    name: ClassVar[str] = "large_list_view"


@dataclass(frozen=True, slots=True, repr=False)
class FixedSizeListType(DataType):
    """Lists that all have ``list_size`` elements."""

    value_field: Field
    list_size: int

    def __post_init__(self) -> None:
        if not isinstance(self.list_size, int) or self.list_size < 0:
            raise ArrowInvalidArgument(
                f"expected a non-negative fixed_size_list size, found {self.list_size!r}"
            )

    @property
    def fields(self) -> tuple[Field, ...]:
        return (self.value_field,)

    @property
    def value_type(self) -> DataType:
        """The type of the list's elements."""
        return self.value_field.type

    def with_fields(self, fields: tuple[Field, ...]) -> DataType:
        """A copy with new child fields."""
        return FixedSizeListType(fields[0], self.list_size)

    def __str__(self) -> str:
        return f"fixed_size_list<{_field_str(self.value_field)}>[{self.list_size}]"


@dataclass(frozen=True, slots=True, repr=False)
class StructType(DataType):
    """A fixed set of named child fields."""

    children: tuple[Field, ...]

    @property
    def fields(self) -> tuple[Field, ...]:
        return self.children

    def with_fields(self, fields: tuple[Field, ...]) -> DataType:
        """A copy with new child fields."""
        return StructType(tuple(fields))

    def get_field_index(self, name: str) -> int:
        """Index of the only child named ``name``; -1 when absent or duplicated."""
        hits = [i for i, f in enumerate(self.children) if f.name == name]
        return hits[0] if len(hits) == 1 else -1

    def __str__(self) -> str:
        return "struct<" + ", ".join(_field_str(f) for f in self.children) + ">"


@dataclass(frozen=True, slots=True, repr=False)
class MapType(DataType):
    """``List<entries: Struct<key, value>>`` with non-null keys."""

    entries_field: Field
    keys_sorted: bool = False

    @property
    def fields(self) -> tuple[Field, ...]:
        return (self.entries_field,)

    @property
    def value_field(self) -> Field:
        """The entries struct field (the list's element), as for lists."""
        return self.entries_field

    @property
    def key_field(self) -> Field:
        """The key field inside the entries struct."""
        return self.entries_field.type.fields[0]

    @property
    def item_field(self) -> Field:
        """The value field inside the entries struct."""
        return self.entries_field.type.fields[1]

    @property
    def key_type(self) -> DataType:
        """The key type."""
        return self.key_field.type

    @property
    def item_type(self) -> DataType:
        """The value type."""
        return self.item_field.type

    def with_fields(self, fields: tuple[Field, ...]) -> DataType:
        """A copy with a new entries field."""
        return MapType(fields[0], self.keys_sorted)

    def __str__(self) -> str:
        tail = ", keys_sorted" if self.keys_sorted else ""
        return f"map<{self.key_type}, {self.item_type}{tail}>"


@dataclass(frozen=True, slots=True, repr=False)
class UnionType(DataType):
    """Sparse or dense unions; ``type_codes[i]`` is the 8-bit code of child ``i``."""

    mode: str
    children: tuple[Field, ...]
    type_codes: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.mode not in ("sparse", "dense"):
            raise ArrowInvalidArgument(f"expected union mode sparse/dense, found {self.mode!r}")
        if len(self.type_codes) != len(self.children):
            raise ArrowInvalidArgument(
                f"expected {len(self.children)} union type codes, found {len(self.type_codes)}"
            )
        if len(set(self.type_codes)) != len(self.type_codes):
            raise ArrowInvalidArgument(f"expected distinct type codes, found {self.type_codes}")
        for c in self.type_codes:
            if not isinstance(c, int) or not 0 <= c <= 127:
                raise ArrowInvalidArgument(f"expected union type codes in 0..127, found {c!r}")

    @property
    def fields(self) -> tuple[Field, ...]:
        return self.children

    def with_fields(self, fields: tuple[Field, ...]) -> DataType:
        """A copy with new child fields."""
        return UnionType(self.mode, tuple(fields), self.type_codes)

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.mode}_union"

    def __str__(self) -> str:
        inner = ", ".join(
            f"{_field_str(f)}={c}" for f, c in zip(self.children, self.type_codes)
        )
        return f"{self.mode}_union<{inner}>"


@dataclass(frozen=True, slots=True, repr=False)
class DictionaryType(DataType):
    """Integer indices into a dictionary of ``value_type`` values."""

    index_type: DataType
    value_type: DataType
    ordered: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.index_type, IntegerType):
            raise ArrowTypeError(
                f"expected an integer dictionary index type, found {self.index_type}"
            )
        if not isinstance(self.value_type, DataType):
            raise ArrowTypeError(f"expected a DataType for values, found {self.value_type!r}")

    @property
    def bit_width(self) -> int:
        return self.index_type.bit_width

    def __str__(self) -> str:
        return (
            f"dictionary<values={self.value_type}, indices={self.index_type}, "
            f"ordered={int(self.ordered)}>"
        )


@dataclass(frozen=True, slots=True, repr=False)
class RunEndEncodedType(DataType):
    """Runs: ``run_ends`` (int16/32/64) and ``values`` children."""

    run_end_field: Field
    values_field: Field

    def __post_init__(self) -> None:
        rt = self.run_end_field.type
        if not (isinstance(rt, IntegerType) and rt.signed and rt.width in (16, 32, 64)):
            raise ArrowTypeError(f"expected run ends of int16/int32/int64, found {rt}")

    @property
    def fields(self) -> tuple[Field, ...]:
        return (self.run_end_field, self.values_field)

    @property
    def run_end_type(self) -> DataType:
        """The run-end integer type."""
        return self.run_end_field.type

    @property
    def value_type(self) -> DataType:
        """The type of the run values."""
        return self.values_field.type

    def with_fields(self, fields: tuple[Field, ...]) -> DataType:
        """A copy with new child fields."""
        return RunEndEncodedType(fields[0], fields[1])

    def __str__(self) -> str:
        return f"run_end_encoded<run_ends: {self.run_end_type}, values: {self.value_type}>"


@dataclass(frozen=True, slots=True, repr=False)
class ExtensionType(DataType):
    """A user-defined type: a name and serialized metadata over a storage type.

    In IPC it travels as the storage type plus ``ARROW:extension:name`` and
    ``ARROW:extension:metadata`` field metadata. Canonical ones (``arrow.uuid``, ...)
    are kept exactly as received.
    """

    extension_name: str
    storage_type: DataType
    serialized: bytes = b""

    @property
    def fields(self) -> tuple[Field, ...]:
        return self.storage_type.fields

    @property
    def bit_width(self) -> int:
        return self.storage_type.bit_width

    def __str__(self) -> str:
        return f"extension<{self.extension_name}>"


# --------------------------------------------------------------------------------------
# fields and schemas


@dataclass(frozen=True, slots=True)
class Field:
    """A named, typed, possibly nullable column or child, with optional metadata."""

    name: str
    type: DataType
    nullable: bool = True
    metadata: KeyValueMetadata | None = dc_field(default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ArrowTypeError(f"expected a str field name, found {self.name!r}")
        if not isinstance(self.type, DataType):
            raise ArrowTypeError(
                f"expected a DataType for field {self.name!r}, found {self.type!r}"
            )
        object.__setattr__(self, "metadata", _metadata(self.metadata))

    def with_type(self, new_type: DataType) -> Field:
        """A copy with another type."""
        return Field(self.name, new_type, self.nullable, self.metadata)

    def with_name(self, name: str) -> Field:
        """A copy with another name."""
        return Field(name, self.type, self.nullable, self.metadata)

    def with_nullable(self, nullable: bool) -> Field:
        """A copy with another nullability."""
        return Field(self.name, self.type, nullable, self.metadata)

    def with_metadata(self, metadata: Any) -> Field:
        """A copy with other metadata."""
        return Field(self.name, self.type, self.nullable, _metadata(metadata))

    def remove_metadata(self) -> Field:
        """A copy without metadata, here and in child types."""
        return Field(self.name, _strip_metadata(self.type), self.nullable, None)

    def equals(self, other: object, *, check_metadata: bool = False) -> bool:
        """Equality, ignoring metadata unless ``check_metadata``."""
        if not isinstance(other, Field):
            return False
        if check_metadata:
            return self == other
        return self.remove_metadata() == other.remove_metadata()

    def __arrow_c_schema__(self) -> Any:
        """This field as an ``arrow_schema`` PyCapsule (the Arrow PyCapsule protocol).

        >>> import pyarrow as pa, quiver as qv
        >>> pa.field(qv.field("a", qv.int8(), nullable=False))
        pyarrow.Field<a: int8 not null>
        """
        return _c_schema_capsule(self.name, self.type, self.nullable, c_field_metadata(self))

    def __str__(self) -> str:
        return _field_str(self)


@dataclass(frozen=True, slots=True)
class Schema:
    """An ordered list of fields plus schema-level metadata."""

    fields: tuple[Field, ...]
    metadata: KeyValueMetadata | None = None

    def __post_init__(self) -> None:
        fields = tuple(self.fields)
        for f in fields:
            if not isinstance(f, Field):
                raise ArrowTypeError(f"expected Field objects in a schema, found {f!r}")
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "metadata", _metadata(self.metadata))

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __getitem__(self, i: int | str) -> Field:
        return self.field(i)

    @property
    def names(self) -> list[str]:
        """The field names in order."""
        return [f.name for f in self.fields]

    @property
    def types(self) -> list[DataType]:
        """The field types in order."""
        return [f.type for f in self.fields]

    def field(self, i: int | str) -> Field:
        """A field by position or (unique) name."""
        if isinstance(i, str):
            idx = self.get_field_index(i)
            if idx < 0:
                n = self.names.count(i)
                found = "none" if n == 0 else f"{n} fields with that name"
                raise ArrowKeyError(f"expected one field named {i!r}, found {found}")
            return self.fields[idx]
        if not isinstance(i, int) or not -len(self.fields) <= i < len(self.fields):
            raise ArrowIndexError(
                f"expected a field index below {len(self.fields)}, found {i!r}"
            )
        return self.fields[i]

    def get_field_index(self, name: str) -> int:
        """Index of the only field named ``name``; -1 when absent or duplicated."""
        hits = [i for i, f in enumerate(self.fields) if f.name == name]
        return hits[0] if len(hits) == 1 else -1

    def get_all_field_indices(self, name: str) -> list[int]:
        """Every index whose field is named ``name``."""
        return [i for i, f in enumerate(self.fields) if f.name == name]

    def __arrow_c_schema__(self) -> Any:
        """This schema as an ``arrow_schema`` PyCapsule: a struct (``+s``) whose children are
        the fields, as the Arrow PyCapsule protocol describes a schema.

        >>> import pyarrow as pa, quiver as qv
        >>> pa.schema(qv.schema([qv.field("a", qv.int8())])).names
        ['a']
        """
        pairs = self.metadata.items() if self.metadata else []
        return _c_schema_capsule("", StructType(self.fields), False, pairs, self.fields)

    def with_metadata(self, metadata: Any) -> Schema:
        """A copy with other schema metadata."""
        return Schema(self.fields, _metadata(metadata))

    def remove_metadata(self) -> Schema:
        """A copy without schema metadata (field metadata is kept)."""
        return Schema(self.fields, None)

    def equals(self, other: object, *, check_metadata: bool = False) -> bool:
        """Equality, ignoring all metadata unless ``check_metadata``."""
        if not isinstance(other, Schema):
            return False
        if check_metadata:
            return self == other
        return len(self.fields) == len(other.fields) and all(
            a.equals(b) for a, b in zip(self.fields, other.fields)
        )

    def __str__(self) -> str:
        return "\n".join(_field_str(f) for f in self.fields)

    # -- pyarrow's editing helpers: each returns a new schema -------------------------

    def _position(self, i: int, *, end: bool = False) -> int:
        n = len(self.fields) + (1 if end else 0)
        if isinstance(i, bool) or not isinstance(i, int) or not -n <= i < n:
            raise ArrowIndexError(f"expected a field position below {n}, found {i!r}")
        return i % n if n else 0

    def append(self, field: Field) -> Schema:
        """A copy with ``field`` added at the end.

        >>> schema([("a", int8())]).append(field("b", string())).names
        ['a', 'b']
        """
        return self.insert(len(self.fields), field)

    def insert(self, i: int, field: Field) -> Schema:
        """A copy with ``field`` inserted at position ``i``."""
        if not isinstance(field, Field):
            raise ArrowTypeError(f"expected a Field, found {field!r}")
        k = self._position(i, end=True)
        return Schema((*self.fields[:k], field, *self.fields[k:]), self.metadata)

    def remove(self, i: int) -> Schema:
        """A copy without the field at position ``i``."""
        k = self._position(i)
        return Schema(self.fields[:k] + self.fields[k + 1 :], self.metadata)

    def set(self, i: int, field: Field) -> Schema:
        """A copy with the field at position ``i`` replaced by ``field``."""
        if not isinstance(field, Field):
            raise ArrowTypeError(f"expected a Field, found {field!r}")
        k = self._position(i)
        return Schema((*self.fields[:k], field, *self.fields[k + 1 :]), self.metadata)

    def to_string(
        self, *, show_field_metadata: bool = True, show_schema_metadata: bool = True
    ) -> str:
        """The schema as text, one field per line, then the metadata (as pyarrow prints).

        >>> print(schema([("a", int8())], metadata={"k": "v"}).to_string())
        a: int8
        -- schema metadata --
        k: 'v'
        """
        lines = []
        for f in self.fields:
            lines.append(_field_str(f))
            if show_field_metadata and f.metadata:
                lines.append("  -- field metadata --")
                lines.extend(f"  {_md_line(k, v)}" for k, v in f.metadata.items())
        if show_schema_metadata and self.metadata:
            lines.append("-- schema metadata --")
            lines.extend(_md_line(k, v) for k, v in self.metadata.items())
        return "\n".join(lines)


def _md_line(key: bytes, value: bytes) -> str:
    name = key.decode("utf-8", "replace")
    text = value.decode("utf-8", "replace")
    room = max(70 - len(name), 0)  # long values (the pandas JSON) are cut as pyarrow does
    if len(text) > room:
        return f"{name}: '{text[:room]}' + {len(text) - room}"
    return f"{name}: '{text}'"


# --------------------------------------------------------------------------------------
# factories (pyarrow's names and arguments)

_NULL = NullType()
_BOOL = BoolType()


def null() -> DataType:
    """The null type."""
    return _NULL


def bool_() -> DataType:
    """Booleans."""
    return _BOOL


def int8() -> DataType:
    """Signed 8-bit integers."""
    return IntegerType(8, True)


def int16() -> DataType:
    """Signed 16-bit integers."""
    return IntegerType(16, True)


def int32() -> DataType:
    """Signed 32-bit integers."""
    return IntegerType(32, True)


def int64() -> DataType:
    """Signed 64-bit integers."""
    return IntegerType(64, True)


def uint8() -> DataType:
    """Unsigned 8-bit integers."""
    return IntegerType(8, False)


def uint16() -> DataType:
    """Unsigned 16-bit integers."""
    return IntegerType(16, False)


def uint32() -> DataType:
    """Unsigned 32-bit integers."""
    return IntegerType(32, False)


def uint64() -> DataType:
    """Unsigned 64-bit integers."""
    return IntegerType(64, False)


def float16() -> DataType:
    """Half-precision floats."""
    return FloatingPointType(16)


def float32() -> DataType:
    """Single-precision floats."""
    return FloatingPointType(32)


def float64() -> DataType:
    """Double-precision floats."""
    return FloatingPointType(64)


def decimal32(precision: int, scale: int = 0) -> DataType:
    """32-bit decimals (precision 1..9)."""
    return DecimalType(32, precision, scale)


def decimal64(precision: int, scale: int = 0) -> DataType:
    """64-bit decimals (precision 1..18)."""
    return DecimalType(64, precision, scale)


def decimal128(precision: int, scale: int = 0) -> DataType:
    """128-bit decimals (precision 1..38)."""
    return DecimalType(128, precision, scale)


def decimal256(precision: int, scale: int = 0) -> DataType:
    """256-bit decimals (precision 1..76)."""
    return DecimalType(256, precision, scale)


def date32() -> DataType:
    """Days since the UNIX epoch, 32-bit."""
    return DateType("day")


def date64() -> DataType:
    """Milliseconds since the UNIX epoch, 64-bit."""
    return DateType("ms")


def time32(unit: str) -> DataType:
    """Time of day in seconds or milliseconds."""
    return TimeType(32, unit)


def time64(unit: str) -> DataType:
    """Time of day in microseconds or nanoseconds."""
    return TimeType(64, unit)


def timestamp(unit: str, tz: str | None = None) -> DataType:
    """Timestamps in ``unit`` with an optional time zone."""
    return TimestampType(unit, tz)


def duration(unit: str) -> DataType:
    """Durations in ``unit``."""
    return DurationType(unit)


def month_day_nano_interval() -> DataType:
    """Intervals of (months, days, nanoseconds)."""
    return IntervalType("month_day_nano")


def month_interval() -> DataType:
    """Intervals of whole months (Arrow's YEAR_MONTH)."""
    return IntervalType("year_month")


def day_time_interval() -> DataType:
    """Intervals of (days, milliseconds)."""
    return IntervalType("day_time")


def binary(length: int = -1) -> DataType:
    """Variable-size bytes, or fixed-size bytes when ``length`` >= 0 (pyarrow's rule)."""
    if length == -1:
        return BinaryType(False)
    return FixedSizeBinaryType(length)


def string() -> DataType:
    """UTF-8 strings."""
    return StringType(False)


utf8 = string


def large_binary() -> DataType:
    """Bytes with 64-bit offsets."""
    return BinaryType(True)


def large_string() -> DataType:
    """UTF-8 strings with 64-bit offsets."""
    return StringType(True)


large_utf8 = large_string


def binary_view() -> DataType:
    """Bytes stored as 16-byte views."""
    return BinaryViewType()


def string_view() -> DataType:
    """UTF-8 strings stored as 16-byte views."""
    return StringViewType()


def fixed_size_binary(byte_width: int) -> DataType:
    """Bytes of exactly ``byte_width`` each."""
    return FixedSizeBinaryType(byte_width)


def _as_field(value: DataType | Field, default_name: str) -> Field:
    if isinstance(value, Field):
        return value
    if isinstance(value, DataType):
        return Field(default_name, value, True)
    raise ArrowTypeError(f"expected a DataType or Field, found {value!r}")


def list_(value_type: DataType | Field, list_size: int = -1) -> DataType:
    """Lists of ``value_type``; fixed-size lists when ``list_size`` >= 0."""
    f = _as_field(value_type, "item")
    if list_size == -1:
        return ListType(f)
    return FixedSizeListType(f, list_size)


def large_list(value_type: DataType | Field) -> DataType:
    """Lists with 64-bit offsets."""
    return LargeListType(_as_field(value_type, "item"))


def list_view(value_type: DataType | Field) -> DataType:
    """List views with 32-bit offsets and sizes."""
    return ListViewType(_as_field(value_type, "item"))


def large_list_view(value_type: DataType | Field) -> DataType:
    """List views with 64-bit offsets and sizes."""
    return LargeListViewType(_as_field(value_type, "item"))


def fixed_size_list(value_type: DataType | Field, list_size: int) -> DataType:
    """Lists of exactly ``list_size`` values."""
    return FixedSizeListType(_as_field(value_type, "item"), list_size)


def _fields_from(fields: Any) -> tuple[Field, ...]:
    if isinstance(fields, Mapping):
        return tuple(Field(str(k), v) for k, v in fields.items())
    out = []
    for f in fields:
        if isinstance(f, Field):
            out.append(f)
        elif isinstance(f, tuple) and len(f) == 2:
            out.append(Field(f[0], f[1]))
        else:
            raise ArrowTypeError(f"expected a Field or (name, type) pair, found {f!r}")
    return tuple(out)


def struct(fields: Iterable[Field | tuple[str, DataType]] | Mapping[str, DataType]) -> DataType:
    """Structs of the given fields (Field objects, (name, type) pairs, or a mapping)."""
    return StructType(_fields_from(fields))


def map_(
    key_type: DataType | Field, item_type: DataType | Field, keys_sorted: bool = False
) -> DataType:
    """Maps from ``key_type`` to ``item_type``; keys are never null."""
    kf = _as_field(key_type, "key").with_nullable(False)
    vf = _as_field(item_type, "value")
    entries = Field("entries", StructType((kf, vf)), nullable=False)
    return MapType(entries, keys_sorted)


def _union(mode: str, child_fields: Any, type_codes: Sequence[int] | None) -> DataType:
    fields = _fields_from(child_fields)
    codes = tuple(range(len(fields))) if type_codes is None else tuple(type_codes)
    return UnionType(mode, fields, codes)


def sparse_union(child_fields: Any, type_codes: Sequence[int] | None = None) -> DataType:
    """Sparse unions: every child has the union's length."""
    return _union("sparse", child_fields, type_codes)


def dense_union(child_fields: Any, type_codes: Sequence[int] | None = None) -> DataType:
    """Dense unions: an offsets buffer selects the slot in each child."""
    return _union("dense", child_fields, type_codes)


def union(child_fields: Any, mode: str, type_codes: Sequence[int] | None = None) -> DataType:
    """A union of the given ``mode`` ('sparse' or 'dense')."""
    return _union(mode, child_fields, type_codes)


def dictionary(index_type: DataType, value_type: DataType, ordered: bool = False) -> DataType:
    """Dictionary-encoded values: integer indices into a dictionary."""
    return DictionaryType(index_type, value_type, bool(ordered))


def run_end_encoded(run_end_type: DataType, value_type: DataType) -> DataType:
    """Run-end encoded values with run ends of ``run_end_type``."""
    return RunEndEncodedType(
        Field("run_ends", run_end_type, nullable=False), Field("values", value_type, True)
    )


def extension(name: str, storage_type: DataType, serialized: bytes | str = b"") -> DataType:
    """An extension type: ``name`` and serialized metadata over ``storage_type``."""
    if isinstance(serialized, str):
        serialized = serialized.encode("utf-8")
    return ExtensionType(name, storage_type, bytes(serialized))


def uuid() -> DataType:
    """The canonical ``arrow.uuid`` extension over fixed_size_binary(16)."""
    return ExtensionType("arrow.uuid", FixedSizeBinaryType(16), b"")


def field(
    name: str, type: DataType, nullable: bool = True, metadata: Any = None
) -> Field:
    """A named field; ``metadata`` is a mapping or (key, value) pairs."""
    return Field(name, type, nullable, _metadata(metadata))


def schema(fields: Any, metadata: Any = None) -> Schema:
    """A schema from Field objects, (name, type) pairs or a mapping.  (``quiver.schema``,
    :func:`quiver.constructors.schema`, also takes other libraries' schemas.)"""
    if isinstance(fields, Schema):
        return fields if metadata is None else fields.with_metadata(metadata)
    return Schema(_fields_from(fields), _metadata(metadata))


# --------------------------------------------------------------------------------------
# predicates


def is_nested(t: DataType) -> bool:
    """True for types with child fields."""
    return bool(t.fields)


def is_integer(t: DataType) -> bool:
    """True for signed and unsigned integer types."""
    return isinstance(t, IntegerType)


def is_binary_like(t: DataType) -> bool:
    """True for binary and string types with offsets (not views, not fixed size)."""
    return isinstance(t, (BinaryType, StringType))


def is_fixed_width(t: DataType) -> bool:
    """True for types stored as one fixed-width value buffer (booleans included)."""
    return isinstance(
        t,
        (
            BoolType,
            IntegerType,
            FloatingPointType,
            DecimalType,
            DateType,
            TimeType,
            TimestampType,
            DurationType,
            IntervalType,
            FixedSizeBinaryType,
        ),
    )


def storage_of(t: DataType) -> DataType:
    """The storage type of an extension type (recursively); other types unchanged."""
    while isinstance(t, ExtensionType):
        t = t.storage_type
    return t


# --------------------------------------------------------------------------------------
# the registry rows (quiver.registry): one per concrete DataType class, with what this
# layer knows of it (Schema.fbs Type union codes and names, integration JSON names)

_AS_ANOTHER = registry.TRAVELS_AS_ANOTHER
_NOT_FIXED_WIDTH = registry.ONLY_FIXED_WIDTH
for _row in (
    registry.TypeRow(NullType, ((1, "Null"),), ("null",), _NOT_FIXED_WIDTH),
    registry.TypeRow(BoolType, ((6, "Bool"),), ("bool",), _NOT_FIXED_WIDTH),
    registry.TypeRow(IntegerType, ((2, "Int"),), ("int",)),
    registry.TypeRow(FloatingPointType, ((3, "FloatingPoint"),), ("floatingpoint",)),
    registry.TypeRow(DecimalType, ((7, "Decimal"),), ("decimal",)),
    registry.TypeRow(DateType, ((8, "Date"),), ("date",)),
    registry.TypeRow(TimeType, ((9, "Time"),), ("time",)),
    registry.TypeRow(TimestampType, ((10, "Timestamp"),), ("timestamp",)),
    registry.TypeRow(DurationType, ((18, "Duration"),), ("duration",)),
    registry.TypeRow(IntervalType, ((11, "Interval"),), ("interval",)),
    registry.TypeRow(BinaryType, ((4, "Binary"), (19, "LargeBinary")),
                     ("binary", "largebinary"), _NOT_FIXED_WIDTH),
    registry.TypeRow(StringType, ((5, "Utf8"), (20, "LargeUtf8")), ("utf8", "largeutf8"),
                     _NOT_FIXED_WIDTH),
    registry.TypeRow(BinaryViewType, ((23, "BinaryView"),), ("binaryview",), _NOT_FIXED_WIDTH),
    registry.TypeRow(StringViewType, ((24, "Utf8View"),), ("utf8view",), _NOT_FIXED_WIDTH),
    registry.TypeRow(FixedSizeBinaryType, ((15, "FixedSizeBinary"),), ("fixedsizebinary",),
                     _NOT_FIXED_WIDTH),
    registry.TypeRow(ListType, ((12, "List"),), ("list",), _NOT_FIXED_WIDTH),
    registry.TypeRow(LargeListType, ((21, "LargeList"),), ("largelist",), _NOT_FIXED_WIDTH),
    registry.TypeRow(ListViewType, ((25, "ListView"),), ("listview",), _NOT_FIXED_WIDTH),
    registry.TypeRow(LargeListViewType, ((26, "LargeListView"),), ("largelistview",),
                     _NOT_FIXED_WIDTH),
    registry.TypeRow(FixedSizeListType, ((16, "FixedSizeList"),), ("fixedsizelist",),
                     _NOT_FIXED_WIDTH),
    registry.TypeRow(StructType, ((13, "Struct_"),), ("struct",), _NOT_FIXED_WIDTH),
    registry.TypeRow(MapType, ((17, "Map"),), ("map",), _NOT_FIXED_WIDTH),
    registry.TypeRow(UnionType, ((14, "Union"),), ("union",), _NOT_FIXED_WIDTH),
    registry.TypeRow(RunEndEncodedType, ((22, "RunEndEncoded"),), ("runendencoded",),
                     _NOT_FIXED_WIDTH),
    # a dictionary travels as its index type (and a dictionary batch)
    registry.TypeRow(DictionaryType, without=_AS_ANOTHER),
    # an extension travels as its storage type, whose layout, dtypes and format it uses
    registry.TypeRow(ExtensionType, without=_AS_ANOTHER | {
        "layout", "numpy_storage", "numpy_logical", "c_format"}),
):
    registry.add_row(_row)


# --------------------------------------------------------------------------------------
# C data format strings (CDataInterface.rst, "Data type description -- format strings"):
# the one table, read both ways (quiver.cdata.schema parses with it)

C_SIMPLE_FORMATS: dict[bytes, DataType] = {
    b"n": null(),
    b"b": bool_(),
    b"c": int8(),
    b"C": uint8(),
    b"s": int16(),
    b"S": uint16(),
    b"i": int32(),
    b"I": uint32(),
    b"l": int64(),
    b"L": uint64(),
    b"e": float16(),
    b"f": float32(),
    b"g": float64(),
    b"z": binary(),
    b"Z": large_binary(),
    b"vz": binary_view(),
    b"u": string(),
    b"U": large_string(),
    b"vu": string_view(),
    b"tdD": date32(),
    b"tdm": date64(),
    b"tts": time32("s"),
    b"ttm": time32("ms"),
    b"ttu": time64("us"),
    b"ttn": time64("ns"),
    b"tDs": duration("s"),
    b"tDm": duration("ms"),
    b"tDu": duration("us"),
    b"tDn": duration("ns"),
    b"tiM": month_interval(),
    b"tiD": day_time_interval(),
    b"tin": month_day_nano_interval(),
}
_C_FORMAT_OF_SIMPLE: dict[DataType, bytes] = {v: k for k, v in C_SIMPLE_FORMATS.items()}
C_UNIT_CODES = {"s": b"s", "ms": b"m", "us": b"u", "ns": b"n"}
# the nested formats without parameters, by class
_C_NESTED_FORMATS: dict[type, bytes] = {
    ListType: b"+l",
    LargeListType: b"+L",
    ListViewType: b"+vl",
    LargeListViewType: b"+vL",
    StructType: b"+s",
    MapType: b"+m",
    RunEndEncodedType: b"+r",
}
C_NESTED_CLASSES: dict[bytes, type] = {v: k for k, v in _C_NESTED_FORMATS.items()}


def c_format(dtype: DataType) -> tuple[bytes, DataType]:
    """The C data format string of ``dtype``'s physical type and the type whose children
    follow it.

    Extension types give their storage's format (the name travels in metadata);
    dictionary types give the index format (the values travel in ``dictionary``).

    >>> c_format(timestamp("us", "UTC"))[0]
    b'tsu:UTC'
    """
    dtype = storage_of(dtype)
    fmt = _C_FORMATS.get(dtype.__class__)
    found = None if fmt is None else fmt(dtype)
    if found is None:
        raise NotSupported(f"no C data format string is known for type {dtype}; report it "
                           f"(DataType {dtype.__class__.__name__} has no c_format)")
    return found, dtype


# the registry's "c_format" piece: DataType class -> (dtype -> format bytes, or None for
# a value the tables above lack)
_C_FORMATS = registry.table("c_format")
registry.register(
    "c_format", _C_FORMAT_OF_SIMPLE.get, NullType, BoolType, IntegerType, FloatingPointType,
    DateType, TimeType, DurationType, IntervalType, BinaryType, StringType, BinaryViewType,
    StringViewType,
)
for _cls, _fmt in _C_NESTED_FORMATS.items():
    registry.register("c_format", lambda dtype, fmt=_fmt: fmt, _cls)


@registry.implements("c_format", DictionaryType)
def _c_dictionary(dtype: DictionaryType) -> bytes:
    return _C_FORMAT_OF_SIMPLE[dtype.index_type]


@registry.implements("c_format", DecimalType)
def _c_decimal(dtype: DecimalType) -> bytes:
    tail = b"" if dtype.width == 128 else b",%d" % dtype.width
    return b"d:%d,%d" % (dtype.precision, dtype.scale) + tail


@registry.implements("c_format", FixedSizeBinaryType)
def _c_fixed_binary(dtype: FixedSizeBinaryType) -> bytes:
    return b"w:%d" % dtype.width


@registry.implements("c_format", TimestampType)
def _c_timestamp(dtype: TimestampType) -> bytes:
    tz = (dtype.tz or "").encode("utf-8")
    return b"ts" + C_UNIT_CODES[dtype.unit] + b":" + tz


@registry.implements("c_format", FixedSizeListType)
def _c_fixed_list(dtype: FixedSizeListType) -> bytes:
    return b"+w:%d" % dtype.list_size


@registry.implements("c_format", UnionType)
def _c_union(dtype: UnionType) -> bytes:
    mode = b"+ud:" if dtype.mode == "dense" else b"+us:"
    return mode + b",".join(b"%d" % c for c in dtype.type_codes)


C_EXTENSION_NAME_KEY = b"ARROW:extension:name"
C_EXTENSION_METADATA_KEY = b"ARROW:extension:metadata"
# flags of CDataInterface.rst, "The ArrowSchema structure"
C_FLAG_DICTIONARY_ORDERED = 1
C_FLAG_NULLABLE = 2
C_FLAG_MAP_KEYS_SORTED = 4


def c_field_metadata(f: Field) -> list[tuple[bytes, bytes]]:
    """A field's metadata pairs as the C data interface carries them: an extension type's
    name and serialized metadata travel as two more pairs."""
    pairs = f.metadata.items() if f.metadata else []
    ext = f.type
    if isinstance(ext, ExtensionType):
        reserved = (C_EXTENSION_NAME_KEY, C_EXTENSION_METADATA_KEY)
        pairs = [(k, v) for k, v in pairs if k not in reserved]
        pairs.append((C_EXTENSION_NAME_KEY, ext.extension_name.encode("utf-8")))
        pairs.append((C_EXTENSION_METADATA_KEY, ext.serialized))
    return pairs


def c_schema_node(
    name: str,
    dtype: DataType,
    nullable: bool,
    metadata: list[tuple[bytes, bytes]],
    children_fields: tuple[Field, ...] | None = None,
) -> tuple[Any, ...]:
    """The plain description :func:`quiver.cdata.capsule.fill_schema` turns into an
    ``ArrowSchema``: ``(format, name, flags, metadata, child nodes, dictionary node)``."""
    fmt, physical = c_format(dtype)
    flags = C_FLAG_NULLABLE if nullable else 0
    dictionary = None
    if isinstance(physical, DictionaryType):
        if physical.ordered:
            flags |= C_FLAG_DICTIONARY_ORDERED
        value_type = physical.value_type
        dictionary = c_schema_node("", value_type, True, c_field_metadata(Field("", value_type)))
    elif isinstance(physical, MapType) and physical.keys_sorted:
        flags |= C_FLAG_MAP_KEYS_SORTED
    fields = physical.fields if children_fields is None else children_fields
    children = [c_schema_node(f.name, f.type, f.nullable, c_field_metadata(f)) for f in fields]
    return (fmt, name, flags, metadata, children, dictionary)


def _c_schema_capsule(
    name: str,
    dtype: DataType,
    nullable: bool,
    metadata: list[tuple[bytes, bytes]],
    children_fields: tuple[Field, ...] | None = None,
) -> Any:
    global _export_schema_node
    if _export_schema_node is None:
        # ctypes and the C structs load on the first export, not with this module (kept
        # after that: an import statement per export would cost a sixth of a small one)
        from .cdata.capsule import export_schema_node

        _export_schema_node = export_schema_node
    return _export_schema_node(c_schema_node(name, dtype, nullable, metadata, children_fields))


_export_schema_node: Any = None
