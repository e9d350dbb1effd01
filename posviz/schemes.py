"""Positional schemes: how a position enters the vectors the model sees.

* ``learned``: GPT-2's and the book's ``nn.Embedding(context_length, emb_dim)``, added.
* ``sinusoidal``: the fixed encoding of Vaswani et al. (2017), added.
* ``none``: nothing; the input equals the token embeddings and attention is blind to order.
* ``rope``: rotary embeddings (Su et al. 2021, used by Llama): nothing is added; each pair of
  dimensions is rotated by ``position * theta_i``. Real models rotate queries and keys inside
  attention; posviz rotates the token vectors to show the effect.

Formulas only: what the page says about each scheme is in :mod:`posviz.lesson.schemes`.

>>> sinusoidal_encoding(2, 4)[1]
tensor([0.8415, 0.5403, 0.0100, 0.9999])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import torch

from posviz.config import Scheme

ROPE_BASE: Final = 10_000.0  # theta base of the Transformer paper and of Llama 2
SINUSOIDAL_BASE: Final = 10_000.0


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
    if scheme == "none":
        return Positioned(scheme, torch.zeros_like(token_embeddings), token_embeddings.clone())
    if scheme == "rope":
        angles = rope_angles(n, emb_dim)  # [n, d]
        return Positioned(scheme, torch.cos(angles), rope_rotate(token_embeddings, angles))
    raise ValueError(f"unknown scheme {scheme!r}")
