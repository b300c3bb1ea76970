"""The DataType classes (Columnar spec, "Data Types"; Schema.fbs ``Type``), immutable
values equal by value, and what each says of itself in the C data interface (its format
string and its ``ArrowSchema`` description)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .. import registry
from .._readonly import readonly
from ..errors import (
    ArrowIndexError,
    ArrowInvalid,
    ArrowInvalidArgument,
    ArrowKeyError,
    ArrowTypeError,
    NotSupported,
)
from ..hooks import Hook

if TYPE_CHECKING:
    from .schema import Field

TIME_UNITS = ("s", "ms", "us", "ns")
INTERVAL_UNITS = ("year_month", "day_time", "month_day_nano")


# --------------------------------------------------------------------------------------
# the base class


class _TypeClass(type):
    """The class of the DataType classes: ``class ListType(_ListBase, name="list")`` states a
    type that differs from its base by its name only (slotted, the base's dataclass fields,
    equality, hash and pickling)."""

    def __new__(mcls, cls_name: str, bases: tuple[type, ...], ns: dict[str, Any],
                name: str | None = None) -> _TypeClass:
        if name is not None:
            ns = {"__slots__": (), **ns, "name": name}
        return super().__new__(mcls, cls_name, bases, ns)


class DataType(metaclass=_TypeClass):
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
        return strip_metadata(self) == strip_metadata(other)

    def __arrow_c_schema__(self) -> Any:
        """This type as an ``arrow_schema`` PyCapsule (the Arrow PyCapsule protocol), for
        pyarrow, polars, nanoarrow and other consumers.

        >>> import pyarrow as pa, quiver as qv
        >>> pa.DataType._import_from_c_capsule(qv.list_(qv.int8()).__arrow_c_schema__())
        ListType(list<item: int8>)
        """
        return c_schema_capsule.call(c_schema_node("", self, True, _c_metadata(self)))

    def __repr__(self) -> str:
        return f"DataType({self})"

    def __str__(self) -> str:
        return self.name


def strip_metadata(t: DataType) -> DataType:
    """``t`` with the metadata of every child field removed, at any depth."""
    if isinstance(t, ExtensionType):
        return ExtensionType(t.extension_name, strip_metadata(t.storage_type), t.serialized)
    if isinstance(t, DictionaryType):
        return DictionaryType(t.index_type, strip_metadata(t.value_type), t.ordered)
    if not t.fields:
        return t
    return t.with_fields(tuple(f.remove_metadata() for f in t.fields))  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------
# fixed-width and simple types


@dataclass(frozen=True, slots=True, repr=False)
class _Plain(DataType):
    """What the types without parameters share: equal when of one class."""


class NullType(_Plain, name="null"):
    """All values null; no buffers."""


class BoolType(_Plain, name="bool"):
    """Booleans packed one bit per value."""

    bit_width = 1  # type: ignore[assignment]


@dataclass(frozen=True, slots=True, repr=False)
class IntegerType(DataType):
    """Signed or unsigned integers of 8, 16, 32 or 64 bits."""

    width: int
    signed: bool = True

    def __post_init__(self) -> None:
        if self.width not in (8, 16, 32, 64):
            raise ArrowInvalidArgument(f"expected an int width of 8/16/32/64, found {self.width}")

    bit_width = readonly("width")

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

    bit_width = readonly("width")

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
            widths = "/".join(map(str, _DECIMAL_MAX_PRECISION))
            raise ArrowInvalidArgument(f"expected a decimal width of {widths}, found {self.width}")
        if not isinstance(self.precision, int) or not 1 <= self.precision <= maxp:
            raise ArrowInvalidArgument(
                f"expected decimal{self.width} precision in 1..{maxp}, found {self.precision}"
            )
        if not isinstance(self.scale, int):
            raise ArrowInvalidArgument(f"expected an integer scale, found {self.scale!r}")

    bit_width = readonly("width")

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


def _check_size(size: int, what: str) -> None:
    """Refuse a size the format cannot hold: it stores them as int32."""
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= 2**31 - 1:
        raise ArrowInvalidArgument(
            f"expected {what} as an int from 0 to {2**31 - 1} (the format stores it as "
            f"int32), found {size!r}"
        )


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

    bit_width = readonly("width")

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

    bit_width = 64  # type: ignore[assignment]

    def __str__(self) -> str:
        if self.tz is None:
            return f"timestamp[{self.unit}]"
        return f"timestamp[{self.unit}, tz={self.tz}]"


@dataclass(frozen=True, slots=True, repr=False)
class _UnitType(DataType):
    """A type whose one parameter is a unit, one of ``_units`` (``_what`` names the type
    in the error)."""

    unit: str
    _units: ClassVar[tuple[str, ...]] = ()
    _what: ClassVar[str] = ""

    def __post_init__(self) -> None:
        _check_unit(self.unit, self._units, self._what)


@dataclass(frozen=True, slots=True, repr=False)
class DurationType(_UnitType):
    """64-bit elapsed time."""

    _units = TIME_UNITS
    _what = "duration"
    bit_width = 64  # type: ignore[assignment]

    def __str__(self) -> str:
        return f"duration[{self.unit}]"


_INTERVAL_WIDTH = {"year_month": 32, "day_time": 64, "month_day_nano": 128}
_INTERVAL_NAME = {
    "year_month": "month_interval",
    "day_time": "day_time_interval",
    "month_day_nano": "month_day_nano_interval",
}


@dataclass(frozen=True, slots=True, repr=False)
class IntervalType(_UnitType):
    """Calendar intervals: months (32), days+ms (64), or months+days+ns (128 bits)."""

    _units = INTERVAL_UNITS
    _what = "interval"

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


class BinaryViewType(_Plain, name="binary_view"):
    """16-byte views into inline bytes or variadic data buffers."""


class StringViewType(_Plain, name="string_view"):
    """16-byte views of UTF-8 strings."""


@dataclass(frozen=True, slots=True, repr=False)
class FixedSizeBinaryType(DataType):
    """Byte strings that all have ``byte_width`` bytes."""

    width: int

    def __post_init__(self) -> None:
        _check_size(self.width, "the fixed_size_binary byte_width")

    @property
    def bit_width(self) -> int:
        return self.width * 8

    def __str__(self) -> str:
        return f"fixed_size_binary[{self.width}]"


# --------------------------------------------------------------------------------------
# nested types


@dataclass(frozen=True, slots=True, repr=False)
class _ListBase(DataType):
    """What the list types share: one child field, ``value_field``."""

    value_field: Field

    @property
    def fields(self) -> tuple[Field, ...]:
        return (self.value_field,)

    value_type = readonly("value_field.type", "The type of the list's elements.")

    def with_fields(self, fields: tuple[Field, ...]) -> DataType:
        """A copy with new child fields (one, for lists)."""
        return type(self)(fields[0])

    def __str__(self) -> str:
        return f"{self.name}<{self.value_field}>"


class ListType(_ListBase, name="list"):
    """Lists with 32-bit offsets."""


class LargeListType(_ListBase, name="large_list"):
    """Lists with 64-bit offsets."""


class ListViewType(_ListBase, name="list_view"):
    """Lists given by 32-bit offsets and sizes (out of order allowed)."""


class LargeListViewType(_ListBase, name="large_list_view"):
    """Lists given by 64-bit offsets and sizes."""


@dataclass(frozen=True, slots=True, repr=False)
class FixedSizeListType(_ListBase):
    """Lists that all have ``list_size`` elements."""

    list_size: int

    def __post_init__(self) -> None:
        _check_size(self.list_size, "the fixed_size_list list_size")

    def with_fields(self, fields: tuple[Field, ...]) -> DataType:
        """A copy with new child fields."""
        return FixedSizeListType(fields[0], self.list_size)

    def __str__(self) -> str:
        return f"fixed_size_list<{self.value_field}>[{self.list_size}]"


@dataclass(frozen=True, slots=True, repr=False)
class StructType(DataType):
    """A fixed set of named child fields."""

    children: tuple[Field, ...]

    fields = readonly("children")

    def with_fields(self, fields: tuple[Field, ...]) -> DataType:
        """A copy with new child fields."""
        return StructType(tuple(fields))

    def get_field_index(self, name: str) -> int:
        """Index of the only child named ``name``; -1 when absent or duplicated."""
        hits = [i for i, f in enumerate(self.children) if f.name == name]
        return hits[0] if len(hits) == 1 else -1

    def __str__(self) -> str:
        return "struct<" + ", ".join(map(str, self.children)) + ">"


@dataclass(frozen=True, slots=True, repr=False)
class MapType(DataType):
    """``List<entries: Struct<key, value>>`` with non-null keys."""

    entries_field: Field
    keys_sorted: bool = False

    @property
    def fields(self) -> tuple[Field, ...]:
        return (self.entries_field,)

    value_field = readonly(
        "entries_field", "The entries struct field (the list's element), as for lists."
    )

    @property
    def key_field(self) -> Field:
        """The key field inside the entries struct."""
        return self.entries_field.type.fields[0]

    @property
    def item_field(self) -> Field:
        """The value field inside the entries struct."""
        return self.entries_field.type.fields[1]

    key_type = readonly("key_field.type", "The key type.")

    item_type = readonly("item_field.type", "The value type.")

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

    fields = readonly("children")

    def with_fields(self, fields: tuple[Field, ...]) -> DataType:
        """A copy with new child fields."""
        return UnionType(self.mode, tuple(fields), self.type_codes)

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.mode}_union"

    def __str__(self) -> str:
        inner = ", ".join(
            f"{f}={c}" for f, c in zip(self.children, self.type_codes)
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

    bit_width = readonly("index_type.bit_width")

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

    run_end_type = readonly("run_end_field.type", "The run-end integer type.")

    value_type = readonly("values_field.type", "The type of the run values.")

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

    fields = readonly("storage_type.fields")

    bit_width = readonly("storage_type.bit_width")

    def __str__(self) -> str:
        return f"extension<{self.extension_name}>"



# -- the canonical extension types' storage (CanonicalExtensions.rst) -------------------


def _is_int8(dt: DataType) -> bool:
    return isinstance(dt, IntegerType) and dt.bit_width == 8 and dt.signed


def _variable_shape_problem(st: DataType) -> str | None:
    if not isinstance(st, StructType):
        return f"a struct of data and shape, found {st}"
    names = [f.name for f in st.fields]
    if names[:2] != ["data", "shape"] or len(names) > 3 or (
        len(names) == 3 and names[2] != "uniform_shape"
    ):
        return f"a struct of fields data, shape (and uniform_shape), found {st}"
    data, shape = st.fields[0].type, st.fields[1].type
    if not isinstance(data, ListType):
        return f"a list as the data field, found {data}"
    if not (isinstance(shape, FixedSizeListType) and shape.value_type == IntegerType(32, True)):
        return f"a fixed_size_list<int32> as the shape field, found {shape}"
    return None


# canonical extension name -> (what its storage must be, the test)
_CANONICAL: dict[str, tuple[str, object]] = {
    "arrow.uuid": ("fixed_size_binary(16)",
                   lambda st: isinstance(st, FixedSizeBinaryType) and st.width == 16),
    "arrow.bool8": ("int8", _is_int8),
    "arrow.json": ("string, large_string or string_view",
                   lambda st: isinstance(st, (StringType, StringViewType))),
    "arrow.fixed_shape_tensor": ("a fixed_size_list",
                                 lambda st: isinstance(st, FixedSizeListType)),
}


def extension_storage_problem(ext: ExtensionType) -> str | None:
    """Why ``ext``'s storage breaks its canonical definition (``arrow.*`` names, see
    CanonicalExtensions.rst; ``arrow.opaque`` takes any storage), or None."""
    name = ext.extension_name
    st = ext.storage_type
    if name == "arrow.variable_shape_tensor":
        found = _variable_shape_problem(st)
        return None if found is None else f"expected arrow.variable_shape_tensor over {found}"
    rule = _CANONICAL.get(name)
    if rule is None or rule[1](st):  # type: ignore[operator]
        return None
    return f"expected {name} over {rule[0]} storage, found {st}"



def storage_of(t: DataType) -> DataType:
    """The storage type of an extension type (recursively); other types unchanged."""
    while isinstance(t, ExtensionType):
        t = t.storage_type
    return t


# --------------------------------------------------------------------------------------
# the C data interface: a type's format string and ArrowSchema description

def c_format(dtype: DataType) -> tuple[bytes, DataType]:
    """The C data format string of ``dtype``'s physical type and the type whose children
    follow it.

    Extension types give their storage's format (the name travels in metadata);
    dictionary types give the index format (the values travel in ``dictionary``).

    >>> from quiver.types import timestamp
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


# the registry's "c_format" piece (quiver.types.rows fills it)
_C_FORMATS = registry.table("c_format")


C_EXTENSION_NAME_KEY = b"ARROW:extension:name"
C_EXTENSION_METADATA_KEY = b"ARROW:extension:metadata"
# flags of CDataInterface.rst, "The ArrowSchema structure"
C_FLAG_DICTIONARY_ORDERED = 1
C_FLAG_NULLABLE = 2
C_FLAG_MAP_KEYS_SORTED = 4


def c_field_metadata(f: Field) -> list[tuple[bytes, bytes]]:
    """A field's metadata pairs as the C data interface carries them: an extension type's
    name and serialized metadata travel as two more pairs."""
    return _c_metadata(f.type, f.metadata)


def _c_metadata(ext: DataType, metadata: Any = None) -> list[tuple[bytes, bytes]]:
    pairs = metadata.items() if metadata else []
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
    if isinstance(dtype, ExtensionType):  # (a consumer would fail on it: pyarrow crashes)
        problem = extension_storage_problem(dtype)
        if problem is not None:
            raise ArrowInvalid(f"cannot export field {name!r}: {problem}")
    fmt, physical = c_format(dtype)
    flags = C_FLAG_NULLABLE if nullable else 0
    dictionary = None
    if isinstance(physical, DictionaryType):
        if physical.ordered:
            flags |= C_FLAG_DICTIONARY_ORDERED
        value_type = physical.value_type
        dictionary = c_schema_node("", value_type, True, _c_metadata(value_type))
    elif isinstance(physical, MapType) and physical.keys_sorted:
        flags |= C_FLAG_MAP_KEYS_SORTED
    fields = physical.fields if children_fields is None else children_fields
    children = [c_schema_node(f.name, f.type, f.nullable, c_field_metadata(f)) for f in fields]
    return (fmt, name, flags, metadata, children, dictionary)


# a c_schema_node description as an ``arrow_schema`` PyCapsule: answered by
# :func:`quiver.cdata.capsule.export_schema_node`, above this layer (ctypes and the C
# structs load on the first export, not with this module)
c_schema_capsule = Hook("cdata.export_schema_node")

# another library's type read through the C data interface (quiver.cdata.schema)
_import_type = Hook("cdata.import_type")


def as_type(value: Any) -> DataType | None:
    """``value`` as a quiver DataType: itself, or another library's type through the
    Arrow C data interface (anything with ``__arrow_c_schema__``: a pyarrow, polars or
    nanoarrow type), as pyarrow users pass them; None for anything else."""
    if isinstance(value, DataType):
        return value
    if hasattr(value, "__arrow_c_schema__") and not isinstance(value, type):
        return _import_type.call(value)
    return None


# the classes name their package as their module (its __init__), which doctest would then
# not look for here: their methods' examples are collected through this table
__test__ = {"DataType": DataType}
