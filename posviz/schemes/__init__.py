"""Positional schemes: how a position enters the vectors the model sees, one spec each.

The registry: :data:`SCHEMES` (every :class:`SchemeSpec`, in the menu's order) and
:func:`scheme` (a spec by its name). Each family is one module holding its formulas and its
spec (:mod:`~posviz.schemes.learned`, :mod:`~posviz.schemes.sinusoidal`,
:mod:`~posviz.schemes.none`, :mod:`~posviz.schemes.rope`, :mod:`~posviz.schemes.alibi`,
:mod:`~posviz.schemes.t5`); what a spec holds is in :mod:`posviz.schemes._spec`.

Adding a scheme: a module with its formulas and its ``SchemeSpec``, its name in
:data:`SchemeName` (``_spec.py``), its case in :func:`_spec_of`. mypy then checks that the
registry covers every name, and the tests that every field is filled; nothing else names it.

The input panels of ``none``, ``alibi`` and ``t5`` are the same: zeros added, input = tokens.

>>> scheme("rope").rotates, [s.name for s in SCHEMES if s.adds_to_input]
(True, ['learned', 'sinusoidal'])
>>> scheme("RoPE")
Traceback (most recent call last):
...
ValueError: scheme must be one of learned, sinusoidal, none, rope, alibi, t5, got 'RoPE'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, assert_never, get_args

import torch

from posviz.schemes._spec import (
    Acts,
    Options,
    OptionValue,
    PanelTitles,
    Rotation,
    SchemeName,
    SchemeOption,
    SchemeSpec,
    SchemeWords,
    ScoreBias,
)
from posviz.schemes.alibi import ALIBI, alibi_slopes
from posviz.schemes.learned import LEARNED
from posviz.schemes.none import NONE
from posviz.schemes.rope import ROPE, ROPE_BASE, rope_angles, rope_rotate
from posviz.schemes.sinusoidal import SINUSOIDAL, SINUSOIDAL_BASE, sinusoidal_encoding
from posviz.schemes.t5 import T5, T5_MAX_DISTANCE, T5_NUM_BUCKETS, t5_bias_table, t5_buckets

__all__ = [
    "ALIBI",
    "LEARNED",
    "NONE",
    "OPTIONS",
    "ROPE",
    "ROPE_BASE",
    "SCHEMES",
    "SCHEME_NAMES",
    "SINUSOIDAL",
    "SINUSOIDAL_BASE",
    "T5",
    "T5_MAX_DISTANCE",
    "T5_NUM_BUCKETS",
    "Acts",
    "OptionValue",
    "Options",
    "PanelTitles",
    "Positioned",
    "Rotation",
    "SchemeName",
    "SchemeOption",
    "SchemeSpec",
    "SchemeWords",
    "ScoreBias",
    "alibi_slopes",
    "apply_scheme",
    "bias_by_distance",
    "default_options",
    "option",
    "rope_angles",
    "rope_rotate",
    "scheme",
    "score_bias",
    "sinusoidal_encoding",
    "t5_bias_table",
    "t5_buckets",
]


def _spec_of(name: SchemeName) -> SchemeSpec:
    """The spec of each name. mypy checks that every name has its case (``assert_never``):
    a name added to :data:`SchemeName` without a spec here is a type error."""
    match name:
        case "learned":
            return LEARNED
        case "sinusoidal":
            return SINUSOIDAL
        case "none":
            return NONE
        case "rope":
            return ROPE
        case "alibi":
            return ALIBI
        case "t5":
            return T5
        case _:
            assert_never(name)


SCHEME_NAMES: Final[tuple[SchemeName, ...]] = get_args(SchemeName)  # the menu's order
_BY_NAME: Final[dict[SchemeName, SchemeSpec]] = {name: _spec_of(name) for name in SCHEME_NAMES}
_BY_TEXT: Final[dict[str, SchemeSpec]] = {str(k): v for k, v in _BY_NAME.items()}  # by any text
SCHEMES: Final[tuple[SchemeSpec, ...]] = tuple(_BY_NAME[name] for name in SCHEME_NAMES)
# Every scheme's options by name (the names are the Settings, link and flag keys, so unique).
OPTIONS: Final[dict[str, SchemeOption]] = {o.name: o for s in SCHEMES for o in s.options}


def scheme(name: str | SchemeSpec) -> SchemeSpec:
    """The spec of the scheme ``name`` (a spec is returned as it is); ``ValueError`` naming the
    choices for a name that is not one."""
    if isinstance(name, SchemeSpec):
        return name
    found = _BY_TEXT.get(name)
    if found is None:
        raise ValueError(f"scheme must be one of {', '.join(SCHEME_NAMES)}, got {name!r}")
    return found


def option(name: str) -> SchemeOption:
    """The option ``name`` of whichever scheme declares it; ``ValueError`` naming them."""
    if name not in OPTIONS:
        raise ValueError(f"no scheme has an option {name!r}; the options: {', '.join(OPTIONS)}")
    return OPTIONS[name]


def default_options() -> dict[str, OptionValue]:
    """Every option at its default."""
    return {name: declared.default for name, declared in OPTIONS.items()}


@dataclass(frozen=True)
class Positioned:
    """The middle and right panels for one scheme.

    ``position_signal`` is what the scheme contributes per position: the added vectors for
    ``learned`` and ``sinusoidal``, zeros for ``none``, ALiBi and T5, and
    ``cos(position * theta)`` for ``rope``. ``input_embeddings`` is what the first transformer
    block receives.
    """

    scheme: SchemeName
    position_signal: torch.Tensor  # [n, d]
    input_embeddings: torch.Tensor  # [n, d]


def apply_scheme(
    scheme_name: str | SchemeSpec,
    token_embeddings: torch.Tensor,
    learned_pos_embeddings: torch.Tensor | None,
    options: Options | None = None,
) -> Positioned:
    """Combine ``token_embeddings`` ``[n, d]`` with positions ``0..n-1`` by the scheme.

    ``learned_pos_embeddings`` (rows ``0..n-1`` of the learned table) is needed only for a
    learned table; ``options``: the scheme's options (default: every one at its default).
    """
    spec = scheme(scheme_name)
    n, emb_dim = token_embeddings.shape
    if spec.adds_to_input:
        if spec.table is not None:
            signal = spec.table(n, emb_dim)  # [n, d]
        elif learned_pos_embeddings is None:
            raise ValueError(f"the {spec.name} scheme needs the positional embedding rows")
        else:
            signal = learned_pos_embeddings[:n]  # [n, d]
        return Positioned(spec.name, signal, token_embeddings + signal)
    if spec.rotation is not None:
        chosen = {**default_options(), **(options or {})}
        angles = spec.rotation.angles(n, emb_dim, chosen)
        return Positioned(
            spec.name, torch.cos(angles), spec.rotation.turn(token_embeddings, angles, chosen)
        )
    # nothing, or a bias on the attention scores only: zeros added, input = tokens
    return Positioned(spec.name, torch.zeros_like(token_embeddings), token_embeddings.clone())


def score_bias(
    scheme_name: str | SchemeSpec,
    query_positions: torch.Tensor,
    key_positions: torch.Tensor,
    *,
    heads: int,
    seed: int,
    head: int | None = None,
) -> torch.Tensor:
    """What a scheme that biases the scores (ALiBi, T5) adds to the scaled score of the query
    at position ``i`` and the key at position ``j``, for every head (or only ``head``):
    ``[H, n, m]`` (``[1, n, m]``) float64 for ``n`` query and ``m`` key positions (int64). It
    depends only on ``j - i``, so it is computed once per distance and looked up.

    ALiBi: ``-m_K * (i - j)``; a causal model never meets ``j > i``, and without the mask
    posviz makes it symmetric, ``-m_K * |i - j|``, as bidirectional uses of ALiBi do. T5:
    ``E[bucket(j - i), K]`` with the seeded ``E`` of :func:`t5_bias_table` (keys ahead fall in
    bucket 0, as T5's causal buckets put them).

    >>> score_bias("alibi", torch.arange(3), torch.arange(3), heads=1, seed=0)[0]
    tensor([[ 0.0000, -0.0039, -0.0078],
            [-0.0039,  0.0000, -0.0039],
            [-0.0078, -0.0039,  0.0000]], dtype=torch.float64)
    """
    spec = scheme(scheme_name)
    if spec.bias is None:
        biasing = ", ".join(s.name for s in SCHEMES if s.biases_scores)
        raise ValueError(f"only {biasing} bias the scores, got {spec.name!r}")
    return bias_by_distance(
        spec.bias.per_distance, query_positions, key_positions, heads=heads, seed=seed, head=head
    )


def bias_by_distance(
    per_distance: Callable[..., torch.Tensor],
    query_positions: torch.Tensor,
    key_positions: torch.Tensor,
    *,
    heads: int,
    seed: int,
    head: int | None = None,
) -> torch.Tensor:
    """:func:`score_bias` from a scheme's bias per distance (its ``ScoreBias.per_distance``):
    computed once for every ``j - i`` that occurs and looked up, ``[H, n, m]`` (``[1, n, m]``
    for one ``head``)."""
    relative = key_positions[None, :] - query_positions[:, None]  # [n, m]: j - i
    low = int(relative.min())
    values = torch.arange(low, int(relative.max()) + 1)  # [R]: every j - i that occurs
    chosen = slice(None) if head is None else slice(head, head + 1)
    found = per_distance(values, heads=heads, seed=seed)[chosen]  # [H, R]
    return found[:, relative - low]  # [H, n, m]
