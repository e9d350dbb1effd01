"""The book's self-attention (chapter 3, ``SelfAttention_v2``), exactly, off the global RNG.

The book does::

    torch.manual_seed(789)
    sa_v2 = SelfAttention_v2(d_in, d_out)  # nn.Linear(d_in, d_out, bias=False) x 3:
                                           # W_query, W_key, W_value, made in that order
    keys, queries, values = sa_v2.W_key(x), sa_v2.W_query(x), sa_v2.W_value(x)
    attn_scores = queries @ keys.T
    attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
    context_vec = attn_weights @ values

and, for the causal variant of section 3.5, fills the scores above the diagonal with ``-inf``
before the softmax. ``nn.Linear`` fills its weight with ``init.kaiming_uniform_(weight,
a=sqrt(5))``, i.e. uniform on ``±1/sqrt(d_in)``; :func:`book_attention_weights` draws the same
numbers from its own ``torch.Generator``, so concurrent sessions never touch torch's global
generator. Tests compare with the book's class made after ``torch.manual_seed(789)``.

**Why float64.** "Permuting the tokens permutes the context vectors" is exact in real
arithmetic, but float32 sums taken in another order round differently (about 1e-7). The
weights and the inputs are float32 numbers; widening them to float64 is exact, and float64
arithmetic keeps the rounding differences near 1e-16, nine orders of magnitude below what a
position signal changes. So posviz computes attention in float64 and calls two results "the
same" when they agree to :data:`SAME_TOLERANCE`.

>>> weights = book_attention_weights(d_in=4, d_out=4)
>>> x = torch.eye(3, 4)
>>> self_attention(x, weights).context_vecs.shape
torch.Size([3, 4])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import torch
import torch.nn.functional as F

from posviz.schemes import rope_angles, rope_rotate

ATTENTION_SEED: Final = 789  # the book's torch.manual_seed(789) before SelfAttention_v2
SAME_TOLERANCE: Final = 1e-9  # float64 rounding is ~1e-16; a position signal changes ~1e-2


@dataclass(frozen=True, eq=False)
class AttentionWeights:
    """``W_query``, ``W_key``, ``W_value`` of ``SelfAttention_v2``, each ``[d_out, d_in]``
    (``nn.Linear.weight`` layout: the layer computes ``x @ weight.T``), float32."""

    seed: int
    w_query: torch.Tensor  # [d_out, d_in]
    w_key: torch.Tensor  # [d_out, d_in]
    w_value: torch.Tensor  # [d_out, d_in]

    @property
    def d_in(self) -> int:
        """Width of the vectors attention reads (the embedding dimension)."""
        _, d_in = self.w_query.shape  # [d_out, d_in]
        return d_in

    @property
    def d_out(self) -> int:
        """Width of the queries, keys, values and context vectors."""
        d_out, _ = self.w_query.shape  # [d_out, d_in]
        return d_out

    @property
    def nbytes(self) -> int:
        """Memory held by the three matrices."""
        return sum(w.numel() * w.element_size() for w in (self.w_query, self.w_key, self.w_value))


def book_attention_weights(
    *, d_in: int, d_out: int, seed: int = ATTENTION_SEED
) -> AttentionWeights:
    """The weights of ``SelfAttention_v2(d_in, d_out)`` made right after
    ``torch.manual_seed(seed)``: three ``nn.Linear(d_in, d_out, bias=False)``, in the order
    ``W_query``, ``W_key``, ``W_value``."""
    if d_in < 1 or d_out < 1:
        raise ValueError(f"d_in and d_out must be positive, got {d_in} and {d_out}")
    generator = torch.Generator().manual_seed(seed)
    made = []
    for _ in range(3):  # W_query, W_key, W_value
        weight = torch.empty(d_out, d_in)  # [d_out, d_in]
        torch.nn.init.kaiming_uniform_(weight, a=math.sqrt(5), generator=generator)
        made.append(weight)
    return AttentionWeights(seed, *made)


@dataclass(frozen=True, eq=False)
class Attention:
    """Every intermediate of one self-attention pass over ``n`` tokens."""

    queries: torch.Tensor  # [n, d_out] (rotated for RoPE)
    keys: torch.Tensor  # [n, d_out] (rotated for RoPE)
    values: torch.Tensor  # [n, d_out]
    attn_weights: torch.Tensor  # [n, n], rows sum to 1
    context_vecs: torch.Tensor  # [n, d_out]


def self_attention(
    x: torch.Tensor,
    weights: AttentionWeights,
    *,
    causal: bool = False,
    rope: bool = False,
    angles: torch.Tensor | None = None,
    scale: float = 1.0,
    bias: torch.Tensor | None = None,
    dtype: torch.dtype = torch.float64,
) -> Attention:
    """``SelfAttention_v2.forward(x)`` for ``x`` ``[n, d_in]``, computed in ``dtype``.

    ``causal``: mask the scores above the diagonal with ``-inf`` (token ``i`` attends to
    tokens ``0..i`` only), as GPT does. ``rope``: rotate the queries and keys of position ``p``
    by ``p * theta`` (see :func:`posviz.schemes.rope_rotate`), as RoPE does, by ``angles``
    ``[n, d_out]`` if given (a scheme's options: :attr:`posviz.schemes.Rotation.angles`), else
    by :func:`posviz.schemes.rope_angles`, the rotated queries and keys multiplied by ``scale``
    (:attr:`posviz.schemes.Rotation.scale`: what cos and sin are multiplied by); values and
    ``x`` are not rotated. ``bias``
    ``[n, n]``: added to the scaled scores before the softmax, as
    ALiBi and T5 do (:func:`posviz.schemes.score_bias`).
    """
    if x.ndim != 2 or x.shape[1] != weights.d_in:
        raise ValueError(f"x must be [n, {weights.d_in}], got {list(x.shape)}")
    x = x.to(dtype)
    queries = F.linear(x, weights.w_query.to(dtype))  # [n, d_out]
    keys = F.linear(x, weights.w_key.to(dtype))  # [n, d_out]
    values = F.linear(x, weights.w_value.to(dtype))  # [n, d_out]
    n = x.shape[0]
    if rope:
        if angles is None:
            angles = rope_angles(n, weights.d_out)  # [n, d_out]
        queries, keys = rope_rotate(queries, angles), rope_rotate(keys, angles)
        if scale != 1.0:
            queries, keys = queries * scale, keys * scale
    attn_scores = queries @ keys.T / keys.shape[-1] ** 0.5  # [n, n], scaled
    if bias is not None:
        attn_scores = attn_scores + bias.to(dtype)
    if causal:
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # [n, n]
        attn_scores = attn_scores.masked_fill(mask, -torch.inf)
    attn_weights = torch.softmax(attn_scores, dim=-1)  # [n, n]
    context_vecs = attn_weights @ values  # [n, d_out]
    return Attention(queries, keys, values, attn_weights, context_vecs)
