"""Positional schemes: how a position enters the vectors the model sees.

* ``learned``: GPT-2's and the book's ``nn.Embedding(context_length, emb_dim)``, added.
* ``sinusoidal``: the fixed encoding of Vaswani et al. (2017), added.
* ``none``: nothing; the input equals the token embeddings and attention is blind to order.
* ``rope``: rotary embeddings (Su et al. 2021, used by Llama): nothing is added; each pair of
  dimensions is rotated by ``position * theta_i``. Real models rotate queries and keys inside
  attention; posviz rotates the token vectors to show the effect.
* ``alibi``: attention with linear biases (Press et al. 2022): nothing is added to the input;
  head ``K`` adds ``-m_K * (i - j)`` to the attention score of query ``i`` and key ``j``, with
  the slopes of ALiBi's reference ``get_slopes`` (:func:`alibi_slopes`).
* ``t5``: T5's relative position bias (Raffel et al. 2020): nothing is added to the input; head
  ``K`` adds ``E[bucket(j - i), K]`` to the score, ``bucket`` as T5's
  ``_relative_position_bucket`` (:func:`t5_buckets`), ``E`` a learned ``nn.Embedding(32, H)``
  (posviz has the seeded init, :func:`t5_bias_table`).

The input panels of ``none``, ``alibi`` and ``t5`` are the same: zeros added, input = tokens.

Formulas only: what the page says about each scheme is in :mod:`posviz.lesson.schemes`.

>>> sinusoidal_encoding(2, 4)[1]
tensor([0.8415, 0.5403, 0.0100, 0.9999])
>>> alibi_slopes(4)
(0.25, 0.0625, 0.015625, 0.00390625)
>>> t5_buckets(torch.tensor([0, -1, -15, -16, -127, -128, -300, 5])).tolist()
[0, 1, 15, 16, 31, 31, 31, 0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import torch

from posviz.config import Scheme

ROPE_BASE: Final = 10_000.0  # theta base of the Transformer paper and of Llama 2
SINUSOIDAL_BASE: Final = 10_000.0
T5_NUM_BUCKETS: Final = 32  # T5's relative_attention_num_buckets
T5_MAX_DISTANCE: Final = 128  # T5's relative_attention_max_distance: buckets stop growing here


@dataclass(frozen=True)
class Positioned:
    """The middle and right panels for one scheme.

    ``position_signal`` is what the scheme contributes per position: the added vectors for
    ``learned`` and ``sinusoidal``, zeros for ``none``, and ``cos(position * theta)`` for
    ``rope``. ``input_embeddings`` is what the first transformer block receives.
    """

    scheme: Scheme
    position_signal: torch.Tensor  # [n, d]
    input_embeddings: torch.Tensor  # [n, d]


def sinusoidal_encoding(context_length: int, emb_dim: int) -> torch.Tensor:
    """``PE[p, 2i] = sin(p / 10000^(2i/d))``, ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``.

    Sine and cosine interleave. For an odd ``emb_dim`` the last dimension is a sine (its
    cosine partner would be dimension ``d``, which does not exist). Computed in float64 and
    rounded once to float32: shape ``[context_length, emb_dim]``.
    """
    positions = torch.arange(context_length, dtype=torch.float64)[:, None]  # [T, 1]
    two_i = torch.arange(0, emb_dim, 2, dtype=torch.float64)  # 2i for each pair
    angles = positions / SINUSOIDAL_BASE ** (two_i / emb_dim)  # [T, ceil(d/2)]
    encoding = torch.empty(context_length, emb_dim, dtype=torch.float64)
    encoding[:, 0::2] = torch.sin(angles)
    encoding[:, 1::2] = torch.cos(angles[:, : emb_dim // 2])
    return encoding.to(torch.float32)


def rope_angles(context_length: int, emb_dim: int) -> torch.Tensor:
    """``position * theta_i`` with ``theta_i = base^(-2i/d)`` for the split-halves pairing of
    the book's Llama notebook: dimension ``j`` and ``j + d/2`` share ``theta_j``.

    For an odd ``emb_dim`` the last dimension has no partner and angle 0 (left unrotated).
    Shape ``[context_length, emb_dim]``, float32 as in the notebook.
    """
    half = emb_dim // 2
    inv_freq = 1.0 / (ROPE_BASE ** (torch.arange(0, 2 * half, 2)[:half].float() / (2 * half)))
    positions = torch.arange(context_length, dtype=torch.float32)
    angles = positions[:, None] * inv_freq[None, :]  # [T, d/2]
    pad = torch.zeros(context_length, emb_dim - 2 * half)  # odd d: one unrotated dimension
    return torch.cat([angles, angles, pad], dim=1)


def rope_rotate(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Rotate pairs ``(x[j], x[j + d/2])`` of each row of ``x`` ``[n, d]`` by ``angles``
    ``[n, d]`` (from :func:`rope_angles`): shape ``[n, d]``."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half : 2 * half]  # [n, d/2] each
    rest = x[..., 2 * half :]  # [n, d % 2]: an odd last dimension, not rotated
    rotated = torch.cat((-x2, x1, torch.zeros_like(rest)), dim=-1)  # [n, d]
    cos, sin = torch.cos(angles), torch.sin(angles)  # [n, d]
    return x * cos + rotated * sin


def apply_scheme(
    scheme: Scheme, token_embeddings: torch.Tensor, learned_pos_embeddings: torch.Tensor | None
) -> Positioned:
    """Combine ``token_embeddings`` ``[n, d]`` with positions ``0..n-1`` by ``scheme``.

    ``learned_pos_embeddings`` (rows ``0..n-1`` of the learned table) is needed only for
    ``learned``.
    """
    n, emb_dim = token_embeddings.shape
    if scheme == "learned":
        if learned_pos_embeddings is None:
            raise ValueError("the learned scheme needs the positional embedding rows")
        signal = learned_pos_embeddings[:n]  # [n, d]
        return Positioned(scheme, signal, token_embeddings + signal)
    if scheme == "sinusoidal":
        signal = sinusoidal_encoding(n, emb_dim)  # [n, d]
        return Positioned(scheme, signal, token_embeddings + signal)
    if scheme in ("none", "alibi", "t5"):  # alibi and t5 act on the attention scores only
        return Positioned(scheme, torch.zeros_like(token_embeddings), token_embeddings.clone())
    if scheme == "rope":
        angles = rope_angles(n, emb_dim)  # [n, d]
        return Positioned(scheme, torch.cos(angles), rope_rotate(token_embeddings, angles))
    raise ValueError(f"unknown scheme {scheme!r}")


def alibi_slopes(heads: int) -> tuple[float, ...]:
    """ALiBi's slope ``m_K`` of each of ``heads`` heads, by the rule of its reference
    ``get_slopes``: for ``2^a`` heads the geometric sequence that starts at
    ``2^(-8/2^a)`` with that ratio; otherwise the slopes of the largest power of two below,
    then every other slope of the next power of two, as many as are missing.

    >>> alibi_slopes(6)
    (0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125)
    """
    if heads < 1:
        raise ValueError(f"heads must be 1 or more, got {heads}")
    power = 2 ** math.floor(math.log2(heads))  # the largest power of two <= heads
    start = 2.0 ** -(2.0 ** -(math.log2(power) - 3))  # 2^(-8/power), written as the reference
    slopes = [start * start**k for k in range(power)]  # the reference's start * ratio**k
    if power == heads:
        return tuple(slopes)
    return tuple(slopes + list(alibi_slopes(2 * power)[0::2][: heads - power]))


def t5_buckets(relative_position: torch.Tensor) -> torch.Tensor:
    """T5's bucket of each ``relative_position`` (``j - i``, key minus query) for a causal
    model (``bidirectional=False``, 32 buckets, ``max_distance`` 128): a key ``k = i - j``
    tokens back is in bucket ``k`` for ``k < 16``, then in logarithmically wider buckets up to
    bucket 31, which holds every ``k >= 128``; keys ahead (``j > i``) are in bucket 0.
    ``torch.long``, the shape of ``relative_position``."""
    distance = (-relative_position).clamp(min=0)  # k = i - j >= 0
    max_exact = T5_NUM_BUCKETS // 2
    safe = distance.clamp(min=max_exact).float()  # float32, as T5; the log only where used
    large = max_exact + (
        torch.log(safe / max_exact)
        / math.log(T5_MAX_DISTANCE / max_exact)
        * (T5_NUM_BUCKETS - max_exact)
    ).to(torch.long)
    large = large.clamp(max=T5_NUM_BUCKETS - 1)
    return torch.where(distance < max_exact, distance, large)


def score_bias(
    scheme: Scheme,
    query_positions: torch.Tensor,
    key_positions: torch.Tensor,
    *,
    heads: int,
    seed: int,
    head: int | None = None,
) -> torch.Tensor:
    """What ``alibi`` or ``t5`` adds to the scaled score of the query at position ``i`` and the
    key at position ``j``, for every head (or only ``head``): ``[H, n, m]`` (``[1, n, m]``)
    float64 for ``n`` query and ``m`` key positions (int64). It depends only on ``j - i``, so
    it is computed once per distance and looked up.

    ALiBi: ``-m_K * (i - j)``; a causal model never meets ``j > i``, and without the mask
    posviz makes it symmetric, ``-m_K * |i - j|``, as bidirectional uses of ALiBi do. T5:
    ``E[bucket(j - i), K]`` with the seeded ``E`` of :func:`t5_bias_table` (keys ahead fall in
    bucket 0, as T5's causal buckets put them).

    >>> score_bias("alibi", torch.arange(3), torch.arange(3), heads=1, seed=0)[0]
    tensor([[ 0.0000, -0.0039, -0.0078],
            [-0.0039,  0.0000, -0.0039],
            [-0.0078, -0.0039,  0.0000]], dtype=torch.float64)
    """
    relative = key_positions[None, :] - query_positions[:, None]  # [n, m]: j - i
    low = int(relative.min())
    values = torch.arange(low, int(relative.max()) + 1)  # [R]: every j - i that occurs
    chosen = slice(None) if head is None else slice(head, head + 1)
    if scheme == "alibi":
        slopes = torch.tensor(alibi_slopes(heads), dtype=torch.float64)[chosen]  # [H]
        per_distance = slopes[:, None] * (-values.abs()).double()  # [H, R]
    elif scheme == "t5":
        table = t5_bias_table(seed=seed, heads=heads).double()[:, chosen]  # [32, H]
        per_distance = table[t5_buckets(values)].T  # [H, R]
    else:
        raise ValueError(f"only alibi and t5 bias the scores, got {scheme!r}")
    return per_distance[:, relative - low]  # [H, n, m]


def t5_bias_table(*, seed: int, heads: int) -> torch.Tensor:
    """``E``, T5's ``relative_attention_bias = nn.Embedding(32, heads)`` made right after
    ``torch.manual_seed(seed)``: its random init (T5 learns these values). ``[32, H]``
    float32, drawn from posviz's own generator, so torch's global one is untouched.

    >>> t5_bias_table(seed=123, heads=4).shape
    torch.Size([32, 4])
    """
    generator = torch.Generator().manual_seed(seed)
    return torch.empty(T5_NUM_BUCKETS, heads).normal_(generator=generator)  # [32, H]
