"""Positions inside attention: what each scheme does to the scores of one head.

Section 2.8 adds positions to the input; every modern scheme acts on the attention scores
instead, and this module shows both on the window on screen. Exactly:

* the book's ``SelfAttention_v2(d, d)`` weights after ``torch.manual_seed(789)``
  (:func:`posviz.view.book_attention`), split into ``H`` heads of ``d/H`` columns as the
  book's ``MultiHeadAttention`` splits them: head ``K`` is columns ``K·d/H … (K+1)·d/H − 1``
  of the queries and keys, ``q_K = x W_query[K]ᵀ`` and ``k_K = x W_key[K]ᵀ`` in float64;
* scores ``q_K k_Kᵀ / sqrt(d/H)``, the causal mask of section 3.5 (query ``i`` sees keys
  ``j ≤ i``) and weights ``softmax`` over ``j ≤ i``;
* ``x``: the window's token rows, plus the positional rows for ``learned`` and
  ``sinusoidal`` (added to the input, as in §2.8: the float32 sum, widened); for the other
  schemes the token rows alone, and the scheme acts on the scores: RoPE rotates ``q_K`` and
  ``k_K`` as the book's ``llama3.py`` does (``compute_rope_params`` / ``apply_rope``, split
  halves, base 10,000, ``head_dim = d/H``, its float32 angles), ALiBi adds ``−m_K·(i − j)``
  and T5 ``E[bucket(j − i), K]`` (:func:`posviz.schemes.score_bias`), ``none`` nothing.

The **content part** is the scores of the token rows alone (no position anywhere), the
**position part** the scores minus it: the bias itself for ALiBi and T5, what the rotation or
the added rows changed for the others. Masked cells (``j > i``) are NaN in every matrix: they
are not scores, and a figure leaves them empty.

**The shift test** moves the same sentence to positions ``M … M+n−1`` (``settings.shift``)
and compares its scores and weights with those at ``0 … n−1``: a relative scheme (RoPE,
ALiBi, T5) gives the same scores, an absolute one does not. A learned table has no rows past
its end: the view then shows positions ``0 … n−1`` and keeps torch's own error
(:func:`posviz.position_tables.past_the_end`); sinusoidal and RoPE continue by formula.

**Bias against distance** ``k = i − j``: ALiBi's line and T5's staircase for every head, to
distance :func:`bias_distances` (past the context length, where ALiBi keeps its line and T5
has been flat since 128); for the other schemes the position part of the head shown, averaged
over the window's cells at each distance (with its smallest and largest value).

>>> from posviz.config import Settings
>>> from posviz.view import build_view
>>> view = build_attention(build_view(Settings(scheme="alibi", shift=8)))
>>> view.shown.scores.shape, view.head_dim, round(view.slopes[0], 4)
(torch.Size([9, 9]), 16, 0.25)
>>> view.shift_test.scores_change, view.shown.start
(0.0, 8)
>>> bool(view.shown.weights[0, 1].isnan()), float(view.shown.weights[0, 0])
(True, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Final

import torch

from posviz.attention import AttentionWeights
from posviz.config import SHIFT_RANGE, Settings, check_heads
from posviz.pipeline import EmbeddingTables, WindowEmbeddings
from posviz.position_tables import GPT2_POSITIONS, past_the_end
from posviz.schemes import T5_MAX_DISTANCE, scheme, score_bias
from posviz.view import AttentionFor, TablesFor, View, book_attention, seeded_tables

# A shift that changes no score by more than this leaves the scores "unchanged": RoPE's float32
# angles (the book's) round differently at other positions, by about 1e-7 of a score near
# position 0 and up to about 1e-4 near position 2,000; an absolute scheme changes them by
# tenths or more.
UNCHANGED: Final = 1e-3


class AttentionError(ValueError):
    """The Attention view cannot be drawn for these inputs; the message says why and how."""


def bias_distances(context_length: int) -> int:
    """Distances ``k = 0 … D−1`` the bias-against-distance chart gives ALiBi and T5: a quarter
    past the context length, and at least twice T5's 128, so its flat part shows.

    >>> bias_distances(16), bias_distances(1024)
    (256, 1280)
    """
    return max(2 * T5_MAX_DISTANCE, context_length + context_length // 4)


def masked(matrix: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor) -> torch.Tensor:
    """``matrix`` ``[r, c]`` (rows ``rows``, columns ``columns`` of a score matrix) with NaN in
    the masked cells, key after query (``column > row``): not scores, left empty.

    >>> masked(torch.ones(2, 2), torch.arange(2), torch.arange(2))
    tensor([[1., nan],
            [1., 1.]])
    """
    return matrix.masked_fill(columns[None, :] > rows[:, None], torch.nan)


@dataclass(frozen=True, eq=False)
class HeadScores:
    """Head ``K``'s scores for the window at positions ``start … start+n−1``, float64,
    ``[n, n]`` (query row ``i``, key column ``j``).

    The ``raw_`` matrices hold every cell as computed; the masked ones (``j > i``) are not
    scores, and :attr:`content`, :attr:`scores`, :attr:`position` and :attr:`weights` hold
    them as NaN (made on first use; a figure masks only the cells it draws, :func:`masked`).
    """

    start: int  # the position of the window's first token
    raw_content: torch.Tensor  # [n, n]: q_K k_K^T / sqrt(d/H) of the token rows alone
    raw_scores: torch.Tensor  # [n, n]: with the scheme's positions
    raw_weights: torch.Tensor  # [n, n]: softmax over j <= i (0 where j > i); rows sum to 1

    @cached_property
    def content(self) -> torch.Tensor:
        """The content part, NaN where ``j > i``: ``[n, n]``."""
        return self._masked(self.raw_content)

    @cached_property
    def scores(self) -> torch.Tensor:
        """The scores, NaN where ``j > i``: ``[n, n]``."""
        return self._masked(self.raw_scores)

    @cached_property
    def weights(self) -> torch.Tensor:
        """The attention weights, NaN where ``j > i``: ``[n, n]``."""
        return self._masked(self.raw_weights)

    @property
    def position(self) -> torch.Tensor:
        """What positions add to each score: ``scores − content``, NaN where ``j > i``."""
        return self._masked(self.raw_scores - self.raw_content)

    def _masked(self, matrix: torch.Tensor) -> torch.Tensor:
        index = torch.arange(matrix.shape[0])
        return masked(matrix, index, index)

    @property
    def size(self) -> int:
        """n, the window's tokens."""
        return int(self.raw_scores.shape[0])

    @property
    def positions(self) -> range:
        """The positions the window stands at."""
        return range(self.start, self.start + self.size)

    @property
    def nbytes(self) -> int:
        """Memory the three raw matrices hold (24 MB at n = 1,024)."""
        tensors = (self.raw_content, self.raw_scores, self.raw_weights)
        return sum(t.numel() * t.element_size() for t in tensors)


@dataclass(frozen=True)
class ShiftTest:
    """The same sentence at positions ``shift … shift+n−1`` against ``0 … n−1``.

    ``moved``: the scores at the shifted positions exist; if not (a learned table has no row
    past its end), ``error`` is what torch raises, ``table_rows`` the table's rows, and the
    changes are ``None``.
    """

    shift: int  # M
    last_position: int  # M + n − 1
    moved: bool
    scores_change: float | None  # the largest |score(M) − score(0)| over the cells j <= i
    weights_change: float | None  # the same for the attention weights
    error: str | None = None  # e.g. "IndexError: index out of range in self"
    table_rows: int | None = None  # rows of the table that ends (learned), else None

    @property
    def unchanged(self) -> bool:
        """No score changed by more than :data:`UNCHANGED` (float32 rounding of RoPE's
        angles); ``False`` when the sentence could not be moved."""
        return self.scores_change is not None and self.scores_change <= UNCHANGED


@dataclass(frozen=True, eq=False)
class DistanceBias:
    """What the scheme adds to a score against the distance ``k = i − j ≥ 0``, float64.

    ``formula`` (ALiBi, T5): one row per head, every distance ``0 … D−1``, exact. Otherwise
    one row, head ``K``: the position part's mean over the window's cells at distance ``k``
    (``k = 0 … n−1``), with its smallest and largest value.
    """

    formula: bool
    heads: tuple[int, ...]  # the head of each row
    mean: torch.Tensor  # [rows, D]
    low: torch.Tensor  # [rows, D]
    high: torch.Tensor  # [rows, D]

    @property
    def distances(self) -> int:
        """``D``: the rows hold distances ``0 … D−1``."""
        return int(self.mean.shape[1])


@dataclass(frozen=True, eq=False)
class AttentionView:
    """Everything the Attention tab shows for :attr:`settings`."""

    settings: Settings  # as shown (see View.settings)
    token_ids: tuple[int, ...]
    token_texts: tuple[str, ...]
    shown: HeadScores  # at positions shift ... (or 0 ... when the shift failed)
    shift_test: ShiftTest
    bias: DistanceBias
    slopes: tuple[float, ...]  # ALiBi's m of every head; () for the other schemes
    t5_table: torch.Tensor | None  # T5's seeded E [32, H]; None for the other schemes

    @property
    def heads(self) -> int:
        """H."""
        return self.settings.heads

    @property
    def head(self) -> int:
        """K, the head shown."""
        return self.settings.head

    @property
    def head_dim(self) -> int:
        """d/H: the columns of one head."""
        return self.settings.emb_dim // self.settings.heads

    @property
    def nbytes(self) -> int:
        """Memory the view holds, for a cache bounded by bytes."""
        bias = self.bias
        return self.shown.nbytes + sum(
            t.numel() * t.element_size() for t in (bias.mean, bias.low, bias.high)
        )


def shift_limit(settings: Settings, tokens: int, *, past_end: bool = False) -> int:
    """The largest shift M worth offering for a sentence of ``tokens`` tokens: a table that
    ends (learned) holds it at ``rows − n`` at most, and with ``past_end`` up to ``rows`` (the
    next positions raise torch's ``IndexError``, on purpose); a formula goes on, so far enough
    that the sentence passes the context length T and the spec's ``shift_reach`` (T5: 129).
    Within :data:`~posviz.config.SHIFT_RANGE`.

    >>> shift_limit(Settings(), 9), shift_limit(Settings(), 9, past_end=True)
    (7, 16)
    >>> shift_limit(Settings(scheme="rope"), 9), shift_limit(Settings(scheme="t5"), 9)
    (25, 138)
    """
    spec, high = scheme(settings.scheme), SHIFT_RANGE[1]
    if spec.learned:
        rows = table_rows(settings)
        return max(0, min(high, rows if past_end else rows - tokens))
    return min(high, max(settings.context_length, spec.shift_reach) + tokens)


def table_rows(settings: Settings) -> int:
    """Rows of the learned table: the book's ``nn.Embedding(T, d)``, or GPT-2's 1,024."""
    return GPT2_POSITIONS if settings.weights == "gpt2" else settings.context_length


def _moved_input(
    settings: Settings, window: WindowEmbeddings, tables: EmbeddingTables
) -> torch.Tensor | str:
    """The input rows of the window at positions ``shift … shift+n−1`` (``[n, d]`` float32:
    token + position, the float32 sum, as §2.8), or torch's error for a learned table that
    ends before them."""
    n, start = len(window.token_ids), settings.shift
    formula = scheme(settings.scheme).table
    if formula is not None:  # a formula (sinusoidal): any position
        return window.token_embeddings + formula(start + n, settings.emb_dim)[start:]
    table = tables.pos_embeddings(table_rows(settings))  # [rows, d]
    if start + n > table.shape[0]:
        return past_the_end(table)
    return window.token_embeddings + table[start : start + n]


def _head_weights(weights: AttentionWeights, settings: Settings) -> torch.Tensor:
    """``W_query`` and ``W_key`` rows of head ``K``, stacked: ``[2 d/H, d]`` float64."""
    head_dim = settings.emb_dim // settings.heads
    rows = slice(settings.head * head_dim, (settings.head + 1) * head_dim)
    return torch.cat([weights.w_query[rows], weights.w_key[rows]]).double()


def _raw_scores(
    settings: Settings,
    window: WindowEmbeddings,
    weights: AttentionWeights,
    tables: EmbeddingTables,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | str | None]:
    """Head ``K``'s content part, scores at positions ``0 …`` and at ``shift …`` (``None``
    for no shift, torch's error for a table that ends), each ``[n, n]`` float64 unmasked.

    One float64 product projects every input the view needs (token rows, and for the added
    schemes the input rows at both places) on ``W_query`` and ``W_key`` of the head; one batched
    product gives all score matrices."""
    n, shift, spec = len(window.token_ids), settings.shift, scheme(settings.scheme)
    head_dim = settings.emb_dim // settings.heads
    inputs = [window.token_embeddings]  # [n, d] float32 each
    moved: torch.Tensor | str | None = None
    if spec.adds_to_input:
        inputs.append(window.input_embeddings)  # positions 0 ... n-1
        if shift:
            moved = _moved_input(settings, window, tables)
            if not isinstance(moved, str):
                inputs.append(moved)
    projected = torch.cat(inputs).double() @ _head_weights(weights, settings).T  # [k n, 2 dh]
    queries = projected[:, :head_dim].reshape(len(inputs), n, head_dim)  # [k, n, dh]
    keys = projected[:, head_dim:].reshape(len(inputs), n, head_dim)
    rotation = spec.rotation
    if rotation is not None:  # llama3.py's rotation with its float32 angles, at both places
        options = settings.options()
        # each place read as an input of its own length (dynamic NTK's frequencies follow it)
        places = [rotation.angles(n, head_dim, options)]  # [n, dh]
        if shift:
            places.append(rotation.angles(shift + n, head_dim, options)[shift:])  # [n, dh]
        queries = torch.stack(
            [queries[0], *(rotation.turn(queries[0], a, options) for a in places)]
        )
        keys = torch.stack([keys[0], *(rotation.turn(keys[0], a, options) for a in places)])
    scores = queries @ keys.transpose(1, 2) / head_dim**0.5  # [k, n, n]
    content = scores[0]
    if spec.adds_to_input or rotation is not None:
        base = scores[1]
        if shift and not isinstance(moved, str):
            moved = scores[2]
        return content, base, moved
    if spec.biases_scores:
        heads, seed = settings.heads, settings.seed
        bias = [
            score_bias(spec, p, p, heads=heads, seed=seed, head=settings.head)[0]  # [n, n]
            for p in (torch.arange(n), torch.arange(shift, shift + n))
        ]
        return content, content + bias[0], content + bias[1] if shift else None
    return content, content, content if shift else None  # none: no position anywhere


def _softmax(scores: torch.Tensor, causal: torch.Tensor) -> torch.Tensor:
    """Softmax over the keys ``j <= i`` of each query ``i``: 0 where ``j > i``."""
    return torch.softmax(scores.masked_fill(causal, -torch.inf), dim=-1)  # [n, n]


def _largest_change(a: torch.Tensor, b: torch.Tensor, causal: torch.Tensor) -> float:
    """The largest ``|a − b|`` over the cells ``j <= i`` (``causal``: the cells ``j > i``);
    one ``[n, n]`` buffer, changed in place."""
    change = (a - b).abs_().masked_fill_(causal, 0.0)
    return float(change.max())


def measured_bias(position: torch.Tensor, head: int) -> DistanceBias:
    """The position part ``[n, n]`` by distance ``k = i − j`` (the cells ``j > i`` are not
    read): mean, smallest and largest over the ``n − k`` cells of each ``k``, one row
    (``head``).

    Every diagonal at once: with the columns flipped, cell ``(i, i − k)`` sits at
    ``i·(n−1) + n−1 + k`` of the flattened matrix, so a strided ``[n, n]`` view holds diagonal
    ``k`` in column ``k``, rows ``i ≥ k`` (the rest is another row's, masked).

    >>> position = torch.tensor([[0.0, torch.nan], [1.0, 2.0]])
    >>> measured_bias(position, 0).mean
    tensor([[1., 1.]], dtype=torch.float64)
    """
    n = int(position.shape[0])
    flipped = position.double().flip(1).contiguous().view(-1)  # [n * n]
    by_distance = flipped.as_strided((n, n), (n - 1, 1), n - 1)  # [i, k] = position[i, i-k]
    index = torch.arange(n)
    outside = index[None, :] > index[:, None]  # k > i: not a cell of diagonal k
    counts = (n - index).double()  # [n]: cells at distance k
    cells = by_distance.masked_fill(outside, 0.0)  # one [n, n] copy, refilled in place
    mean = cells.sum(dim=0) / counts
    low = cells.masked_fill_(outside, torch.inf).amin(dim=0)
    high = cells.masked_fill_(outside, -torch.inf).amax(dim=0)
    return DistanceBias(False, (head,), mean[None], low[None], high[None])


def formula_bias(settings: Settings) -> DistanceBias:
    """ALiBi's or T5's bias at distance ``k = 0 … D−1`` for every head (query ``k``, key 0)."""
    distances = bias_distances(settings.context_length)
    query, keys = torch.tensor([distances - 1]), torch.arange(distances - 1, -1, -1)
    bias = score_bias(
        settings.scheme, query, keys, heads=settings.heads, seed=settings.seed
    )  # [H, 1, D]: key D-1-k is k back
    values = bias[:, 0, :]  # [H, D], distance k in column k
    return DistanceBias(True, tuple(range(settings.heads)), values, values, values)


def build_attention(
    view: View, *, tables: TablesFor = seeded_tables, attention: AttentionFor = book_attention
) -> AttentionView:
    """Everything the Attention view shows for ``view`` (from :func:`~posviz.view.build_view`):
    head ``settings.head`` of ``settings.heads``, the window at positions ``settings.shift``
    on (see the module docstring).

    ``tables`` and ``attention`` are the caller's, as for
    :func:`~posviz.view.build_word_order`; the app passes its cached ones. Raises
    :class:`~posviz.config.SettingsError` for heads that do not fit d
    (:func:`~posviz.config.check_heads`) and :class:`AttentionError` for a blank text.
    """
    settings = check_heads(view.settings)
    window = view.embeddings
    if window is None:
        raise AttentionError("the text is blank: type a sentence to see its attention scores")
    n = len(window.token_ids)
    causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # [n, n]: j > i
    content, base, moved = _raw_scores(
        settings, window, attention(settings.emb_dim), tables(settings)
    )
    base_weights = _softmax(base, causal)
    shown = HeadScores(0, content, base, base_weights)
    last = settings.shift + n - 1
    if moved is None:
        test = ShiftTest(0, last, True, 0.0, 0.0)
    elif isinstance(moved, str):  # the learned table ends: show positions 0 ... n-1
        test = ShiftTest(settings.shift, last, False, None, None, moved, table_rows(settings))
    else:
        moved_weights = _softmax(moved, causal)
        shown = HeadScores(settings.shift, content, moved, moved_weights)
        test = ShiftTest(
            settings.shift,
            last,
            True,
            _largest_change(moved, base, causal),
            _largest_change(moved_weights, base_weights, causal),
        )
    score_biased = scheme(settings.scheme).bias
    bias = (
        formula_bias(settings)
        if score_biased is not None
        else measured_bias(shown.raw_scores - shown.raw_content, settings.head)
    )
    slopes, bias_table = (
        (None, None) if score_biased is None else (score_biased.slopes, score_biased.table)
    )
    return AttentionView(
        settings,
        window.token_ids,
        window.token_texts,
        shown,
        test,
        bias,
        () if slopes is None else slopes(settings.heads),
        None if bias_table is None else bias_table(seed=settings.seed, heads=settings.heads),
    )
