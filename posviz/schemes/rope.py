"""``rope``: rotary embeddings (Su et al. 2021, used by Llama). Nothing is added; each pair of
dimensions ``(j, j + d/2)`` is rotated by ``position * theta_j``. Real models rotate queries
and keys inside attention; posviz rotates the token vectors too, to show the effect.

Its options (:data:`ROPE_OPTIONS`): the base, and a context extension from
:mod:`~posviz.schemes.rope_scaling` (linear, ntk, dynamic, yarn, llama3) with its factor s and
the original length L₀ (unset: the context length T). They travel in
:class:`~posviz.config.Settings`, links and the command line by their names; nothing outside
RoPE's modules names them. Its :class:`~posviz.schemes.Rotation` computes every view's angles,
the factor on cos and sin, the sentence on what the scaling did and the shift test's note
through :mod:`~posviz.schemes.rope_scaling` (as transformers 5.17.0 computes them).

>>> rope_angles(2, 4)[1]
tensor([1.0000, 0.0100, 1.0000, 0.0100])
>>> rope_angles(2, 4, base=100.0)[1]
tensor([1.0000, 0.1000, 1.0000, 0.1000])
"""

from __future__ import annotations

from typing import Final, cast

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
from posviz.schemes.rope_scaling import (
    ROPE_BASE,
    ROPE_FACTOR_RANGE,
    ROPE_ORIGINAL_RANGE,
    SCALING_HELP,
    SCALING_SPECS,
    SCALINGS,
    RopeConfig,
    Scaling,
    inv_freq_and_factor,
    rotate,
    scaled_rope_angles,
    scaling_facts,
    scaling_sentence,
)
from posviz.schemes.rope_scaling import (
    ROPE_BASE_RANGE as SCALING_BASE_RANGE,
)

__all__ = ["ROPE", "ROPE_BASE", "ROPE_OPTIONS", "rope_angles", "rope_rotate", "rope_theta"]

# The base's range: a base of 1 would not rotate; Llama 3 uses 500,000, some long-context
# models a few million (rope_scaling's upper end).
ROPE_BASE_RANGE: Final = (2.0, SCALING_BASE_RANGE[1])
ROPE_FACTOR: Final = 4.0  # s: how many times longer an input the scaling prepares for
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
    SchemeOption(
        "rope_scaling",
        "RoPE scaling (context extension)",
        SCALING_HELP,
        "choice",
        "default",
        choices=SCALINGS,
    ),
    SchemeOption(
        "rope_factor",
        "RoPE scaling factor s",
        "How many times longer than L₀ an input the scaling prepares for (1: as trained).",
        "float",
        ROPE_FACTOR,
        low=ROPE_FACTOR_RANGE[0],
        high=ROPE_FACTOR_RANGE[1],
    ),
    SchemeOption(
        "rope_original",
        "RoPE original length L₀",
        "The context length the model was trained on; empty: the context length T.",
        "int",
        16,  # where no settings are at hand: Settings' default T
        low=ROPE_ORIGINAL_RANGE[0],
        high=ROPE_ORIGINAL_RANGE[1],
        follows="context_length",
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
    ``[n, d]`` (from :func:`rope_angles`): shape ``[n, d]``; an odd last dimension is kept
    (its angle is 0)."""
    return rotate(x, torch.cos(angles), torch.sin(angles))


def rope_theta(emb_dim: int, *, base: float = ROPE_BASE) -> torch.Tensor:
    """``theta_j = base^(-2j/d)`` of each pair ``(j, j + d/2)`` in float64 (the exact angle
    per position that :func:`rope_angles` rounds to float32): shape ``[d/2]``.

    >>> rope_theta(4)
    tensor([1.0000, 0.0100], dtype=torch.float64)
    """
    half = emb_dim // 2
    return base ** (-torch.arange(half, dtype=torch.float64) * 2 / (2 * half))


def _config(options: Options) -> RopeConfig:
    """The RoPE configuration the settings' options describe."""
    return RopeConfig(
        base=float(options["rope_base"]),
        scaling=cast(Scaling, options["rope_scaling"]),
        factor=float(options["rope_factor"]),
        original_length=int(options["rope_original"]),
    )


def _angles(length: int, emb_dim: int, options: Options) -> torch.Tensor:
    """The angles of positions ``0 … length−1`` read as an input of ``length`` positions:
    :func:`rope_angles` without a scaling, else
    :func:`~posviz.schemes.rope_scaling.scaled_rope_angles`."""
    config = _config(options)
    if config.scaling == "default":
        return rope_angles(length, emb_dim, base=config.base)
    positions = torch.arange(length)
    return scaled_rope_angles(positions, emb_dim, config, length_read=length)


def _theta(emb_dim: int, options: Options, length: int) -> torch.Tensor:
    """Each pair's angle per position at ``length`` read, float64: :func:`rope_theta` without
    a scaling (exact), else the scaling's float32 frequencies."""
    config = _config(options)
    if config.scaling == "default":
        return rope_theta(emb_dim, base=config.base)
    inv_freq, _ = inv_freq_and_factor(emb_dim, config, length_read=max(length, 1))
    return inv_freq.double()


def _scale(emb_dim: int, options: Options) -> float:
    """What cos and sin are multiplied by: YaRN's attention factor, else 1."""
    config = _config(options)
    if config.scaling == "default":
        return 1.0
    return inv_freq_and_factor(emb_dim, config, length_read=1)[1]


def _describe(emb_dim: int, options: Options, length: int) -> str:
    """What the scaling did at ``emb_dim`` rotated dimensions and ``length`` read, from the
    numbers (:func:`~posviz.schemes.rope_scaling.scaling_sentence`); "" for RoPE as it is
    (no scaling, the default base)."""
    config = _config(options)
    if config.scaling == "default" and config.base == ROPE_BASE:
        return ""
    return scaling_sentence(scaling_facts(emb_dim, config, length_read=max(length, 1)))


def _shift_note(emb_dim: int, options: Options, tokens: int, shift: int) -> str:
    """Dynamic NTK's base depends on how long the input is: moving ``tokens`` tokens
    ``shift`` positions later reads ``shift + tokens`` positions, and past L₀ the base grows,
    so the scores change though the distances do not. "" for the other scalings."""
    config = _config(options)
    if config.scaling != "dynamic" or not shift or tokens < 1:
        return ""
    label, original = SCALING_SPECS["dynamic"].label, config.original_length
    at_start = scaling_facts(emb_dim, config, length_read=tokens).base
    moved = scaling_facts(emb_dim, config, length_read=shift + tokens).base
    read = f"{shift + tokens:,} positions"
    if moved == at_start:
        return (
            f"{label}'s base depends on how long the input is: {read} are no more than "
            f"L₀ = {original:,}, so its base stays {_number(at_start)}; move the sentence "
            f"past position {original - 1:,} and the base grows, and the scores change."
        )
    return (
        f"{label}'s base depends on how long the input is: the shift lengthens it to {read}, "
        f"past L₀ = {original:,}, so its base grows from {_number(at_start)} (positions "
        f"0–{tokens - 1}) to {_number(moved)}, every pair but the fastest turns slower, and "
        "the scores change although the distances do not."
    )


def _number(value: float) -> str:
    """``10,000``, ``43,871``; three significant digits below 1,000."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _check(options: Options, emb_dim: int, heads: int) -> str | None:
    """ntk and dynamic raise the base to ``s^(h/(h−2))``: undefined for fewer than 4 rotated
    dimensions (``h`` = emb_dim / heads, less an odd last one). A message naming the values and
    the fix, or ``None``."""
    scaling = cast(Scaling, options["rope_scaling"])
    head_dim = emb_dim // heads
    if scaling not in ("ntk", "dynamic") or head_dim - head_dim % 2 >= 4:
        return None
    where = f"emb_dim {emb_dim}" if heads == 1 else f"emb_dim {emb_dim} / heads {heads}"
    fewer = " or fewer heads" if heads > 1 else ""
    return (
        f"rope_scaling={scaling} ({SCALING_SPECS[scaling].label}) raises the base to "
        f"s^(h/(h − 2)), so it needs a head dimension h of 4 or more; {where} = {head_dim}: "
        f"choose a larger emb_dim{fewer}, or another rope_scaling (linear, yarn, llama3)"
    )


ROPE: Final = SchemeSpec(
    name="rope",
    label="RoPE (rotary, Llama)",
    acts=Acts.ROTATES_QK,
    colour="#009E73",  # bluish green
    table_label="RoPE (cos/sin of its angles)",
    rotation=Rotation(
        angles=_angles,
        rotate=rope_rotate,
        theta=_theta,
        scale=_scale,
        describe=_describe,
        shift_note=_shift_note,
        settings_check=_check,
    ),
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
