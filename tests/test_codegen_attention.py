"""The Attention part of the "Show the code" script: run on its own, in a fresh interpreter
without posviz and offline (tests/reproduce.py), it prints the scores and weights posviz
shows, for every scheme, and the shift test's numbers (or torch's error past a learned table).

posviz projects only the shown head's columns and the script the book's whole
MultiHeadAttention, so the float64 sums run in another order: equal to 1e-12."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
from reference import embedding_error_past_the_end
from reproduce import run_scripts_saved

from posviz.codegen import reproduction_script
from posviz.config import SCHEMES, Settings, SettingsError
from posviz.scores import build_attention
from posviz.view import build_view

ROSE = "A rose is a rose is a rose."
CASES = [
    Settings(text=ROSE, scheme=scheme, heads=heads, head=head, shift=shift, emb_dim=emb_dim)  # type: ignore[arg-type]
    for scheme in SCHEMES
    for heads, head, shift, emb_dim in ((4, 3, 0, 64), (6, 5, 5, 48))
] + [
    Settings(text=ROSE, scheme="learned", shift=8),  # positions 8 ... 16: past nn.Embedding(16, 64)
    Settings(text=ROSE, scheme="rope", heads=12, head=11, emb_dim=96, shift=600),
]


def _close(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.shape == want.shape and got.dtype == torch.float64
    assert torch.equal(got.isnan(), want.isnan())
    keep = ~want.isnan()
    scale = max(1.0, float(want[keep].abs().max()))
    torch.testing.assert_close(got[keep], want[keep], rtol=0, atol=1e-12 * scale)


@pytest.mark.slow
def test_the_script_prints_posvizs_scores_and_weights(tmp_path: Path) -> None:
    scripts = [reproduction_script(settings, view="attention") for settings in CASES]
    saved, stdout = run_scripts_saved(scripts, tmp_path)
    assert stdout.count("attention scores [n, n]") == len(CASES)
    for settings, entry in zip(CASES, saved, strict=True):
        view = build_attention(build_view(settings))
        shown = view.shown
        _close(entry["attn_scores"], shown.scores)
        _close(entry["attn_weights"], shown.weights)
        _close(entry["content_scores"], shown.content)
        _close(entry["position_part"], shown.position)
        test = view.shift_test
        if test.shift and test.moved:
            assert entry["scores_change"] == pytest.approx(test.scores_change, abs=1e-12)
            assert entry["weights_change"] == pytest.approx(test.weights_change, abs=1e-12)
        if not test.moved:
            assert entry["shift_error"] == test.error == embedding_error_past_the_end(16, 64)
        else:
            assert entry["shift_error"] is None


def test_the_script_writes_the_originals_out() -> None:
    alibi = reproduction_script(Settings(scheme="alibi", heads=6, emb_dim=96), view="attention")
    assert "def get_slopes(n):" in alibi and "get_slopes(2 * closest_power_of_2)[0::2]" in alibi
    t5 = reproduction_script(Settings(scheme="t5"), view="attention")
    assert "def relative_position_bucket(" in t5 and "torch.nn.Embedding(32, heads)" in t5
    rope = reproduction_script(Settings(scheme="rope"), view="attention")
    assert "def compute_rope_params(" in rope and "def apply_rope(x, cos, sin):" in rope
    for script in (alibi, t5, rope):
        ast.parse(script)
        assert "class MultiHeadAttention(torch.nn.Module):" in script
        assert "torch.manual_seed(789)" in script
    assert "import math\n" in alibi and "import math\n" not in rope


def test_heads_that_do_not_fit_give_no_script() -> None:
    with pytest.raises(SettingsError, match="heads must divide emb_dim 64"):
        reproduction_script(Settings(heads=6), view="attention")
