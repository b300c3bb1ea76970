"""Key/value metadata of schemas and fields: ordered pairs of bytes, duplicates kept
(Schema.fbs ``KeyValue``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..errors import ArrowKeyError, ArrowTypeError


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


def as_metadata(value: Any) -> KeyValueMetadata | None:
    if value is None:
        return None
    md = value if isinstance(value, KeyValueMetadata) else KeyValueMetadata(value)
    return md if len(md) else None


# the classes name their package as their module (its __init__), which doctest would then
# not look for here: their methods' examples are collected through this table
__test__ = {"KeyValueMetadata": KeyValueMetadata}
