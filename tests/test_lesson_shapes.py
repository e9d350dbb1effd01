"""The words of the Geometry and Distance views, their lecture steps and their one-call
notebook figures: every number a sentence quotes is recomputed here with numpy
(tests/reference.py), and the lecture's questions and answers follow the settings."""

from __future__ import annotations

import numpy as np
import pytest
from reference import (
    book_tables,
    centred_pca,
    cosines_by_distance,
    embedding_error_past_the_end,
    same_up_to_sign,
    sinusoidal,
)
from shape_views import distance_of, geometry_of

from posviz.config import Settings
from posviz.lesson import distance as distance_lesson
from posviz.lesson import geometry as geometry_lesson
from posviz.lesson.lecture import SLIDES, question_text
from posviz.notebook import show
from posviz.plots.distance import distance_chart
from posviz.plots.geometry import geometry_chart
from posviz.schemes import scheme as positional_scheme


def directions_90(table: np.ndarray) -> int:
    _, singular = centred_pca(table)
    shares = np.cumsum(singular**2) / np.sum(singular**2)
    return int(np.argmax(shares >= 0.9 - 1e-12)) + 1


def step_ratio(table: np.ndarray) -> float:
    x = table.astype(np.float64)
    steps = np.mean(np.sum(np.diff(x, axis=0) ** 2, axis=1))
    pairs = np.mean(
        [np.sum((a - b) ** 2) for i, a in enumerate(x) for j, b in enumerate(x) if i != j]
    )
    return float(np.sqrt(steps / pairs))


def test_geometry_sentences_quote_numpys_numbers() -> None:
    view = geometry_of(Settings(context_length=48, emb_dim=16, seed=4))
    learned, sin = book_tables(4, 16, 48)[1].numpy(), sinusoidal(48, 16).numpy()
    text = "\n".join(geometry_lesson.sentences(view, geometry_chart(view).decisions))
    assert f"lies in **{directions_90(learned)} of 16** directions" in text
    assert f"lies in **{directions_90(sin)} of 16** directions" in text
    assert f"are {step_ratio(learned):.2f} times as far apart" in text
    assert f"are {step_ratio(sin):.2f} times as far apart" in text
    norms = np.linalg.norm(learned.astype(np.float64), axis=1)
    assert f"{norms.min():.3f} to {norms.max():.3f} long" in text
    assert f"every position vector has length {np.sqrt(8):.4f}" in text  # √(d/2), even d


def test_rope_and_none_say_what_their_table_is() -> None:
    rope_view = geometry_of(Settings(context_length=8, scheme="rope"))
    rope = "\n".join(geometry_lesson.sentences(rope_view, geometry_chart(rope_view).decisions))
    assert geometry_lesson.ROPE_NOTE in rope
    none_view = geometry_of(Settings(context_length=8, scheme="none"))
    none = geometry_lesson.sentences(none_view, geometry_chart(none_view).decisions)
    assert "**none (all zeros)**: all 8 rows are the same, so there is nothing to project." in none
    assert geometry_lesson.NONE_NOTE in none


@pytest.mark.parametrize("scheme", ["alibi", "t5"])
def test_score_bias_schemes_show_the_other_tables_and_say_why(scheme: str) -> None:
    """ALiBi and T5 have no positional table: Geometry shows the learned and the sinusoidal
    tables (as for learned) and its first sentence says why; Distance shows its usual curves and
    says the scheme has none; both point at the Attention tab."""
    settings = Settings(context_length=24, emb_dim=8, seed=4, scheme=scheme)  # type: ignore[arg-type]
    geometry = geometry_of(settings)
    assert (geometry.main.table.kind, geometry.contrast.table.kind) == ("learned", "sinusoidal")
    learned = book_tables(4, 8, 24)[1].numpy()
    words = geometry_lesson.sentences(geometry, geometry_chart(geometry).decisions)
    bias = positional_scheme(scheme).bias
    assert bias is not None
    assert words[0] == bias.geometry_note
    assert "has no positional table" in words[0] and "the Attention tab" in words[0]
    assert f"lies in **{directions_90(learned)} of 8** directions" in "\n".join(words)
    distance = distance_of(settings, beyond=4)
    assert [curve.kind for curve in distance.curves] == ["learned", "sinusoidal", "rope"]
    said = distance_lesson.sentences(distance, distance_chart(distance).decisions)
    assert said[-1] == bias.distance_note
    assert "no curve" in said[-1] and "See the Attention tab" in said[-1]
    for other in ("learned", "none", "rope"):
        shown = distance_of(Settings(context_length=24, emb_dim=8, scheme=other), beyond=4)  # type: ignore[arg-type]
        said = distance_lesson.sentences(shown, distance_chart(shown).decisions)
        assert bias.distance_note not in said


def test_distance_sentences_quote_numpys_numbers() -> None:
    view = distance_of(Settings(context_length=30, emb_dim=8, seed=2), beyond=6)
    mean, low, high = cosines_by_distance(book_tables(2, 8, 30)[1].numpy())
    text = "\n".join(distance_lesson.sentences(view, distance_chart(view).decisions))
    assert f"varies by up to {np.max(high - low):.2f} over i" in text
    assert f"mean cosine {mean[1]:.3f} at k = 1, {mean[14]:.3f} at k = 14, {mean[29]:.3f}" in text
    sin_mean, _, _ = cosines_by_distance(sinusoidal(36, 8).numpy())
    assert f"mean cosine {sin_mean[1]:.3f} at k = 1" in text
    assert "positions 30–35 come from the formulas of the sinusoidal table and RoPE" in text
    assert f"raises `{embedding_error_past_the_end(30, 8)}`" in text
    assert "a flat band" in text  # the sinusoidal table (even d)


@pytest.mark.parametrize(
    ("weights", "who"), [("init", "these positions"), ("gpt2", "GPT-2's positions")]
)
def test_the_lecture_asks_about_gpt2_by_name(weights: str, who: str) -> None:
    slide = next(s for s in SLIDES if s.step.view == "geometry" and not s.revealed)
    question = question_text(slide, "learned", None, weights=weights)  # type: ignore[arg-type]
    assert question == f"Will {who} look like a cloud or a curve?"
    distance = next(s for s in SLIDES if s.step.view == "distance" and not s.revealed)
    assert "neighbour" in question_text(distance, "learned", None, weights=weights)  # type: ignore[arg-type]


def test_the_lecture_answers_from_the_numbers() -> None:
    settings = Settings(context_length=64, emb_dim=32, seed=8)
    geometry = geometry_of(settings)
    answer = geometry_lesson.lecture_answer(geometry, geometry_chart(geometry).decisions)
    learned, sin = book_tables(8, 32, 64)[1].numpy(), sinusoidal(64, 32).numpy()
    assert answer.startswith(
        f"**learned, random init (seed 8)**: a cloud (neighbours {step_ratio(learned):.2f}×"
    )
    assert f"**sinusoidal (formula)**: a curve (neighbours {step_ratio(sin):.2f}×" in answer
    assert f"in {directions_90(sin)} of 32 directions" in answer
    shown = distance_of(settings)
    distance = distance_lesson.lecture_answer(shown, distance_chart(shown).decisions)
    mean, _, _ = cosines_by_distance(sinusoidal(80, 32).numpy())
    assert f"**sinusoidal (formula)**: {mean[1]:.2f} at k = 1, {mean[79]:.2f} at k = 79" in distance
    assert distance.endswith("the learned table raises `IndexError: index out of range in self`.")


def test_a_notebook_draws_both_views_in_one_call() -> None:
    geometry = show("A rose is a rose", context_length=32, emb_dim=8, view="geometry")
    points = next(t for t in geometry.data if t.type == "scatter3d")
    want, _ = centred_pca(book_tables(123, 8, 32)[1].numpy())
    got = np.stack([np.asarray(points[axis], dtype=np.float64) for axis in "xyz"], axis=1)
    assert points.name == "learned, random init (seed 123)" and same_up_to_sign(got, want, 1e-5)
    distance = show("A rose is a rose", context_length=12, emb_dim=8, view="distance", beyond=3)
    line = next(t for t in distance.data if t.name == "sinusoidal (formula)")
    mean, _, _ = cosines_by_distance(sinusoidal(15, 8).numpy())
    np.testing.assert_allclose(np.asarray(line.y, dtype=np.float64), mean, atol=2e-6)
