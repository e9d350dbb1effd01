"""The book's reference computations, written without posviz, for every test that needs them.

* Tables as the book makes them (sections 2.7 and 2.8): ``torch.manual_seed(seed)``, then
  ``nn.Embedding(vocab_size, emb_dim)``, then ``nn.Embedding(context_length, emb_dim)``, under
  ``torch.random.fork_rng`` so no test disturbs (or depends on) the global random state.
* The sinusoidal encoding of Vaswani et al. (2017), cell by cell with ``math``, float64
  rounded once to float32.
* RoPE with the functions of the book's Llama notebook (``precompute_rope_params`` /
  ``compute_rope``, copied verbatim); an odd last dimension stays unrotated, as posviz's
  notes say.
* Cosine similarity with ``torch.nn.functional.cosine_similarity``.
* The book's chapter-3 self-attention: ``SelfAttention_v2`` verbatim, made after
  ``torch.manual_seed(789)`` under ``fork_rng``, and the causal masking of section 3.5.1 as
  the book writes it (RoPE'd queries and keys use :func:`book_rope`).
* The book's first batch of section 2.8 (``BOOK_2_8_INPUTS``), as the book prints it.
* Reading what the app sent: plotly's typed arrays (shared with the load test,
  ``devtools.reference``) and a strict un-escaper for the Markdown of the token chips.

Where float32 is exact (the same float32 operations in the same order) tests compare with
``torch.equal`` / ``np.array_equal``; the few formulas computed in another precision say so.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from functools import lru_cache

import torch
import torch.nn.functional as F

from devtools.reference import decode_array

VOCAB_SIZE = 50257  # GPT-2's vocabulary, written out here rather than imported from posviz
SCHEMES = ("learned", "sinusoidal", "none", "rope")
ATTENTION_SEED = 789  # the book's torch.manual_seed(789) before SelfAttention_v2
# Section 2.8: the first batch of the data loader over The Verdict (batch_size=8,
# max_length=4, stride=4), as the book prints it.
BOOK_2_8_INPUTS = [
    [40, 367, 2885, 1464],
    [1807, 3619, 402, 271],
    [10899, 2138, 257, 7026],
    [15632, 438, 2016, 257],
    [922, 5891, 1576, 438],
    [568, 340, 373, 645],
    [1049, 5975, 284, 502],
    [284, 3285, 326, 11],
]
WORD_JOINER = "\u2060"  # posviz puts it after ':' and before '@' so Markdown links nothing

__all__ = [
    "ATTENTION_SEED",
    "BOOK_2_8_INPUTS",
    "SCHEMES",
    "VOCAB_SIZE",
    "SelfAttention_v2",
    "book_attention",
    "book_causal_attention",
    "book_layers",
    "book_rope",
    "book_tables",
    "book_window",
    "compute_rope",
    "cosine_similarity",
    "decode_array",
    "precompute_rope_params",
    "sinusoidal",
    "unescape_markdown",
]


# --- the book's tables -----------------------------------------------------------------------


def book_layers(
    seed: int, emb_dim: int, context_length: int, *, vocab_size: int = VOCAB_SIZE
) -> tuple[torch.nn.Embedding, torch.nn.Embedding]:
    """Sections 2.7-2.8: ``token_embedding_layer`` then ``pos_embedding_layer``."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        token_embedding_layer = torch.nn.Embedding(vocab_size, emb_dim)
        pos_embedding_layer = torch.nn.Embedding(context_length, emb_dim)
    return token_embedding_layer, pos_embedding_layer


@lru_cache(maxsize=4)
def book_tables(
    seed: int, emb_dim: int, context_length: int, *, vocab_size: int = VOCAB_SIZE
) -> tuple[torch.Tensor, torch.Tensor]:
    """The weights of :func:`book_layers`: ``[vocab_size, d]`` and ``[T, d]`` (cached: the
    token table takes a quarter of a second at ``d = 768``; treat them as read-only)."""
    token_layer, pos_layer = book_layers(seed, emb_dim, context_length, vocab_size=vocab_size)
    return token_layer.weight.detach(), pos_layer.weight.detach()


# --- positional schemes ----------------------------------------------------------------------


def sinusoidal(num_positions: int, emb_dim: int) -> torch.Tensor:
    """``PE[p, 2i] = sin(p / 10000^(2i/d))``, ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``, each
    cell with ``math`` in float64, rounded to float32: ``[num_positions, emb_dim]``."""
    table = [
        [
            (math.sin if j % 2 == 0 else math.cos)(p / 10000 ** ((j - j % 2) / emb_dim))
            for j in range(emb_dim)
        ]
        for p in range(num_positions)
    ]
    return torch.tensor(table, dtype=torch.float64).reshape(num_positions, emb_dim).float()


# From the book's notebook "Converting GPT to Llama 2" (LLMs-from-scratch, ch05/07_gpt_to_llama).
def precompute_rope_params(
    head_dim: int, theta_base: float = 10_000, context_length: int = 4096
) -> tuple[torch.Tensor, torch.Tensor]:
    if head_dim % 2 != 0:
        raise ValueError("Embedding dimension must be even")
    inv_freq = 1.0 / (
        theta_base ** (torch.arange(0, head_dim, 2)[: (head_dim // 2)].float() / head_dim)
    )
    positions = torch.arange(context_length)
    angles = positions[:, None] * inv_freq[None, :]  # Shape: (context_length, head_dim // 2)
    angles = torch.cat([angles, angles], dim=1)  # Shape: (context_length, head_dim)
    cos = torch.cos(angles)
    sin = torch.sin(angles)
    return cos, sin


def compute_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # x: (batch_size, num_heads, seq_len, head_dim)
    _batch_size, _num_heads, seq_len, head_dim = x.shape
    if head_dim % 2 != 0:
        raise ValueError("Head dimension must be even")
    x1 = x[..., : head_dim // 2]  # First half
    x2 = x[..., head_dim // 2 :]  # Second half
    cos = cos[:seq_len, :].unsqueeze(0).unsqueeze(0)  # Shape: (1, 1, seq_len, head_dim)
    sin = sin[:seq_len, :].unsqueeze(0).unsqueeze(0)
    rotated = torch.cat((-x2, x1), dim=-1)
    x_rotated = (x * cos) + (rotated * sin)
    return x_rotated.to(dtype=x.dtype)


def book_rope(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos`` of the angles and the rows of ``x`` ``[n, d]`` rotated by their position, with
    the notebook's functions. For an odd ``d`` the last dimension is not rotated (cos = 1)."""
    n, d = x.shape
    even = d - d % 2
    cos, sin = precompute_rope_params(even, context_length=n) if even else (x[:, :0],) * 2
    rotated = compute_rope(x[None, None, :, :even], cos, sin)[0, 0] if even else x[:, :0]
    rest = x[:, even:]
    return torch.cat([cos, torch.ones_like(rest)], dim=1), torch.cat([rotated, rest], dim=1)


def book_window(
    scheme: str, *, seed: int, emb_dim: int, context_length: int, token_ids: Sequence[int]
) -> list[torch.Tensor]:
    """``[token, position signal, input]`` embeddings of one window, each ``[n, d]`` float32."""
    token_table, pos_table = book_tables(seed, emb_dim, context_length)
    token_embeddings = token_table[list(token_ids)]  # [n, d]
    n = len(token_ids)
    if scheme == "learned":
        pos_embeddings = pos_table[:n]  # [n, d]
        return [token_embeddings, pos_embeddings, token_embeddings + pos_embeddings]
    if scheme == "sinusoidal":
        pos_embeddings = sinusoidal(n, emb_dim)
        return [token_embeddings, pos_embeddings, token_embeddings + pos_embeddings]
    if scheme == "none":
        return [token_embeddings, torch.zeros(n, emb_dim), token_embeddings]
    if scheme == "rope":
        cos, rotated = book_rope(token_embeddings)
        return [token_embeddings, cos, rotated]
    raise ValueError(f"unknown scheme {scheme!r}")


def cosine_similarity(matrix: torch.Tensor) -> torch.Tensor:
    """``[n, n]`` cosine similarity of the rows of ``matrix`` ``[n, d]``, in float64, by
    ``torch.nn.functional.cosine_similarity`` (a zero row gives 0)."""
    rows = matrix.double()
    return F.cosine_similarity(rows[:, None, :], rows[None, :, :], dim=-1)


# --- reading what the app sent ---------------------------------------------------------------


def unescape_markdown(text: str) -> str:
    """Undo Markdown backslash escapes, failing on any ASCII punctuation left unescaped, and
    drop the invisible word joiners posviz adds to break bare links."""
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            assert i + 1 < len(text) and text[i + 1] in string.punctuation, text
            out.append(text[i + 1])
            i += 2
        else:
            assert char not in string.punctuation, f"unescaped {char!r} in {text!r}"
            out.append(char)
            i += 1
    return "".join(out).replace(WORD_JOINER, "")


# --- the book's self-attention (chapter 3) ---------------------------------------------------


class SelfAttention_v2(torch.nn.Module):  # the book's name
    """Chapter 3, section 3.4.2 of the book, verbatim."""

    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False) -> None:
        super().__init__()
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = attn_weights @ values
        return context_vec


def book_attention(d_in: int, d_out: int, seed: int = ATTENTION_SEED) -> SelfAttention_v2:
    """``torch.manual_seed(seed); sa_v2 = SelfAttention_v2(d_in, d_out)``, under fork_rng."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return SelfAttention_v2(d_in, d_out)


def book_causal_attention(module: SelfAttention_v2, x: torch.Tensor) -> torch.Tensor:
    """Section 3.5.1: the scores above the diagonal masked with -inf, then softmax."""
    keys, queries, values = module.W_key(x), module.W_query(x), module.W_value(x)
    attn_scores = queries @ keys.T
    context_length = attn_scores.shape[0]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    attn_weights = torch.softmax(masked / keys.shape[-1] ** 0.5, dim=-1)
    return attn_weights @ values
