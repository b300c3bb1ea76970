"""Integration JSON document builders shared by the integration tests."""

from __future__ import annotations

import json
from typing import Any

from quiver.integration import array_values, parse_json, to_json

# --------------------------------------------------------------------------------------
# helpers


def fld(name: str, type_: dict[str, Any], children: list | None = None, nullable: bool = True,
        **extra: Any) -> dict[str, Any]:
    return {"name": name, "nullable": nullable, "type": type_, "children": children or [],
            **extra}


def doc(fields: list[dict], *batches: tuple[int, list[dict]], dictionaries: list | None = None,
        metadata: list | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "schema": {"fields": fields},
        "batches": [{"count": n, "columns": cols} for n, cols in batches],
    }
    if metadata is not None:
        out["schema"]["metadata"] = metadata
    if dictionaries is not None:
        out["dictionaries"] = dictionaries
    return out


def one_column(type_: dict, col: dict, children: list | None = None, **extra: Any) -> dict:
    return doc([fld("a", type_, children, **extra)], (col["count"], [{"name": "a", **col}]))


def values(d: dict) -> list[Any]:
    jf = parse_json(d)
    return array_values(jf.batches[0].columns[0])


def roundtrip(d: dict) -> dict:
    jf = parse_json(d)
    return json.loads(json.dumps(to_json(jf.schema, jf.batches)))


INT32 = {"name": "int", "bitWidth": 32, "isSigned": True}


INT64 = {"name": "int", "bitWidth": 64, "isSigned": True}


UTF8 = {"name": "utf8"}


# --------------------------------------------------------------------------------------
# dictionaries


def _dict_field(name: str, did: int, value: dict, children: list | None = None) -> dict:
    return fld(name, value, children, dictionary={
        "id": did, "indexType": {"name": "int", "bitWidth": 8, "isSigned": True},
        "isOrdered": False})


def _dict_batch(did: int, count: int, col: dict) -> dict:
    return {"id": did, "data": {"count": count, "columns": [{"name": f"DICT{did}",
                                                              "count": count, **col}]}}


def _jints(data: list, validity: list | None = None, type_: dict = INT32) -> dict:
    return one_column(type_, {"count": len(data), "VALIDITY": validity or [1] * len(data),
                              "DATA": data})
