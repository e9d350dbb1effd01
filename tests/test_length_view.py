"""The Length view (issue 41, item 2): its numbers, sentences and figure against numbers
computed here.

The shipped runs are read here as what they are, zip archives of ``.npy`` arrays and a JSON
header (``numpy.load(..., allow_pickle=False)``), not with posviz's reader; RoPE's wavelengths
come from transformers' functions as ``tests/reference.py`` copies them.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import reference

from posviz.config import Settings, with_options
from posviz.lesson import length as lesson
from posviz.plots.length import SMOOTH, length_chart
from posviz.training.length_view import build_length

RUNS = Path(__file__).resolve().parent.parent / "posviz" / "data" / "length"
L = 64
HEAD_DIM = 128 // 4  # the runs' emb_dim / heads


def stored(scheme: str, part: str, length: int, variant: str = "") -> np.ndarray:
    """A reading's ``position`` or ``band`` losses of a shipped run, float64."""
    key = f"held-out/{length}/{variant or 'as-trained'}/{part}"
    with np.load(RUNS / f"{scheme}.npz", allow_pickle=False) as run:
        return run[key].astype(np.float64)


def band(scheme: str, length: int, variant: str = "") -> float:
    """The band's mean, as the sentence rounds it."""
    return float(np.mean(stored(scheme, "band", length, variant)))


def error_of(scheme: str, length: int) -> str:
    """What the run file says torch raised reading ``length`` ("" if nothing)."""
    with np.load(RUNS / f"{scheme}.npz", allow_pickle=False) as run:
        meta = json.loads(run["metadata"].tobytes().decode())
    (entry,) = [
        r
        for r in meta["readings"]
        if (r["text"], r["length"], r["variant"]) == ("held-out", length, "")
    ]
    return str(entry["error"])


@pytest.fixture(scope="module")
def view():  # type: ignore[no-untyped-def]
    return build_length(Settings())


def test_the_curves_are_the_stored_losses(view) -> None:  # type: ignore[no-untyped-def]
    for curves in view.curves:
        for reading, length in zip(curves.readings, (L, 2 * L, 4 * L), strict=True):
            assert reading.length == length
            if reading.error:
                continue
            np.testing.assert_array_equal(
                reading.position_loss.numpy(), stored(curves.spec.name, "position", length)
            )


def test_learned_ends_with_torchs_index_error(view) -> None:  # type: ignore[no-untyped-def]
    expected = reference.embedding_error_past_the_end(L, 128)
    (learned,) = [c for c in view.curves if c.spec.learned]
    assert learned.ends == 2 * L and learned.error == expected == error_of("learned", 2 * L)
    assert expected in lesson.headline(view)


def test_the_headline_quotes_the_runs(view) -> None:  # type: ignore[no-untyped-def]
    """Every number of the issue's sentence, recomputed here from the .npz files."""
    said = lesson.headline(view)
    alibi = f"ALiBi {band('alibi', 4 * L):.2f}, as within 64 ({band('alibi', L):.2f})"
    sinusoidal = (
        f"sinusoidal rises to {band('sinusoidal', 4 * L):.2f} "
        f"({band('sinusoidal', L):.2f} within 64)"
    )
    rope = (
        f"RoPE rises to {band('rope', 4 * L):.2f} ({band('rope', L):.2f} within 64), and "
        f"YaRN (s\u00a0=\u00a04) brings it down to {band('rope', 4 * L, 'yarn-4'):.2f} "
        "without retraining"
    )
    for part in (alibi, sinusoidal, rope, "positions 128–255 of an input of 256"):
        assert part in said, (part, said)


def test_the_limits_quote_each_bands_standard_error(view) -> None:  # type: ignore[no-untyped-def]
    errors = [
        np.std(stored(c.spec.name, "band", r.length), ddof=1)
        / math.sqrt(len(stored(c.spec.name, "band", r.length)))
        for c in view.curves
        for r in c.readings
        if not r.error
    ] + [
        np.std(values, ddof=1) / math.sqrt(len(values))
        for values in (stored("rope", "band", m * L, "yarn-4") for m in (1, 2, 4))
    ]
    note = lesson.limits_note(view)
    assert f"standard error of {min(errors):.2f}–{max(errors):.2f}" in note, note
    assert "toy model" in note and "one text" in note


@pytest.mark.parametrize(
    ("scaling", "factor"),
    [
        pytest.param("yarn", 4.0, id="yarn-4"),
        pytest.param("llama3", 2.0, id="llama3-2"),
        pytest.param("linear", 4.0, id="pi-4"),
        pytest.param("ntk", 2.0, id="ntk-2"),
        pytest.param("dynamic", 4.0, id="dynamic-4"),
    ],
)
def test_the_wavelengths_are_transformers(scaling: str, factor: float) -> None:
    shown = build_length(with_options(Settings(), rope_scaling=scaling, rope_factor=factor))
    facts = shown.frequencies
    kwargs = {"head_dim": HEAD_DIM, "base": 10_000.0, "original_length": L, "length_read": 4 * L}
    before = reference.hf_wavelengths("default", factor=factor, **kwargs)
    after = reference.hf_wavelengths(scaling, factor=factor, **kwargs)
    np.testing.assert_allclose(facts.wavelengths(after=False), before, rtol=1e-12)
    np.testing.assert_allclose(facts.wavelengths(after=True), after, rtol=1e-12)
    ratio = after / before
    for pair, divided in zip(facts.pairs, ratio, strict=True):
        if pair.treatment == "kept":
            assert divided == pytest.approx(1.0, rel=1e-6)
        elif pair.treatment == "divided" and scaling != "dynamic":
            assert divided == pytest.approx(factor, rel=1e-5)
        elif scaling == "dynamic":  # divided by its stretch at 4L: s·4L/L₀ − (s − 1)
            assert 1.0 < divided <= (factor * 4 - (factor - 1)) * 1.0001
        else:
            assert 1.0 < divided <= factor * 1.0001
    assert shown.extension.in_runs  # the runs read every scaling at s = 2 and 4
    np.testing.assert_array_equal(
        shown.extension.readings[-1].position_loss.numpy(),
        stored("rope", "position", 4 * L, f"{scaling}-{factor:g}"),
    )


def test_an_extension_the_runs_did_not_read_is_said() -> None:
    shown = build_length(with_options(Settings(), rope_scaling="yarn", rope_factor=3.0))
    assert not shown.extension.in_runs and shown.extension.readings == ()
    assert any("not s = 3" in notice for notice in shown.notices), shown.notices
    said = lesson.headline(shown)
    assert "without retraining" not in said
    drawn = length_chart(shown)
    assert not drawn.decisions.extension
    assert not any("YaRN" in str(t.get("name")) for t in drawn.spec.data)


def test_a_scaling_the_runs_were_never_read_with_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scaling added after the runs were shipped (here: dynamic NTK, as if it were new) draws
    its frequencies and the runs as trained, and says why: no traceback."""
    import posviz.training.length_view as length_view

    kept = tuple(e for e in length_view.EXTENSIONS if e[0] != "dynamic")
    monkeypatch.setattr(length_view, "EXTENSIONS", kept)
    shown = build_length(with_options(Settings(), rope_scaling="dynamic", rope_factor=4.0))
    assert not shown.extension.in_runs and shown.extension.readings == ()
    (said,) = [n for n in shown.notices if "never read with Dynamic NTK" in n]
    assert "Position Interpolation" in said and "YaRN" in said, said
    drawn = length_chart(shown)
    assert not drawn.decisions.extension


def test_no_scaling_chosen_shows_the_lessons(view) -> None:  # type: ignore[no-untyped-def]
    assert view.extension.name == "yarn-4" and not view.extension.chosen
    assert "No RoPE scaling is chosen" in view.notices[0]


def test_the_sentence_past_l_under_rope(view) -> None:  # type: ignore[no-untyped-def]
    plain, extended = view.attention_plain, view.attention_extended
    n = plain.shown.size
    assert plain.shown.start == 4 * L - n and plain.shift_test.last_position == 4 * L - 1
    assert plain.shift_test.unchanged, "RoPE as trained: the scores at 0 … n − 1"
    options = extended.settings.options()
    assert (options["rope_scaling"], options["rope_factor"], options["rope_original"]) == (
        "yarn",
        4.0,
        L,
    )
    change = np.nanmax(np.abs(extended.shown.scores.numpy() - plain.shown.scores.numpy()))
    assert change > 0.01
    assert f"change by up to {change:.2f}" in lesson.attention_sentence(view)


def test_the_schemes_chosen_are_drawn() -> None:
    shown = build_length(Settings(), schemes=["alibi", "sinusoidal"])
    assert [c.spec.name for c in shown.curves] == ["sinusoidal", "alibi"]
    with pytest.raises(ValueError, match="schemes must be among"):
        build_length(Settings(), schemes=["rotary"])


def test_a_view_of_every_scheme_gives_the_chosen_ones(view) -> None:  # type: ignore[no-untyped-def]
    # the page keeps one view per settings and asks it for the schemes drawn
    chosen = view.with_schemes(["alibi", "sinusoidal"])
    assert [c.spec.name for c in chosen.curves] == ["sinusoidal", "alibi"]
    for curves in chosen.curves:
        for reading in curves.readings:
            if not reading.error:
                expected = stored(curves.spec.name, "position", reading.length)
                np.testing.assert_array_equal(reading.position_loss.numpy(), expected)
    assert chosen.attention_extended is view.attention_extended
    assert len(view.curves) == len(list(RUNS.glob("*.npz")))  # the one kept is whole
    with pytest.raises(ValueError, match="schemes must be among"):
        view.with_schemes(["rotary"])
    assert view.nbytes > sum(r.position_loss.numel() * 8 for c in view.curves for r in c.readings)


def test_the_figure_draws_each_curve(view) -> None:  # type: ignore[no-untyped-def]
    drawn = length_chart(view)
    lines = [t for t in drawn.spec.data if t["type"] == "scatter" and t.get("legendgroup")]
    by_name: dict[str, list[np.ndarray]] = {}
    for line in lines:
        by_name.setdefault(line["name"], []).append(np.asarray(line["y"]))
    kernel = np.ones(SMOOTH) / SMOOTH
    for scheme, label in (("alibi", "ALiBi"), ("sinusoidal", "Sinusoidal"), ("rope", "RoPE")):
        expected = [
            np.convolve(stored(scheme, "position", m * L), kernel, mode="valid") for m in (1, 2, 4)
        ]
        assert len(by_name[label]) == 3
        for got, want in zip(by_name[label], expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(by_name["Learned"]) == 1, "learned: the input of 64 only"
    assert len(by_name["RoPE + YaRN (s\u00a0=\u00a04)"]) == 3
    ends = [a["text"] for a in drawn.spec.layout["annotations"] if "IndexError" in a["text"]]
    assert len(ends) == 2 and all("ends at 64" in text for text in ends)
    marks = [s for s in drawn.spec.layout["shapes"] if s["x0"] == s["x1"] == L - 0.5]
    assert len(marks) == 3, "the trained length marked in each loss panel"
    assert drawn.decisions.panels == ("loss", "wavelengths", "scores")


def test_a_narrow_canvas_stacks_the_score_panels(view) -> None:  # type: ignore[no-untyped-def]
    from posviz.plots import Canvas

    narrow = length_chart(view, canvas=Canvas(width=360, window_width=390, window_height=844))
    wide = length_chart(view, canvas=Canvas(width=1200, window_width=1280, window_height=800))
    assert narrow.decisions.stacked and not wide.decisions.stacked


def test_an_attention_settings_text_is_the_users() -> None:
    settings = replace(Settings(), text="Every effort moves you forward")
    shown = build_length(settings)
    assert shown.attention_plain.token_texts[0] == "Every"
    assert shown.attention_plain.shown.start >= L


def test_the_first_slides_answer_quotes_the_runs(view) -> None:  # type: ignore[no-untyped-def]
    said = lesson.keeps_answer(view)
    assert f"ALiBi keeps it ({band('alibi', 4 * L):.2f} at positions 128–255, " in said, said
    assert f"{band('alibi', L):.2f} within 64)" in said
    assert f"sinusoidal rises to {band('sinusoidal', 4 * L):.2f}" in said, "the largest rise"
    assert reference.embedding_error_past_the_end(L, 128) in said


def test_the_second_slides_answer_quotes_the_runs(view) -> None:  # type: ignore[no-untyped-def]
    said = lesson.stretch_answer(view)
    assert said.startswith(
        f"Yes: YaRN (s\u00a0=\u00a04) brings RoPE's loss at positions 128–255 down from "
        f"{band('rope', 4 * L):.2f} to {band('rope', 4 * L, 'yarn-4'):.2f} without retraining"
    ), said
    after = reference.hf_wavelengths(
        "yarn", head_dim=HEAD_DIM, base=10_000.0, factor=4.0, original_length=L, length_read=4 * L
    )
    before = reference.hf_wavelengths(
        "default",
        head_dim=HEAD_DIM,
        base=10_000.0,
        factor=4.0,
        original_length=L,
        length_read=4 * L,
    )
    divided = int(np.sum(np.isclose(after / before, 4.0, rtol=1e-5)))
    kept = int(np.sum(np.isclose(after / before, 1.0, rtol=1e-6)))
    assert f"It keeps {kept} of {HEAD_DIM // 2} pairs" in said and f"divides {divided} by 4" in said


def test_a_slide_panel_draws_one_input_length(view) -> None:  # type: ignore[no-untyped-def]
    drawn = length_chart(view, lecture=True, panels=["loss"], lengths=[L])
    assert drawn.decisions.lengths == (L,) and drawn.decisions.ended == ()
    assert all(len(t["x"]) == L - SMOOTH + 1 for t in drawn.spec.data)
    with pytest.raises(ValueError, match="lengths must be among 64, 128, 256"):
        length_chart(view, lengths=[100])


def test_a_blank_text_still_draws_the_runs() -> None:
    """The losses do not depend on the sidebar's text: with none, the score panels go and
    the sentence asks for one."""
    shown = build_length(Settings(text=""))
    assert shown.attention_plain is None and shown.attention_extended is None
    drawn = length_chart(shown)
    assert drawn.decisions.panels == ("loss", "wavelengths")
    assert not any(t["type"] == "heatmap" for t in drawn.spec.data)
    assert lesson.attention_sentence(shown).startswith("Type a sentence")
