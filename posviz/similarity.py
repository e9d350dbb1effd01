"""Cosine similarity between positions: which rows of a matrix point the same way.

For the token, position and input matrices of one window, :func:`similarities` gives three
``[n, n]`` matrices (:func:`posviz.plots.heatmaps.similarity_figure` draws them side by side). The
lesson: a token that appears twice has the *same* token vector at both positions (similarity
exactly 1.0 in the token panel); adding (or rotating by) the position makes the two input
vectors differ.
:func:`first_repeat` finds such a pair with its values from the matrices, so the sentence
on screen (:func:`posviz.lesson.schemes.repeat_sentence`) matches the figure.

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

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from posviz.config import Scheme
from posviz.pipeline import WindowEmbeddings


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


@dataclass(frozen=True)
class NeighbourSimilarity:
    """How alike neighbouring positions are, from a position panel's ``[n, n]`` similarity."""

    adjacent: float  # mean cosine similarity of positions p and p + 1
    distant: float | None  # mean over pairs at least `distance` apart (None below 4 positions)
    distance: int  # n // 2


def neighbour_similarity(position: torch.Tensor) -> NeighbourSimilarity | None:
    """Mean similarity of neighbouring positions, and of positions at least ``n // 2`` apart,
    from the ``[n, n]`` matrix ``position`` (``None`` for fewer than 2 positions).

    >>> neighbour_similarity(torch.tensor([[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]))
    NeighbourSimilarity(adjacent=0.5, distant=None, distance=2)
    """
    n = position.shape[0]
    if n < 2:
        return None
    distance = max(2, n // 2)
    adjacent = float(position.diagonal(1).double().mean())  # [n - 1] pairs (p, p + 1)
    far = [position.diagonal(k) for k in range(distance, n)]  # pairs >= distance apart
    distant = float(torch.cat(far).double().mean()) if far and n >= 4 else None
    return NeighbourSimilarity(adjacent, distant, distance)


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
class RepeatedToken:
    """Two occurrences of one token and their similarity in each panel (values from the
    matrices the figure shows; :mod:`posviz.lesson.schemes` words them)."""

    scheme: Scheme
    token_id: int
    token_text: str  # as token_text.visible writes it; not escaped
    first: int  # position of the first occurrence
    second: int  # position of the second occurrence
    token_similarity: float
    position_similarity: float
    input_similarity: float


def first_repeat(window: WindowEmbeddings) -> RepeatedToken | None:
    """The first repeated token of ``window`` with its three similarities, or ``None``.

    >>> from posviz.embeddings import SeededEmbeddings
    >>> from posviz.pipeline import embed_window
    >>> w = embed_window(SeededEmbeddings.create(seed=1, emb_dim=4), [5, 9, 5], context_length=4)
    >>> note = first_repeat(w)
    >>> (note.first, note.second, note.token_similarity)
    (0, 2, 1.0)
    """
    pairs = repeated_token_pairs(window.token_ids)
    if not pairs:
        return None
    first, second = pairs[0]
    matrices = similarities(window)
    return RepeatedToken(
        scheme=window.scheme,
        token_id=window.token_ids[first],
        token_text=window.token_texts[first],
        first=first,
        second=second,
        token_similarity=float(matrices.token[first, second]),
        position_similarity=float(matrices.position[first, second]),
        input_similarity=float(matrices.input[first, second]),
    )
