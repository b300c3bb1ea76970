"""What the builders of :mod:`quiver.array.build` share: null masks and bitmaps from Python
values, the kind checks and their error, offsets from lengths, and :func:`build`, the one
dispatch from a DataType class to its builder (the registry's ``builder`` piece, filled in by
:mod:`quiver.array.build_fixed`, :mod:`quiver.array.build_binary` and
:mod:`quiver.array.build_nested`).
"""

from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

from .. import registry
from .. import types as t
from ..buffers import pack_bits
from ..errors import ArrowInvalid, ArrowTypeError, NotSupported
from .base import Array


def valid_mask(values: list[Any]) -> np.ndarray:
    """True where a value is not None (one C-level pass)."""
    return np.fromiter(map(operator.is_not, values, itertools.repeat(None)), dtype=bool,
                       count=len(values))


def validity(values: list[Any]) -> tuple[np.ndarray | None, int, np.ndarray | None]:
    """(bitmap or None, null_count, bool mask of valid slots or None)."""
    n = len(values)
    if n == 0:
        return None, 0, None
    valid = valid_mask(values)
    nulls = n - int(np.count_nonzero(valid))
    if nulls == 0:
        return None, 0, None
    return pack_bits(valid), nulls, valid


def bitmap_of(valid: np.ndarray | None) -> tuple[np.ndarray | None, int]:
    if valid is None:
        return None, 0
    nulls = int(len(valid) - np.count_nonzero(valid))
    return (pack_bits(valid), nulls) if nulls else (None, 0)


def fill(values: list[Any], valid: np.ndarray | None, filler: Any) -> list[Any]:
    if valid is None:
        return values
    return [filler if v is None else v for v in values]


def kind_error(value: Any, dtype: t.DataType) -> ArrowTypeError:
    hint = "; pass from_pandas=True to take NaT as null" if is_nat_kind(type(value)) else ""
    return ArrowTypeError(
        f"expected a value convertible to {dtype}, found {value!r} of type "
        f"{type(value).__name__}{hint}"
    )


def is_nat_kind(k: type) -> bool:
    """True for the type of pandas' ``NaT`` (a ``datetime`` subclass that is no date: it is
    recognized by name, so that the array layer needs no pandas)."""
    return k.__name__ == "NaTType"


def first_bad(values: list[Any], ok: Any) -> Any:
    for v in values:
        if v is not None and not ok(v):
            return v
    return None

INT_TYPES = (int, np.integer)
FLOAT_TYPES = (float, np.floating)
# subclasses of int / np.integer that are not integers to Arrow (np.timedelta64 is a
# np.signedinteger to numpy, a duration to pyarrow)
NOT_INTS = (bool, np.bool_, np.timedelta64)


def is_int_kind(k: type) -> bool:
    """True for the Python and numpy integer types (not bools, not np.timedelta64)."""
    return issubclass(k, INT_TYPES) and not issubclass(k, NOT_INTS)


def check_kinds(values: list[Any], allowed: tuple[type, ...], dtype: t.DataType,
                 forbid: tuple[type, ...] = ()) -> None:
    kinds = set(map(type, values))
    kinds.discard(type(None))
    for k in kinds:
        if not issubclass(k, allowed) or (forbid and issubclass(k, forbid)) or is_nat_kind(k):
            raise kind_error(next(v for v in values if type(v) is k), dtype)



def offsets_from_lengths(lengths: np.ndarray, large: bool, dtype: t.DataType) -> np.ndarray:
    offs = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offs[1:])
    return narrow_offsets(offs, large, dtype)


def narrow_offsets(offs: np.ndarray, large: bool, dtype: t.DataType) -> np.ndarray:
    """int32/int64 offsets as the type's offsets (int32 unless ``large``), checking the
    range."""
    if large:
        return offs.astype(np.int64, copy=False)
    if offs[-1] > np.iinfo(np.int32).max:
        raise ArrowInvalid(
            f"expected at most 2**31-1 bytes or elements for {dtype}, found {int(offs[-1])}; "
            "use the large_ variant"
        )
    return offs.astype(np.int32, copy=False)


# the registry's "builder" piece: DataType class -> (values, dtype, checked) -> Array
_BUILDERS: dict[type, Any] = registry.table("builder")


def build(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    """An offset-0 array of ``dtype`` from a list of Python values (None = null).

    ``checked`` says the Python types of the values are known to suit ``dtype`` (type
    inference looked at every one), so leaf builders may skip their own kind check.
    """
    builder = _BUILDERS.get(dtype.__class__)
    if builder is None:
        raise NotSupported(f"building arrays of {dtype} from Python values is not supported: "
                           f"DataType {dtype.__class__.__name__} has no builder")
    return builder(values, dtype, checked)

