"""posviz.lesson.lecture: the steps as data (each names its view), the clicks they make (a
question takes two), and the questions and answers worded from numbers computed here with
tests/reference.py."""

from __future__ import annotations

import itertools

import pytest
import torch
from reference import book_attention, book_window, largest_row_difference, repeated_groups

from posviz.attention import book_attention_weights
from posviz.compare import DEFAULT_COMPARE_TEXT, DEFAULT_TEXT, compare_with_text
from posviz.config import SCHEMES, Scheme
from posviz.embeddings import SeededEmbeddings
from posviz.lesson.lecture import (
    LECTURE,
    LENGTH_STEPS,
    SLIDES,
    STEPS,
    TRAINING_STEPS,
    Question,
    Step,
    input_answer,
    question_text,
    similarity_answer,
    slides,
    token_answer,
    word_order_answer,
)
from posviz.pipeline import embed_window
from posviz.plots.heatmaps import embeddings_chart, similarity_chart
from posviz.query import STEP_COUNT
from posviz.tokenizer import encode

ROSE = "A rose is a rose is a rose."


@pytest.fixture(scope="module")
def tables() -> SeededEmbeddings:
    return SeededEmbeddings.create(seed=123, emb_dim=64)


def test_the_story_goes_from_text_to_word_order() -> None:
    assert [step.view for step in STEPS] == [
        "text", "tokens", "embeddings", "embeddings", "embeddings", "similarity", "word-order",
        "geometry", "distance", "attention", "attention",
    ]  # fmt: skip
    assert (*STEPS, *TRAINING_STEPS, *LENGTH_STEPS) == LECTURE, "a table learns, then length"
    assert [step.view for step in TRAINING_STEPS] == ["training", "training"]
    assert [step.view for step in LENGTH_STEPS] == ["length", "length"]
    assert [step.panels for step in STEPS[2:5]] == [1, 2, 3]
    asked = [step.title for step in STEPS if step.question is not None]
    assert asked == ["Token embeddings", "Input embeddings = token + position",
                     "Similarity between positions", "Word order",
                     "The shape of the positions", "Distance and length",
                     "The shift test"]  # fmt: skip


def test_a_question_takes_two_clicks_question_first() -> None:
    assert len(SLIDES) == len(LECTURE) + 11 == STEP_COUNT == 26
    assert [slide.number for slide in SLIDES] == list(range(1, 27))
    for before, after in itertools.pairwise(SLIDES):
        if before.step is after.step:
            assert before.step.question is not None
            assert (before.revealed, after.revealed) == (False, True)
            assert not before.outlines and after.outlines
            assert before.title.split(". ", 1)[1] == after.title.split(". ", 1)[1]
    input_question = SLIDES[5]
    assert input_question.step.panels == 3 and input_question.panels == 2  # the sum not yet
    assert SLIDES[6].panels == 3
    assert all(slide.caption_for("learned") == "" for slide in SLIDES if slide.revealed
               and slide.step.question)  # fmt: skip


def test_a_new_view_adds_steps_as_data() -> None:
    extra = Step("Geometry", "Distances.", view="geometry", question=Question("Near?", "Near?"))
    more = slides((*LECTURE, extra))
    assert len(more) == len(SLIDES) + 2
    assert more[-1].step.view == "geometry" and more[-2].title == "27. Geometry"


@pytest.mark.parametrize("scheme", SCHEMES)
def test_titles_and_captions_follow_the_scheme(scheme: Scheme) -> None:
    titles = [slide.title_for(scheme) for slide in SLIDES]
    assert [title.split(". ", 1)[0] for title in titles] == [str(n) for n in range(1, 27)]
    if scheme == "none":
        assert "5. No positional signal" in titles
        assert "6. Input embeddings = token embeddings" in titles
        assert "without a positional scheme" in SLIDES[4].caption_for(scheme).lower()


def test_questions_name_the_repeated_token(tables: SeededEmbeddings) -> None:
    window = embed_window(tables, encode(ROSE), context_length=16, scheme="none")
    marks = embeddings_chart(window, panels=1, outlines=False).decisions
    assert question_text(SLIDES[2], "none", marks, markdown=False) == (
        "'␣rose' stands at positions 1, 4 and 7. Are its token rows equal?"
    )
    assert question_text(SLIDES[5], "none", marks) == (
        "Nothing is added: are the rows of “␣rose” at 1, 4 and 7 still equal?"
    )
    assert question_text(SLIDES[4], "none", marks) == ""  # no question on the position step
    lonely = embeddings_chart(embed_window(tables, encode("Every effort"), context_length=4))
    assert "Two occurrences" in question_text(SLIDES[2], "learned", lonely.decisions)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_answers_state_the_numbers(tables: SeededEmbeddings, scheme: Scheme) -> None:
    ids = encode(ROSE)
    window = embed_window(tables, ids, context_length=16, scheme=scheme)
    token, _, inputs = (m.numpy() for m in book_window(
        scheme, seed=123, emb_dim=64, context_length=16, token_ids=ids
    ))  # fmt: skip
    rose = repeated_groups(ids)[encode(" rose")[0]]
    decisions = embeddings_chart(window).decisions
    assert largest_row_difference(token[rose]) == 0.0
    assert token_answer(decisions, markdown=False) == (
        "Yes: one ID, one row. '␣rose' at 1, 4 and 7: identical (largest difference 0.0)."
    )
    difference = largest_row_difference(inputs[rose])
    answer = input_answer(decisions, markdown=False)
    if scheme in ("none", "alibi", "t5"):
        assert difference == 0.0
        assert answer.startswith("Yes: '␣rose' at 1, 4 and 7 still identical (largest difference")
        # ALiBi and T5 add nothing to the input: their bias on the scores tells them apart
        assert ("bag of tokens" in answer) is (scheme == "none")
        assert ("bias on the attention scores" in answer) is (scheme != "none")
    else:
        assert answer.startswith("No: '␣rose' at 1, 4 and 7 now differs")
        assert f"(largest difference {difference:.2f})" in answer
    similarity = similarity_answer(similarity_chart(window).decisions, markdown=False)
    assert "exactly the 5 pairs of one token, such as '␣rose' (1, 4), (1, 7) and (4, 7)" in (
        similarity
    )
    cos = torch.nn.functional.cosine_similarity
    values = [
        float(cos(torch.from_numpy(inputs[p]).double(), torch.from_numpy(inputs[q]).double(), 0))
        for p, q in ((1, 4), (1, 7), (4, 7))
    ]
    if scheme in ("none", "alibi", "t5"):
        assert "still read 1.0" in similarity
    else:
        low, high = f"{min(values):.2f}", f"{max(values):.2f}"
        assert (
            f"read {low} to {high}." in similarity
            if low != high
            else f"read {low}." in (similarity)
        )


def test_the_word_order_answer_quotes_the_comparison(tables: SeededEmbeddings) -> None:
    comparison = compare_with_text(
        tables, encode(DEFAULT_TEXT), DEFAULT_COMPARE_TEXT, context_length=16,
        scheme="learned", weights=book_attention_weights(d_in=64, d_out=64), causal=False,
    )  # fmt: skip
    attention = book_attention(64, 64).double()  # the book's SelfAttention_v2, in float64

    def means(text: str, index: int) -> torch.Tensor:
        rows = book_window("learned", seed=123, emb_dim=64, context_length=16,
                           token_ids=encode(text))[index]  # fmt: skip
        with torch.no_grad():
            return attention(rows.double()).mean(dim=0)

    cos = torch.nn.functional.cosine_similarity
    without = float(cos(means(DEFAULT_TEXT, 0), means(DEFAULT_COMPARE_TEXT, 0), dim=0))
    positioned = float(cos(means(DEFAULT_TEXT, 2), means(DEFAULT_COMPARE_TEXT, 2), dim=0))
    answer = word_order_answer(comparison, markdown=False)
    assert answer.startswith(
        "No: without positions each context vector of 'The dog bites the man' is one of 'The "
        "man bites the dog''s, reordered"
    )
    assert f"their means have cosine {without:.6f}." in answer and f"{without:.6f}" == "1.000000"
    assert f"With positions the cosine is {positioned:.6f}: now attention sees two" in answer
