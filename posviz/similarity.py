"""Cosine similarity between positions: which rows of a matrix point the same way.

For the token, position and input matrices of one window, :func:`similarities` gives three
``[n, n]`` matrices (:func:`posviz.plots.heatmaps.similarity_figure` draws them side by side). The
lesson: a token that appears twice has the *same* token vector at both positions (similarity
exactly 1.0 in the token panel); adding (or rotating by) the position makes the two input
vectors differ.
:func:`similarity_facts` reads the repeated tokens' cells from the same matrices, so the
sentence on screen (:func:`posviz.lesson.repeats.similarity_sentence`) matches the figure, and
:func:`neighbour_similarity` says whether neighbouring positions are more alike than distant
ones (trained tables usually are; random ones are not).

A zero row has no direction: posviz defines its similarity with every row, itself included,
as 0. That is what the ``none`` scheme's all-zero position panel shows.

>>> import torch
>>> cosine_similarity(torch.tensor([[1.0, 0.0], [2.0, 0.0], [0.0, 0.0]]))
tensor([[1., 1., 0.],
        [1., 1., 0.],
        [0., 0., 0.]])
>>> repeated_token_pairs([7, 3, 7, 3, 7])
[(0, 2), (0, 4), (1, 3), (2, 4)]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal

import torch

from posviz.config import Scheme
from posviz.pipeline import WindowEmbeddings
from posviz.repeats import marked_first, repeated_positions, token_names

MAX_POSITIONS: Final = 256  # similarity rows per panel: 3 x 256 x 256 float32, about 1 MB


def unit_rows(matrix: torch.Tensor) -> torch.Tensor:
    """The rows of ``matrix`` ``[n, d]`` scaled to length 1, in float64; a zero row stays zero.

    >>> unit_rows(torch.tensor([[3.0, 4.0], [0.0, 0.0]]))
    tensor([[0.6000, 0.8000],
            [0.0000, 0.0000]], dtype=torch.float64)
    """
    rows = matrix.to(torch.float64)  # [n, d]
    norms = torch.linalg.vector_norm(rows, dim=1, keepdim=True)  # [n, 1]
    return torch.where(norms > 0, rows / torch.where(norms > 0, norms, 1.0), 0.0)


def cosine_similarity(matrix: torch.Tensor) -> torch.Tensor:
    """Cosine similarity between the rows of ``matrix`` ``[n, d]``: shape ``[n, n]``, float32.

    Computed in float64 and rounded once, so two identical non-zero rows give exactly 1.0.
    A zero row has similarity 0 with every row, itself included (it has no direction).

    >>> cosine_similarity(torch.tensor([[3.0, 4.0], [-3.0, -4.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if matrix.dim() != 2:
        raise ValueError(f"matrix must have shape [n, d], got {list(matrix.shape)}")
    unit = unit_rows(matrix)  # [n, d]
    similarity = (unit @ unit.T).clamp(-1.0, 1.0)  # [n, n]
    return similarity.to(torch.float32)


@dataclass(frozen=True)
class Similarities:
    """The three ``[n, n]`` cosine-similarity matrices of one window, float32."""

    token: torch.Tensor  # between rows of token_embeddings
    position: torch.Tensor  # between rows of pos_embeddings (the scheme's position signal)
    input: torch.Tensor  # between rows of input_embeddings


def similarities(window: WindowEmbeddings) -> Similarities:
    """Cosine similarity between the positions of each of the window's three matrices."""
    return Similarities(
        token=cosine_similarity(window.token_embeddings),
        position=cosine_similarity(window.pos_embeddings),
        input=cosine_similarity(window.input_embeddings),
    )


NeighbourPattern = Literal["neighbours_alike", "no_pattern", "neighbours_apart", "too_short"]
NOISE_SIGMAS: Final = 3.0  # standard deviations of chance a difference must exceed to count


@dataclass(frozen=True)
class NeighbourSimilarity:
    """How alike neighbouring positions are, from a position panel's ``[n, n]`` similarity.

    ``noise``: how far apart the two means could be by chance. For a table of independent
    random rows (the book's random init: isotropic directions) each cosine has mean 0 and
    variance exactly ``1 / d``, and the cosines of two different pairs are uncorrelated (even
    when the pairs share a row), so a mean over ``a`` pairs minus a mean over ``b`` other
    pairs has variance ``(1/a + 1/b) / d``; ``noise`` is :data:`NOISE_SIGMAS` standard
    deviations of that (a random table goes past it about 3 times in 1,000). A difference
    within it is not called a pattern: it is what any random table of this size gives.
    """

    adjacent: float  # mean cosine similarity of positions p and p + 1
    distant: float | None  # mean over pairs at least `distance` apart (None below 4 positions)
    distance: int  # n // 2
    noise: float  # NOISE_SIGMAS standard deviations of adjacent - distant for random rows

    @property
    def difference(self) -> float | None:
        """``adjacent - distant`` (``None`` when there are no distant pairs)."""
        return None if self.distant is None else self.adjacent - self.distant

    @property
    def pattern(self) -> NeighbourPattern:
        """What the two means show: neighbours more alike than distant positions by more than
        :attr:`noise` (a bright band along the diagonal), less alike by as much, neither
        (within chance), or too few positions to compare.

        >>> NeighbourSimilarity(0.9, 0.2, 8, noise=0.1).pattern
        'neighbours_alike'
        >>> NeighbourSimilarity(-0.131, -0.065, 8, noise=0.1).pattern
        'no_pattern'
        """
        difference = self.difference
        if difference is None:
            return "too_short"
        if difference > self.noise:
            return "neighbours_alike"
        if -difference > self.noise:
            return "neighbours_apart"
        return "no_pattern"


def chance_difference(adjacent_pairs: int, distant_pairs: int, emb_dim: int) -> float:
    """:data:`NOISE_SIGMAS` standard deviations of a mean cosine over ``adjacent_pairs`` pairs
    minus one over ``distant_pairs`` other pairs, for independent random rows of ``emb_dim``
    dimensions (see :class:`NeighbourSimilarity`).

    >>> round(chance_difference(255, 8256, 768), 4), round(chance_difference(7, 10, 2), 3)
    (0.0069, 1.045)
    """
    variance = (1 / adjacent_pairs + 1 / distant_pairs) / emb_dim
    return NOISE_SIGMAS * math.sqrt(variance)


def neighbour_similarity(position: torch.Tensor, *, emb_dim: int) -> NeighbourSimilarity | None:
    """Mean similarity of neighbouring positions, and of positions at least ``n // 2`` apart,
    from the ``[n, n]`` matrix ``position`` of rows with ``emb_dim`` dimensions (``None`` for
    fewer than 2 positions).

    >>> neighbour_similarity(torch.tensor([[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]),
    ...                      emb_dim=4)
    NeighbourSimilarity(adjacent=0.5, distant=None, distance=2, noise=0.0)
    """
    n = position.shape[0]
    if n < 2:
        return None
    distance = max(2, n // 2)
    adjacent = float(position.diagonal(1).double().mean())  # [n - 1] pairs (p, p + 1)
    far = [position.diagonal(k) for k in range(distance, n)]  # pairs >= distance apart
    if not far or n < 4:
        return NeighbourSimilarity(adjacent, None, distance, 0.0)
    distant = torch.cat(far).double()  # [pairs]
    noise = chance_difference(n - 1, distant.numel(), emb_dim)
    return NeighbourSimilarity(adjacent, float(distant.mean()), distance, noise)


def distance_spread(matrix: torch.Tensor) -> float:
    """How far ``matrix`` ``[n, n]`` is from depending only on the distance between positions:
    the largest spread (max - min) along any diagonal, float64 (0.0 for fewer than 2 rows).

    >>> distance_spread(torch.tensor([[1.0, 0.5, 0.1], [0.5, 1.0, 0.5], [0.1, 0.5, 1.0]]))
    0.0
    """
    n = matrix.shape[0]
    spreads = [
        float(diagonal.max() - diagonal.min())
        for diagonal in (matrix.double().diagonal(k) for k in range(n))
    ]
    return max(spreads, default=0.0)


def repeated_token_pairs(token_ids: Sequence[int]) -> list[tuple[int, int]]:
    """Every pair of positions ``(i, j)``, ``i < j``, holding the same token id, sorted.

    >>> repeated_token_pairs([1, 2, 3])
    []
    """
    positions: dict[int, list[int]] = {}
    for position, token_id in enumerate(token_ids):
        positions.setdefault(token_id, []).append(position)
    pairs = [
        (first, second)
        for group in positions.values()
        for index, first in enumerate(group)
        for second in group[index + 1 :]
    ]
    return sorted(pairs)


@dataclass(frozen=True)
class RepeatSimilarity:
    """One repeated token and the similarity of its pairs of occurrences in each panel: the
    smallest and the largest over the pairs (values from the matrices the figure shows)."""

    token_id: int
    token_text: str  # as the chips and tick labels write it at its first position (not escaped)
    positions: tuple[int, ...]  # its positions among the rows shown, at least two
    token: tuple[float, float]  # (smallest, largest) in the token panel
    position: tuple[float, float]  # in the position panel
    input: tuple[float, float]  # in the input panel

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """Its pairs of positions ``(i, j)``, ``i < j``."""
        return [
            (p, q) for index, p in enumerate(self.positions) for q in self.positions[index + 1 :]
        ]


@dataclass(frozen=True)
class SimilarityFacts:
    """What the similarity figure shows about the repeated tokens of its rows.

    A cell "reads 1.000" when its value rounds to 1.000 at three decimals, as the sentence and
    the hover print it. Pairs are cells above the diagonal (the matrices are symmetric).
    """

    scheme: Scheme
    shown: int  # rows (and columns) the figure shows
    tokens: tuple[RepeatSimilarity, ...]  # most frequent first, then by first position
    token_ones: int  # pairs reading 1.000 in the token panel
    token_ones_repeated: int  # ... of which hold the same token at both positions
    input_ones: int  # pairs reading 1.000 in the input panel

    @property
    def repeated_pairs(self) -> int:
        """Pairs of positions that hold the same token."""
        return sum(len(token.pairs) for token in self.tokens)

    def led_by(self, groups: Sequence[tuple[int, ...]]) -> SimilarityFacts:
        """These facts with the tokens standing at ``groups`` (the figure's marked tokens, in
        the order it marks them) first, then the others as they were."""
        return replace(self, tokens=marked_first(self.tokens, groups))


READS_ONE: Final = 0.9995  # the smallest value printed as 1.000


def _range(matrix: torch.Tensor, pairs: Sequence[tuple[int, int]]) -> tuple[float, float]:
    rows, columns = zip(*pairs, strict=True)
    values = matrix[list(rows), list(columns)].double()  # [pairs]
    return float(values.min()), float(values.max())


def _ones_above_diagonal(matrix: torch.Tensor) -> torch.Tensor:
    """Boolean ``[n, n]``: cells above the diagonal that read 1.000."""
    return torch.triu(matrix.double() >= READS_ONE, diagonal=1)


def similarities_shown(window: WindowEmbeddings, shown: int) -> Similarities:
    """:func:`similarities` of the first ``shown`` positions only: ``[shown, shown]`` each."""
    return Similarities(
        token=cosine_similarity(window.token_embeddings[:shown]),
        position=cosine_similarity(window.pos_embeddings[:shown]),
        input=cosine_similarity(window.input_embeddings[:shown]),
    )


def similarity_facts(
    window: WindowEmbeddings,
    *,
    max_positions: int = MAX_POSITIONS,
    matrices: Similarities | None = None,
    names: Sequence[str] | None = None,
) -> SimilarityFacts:
    """The repeated tokens among the first ``max_positions`` positions of ``window`` and their
    similarities in the three panels, as :func:`posviz.plots.heatmaps.similarity_figure` draws
    them (same matrices, same rows). ``matrices``: :func:`similarities_shown` of those rows,
    if the caller has them; ``names``: the rows' texts as the tick labels write them
    (default :func:`posviz.repeats.token_names`).

    >>> from posviz.embeddings import SeededEmbeddings
    >>> from posviz.pipeline import embed_window
    >>> w = embed_window(SeededEmbeddings.create(seed=1, emb_dim=4), [5, 9, 5], context_length=4)
    >>> facts = similarity_facts(w)
    >>> facts.tokens[0].positions, facts.tokens[0].token, facts.token_ones_repeated
    ((0, 2), (1.0, 1.0), 1)
    """
    if max_positions < 1:
        raise ValueError(f"max_positions must be at least 1, got {max_positions}")
    shown = min(len(window.token_ids), max_positions)
    if matrices is None:
        matrices = similarities_shown(window, shown)
    elif matrices.token.shape != (shown, shown):
        raise ValueError(
            f"matrices of shape {list(matrices.token.shape)} for {shown} positions shown: pass "
            "similarities_shown(window, shown)"
        )
    token, position, inputs = matrices.token, matrices.position, matrices.input
    token_ids = window.token_ids[:shown]
    groups = repeated_positions(token_ids)
    names = token_names(window, shown) if names is None and groups else names
    found = []
    for token_id, positions in groups.items():
        pairs = [(p, q) for index, p in enumerate(positions) for q in positions[index + 1 :]]
        found.append(
            RepeatSimilarity(
                token_id=token_id,
                token_text=names[positions[0]] if names is not None else "",
                positions=positions,
                token=_range(token, pairs),
                position=_range(position, pairs),
                input=_range(inputs, pairs),
            )
        )
    found.sort(key=lambda repeat: (-len(repeat.positions), repeat.positions[0]))
    ids = torch.tensor(token_ids)
    same_token = ids[:, None] == ids[None, :]  # [shown, shown]
    token_ones = _ones_above_diagonal(token)
    return SimilarityFacts(
        scheme=window.scheme,
        shown=shown,
        tokens=tuple(found),
        token_ones=int(token_ones.sum()),
        token_ones_repeated=int((token_ones & same_token).sum()),
        input_ones=int(_ones_above_diagonal(inputs).sum()),
    )
