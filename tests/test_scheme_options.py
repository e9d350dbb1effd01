"""A scheme's options, declared once in its spec (RoPE's base), through every door: Settings
and its check, a link, the command line, the sidebar's widgets, and the numbers of every view
that shows the scheme, against tests/reference.py (the book's RoPE with its ``theta_base``)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from reference import (
    book_head_attention,
    book_window,
    compute_rope,
    precompute_rope_params,
    rope_cos_sin,
    rope_scores,
)

from posviz.cli import main
from posviz.config import (
    Settings,
    SettingsError,
    settings_from_widgets,
    validate,
    widget_values,
    with_options,
)
from posviz.distance import build_distance
from posviz.geometry import build_geometry
from posviz.notebook import show
from posviz.query import query_from_settings, read_link
from posviz.schemes import OPTIONS, ROPE, SchemeOption
from posviz.scores import build_attention
from posviz.tokenizer import encode
from posviz.view import build_view, build_word_order

LLAMA3_BASE = 500_000.0
ROSE = "A rose is a rose is a rose."


def test_rope_declares_its_base_and_every_door_knows_it() -> None:
    assert [o.name for o in ROPE.options] == [
        "rope_base",
        "rope_scaling",
        "rope_factor",
        "rope_original",
    ]
    assert OPTIONS["rope_base"].default == 10_000.0
    assert Settings().option("rope_base") == 10_000.0
    assert with_options(Settings(), rope_base=LLAMA3_BASE).option("rope_base") == LLAMA3_BASE
    with pytest.raises(SettingsError, match="no positional scheme has an option 'rope_bass'"):
        Settings().option("rope_bass")


def test_an_option_at_its_default_is_not_kept() -> None:
    changed = with_options(Settings(), rope_base=LLAMA3_BASE)
    assert changed.scheme_options == (("rope_base", LLAMA3_BASE),)
    assert with_options(changed, rope_base=10_000.0) == Settings()
    assert hash(changed) != hash(Settings())  # a cache key


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(1.0, "rope_base must be a number from 2 to 10,000,000, got 1", id="low"),
        pytest.param(2e7, "got 20,000,000; choose one in that range (default 10,000)", id="high"),
        pytest.param(float("inf"), "got inf", id="inf"),
        pytest.param("big", "got 'big'", id="text"),
    ],
)
def test_validate_names_value_range_and_fix(value: object, message: str) -> None:
    settings = Settings(scheme="rope", scheme_options=(("rope_base", value),))  # type: ignore[arg-type]
    with pytest.raises(SettingsError, match=re.escape(message)):
        validate(settings)


def test_validate_refuses_an_unknown_option() -> None:
    with pytest.raises(SettingsError, match="no positional scheme has an option 'theta'"):
        validate(Settings(scheme_options=(("theta", 3.0),)))


def test_the_link_reads_and_writes_the_option() -> None:
    link = read_link({"scheme": "rope", "rope_base": "500000"})
    assert link.notices == ()
    assert link.settings.option("rope_base") == LLAMA3_BASE
    params = query_from_settings(link.settings)
    assert params == {"scheme": "rope", "rope_base": "500000"}
    assert read_link(params).settings == link.settings
    assert "rope_base" not in query_from_settings(Settings(scheme="rope"))


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        pytest.param("1", "rope_base must be a number from 2 to 10,000,000, got 1", id="low"),
        pytest.param("ten", "got 'ten'", id="text"),
        pytest.param("nan", "got nan", id="nan"),
    ],
)
def test_a_bad_link_value_keeps_the_default_and_says_why(raw: str, said: str) -> None:
    link = read_link({"scheme": "rope", "rope_base": raw})
    assert link.settings.option("rope_base") == 10_000.0
    (notice,) = link.notices
    assert notice.startswith("rope_base: ") and said in notice and notice.endswith("using 10000")


def test_the_widgets_carry_the_option_under_its_name() -> None:
    settings = with_options(Settings(scheme="rope"), rope_base=LLAMA3_BASE)
    values = widget_values(settings)
    assert values["rope_base"] == LLAMA3_BASE and "scheme_options" not in values
    assert settings_from_widgets(values) == settings
    assert settings_from_widgets(widget_values(Settings())) == Settings()


def test_the_command_line_flag_changes_the_rotation(tmp_path: Path) -> None:
    npy = tmp_path / "m.npy"
    argv = ["--text", ROSE, "--context-length", "16", "--emb-dim", "8", "--scheme", "rope"]
    assert main([*argv, "--rope-base", "500000", "--npy", str(npy)]) == 0
    array = np.load(npy, allow_pickle=False)
    ids = encode(ROSE)
    want = book_window(
        "rope", seed=123, emb_dim=8, context_length=16, token_ids=ids, theta_base=LLAMA3_BASE
    )
    assert np.array_equal(array, np.stack([m.numpy() for m in want]))
    default = book_window("rope", seed=123, emb_dim=8, context_length=16, token_ids=ids)
    assert not np.array_equal(array[2], default[2].numpy())  # the base made a difference


def test_a_bad_flag_is_a_usage_error_naming_the_range(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--scheme", "rope", "--rope-base", "0.5"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "argument --rope-base: rope_base must be a number from 2 to 10,000,000, got 0.5" in error


@pytest.mark.parametrize("shift", [0, 5], ids=["at-0", "shift-5"])
def test_attention_scores_use_the_base(shift: int) -> None:
    settings = with_options(
        Settings(text=ROSE, emb_dim=32, heads=2, head=1, shift=shift, scheme="rope"),
        rope_base=LLAMA3_BASE,
    )
    view = build_attention(build_view(settings))
    scores, _ = book_head_attention(
        "rope", seed=123, emb_dim=32, context_length=16, token_ids=view.token_ids,
        num_heads=2, head=1, start=shift, theta_base=LLAMA3_BASE,
    )  # fmt: skip
    keep = torch.ones_like(scores, dtype=torch.bool).tril()
    torch.testing.assert_close(view.shown.scores[keep], scores[keep], rtol=0, atol=1e-9)
    default = build_attention(build_view(with_options(settings, rope_base=10_000.0)))
    assert not torch.allclose(default.shown.scores[keep], view.shown.scores[keep])


def test_geometry_and_distance_use_the_base() -> None:
    settings = with_options(
        Settings(text=ROSE, context_length=12, emb_dim=8, scheme="rope"), rope_base=100.0
    )
    geometry = build_geometry(build_view(settings))
    table = geometry.main.table.table
    assert torch.allclose(table, rope_cos_sin(12, 8, theta_base=100.0), atol=1e-6, rtol=0)
    assert not torch.allclose(table, rope_cos_sin(12, 8), atol=1e-3, rtol=0)
    view = build_view(settings)
    distance = build_distance(view, beyond=4)
    rope = distance.curves[2]
    assert rope.scheme is ROPE
    assert view.embeddings is not None
    scores = rope_scores(view.embeddings.token_embeddings, 16, theta_base=100.0)
    np.testing.assert_allclose(
        rope.mean.numpy(), [np.diagonal(scores, k).mean() for k in range(16)], atol=1e-12
    )


def test_word_order_rotates_its_queries_with_the_base() -> None:
    settings = with_options(
        Settings(
            text="The dog bites the man", compare_text="The man bites the dog", emb_dim=8,
            scheme="rope",
        ),
        rope_base=100.0,
    )  # fmt: skip
    comparison = build_word_order(build_view(settings))
    assert comparison.without_positions is not None and comparison.with_positions is not None
    plain = comparison.without_positions.attention_a.queries  # [n, d], not rotated
    n = plain.shape[0]
    cos, sin = precompute_rope_params(8, 100.0, context_length=n)
    want = compute_rope(plain[None, None], cos, sin)[0, 0]
    rotated = comparison.with_positions.attention_a.queries
    torch.testing.assert_close(rotated, want, rtol=0, atol=1e-12)
    default = build_word_order(build_view(with_options(settings, rope_base=10_000.0)))
    assert default.with_positions is not None
    assert not torch.allclose(default.with_positions.attention_a.queries, rotated)


def test_the_notebook_takes_the_option_by_name() -> None:
    figure = show(ROSE, scheme="rope", emb_dim=8, rope_base=LLAMA3_BASE)
    ids = encode(ROSE)
    want = book_window(
        "rope", seed=123, emb_dim=8, context_length=16, token_ids=ids, theta_base=LLAMA3_BASE
    )
    rotated = np.asarray(figure.data[2].z, dtype=np.float32)
    np.testing.assert_array_equal(rotated, want[2].numpy())


def test_an_option_may_take_its_default_from_another_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """RoPE's original length L₀ defaults to the context length T: an option names the field."""
    declared = SchemeOption(
        "x_original", "L₀", "the length trained on", "int", 16, low=1, high=1024,
        follows="context_length",
    )  # fmt: skip
    monkeypatch.setitem(OPTIONS, "x_original", declared)
    settings = Settings(context_length=32)
    assert settings.option("x_original") == 32
    assert with_options(settings, x_original=None).scheme_options == ()  # unset: follows T
    # set, it stays when T changes, also while it equals T
    assert with_options(settings, x_original=32).scheme_options == (("x_original", 32),)
    chosen = validate(with_options(settings, x_original=64))
    assert chosen.option("x_original") == 64
    assert query_from_settings(chosen) == {"context_length": "32", "x_original": "64"}
    assert declared.check(0) == (
        "x_original must be a whole number from 1 to 1,024, got 0; choose one in that range "
        "(default the context_length)"
    )
