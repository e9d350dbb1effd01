"""posviz.geometry against numpy: the tables are the book's (tests/reference.py), the points
numpy's projection of the centred float64 table (up to each component's sign), the singular
values numpy's SVD, for every scheme and for GPT-2's view on the loopback stand-in's tables."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from reference import book_tables, centred_pca, rope_cos_sin, same_up_to_sign, sinusoidal
from shape_views import geometry_of

from devtools.fake_hub import Blob, FakeHub
from posviz.config import SCHEMES, Settings, SettingsError, for_weights
from posviz.geometry import (
    VOCAB_SAMPLE,
    GeometryView,
    TableGeometry,
    analyse_table,
)
from posviz.gpt2.store import Gpt2Store
from posviz.position_tables import PositionalTable
from posviz.schemes import LEARNED
from posviz.tokenizer import encode

# T > d, T < d, odd d, T of 1 to 3 (fewer than three components), GPT-2's full size below.
SIZES = [(16, 8), (6, 20), (33, 7), (1, 4), (2, 5), (3, 3), (64, 64)]


def reference_table(scheme: str, *, seed: int, rows: int, emb_dim: int) -> torch.Tensor:
    """The scheme's positional table, without posviz: [rows, d]. ALiBi and T5 have none: the
    Geometry tab shows the learned table for them (and says why)."""
    if scheme in ("learned", "alibi", "t5"):
        return book_tables(seed, emb_dim, rows)[1]
    if scheme == "sinusoidal":
        return sinusoidal(rows, emb_dim)
    if scheme == "rope":
        return rope_cos_sin(rows, emb_dim)
    return torch.zeros(rows, emb_dim)


def assert_matches_numpy(shape: TableGeometry, table: torch.Tensor) -> None:
    """Points, singular values, 90 % count and row lengths, against numpy."""
    points, singular = centred_pca(table.numpy())
    largest = float(singular[0]) if singular.size else 0.0
    tolerance = 1e-6 * max(largest, 1e-300)
    assert shape.singular_values.shape == singular.shape
    np.testing.assert_allclose(shape.singular_values.numpy(), singular, atol=tolerance, rtol=0)
    assert shape.components == (int((singular[:3] > 1e-6 * largest).sum()) if largest else 0)
    got = shape.points.numpy()
    assert got.shape == (table.shape[0], 3)
    kept = shape.components
    assert same_up_to_sign(got[:, :kept], points[:, :kept], atol=1e-6 * max(largest, 1.0))
    assert np.all(got[:, kept:] == 0.0)
    np.testing.assert_allclose(
        shape.row_norms.numpy(), np.linalg.norm(table.numpy().astype(np.float64), axis=1)
    )
    if largest:
        shares = np.cumsum(singular**2) / np.sum(singular**2)
        assert shape.directions_90 == int(np.argmax(shares >= 0.9 - 1e-12)) + 1
        assert shape.shown_share == pytest.approx(float(shares[min(2, len(shares) - 1)]))
    else:
        assert shape.directions_90 == 0


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(("rows", "emb_dim"), SIZES, ids=[f"T{t}-d{d}" for t, d in SIZES])
def test_every_scheme_against_numpy(scheme: str, rows: int, emb_dim: int) -> None:
    settings = Settings(context_length=rows, emb_dim=emb_dim, seed=7, scheme=scheme)  # type: ignore[arg-type]
    view = geometry_of(settings)
    table = reference_table(scheme, seed=7, rows=rows, emb_dim=emb_dim)
    assert torch.allclose(view.main.table.table, table, atol=1e-6, rtol=0)
    assert_matches_numpy(view.main, table)
    # the contrast: the sinusoidal table beside the book's random init, the init beside others
    contrast = "sinusoidal" if scheme in ("learned", "alibi", "t5") else "learned"
    assert view.contrast.table.kind == contrast
    contrast_table = reference_table(contrast, seed=7, rows=rows, emb_dim=emb_dim)
    assert torch.allclose(view.contrast.table.table, contrast_table, atol=1e-6, rtol=0)
    assert_matches_numpy(view.contrast, contrast_table)
    assert view.cosines == ()


def test_the_learned_table_is_the_books_bit_for_bit() -> None:
    view = geometry_of(Settings(context_length=12, emb_dim=9, seed=3))
    assert torch.equal(view.main.table.table, book_tables(3, 9, 12)[1])


def test_full_size_against_numpy() -> None:
    """GPT-2's shape, T = 1024 and d = 768 (the [d, d] Gram matrix)."""
    for scheme in ("learned", "sinusoidal"):
        view = geometry_of(Settings(context_length=1024, emb_dim=768, scheme=scheme))  # type: ignore[arg-type]
        table = reference_table(scheme, seed=123, rows=1024, emb_dim=768)
        assert_matches_numpy(view.main, table)


def test_the_sign_makes_the_largest_coordinate_positive() -> None:
    shape = geometry_of(Settings(context_length=40, emb_dim=16, scheme="sinusoidal")).main
    points = shape.points.numpy()
    for column in range(3):
        biggest = np.argmax(np.abs(points[:, column]))
        assert points[biggest, column] > 0
    flipped = analyse_table(replace(shape.table, table=-shape.table.table)).points
    assert torch.allclose(flipped, shape.points, atol=1e-9)  # -X has the same picture


def test_a_cloud_and_a_curve() -> None:
    """The step ratio: RMS distance of neighbours over RMS distance of any two rows."""
    view = geometry_of(Settings(context_length=128, emb_dim=32))
    for shape in (view.main, view.contrast):
        x = shape.table.table.double().numpy()
        steps = np.sqrt(np.mean(np.sum(np.diff(x, axis=0) ** 2, axis=1)))
        pairs = np.sqrt(
            np.mean([np.sum((x[i] - x[j]) ** 2) for i in range(128) for j in range(128) if i != j])
        )
        assert shape.step_ratio == pytest.approx(steps / pairs, rel=1e-9)
    assert view.main.step_ratio is not None and 0.9 < view.main.step_ratio < 1.1  # random
    assert view.contrast.step_ratio is not None and view.contrast.step_ratio < 0.5  # sin/cos


def test_nothing_to_project_for_none() -> None:
    shape = geometry_of(Settings(context_length=8, emb_dim=4, scheme="none")).main
    assert shape.components == 0 and shape.directions_90 == 0 and shape.step_ratio is None
    assert torch.equal(shape.points, torch.zeros(8, 3, dtype=torch.float64))
    assert float(shape.variance_shares.sum()) == 0.0


def test_bad_settings_raise_before_any_table_is_made() -> None:
    asked: list[Settings] = []

    def tables(settings: Settings) -> None:  # type: ignore[return]
        asked.append(settings)

    with pytest.raises(SettingsError, match="emb_dim must be from 2"):
        geometry_of(Settings(emb_dim=1), tables=tables)  # type: ignore[arg-type]
    assert asked == []


def test_memo_keeps_one_result_per_table() -> None:
    kept: dict[tuple[object, ...], object] = {}
    calls: list[tuple[object, ...]] = []

    def memo(key: tuple[object, ...], compute):  # type: ignore[no-untyped-def]
        calls.append(key)
        if key not in kept:
            kept[key] = compute()
        return kept[key]

    settings = Settings(context_length=10, emb_dim=6, seed=5)
    first = geometry_of(settings, memo=memo)
    second = geometry_of(replace(settings, text="Another text altogether"), memo=memo)
    assert second.main is first.main and second.contrast is first.contrast
    assert sorted(kept, key=str) == [
        ("geometry", "learned", 5, 6, 10),
        ("geometry", "sinusoidal", 10, 6),
    ]
    assert len(calls) == 4


# --- GPT-2's trained tables (the loopback stand-in's made-up ones) -------------------------


def _gpt2_view(settings: Settings) -> GeometryView:
    tables = Gpt2Store().tables()
    return geometry_of(for_weights(settings, "gpt2"), tables=lambda _: tables)


def _abs_cosines(positions: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    p = positions / np.linalg.norm(positions, axis=1, keepdims=True)
    t = tokens / np.linalg.norm(tokens, axis=1, keepdims=True)
    return np.abs(p.astype(np.float64) @ t.astype(np.float64).T)


def test_gpt2_view_against_the_served_arrays(gpt2_hub: FakeHub, gpt2_blob: Blob) -> None:
    text = "A rose is a rose is a rose."
    view = _gpt2_view(Settings(text=text, context_length=24, seed=11))
    wpe, wte = gpt2_blob.arrays["wpe.weight"], gpt2_blob.arrays["wte.weight"]
    assert view.main.table.kind == "gpt2"
    assert np.array_equal(view.main.table.table.numpy(), wpe[:24])
    assert_matches_numpy(view.main, torch.from_numpy(wpe[:24].copy()))
    random_init = book_tables(11, 768, 24)[1]  # the book's init of GPT-2's shape
    assert torch.equal(view.contrast.table.table, random_init)
    assert_matches_numpy(view.contrast, random_init)

    window = list(dict.fromkeys(encode(text)))
    by = {(c.positions, c.tokens): c for c in view.cosines}
    assert len(by) == 4
    for table, label in (
        (wpe[:24], view.main.table.label),
        (random_init.numpy(), view.contrast.table.label),
    ):
        for name, ids in (("window", window), ("sample", list(range(0, 50257, 50)))):
            want = _abs_cosines(table, wte[ids])
            got = by[(label, name)]
            assert got.count == len(ids)
            assert got.max_abs == pytest.approx(float(want.max()), abs=1e-6)
            assert got.mean_abs == pytest.approx(float(want.mean()), abs=1e-6)
            assert want[got.position, ids.index(got.token_id)] == pytest.approx(
                got.max_abs, abs=1e-6
            )
    assert tuple(range(0, 50257, 50)) == VOCAB_SAMPLE and len(VOCAB_SAMPLE) == 1006


def test_gpt2_tables_are_keyed_by_their_commit(gpt2_hub: FakeHub) -> None:
    view = _gpt2_view(Settings(context_length=8))
    tables = Gpt2Store().tables()
    assert view.main.table.key == ("gpt2", tables.commit, 8)
    unkeyed = PositionalTable(LEARNED, "x", torch.zeros(2, 2), None, trained=True)
    assert unkeyed.kind == "gpt2"
    assert unkeyed.key is None
