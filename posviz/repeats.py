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
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

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


def token_names(window: WindowEmbeddings, rows: int | None = None) -> tuple[str, ...]:
    """The first ``rows`` (default: all) tokens of ``window`` as the chips and the figures'
    tick labels write them (:func:`posviz.tokenizer.token_texts`: a character split over
    several tokens is named in each, ``東 (1 of 2)``). Not escaped.

    >>> from posviz.embeddings import SeededEmbeddings
    >>> from posviz.pipeline import embed_window
    >>> tables = SeededEmbeddings.create(seed=1, emb_dim=4)
    >>> token_names(embed_window(tables, [30266, 109, 8278], context_length=4))
    ('東 (1 of 2)', '東 (2 of 2)', '␣rose')
    """
    return window.token_texts[:rows]


@dataclass(frozen=True)
class RepeatedToken:
    """One token id that occurs more than once in a window, and how far apart its rows are in
    the token and the input matrix."""

    token_id: int
    token_text: str  # as the chips and tick labels write it at its first position (not escaped)
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
    """Every repeated token of one window (most frequent first, then by first position, unless
    :meth:`led_by` put the ones a figure marks first).

    ``columns``: the dimensions the differences were measured over (``None``: every one); the
    embeddings figure measures the dimensions it draws. Lengths are always of whole rows.
    """

    scheme: Scheme
    num_positions: int  # n, the window's length
    tokens: tuple[RepeatedToken, ...]
    columns: range | None = None  # dimensions measured (None: all d)

    @property
    def main(self) -> RepeatedToken | None:
        """The first repeated token (``None``: nothing repeats)."""
        return self.tokens[0] if self.tokens else None

    def led_by(self, groups: Sequence[tuple[int, ...]]) -> RepeatFacts:
        """These facts with the tokens standing at ``groups`` (a figure's marked tokens, in
        the order it marks them) first, in that order, then the others as they were.

        >>> a = RepeatedToken(5, "a", (0, 2, 4), 0.0, 1.0, 0.0)
        >>> b = RepeatedToken(7, "b", (1, 3), 0.0, 1.0, 0.0)
        >>> [t.token_text for t in RepeatFacts("learned", 5, (a, b)).led_by([(1, 3)]).tokens]
        ['b', 'a']
        """
        return replace(self, tokens=marked_first(self.tokens, groups))

    @property
    def marked_rows(self) -> tuple[int, ...]:
        """Every position holding a repeated token, ascending."""
        return tuple(sorted(p for token in self.tokens for p in token.positions))


class _Placed(Protocol):
    @property
    def positions(self) -> tuple[int, ...]: ...


Placed = TypeVar("Placed", bound=_Placed)


def marked_first(tokens: Sequence[Placed], groups: Sequence[tuple[int, ...]]) -> tuple[Placed, ...]:
    """``tokens`` with the ones standing at ``groups`` first, in the order of ``groups``, then
    the others in their order. Every group must be one token's positions (``ValueError``).

    >>> a, b = RepeatedToken(5, "a", (0, 2), 0, 0, 0), RepeatedToken(7, "b", (1, 3), 0, 0, 0)
    >>> [token.token_text for token in marked_first([a, b], [(1, 3)])]
    ['b', 'a']
    """
    by_rows = {token.positions: token for token in tokens}
    missing = [group for group in groups if group not in by_rows]
    if missing:
        raise ValueError(
            f"no repeated token stands at positions {missing[0]}: pass the groups of these "
            "tokens' own positions"
        )
    chosen = set(groups)
    return (
        *(by_rows[group] for group in groups),
        *(token for token in tokens if token.positions not in chosen),
    )


def repeat_facts(
    window: WindowEmbeddings,
    *,
    columns: range | None = None,
    names: Sequence[str] | None = None,
) -> RepeatFacts:
    """The repeated tokens of ``window`` with the differences of their rows, over the
    dimensions ``columns`` (``None``: all d; the embeddings figure passes the ones it draws),
    each named as ``names`` (default :func:`token_names`) writes its first position. All
    tokens at once: the rows of every occurrence, grouped by token, reduced per group (a long
    window has hundreds of repeated tokens)."""
    groups = repeated_positions(window.token_ids)
    if columns is not None and (columns.start, columns.stop) != (0, window.emb_dim):
        raise ValueError(
            f"columns {columns} do not span the window's {window.emb_dim} dimensions: pass "
            f"range(0, {window.emb_dim}, step)"
        )
    measured = None if columns is None or columns.step == 1 else columns
    if not groups:
        return RepeatFacts(window.scheme, len(window.token_ids), (), measured)
    names = token_names(window) if names is None else names
    rows = torch.tensor([p for positions in groups.values() for p in positions])  # [M]
    group = torch.tensor([g for g, positions in enumerate(groups.values()) for _ in positions])
    inputs = window.input_embeddings[rows]  # [M, d]
    lengths = torch.linalg.vector_norm(inputs.to(torch.float64), dim=1)  # [M], whole rows
    tokens = window.token_embeddings[rows]  # [M, d]
    if measured is not None:
        tokens, inputs = tokens[:, :: measured.step], inputs[:, :: measured.step]  # [M, k]
    token_spread = largest_differences(tokens, group).tolist()
    input_spread = largest_differences(inputs, group).tolist()
    length_spread = largest_differences(lengths[:, None], group).tolist()
    found = [
        RepeatedToken(
            token_id=token_id,
            token_text=names[positions[0]],
            positions=positions,
            token_difference=token_spread[g],
            input_difference=input_spread[g],
            length_difference=length_spread[g],
        )
        for g, (token_id, positions) in enumerate(groups.items())
    ]
    found.sort(key=lambda token: (-token.count, token.positions[0]))
    return RepeatFacts(window.scheme, len(window.token_ids), tuple(found), measured)


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
