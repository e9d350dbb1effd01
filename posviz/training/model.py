"""The book's GPT (chapters 3 and 4): ``GPTModel`` and its parts, for the Training view.

The classes follow Sebastian Raschka's *Build a Large Language Model (From Scratch)*
(Manning 2024), chapter 3 (``MultiHeadAttention``) and chapter 4 (``LayerNorm``, ``GELU``,
``FeedForward``, ``TransformerBlock``, ``GPTModel``), whose code is published under the
Apache License 2.0 (https://github.com/rasbt/LLMs-from-scratch, © Sebastian Raschka). posviz
writes them again with types and shape comments; the arithmetic, the layers and the order in
which they are made are the book's, so ``torch.manual_seed(seed)`` then ``GPTModel(cfg)``
gives the book's initial weights and every forward pass the book's numbers.

The one thing the book does not do: :func:`init_positions` scales the positional table made
by ``nn.Embedding`` (N(0, 1), section 2.8's table) by 0.02 for the ``small`` init, which is
N(0, 0.02²), GPT-2's own init. Scaling the same draw, rather than drawing again, leaves
every other weight and every later random number (dropout) the same in both runs: the two
runs differ in the positional table's scale and nothing else.

>>> cfg = GPTConfig(vocab_size=10, context_length=4, emb_dim=8, n_heads=2, n_layers=1)
>>> torch.manual_seed(123)  # doctest: +ELLIPSIS
<torch._C.Generator object at ...>
>>> model = GPTModel(cfg)
>>> model(torch.tensor([[1, 2, 3]])).shape
torch.Size([1, 3, 10])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import torch
from torch import nn

PositionInit = Literal["small", "default"]
POSITION_INITS: Final[tuple[PositionInit, ...]] = ("small", "default")
SMALL_INIT_STD: Final = 0.02  # GPT-2's init of wpe: N(0, 0.02²)


@dataclass(frozen=True)
class GPTConfig:
    """The book's ``GPT_CONFIG_124M`` keys, typed (the defaults are its 124M model's)."""

    vocab_size: int = 50257
    context_length: int = 1024
    emb_dim: int = 768
    n_heads: int = 12
    n_layers: int = 12
    drop_rate: float = 0.1
    qkv_bias: bool = False


class MultiHeadAttention(nn.Module):
    """Chapter 3's causal multi-head attention: ``num_heads`` heads of ``d_out // num_heads``
    dimensions, a causal mask, dropout on the attention weights, an output projection."""

    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
    ) -> None:
        super().__init__()
        if d_out % num_heads:
            raise ValueError(
                f"d_out ({d_out}) must be a multiple of num_heads ({num_heads}): pick a "
                "number of heads that divides the embedding dimension"
            )
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.mask: torch.Tensor
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` ``[b, num_tokens, d_in]`` to the context vectors ``[b, num_tokens, d_out]``."""
        b, num_tokens, _ = x.shape
        keys = self.W_key(x)  # [b, num_tokens, d_out]
        queries = self.W_query(x)
        values = self.W_value(x)
        # [b, num_tokens, num_heads, head_dim] -> [b, num_heads, num_tokens, head_dim]
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)  # [b, num_heads, num_tokens, num_tokens]
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)  # [b, num_tokens, heads, hd]
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)
        result: torch.Tensor = self.out_proj(context_vec)
        return result


class LayerNorm(nn.Module):
    """Chapter 4's layer normalisation: biased variance, eps 1e-5, a scale and a shift."""

    def __init__(self, emb_dim: int) -> None:
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise the last dimension of ``x``."""
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift


class GELU(nn.Module):
    """Chapter 4's GELU, the tanh approximation GPT-2 uses."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))``."""
        root = torch.sqrt(torch.tensor(2.0 / torch.pi))  # a float32 scalar, as in the book
        return 0.5 * x * (1 + torch.tanh(root * (x + 0.044715 * torch.pow(x, 3))))


class FeedForward(nn.Module):
    """Chapter 4's feed forward: ``emb_dim -> 4·emb_dim -> GELU -> emb_dim``."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg.emb_dim, 4 * cfg.emb_dim),
            GELU(),
            nn.Linear(4 * cfg.emb_dim, cfg.emb_dim),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[b, num_tokens, emb_dim]`` to the same shape."""
        result: torch.Tensor = self.layers(x)
        return result


class TransformerBlock(nn.Module):
    """Chapter 4's transformer block: pre-norm attention and feed forward, each with dropout
    and a shortcut connection."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=cfg.emb_dim,
            d_out=cfg.emb_dim,
            context_length=cfg.context_length,
            num_heads=cfg.n_heads,
            dropout=cfg.drop_rate,
            qkv_bias=cfg.qkv_bias,
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg.emb_dim)
        self.norm2 = LayerNorm(cfg.emb_dim)
        self.drop_resid = nn.Dropout(cfg.drop_rate)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[batch_size, num_tokens, emb_dim]`` to the same shape."""
        shortcut = x
        x = self.drop_resid(self.att(self.norm1(x)))
        x = x + shortcut
        shortcut = x
        x = self.drop_resid(self.ff(self.norm2(x)))
        return x + shortcut


class GPTModel(nn.Module):
    """Chapter 4's GPT: token and positional embeddings, dropout, ``n_layers`` transformer
    blocks, a final norm and the output head (not tied to the token table)."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.emb_dim)
        self.pos_emb = nn.Embedding(cfg.context_length, cfg.emb_dim)
        self.drop_emb = nn.Dropout(cfg.drop_rate)
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg.n_layers)])
        self.final_norm = LayerNorm(cfg.emb_dim)
        self.out_head = nn.Linear(cfg.emb_dim, cfg.vocab_size, bias=False)

    def forward(self, in_idx: torch.Tensor) -> torch.Tensor:
        """``token_ids`` ``[batch_size, num_tokens]`` to logits ``[batch_size, num_tokens,
        vocab_size]``."""
        _, seq_len = in_idx.shape
        token_embeddings = self.tok_emb(in_idx)  # [batch_size, num_tokens, emb_dim]
        pos_embeddings = self.pos_emb(torch.arange(seq_len, device=in_idx.device))  # [n, d]
        x = token_embeddings + pos_embeddings  # input_embeddings
        x = self.drop_emb(x)
        x = self.trf_blocks(x)
        x = self.final_norm(x)
        logits: torch.Tensor = self.out_head(x)
        return logits


def init_positions(model: GPTModel, init: PositionInit) -> None:
    """Keep ``nn.Embedding``'s N(0, 1) positional table (``"default"``, section 2.8) or
    scale it to N(0, 0.02²) (``"small"``, GPT-2's init); draws no random numbers.

    >>> torch.manual_seed(1)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> model = GPTModel(GPTConfig(vocab_size=5, context_length=2, emb_dim=4, n_heads=1,
    ...                            n_layers=1))
    >>> before = model.pos_emb.weight.detach().clone()
    >>> init_positions(model, "small")
    >>> torch.equal(model.pos_emb.weight.detach(), before * 0.02)
    True
    """
    if init not in POSITION_INITS:
        raise ValueError(f"init must be one of {', '.join(POSITION_INITS)}, got {init!r}")
    if init == "small":
        with torch.no_grad():
            model.pos_emb.weight.mul_(SMALL_INIT_STD)
