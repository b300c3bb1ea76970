"""Tests for quiver.ipc.compression.codecs: the LZ4 frame and zstd codecs."""

from __future__ import annotations

import numpy as np
import pytest

from quiver.errors import ArrowInvalidArgument
from quiver.ipc import compression as c


@pytest.mark.parametrize("name", ["snappy", "gzip", "", None, 3])
def test_unknown_codec_name_is_invalid_argument(name) -> None:
    with pytest.raises(ArrowInvalidArgument, match="expected a codec name"):
        c.compress_buffer(name, np.zeros(10, np.uint8))
    with pytest.raises(ValueError):
        c.normalize_codec(name)


@pytest.mark.parametrize(
    ("codec", "level"), [("lz4", 13), ("lz4", -1), ("zstd", 23), ("zstd", 1.5), ("zstd", True)]
)
def test_out_of_range_level_is_invalid_argument(codec: str, level) -> None:
    with pytest.raises(ArrowInvalidArgument, match="compression level"):
        c.compress_buffer(codec, np.zeros(10, np.uint8), level=level)


def test_codec_names_come_from_one_table_in_message_fbs_order() -> None:
    from quiver.ipc import metadata as md
    from quiver.ipc.writer import IpcWriteOptions

    # CompressionType: LZ4_FRAME = 0, ZSTD = 1
    assert c.CODECS is md.CODECS and md.CODECS == ("lz4_frame", "zstd")
    for alias, name in md.CODEC_ALIASES.items():
        assert c.normalize_codec(alias.upper()) == name
        # the writer takes every name the table has, and stores the codec it stands for
        assert IpcWriteOptions(compression=alias).compression == alias
    for codec in md.CODECS:
        rb = md.RecordBatch(1, [[1, 0]], [[0, 0]], md.BodyCompression(codec))
        msg = md.decode_message(md.encode_message(md.Message(md.V5, rb, 8)))
        assert msg.header.compression.codec == codec
    with pytest.raises(ArrowInvalidArgument, match="expected a codec name"):
        c.normalize_codec("snappy")


def test_plausible_ratio_decides_one_call_or_pieces() -> None:
    mib = 1 << 20
    assert c.decompress_one_shot("lz4_frame", 100, mib)  # small: always one call
    assert c.decompress_one_shot("lz4_frame", 40_000, 8 * mib)  # 210x: lz4 reaches ~255x
    assert not c.decompress_one_shot("lz4_frame", 4_000, 8 * mib)
    assert c.decompress_one_shot("zstd", 300, 8 * mib)  # 28000x: zstd reaches ~32500x
    assert not c.decompress_one_shot("zstd", 100, 8 * mib)
    assert not c.decompress_one_shot("zstd", 64 * mib, 65 * mib)  # big: in pieces
