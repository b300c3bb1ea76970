"""``quiver schema``: golden outputs on gold files, and the JSON form checked against
pyarrow's reading of every gold file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quiver.cli import main

from .conftest import INTEGRATION, gold

GOLDEN = Path(__file__).parent / "golden"

SCHEMA_GOLDEN = {
    "cpp-21.0.0/generated_nested.arrow_file": "schema-generated_nested.arrow_file.txt",
    "cpp-21.0.0/generated_dictionary.stream": "schema-generated_dictionary.stream.txt",
    "cpp-21.0.0/generated_extension.arrow_file": "schema-generated_extension.arrow_file.txt",
    "cpp-21.0.0/generated_custom_metadata.stream": "schema-generated_custom_metadata.stream.txt",
    "cpp-21.0.0/generated_union.arrow_file": "schema-generated_union.arrow_file.txt",
    "cpp-21.0.0/generated_nested_dictionary.stream":
        "schema-generated_nested_dictionary.stream.txt",
    "1.0.0-bigendian/generated_dictionary.arrow_file":
        "schema-generated_dictionary.arrow_file.txt",
    "cpp-21.0.0/generated_map.arrow_file": "schema-generated_map.arrow_file.txt",
    "cpp-21.0.0/generated_run_end_encoded.stream": "schema-generated_run_end_encoded.stream.txt",
}


def _all_gold() -> list[str]:
    if not INTEGRATION.exists():
        return ["missing"]
    return sorted(str(p.relative_to(INTEGRATION)) for p in INTEGRATION.glob("*/generated_*")
                  if p.suffix in (".stream", ".arrow_file"))


@pytest.mark.parametrize("name", sorted(SCHEMA_GOLDEN))
def test_schema_matches_its_golden_output(name: str, capsys) -> None:
    path = gold(name)
    assert main(["schema", str(path)]) == 0
    out = capsys.readouterr().out.replace(f"{path}:", "<FILE>:", 1)
    assert out == (GOLDEN / SCHEMA_GOLDEN[name]).read_text()


def _pa_field(f) -> dict:
    import pyarrow as pa

    t = f.type
    out = {"name": f.name, "nullable": f.nullable}
    if isinstance(t, pa.BaseExtensionType):
        out["extension"] = t.extension_name
        t = t.storage_type
    elif f.metadata and b"ARROW:extension:name" in f.metadata:  # unregistered in pyarrow
        out["extension"] = f.metadata[b"ARROW:extension:name"].decode()
    if isinstance(t, pa.DictionaryType):
        out["index_type"] = str(t.index_type)
        t = t.value_type
    children = []
    if isinstance(t, (pa.ListType, pa.LargeListType, pa.FixedSizeListType, pa.ListViewType,
                      pa.LargeListViewType)):
        children = [t.value_field]
    elif isinstance(t, (pa.StructType, pa.UnionType)):
        children = [t.field(i) for i in range(t.num_fields)]
    elif isinstance(t, pa.RunEndEncodedType):
        children = [pa.field("run_ends", t.run_end_type, nullable=False),
                    pa.field("values", t.value_type)]
    if children:
        out["children"] = [_pa_field(c) for c in children]
    return out


def _our_field(f: dict) -> dict:
    out = {"name": f["name"], "nullable": f["nullable"]}
    if "extension" in f:
        out["extension"] = f["extension"]["name"]
    if "dictionary" in f:
        out["index_type"] = f["dictionary"]["index_type"]
    children = f.get("children", [])
    if children and f["type"].startswith("map"):
        children = []
    if children:
        out["children"] = [_our_field(c) for c in children]
    return out


@pytest.mark.parametrize("name", _all_gold())
def test_schema_json_agrees_with_pyarrow_on_every_gold_file(name: str, capsys) -> None:
    pa = pytest.importorskip("pyarrow")
    path = gold(name)
    assert main(["schema", "--json", str(path)]) == 0
    ours = json.loads(capsys.readouterr().out)
    opener = pa.ipc.open_file if name.endswith(".arrow_file") else pa.ipc.open_stream
    try:
        theirs = opener(path).schema
    except pa.ArrowException as exc:
        pytest.skip(f"pyarrow cannot read {name}: {exc}")
    assert ours["format"] == ("file" if name.endswith(".arrow_file") else "stream")
    assert [_our_field(f) for f in ours["fields"]] == [_pa_field(f) for f in theirs]
    pa_meta = [[k.decode(), v.decode()] for k, v in (theirs.metadata or {}).items()]
    assert sorted(ours["metadata"]) == sorted(pa_meta)
    # every dictionary field has its id
    def walk(fields):
        for f in fields:
            if "dictionary" in f:
                assert isinstance(f["dictionary"]["id"], int)
            walk(f.get("children", []))
    walk(ours["fields"])


def test_schema_json_carries_field_metadata_and_extension_metadata(capsys) -> None:
    path = gold("cpp-21.0.0/generated_extension.arrow_file")
    assert main(["schema", "--json", str(path)]) == 0
    fields = json.loads(capsys.readouterr().out)["fields"]
    assert fields[1]["extension"] == {"name": "dict-extension",
                                      "metadata": "dict-extension-serialized"}
    assert fields[1]["dictionary"]["id"] == 0
    path = gold("cpp-21.0.0/generated_custom_metadata.stream")
    assert main(["schema", "--json", str(path)]) == 0
    fields = json.loads(capsys.readouterr().out)["fields"]
    assert fields[0]["metadata"] == [["pandas", "{}"]]


def test_schema_of_a_file_without_footer_comes_from_its_stream_and_exits_one(
    sample_file: Path, tmp_path: Path, capsys
) -> None:
    cut = tmp_path / "cut.arrow"
    cut.write_bytes(sample_file.read_bytes()[:-20])
    assert main(["schema", str(cut)]) == 1
    captured = capsys.readouterr()
    assert "id: int64" in captured.out
    assert captured.err.startswith(f"quiver: {cut}: the footer cannot be read")
    assert "quiver recover" in captured.err
