"""RoPE's context extensions in the views (issue 40, item 4): the Attention view's scores under
each scaling, at 0 … n−1 and shifted, against transformers' rotary embedding as
``tests/reference.py`` transcribes it (applied to the book's ``MultiHeadAttention`` head); the
Distance and Geometry views' RoPE following the variant; the sentences; links, the command
line and the notebook carrying the four options; bad values named with their range."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest
import reference
import torch

from posviz.cli import main
from posviz.config import (
    Settings,
    SettingsError,
    check_heads,
    settings_from_widgets,
    validate,
    widget_values,
    with_options,
)
from posviz.distance import build_distance
from posviz.geometry import build_geometry
from posviz.lesson.attention import sentences as attention_sentences
from posviz.lesson.attention import shift_sentence
from posviz.lesson.distance import sentences as distance_sentences
from posviz.lesson.geometry import sentences as geometry_sentences
from posviz.notebook import show
from posviz.plots.attention import AttentionDecisions
from posviz.plots.distance import DistanceDecisions
from posviz.plots.geometry import GeometryDecisions
from posviz.query import query_from_settings, read_link
from posviz.schemes import ROPE
from posviz.scores import build_attention
from posviz.view import build_view

ROSE = "A rose is a rose is a rose."
SCALED = ("linear", "ntk", "dynamic", "ntk_parts", "yarn", "llama3")


def _settings(scaling: str, **fields: object) -> Settings:
    base = {"text": ROSE, "emb_dim": 32, "heads": 2, "head": 1, "scheme": "rope"}
    return with_options(
        Settings(**{**base, **fields}),  # type: ignore[arg-type]
        rope_scaling=scaling,
        rope_factor=4.0,
    )


def _reference_scores(
    settings: Settings, token_ids: Sequence[int], *, start: int, original: int
) -> torch.Tensor:
    """Head K's scaled scores ``[n, n]`` for the window at ``start … start+n−1``: the book's
    ``MultiHeadAttention`` projections (float64) rotated as transformers' fresh
    ``LlamaRotaryEmbedding`` does (its ``cos`` and ``sin`` times the attention scaling)."""
    token_layer, _ = reference.book_layers(settings.seed, settings.emb_dim, settings.context_length)
    n = len(token_ids)
    module = reference.book_multi_head(settings.emb_dim, settings.heads, context_length=start + n)
    with torch.no_grad():
        x = token_layer(torch.tensor(list(token_ids))).double()  # [n, d]
        head_dim = module.head_dim
        rows = slice(settings.head * head_dim, (settings.head + 1) * head_dim)
        queries = module.W_query(x)[:, rows]  # [n, dh]
        keys = module.W_key(x)[:, rows]
    config = reference.hf_rope_config(
        str(settings.option("rope_scaling")),
        head_dim=head_dim,
        base=float(settings.option("rope_base")),
        factor=float(settings.option("rope_factor")),
        original_length=original,
    )
    cos, sin = reference.hf_rotary_cos_sin(config, torch.arange(start, start + n))
    return reference.hf_rope_scores(queries, keys, cos, sin)


@pytest.mark.parametrize("shift", [0, 5, 20], ids=lambda m: f"M={m}")
@pytest.mark.parametrize("scaling", SCALED)
def test_attention_scores_are_transformers(scaling: str, shift: int) -> None:
    settings = _settings(scaling, shift=shift)
    view = build_attention(build_view(settings))
    want = _reference_scores(settings, view.token_ids, start=shift, original=16)
    keep = torch.ones_like(want, dtype=torch.bool).tril()
    torch.testing.assert_close(view.shown.scores[keep], want[keep], rtol=0, atol=1e-6)
    default = build_attention(build_view(with_options(settings, rope_scaling="default")))
    same = torch.allclose(default.shown.scores[keep], view.shown.scores[keep], atol=1e-4)
    # dynamic NTK is RoPE itself until the input reads more than L₀ = 16 positions
    assert same is (scaling == "dynamic" and shift + len(view.token_ids) <= 16)


@pytest.mark.parametrize("scaling", SCALED)
def test_the_shift_test_changes_only_dynamic_and_says_why(scaling: str) -> None:
    """20 positions later the 9 tokens read 29 > L₀ = 16 positions: dynamic NTK's base grows,
    the scores at 20 … 28 are transformers' there and differ from those at 0 … 8."""
    view = build_attention(build_view(_settings(scaling, shift=20)))
    test = view.shift_test
    assert test.moved and test.scores_change is not None
    said = shift_sentence(view, markdown=False)
    if scaling == "dynamic":
        at_start = _reference_scores(view.settings, view.token_ids, start=0, original=16)
        keep = torch.ones_like(at_start, dtype=torch.bool).tril()
        change = float((view.shown.scores - at_start)[keep].abs().max())
        assert test.scores_change == pytest.approx(change, abs=1e-6) and change > 1e-2
        assert "base depends on how long the input is" in said
        assert "29 positions, past L₀ = 16" in said and "10,000 (positions 0–8)" in said
    else:
        assert test.unchanged and "unchanged" in said
        assert "depends on how long" not in said


def test_a_dynamic_shift_within_the_original_length_says_when_it_would_change() -> None:
    view = build_attention(build_view(_settings("dynamic", shift=3)))
    assert view.shift_test.unchanged
    said = shift_sentence(view, markdown=False)
    assert "12 positions are no more than L₀ = 16, so its base stays 10,000" in said


def test_the_attention_sentence_says_what_yarn_did() -> None:
    """The issue's example sentence, read from the numbers: head dim 32 (emb_dim 64, 2 heads),
    16 pairs, L₀ = 64. YaRN's ramp runs from pair floor(32·ln(64/(2π·32))/(2 ln 10⁴)) = −2 → 0
    to ceil(32·ln(64/2π)/(2 ln 10⁴)) = 5: pair 0 kept, 1–4 blended, 5–15 divided by 4."""
    settings = with_options(_settings("yarn", emb_dim=64, context_length=64), rope_original=64)
    view = build_attention(build_view(settings))
    found = attention_sentences(view, _no_decisions(), markdown=False)
    (yarn,) = [s for s in found if s.startswith("YaRN")]
    assert yarn.startswith(
        "YaRN with s = 4 keeps the fastest of 16 frequency pairs, divides the 11 slowest by 4 "
        "and the 4 between by"
    )
    assert "multiplied by 1.139 (0.1 · ln 4 + 1)" in yarn


def _no_decisions() -> AttentionDecisions:
    """The figure's decisions the sentences read: every row drawn."""
    return AttentionDecisions(
        columns=4, heads=2, head=1, tokens=9, step=1, drawn=9, hover="all", start=0,
        formula=False,
    )  # fmt: skip


def test_the_default_says_nothing_new() -> None:
    view = build_attention(build_view(_settings("default")))
    found = attention_sentences(view, _no_decisions(), markdown=False)
    assert not any("frequency pair" in s for s in found)


def _rope_curve_reference(
    token_embeddings: torch.Tensor, rows: int, scaling: str, original: int
) -> np.ndarray:
    """Each unit token vector rotated by transformers' cos/sin (read at ``rows`` positions) to
    every position; the cosine of rows ``i`` and ``i + k`` averaged over tokens and ``i``."""
    d = token_embeddings.shape[1]
    config = reference.hf_rope_config(
        scaling, head_dim=d, base=10_000.0, factor=4.0, original_length=original
    )
    cos, sin = reference.hf_rotary_cos_sin(config, torch.arange(rows))  # [P, d]
    unit = torch.nn.functional.normalize(token_embeddings.double(), dim=1)  # [n, d]
    rotated = unit[:, None, :] * cos + reference.rotate_half(unit)[:, None, :] * sin  # [n, P, d]
    rotated = torch.nn.functional.normalize(rotated, dim=2)
    similarity = (rotated @ rotated.transpose(1, 2)).mean(dim=0).numpy()  # [P, P]
    return np.array([np.diagonal(similarity, k).mean() for k in range(rows)])


@pytest.mark.parametrize("scaling", SCALED)
def test_distance_and_geometry_follow_the_variant(scaling: str) -> None:
    settings = _settings(scaling, context_length=12, emb_dim=8, heads=1, head=0)
    view = build_view(settings)
    assert view.embeddings is not None
    distance = build_distance(view, beyond=8)
    (rope,) = [c for c in distance.curves if c.scheme is ROPE]
    want = _rope_curve_reference(view.embeddings.token_embeddings, 20, scaling, 12)
    np.testing.assert_allclose(rope.mean.numpy(), want, atol=2e-5)
    plain = _rope_curve_reference(view.embeddings.token_embeddings, 20, "default", 12)
    assert not np.allclose(rope.mean.numpy(), plain, atol=1e-3)
    said = distance_sentences(distance, _distance_decisions())
    assert any(s.startswith(f"**{rope.label}**: ") and "frequency pair" in s for s in said)

    geometry = build_geometry(view)
    config = reference.hf_rope_config(
        scaling, head_dim=8, base=10_000.0, factor=4.0, original_length=12
    )
    cos, sin = reference.hf_rotary_cos_sin(config, torch.arange(12))
    factor = float(cos[0, 0])  # YaRN's attention scaling (cos 0 = 1), else 1
    table = geometry.main.table.table
    torch.testing.assert_close(table[:, :4], cos[:, :4] / factor, rtol=0, atol=1e-6)
    torch.testing.assert_close(table[:, 4:], sin[:, :4] / factor, rtol=0, atol=1e-6)
    geometry_said = geometry_sentences(geometry, _geometry_decisions())
    assert any("frequency pair" in s for s in geometry_said)


def _distance_decisions() -> DistanceDecisions:
    return DistanceDecisions(stacked=False, curves=(), distances=20, context_length=12, fills=False)


def _geometry_decisions() -> GeometryDecisions:
    return GeometryDecisions(
        stacked=False, spectrum=False, tables=("RoPE", "learned"), components=(3, 3), fills=False
    )


# --- the options through every door -------------------------------------------------------------

LINK = {
    "scheme": "rope",
    "rope_base": "500000",
    "rope_factor": "8",
    "rope_original": "32",
    "rope_scaling": "yarn",
}


def test_the_link_carries_the_four_options() -> None:
    link = read_link(LINK)
    assert link.notices == ()
    options = link.settings.options()
    assert (options["rope_scaling"], options["rope_factor"]) == ("yarn", 8.0)
    assert (options["rope_original"], options["rope_base"]) == (32, 500_000.0)
    assert query_from_settings(link.settings) == LINK
    assert read_link(query_from_settings(link.settings)).settings == link.settings


def test_the_original_length_follows_the_context_length_until_set() -> None:
    assert Settings(context_length=32).options()["rope_original"] == 32
    assert read_link({"context_length": "64"}).settings.option("rope_original") == 64
    fixed = with_options(Settings(context_length=32), rope_original=32)
    assert fixed.option("rope_original") == 32
    values = widget_values(Settings(context_length=32))
    assert values["rope_original"] is None  # an empty box: T
    assert settings_from_widgets(values) == Settings(context_length=32)
    assert widget_values(fixed)["rope_original"] == 32
    assert settings_from_widgets(widget_values(fixed)) == fixed


@pytest.mark.parametrize(
    ("name", "raw", "said"),
    [
        pytest.param(
            "rope_factor", "0.5", "rope_factor must be a number from 1 to 128, got 0.5", id="s"
        ),
        pytest.param(
            "rope_original",
            "0",
            "rope_original must be a whole number from 1 to 131,072, got 0",
            id="L0",
        ),
        pytest.param(
            "rope_scaling",
            "longrope",
            "rope_scaling must be one of default, linear, ntk, dynamic, ntk_parts, yarn, llama3, "
            "got 'longrope'",
            id="scaling",
        ),
    ],
)
def test_a_bad_link_value_is_named_and_the_rest_kept(name: str, raw: str, said: str) -> None:
    link = read_link({**LINK, name: raw})
    (notice,) = link.notices
    assert notice.startswith(f"{name}: ") and said in notice
    kept = {k: v for k, v in LINK.items() if k != name}
    assert {k: v for k, v in query_from_settings(link.settings).items() if k != name} == kept


def test_the_command_line_carries_the_four_options(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--text", ROSE, "--scheme", "rope", "--emb-dim", "32", "--view", "attention"]
    flags = ["--rope-scaling", "yarn", "--rope-factor", "8", "--rope-original", "32"]
    assert main([*argv, *flags, "--rope-base", "500000", "--lesson"]) == 0
    out = capsys.readouterr().out
    assert "YaRN with s = 8" in out


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--rope-factor", "200", "rope_factor must be a number from 1 to 128, got 200"),
        ("--rope-original", "-3", "rope_original must be a whole number from 1 to 131,072"),
        ("--rope-scaling", "longrope", "rope_scaling must be one of default, linear, ntk"),
    ],
)
def test_a_bad_flag_names_the_range(
    flag: str, value: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--scheme", "rope", flag, value])
    assert exit_info.value.code == 2
    assert said in capsys.readouterr().err


def test_the_notebook_draws_the_variant() -> None:
    figure = show(
        ROSE, view="attention", scheme="rope", emb_dim=32, heads=2, head=1, shift=20,
        rope_scaling="dynamic", rope_factor=4.0,
    )  # fmt: skip
    settings = _settings("dynamic", shift=20)
    view = build_attention(build_view(settings))
    want = _reference_scores(settings, view.token_ids, start=20, original=16).numpy()
    traces = [t for t in figure.data if t.type == "heatmap"]
    z = np.asarray(traces[2].z, dtype=np.float64)
    below = np.tril(np.ones_like(want, dtype=bool))
    np.testing.assert_allclose(z[below], want[below], atol=1e-6)
    with pytest.raises(SettingsError, match=re.escape("from 1 to 128, got 0.5")):
        show(ROSE, scheme="rope", rope_factor=0.5)


@pytest.mark.parametrize("scaling", ["ntk", "dynamic"])
def test_ntk_needs_a_head_dimension_of_4(scaling: str) -> None:
    settings = _settings(scaling, emb_dim=8, heads=4, head=0)
    validate(settings)  # the other views rotate all 8 columns
    with pytest.raises(SettingsError) as error:
        check_heads(settings)
    said = str(error.value)
    assert f"rope_scaling={scaling}" in said and "emb_dim 8 / heads 4 = 2" in said
    assert "fewer heads" in said
    with pytest.raises(SettingsError, match=re.escape("emb_dim 2 = 2: choose a larger emb_dim")):
        validate(_settings(scaling, emb_dim=2, heads=1, head=0))
    check_heads(_settings("yarn", emb_dim=8, heads=4, head=0))  # the others: any even h
