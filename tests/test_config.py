"""posviz.config: defaults valid; every bound inclusive; the error names the value and range.

The ranges are written here from the issue (context length 1-1024 = GPT-2's context, emb_dim
2-768 = GPT-2 small), not read from the code under test.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from posviz import config
from posviz.config import (
    MAX_TEXT_CHARS,
    Settings,
    SettingsError,
    check_heads,
    fit_heads,
    for_weights,
    head_counts,
    settings_from_widgets,
    validate,
    widget_values,
    with_changes,
)

RANGES = {
    "context_length": (1, 1024),
    "emb_dim": (2, 768),
    "seed": (0, 2**32 - 1),
    "stride": (1, 1024),
    # the Attention tab (issue 25): heads 1 ... 12, a head of the 12, a shift up to 1024
    "heads": (1, 12),
    "head": (0, 11),
    "shift": (0, 1024),
}


def test_constants_match_the_issue() -> None:
    assert RANGES["context_length"] == config.CONTEXT_LENGTH_RANGE
    assert RANGES["emb_dim"] == config.EMB_DIM_RANGE
    assert config.GPT2_VOCAB_SIZE == 50257
    assert config.SCHEMES == ("learned", "sinusoidal", "none", "rope", "alibi", "t5")
    assert RANGES["heads"] == config.HEADS_RANGE
    assert RANGES["shift"] == config.SHIFT_RANGE


def test_seed_range_is_accepted_by_torch() -> None:
    low, high = config.SEED_RANGE
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(low)
        torch.manual_seed(high)
        assert torch.initial_seed() == high


def test_defaults_are_valid() -> None:
    settings = Settings()
    assert validate(settings) is settings
    assert settings.scheme == "learned"
    assert settings.seed == 123  # the book's seed
    assert settings.effective_stride == settings.context_length


def test_settings_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().emb_dim = 3  # type: ignore[misc]


BOUNDS = [
    pytest.param(name, value, id=f"{name}={value}")
    for name, (low, high) in RANGES.items()
    for value in (low, high)
]
OUTSIDE = [
    pytest.param(name, value, low, high, id=f"{name}={value}")
    for name, (low, high) in RANGES.items()
    for value in (low - 1, high + 1)
]


@pytest.mark.parametrize(("name", "value"), BOUNDS)
def test_bounds_are_inclusive(name: str, value: int) -> None:
    settings = with_changes(Settings(), **{name: value})
    assert getattr(settings, name) == value


@pytest.mark.parametrize(("name", "value", "low", "high"), OUTSIDE)
def test_just_outside_raises_naming_value_and_range(
    name: str, value: int, low: int, high: int
) -> None:
    with pytest.raises(SettingsError) as error:
        validate(dataclasses.replace(Settings(), **{name: value}))
    message = str(error.value)
    assert name in message
    assert str(value) in message
    assert f"{low} to {high}" in message


@pytest.mark.parametrize("name", list(RANGES))
@pytest.mark.parametrize(
    "value",
    [
        pytest.param(True, id="bool-True"),
        pytest.param(False, id="bool-False"),
        pytest.param(4.0, id="float"),
        pytest.param(4.5, id="float-fraction"),
        pytest.param("4", id="str"),
        pytest.param(None, id="None"),
    ],
)
def test_non_integers_are_rejected(name: str, value: object) -> None:
    if name == "stride" and value is None:
        assert validate(Settings(stride=None)).effective_stride == 16  # None means "= T"
        return
    with pytest.raises(SettingsError) as error:
        validate(dataclasses.replace(Settings(), **{name: value}))
    message = str(error.value)
    assert name in message and repr(value) in message and "whole number" in message


@pytest.mark.parametrize(
    ("window", "ok"),
    [
        pytest.param(0, True, id="0"),
        pytest.param(10**6, True, id="large"),
        pytest.param(-1, False, id="negative"),
        pytest.param(True, False, id="bool"),
        pytest.param(1.0, False, id="float"),
    ],
)
def test_window(window: object, ok: bool) -> None:
    settings = dataclasses.replace(Settings(), window=window)
    if ok:
        assert validate(settings).window == window
    else:
        with pytest.raises(SettingsError, match=rf"window .*got {window!r}"):
            validate(settings)


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal", "none", "rope", "alibi", "t5"])
def test_every_scheme_is_valid(scheme: str) -> None:
    assert with_changes(Settings(), scheme=scheme).scheme == scheme


@pytest.mark.parametrize("scheme", ["", "Learned", "ALiBi", "xpos", None])
def test_unknown_scheme_is_rejected(scheme: object) -> None:
    with pytest.raises(SettingsError, match=r"scheme must be one of learned, sinusoidal"):
        with_changes(Settings(), scheme=scheme)


def test_text_at_the_limit_is_valid() -> None:
    assert MAX_TEXT_CHARS == 25_000
    assert len(with_changes(Settings(), text="a" * MAX_TEXT_CHARS).text) == MAX_TEXT_CHARS


def test_text_over_the_limit_raises_with_both_numbers() -> None:
    with pytest.raises(SettingsError) as error:
        with_changes(Settings(), text="a" * (MAX_TEXT_CHARS + 1))
    message = str(error.value)
    assert "25,001" in message and "25,000" in message


def test_text_must_be_a_string() -> None:
    with pytest.raises(SettingsError, match="text must be a string, got bytes"):
        validate(dataclasses.replace(Settings(), text=b"abc"))  # type: ignore[arg-type]


def test_empty_and_odd_texts_are_valid_settings() -> None:
    for text in ["", "   ", "\x00", "\ud800", "<script>", "😀"]:
        assert with_changes(Settings(), text=text).text == text


def test_with_changes_returns_a_validated_copy() -> None:
    original = Settings()
    changed = with_changes(original, emb_dim=256, context_length=4, stride=4)
    assert (changed.emb_dim, changed.context_length, changed.effective_stride) == (256, 4, 4)
    assert original == Settings()
    with pytest.raises(SettingsError):
        with_changes(original, emb_dim=1)


def test_settings_error_is_a_value_error() -> None:
    assert issubclass(SettingsError, ValueError)


@pytest.mark.parametrize(
    "settings",
    [Settings(), Settings(stride=3, window=2, scheme="rope"), Settings(context_length=8, stride=8)],
    ids=["default", "stride-3", "stride-equals-T"],
)
def test_widget_values_round_trip(settings: Settings) -> None:
    values = widget_values(settings)
    assert values["stride"] == settings.effective_stride
    assert values["text"] == settings.text and values["scheme"] == settings.scheme
    back = settings_from_widgets(values)
    assert back.effective_stride == settings.effective_stride
    assert back == dataclasses.replace(
        settings, stride=None if settings.stride == 8 else settings.stride
    )


def test_missing_widget_values_are_the_defaults() -> None:
    assert settings_from_widgets({"emb_dim": 8}) == Settings(emb_dim=8)


def test_gpt2_weights_fix_d_and_scheme() -> None:
    gpt2 = for_weights(Settings(emb_dim=32, scheme="rope"), "gpt2")
    assert (gpt2.weights, gpt2.emb_dim, gpt2.scheme) == ("gpt2", 768, "learned")
    assert validate(gpt2) is gpt2
    back = for_weights(gpt2, "init")
    assert (back.weights, back.emb_dim, back.scheme) == ("init", 768, "learned")
    with pytest.raises(SettingsError, match="with weights=gpt2, emb_dim is GPT-2's 768"):
        validate(Settings(weights="gpt2"))
    with pytest.raises(SettingsError, match="with weights=gpt2 the scheme is learned"):
        validate(dataclasses.replace(gpt2, scheme="sinusoidal"))
    with pytest.raises(SettingsError, match="weights must be init or gpt2, got 'gpt3'"):
        validate(Settings(weights="gpt3"))  # type: ignore[arg-type]


# --- the Attention tab's heads: H divides d, K is one of them, RoPE needs even heads ----------


def test_defaults_fit_their_heads() -> None:
    settings = Settings()
    assert (settings.heads, settings.head, settings.shift) == (4, 0, 0)
    assert check_heads(settings) is settings


@pytest.mark.parametrize("emb_dim", [2, 7, 12, 64, 96, 255, 768])
def test_head_counts_are_the_divisors_up_to_12(emb_dim: int) -> None:
    expected = tuple(h for h in range(1, 13) if emb_dim % h == 0)  # written out, not imported
    assert head_counts(emb_dim) == expected
    for heads in range(1, 13):
        settings = Settings(emb_dim=emb_dim, heads=heads)
        if heads in expected:
            assert check_heads(settings) is settings
        else:
            with pytest.raises(SettingsError) as error:
                check_heads(settings)
            message = str(error.value)
            assert f"got {heads}" in message and f"emb_dim {emb_dim}" in message
            assert str(expected[-1]) in message and "choose one of them" in message


def test_head_must_be_one_of_the_heads() -> None:
    assert check_heads(Settings(heads=6, head=5, emb_dim=96)).head == 5
    with pytest.raises(SettingsError, match=r"head must be from 0 to 3 .* got 4; choose"):
        check_heads(Settings(heads=4, head=4))


def test_rope_needs_even_heads() -> None:
    assert check_heads(Settings(emb_dim=12, heads=6, scheme="rope")).heads == 6  # 2 columns
    with pytest.raises(SettingsError, match=r"12 / heads 4 = 3: choose heads 1, 2, 3 or 6"):
        check_heads(Settings(emb_dim=12, heads=4, scheme="rope"))
    with pytest.raises(SettingsError, match="choose an even emb_dim"):
        check_heads(Settings(emb_dim=7, heads=1, scheme="rope"))
    assert check_heads(Settings(emb_dim=12, heads=4, scheme="alibi")).heads == 4


@pytest.mark.parametrize(
    ("settings", "heads", "head", "notices"),
    [
        pytest.param(Settings(), 4, 0, 0, id="fits"),
        pytest.param(Settings(emb_dim=64, heads=6, head=5), 4, 3, 2, id="6-of-64"),
        pytest.param(Settings(emb_dim=96, heads=6, head=5), 6, 5, 0, id="6-of-96"),
        pytest.param(Settings(emb_dim=7, heads=4, head=2), 1, 0, 2, id="7-has-1"),
        pytest.param(Settings(emb_dim=12, heads=4, scheme="rope"), 3, 0, 1, id="rope-even"),
        pytest.param(Settings(emb_dim=7, scheme="rope"), 4, 0, 0, id="rope-odd-d"),
    ],
)
def test_fit_heads(settings: Settings, heads: int, head: int, notices: int) -> None:
    fitted, said = fit_heads(settings)
    assert (fitted.heads, fitted.head, len(said)) == (heads, head, notices)
    if settings.emb_dim % 2 == 0 or settings.scheme != "rope":
        assert check_heads(fitted) is fitted
    for notice in said:
        assert notice.startswith(("heads: ", "head: ")) and "using" in notice
