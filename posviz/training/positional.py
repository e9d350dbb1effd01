"""The book's ``GPTModel`` with any positional scheme of the registry (issue 41).

Every run starts from the book's weights: ``torch.manual_seed(seed)`` then ``GPTModel(cfg)``
draws the same numbers whatever the scheme, so two runs differ in where the position goes and
nothing else. The scheme's spec (:mod:`posviz.schemes`) says where that is:

* it adds vectors to the input: the learned table (the book's ``pos_emb``, the only one with
  rows that end) or the formula's table (sinusoidal) for as many positions as are read;
* it rotates the queries and keys (RoPE, with the context extension its options choose),
  inside each head, as the Attention tab does;
* it biases the scaled scores (ALiBi's fixed ``−m·(i − j)``; T5's ``E[bucket(j − i)]``, one
  table of 32 rows per head shared by every layer, as T5 shares it, and learned);
* nothing.

The model reads inputs longer than the ``context_length`` it was made with (its causal mask
is made for the length read): every scheme but the learned table, whose lookup past its last
row raises torch's ``IndexError``, as GPT-2 does past 1,024. :meth:`SchemeGPTModel.use_options`
changes the scheme's options of a trained model (RoPE's scaling), without retraining.

>>> from posviz.schemes import scheme
>>> cfg = GPTConfig(vocab_size=10, context_length=4, emb_dim=8, n_heads=2, n_layers=1)
>>> torch.manual_seed(123)  # doctest: +ELLIPSIS
<torch._C.Generator object at ...>
>>> model = SchemeGPTModel(cfg, scheme("alibi"))
>>> model(torch.tensor([[1, 2, 3, 4, 5, 6]])).shape  # 6 tokens past a context of 4
torch.Size([1, 6, 10])
"""

from __future__ import annotations

from typing import Final

import torch
from torch import nn

from posviz.schemes import SchemeSpec, bias_by_distance, default_options
from posviz.schemes._spec import Options, OptionValue
from posviz.training.model import GPTConfig, GPTModel, MultiHeadAttention

BIAS_SEED = 0  # T5's table before training: t5_bias_table(seed=0), a generator of its own
# Every scheme option at its registry default, as (name, value) pairs (a script writes them out)
DEFAULT_OPTIONS: Final = tuple(default_options().items())


class SchemeAttention(nn.Module):
    """Chapter 3's causal multi-head attention (its weights taken over from the book's
    :class:`~posviz.training.model.MultiHeadAttention`, no new random numbers) with the
    scheme inside: queries and keys rotated per head, or a bias added to the scaled scores."""

    def __init__(
        self,
        book: MultiHeadAttention,
        spec: SchemeSpec,
        options: dict[str, OptionValue],
        bias_table: nn.Parameter | None,
    ) -> None:
        super().__init__()
        self.d_out, self.num_heads, self.head_dim = book.d_out, book.num_heads, book.head_dim
        self.W_query, self.W_key, self.W_value = book.W_query, book.W_key, book.W_value
        self.out_proj, self.dropout = book.out_proj, book.dropout
        self.spec = spec
        self.options = options  # the model's: use_options changes them for every layer
        self.bias_table = bias_table  # T5's E [buckets, heads], shared by every layer

    def score_bias(self, num_tokens: int, dtype: torch.dtype) -> torch.Tensor | None:
        """What the scheme adds to the scaled scores, ``[heads, n, n]`` in ``dtype`` (``None``:
        nothing)."""
        bias = self.spec.bias
        if bias is None:
            return None
        positions = torch.arange(num_tokens)
        if self.bias_table is not None and bias.bucket is not None:  # a learned table
            relative = positions[None, :] - positions[:, None]  # [n, n]: j - i
            return self.bias_table[bias.bucket(relative)].permute(2, 0, 1)  # [heads, n, n]
        fixed = bias_by_distance(
            bias.per_distance, positions, positions, heads=self.num_heads, seed=BIAS_SEED
        )
        return fixed.to(dtype)  # [heads, n, n]

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
        rotation = self.spec.rotation
        if rotation is not None:  # positions 0..n-1, read as an input of n tokens
            angles = rotation.angles(num_tokens, self.head_dim, self.options)  # [n, head_dim]
            queries = rotation.turn(queries, angles, self.options)
            keys = rotation.turn(keys, angles, self.options)
        attn_scores = queries @ keys.transpose(2, 3) / self.head_dim**0.5  # [b, h, n, n]
        bias = self.score_bias(num_tokens, attn_scores.dtype)
        if bias is not None:
            attn_scores = attn_scores + bias  # [h, n, n] on every batch row
        mask = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)
        attn_weights = torch.softmax(attn_scores.masked_fill(mask, -torch.inf), dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)  # [b, num_tokens, heads, hd]
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)
        result: torch.Tensor = self.out_proj(context_vec)
        return result


class SchemeGPTModel(GPTModel):
    """The book's GPT with ``spec``'s positions (``options``: the scheme's, default: every
    one at its default). Made right after ``torch.manual_seed(seed)``, its weights are the
    book's ``GPTModel(cfg)``'s (the learned table among them, unused by other schemes)."""

    def __init__(self, cfg: GPTConfig, spec: SchemeSpec, options: Options | None = None) -> None:
        super().__init__(cfg)
        self.spec = spec
        self.options: dict[str, OptionValue] = {**dict(DEFAULT_OPTIONS), **dict(options or {})}
        self.bias_table: nn.Parameter | None = None
        table = None if spec.bias is None else spec.bias.table
        if table is not None:
            self.bias_table = nn.Parameter(table(seed=BIAS_SEED, heads=cfg.n_heads))
        if not spec.learned:  # the book's mask ends at context_length; this one does not
            for block in self.trf_blocks:
                book = block.att
                assert isinstance(book, MultiHeadAttention)
                block.att = SchemeAttention(book, spec, self.options, self.bias_table)
            self.pos_emb.requires_grad_(False)  # not looked up: no gradient, no decay

    def use_options(self, **options: OptionValue) -> None:
        """Read with other options from now on (RoPE's scaling, without retraining)."""
        self.options.update(options)

    def position_vectors(self, num_tokens: int) -> torch.Tensor | None:
        """What the scheme adds to the token embeddings at positions ``0..n-1``, ``[n, d]``
        (``None``: nothing). The learned table raises ``IndexError`` past its last row."""
        if self.spec.learned:
            return self.pos_emb(torch.arange(num_tokens))  # type: ignore[no-any-return]
        if self.spec.table is not None:
            table = self.spec.table(num_tokens, self.tok_emb.embedding_dim)  # [n, d]
            return table.to(self.tok_emb.weight.dtype)
        return None

    def forward(self, in_idx: torch.Tensor) -> torch.Tensor:
        """``token_ids`` ``[batch_size, num_tokens]`` to logits ``[batch_size, num_tokens,
        vocab_size]``."""
        _, seq_len = in_idx.shape
        x = self.tok_emb(in_idx)  # token_embeddings [batch_size, num_tokens, emb_dim]
        pos_embeddings = self.position_vectors(seq_len)  # [n, d] or None
        if pos_embeddings is not None:
            x = x + pos_embeddings  # input_embeddings
        x = self.drop_emb(x)
        x = self.trf_blocks(x)
        x = self.final_norm(x)
        logits: torch.Tensor = self.out_head(x)
        return logits
