"""posviz.distance against numpy: every curve is numpy's mean (and smallest and largest)
cosine of rows i and i + k of the book's tables (tests/reference.py); RoPE's is the score of
each token vector really rotated to every pair of positions; past the context length, the
error is the one nn.Embedding(T, d) raises."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from reference import (
    book_tables,
    book_window,
    cosines_by_distance,
    embedding_error_past_the_end,
    rope_scores,
    sinusoidal,
)
from shape_views import distance_of

from devtools.fake_hub import Blob, FakeHub
from posviz.config import SCHEMES, Settings, for_weights
from posviz.distance import DistanceError, DistanceView, distance_curve
from posviz.gpt2.store import Gpt2Store
from posviz.position_tables import PositionalTable
from posviz.schemes import scheme
from posviz.tokenizer import encode

TEXT = "A rose is a rose is a rose. The cat sat on the mat."
# (T, d, E): even and odd d, no positions past T, more past T than T itself
CASES = [(16, 8, 4), (12, 7, 0), (5, 33, 9), (2, 2, 1), (40, 64, 40)]
ATOL = 2e-6  # float32 products of unit rows against numpy's float64


def assert_curve(
    curve_mean: torch.Tensor, low: torch.Tensor, high: torch.Tensor, table: np.ndarray
) -> None:
    mean_ref, low_ref, high_ref = cosines_by_distance(table)
    np.testing.assert_allclose(curve_mean.numpy(), mean_ref, atol=ATOL, rtol=0)
    np.testing.assert_allclose(low.numpy(), low_ref, atol=ATOL, rtol=0)
    np.testing.assert_allclose(high.numpy(), high_ref, atol=ATOL, rtol=0)


def window_vectors(seed: int, rows: int, emb_dim: int) -> np.ndarray:
    """The token rows of the view's window (the book's table, first window of TEXT)."""
    ids = encode(TEXT)[:rows]
    return book_window("learned", seed=seed, emb_dim=emb_dim, context_length=rows, token_ids=ids)[
        0
    ].numpy()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    ("rows", "emb_dim", "beyond"), CASES, ids=[f"T{t}-d{d}-E{e}" for t, d, e in CASES]
)
def test_every_curve_against_numpy(scheme: str, rows: int, emb_dim: int, beyond: int) -> None:
    settings = Settings(text=TEXT, context_length=rows, emb_dim=emb_dim, seed=9, scheme=scheme)  # type: ignore[arg-type]
    view = distance_of(settings, beyond=beyond)
    learned, sin, rope = view.curves
    assert [c.kind for c in view.curves] == ["learned", "sinusoidal", "rope"]
    assert (learned.distances, sin.distances, rope.distances) == (
        rows,
        rows + beyond,
        rows + beyond,
    )
    assert_curve(learned.mean, learned.low, learned.high, book_tables(9, emb_dim, rows)[1].numpy())
    assert_curve(sin.mean, sin.low, sin.high, sinusoidal(rows + beyond, emb_dim).numpy())
    # RoPE: each token vector rotated to positions i and j, every pair; then per distance
    scores = rope_scores(window_vectors(9, rows, emb_dim), rows + beyond)
    diagonals = [np.diagonal(scores, k) for k in range(rows + beyond)]
    np.testing.assert_allclose(rope.mean.numpy(), [d.mean() for d in diagonals], atol=1e-12)
    assert max(np.ptp(d) for d in diagonals) < 1e-12  # the same for every i: no band
    assert torch.equal(rope.low, rope.mean) and torch.equal(rope.high, rope.mean)
    assert view.tokens == len(encode(TEXT)[:rows])


def test_the_sinusoidal_band_is_flat_and_the_random_one_is_not() -> None:
    view = distance_of(Settings(context_length=64, emb_dim=32), beyond=16)
    learned, sin, _ = view.curves
    _, low_ref, high_ref = cosines_by_distance(sinusoidal(80, 32).numpy())
    assert np.max(high_ref - low_ref) < 1e-6  # translation invariance (even d; float32 table)
    assert sin.spread < 1e-5  # float32 rounding only
    assert learned.spread > 0.3  # a random table: it depends on where the pair is
    assert float(learned.mean[0]) == pytest.approx(1.0) and float(sin.mean[0]) == pytest.approx(1.0)


def test_an_odd_d_breaks_the_sinusoidal_invariance_and_the_band_shows_it() -> None:
    """An odd d's last dimension is a sine without its cosine: rows no longer have one length."""
    sin = distance_of(Settings(context_length=64, emb_dim=3), beyond=0).curves[1]
    _, low_ref, high_ref = cosines_by_distance(sinusoidal(64, 3).numpy())
    assert sin.spread == pytest.approx(float(np.max(high_ref - low_ref)), abs=ATOL)
    assert sin.spread > 1e-3


def test_past_the_context_length_is_torchs_own_error() -> None:
    view = distance_of(Settings(context_length=12, emb_dim=5), beyond=3)
    ends = {end.kind: end for end in view.ends}
    assert ends["learned"].rows == 12
    assert ends["learned"].error == embedding_error_past_the_end(12, 5)
    assert ends["learned"].error == "IndexError: index out of range in self"
    assert ends["sinusoidal"].rows is None and ends["rope"].rows is None  # formulas
    assert ends["sinusoidal"].error is None and ends["rope"].error is None


def test_the_default_is_a_quarter_of_the_context_length() -> None:
    view = distance_of(Settings(context_length=20, emb_dim=4))
    assert view.beyond == 5 and view.curves[1].distances == 25


@pytest.mark.parametrize("beyond", [-1, 1025, 2.5, True])
def test_a_bad_beyond_says_what_is_allowed(beyond: object) -> None:
    with pytest.raises(DistanceError, match="from 0 to 1024"):
        distance_of(Settings(context_length=4, emb_dim=4), beyond=beyond)  # type: ignore[arg-type]


def test_a_blank_text_has_no_token_vectors_for_rope() -> None:
    with pytest.raises(DistanceError, match="blank"):
        distance_of(Settings(text="  ", context_length=4, emb_dim=4))


def test_a_zero_row_has_cosine_zero() -> None:
    table = torch.tensor([[1.0, 0.0], [0.0, 0.0], [2.0, 0.0]])
    curve = distance_curve(PositionalTable(scheme("learned"), "x", table, None))
    assert_curve(curve.mean, curve.low, curve.high, table.numpy())
    assert curve.mean.tolist() == pytest.approx([2 / 3, 0.0, 1.0])


def test_memo_keeps_the_tables_curves_not_ropes() -> None:
    kept: dict[tuple[object, ...], object] = {}

    def memo(key: tuple[object, ...], compute):  # type: ignore[no-untyped-def]
        if key not in kept:
            kept[key] = compute()
        return kept[key]

    first = distance_of(Settings(context_length=8, emb_dim=4), beyond=2, memo=memo)
    second = distance_of(
        Settings(text="Other words here", context_length=8, emb_dim=4), beyond=2, memo=memo
    )
    assert second.curves[0] is first.curves[0] and second.curves[1] is first.curves[1]
    assert second.curves[2] is not first.curves[2]  # RoPE's depends on the window's tokens
    assert set(kept) == {("distance", "learned", 123, 4, 8), ("distance", "sinusoidal", 10, 4)}


# --- GPT-2's trained tables (the loopback stand-in's made-up ones) -------------------------


def _gpt2_view(settings: Settings, beyond: int) -> DistanceView:
    tables = Gpt2Store().tables()
    return distance_of(for_weights(settings, "gpt2"), beyond=beyond, tables=lambda _: tables)


@pytest.mark.parametrize(("rows", "beyond", "shown"), [(20, 6, 26), (1020, 10, 1024)])
def test_gpt2_curve_against_the_served_array(
    gpt2_hub: FakeHub, gpt2_blob: Blob, rows: int, beyond: int, shown: int
) -> None:
    view = _gpt2_view(Settings(text=TEXT, context_length=rows, seed=4), beyond)
    assert [c.kind for c in view.curves] == ["learned", "sinusoidal", "rope", "gpt2"]
    gpt2 = view.curves[3]
    assert gpt2.distances == shown  # rows past T up to GPT-2's 1,024, nothing beyond
    assert_curve(gpt2.mean, gpt2.low, gpt2.high, gpt2_blob.arrays["wpe.weight"][:shown])
    learned = view.curves[0]  # the book's random init at the view's seed and GPT-2's d
    assert_curve(learned.mean, learned.low, learned.high, book_tables(4, 768, rows)[1].numpy())
    end = view.ends[3]
    assert end.rows == 1024 and end.error == embedding_error_past_the_end(1024, 768)
