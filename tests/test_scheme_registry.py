"""posviz.schemes' registry: one spec per scheme name, every field filled, the lookup's error,
and the options' checks (a value, its range and the fix in every message)."""

from __future__ import annotations

import dataclasses
from typing import get_args

import pytest

from posviz.schemes import (
    OPTIONS,
    SCHEME_NAMES,
    SCHEMES,
    Acts,
    SchemeName,
    SchemeOption,
    SchemeSpec,
    scheme,
)


def test_every_name_has_its_spec_in_the_menus_order() -> None:
    assert [spec.name for spec in SCHEMES] == list(get_args(SchemeName)) == list(SCHEME_NAMES)
    assert [spec.name for spec in SCHEMES] == [
        "learned",
        "sinusoidal",
        "none",
        "rope",
        "alibi",
        "t5",
    ]
    for spec in SCHEMES:
        assert scheme(spec.name) is spec
        assert scheme(spec) is spec


def test_an_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(
        ValueError, match=r"one of learned, sinusoidal, none, rope, alibi, t5, got 'ROPE'"
    ):
        scheme("ROPE")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name))]
    if isinstance(value, tuple):
        return [s for item in value for s in _strings(item)]
    return []


@pytest.mark.parametrize("spec", SCHEMES, ids=lambda s: s.name)
def test_every_spec_fills_every_field(spec: SchemeSpec) -> None:
    assert all(text.strip() for text in _strings(spec)), "an empty text in the spec"
    assert spec.colour.startswith("#") and len(spec.colour) == 7
    assert len(spec.titles.embeddings) == len(spec.titles.similarity) == 3
    # the functions match where the scheme acts
    assert (spec.rotation is not None) == spec.rotates == (spec.acts is Acts.ROTATES_QK)
    assert (spec.bias is not None) == spec.biases_scores
    assert spec.adds_to_input == (spec.learned or spec.table is not None)
    assert not (spec.learned and spec.table is not None)
    assert spec.positionless == (spec.acts is Acts.NOTHING)


def test_colours_and_labels_tell_the_schemes_apart() -> None:
    for field in ("colour", "label", "table_label"):
        values = [getattr(spec, field) for spec in SCHEMES]
        assert len(set(values)) == len(values), field


def test_option_names_are_unique_and_known() -> None:
    names = [o.name for spec in SCHEMES for o in spec.options]
    assert len(names) == len(set(names)) == len(OPTIONS)
    for declared in OPTIONS.values():
        assert declared.check(declared.default) is None
        assert declared.flag == "--" + declared.name.replace("_", "-")


def test_an_options_message_names_value_range_and_fix() -> None:
    number = SchemeOption("x_base", "Base", "its base", "float", 10_000.0, low=2.0, high=1e9)
    assert number.check(1.5) == (
        "x_base must be a number from 2 to 1,000,000,000, got 1.5; choose one in that range "
        "(default 10,000)"
    )
    assert number.check(float("nan")) is not None
    assert number.check(True) is not None
    assert number.check("5") is not None
    assert number.parse(" 500000 ") == 500_000.0
    with pytest.raises(ValueError, match="got 'abc'"):
        number.parse("abc")
    whole = SchemeOption("x_len", "Length", "a length", "int", 16, low=1, high=1024)
    assert whole.check(2.5) is not None and whole.parse("64") == 64
    choice = SchemeOption("x_kind", "Kind", "a kind", "choice", "a", choices=("a", "b"))
    assert choice.parse("b") == "b"
    assert choice.check("c") == "x_kind must be one of a, b, got 'c' (default a)"
