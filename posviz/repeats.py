"""Repeated tokens of a window: where each one stands, and what the matrices do with it.

Section 2.8's point in numbers. A token id that occurs at several positions selects the same
row of the token table each time, so its token rows are identical (largest difference exactly
0.0); the scheme's position signal then makes its input rows differ, except with ``none``,
where nothing is added and they stay identical. :func:`repeat_facts` measures that on the
matrices a figure shows; :mod:`posviz.lesson.repeats` words it, and
:mod:`posviz.plots._identity` marks the same rows in the figures.

"Largest difference" is the largest absolute difference between two occurrences' rows, over
every pair of occurrences and every dimension, computed in float64 from the float32 rows.

>>> from posviz.embeddings import SeededEmbeddings
>>> from posviz.pipeline import embed_window
>>> tables = SeededEmbeddings.create(seed=1, emb_dim=4)
>>> facts = repeat_facts(embed_window(tables, [5, 9, 5, 5], context_length=4, scheme="none"))
>>> [(r.token_id, r.positions, r.token_difference, r.input_difference) for r in facts.tokens]
[(5, (0, 2, 3), 0.0, 0.0)]
>>> repeated_positions([7, 3, 7, 3, 7, 1])
{7: (0, 2, 4), 3: (1, 3)}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from posviz.config import Scheme
from posviz.pipeline import WindowEmbeddings


def repeated_positions(token_ids: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """``{token id: its positions}`` for every id that occurs more than once, in order of
    first occurrence.

    >>> repeated_positions([1, 2, 3])
    {}
    """
    positions: dict[int, list[int]] = {}
    for position, token_id in enumerate(token_ids):
        positions.setdefault(token_id, []).append(position)
    return {token_id: tuple(found) for token_id, found in positions.items() if len(found) > 1}


@dataclass(frozen=True)
class RepeatedToken:
    """One token id that occurs more than once in a window, and how far apart its rows are in
    the token and the input matrix."""

    token_id: int
    token_text: str  # as token_text.visible writes it; not escaped
    positions: tuple[int, ...]  # where it stands, ascending, at least two
    token_difference: float  # largest difference of its token rows (0.0: the same row)
    input_difference: float  # largest difference of its input rows
    length_difference: float  # largest difference of its input rows' lengths (L2 norms)

    @property
    def count(self) -> int:
        """How often the token occurs in the window."""
        return len(self.positions)


@dataclass(frozen=True)
class RepeatFacts:
    """Every repeated token of one window (most frequent first, then by first position)."""

    scheme: Scheme
    num_positions: int  # n, the window's length
    tokens: tuple[RepeatedToken, ...]

    @property
    def main(self) -> RepeatedToken | None:
        """The repeated token the lesson sentence is about (``None``: nothing repeats)."""
        return self.tokens[0] if self.tokens else None

    @property
    def marked_rows(self) -> tuple[int, ...]:
        """Every position holding a repeated token, ascending."""
        return tuple(sorted(p for token in self.tokens for p in token.positions))


def repeat_facts(window: WindowEmbeddings) -> RepeatFacts:
    """The repeated tokens of ``window`` with the differences of their rows, measured on the
    matrices the embeddings figure shows. All tokens at once: the rows of every occurrence,
    grouped by token, reduced per group (a long window has hundreds of repeated tokens)."""
    groups = repeated_positions(window.token_ids)
    if not groups:
        return RepeatFacts(window.scheme, len(window.token_ids), ())
    rows = torch.tensor([p for positions in groups.values() for p in positions])  # [M]
    group = torch.tensor([g for g, positions in enumerate(groups.values()) for _ in positions])
    inputs = window.input_embeddings[rows]  # [M, d]
    lengths = torch.linalg.vector_norm(inputs.to(torch.float64), dim=1)  # [M]
    token_spread = largest_differences(window.token_embeddings[rows], group).tolist()
    input_spread = largest_differences(inputs, group).tolist()
    length_spread = largest_differences(lengths[:, None], group).tolist()
    found = [
        RepeatedToken(
            token_id=token_id,
            token_text=window.token_texts[positions[0]],
            positions=positions,
            token_difference=token_spread[g],
            input_difference=input_spread[g],
            length_difference=length_spread[g],
        )
        for g, (token_id, positions) in enumerate(groups.items())
    ]
    found.sort(key=lambda token: (-token.count, token.positions[0]))
    return RepeatFacts(window.scheme, len(window.token_ids), tuple(found))


def largest_differences(values: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
    """``[G]`` float64: for each group ``g``, the largest ``|values[p, j] - values[q, j]|``
    over the pairs of rows ``p, q`` of ``values`` ``[M, d]`` (d >= 1) whose ``group`` is
    ``g``, and over the dimensions ``j`` (0.0 for identical rows). The largest and smallest
    value of each column are exact in the rows' own dtype; their difference is taken in
    float64.

    >>> rows = torch.tensor([[1.0, 2.0], [1.0, 2.0], [0.5, 2.25], [3.0, 3.0], [3.0, 3.0]])
    >>> largest_differences(rows, torch.tensor([0, 0, 0, 1, 1])).tolist()
    [0.5, 0.0]
    """
    count = int(group.max()) + 1
    index = group[:, None].expand_as(values)
    shape = (count, values.shape[1])
    high = torch.full(shape, -math.inf, dtype=values.dtype).scatter_reduce(0, index, values, "amax")
    low = torch.full(shape, math.inf, dtype=values.dtype).scatter_reduce(0, index, values, "amin")
    return (high.to(torch.float64) - low.to(torch.float64)).amax(dim=1)  # [G]
