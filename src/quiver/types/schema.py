"""Fields and schemas: named, typed, possibly nullable columns with key/value metadata
(Schema.fbs ``Field`` and ``Schema``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from ..errors import ArrowIndexError, ArrowKeyError, ArrowTypeError
from .datatypes import (
    DataType,
    StructType,
    as_type,
    c_field_metadata,
    c_schema_capsule,
    c_schema_node,
    strip_metadata,
)
from .metadata import KeyValueMetadata, as_metadata


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
            found = as_type(self.type)
            if found is None:
                raise ArrowTypeError(
                    f"expected a DataType for field {self.name!r}, found {self.type!r}"
                )
            object.__setattr__(self, "type", found)
        object.__setattr__(self, "metadata", as_metadata(self.metadata))

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
        return Field(self.name, self.type, self.nullable, as_metadata(metadata))

    def remove_metadata(self) -> Field:
        """A copy without metadata, here and in child types."""
        return Field(self.name, strip_metadata(self.type), self.nullable, None)

    def equals(self, other: object, *, check_metadata: bool = False) -> bool:
        """Equality, ignoring metadata unless ``check_metadata``."""
        if not isinstance(other, Field):
            return False
        if self == other:  # the common case, metadata and all
            return True
        return not check_metadata and self.remove_metadata() == other.remove_metadata()

    def __arrow_c_schema__(self) -> Any:
        """This field as an ``arrow_schema`` PyCapsule (the Arrow PyCapsule protocol).

        >>> import pyarrow as pa, quiver as qv
        >>> pa.field(qv.field("a", qv.int8(), nullable=False))
        pyarrow.Field<a: int8 not null>
        """
        node = c_schema_node(self.name, self.type, self.nullable, c_field_metadata(self))
        return c_schema_capsule.call(node)

    def __str__(self) -> str:
        return f"{self.name}: {self.type}" + ("" if self.nullable else " not null")


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
        object.__setattr__(self, "metadata", as_metadata(self.metadata))

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
        return c_schema_capsule.call(
            c_schema_node("", StructType(self.fields), False, pairs, self.fields)
        )

    def with_metadata(self, metadata: Any) -> Schema:
        """A copy with other schema metadata."""
        return Schema(self.fields, as_metadata(metadata))

    def remove_metadata(self) -> Schema:
        """A copy without schema metadata (field metadata is kept)."""
        return Schema(self.fields, None)

    def equals(self, other: object, *, check_metadata: bool = False) -> bool:
        """Equality, ignoring all metadata unless ``check_metadata``."""
        if not isinstance(other, Schema):
            return False
        if self is other or self == other:  # the common case, metadata and all
            return True
        return not check_metadata and len(self.fields) == len(other.fields) and all(
            a.equals(b) for a, b in zip(self.fields, other.fields)
        )

    def __str__(self) -> str:
        return "\n".join(map(str, self.fields))

    # -- pyarrow's editing helpers: each returns a new schema -------------------------

    def _position(self, i: int, *, end: bool = False) -> int:
        n = len(self.fields) + (1 if end else 0)
        if isinstance(i, bool) or not isinstance(i, int) or not -n <= i < n:
            raise ArrowIndexError(f"expected a field position below {n}, found {i!r}")
        return i % n if n else 0

    def append(self, field: Field) -> Schema:
        """A copy with ``field`` added at the end.

        >>> from quiver.types import field, int8, schema, string
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

        >>> from quiver.types import int8, schema
        >>> print(schema([("a", int8())], metadata={"k": "v"}).to_string())
        a: int8
        -- schema metadata --
        k: 'v'
        """
        lines = []
        for f in self.fields:
            lines.append(str(f))
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


# the classes name their package as their module (its __init__), which doctest would then
# not look for here: their methods' examples are collected through this table
__test__ = {"Field": Field, "Schema": Schema}
