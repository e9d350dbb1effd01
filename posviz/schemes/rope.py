"""``rope``: rotary embeddings (Su et al. 2021, used by Llama). Nothing is added; each pair of
dimensions ``(j, j + d/2)`` is rotated by ``position * theta_j``. Real models rotate queries
and keys inside attention; posviz rotates the token vectors too, to show the effect.

Its options (:data:`ROPE_OPTIONS`) travel in :class:`~posviz.config.Settings`, links and the
command line by their names; nothing outside this module names them.

>>> rope_angles(2, 4)[1]
tensor([1.0000, 0.0100, 1.0000, 0.0100])
>>> rope_angles(2, 4, base=100.0)[1]
tensor([1.0000, 0.1000, 1.0000, 0.1000])
"""

from __future__ import annotations

from typing import Final

import torch

from posviz.schemes._spec import (
    Acts,
    Options,
    PanelTitles,
    Rotation,
    SchemeOption,
    SchemeSpec,
    SchemeWords,
)

ROPE_BASE: Final = 10_000.0  # theta base of the Transformer paper and of Llama 2
ROPE_BASE_RANGE: Final = (2.0, 1e9)  # Llama 3 uses 500,000; a base of 1 would not rotate
ROPE_OPTIONS: Final = (
    SchemeOption(
        "rope_base",
        "RoPE base θ",
        "θⱼ = base^(−2j/d): a larger base turns the slow pairs slower (Llama 2: 10,000; "
        "Llama 3: 500,000).",
        "float",
        ROPE_BASE,
        low=ROPE_BASE_RANGE[0],
        high=ROPE_BASE_RANGE[1],
    ),
)


def rope_angles(context_length: int, emb_dim: int, *, base: float = ROPE_BASE) -> torch.Tensor:
    """``position * theta_i`` with ``theta_i = base^(-2i/d)`` for the split-halves pairing of
    the book's Llama notebook: dimension ``j`` and ``j + d/2`` share ``theta_j``.

    For an odd ``emb_dim`` the last dimension has no partner and angle 0 (left unrotated).
    Shape ``[context_length, emb_dim]``, float32 as in the notebook.
    """
    half = emb_dim // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, 2 * half, 2)[:half].float() / (2 * half)))
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


def rope_theta(emb_dim: int, *, base: float = ROPE_BASE) -> torch.Tensor:
    """``theta_j = base^(-2j/d)`` of each pair ``(j, j + d/2)`` in float64 (the exact angle
    per position that :func:`rope_angles` rounds to float32): shape ``[d/2]``.

    >>> rope_theta(4)
    tensor([1.0000, 0.0100], dtype=torch.float64)
    """
    half = emb_dim // 2
    return base ** (-torch.arange(half, dtype=torch.float64) * 2 / (2 * half))


def _angles(context_length: int, emb_dim: int, options: Options) -> torch.Tensor:
    """:func:`rope_angles` with the settings' options."""
    return rope_angles(context_length, emb_dim, base=float(options["rope_base"]))


def _theta(emb_dim: int, options: Options) -> torch.Tensor:
    """:func:`rope_theta` with the settings' options."""
    return rope_theta(emb_dim, base=float(options["rope_base"]))


ROPE: Final = SchemeSpec(
    name="rope",
    label="RoPE (rotary, Llama)",
    acts=Acts.ROTATES_QK,
    colour="#009E73",  # bluish green
    table_label="RoPE (cos/sin of its angles)",
    rotation=Rotation(angles=_angles, rotate=rope_rotate, theta=_theta),
    options=ROPE_OPTIONS,
    titles=PanelTitles(
        embeddings=("token embeddings", "RoPE: cos(position × θᵢ)", "rotated token vectors"),
        similarity=("token embeddings", "RoPE: cos(position × θᵢ)", "rotated token vectors"),
        attention_position="position part<br>(rotation)",
    ),
    words=SchemeWords(
        note="RoPE adds nothing: it **rotates** each pair of dimensions (j, j + d/2) of the "
        "vector at position p by the angle p·θⱼ, θⱼ = base^(−2j/d) (base 10,000 unless set). "
        "The middle panel shows cos(p·θⱼ). Real models (Llama) rotate the queries and keys "
        "inside attention, not the input; posviz rotates the token vectors to show the effect.",
        position_panel_note=(
            "Middle: similarity of cos(position × θᵢ), the rotation RoPE applies; real models "
            "rotate queries and keys inside attention, not the input."
        ),
        what_it_does="RoPE adds nothing: it rotates each query and key by its position, and the "
        "dot product of two rotated vectors depends only on the difference of the angles, "
        "i − j.",
        name="RoPE",
        scores="RoPE's scores",
        positions="RoPE rotating queries and keys",
        added="the rotation by position",
        shape="↻ rotation angles [T, d/2]",
        table_noun="angles",
        table_name="RoPE",
    ),
)
