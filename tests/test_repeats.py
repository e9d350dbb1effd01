"""posviz.repeats: where each repeated token stands and how far apart its rows are, against
tests/reference.py (every pair of occurrences compared with numpy, no posviz)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import book_window, largest_row_difference, repeated_groups

from posviz.config import SCHEMES, Scheme
from posviz.embeddings import SeededEmbeddings
from posviz.pipeline import embed_window
from posviz.repeats import repeat_facts, repeated_positions
from posviz.tokenizer import encode

ROSE = "A rose is a rose is a rose."
FOX = "The quick brown fox jumps over the lazy dog and the quick brown fox runs away"


@pytest.fixture(scope="module")
def tables() -> SeededEmbeddings:
    return SeededEmbeddings.create(seed=123, emb_dim=64)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=14))
def test_repeated_positions_are_every_position_of_each_repeated_id(ids: list[int]) -> None:
    assert repeated_positions(ids) == {k: tuple(v) for k, v in repeated_groups(ids).items()}
    assert list(repeated_positions(ids)) == list(repeated_groups(ids))  # first occurrence first


def test_rose_is_at_one_four_and_seven() -> None:
    rose, is_, a = encode(" rose")[0], encode(" is")[0], encode(" a")[0]
    assert repeated_positions(encode(ROSE)) == {rose: (1, 4, 7), is_: (2, 5), a: (3, 6)}


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("text", [ROSE, FOX], ids=["rose", "fox"])
def test_differences_match_every_pair_of_rows(
    tables: SeededEmbeddings, scheme: Scheme, text: str
) -> None:
    ids = encode(text)
    window = embed_window(tables, ids, context_length=16, scheme=scheme)
    token, _, inputs = (m.numpy() for m in book_window(
        scheme, seed=123, emb_dim=64, context_length=16, token_ids=ids
    ))  # fmt: skip
    facts = repeat_facts(window)
    groups = repeated_groups(ids)
    assert {r.token_id: list(r.positions) for r in facts.tokens} == groups
    counts = [r.count for r in facts.tokens]
    assert counts == sorted(counts, reverse=True), "most frequent first"
    for repeat in facts.tokens:
        rows = list(repeat.positions)
        assert repeat.token_difference == 0.0  # one id, one row of the table
        assert repeat.token_difference == largest_row_difference(token[rows])
        assert repeat.input_difference == pytest.approx(
            largest_row_difference(inputs[rows]), abs=1e-6
        )
        lengths = np.linalg.norm(inputs[rows].astype(np.float64), axis=1)
        assert repeat.length_difference == pytest.approx(np.ptp(lengths), abs=1e-6)
        if scheme in ("none", "alibi", "t5"):
            assert repeat.input_difference == 0.0
        else:
            assert repeat.input_difference > 0.1
        if scheme == "rope":  # a rotation keeps each row's length
            assert repeat.length_difference < 1e-4
    if text == ROSE:
        assert facts.main is not None and facts.main.positions == (1, 4, 7)
        assert facts.marked_rows == (1, 2, 3, 4, 5, 6, 7)


def test_no_repeats_no_facts(tables: SeededEmbeddings) -> None:
    window = embed_window(tables, encode("Every effort moves you"), context_length=4)
    facts = repeat_facts(window)
    assert facts.tokens == () and facts.main is None and facts.num_positions == 4


def test_rows_that_differ_are_measured_not_assumed() -> None:
    """A made-up window whose 'repeated' token rows differ: the facts say so."""
    from posviz.pipeline import WindowEmbeddings

    token = torch.tensor([[1.0, 2.0], [0.0, 0.0], [1.0, 2.5]])
    window = WindowEmbeddings(
        token_ids=(7, 8, 7), token_texts=("a", "b", "a"), context_length=3, scheme="none",
        token_embeddings=token, pos_embeddings=torch.zeros(3, 2), input_embeddings=token,
    )  # fmt: skip
    (repeat,) = repeat_facts(window).tokens
    assert repeat.token_difference == 0.5 == repeat.input_difference
