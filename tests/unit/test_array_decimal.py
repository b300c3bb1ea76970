"""The one decimal limb codec (quiver.array.decimal), across every width: values to
buffers and back, comparison, ordering and the digit check, against Python ints."""

from __future__ import annotations

import numpy as np
import pytest

from quiver.array import decimal as dec

WIDTHS = (32, 64, 128, 256)


def _samples(width: int) -> list[int]:
    low, high = dec.value_range(width)
    return [0, 1, -1, 7, -123456, high, low, high - 1, low + 1, 2**(width - 2), -(2**(width - 3))]


@pytest.mark.parametrize("width", WIDTHS)
def test_ints_round_trip_through_the_buffer(width: int) -> None:
    values = _samples(width)
    raw = dec.from_ints(values, width)
    assert len(raw) == len(values) * width // 8
    want = b"".join(v.to_bytes(width // 8, "little", signed=True) for v in values)
    assert raw.tobytes() == want
    lmb = dec.limbs(raw, width, 0, len(values))
    assert lmb.shape == (len(values), dec.limb_count(width))
    assert dec.to_ints(lmb).tolist() == values
    assert dec.to_ints(dec.limbs(raw, width, 2, 3)).tolist() == values[2:5]


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_and_sort_keys_agree_with_python(width: int) -> None:
    values = _samples(width)
    lmb = dec.limbs(dec.from_ints(values, width), width, 0, len(values))
    for probe in (0, -1, 7, values[5], values[6], 2**(width - 2) + 1):
        want = [(v > probe) - (v < probe) for v in values]
        assert dec.compare(lmb, probe).tolist() == want, probe
    order = np.lexsort(dec.sort_keys(lmb))
    assert [values[i] for i in order] == sorted(values)


@pytest.mark.parametrize("width", WIDTHS)
def test_beyond_digits_and_widen(width: int) -> None:
    precision = {32: 9, 64: 18, 128: 38, 256: 76}[width]
    values = [10**precision - 1, -(10**precision - 1), 10**(precision - 1), 0]
    if 10**precision <= dec.value_range(width)[1]:
        values += [10**precision, -(10**precision)]
    lmb = dec.limbs(dec.from_ints(values, width), width, 0, len(values))
    got = dec.beyond_digits(lmb, precision).tolist()
    assert got == [len(str(abs(v))) > precision for v in values]
    wide = dec.widen(lmb, 4)
    assert dec.to_ints(wide).tolist() == values


def test_a_short_buffer_is_named() -> None:
    with pytest.raises(ValueError, match="expected a values buffer of at least 32 bytes"):
        dec.limbs(np.zeros(16, np.uint8), 128, 1, 1)
