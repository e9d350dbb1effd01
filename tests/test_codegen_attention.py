"""The Attention part of the "Show the code" script: run on its own, in a fresh interpreter
without posviz and offline (tests/reproduce.py), it prints the scores and weights posviz
shows, for every scheme, and the shift test's numbers (or torch's error past a learned table).

posviz projects only the shown head's columns and the script the book's whole
MultiHeadAttention, so the float64 sums run in another order: equal to 1e-12."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
import torch
from reference import embedding_error_past_the_end
from reproduce import run_scripts_saved

from posviz.codegen import reproduction_script
from posviz.config import SCHEMES, Settings, SettingsError
from posviz.schemes import (
    alibi_slopes,
    rope_angles,
    rope_rotate,
    t5_bias_table,
    t5_buckets,
)
from posviz.schemes.alibi import alibi_per_distance
from posviz.schemes.t5 import t5_per_distance
from posviz.scores import build_attention
from posviz.training.model import MultiHeadAttention
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


def test_the_script_holds_the_functions_posviz_computed_with() -> None:
    """The formulas are posviz's own, copied with inspect.getsource, not rewritten."""
    alibi = reproduction_script(Settings(scheme="alibi", heads=6, emb_dim=96), view="attention")
    t5 = reproduction_script(Settings(scheme="t5"), view="attention")
    rope = reproduction_script(Settings(scheme="rope"), view="attention")
    for script in (alibi, t5):
        assert "import math\n" in script
    for function in (alibi_per_distance, alibi_slopes):
        assert inspect.getsource(function) in alibi
    for function in (t5_per_distance, t5_buckets, t5_bias_table):
        assert inspect.getsource(function) in t5
    assert "T5_NUM_BUCKETS = 32\n" in t5 and "def alibi_slopes(" not in t5
    assert "alibi_per_distance(relative.flatten(), heads=heads, seed=seed)" in alibi
    for function in (rope_angles, rope_rotate):
        assert inspect.getsource(function) in rope
    assert "ROPE_BASE = 10000.0\n" in rope
    # RoPE's context extensions are copied too (they use math); every import is used
    for script in (alibi, t5, rope):
        body = script.replace("import math\n", "")
        assert ("import math\n" in script) == ("math." in body)
    for script in (alibi, t5, rope):
        ast.parse(script)
        assert inspect.getsource(MultiHeadAttention) in script  # the book's, as posviz has it
        assert "torch.manual_seed(789)" in script


def test_heads_that_do_not_fit_give_no_script() -> None:
    with pytest.raises(SettingsError, match="heads must divide emb_dim 64"):
        reproduction_script(Settings(heads=6), view="attention")
