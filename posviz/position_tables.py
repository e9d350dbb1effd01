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
from typing import Final, Literal

import torch

from posviz.config import CONTEXT_LENGTH_RANGE
from posviz.gpt2.store import Gpt2Embeddings
from posviz.pipeline import EmbeddingTables
from posviz.schemes import rope_angles, sinusoidal_encoding

TableKind = Literal["learned", "gpt2", "sinusoidal", "rope", "none"]
GPT2_POSITIONS: Final = CONTEXT_LENGTH_RANGE[1]  # wpe.weight has 1,024 rows, nothing beyond


@dataclass(frozen=True, eq=False)
class PositionalTable:
    """One positional table: what it is (``kind``, ``label``) and its rows.

    ``key`` names everything its numbers depend on, so a caller may cache what is computed
    from it (``None``: do not cache, e.g. a table made from the window's tokens).
    """

    kind: TableKind
    label: str  # the scheme, as the figures' legends and the lesson name it
    table: torch.Tensor  # [rows, d] float32, row p = position p
    key: tuple[object, ...] | None

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
    return f"learned, random init (seed {seed})"


GPT2_LABEL: Final = "learned, GPT-2 124M trained"
SINUSOIDAL_LABEL: Final = "sinusoidal (formula)"
ROPE_LABEL: Final = "RoPE (cos/sin of its angles)"
NONE_LABEL: Final = "none (all zeros)"


def learned_table(
    tables: EmbeddingTables, *, seed: int, context_length: int, emb_dim: int
) -> PositionalTable:
    """``pos_embedding_layer.weight`` of the book's seeded tables: ``[context_length, d]``."""
    return PositionalTable(
        "learned",
        learned_label(seed),
        tables.pos_embeddings(context_length),
        ("learned", seed, emb_dim, context_length),
    )


def gpt2_table(tables: EmbeddingTables, *, rows: int) -> PositionalTable:
    """Rows ``0..rows-1`` of GPT-2's trained ``wpe.weight`` (``rows`` at most 1,024). Tables
    from :class:`~posviz.gpt2.store.Gpt2Store` name their Hub commit, which becomes the key;
    others have none (not cacheable)."""
    commit = tables.commit if isinstance(tables, Gpt2Embeddings) else None
    return PositionalTable(
        "gpt2",
        GPT2_LABEL,
        tables.pos_embeddings(rows),
        None if commit is None else ("gpt2", commit, rows),
    )


def sinusoidal_table(*, rows: int, emb_dim: int) -> PositionalTable:
    """The sinusoidal encoding of positions ``0..rows-1`` (any number of rows)."""
    return PositionalTable(
        "sinusoidal",
        SINUSOIDAL_LABEL,
        sinusoidal_encoding(rows, emb_dim),
        ("sinusoidal", rows, emb_dim),
    )


def rope_cos_sin(rows: int, emb_dim: int) -> torch.Tensor:
    """Where RoPE carries ``(1, 0)`` in every pair: row ``p`` = ``cos(p·θⱼ) | sin(p·θⱼ)``
    with the angles of :func:`~posviz.schemes.rope_angles` (an odd last dimension: 1),
    ``[rows, emb_dim]`` float32.

    >>> rope_cos_sin(2, 3)
    tensor([[1.0000, 0.0000, 1.0000],
            [0.5403, 0.8415, 1.0000]])
    """
    half = emb_dim // 2
    angles = rope_angles(rows, emb_dim)[:, :half].double()  # [rows, d/2], p * theta_j
    parts = [torch.cos(angles), torch.sin(angles), torch.ones(rows, emb_dim % 2).double()]
    return torch.cat(parts, dim=1).to(torch.float32)  # [rows, d]


def rope_table(*, rows: int, emb_dim: int) -> PositionalTable:
    """RoPE's table, :func:`rope_cos_sin`, for the Geometry view."""
    table = rope_cos_sin(rows, emb_dim)  # [rows, d]
    return PositionalTable("rope", ROPE_LABEL, table, ("rope", rows, emb_dim))


def zeros_table(*, rows: int, emb_dim: int) -> PositionalTable:
    """The ``none`` scheme: no positional signal, every row zero."""
    return PositionalTable("none", NONE_LABEL, torch.zeros(rows, emb_dim), ("none", rows, emb_dim))


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
