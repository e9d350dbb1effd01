"""Section 2.8's input pipeline for one window: token ids -> token embeddings, + positions
-> input embeddings.

The tables come from anything that has the two lookups of :class:`EmbeddingTables` (the
book's seeded tables, :class:`~posviz.embeddings.SeededEmbeddings`, or trained ones). The
window's token texts travel with its matrices, so every consumer gets rows and labels that
belong together.

>>> from posviz.embeddings import SeededEmbeddings
>>> tables = SeededEmbeddings.create(seed=123, emb_dim=4)
>>> window = embed_window(tables, (40, 367, 2885, 1464), context_length=4)
>>> window.input_embeddings.shape, window.token_texts
(torch.Size([4, 4]), ('I', '␣H', 'AD', '␣always'))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch

from posviz.config import Scheme
from posviz.schemes import LEARNED, Options, apply_scheme
from posviz.schemes import scheme as scheme_of
from posviz.tokenizer import token_texts as texts_of


class EmbeddingTables(Protocol):
    """A token table and a positional table, looked up as ``nn.Embedding`` would."""

    def token_embeddings(self, token_ids: Sequence[int]) -> torch.Tensor:
        """Rows ``token_ids`` of the token table: ``[n, d]`` float32."""
        ...

    def pos_embeddings(self, context_length: int) -> torch.Tensor:
        """The positional table for positions ``0..context_length-1``: ``[T, d]`` float32."""
        ...


@dataclass(frozen=True)
class WindowEmbeddings:
    """The three matrices of one window, rows = positions ``0..n-1``, float32, and the
    window's tokens (ids and their text as the page writes it, one per row)."""

    token_ids: tuple[int, ...]
    token_texts: tuple[str, ...]  # tokenizer.token_texts: as chips, labels and sentences say
    context_length: int  # T: rows of the positional table (only the first n are used)
    scheme: Scheme
    token_embeddings: torch.Tensor  # [n, d] rows of the 50,257 x d token table
    pos_embeddings: torch.Tensor  # [n, d] the scheme's position signal (see schemes.Positioned)
    input_embeddings: torch.Tensor  # [n, d] what the first transformer block receives

    def __post_init__(self) -> None:
        if len(self.token_texts) != len(self.token_ids):
            raise ValueError(
                f"{len(self.token_texts)} token texts for {len(self.token_ids)} tokens"
            )

    @property
    def emb_dim(self) -> int:
        """d, the width of the three matrices."""
        return int(self.token_embeddings.shape[1])


def embed_window(
    tables: EmbeddingTables,
    token_ids: Sequence[int],
    *,
    context_length: int,
    scheme: Scheme = LEARNED.name,
    options: Options | None = None,
    token_texts: Sequence[str] | None = None,
) -> WindowEmbeddings:
    """The book's ``token_embedding_layer(inputs) + pos_embedding_layer(torch.arange(n))``
    for one window of ``n <= context_length`` tokens (for ``learned``; see ``schemes``), the
    scheme's ``options`` (default: their defaults) where it has any.

    ``token_texts``: the tokens as read in their whole text
    (:func:`posviz.tokenizer.token_texts` with the window's span), so that a character split
    across the window's edge is named; default: the window's tokens read alone."""
    ids = tuple(token_ids)
    if len(ids) > context_length:
        raise ValueError(f"a window holds at most {context_length} tokens, got {len(ids)}")
    token_embeddings = tables.token_embeddings(ids)  # [n, d]
    # rows 0..n-1 of the [T, d] positional table: [n, d]
    spec = scheme_of(scheme)
    learned = tables.pos_embeddings(context_length)[: len(ids)] if spec.learned else None
    positioned = apply_scheme(spec, token_embeddings, learned, options)
    return WindowEmbeddings(
        token_ids=ids,
        token_texts=texts_of(ids) if token_texts is None else tuple(token_texts),
        context_length=context_length,
        scheme=scheme,
        token_embeddings=token_embeddings,
        pos_embeddings=positioned.position_signal,
        input_embeddings=positioned.input_embeddings,
    )


def shapes(batch_shape: tuple[int, int], emb_dim: int, context_length: int) -> dict[str, str]:
    """The tensor shapes of section 2.8 for a batch ``[B, n]``, as the book prints them."""
    batch, n = batch_shape
    return {
        "inputs": f"[{batch}, {n}]",
        "token_embeddings": f"[{batch}, {n}, {emb_dim}]",
        "pos_embeddings": f"[{n}, {emb_dim}]",
        "pos_table": f"[{context_length}, {emb_dim}]",
        "input_embeddings": f"[{batch}, {n}, {emb_dim}]",
    }
