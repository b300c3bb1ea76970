"""quiver._keywords: keyword sets declared once as a TypedDict."""

from __future__ import annotations

import inspect
from typing import TypedDict, Unpack

import pytest

import quiver as qv
from quiver._keywords import check_keywords, options_from, spell_out


class _Knobs(TypedDict, total=False):
    size: int
    name: str | None


def test_spell_out_lists_each_key_after_the_functions_own_parameters() -> None:
    @spell_out(_Knobs, size=3)
    def make(first: int, *, flag: bool = False, **kw: Unpack[_Knobs]) -> dict[str, object]:
        return {"first": first, "flag": flag, **kw}

    params = inspect.signature(make).parameters
    assert list(params) == ["first", "flag", "size", "name"]
    assert params["size"].kind is inspect.Parameter.KEYWORD_ONLY
    assert (params["size"].default, params["size"].annotation) == (3, "int")
    assert (params["name"].default, params["name"].annotation) == (None, "str | None")
    # only the signature changes: the call goes through as written
    assert make(1, size=5) == {"first": 1, "flag": False, "size": 5}


def test_spell_out_refuses_a_default_for_a_key_the_set_lacks() -> None:
    with pytest.raises(TypeError, match="expected defaults for keys of _Knobs"):
        spell_out(_Knobs, colour="red")


def test_check_keywords_names_the_misspelt_one_and_the_ones_there_are() -> None:
    check_keywords({"size": 1, "name": None}, _Knobs, "a knob")
    with pytest.raises(qv.ArrowTypeError, match=r"expected a knob among \['name', 'size'\], "
                                                 r"found 'sise'"):
        check_keywords({"sise": 1}, _Knobs, "a knob")


def test_options_from_takes_the_object_or_the_keywords_not_both() -> None:
    assert options_from("given", {}, _Knobs, "a knob", dict) == "given"
    assert options_from(None, {"size": 2, "name": None}, _Knobs, "a knob", dict) == {"size": 2}
    assert options_from("given", {"name": None}, _Knobs, "a knob", dict) == "given"
    with pytest.raises(qv.ArrowInvalidArgument, match=r"found both \(\['size'\]\)"):
        options_from("given", {"size": 2}, _Knobs, "a knob", dict)
    with pytest.raises(qv.ArrowTypeError, match="found 'sise'"):
        options_from(None, {"sise": 2}, _Knobs, "a knob", dict)
