"""Text parsed as numbers, in the syntax pyarrow's ``cast`` accepts (string -> int, float).

Not an Arrow spec section; follows Arrow C++'s ``ParseValue`` for casts from strings:

- integers: ``-?[0-9]+`` (the sign for signed types only; no ``+``, no spaces, no ``_``,
  ASCII digits only), or ``0x``/``0X`` and 1 to 2 x (byte width) hexadecimal digits, read
  as the type's bit pattern (``0xff`` is -1 as int8); a value outside the type is an
  error, safe or not;
- floats: ``[+-]?([0-9]+.?[0-9]*|.[0-9]+)([eE][+-]?[0-9]+)?`` or a signed ``inf``,
  ``infinity`` or ``nan`` in any case; correctly rounded to float64 (so rounded twice for
  float32 and float16, where pyarrow rounds once); beyond the range: infinity.

The syntax is checked byte by byte over the whole data with numpy (a row count, not a
per-row Python loop); the digits of integers are summed with their powers of ten (or
sixteen) the same way, in pieces of about 1 MiB of text to bound the temporaries.  Floats
are converted by numpy's C parser over the checked texts joined by spaces.

>>> import numpy as np
>>> offsets, data = np.array([0, 3, 7]), np.frombuffer(b"-120x7f", np.uint8)
>>> parse_integers(offsets, data, None, np.dtype(np.int8), "int8").tolist()
[-12, 127]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from ..errors import ArrowInvalid
from .data import ranges

__all__ = ["parse_floats", "parse_integers"]

_PIECE = 1 << 20  # bytes of text handled at once

# the value of each byte as a decimal / hexadecimal digit, -1 for any other byte
_DECIMAL = np.full(256, -1, np.int8)
_DECIMAL[48:58] = np.arange(10)
_HEXADECIMAL = _DECIMAL.copy()
_HEXADECIMAL[97:103] = _HEXADECIMAL[65:71] = np.arange(10, 16)
_POW10 = np.array([10**k for k in range(19)], np.uint64)  # all fit uint64 (10**19 too)
_POW16 = np.array([16**k for k in range(16)], np.uint64)
_U64_MAX = np.uint64(2**64 - 1)

# float syntax classes
_F_DIGIT, _F_DOT, _F_EXP, _F_SIGN, _F_OTHER = range(5)
_FLOAT_CLASS = np.full(256, _F_OTHER, np.int8)
_FLOAT_CLASS[48:58] = _F_DIGIT
_FLOAT_CLASS[ord(".")] = _F_DOT
_FLOAT_CLASS[[ord("e"), ord("E")]] = _F_EXP
_FLOAT_CLASS[[ord("+"), ord("-")]] = _F_SIGN
_FLOAT_WORDS = (b"inf", b"infinity", b"nan")


def _pieces(offsets: np.ndarray) -> Iterator[tuple[int, int]]:
    """Row ranges ``[a, b)`` of about ``_PIECE`` bytes of text each, covering every row."""
    n = len(offsets) - 1
    total = int(offsets[-1]) if n else 0
    cuts = np.searchsorted(offsets, np.arange(_PIECE, total, _PIECE), "right")
    bounds = np.unique(np.concatenate(([0], cuts, [n]))).tolist()
    yield from itertools.pairwise(bounds)


def _rows_of(bytes_at: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The row of each byte position in ``bytes_at``."""
    return np.searchsorted(offsets, bytes_at, "right") - 1


def _first_byte(offsets: np.ndarray, data: np.ndarray, k: int) -> np.ndarray:
    """Byte ``k`` of each row (0 where the row is shorter)."""
    lengths = np.diff(offsets)
    has = lengths > k
    out = np.zeros(len(lengths), np.uint8)
    out[has] = data[offsets[:-1][has] + k]
    return out


def _refuse(bad: np.ndarray, valid: np.ndarray | None, offsets: np.ndarray, data: np.ndarray,
            expected: str, base: int = 0) -> None:
    """An error naming the first row flagged in ``bad`` among the valid ones, if any."""
    if valid is not None:
        bad = bad & valid[base : base + len(bad)]
    hits = np.flatnonzero(bad)
    if len(hits):
        row = int(hits[0])
        text = bytes(data[offsets[row] : offsets[row + 1]]).decode("utf-8", "replace")
        raise ArrowInvalid(f"expected {expected}, found {text!r} at row {base + row}")


def _integer_piece(offsets: np.ndarray, data: np.ndarray, signed: bool, width: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(magnitude as uint64, negative, hexadecimal, not pyarrow syntax or beyond uint64)
    of each row."""
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    starts = offsets[:-1]
    b0, b1 = _first_byte(offsets, data, 0), _first_byte(offsets, data, 1)
    negative = (b0 == ord("-")) & signed
    hexa = (b0 == ord("0")) & ((b1 | 0x20) == ord("x"))
    prefix = np.where(hexa, 2, negative.astype(np.int64))
    digits = np.where(hexa, lengths - 2, lengths - prefix)
    bad = (digits <= 0) | (hexa & (digits > 2 * width))
    # the digit value of each byte (-1: not a digit), the prefixes zeroed
    value = _DECIMAL[data]
    if hexa.any():
        value = np.where(np.repeat(hexa, lengths), _HEXADECIMAL[data], value)
    value[starts[negative]] = 0
    value[starts[hexa]] = value[starts[hexa] + 1] = 0
    bad[_rows_of(np.flatnonzero(value < 0), offsets)] = True
    value = np.maximum(value, 0).astype(np.uint64)
    # the power of each digit: the bytes to its row's end
    power = np.repeat(offsets[1:] - 1, lengths) - np.arange(len(data))
    if hexa.any():
        weight = np.where(np.repeat(hexa, lengths), _POW16[np.minimum(power, 15)],
                          _POW10[np.minimum(power, 18)])
    else:
        weight = _POW10[np.minimum(power, 18)]
    low = power <= 18  # these sum to below 10**19 (or 16**16): exactly, in uint64
    magnitude = np.zeros(n, np.uint64)
    if n:
        sums = np.zeros(len(data) + 1, np.uint64)
        np.cumsum(np.where(low, value * weight, 0), out=sums[1:])
        magnitude = sums[offsets[1:]] - sums[starts]  # wraps back to the exact sum
    if not low.all():  # decimal rows of 20 or more digits: the digit of 10**19, if any
        high = np.zeros(n, np.uint64)
        at = np.flatnonzero(power == 19)
        high[_rows_of(at, offsets)] = value[at]
        bad[_rows_of(np.flatnonzero((power >= 20) & (value > 0)), offsets)] = True
        bad |= (high > 1) | ((high == 1) & (magnitude > _U64_MAX - np.uint64(10**19)))
        magnitude = magnitude + high * np.uint64(10**19)
    return magnitude, negative & ~hexa, hexa, bad


def parse_integers(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray | None,
                   dtype: np.dtype, name: str) -> np.ndarray:
    """The texts ``data[offsets[i]:offsets[i + 1]]`` as integers of numpy ``dtype`` (0 in
    rows not ``valid``); text that is not an integer of that type (``name``) is an error
    naming the row."""
    info = np.iinfo(dtype)
    signed = info.min < 0
    out = np.zeros(len(offsets) - 1, dtype)
    for a, b in _pieces(offsets):
        offs = offsets[a : b + 1] - offsets[a]
        text = data[offsets[a] : offsets[b]]
        magnitude, negative, hexa, bad = _integer_piece(offs, text, signed, dtype.itemsize)
        _refuse(bad, valid, offs, text, f"text that parses as {name}", a)
        beyond = np.where(negative, magnitude > np.uint64(-info.min),
                          magnitude > np.uint64(info.max))
        _refuse(beyond & ~hexa, valid, offs, text, f"values that fit {name}", a)
        ones = np.where(negative, np.uint64(0) - magnitude, magnitude)  # two's complement
        out[a:b] = (ones.view(np.int64) if signed else ones).astype(dtype)  # hex: the bits
    if valid is not None:
        out[~valid] = 0
    return out


def _one_per_row(at: np.ndarray, offsets: np.ndarray, n: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(how many of the byte positions ``at`` fall in each row, the position within its
    row of the first of them, or the row's length)."""
    rows = _rows_of(at, offsets)
    first = np.diff(offsets)
    first[rows[::-1]] = (at - offsets[rows])[::-1]  # the last write wins: the first one
    return np.bincount(rows, minlength=n), first


def _float_bad(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """True for each row that is not float text in pyarrow's syntax."""
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    starts = offsets[:-1]
    kind = _FLOAT_CLASS[data]
    first = _first_byte(offsets, data, 0)
    signed = ((first == ord("+")) | (first == ord("-"))).astype(np.int64)
    # a byte of no float (letters other than e), or a sign neither first nor after the e
    stray = kind == _F_OTHER
    sign = kind == _F_SIGN
    sign[starts[lengths > 0]] = False
    sign[1:] &= kind[:-1] != _F_EXP
    odd = np.zeros(n, bool)
    odd[_rows_of(np.flatnonzero(stray | sign), offsets)] = True
    n_exp, exp_at = _one_per_row(np.flatnonzero(kind == _F_EXP), offsets, n)
    n_dot, dot_at = _one_per_row(np.flatnonzero(kind == _F_DOT), offsets, n)
    # [sign] digits with at most one dot, then optionally e, [sign], digits
    has_exp = n_exp > 0
    exp_sign = np.zeros(n, np.int64)
    rows = np.flatnonzero(has_exp & (exp_at + 1 < lengths))
    exp_sign[rows] = _FLOAT_CLASS[data[starts[rows] + exp_at[rows] + 1]] == _F_SIGN
    numeric = (
        ~odd & (n_exp <= 1) & (n_dot <= 1) & ((n_dot == 0) | (dot_at < exp_at))
        & (exp_at - signed - n_dot > 0)  # mantissa digits
        & (~has_exp | (lengths - exp_at - 1 - exp_sign > 0))  # exponent digits
    )
    word = np.zeros(n, bool)  # inf, infinity, nan in any case, after a sign
    body = lengths - signed
    for spelling in _FLOAT_WORDS:
        rows = np.flatnonzero(~numeric & (body == len(spelling)))
        same = np.ones(len(rows), bool)
        for k, letter in enumerate(spelling):
            same &= (data[starts[rows] + signed[rows] + k] | 0x20) == letter
        word[rows[same]] = True
    return ~(numeric | word)


def parse_floats(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray | None, name: str
                 ) -> np.ndarray:
    """The texts ``data[offsets[i]:offsets[i + 1]]`` as float64 (0 in rows not ``valid``);
    text that is not a float is an error naming the row (and ``name``, the target type)."""
    out = np.zeros(len(offsets) - 1, np.float64)
    for a, b in _pieces(offsets):
        offs = offsets[a : b + 1] - offsets[a]
        text = data[offsets[a] : offsets[b]]
        _refuse(_float_bad(offs, text), valid, offs, text, f"text that parses as {name}", a)
        rows = np.arange(b - a) if valid is None else np.flatnonzero(valid[a:b])
        if len(rows):
            out[a + rows] = _float_values(offs, text, rows)
    return out


def _float_values(offsets: np.ndarray, data: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The texts of ``rows`` (checked float syntax) as float64, by numpy's C parser over
    them joined by spaces."""
    lengths = np.diff(offsets)
    if len(rows) == len(lengths) or not np.delete(lengths, rows).any():
        joined = np.insert(data, offsets[1:][rows], ord(" "))  # the other rows are empty
    else:
        ours = lengths[rows]
        joined = np.insert(data[ranges(offsets[rows], ours)], np.cumsum(ours), ord(" "))
    values = np.fromstring(joined.tobytes(), np.float64, sep=" ")
    if len(values) != len(rows):  # the syntax check makes this unreachable
        raise ArrowInvalid(f"expected {len(rows)} floats, found {len(values)}")
    return values
