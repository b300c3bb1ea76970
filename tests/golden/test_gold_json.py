"""The arrow-testing integration gold files, run the way archery runs them.

For every case ``<folder>/generated_<name>.json.gz`` under
``arrow-testing/arrow-ipc-stream/integration`` (every folder found, whatever its name):

1. the gold ``.arrow_file`` read by quiver validates against the JSON;
2. the gold ``.stream`` converted to a file by quiver validates against the JSON;
3. the JSON written as a file by quiver validates against the JSON, and pyarrow reads it with
   the same schema and data as the gold file;
4. the gold file written back as JSON by quiver holds the same data;
5. independently of quiver's IPC reader: the JSON as quiver decodes it equals what pyarrow
   (the oracle) reads from the gold file.

Known failures are listed in ``KNOWN_FAILURES`` with their reason and run as strict xfails,
so a fix shows up as an unexpected pass.  Today the list is empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from quiver import types as t
from quiver.array import make_array
from quiver.array.base import Array
from tests.conftest import INTEGRATION, SUPPLEMENT, require_shared

pa = pytest.importorskip("pyarrow")

# the folders the brief names; any other folder found is run too
EXPECTED_FOLDERS = {"cpp-21.0.0", "0.17.1", "1.0.0-bigendian", "2.0.0-compression"}

CASES: list[Path] = sorted(INTEGRATION.glob("*/*.json.gz")) if INTEGRATION.exists() else []

#: (test name, case id) -> why it fails; each becomes a strict xfail
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


def case_id(path: Path) -> str:
    """``<folder>/<name>`` of a gold JSON file."""
    return f"{path.parent.name}/{path.name.removesuffix('.json.gz')}"


def cases(test: str) -> list[Any]:
    """The gold cases as pytest params, known failures marked strict xfail."""
    if not CASES:
        return [pytest.param(None, id="gold-files-missing")]
    out = []
    for p in CASES:
        reason = KNOWN_FAILURES.get((test, case_id(p)))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(p, id=case_id(p), marks=marks))
    return out


def _gold(path: Path | None) -> Path:
    require_shared(INTEGRATION)
    if path is None:
        pytest.skip(f"no *.json.gz gold files under {INTEGRATION}")
    return path


def _require_ipc() -> Any:
    import quiver.ipc as ipc

    return ipc


def _sibling(json_path: Path, suffix: str) -> Path:
    return json_path.with_name(json_path.name.removesuffix(".json.gz") + suffix)


def _diff_text(diffs: list[Any]) -> str:
    return "\n".join(str(d) for d in diffs)


# --------------------------------------------------------------------------------------


def test_every_expected_gold_folder_is_present() -> None:
    require_shared(INTEGRATION)
    found = {p.parent.name for p in CASES}
    assert found >= EXPECTED_FOLDERS, f"missing gold folders: {EXPECTED_FOLDERS - found}"
    for p in CASES:
        assert _sibling(p, ".arrow_file").exists() and _sibling(p, ".stream").exists(), p


@pytest.mark.parametrize("json_path", cases("file"))
def test_gold_file_validates_against_json(json_path: Path | None) -> None:
    json_path = _gold(json_path)
    _require_ipc()
    from quiver.integration import validate

    diffs = validate(json_path, _sibling(json_path, ".arrow_file"))
    assert diffs == [], _diff_text(diffs)


@pytest.mark.parametrize("json_path", cases("stream"))
def test_gold_stream_converted_to_file_validates(json_path: Path | None, tmp_path: Path) -> None:
    json_path = _gold(json_path)
    _require_ipc()
    from quiver.integration import is_arrow_file, stream_to_file, validate

    out = tmp_path / "from_stream.arrow_file"
    stream_to_file(_sibling(json_path, ".stream"), out)
    assert is_arrow_file(out)
    diffs = validate(json_path, out)
    assert diffs == [], _diff_text(diffs)


@pytest.mark.parametrize("json_path", cases("json-to-arrow"))
def test_json_to_arrow_file_validates_and_pyarrow_reads_gold_data(
    json_path: Path | None, tmp_path: Path
) -> None:
    json_path = _gold(json_path)
    _require_ipc()
    from quiver.integration import json_to_arrow, validate

    out = tmp_path / "from_json.arrow_file"
    json_to_arrow(json_path, out)
    diffs = validate(json_path, out)
    assert diffs == [], _diff_text(diffs)
    ours = pa.ipc.open_file(out).read_all()
    gold = pa.ipc.open_file(_sibling(json_path, ".arrow_file")).read_all()
    assert ours.schema.equals(gold.schema, check_metadata=True), (ours.schema, gold.schema)
    assert ours.equals(gold)


@pytest.mark.parametrize("json_path", cases("arrow-to-json"))
def test_gold_file_written_as_json_holds_the_same_data(
    json_path: Path | None, tmp_path: Path
) -> None:
    json_path = _gold(json_path)
    _require_ipc()
    from quiver.integration import arrow_to_json, compare, read_json

    out = tmp_path / "back.json"
    arrow_to_json(_sibling(json_path, ".arrow_file"), out)
    expected, back = read_json(json_path), read_json(out)
    diffs = compare(expected.schema, expected.batches, back.schema, back.batches)
    assert diffs == [], _diff_text(diffs)


# --------------------------------------------------------------------------------------
# the oracle check: JSON decoded by quiver vs the gold file decoded by pyarrow


def _pa_children(arr: Any, st: t.DataType) -> list[Any]:
    if isinstance(st, (t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType,
                       t.FixedSizeListType, t.MapType)):
        return [arr.values]
    if isinstance(st, (t.StructType, t.UnionType)):
        return [arr.field(i) for i in range(st.num_fields)]
    if isinstance(st, t.RunEndEncodedType):
        return [arr.run_ends, arr.values]
    return []


def _np_buf(b: Any) -> np.ndarray | None:
    return None if b is None else np.frombuffer(b, dtype=np.uint8)


def pa_to_quiver(arr: Any, typ: t.DataType) -> Array:
    """A quiver view of a pyarrow array (offset 0, as read from IPC), typed by ``typ``."""
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    assert arr.offset == 0
    st = t.storage_of(typ)
    if isinstance(st, t.DictionaryType):
        dictionary = pa_to_quiver(arr.dictionary, st.value_type)
        own = [_np_buf(b) for b in arr.indices.buffers()]
        return make_array(typ, len(arr), own, (), -1, 0, dictionary)
    kids = _pa_children(arr, st)
    every = arr.buffers()
    own = every[: len(every) - sum(len(k.buffers()) for k in kids)]
    if isinstance(st, (t.UnionType, t.RunEndEncodedType, t.NullType)):
        own = own[1:]  # pyarrow keeps a validity slot these layouts do not have
    children = [pa_to_quiver(k, f.type) for k, f in zip(kids, st.fields)]
    return make_array(typ, len(arr), [_np_buf(b) for b in own], children, -1, 0)


def _pa_columns(pb: Any, schema: t.Schema) -> list[Array]:
    """Every column of a pyarrow batch as a quiver view.

    pyarrow 26 has no Python array class for YEAR_MONTH and DAY_TIME intervals, so those
    (flat) columns are cut out of the batch's struct view, whose ``buffers()`` lists every
    buffer depth first without wrapping the children.
    """
    wrapped: list[Any] = []
    for i in range(pb.num_columns):
        try:
            wrapped.append(pb.column(i))
        except KeyError:
            wrapped.append(None)
        if wrapped[-1] is None:
            assert isinstance(t.storage_of(schema.fields[i].type), t.IntervalType)
    flat = pb.to_struct_array().buffers() if None in wrapped else []
    pos = 1  # after the struct's own validity slot
    out = []
    for col, f in zip(wrapped, schema.fields):
        if col is None:
            validity, values = flat[pos : pos + 2]
            pos += 2
            out.append(make_array(f.type, pb.num_rows, [_np_buf(validity), _np_buf(values)]))
        else:
            pos += len(col.buffers())
            out.append(pa_to_quiver(col, f.type))
    return out


@pytest.mark.parametrize("json_path", cases("oracle"))
def test_json_decodes_to_what_pyarrow_reads_from_gold_file(json_path: Path | None) -> None:
    json_path = _gold(json_path)
    from quiver.integration import compare_arrays, read_json

    jf = read_json(json_path)
    reader = pa.ipc.open_file(_sibling(json_path, ".arrow_file"))
    assert reader.num_record_batches == len(jf.batches)
    for b, jb in enumerate(jf.batches):
        pb = reader.get_batch(b)
        assert pb.num_rows == jb.num_rows
        for f, ours, theirs in zip(jf.schema.fields, jb.columns, _pa_columns(pb, jf.schema)):
            diffs = compare_arrays(ours, theirs, column=f.name, batch=b)
            assert diffs == [], _diff_text(diffs)
    # top-level names and nullability as pyarrow sees them
    assert [(f.name, f.nullable) for f in reader.schema] == [
        (f.name, f.nullable) for f in jf.schema.fields]


# --------------------------------------------------------------------------------------
# the supplement files (pyarrow-written): JSON round trips of features the gold set lacks

_SUPPLEMENT_JSON_OK = [
    "dict_delta.stream",
    "dict_delta.arrow_file",
    "compressed_lz4_newtypes.arrow_file",
    "compressed_zstd_newtypes.arrow_file",
    "uncompressed_newtypes.stream",
    "schema_only.arrow_file",
    "metadata_v4_union.stream",
]


@pytest.mark.parametrize("name", _SUPPLEMENT_JSON_OK)
def test_supplement_file_written_as_json_reads_back_equal(name: str, tmp_path: Path) -> None:
    path = require_shared(SUPPLEMENT / name)
    _require_ipc()
    from quiver.integration import arrow_to_json, compare, read_ipc, read_json

    out = tmp_path / "x.json"
    arrow_to_json(path, out)
    schema, batches = read_ipc(path)
    back = read_json(out)
    diffs = compare(schema, batches, back.schema, back.batches)
    assert diffs == [], _diff_text(diffs)


@pytest.mark.parametrize("name", ["dict_replacement.stream", "dict_delta_and_replacement.stream"])
def test_replaced_dictionaries_are_refused_by_the_json_writer(name: str, tmp_path: Path) -> None:
    path = require_shared(SUPPLEMENT / name)
    _require_ipc()
    from quiver.errors import NotSupported
    from quiver.integration import arrow_to_json

    with pytest.raises(NotSupported, match="found it replaced"):
        arrow_to_json(path, tmp_path / "x.json")


def test_cli_validates_a_gold_file_and_rejects_a_mismatched_pair() -> None:
    import subprocess
    import sys

    require_shared(INTEGRATION)
    _require_ipc()
    case = INTEGRATION / "cpp-21.0.0" / "generated_primitive.json.gz"
    other = INTEGRATION / "cpp-21.0.0" / "generated_binary.arrow_file"
    require_shared(case)

    def run(json_path: Path, arrow_path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "quiver", "integration", "--mode", "validate",
             "--json", str(json_path), "--arrow", str(arrow_path)],
            capture_output=True, text=True, check=False, timeout=120,
        )

    ok = run(case, _sibling(case, ".arrow_file"))
    assert ok.returncode == 0, ok.stderr
    bad = run(case, other)
    assert bad.returncode == 1
    assert "expected" in bad.stderr and "does not match" in bad.stderr
