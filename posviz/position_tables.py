"""The positional tables the Geometry and Distance views look at, one per scheme, and what a
table says when asked for a position it does not have.

Row ``p`` of every table is position ``p``; shape ``[rows, emb_dim]``, float32:

* ``learned``: the book's ``nn.Embedding(context_length, emb_dim)`` after
  ``torch.manual_seed(seed)`` (made right after the token table), random as before training;
* ``gpt2``: rows of GPT-2 124M's trained ``wpe.weight`` [1024, 768];
* ``sinusoidal``: :func:`posviz.schemes.sinusoidal_encoding`, a formula for any position;
* ``rope``: RoPE adds no vectors, so its table is where it carries the vector ``(1, 0)`` of
  every pair of dimensions ``(j, j + d/2)``: row ``p`` is ``cos(p·θⱼ)`` then ``sin(p·θⱼ)``
  (an odd last dimension is never rotated: 1);
* ``none``: all zeros (there is no positional signal; nothing to project or compare).

A learned table has as many rows as its context length and nothing beyond: looking up
position ``T`` raises. :func:`past_the_end` runs that lookup and returns torch's own message.

>>> sinusoidal_table(rows=3, emb_dim=4).table.shape
torch.Size([3, 4])
>>> rope_table(rows=2, emb_dim=4).table
tensor([[1.0000, 1.0000, 0.0000, 0.0000],
        [0.5403, 0.9999, 0.8415, 0.0100]])
>>> past_the_end(torch.zeros(16, 8))
'IndexError: index out of range in self'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import torch

from posviz.config import CONTEXT_LENGTH_RANGE
from posviz.gpt2.store import Gpt2Embeddings
from posviz.pipeline import EmbeddingTables
from posviz.schemes import LEARNED, NONE, ROPE, SINUSOIDAL, Options, SchemeSpec, default_options

GPT2_POSITIONS: Final = CONTEXT_LENGTH_RANGE[1]  # wpe.weight has 1,024 rows, nothing beyond
GPT2_KIND: Final = "gpt2"  # the kind of GPT-2's trained table (a learned one)


@dataclass(frozen=True, eq=False)
class PositionalTable:
    """One positional table: what it is (its ``scheme``, ``trained`` for GPT-2's trained
    table, ``label``) and its rows.

    ``key`` names everything its numbers depend on, so a caller may cache what is computed
    from it (``None``: do not cache, e.g. a table made from the window's tokens).
    """

    scheme: SchemeSpec
    label: str  # the scheme, as the figures' legends and the lesson name it
    table: torch.Tensor  # [rows, d] float32, row p = position p
    key: tuple[object, ...] | None
    trained: bool = False  # GPT-2's trained table (else the book's init, or a formula)

    @property
    def kind(self) -> str:
        """``"gpt2"`` for GPT-2's trained table, else the scheme's name."""
        return GPT2_KIND if self.trained else self.scheme.name

    @property
    def rows(self) -> int:
        """How many positions the table holds."""
        return int(self.table.shape[0])

    @property
    def emb_dim(self) -> int:
        """d, the width of a row."""
        return int(self.table.shape[1])


def learned_label(seed: int) -> str:
    """The book's random positional table, named with its seed.

    >>> learned_label(123)
    'learned, random init (seed 123)'
    """
    return f"{LEARNED.table_label} (seed {seed})"


GPT2_LABEL: Final = "learned, GPT-2 124M trained"


def learned_table(
    tables: EmbeddingTables, *, seed: int, context_length: int, emb_dim: int
) -> PositionalTable:
    """``pos_embedding_layer.weight`` of the book's seeded tables: ``[context_length, d]``."""
    return PositionalTable(
        LEARNED,
        learned_label(seed),
        tables.pos_embeddings(context_length),
        (LEARNED.name, seed, emb_dim, context_length),
    )


def gpt2_table(tables: EmbeddingTables, *, rows: int) -> PositionalTable:
    """Rows ``0..rows-1`` of GPT-2's trained ``wpe.weight`` (``rows`` at most 1,024). Tables
    from :class:`~posviz.gpt2.store.Gpt2Store` name their Hub commit, which becomes the key;
    others have none (not cacheable)."""
    commit = tables.commit if isinstance(tables, Gpt2Embeddings) else None
    return PositionalTable(
        LEARNED,
        GPT2_LABEL,
        tables.pos_embeddings(rows),
        None if commit is None else (GPT2_KIND, commit, rows),
        trained=True,
    )


def cos_sin_table(angles: torch.Tensor) -> torch.Tensor:
    """Where a rotation by ``angles`` ``[rows, d]`` (a scheme's, e.g. RoPE's) carries ``(1, 0)``
    in every pair ``(j, j + d/2)``: row ``p`` = ``cos(p·θⱼ) | sin(p·θⱼ)``, an odd last
    dimension 1 (never rotated); ``[rows, d]`` float32.

    >>> cos_sin_table(torch.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]))
    tensor([[1.0000, 0.0000, 1.0000],
            [0.5403, 0.8415, 1.0000]])
    """
    rows, emb_dim = angles.shape
    half = emb_dim // 2
    half_angles = angles[:, :half].double()  # [rows, d/2], p * theta_j
    parts = [torch.cos(half_angles), torch.sin(half_angles), torch.ones(rows, emb_dim % 2).double()]
    return torch.cat(parts, dim=1).to(torch.float32)  # [rows, d]


def formula_table(
    scheme: SchemeSpec, *, rows: int, emb_dim: int, options: Options | None = None
) -> PositionalTable:
    """The table of a scheme that needs no lookup, positions ``0..rows-1`` (any number of
    rows): its formula's (sinusoidal), where a rotation carries ``(1, 0)`` in every pair
    (RoPE: row ``p`` = ``cos(p·θⱼ) | sin(p·θⱼ)``, an odd last dimension 1), or zeros for a
    scheme that puts no position anywhere. ``ValueError`` for a learned table or a bias.

    >>> formula_table(NONE, rows=2, emb_dim=3).table
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    """
    options = {**default_options(), **(options or {})}
    own = tuple((declared.name, options[declared.name]) for declared in scheme.options)
    key: tuple[object, ...] = (scheme.name, rows, emb_dim, *own)
    if scheme.table is not None:
        return PositionalTable(scheme, scheme.table_label, scheme.table(rows, emb_dim), key)
    if scheme.rotation is not None:
        table = cos_sin_table(scheme.rotation.angles(rows, emb_dim, options))  # [rows, d]
        return PositionalTable(scheme, scheme.table_label, table, key)
    if scheme.positionless:
        return PositionalTable(scheme, scheme.table_label, torch.zeros(rows, emb_dim), key)
    raise ValueError(f"the {scheme.name} scheme has no table made by a formula")


def sinusoidal_table(*, rows: int, emb_dim: int) -> PositionalTable:
    """The sinusoidal encoding of positions ``0..rows-1`` (any number of rows)."""
    return formula_table(SINUSOIDAL, rows=rows, emb_dim=emb_dim)


def rope_table(*, rows: int, emb_dim: int, options: Options | None = None) -> PositionalTable:
    """Where RoPE carries ``(1, 0)`` in every pair: row ``p`` = ``cos(p·θⱼ) | sin(p·θⱼ)``
    with the angles of :func:`~posviz.schemes.rope_angles` (an odd last dimension: 1)."""
    return formula_table(ROPE, rows=rows, emb_dim=emb_dim, options=options)


def zeros_table(*, rows: int, emb_dim: int) -> PositionalTable:
    """The ``none`` scheme: no positional signal, every row zero."""
    return formula_table(NONE, rows=rows, emb_dim=emb_dim)


def past_the_end(weight: torch.Tensor) -> str:
    """Look up position ``len(weight)`` in ``nn.Embedding(len(weight), d)`` holding ``weight``
    and return the error torch raises, as ``"IndexError: <torch's message>"``.

    The layer is ``nn.Embedding(T, d)`` given ``weight`` (as ``from_pretrained`` makes it),
    so it skips the random init and the global generator is untouched.
    """
    rows, emb_dim = weight.shape
    layer = torch.nn.Embedding(rows, emb_dim, _weight=weight, _freeze=True)  # [T, d]
    try:
        layer(torch.tensor([rows]))  # position T: one past the last row
    except IndexError as error:
        return f"{type(error).__name__}: {error}"
    raise RuntimeError(f"torch looked up row {rows} of a {rows}-row table")


def distinct(token_ids: Sequence[int]) -> list[int]:
    """``token_ids`` without repeats, in order of first appearance.

    >>> distinct([5, 3, 5, 9])
    [5, 3, 9]
    """
    return list(dict.fromkeys(token_ids))
