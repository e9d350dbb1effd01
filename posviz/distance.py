"""Similarity as a function of distance, and what lies past the context length.

For a positional table of ``P`` rows, :func:`distance_curve` gives, for every distance
``k = 0 … P-1``, the mean cosine similarity of positions ``i`` and ``i + k`` over all
``i = 0 … P-1-k``, and its spread over ``i``: the smallest and the largest of those cosines
(the band of the chart). A band of zero width means the similarity depends only on ``k``:
translation invariance. The cosines are float32 products of rows normalised in float64;
means are summed in float64 (numpy's float64 agrees to about 1e-6).

:func:`build_distance` is the Distance & length view: one curve per scheme, the learned
random init (the view's seed and d), the sinusoidal table, RoPE's score (one token vector
rotated to positions ``i`` and ``i + k``, averaged over the window's token vectors, see
:func:`rope_curve`) and, with ``weights="gpt2"``, GPT-2's trained table. Past the context
length, ``beyond`` positions ``T … T+E-1`` more: the sinusoidal table and RoPE continue by
their formulas; the learned table ``nn.Embedding(T, d)`` has no row ``T``
(:func:`~posviz.position_tables.past_the_end` runs the lookup and keeps torch's message);
GPT-2 has 1,024 positions and nothing beyond.

>>> from posviz.position_tables import sinusoidal_table
>>> curve = distance_curve(sinusoidal_table(rows=32, emb_dim=8))
>>> len(curve.mean), round(float(curve.mean[0]), 6), curve.spread < 1e-6
(32, 1.0, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import torch

from posviz.config import Settings
from posviz.geometry import Memo, no_memo, per_table, tables_of
from posviz.position_tables import (
    GPT2_KIND,
    GPT2_POSITIONS,
    PositionalTable,
    gpt2_table,
    learned_table,
    past_the_end,
    sinusoidal_table,
)
from posviz.schemes import LEARNED, ROPE, Options, SchemeSpec, default_options
from posviz.similarity import unit_rows
from posviz.view import TablesFor, View, seeded_tables

MAX_BEYOND: Final = 1024  # positions past the context length the control offers, at most


class DistanceError(ValueError):
    """The Distance view cannot be drawn for these inputs; the message says why and how."""


def default_beyond(context_length: int) -> int:
    """Positions past the context length shown unless asked otherwise: a quarter of T.

    >>> default_beyond(16), default_beyond(1024), default_beyond(3)
    (4, 256, 0)
    """
    return context_length // 4


@dataclass(frozen=True, eq=False)
class DistanceCurve:
    """Cosine similarity of positions ``i`` and ``i + k`` for one table, per distance ``k``."""

    scheme: SchemeSpec
    label: str  # the scheme, as the chart's legend names it
    mean: torch.Tensor  # [P] float64: mean over i of cos(row i, row i + k)
    low: torch.Tensor  # [P] float64: the smallest of them
    high: torch.Tensor  # [P] float64: the largest
    trained: bool = False  # GPT-2's trained table

    @property
    def kind(self) -> str:
        """``"gpt2"`` for GPT-2's trained table, else the scheme's name."""
        return GPT2_KIND if self.trained else self.scheme.name

    @property
    def nbytes(self) -> int:
        """Memory the three curves hold."""
        return sum(t.numel() * t.element_size() for t in (self.mean, self.low, self.high))

    @property
    def spread(self) -> float:
        """The widest band over ``k``: 0 for a table whose similarity depends only on ``k``."""
        return float((self.high - self.low).max())

    @property
    def distances(self) -> int:
        """How many distances the curve has: ``k = 0 … distances-1``."""
        return int(self.mean.shape[0])


def cosine_by_distance(table: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mean, smallest and largest ``cos(row i, row i + k)`` over ``i`` of ``table`` ``[P, d]``,
    for ``k = 0 … P-1``: three ``[P]`` float64 tensors.

    Every diagonal of the ``[P, P]`` cosine matrix at once: its entry ``(i, i + k)`` sits at
    ``i * (P + 1) + k`` of the flattened matrix, so a strided ``[P, P]`` view of it (padded
    by ``P``) holds diagonal ``k`` in column ``k``, rows ``i < P - k`` (the rest wraps).

    >>> mean, low, high = cosine_by_distance(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]))
    >>> mean.tolist(), low.tolist(), high.tolist()
    ([1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 0.0, 1.0])
    """
    unit = unit_rows(table).float()  # [P, d]
    rows = unit.shape[0]
    flat = unit.new_zeros(rows * (rows + 1))
    torch.mm(unit, unit.T, out=flat[: rows * rows].view(rows, rows))  # [P, P] cosines
    by_distance = flat.as_strided((rows, rows), (rows + 1, 1))  # [i, k] = cos(i, i + k)
    index = torch.arange(rows)
    outside = index[:, None] >= (rows - index)[None, :]  # [P, P]: i + k >= P, wrapped
    counts = (rows - index).double()  # [P]: pairs at distance k
    total = by_distance.masked_fill(outside, 0.0).sum(dim=0, dtype=torch.float64)  # [P]
    low = by_distance.masked_fill(outside, torch.inf).amin(dim=0).double()
    high = by_distance.masked_fill(outside, -torch.inf).amax(dim=0).double()
    # float32 products of unit rows can pass 1 by a rounding
    return (total / counts).clamp(-1.0, 1.0), low.clamp(-1.0, 1.0), high.clamp(-1.0, 1.0)


def distance_curve(positional: PositionalTable) -> DistanceCurve:
    """Mean, smallest and largest ``cos(row i, row i + k)`` over ``i``, for ``k = 0 … P-1``
    (:func:`cosine_by_distance` of the table)."""
    mean, low, high = cosine_by_distance(positional.table)
    return DistanceCurve(positional.scheme, positional.label, mean, low, high, positional.trained)


def rope_score(token_embeddings: torch.Tensor, theta: torch.Tensor, *, rows: int) -> torch.Tensor:
    """RoPE's score per distance: the cosine of one token vector ``x`` rotated to position
    ``i`` and to position ``i + k``, averaged over the rows of ``token_embeddings`` ``[n, d]``,
    for ``k = 0 … rows-1``: ``[rows]`` float64.

    Rotations compose: ``(R_i x) · (R_{i+k} x) = x · R_k x = Σⱼ (x_j² + x_{j+d/2}²)·cos(k·θⱼ)``
    (plus ``x_last²`` for an odd d, never rotated), the same for every ``i``. So the score is
    that sum for unit ``x``, in float64 with RoPE's ``θⱼ`` (``theta`` ``[d/2]`` float64,
    ``base^(-2j/d)``): it has no band. The tests rotate the vectors to every pair of positions
    and compare.

    >>> theta = torch.tensor([1.0], dtype=torch.float64)
    >>> rope_score(torch.tensor([[1.0, 0.0]]), theta, rows=2).tolist()
    [1.0, 0.5403023058681398]
    """
    emb_dim = token_embeddings.shape[1]
    unit = unit_rows(token_embeddings)  # [n, d]
    half = emb_dim // 2
    energy = unit.square().mean(dim=0)  # [d]: share of |x|^2 per dimension, mean over tokens
    pair_weights = energy[:half] + energy[half : 2 * half]  # [d/2]
    distances = torch.arange(rows, dtype=torch.float64)[:, None]  # [P, 1]
    score = torch.cos(distances * theta) @ pair_weights + energy[2 * half :].sum()  # [P]
    return score.clamp(-1.0, 1.0)


def rope_curve(
    token_embeddings: torch.Tensor, *, rows: int, options: Options | None = None
) -> DistanceCurve:
    """RoPE's curve: :func:`rope_score` of the window's token vectors with RoPE's ``θⱼ`` (the
    ``options``' base), ``k = 0 … rows-1``, the same for every ``i`` (its band has no width)."""
    n, emb_dim = token_embeddings.shape
    if n == 0:
        raise DistanceError("RoPE's curve needs at least one token vector, got none")
    rotation = ROPE.rotation
    if rotation is None:
        raise DistanceError("RoPE's spec has no rotation")
    chosen = {**default_options(), **(options or {})}
    theta = rotation.theta(emb_dim, chosen, rows)  # [d/2] float64, read at rows positions
    score = rope_score(token_embeddings, theta, rows=rows)
    label = f"RoPE ({n} token vector{'s' if n > 1 else ''})"
    return DistanceCurve(ROPE, label, score, score.clone(), score.clone())


@dataclass(frozen=True)
class TableEnd:
    """How far one table goes: ``rows`` positions (``None``: a formula, any position) and,
    for a table that ends, what torch says when asked for the next one."""

    scheme: SchemeSpec
    label: str
    rows: int | None
    error: str | None  # e.g. "IndexError: index out of range in self"
    trained: bool = False  # GPT-2's trained table

    @property
    def kind(self) -> str:
        """``"gpt2"`` for GPT-2's trained table, else the scheme's name."""
        return GPT2_KIND if self.trained else self.scheme.name


@dataclass(frozen=True, eq=False)
class DistanceView:
    """Everything the Distance & length tab shows for :attr:`settings`."""

    settings: Settings  # as shown (see View.settings)
    beyond: int  # E: positions past the context length, T … T+E-1
    curves: tuple[DistanceCurve, ...]  # learned (init), sinusoidal, RoPE, GPT-2 if shown
    ends: tuple[TableEnd, ...]  # one per curve, in the same order
    tokens: int  # token vectors RoPE's curve averages over (the window's)

    @property
    def context_length(self) -> int:
        """T: the rows of the learned table."""
        return self.settings.context_length


def build_distance(
    view: View,
    *,
    beyond: int | None = None,
    tables: TablesFor = seeded_tables,
    init_tables: TablesFor = seeded_tables,
    memo: Memo = no_memo,
) -> DistanceView:
    """Everything the Distance & length view shows for ``view`` (from
    :func:`~posviz.view.build_view`), with ``beyond`` positions past the context length
    (default :func:`default_beyond`). :class:`DistanceError` for a ``beyond`` outside
    0 … :data:`MAX_BEYOND`, or a blank text (RoPE's curve needs the window's token vectors).

    ``tables``, ``init_tables`` and ``memo`` as for :func:`~posviz.geometry.build_geometry`.

    >>> from posviz.view import build_view
    >>> distance = build_distance(build_view(Settings(context_length=8, emb_dim=4)), beyond=2)
    >>> [curve.kind for curve in distance.curves], [c.distances for c in distance.curves]
    (['learned', 'sinusoidal', 'rope'], [8, 10, 10])
    >>> distance.ends[0].error
    'IndexError: index out of range in self'
    """
    settings = view.settings
    if beyond is None:
        beyond = default_beyond(settings.context_length)
    if isinstance(beyond, bool) or not isinstance(beyond, int) or not 0 <= beyond <= MAX_BEYOND:
        raise DistanceError(
            f"beyond (positions past the context length) must be a whole number from 0 to "
            f"{MAX_BEYOND}, got {beyond!r}"
        )
    if view.embeddings is None:
        raise DistanceError("the text is blank: RoPE's curve needs the window's token vectors")
    view_tables, book_tables = tables_of(settings, tables, init_tables)
    rows, emb_dim = settings.context_length, settings.emb_dim
    learned = learned_table(
        book_tables(settings), seed=settings.seed, context_length=rows, emb_dim=emb_dim
    )
    formula_rows = rows + beyond  # sinusoidal and RoPE: any position
    sinusoidal = sinusoidal_table(rows=formula_rows, emb_dim=emb_dim)
    rope = rope_curve(
        view.embeddings.token_embeddings, rows=formula_rows, options=settings.options()
    )
    curves = [
        per_table(memo, "distance", learned, distance_curve),
        per_table(memo, "distance", sinusoidal, distance_curve),
        rope,
    ]
    ends = [
        TableEnd(LEARNED, learned.label, rows, past_the_end(learned.table)),
        TableEnd(sinusoidal.scheme, sinusoidal.label, None, None),
        TableEnd(ROPE, rope.label, None, None),
    ]
    if settings.weights == "gpt2":  # rows past T up to its 1,024, then nothing
        gpt2 = gpt2_table(view_tables, rows=min(formula_rows, GPT2_POSITIONS))
        whole = view_tables.pos_embeddings(GPT2_POSITIONS)  # [1024, 768]: every row it has
        curves.append(per_table(memo, "distance", gpt2, distance_curve))
        ends.append(TableEnd(LEARNED, gpt2.label, GPT2_POSITIONS, past_the_end(whole), True))
    return DistanceView(settings, beyond, tuple(curves), tuple(ends), len(view.token_ids))
