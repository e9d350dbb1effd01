"""The words of the Attention tab: every number a sentence quotes is recomputed here the book's
way (tests/reference.py: the book's MultiHeadAttention, get_slopes, T5's bucket function), and
every verdict follows the numbers."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch
from reference import (
    book_head_attention,
    embedding_error_past_the_end,
    get_slopes,
    relative_position_bucket,
    t5_relative_attention_bias,
    token_ids,
)

from posviz.config import Settings
from posviz.lesson import attention as words
from posviz.lesson.lecture import ATTENTION_STEPS, SLIDES, question_text
from posviz.plots.attention import attention_chart
from posviz.scores import AttentionView, build_attention
from posviz.view import build_view

ROSE = "A rose is a rose is a rose."


def view_of(settings: Settings) -> AttentionView:
    return build_attention(build_view(settings))


def largest_change(settings: Settings, shift: int) -> float:
    """max |score(shift) − score(0)| over j <= i, the book's way."""
    ids = token_ids(settings.text)[: settings.context_length]
    common = {
        "seed": settings.seed, "emb_dim": settings.emb_dim,
        "context_length": settings.context_length, "token_ids": ids,
        "num_heads": settings.heads, "head": settings.head,
    }  # fmt: skip
    at_0, _ = book_head_attention(settings.scheme, start=0, **common)  # type: ignore[arg-type]
    moved, _ = book_head_attention(settings.scheme, start=shift, **common)  # type: ignore[arg-type]
    keep = torch.ones(len(ids), len(ids), dtype=torch.bool).tril()
    return float((moved - at_0)[keep].abs().max())


def printed(value: float) -> str:
    """A change as a reader expects it: 0.0 exactly, two decimals, else 1 significant digit."""
    return "0.0" if value == 0.0 else f"{value:.2f}" if value >= 0.005 else f"{value:.1e}"


def test_rope_is_unchanged_by_a_shift() -> None:
    settings = Settings(text=ROSE, scheme="rope", shift=8)
    change = largest_change(settings, 8)
    assert 0 < change < 1e-4  # float32 angles
    assert words.shift_sentence(view_of(settings), markdown=False) == (
        f"Moved 8 positions later (to positions 8–16), RoPE's scores are unchanged (largest "
        f"change {printed(change)}, float32 rounding of its angles): only the distance between "
        "two tokens matters."
    )
    assert words.shift_answer(view_of(settings)).startswith(
        f"No: RoPE's scores are unchanged (largest change {printed(change)}): only the distance"
    )


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal"])
def test_absolute_schemes_change_with_a_shift(scheme: str) -> None:
    settings = Settings(text=ROSE, scheme=scheme, shift=5)  # type: ignore[arg-type]
    change = largest_change(settings, 5)
    assert change > 0.01
    sentence = words.shift_sentence(view_of(settings), markdown=False)
    name = {"learned": "the learned scheme's", "sinusoidal": "the sinusoidal scheme's"}[scheme]
    assert sentence.startswith(
        f"Moved 5 positions later (to positions 5–13), {name} scores change by up to "
        f"{printed(change)} (the weights by up to "
    )
    assert sentence.endswith("the position itself matters, not only the distance.")
    assert words.shift_answer(view_of(settings)) == (
        f"Yes: {name} scores change by up to {printed(change)}: the position itself matters, "
        "not only the distance."
    )


@pytest.mark.parametrize("scheme", ["alibi", "t5", "none"])
def test_bias_schemes_and_none_are_exactly_unchanged(scheme: str) -> None:
    settings = Settings(text=ROSE, scheme=scheme, shift=3)  # type: ignore[arg-type]
    assert largest_change(settings, 3) == 0.0
    sentence = words.shift_sentence(view_of(settings), markdown=True)
    assert "are **unchanged** (largest change 0.0)" in sentence
    assert ("no position reaches them" in sentence) is (scheme == "none")


def test_learned_past_its_table_quotes_torch() -> None:
    settings = Settings(text=ROSE, shift=8)  # 9 tokens at 8 ... 16, a 16-row table
    error = embedding_error_past_the_end(16, 64)
    assert words.shift_sentence(view_of(settings), markdown=False) == (
        "Moved 8 positions later (to positions 8–16), the sentence would need position 16, "
        "but the learned table nn.Embedding(16, 64) has rows 0–15 only: looking it up raises "
        f"{error} (torch's message). The heatmaps show the sentence where it is, at positions "
        "0–8."
    )
    assert f"`{error}`" in words.shift_answer(view_of(settings))


def test_no_shift_says_how_to_try_it() -> None:
    sentence = words.shift_sentence(view_of(Settings(text=ROSE)))
    assert sentence.startswith("The sentence stands at positions 0–8. Move it later")


def test_alibi_keeps_its_line_past_the_context_length() -> None:
    settings = Settings(text=ROSE, scheme="alibi", emb_dim=96, heads=12, head=9)
    view = view_of(settings)
    far = 255  # distances 0 ... 255: at least twice T5's 128 (T = 16)
    m = get_slopes(12)[9]
    text = "\n".join(words.beyond_sentences(view))
    value = f"{-m * far:.4g}".replace("-", "−")
    assert f"head 9 (m = {m:.4g}) adds −m·k at every distance k, {value} at k = {far}" in text
    head = words.head_sentence(view)
    assert "12 is not a power of two" in head

    def written(m: float) -> str:  # 1/N for a power of two, else four digits
        return f"1/{round(1 / m)}" if math.log2(1 / m).is_integer() else f"{m:.4g}"

    slopes = ", ".join(written(m) for m in get_slopes(12))
    assert slopes.startswith("1/2, 1/4, 1/8") and "0.7071" in slopes
    assert head.endswith(f": {slopes}.")


def test_t5_saturates_and_says_its_table_is_the_seeded_init() -> None:
    settings = Settings(text=ROSE, scheme="t5", seed=5, head=2)
    view = view_of(settings)
    k = torch.arange(0, 300)
    buckets = relative_position_bucket(-k, bidirectional=False)
    flat = int(k[buckets == 31][0])  # the first distance in the last bucket
    assert flat == words.t5_flat_from() == 113
    value = float(t5_relative_attention_bias(5, 4)[31, 2])
    said = words.beyond_sentences(view)
    assert said[0].startswith(f"T5's bias stops changing at distance {flat}: every k ≥ {flat}")
    assert f"head 2 adds {value:.4g}".replace("-", "−") in said[0]
    assert said[1] == (
        "T5 learns E; posviz shows its seeded init, nn.Embedding(32, 4) after "
        "torch.manual_seed(5), so the values are random, the buckets are T5's."
    )


def test_formulas_past_t_and_the_learned_table() -> None:
    sinusoidal = words.beyond_sentences(view_of(Settings(text=ROSE, scheme="sinusoidal", shift=12)))
    assert sinusoidal == [
        "Positions 16–20 lie past the context length T = 16: the sinusoidal scheme computes them "
        "by its formula."
    ]
    learned = words.beyond_sentences(view_of(Settings(text=ROSE, shift=8)))
    assert learned == [
        "The learned table has rows for positions 0–15 only: past them there is nothing to look "
        "up (the shift control shows torch's error)."
    ]


def test_the_drawn_sentence_reads_the_figures_decisions() -> None:
    small = view_of(Settings(text=ROSE))
    assert words.drawn_sentence(attention_chart(small).decisions) is None
    text = " ".join(["the rose"] * 300)
    big = view_of(Settings(text=text, context_length=512))
    decisions = attention_chart(big).decisions
    assert (decisions.step, decisions.drawn) == (3, 171)  # ceil(512 / 224), range(0, 512, 3)
    assert words.drawn_sentence(decisions) == (
        "The heatmaps draw every 3rd row and column of the 512 tokens (171 of each): the cells "
        "drawn hold their exact values; hover one for its tokens and numbers."
    )
    assert words.drawn_sentence(decisions) in words.sentences(big, decisions)


def test_every_scheme_has_its_sentences() -> None:
    for scheme in ("learned", "sinusoidal", "none", "rope", "alibi", "t5"):
        view = view_of(Settings(text=ROSE, scheme=scheme, shift=2))  # type: ignore[arg-type]
        found = words.sentences(view, attention_chart(view).decisions, markdown=False)
        assert found[0] == words.shift_sentence(view, markdown=False)
        assert "**" not in " ".join(found)
        assert found[2].startswith("Head 0 of 4: columns 0–15 of the queries and keys")


# --- lecture mode: predict, then reveal ------------------------------------------------------


def test_the_lecture_asks_then_answers_from_the_numbers() -> None:
    asked = next(s for s in SLIDES if s.step.view == "attention" and s.step.question)
    answered = SLIDES[asked.number]  # the next click
    assert asked.step in ATTENTION_STEPS and answered.step is asked.step
    assert asked.step.view == answered.step.view == "attention"
    assert (asked.revealed, answered.revealed) == (False, True)
    assert question_text(asked, "rope", None) == (
        "The sentence moves 8 positions later. Will RoPE's attention scores change?"
    )
    assert question_text(asked, "none", None) == (
        "The sentence moves 8 positions later. Will its attention scores change?"
    )
    assert words.LECTURE_SHIFT == 8
    rope = Settings(text=ROSE, scheme="rope", shift=words.LECTURE_SHIFT)
    change = largest_change(rope, 8)
    assert words.shift_answer(view_of(rope)) == (
        f"No: RoPE's scores are unchanged (largest change {printed(change)}): only the distance "
        "between two tokens matters, not where they stand."
    )
    sinusoidal = Settings(text=ROSE, scheme="sinusoidal", shift=8)
    moved = printed(largest_change(sinusoidal, 8))
    assert words.shift_answer(view_of(sinusoidal)).startswith(
        f"Yes: the sinusoidal scheme's scores change by up to {moved}"
    )
    assert words.shift_answer(view_of(Settings(text=ROSE, shift=8))).startswith(
        "It cannot even move that far: the learned table has rows 0–15 only"
    )


def test_the_lecture_moves_a_learned_sentence_as_far_as_its_table_holds_it() -> None:
    """The rose's 9 tokens in nn.Embedding(16, 64): 7 positions later fill rows 7 ... 15, the
    furthest they go; the question names 7, and the answer the change the book's numbers give."""
    asked = next(s for s in SLIDES if s.step.view == "attention" and s.step.question)
    learned = Settings(text=ROSE)
    assert words.lecture_shift(learned, 9) == 16 - 9
    assert words.lecture_shift(replace(learned, scheme="sinusoidal"), 9) == 8  # a formula
    assert words.lecture_shift(replace(learned, context_length=32), 9) == 8  # room for 8
    assert words.lecture_shift(replace(learned, context_length=9), 9) == 8  # cannot move
    assert question_text(asked, "learned", None, shift=7) == (
        "The sentence moves 7 positions later. Will the learned scheme's attention scores change?"
    )
    assert question_text(asked, "learned", None, shift=1).startswith(
        "The sentence moves 1 position later."
    )
    change = printed(largest_change(learned, 7))
    assert words.shift_answer(view_of(replace(learned, shift=7))) == (
        "Yes: moved 7 positions later (as far as the table's 16 rows hold these 9 tokens: 8 "
        "later they would need row 16, which raises `IndexError`), the learned scheme's scores "
        f"change by up to {change}: the position itself matters, not only the distance."
    )
    assert words.shift_answer(view_of(replace(learned, shift=5))).startswith(  # not the lecture's
        "Yes: the learned scheme's scores change by up to"
    )


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal"])
def test_one_token_moved_reads_as_one_position_and_one_weight(scheme: str) -> None:
    """Issue 42: a one-token sentence moved 3 later read "to positions 3–3" and "the weights
    by up to 0.0". Its one position is named alone, and its one weight (softmax over one key)
    is said to stay 1, while its score changes by the book's amount."""
    settings = Settings(text="Hello", scheme=scheme, shift=3)  # type: ignore[arg-type]
    assert token_ids("Hello") == [15496]
    change = largest_change(settings, 3)
    assert change > 0.005
    assert words.shift_sentence(view_of(settings), markdown=False) == (
        f"Moved 3 positions later (to position 3), the {scheme} scheme's scores change by up "
        f"to {printed(change)} (its one weight stays 1: a single token can attend only to "
        "itself): the position itself matters, not only the distance."
    )
    still = words.shift_sentence(view_of(replace(settings, shift=0)), markdown=False)
    assert still.startswith("The sentence stands at position 0. Move it later")
