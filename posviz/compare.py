"""Order-blindness on two texts: the same tokens in another order.

Section 2.8 adds positions because self-attention on its own cannot see order. Given the token
ids of two texts, :func:`compare_order` checks that they are the same tokens in another order
(a permutation), embeds both as the page does, and runs the book's self-attention
(:mod:`posviz.attention`) on both twice: on the token embeddings alone ("without positions")
and on what the scheme gives attention ("with positions": the input embeddings for ``learned``
and ``sinusoidal``; for ``rope`` the token embeddings, with queries and keys rotated inside
attention as RoPE does; for ``alibi`` and ``t5`` the token embeddings, with the scheme's bias
added to the scores of the one head ``SelfAttention_v2`` has, see
:func:`posviz.schemes.score_bias`). Without positions the second text's context vectors are
the first text's, permuted, so their mean (an order-independent summary) is the same vector:
cosine 1. With positions they are not.

If the two texts are not a permutation of each other (a token more or less, or a different
token, often a word that gained or lost its leading space), :class:`OrderComparison` says which
tokens differ instead. Words for the page live in :mod:`posviz.lesson.word_order`.

>>> match_permutation([5, 7, 5, 9], [9, 5, 7, 5])
(3, 0, 1, 2)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal

import torch

from posviz.attention import SAME_TOLERANCE, Attention, AttentionWeights, self_attention
from posviz.config import Scheme, Settings
from posviz.pipeline import EmbeddingTables, WindowEmbeddings, embed_window
from posviz.schemes import Options, default_options, score_bias
from posviz.schemes import scheme as scheme_of
from posviz.tokenizer import encode, token_texts

CompareStatus = Literal["permutation", "identical", "different_tokens", "empty", "too_long"]
MAX_COMPARE_TOKENS: Final = 128  # a sentence or two shows it; 4 attention passes stay ~0.1 s

# The default pair: GPT-2 gives "The", " dog", " bites", " the", " man" and the same five
# tokens in another order ("dog" and " dog" would be different tokens: both stay mid-sentence).
DEFAULT_TEXT: Final = "The dog bites the man"
DEFAULT_COMPARE_TEXT: Final = "The man bites the dog"


def match_permutation(ids_a: Sequence[int], ids_b: Sequence[int]) -> tuple[int, ...] | None:
    """``order`` with ``ids_b[i] == ids_a[order[i]]`` for every ``i``, or ``None`` if ``ids_b``
    is not a reordering of ``ids_a``. Repeated tokens are matched in order of appearance."""
    if len(ids_a) != len(ids_b) or Counter(ids_a) != Counter(ids_b):
        return None
    where: dict[int, list[int]] = {}
    for position, token_id in enumerate(ids_a):
        where.setdefault(token_id, []).append(position)
    return tuple(where[token_id].pop(0) for token_id in ids_b)


@dataclass(frozen=True)
class TokenDifference:
    """Tokens (with repeats) that one text has and the other lacks."""

    only_in_a: tuple[int, ...]
    only_in_b: tuple[int, ...]
    texts_a: tuple[str, ...] = ()  # only_in_a as the chips write them (at the first occurrence)
    texts_b: tuple[str, ...] = ()


def token_difference(
    ids_a: Sequence[int],
    ids_b: Sequence[int],
    texts: tuple[Sequence[str] | None, Sequence[str] | None] = (None, None),
) -> TokenDifference:
    """Multiset difference both ways, each in order of first appearance, with each token's
    text at its first occurrence (``texts``: each text's tokens as
    :func:`posviz.tokenizer.token_texts` wrote them in the whole text; default: read alone).

    >>> difference = token_difference(encode("東京"), encode("京"))
    >>> difference.only_in_a, difference.texts_a
    ((30266, 109), ('東 (1 of 2)', '東 (2 of 2)'))
    """
    count_a, count_b = Counter(ids_a), Counter(ids_b)
    extra_a, extra_b = count_a - count_b, count_b - count_a
    only_a = tuple(t for t in dict.fromkeys(ids_a) for _ in range(extra_a[t]))
    only_b = tuple(t for t in dict.fromkeys(ids_b) for _ in range(extra_b[t]))
    names = [
        dict(reversed(tuple(zip(ids, token_texts(ids) if shown is None else shown, strict=True))))
        for ids, shown in zip((ids_a, ids_b), texts, strict=True)
    ]  # each token's text at its first occurrence
    return TokenDifference(
        only_a, only_b, tuple(names[0][t] for t in only_a), tuple(names[1][t] for t in only_b)
    )


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    """Cosine similarity of two vectors (0 if either is all zeros)."""
    norms = float(torch.linalg.vector_norm(a) * torch.linalg.vector_norm(b))
    return float(a @ b) / norms if norms else 0.0


@dataclass(frozen=True, eq=False)
class OrderSummary:
    """Self-attention over both texts, with or without positions, float64."""

    positions: bool  # False: the token embeddings alone; True: as the scheme gives them
    attention_a: Attention  # text A: queries, keys, values, weights, context vectors
    attention_b: Attention  # text B
    mean_cosine: float  # cosine of the two mean context vectors (order-independent summary)
    max_difference: float  # max |context_b[i] - context_a[order[i]]|: 0 if merely permuted

    @property
    def context_a(self) -> torch.Tensor:
        """The first text's context vectors, ``[n, d_out]``."""
        return self.attention_a.context_vecs  # [n, d_out]

    @property
    def context_b(self) -> torch.Tensor:
        """The second text's context vectors, ``[n, d_out]``."""
        return self.attention_b.context_vecs  # [n, d_out]

    @property
    def permuted(self) -> bool:
        """B's context vectors are A's in B's order (to float64 rounding)."""
        return self.max_difference <= SAME_TOLERANCE

    @property
    def same_position_rows(self) -> tuple[int, ...]:
        """Positions whose context vector is the same in both texts."""
        differences = (self.context_a - self.context_b).abs().amax(dim=1)  # [n]
        return tuple(int(i) for i in torch.nonzero(differences <= SAME_TOLERANCE).flatten())


@dataclass(frozen=True, eq=False)
class OrderComparison:
    """Everything the compare view shows for two texts."""

    status: CompareStatus
    scheme: Scheme
    causal: bool
    token_ids_a: tuple[int, ...]
    token_ids_b: tuple[int, ...]
    order: tuple[int, ...] | None = None  # token_ids_b[i] == token_ids_a[order[i]]
    difference: TokenDifference | None = None  # set when the texts use different tokens
    a: WindowEmbeddings | None = None
    b: WindowEmbeddings | None = None
    without_positions: OrderSummary | None = None
    with_positions: OrderSummary | None = None
    second_text_cut: int = 0  # tokens of the second text after its first window, not compared

    @property
    def input_max_difference(self) -> float:
        """max |B's input embeddings - A's, rearranged into B's order|; 0 for ``none``."""
        if self.a is None or self.b is None or self.order is None:
            raise ValueError("no permutation to compare")
        rearranged = self.a.input_embeddings[list(self.order)]  # [n, d]
        return float((self.b.input_embeddings - rearranged).abs().max())

    @property
    def token_rows_equal(self) -> bool:
        """B's token-embedding rows are exactly (bit for bit) A's rows in B's order."""
        if self.a is None or self.b is None or self.order is None:
            return False
        return torch.equal(self.b.token_embeddings, self.a.token_embeddings[list(self.order)])


def _summary(
    x_a: torch.Tensor,
    x_b: torch.Tensor,
    order: Sequence[int],
    weights: AttentionWeights,
    *,
    positions: bool,
    causal: bool,
    rope: bool,
    angles: torch.Tensor | None = None,
    scale: float = 1.0,
    bias: torch.Tensor | None = None,
) -> OrderSummary:
    attention_a, attention_b = (
        self_attention(x, weights, causal=causal, rope=rope, angles=angles, scale=scale, bias=bias)
        for x in (x_a, x_b)
    )
    context_a, context_b = attention_a.context_vecs, attention_b.context_vecs  # [n, d_out]
    return OrderSummary(
        positions=positions,
        attention_a=attention_a,
        attention_b=attention_b,
        mean_cosine=cosine(context_a.mean(dim=0), context_b.mean(dim=0)),
        max_difference=float((context_b - context_a[list(order)]).abs().max()),
    )


def compare_order(
    tables: EmbeddingTables,
    token_ids_a: Sequence[int],
    token_ids_b: Sequence[int],
    *,
    context_length: int,
    scheme: Scheme,
    weights: AttentionWeights,
    causal: bool = False,
    seed: int = Settings.seed,
    options: Options | None = None,
    texts: tuple[Sequence[str] | None, Sequence[str] | None] = (None, None),
) -> OrderComparison:
    """Compare two windows of at most ``context_length`` tokens each (see module docstring).

    ``weights`` must have ``d_in`` equal to the tables' ``emb_dim`` (``ValueError`` if not);
    ``seed``: the view's, for T5's seeded bias table; ``options``: the scheme's (RoPE's base),
    default their defaults; ``texts``: each window's tokens as read in its whole text
    (see :func:`~posviz.pipeline.embed_window`; default: read alone).
    """
    ids_a, ids_b = tuple(token_ids_a), tuple(token_ids_b)
    if not ids_a or not ids_b:
        return OrderComparison("empty", scheme, causal, ids_a, ids_b)
    if max(len(ids_a), len(ids_b)) > MAX_COMPARE_TOKENS:
        return OrderComparison("too_long", scheme, causal, ids_a, ids_b)
    order = match_permutation(ids_a, ids_b)
    if order is None:
        difference = token_difference(ids_a, ids_b, texts)
        return OrderComparison("different_tokens", scheme, causal, ids_a, ids_b, None, difference)
    options = {**default_options(), **(options or {})}
    a, b = (
        embed_window(
            tables, ids, context_length=context_length, scheme=scheme, options=options,
            token_texts=shown,
        )
        for ids, shown in zip((ids_a, ids_b), texts, strict=True)
    )  # fmt: skip
    without = _summary(
        a.token_embeddings,
        b.token_embeddings,
        order,
        weights,
        positions=False,
        causal=causal,
        rope=False,
    )
    bias, angles, scale = None, None, 1.0
    spec = scheme_of(scheme)
    if spec.rotation is not None:  # RoPE rotates queries and keys inside attention, not the input
        x_a, x_b = a.token_embeddings, b.token_embeddings
        angles = spec.rotation.angles(len(ids_a), weights.d_out, options)  # [n, d_out]
        scale = spec.rotation.scale(weights.d_out, options)  # on cos and sin (YaRN's factor)
    elif spec.biases_scores:  # ALiBi, T5: a bias on the scores of the one head
        x_a, x_b = a.token_embeddings, b.token_embeddings
        positions = torch.arange(len(ids_a))
        bias = score_bias(spec, positions, positions, heads=1, seed=seed)[0]  # [n, n]
    else:  # learned, sinusoidal: positions added; none: input == token embeddings
        x_a, x_b = a.input_embeddings, b.input_embeddings
    with_positions = _summary(
        x_a,
        x_b,
        order,
        weights,
        positions=True,
        causal=causal,
        rope=spec.rotates,
        angles=angles,
        scale=scale,
        bias=bias,
    )
    return OrderComparison(
        "identical" if ids_a == ids_b else "permutation",
        scheme,
        causal,
        ids_a,
        ids_b,
        order=order,
        a=a,
        b=b,
        without_positions=without,
        with_positions=with_positions,
    )


def compare_with_text(
    tables: EmbeddingTables,
    window_token_ids: Sequence[int],
    compare_text: str,
    *,
    context_length: int,
    scheme: Scheme,
    weights: AttentionWeights,
    causal: bool = False,
    seed: int = Settings.seed,
    options: Options | None = None,
    window_token_texts: Sequence[str] | None = None,
) -> OrderComparison:
    """:func:`compare_order` for the window on screen (its tokens written
    ``window_token_texts``, default: read alone) and the first window (at most
    ``context_length`` tokens) of ``compare_text``; ``second_text_cut`` counts the rest."""
    second = encode(compare_text)
    first_window = range(min(len(second), context_length))
    comparison = compare_order(
        tables,
        window_token_ids,
        second[:context_length],
        context_length=context_length,
        scheme=scheme,
        weights=weights,
        causal=causal,
        seed=seed,
        options=options,
        texts=(window_token_texts, token_texts(second, first_window)),
    )
    return replace(comparison, second_text_cut=max(len(second) - context_length, 0))
