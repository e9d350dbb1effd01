"""Section 2.8's input pipeline for one window: token ids -> token embeddings, + positions
-> input embeddings.

>>> tables = SeededEmbeddings.create(seed=123, emb_dim=4)
>>> view = embed_window(tables, (40, 367, 2885, 1464), context_length=4)
>>> view.input_embeddings.shape
torch.Size([4, 4])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from posviz.config import Scheme
from posviz.embeddings import SeededEmbeddings
from posviz.schemes import apply_scheme


@dataclass(frozen=True)
class WindowEmbeddings:
    """The three matrices of one window, rows = positions ``0..n-1``, float32."""

    token_ids: tuple[int, ...]
    context_length: int  # T: rows of the positional table (only the first n are used)
    scheme: Scheme
    token_embeddings: torch.Tensor  # [n, d] rows of the 50,257 x d token table
    pos_embeddings: torch.Tensor  # [n, d] the scheme's position signal (see schemes.Positioned)
    input_embeddings: torch.Tensor  # [n, d] what the first transformer block receives

    @property
    def emb_dim(self) -> int:
        return int(self.token_embeddings.shape[1])


def embed_window(
    tables: SeededEmbeddings,
    token_ids: Sequence[int],
    *,
    context_length: int,
    scheme: Scheme = "learned",
) -> WindowEmbeddings:
    """The book's ``token_embedding_layer(inputs) + pos_embedding_layer(torch.arange(n))``
    for one window of ``n <= context_length`` tokens (for ``learned``; see ``schemes``)."""
    ids = tuple(token_ids)
    if len(ids) > context_length:
        raise ValueError(f"a window holds at most {context_length} tokens, got {len(ids)}")
    token_embeddings = tables.token_embeddings(ids)  # [n, d]
    learned = tables.pos_embeddings(context_length)[: len(ids)] if scheme == "learned" else None
    positioned = apply_scheme(scheme, token_embeddings, learned)
    return WindowEmbeddings(
        token_ids=ids,
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
