"""posviz.compare: order-blindness, per scheme, against a direct torch computation.

The reference (tests/reference.py) builds everything the book's way, independently of posviz:
``torch.manual_seed(seed)``, ``nn.Embedding(50257, d)``, ``nn.Embedding(T, d)``; then
``torch.manual_seed(789)`` and the book's ``SelfAttention_v2`` run in float64.
"""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from reference import (
    book_attention,
    book_causal_attention,
    book_layers,
    book_rope,
    get_slopes,
    relative_position_bucket,
    sinusoidal,
    t5_relative_attention_bias,
)

from posviz.attention import book_attention_weights
from posviz.compare import (
    DEFAULT_COMPARE_TEXT,
    DEFAULT_TEXT,
    MAX_COMPARE_TOKENS,
    OrderComparison,
    compare_order,
    compare_with_text,
    match_permutation,
    token_difference,
)
from posviz.config import SCHEMES, Scheme
from posviz.embeddings import SeededEmbeddings
from posviz.tokenizer import encode

SEED, EMB_DIM, CONTEXT_LENGTH = 123, 32, 8
IDS_A, IDS_B = encode(DEFAULT_TEXT), encode(DEFAULT_COMPARE_TEXT)


@pytest.fixture(scope="module")
def tables() -> SeededEmbeddings:
    return SeededEmbeddings.create(seed=SEED, emb_dim=EMB_DIM)


def compare(
    tables: SeededEmbeddings, ids_a: list[int], ids_b: list[int], scheme: Scheme, causal: bool
) -> OrderComparison:
    weights = book_attention_weights(d_in=EMB_DIM, d_out=EMB_DIM)
    return compare_order(
        tables,
        ids_a,
        ids_b,
        context_length=CONTEXT_LENGTH,
        scheme=scheme,
        weights=weights,
        causal=causal,
    )


def book_context(
    token_ids: list[int], scheme: Scheme, causal: bool, positions: bool
) -> torch.Tensor:
    """Context vectors the book's way: seeded nn.Embedding tables, SelfAttention_v2 in float64."""
    token_embedding_layer, pos_embedding_layer = book_layers(SEED, EMB_DIM, CONTEXT_LENGTH)
    n = len(token_ids)
    with torch.no_grad():
        x = token_embedding_layer(torch.tensor(token_ids))
        if positions and scheme == "learned":
            x = x + pos_embedding_layer(torch.arange(n))
        if positions and scheme == "sinusoidal":
            x = x + sinusoidal(n, EMB_DIM)
        module = book_attention(EMB_DIM, EMB_DIM).double()
        x = x.double()
        if positions and scheme == "rope":
            queries = book_rope(module.W_query(x))[1]
            keys = book_rope(module.W_key(x))[1]
            scores = queries @ keys.T
            if causal:
                scores = scores.masked_fill(torch.triu(torch.ones(n, n), 1).bool(), -torch.inf)
            return torch.softmax(scores / EMB_DIM**0.5, dim=-1) @ module.W_value(x)
        if positions and scheme in ("alibi", "t5"):  # one head: its bias on the scaled scores
            relative = torch.arange(n)[None, :] - torch.arange(n)[:, None]  # j - i
            if scheme == "alibi":  # -m (i - j); without the mask posviz takes |i - j|
                bias = get_slopes(1)[0] * (-relative.abs()).double()
            else:
                buckets = relative_position_bucket(relative, bidirectional=False)
                bias = t5_relative_attention_bias(SEED, 1)[buckets, 0].double()
            scores = module.W_query(x) @ module.W_key(x).T / EMB_DIM**0.5 + bias
            if causal:
                scores = scores.masked_fill(torch.triu(torch.ones(n, n), 1).bool(), -torch.inf)
            return torch.softmax(scores, dim=-1) @ module.W_value(x)
        return book_causal_attention(module, x) if causal else module(x)


def test_default_pair_is_the_same_tokens_in_another_order() -> None:
    assert IDS_A != IDS_B
    assert Counter(IDS_A) == Counter(IDS_B)
    assert len(IDS_A) == 5  # The ␣dog ␣bites ␣the ␣man: every word but the first after a space


CASES = [
    pytest.param(scheme, causal, id=f"{scheme}-{'causal' if causal else 'no-mask'}")
    for scheme in SCHEMES
    for causal in (False, True)
]


@pytest.mark.parametrize(("scheme", "causal"), CASES)
def test_context_vectors_are_the_books_bit_for_bit(
    tables: SeededEmbeddings, scheme: Scheme, causal: bool
) -> None:
    result = compare(tables, IDS_A, IDS_B, scheme, causal)
    assert result.without_positions is not None and result.with_positions is not None
    for summary, positions in ((result.without_positions, False), (result.with_positions, True)):
        assert torch.equal(summary.context_a, book_context(IDS_A, scheme, causal, positions))
        assert torch.equal(summary.context_b, book_context(IDS_B, scheme, causal, positions))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_without_positions_the_context_vectors_are_only_reordered(
    tables: SeededEmbeddings, scheme: Scheme
) -> None:
    result = compare(tables, IDS_A, IDS_B, scheme, causal=False)
    assert result.status == "permutation"
    assert result.order == (0, 4, 2, 3, 1)
    assert result.token_rows_equal
    without = result.without_positions
    assert without is not None
    # Independent check: B's rows, put back into A's order, are A's rows.
    back = [result.token_ids_b.index(t) for t in (IDS_A[0], IDS_A[1], IDS_A[2], IDS_A[3])]
    torch.testing.assert_close(without.context_b[back], without.context_a[:4], rtol=0, atol=1e-12)
    assert without.permuted
    assert without.mean_cosine == pytest.approx(1.0, abs=1e-12)
    mean_a, mean_b = without.context_a.mean(0), without.context_b.mean(0)
    torch.testing.assert_close(mean_a, mean_b, rtol=0, atol=1e-12)
    # "bites" sees the same bag of tokens in both texts: the same context vector.
    assert 2 in without.same_position_rows


@pytest.mark.parametrize("scheme", ["alibi", "t5"])
@pytest.mark.parametrize("causal", [False, True], ids=["no-mask", "causal"])
def test_a_bias_on_the_scores_breaks_the_symmetry(
    tables: SeededEmbeddings, scheme: Scheme, causal: bool
) -> None:
    """ALiBi and T5 add nothing to the input, yet the two texts' context vectors differ:
    their bias depends on the distance between two tokens, which the reordering changes."""
    result = compare(tables, IDS_A, IDS_B, scheme, causal)
    assert result.with_positions is not None and not result.with_positions.permuted
    assert result.input_max_difference == 0.0


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal", "rope"])
@pytest.mark.parametrize("causal", [False, True], ids=["no-mask", "causal"])
def test_positions_break_the_symmetry(
    tables: SeededEmbeddings, scheme: Scheme, causal: bool
) -> None:
    result = compare(tables, IDS_A, IDS_B, scheme, causal)
    with_positions = result.with_positions
    assert with_positions is not None
    assert not with_positions.permuted
    assert with_positions.max_difference > 1e-2
    direct = torch.nn.functional.cosine_similarity(
        with_positions.context_a.mean(0), with_positions.context_b.mean(0), dim=0
    )
    assert with_positions.mean_cosine == pytest.approx(float(direct), abs=1e-12)
    assert with_positions.mean_cosine < 1 - 1e-6
    if scheme != "rope":  # RoPE leaves the input alone and rotates queries and keys
        assert result.input_max_difference > 1e-2


def test_none_scheme_stays_order_blind(tables: SeededEmbeddings) -> None:
    result = compare(tables, IDS_A, IDS_B, "none", causal=False)
    assert result.with_positions is not None and result.with_positions.permuted
    assert result.input_max_difference == 0.0


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_causal_mask_alone_breaks_the_symmetry(
    tables: SeededEmbeddings, scheme: Scheme
) -> None:
    result = compare(tables, IDS_A, IDS_B, scheme, causal=True)
    without = result.without_positions
    assert without is not None
    assert not without.permuted
    assert without.mean_cosine < 1 - 1e-3
    # ... but the first token sees only itself: "The" has one context vector in both texts.
    assert without.same_position_rows == (0,)


def test_the_mask_keeps_a_bag_of_the_earlier_tokens(tables: SeededEmbeddings) -> None:
    """Same last token after the same tokens in another order: same last context vector."""
    ids_a, ids_b = encode("The dog bites the man"), encode("The bites dog the man")
    result = compare(tables, ids_a, ids_b, "none", causal=True)
    assert result.without_positions is not None
    assert result.without_positions.same_position_rows == (0, 3, 4)


@pytest.mark.parametrize(
    ("text_a", "text_b", "status"),
    [
        pytest.param("", "The dog", "empty", id="first-empty"),
        pytest.param("The dog", "   ", "empty", id="second-blank"),
        pytest.param("The dog", "The dog", "identical", id="identical"),
        pytest.param("The dog bites", "The dog bites the man", "different_tokens", id="counts"),
        pytest.param("The dog bites the man", "dog bites The man", "different_tokens", id="space"),
    ],
)
def test_texts_that_are_not_a_reordering_get_a_status(
    tables: SeededEmbeddings, text_a: str, text_b: str, status: str
) -> None:
    ids_a, ids_b = encode(text_a), encode(text_b.strip())
    result = compare(tables, ids_a, ids_b, "learned", causal=False)
    assert result.status == status
    if status == "different_tokens":
        assert result.difference is not None and result.without_positions is None
        assert result.difference.only_in_a or result.difference.only_in_b


def test_token_difference_counts_repeats() -> None:
    difference = token_difference([1, 2, 2, 3], [2, 3, 3, 4])
    assert difference.only_in_a == (1, 2)
    assert difference.only_in_b == (3, 4)
    # Both words moved across the start of the text: "The"/"␣The", "␣dog"/"dog" all differ.
    swapped = token_difference(encode("The dog"), encode("dog The"))
    assert swapped.only_in_a == (*encode("The"), *encode(" dog"))
    assert swapped.only_in_b == (*encode("dog"), *encode(" The"))


@pytest.mark.parametrize(
    ("ids_a", "ids_b"),
    [
        pytest.param([1, 2, 3], [3, 1, 2], id="plain"),
        pytest.param([7, 7, 8, 7], [8, 7, 7, 7], id="repeats"),
        pytest.param([5], [5], id="one"),
    ],
)
def test_match_permutation_maps_b_onto_a(ids_a: list[int], ids_b: list[int]) -> None:
    order = match_permutation(ids_a, ids_b)
    assert order is not None
    assert sorted(order) == list(range(len(ids_a)))
    assert [ids_a[i] for i in order] == ids_b
    assert match_permutation(ids_a, [*ids_b, 1]) is None
    assert match_permutation([1, 2], [1, 3]) is None


def test_long_texts_are_refused_with_a_status(tables: SeededEmbeddings) -> None:
    ids = list(range(1000, 1000 + MAX_COMPARE_TOKENS + 1))
    result = compare(tables, ids, ids[::-1], "learned", causal=False)
    assert result.status == "too_long" and result.without_positions is None
    at_limit = compare_order(
        tables,
        ids[:-1],
        ids[-2::-1],
        context_length=MAX_COMPARE_TOKENS,
        scheme="learned",
        weights=book_attention_weights(d_in=EMB_DIM, d_out=EMB_DIM),
    )
    assert at_limit.status == "permutation"


def test_compare_with_text_takes_the_second_texts_first_window(
    tables: SeededEmbeddings,
) -> None:
    result = compare_with_text(
        tables,
        IDS_A,
        DEFAULT_COMPARE_TEXT + " and the cat",
        context_length=5,
        scheme="learned",
        weights=book_attention_weights(d_in=EMB_DIM, d_out=EMB_DIM),
    )
    assert result.token_ids_b == tuple(IDS_B)
    assert result.second_text_cut == 3  # " and", " the", " cat"
    assert result.status == "permutation"
