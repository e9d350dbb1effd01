"""RoPE's context extensions (:mod:`posviz.schemes.rope_scaling`) against transformers 5.17.0's rope
functions and the book's ``compute_rope_params``, as ``tests/reference.py`` transcribes them
(without posviz): the frequencies and attention factor of every scaling, cos and sin, the
attention scores at positions ``0 … n−1`` and shifted, the checks, and the sentence's numbers."""

from __future__ import annotations

import itertools
import math
import re
from typing import get_args

import pytest
import reference
import torch

from posviz import schemes
from posviz.schemes import rope
from posviz.schemes.rope_scaling import (
    SCALING_SPECS,
    SCALINGS,
    RopeConfig,
    Scaling,
    check_rope,
    inv_freq_and_factor,
    rope_cos_sin,
    rotate,
    scaled_rope_angles,
    scaling_facts,
    scaling_sentence,
)

HEAD_DIMS = (16, 32)
FACTORS = (2.0, 4.0, 8.0)
ORIGINAL_LENGTHS = (16, 64, 1024)
BASES = (10_000.0, 500_000.0)  # Llama 2's and Llama 3's


def _grid(scalings: tuple[Scaling, ...] = SCALINGS) -> list[object]:
    return [
        pytest.param(
            scaling, h, s, original, base, id=f"{scaling}-h{h}-s{s:g}-L0={original}-{base:g}"
        )
        for scaling, h, s, original, base in itertools.product(
            scalings, HEAD_DIMS, FACTORS, ORIGINAL_LENGTHS, BASES
        )
    ]


def _configs(
    scaling: Scaling, h: int, s: float, original: int, base: float
) -> tuple[RopeConfig, reference.HFRopeConfig]:
    ours = RopeConfig(base=base, scaling=scaling, factor=s, original_length=original)
    theirs = reference.hf_rope_config(
        scaling, head_dim=h, base=base, factor=s, original_length=original
    )
    return ours, theirs


def test_every_scaling_has_its_spec() -> None:
    assert tuple(SCALING_SPECS) == SCALINGS == get_args(Scaling)
    assert set(SCALINGS) == set(reference.HF_ROPE_INIT_FUNCTIONS)
    assert all(spec.name == name for name, spec in SCALING_SPECS.items())
    # the option's help says each scaling in a clause of its own, starting with its name
    (option,) = [o for o in rope.ROPE_OPTIONS if o.name == "rope_scaling"]
    for name, spec in SCALING_SPECS.items():
        if name != "default":
            assert spec.hint.startswith(name) and f" {spec.hint}" in option.help, name


# --- frequencies and the attention factor ----------------------------------------------------


@pytest.mark.parametrize(("scaling", "h", "s", "original", "base"), _grid())
def test_inv_freq_and_factor_are_transformers(
    scaling: Scaling, h: int, s: float, original: int, base: float
) -> None:
    """Bit for bit: the same float32 operations in the same order (dynamic NTK at L = L₀,
    the frequencies a transformers model makes at start-up)."""
    ours, theirs = _configs(scaling, h, s, original, base)
    inv_freq, attention_factor = inv_freq_and_factor(h, ours, length_read=original)
    want_inv_freq, want_factor = reference.HF_ROPE_INIT_FUNCTIONS[scaling](theirs)
    assert inv_freq.dtype == torch.float32 and inv_freq.shape == (h // 2,)
    assert torch.equal(inv_freq, want_inv_freq)
    assert attention_factor == want_factor
    if scaling == "yarn":
        assert attention_factor == pytest.approx(0.1 * math.log(s) + 1)
    else:
        assert attention_factor == 1.0


@pytest.mark.parametrize("length_read", [1, 8, 16, 17, 64, 100, 1024, 1124, 5000])
@pytest.mark.parametrize(
    ("h", "s", "original", "base"),
    [
        pytest.param(16, 4.0, 16, 10_000.0, id="h16-s4-L0=16"),
        pytest.param(32, 2.0, 64, 500_000.0, id="h32-s2-L0=64-500000"),
        pytest.param(32, 8.0, 1024, 10_000.0, id="h32-s8-L0=1024"),
    ],
)
def test_dynamic_follows_the_length_read(
    h: int, s: float, original: int, base: float, length_read: int
) -> None:
    """A fresh transformers model's first forward over positions 0 … L−1: unscaled up to
    L₀, then the base of ``max(position_ids) + 1``."""
    ours, theirs = _configs("dynamic", h, s, original, base)
    positions = torch.arange(length_read)
    cos, sin = rope_cos_sin(positions, h, ours, length_read=length_read)
    want_cos, want_sin = reference.hf_rotary_cos_sin(theirs, positions)
    assert torch.equal(cos, want_cos) and torch.equal(sin, want_sin)
    inv_freq, _ = inv_freq_and_factor(h, ours, length_read=length_read)
    unscaled, _ = reference.hf_compute_default_rope_parameters(theirs)
    assert torch.equal(inv_freq, unscaled) is (length_read <= original)


@pytest.mark.parametrize(("h", "s", "original", "base"), [(16, 8.0, 64, 10_000.0)])
def test_ntk_keeps_the_fastest_and_divides_the_slowest_by_s(
    h: int, s: float, original: int, base: float
) -> None:
    """NTK-aware scaling's base ``base · s^(h/(h−2))`` is the one whose slowest pair turns
    exactly ``s`` times slower (float32 rounding apart)."""
    ours, theirs = _configs("ntk", h, s, original, base)
    inv_freq, _ = inv_freq_and_factor(h, ours, length_read=original)
    unscaled, _ = reference.hf_compute_default_rope_parameters(theirs)
    assert inv_freq[0] == unscaled[0] == 1.0
    assert float(unscaled[-1] / inv_freq[-1]) == pytest.approx(s, rel=1e-6)


@pytest.mark.parametrize(
    ("h", "s", "original", "base"),
    [
        pytest.param(h, s, original, base, id=f"h{h}-s{s:g}-L0={original}-{base:g}")
        for h, s, original, base in itertools.product(HEAD_DIMS, FACTORS, ORIGINAL_LENGTHS, BASES)
    ],
)
def test_llama3_is_the_books_compute_rope_params(
    h: int, s: float, original: int, base: float
) -> None:
    """The book's llama3.py writes the smooth blend ``(1 − smooth) · (inv_freq / s)`` where
    transformers writes ``(1 − smooth) · inv_freq / s``: the same floats when ``s`` is a power
    of two (dividing by it is exact), as every ``s`` here is."""
    config = RopeConfig(base=base, scaling="llama3", factor=s, original_length=original)
    n = 64
    cos, sin = rope_cos_sin(torch.arange(n), h, config, length_read=n)
    freq_config = {
        "factor": s,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_context_length": original,
    }
    book_cos, book_sin = reference.compute_rope_params(h, base, n, freq_config=freq_config)
    assert torch.equal(cos, book_cos) and torch.equal(sin, book_sin)


# --- RoPE as posviz has it today ---------------------------------------------------------------


@pytest.mark.parametrize("context_length", [1, 5, 64, 1024])
@pytest.mark.parametrize("head_dim", [1, 2, 3, 16, 33, 64])
def test_default_is_todays_rope(context_length: int, head_dim: int) -> None:
    config = RopeConfig(original_length=context_length)
    positions = torch.arange(context_length)
    angles = scaled_rope_angles(positions, head_dim, config, length_read=context_length)
    assert torch.equal(angles, schemes.rope_angles(context_length, head_dim))
    cos, sin = rope_cos_sin(positions, head_dim, config, length_read=context_length)
    x = reference.random_rows(context_length, head_dim, seed=head_dim).double()
    assert torch.equal(rotate(x, cos, sin), schemes.rope_rotate(x, angles))


# --- the attention scores ----------------------------------------------------------------------


@pytest.mark.parametrize("shift", [0, 8, 100], ids=lambda m: f"M={m}")
@pytest.mark.parametrize(("scaling", "h", "s", "original", "base"), _grid())
def test_scores_are_transformers(
    scaling: Scaling, h: int, s: float, original: int, base: float, shift: int
) -> None:
    """A seeded head's queries and keys (float64, as posviz projects them) at positions
    ``M … M+n−1``, rotated by cos·factor and sin·factor: ``q · kᵀ / √h`` bit for bit."""
    ours, theirs = _configs(scaling, h, s, original, base)
    n = 12
    queries = reference.random_rows(n, h, seed=1).double()  # [n, h]
    keys = reference.random_rows(n, h, seed=2).double()
    positions = torch.arange(shift, shift + n)
    cos, sin = rope_cos_sin(positions, h, ours, length_read=shift + n)
    scores = rotate(queries, cos, sin) @ rotate(keys, cos, sin).T / h**0.5  # [n, n]
    want_cos, want_sin = reference.hf_rotary_cos_sin(theirs, positions)
    assert torch.equal(scores, reference.hf_rope_scores(queries, keys, want_cos, want_sin))


def test_a_shift_past_the_original_length_changes_dynamic_scores() -> None:
    """Dynamic NTK reads the length: the same window moved from 0 to 8 reads 20 > L₀ = 16
    tokens, a larger base, other scores; the other scalings keep RoPE's relative scores."""
    n, h = 12, 16
    queries = reference.random_rows(n, h, seed=1).double()
    keys = reference.random_rows(n, h, seed=2).double()
    for scaling in SCALINGS:
        config = RopeConfig(scaling=scaling, factor=4.0, original_length=16)
        at = []
        for shift in (0, 8):
            cos, sin = rope_cos_sin(
                torch.arange(shift, shift + n), h, config, length_read=shift + n
            )
            at.append(rotate(queries, cos, sin) @ rotate(keys, cos, sin).T / h**0.5)
        change = float((at[0] - at[1]).abs().max())
        assert (change > 1e-2) is (scaling == "dynamic"), (scaling, change)


# --- the checks ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        pytest.param({"factor": 0.5}, ("0.5", "from 1 to 128", "s = 1"), id="factor-below-1"),
        pytest.param({"factor": 129.0}, ("129.0", "from 1 to 128"), id="factor-too-large"),
        pytest.param({"factor": math.nan}, ("nan", "from 1 to 128"), id="factor-nan"),
        pytest.param({"factor": True}, ("True", "from 1 to 128"), id="factor-bool"),
        pytest.param({"factor": "4"}, ("'4'", "from 1 to 128"), id="factor-text"),
        pytest.param({"base": 1.0}, ("1.0", "above 1", "10,000,000", "500,000"), id="base-1"),
        pytest.param({"base": 2e7}, ("20000000.0", "10,000,000"), id="base-too-large"),
        pytest.param({"base": math.inf}, ("inf", "above 1"), id="base-inf"),
        pytest.param({"original_length": 0}, ("got 0", "from 1 to 131,072"), id="original-0"),
        pytest.param({"original_length": 131_073}, ("131073", "131,072"), id="original-too-long"),
        pytest.param({"original_length": 16.0}, ("16.0", "whole number"), id="original-float"),
        pytest.param(
            {"scaling": "rope"}, ("'rope'", "linear, ntk", "default"), id="scaling-unknown"
        ),
    ],
)
def test_bad_values_are_named(fields: dict[str, object], words: tuple[str, ...]) -> None:
    settings: dict[str, object] = {"original_length": 16, **fields}
    with pytest.raises(ValueError) as error:
        RopeConfig(**settings)  # type: ignore[arg-type]
    for word in words:
        assert word in str(error.value)


def test_check_returns_a_good_config() -> None:
    config = RopeConfig(base=500_000.0, scaling="llama3", factor=8.0, original_length=1024)
    assert check_rope(config) is config
    assert RopeConfig(base=10_000_000.0, factor=1.0, original_length=131_072).factor == 1.0


@pytest.mark.parametrize(
    ("head_dim", "length_read", "scaling", "words"),
    [
        pytest.param(0, 16, "default", ("head_dim", "got 0"), id="head_dim-0"),
        pytest.param(16, 0, "dynamic", ("length_read", "got 0"), id="length_read-0"),
        pytest.param(2, 16, "ntk", ("4 or more", "head_dim 2", "fewer heads"), id="ntk-h2"),
        pytest.param(3, 16, "dynamic", ("4 or more", "head_dim 3"), id="dynamic-h3"),
    ],
)
def test_bad_head_dim_or_length_read(
    head_dim: int, length_read: int, scaling: Scaling, words: tuple[str, ...]
) -> None:
    config = RopeConfig(scaling=scaling, original_length=16)
    with pytest.raises(ValueError) as error:
        inv_freq_and_factor(head_dim, config, length_read=length_read)
    for word in words:
        assert word in str(error.value)


@pytest.mark.parametrize("scaling", SCALINGS)
def test_odd_and_tiny_head_dims(scaling: Scaling) -> None:
    """An odd last dimension is scaled like the rest (cos = factor, sin = 0), not rotated; a
    head of one dimension has no pair to scale."""
    config = RopeConfig(scaling=scaling, original_length=16)
    cos, sin = rope_cos_sin(torch.arange(20), 5, config, length_read=20)  # [20, 5]
    _, factor = inv_freq_and_factor(5, config, length_read=20)
    assert torch.equal(cos[:, -1], torch.full((20,), factor)) and not sin[:, -1].any()
    facts = scaling_facts(1, config, length_read=20)
    assert facts.pairs == ()
    assert "rotates none" in scaling_sentence(facts)


# --- the facts and the sentence ------------------------------------------------------------------


def _reference_counts(
    scaling: Scaling, theirs: reference.HFRopeConfig, s: float, length_read: int
) -> tuple[list[float], int, int, int]:
    """Each pair's divisor (unscaled over scaled frequency, from the reference) and how many
    are kept (divisor 1), divided (divisor s, or dynamic NTK's stretch) and between."""
    if scaling == "dynamic":  # what a fresh model's forward uses at this length
        original = theirs.max_position_embeddings
        seq_len = torch.tensor(length_read) if length_read > original else None
        inv_freq = reference.hf_compute_dynamic_ntk_parameters(theirs, seq_len=seq_len)[0]
        full = max(s * length_read / original - (s - 1), 1.0)  # the slowest pair's divisor
    else:
        inv_freq = reference.HF_ROPE_INIT_FUNCTIONS[scaling](theirs)[0]
        full = s
    unscaled = reference.hf_compute_default_rope_parameters(theirs)[0]
    divisors = (unscaled.double() / inv_freq.double()).tolist()
    kept = sum(math.isclose(d, 1.0, rel_tol=1e-5) for d in divisors)
    divided = sum(math.isclose(d, full, rel_tol=1e-5) for d in divisors) if full != 1 else 0
    return divisors, kept, divided, len(divisors) - kept - divided


def _said(sentence: str, verb_group: str, adjective: str) -> int:
    """How many pairs the sentence says a group has: ``keeps all 16`` 16, ``keeps the
    fastest`` 1, ``divides the 9 slowest`` 9, ``the one between`` 1; 0 if not named."""
    match = re.search(
        rf"{verb_group}(all (\d+)|the (\d+ )?{adjective}|the one {adjective})", sentence
    )
    if match is None:
        return 0
    number = match.group(2) or match.group(3)
    return int(number) if number else 1


@pytest.mark.parametrize(("scaling", "h", "s", "original", "base"), _grid())
def test_sentence_counts_are_the_references(
    scaling: Scaling, h: int, s: float, original: int, base: float
) -> None:
    ours, theirs = _configs(scaling, h, s, original, base)
    length_read = 2 * original if scaling == "dynamic" else original
    facts = scaling_facts(h, ours, length_read=length_read)
    divisors, kept, divided, between = _reference_counts(scaling, theirs, s, length_read)
    assert [facts.count(t) for t in ("kept", "divided", "blended")] == [kept, divided, between]
    assert [p.divisor for p in facts.pairs] == pytest.approx(divisors, rel=1e-12)
    order = {"kept": 0, "blended": 1, "divided": 2}  # fastest kept, slowest divided
    assert [order[p.treatment] for p in facts.pairs] == sorted(
        order[p.treatment] for p in facts.pairs
    )
    sentence = scaling_sentence(facts)
    total = h // 2
    assert _said(sentence, "keeps ", "fastest") == kept
    assert _said(sentence, "divides ", "slowest") == divided
    if kept and divided:
        assert _said(sentence, "and ", "between") == between
    assert f"{total} frequency pairs" in sentence
    if divided:  # "divides the 9 slowest (of 16 ...) by 4"; dynamic NTK at 2 L₀: by s + 1
        by = f"{s + 1:g}" if scaling == "dynamic" else f"{s:g}"
        assert re.search(rf"divides [^,;:]*? by {by}(?![\d.])", sentence), sentence
    if scaling == "yarn":
        assert f"multiplied by {0.1 * math.log(s) + 1:.4g}" in sentence
    if scaling in ("ntk", "dynamic"):
        pattern = r"to ([\d,.]+) \(" if scaling == "ntk" else r"\) = ([\d,.]+), so"
        said = re.search(pattern, sentence)
        assert said is not None, sentence
        said_base = float(said.group(1).replace(",", ""))
        if scaling == "ntk":
            want_base = base * s ** (h / (h - 2))
        else:
            want_base = base * (s * length_read / original - (s - 1)) ** (h / (h - 2))
        assert said_base == pytest.approx(want_base, abs=1.0, rel=1e-6)


@pytest.mark.parametrize(
    ("scaling", "h", "s", "original", "length_read", "sentence"),
    [
        pytest.param(
            "yarn",
            32,
            4.0,
            64,
            64,
            "YaRN with s = 4 keeps the fastest of 16 frequency pairs, divides the 11 slowest by "
            "4 and the 4 between by 1.18 to 2.5; cos and sin are multiplied by 1.139 "
            "(0.1 · ln 4 + 1), so every score by its square.",
            id="yarn",
        ),
        pytest.param(
            "ntk",
            16,
            4.0,
            64,
            64,
            "NTK-aware scaling with s = 4 raises the base from 10,000 to 48,761 (10,000 · "
            "4^(16/14)): it keeps the fastest of 8 frequency pairs, divides the slowest by 4 "
            "and the 6 between by 1.22 to 3.28.",
            id="ntk",
        ),
        pytest.param(
            "dynamic",
            16,
            4.0,
            16,
            12,
            "Dynamic NTK's base depends on the length read: at 12 tokens read (no more than "
            "L₀ = 16) it stays 10,000 and the scaling keeps all 8 frequency pairs; past 16 "
            "tokens the base grows.",
            id="dynamic-short",
        ),
        pytest.param(
            "default",
            4,
            4.0,
            16,
            16,
            "RoPE with base 10,000 and no scaling keeps all 2 frequency pairs: wavelengths "
            "from 6.28 to 628 positions.",
            id="default",
        ),
    ],
)
def test_sentences_read(
    scaling: Scaling, h: int, s: float, original: int, length_read: int, sentence: str
) -> None:
    config = RopeConfig(scaling=scaling, factor=s, original_length=original)
    assert scaling_sentence(scaling_facts(h, config, length_read=length_read)) == sentence
