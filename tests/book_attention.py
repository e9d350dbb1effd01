"""The book's chapter-3 self-attention, for tests: ``SelfAttention_v2`` verbatim, made after
``torch.manual_seed`` under ``fork_rng`` (the global generator is left as found), the causal
masking of section 3.5.1 as the book writes it, and ``compute_rope`` of the book's Llama
notebook (ch05/07_gpt_to_llama) for ``[n, d]`` inputs.
"""

from __future__ import annotations

import torch
from torch import nn

ATTENTION_SEED = 789  # the book's torch.manual_seed(789) before SelfAttention_v2


class SelfAttention_v2(nn.Module):  # the book's name
    """Chapter 3, section 3.4.2 of the book, verbatim."""

    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False) -> None:
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = attn_weights @ values
        return context_vec


def book_module(d_in: int, d_out: int, seed: int = ATTENTION_SEED) -> SelfAttention_v2:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return SelfAttention_v2(d_in, d_out)


def book_causal(module: SelfAttention_v2, x: torch.Tensor) -> torch.Tensor:
    """Section 3.5.1: mask the scores above the diagonal with -inf, then softmax."""
    keys, queries, values = module.W_key(x), module.W_query(x), module.W_value(x)
    attn_scores = queries @ keys.T
    context_length = attn_scores.shape[0]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    attn_weights = torch.softmax(masked / keys.shape[-1] ** 0.5, dim=-1)
    return attn_weights @ values


def notebook_rope(x: torch.Tensor) -> torch.Tensor:
    """``compute_rope`` of the book's Llama notebook for ``x`` ``[n, d]``, even ``d``."""
    n, head_dim = x.shape
    inv_freq = 1.0 / (10_000 ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    angles = torch.arange(n)[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=1)
    cos, sin = torch.cos(angles), torch.sin(angles)
    x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2 :]
    rotated = torch.cat((-x2, x1), dim=-1)
    return ((x * cos) + (rotated * sin)).to(dtype=x.dtype)
