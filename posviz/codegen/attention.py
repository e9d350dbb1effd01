"""The Attention part of the Show-the-code script (:mod:`posviz.codegen`): one head's scores
and weights, and the shift test, as posviz's Attention tab shows them.

The script makes the book's ``MultiHeadAttention`` (the class posviz trains with,
:mod:`posviz.training.model`, copied into the script) after ``torch.manual_seed(789)`` and
runs its forward pass up to the attention weights of head K, with the scheme's positions from
posviz's own functions, those of the scheme's specification (:mod:`posviz.schemes`): its
rotation, its bias per distance (ALiBi's slopes, T5's buckets and seeded table), its formula's
table. It leaves ``content_scores``,
``attn_scores``, ``attn_weights`` (the shown head, ``[n, n]``, NaN where masked),
``position_part``, and with a shift ``scores_change`` / ``weights_change`` or ``shift_error``.

>>> from posviz.config import Settings
>>> "t5_per_distance(relative.flatten(), heads=heads" in attention_part(Settings(scheme="t5"))
True
"""

from __future__ import annotations

from typing import Final

from posviz.attention import ATTENTION_SEED
from posviz.codegen._schemes import scheme_code
from posviz.config import Settings
from posviz.schemes import scheme

BOOK_CH03_URL: Final = "https://github.com/rasbt/LLMs-from-scratch/tree/main/ch03"

_MULTI_HEAD: Final = '''
# --- Attention: one head's scores and weights, as posviz's Attention tab shows them ---------
# The book's chapter 3 ({ch03}): torch.manual_seed({attention_seed}), then its
# MultiHeadAttention; its W_query, W_key, W_value are made first and in that order, the same
# numbers as SelfAttention_v2(d, d). Head K is columns K*d/H ... (K+1)*d/H - 1 of the queries
# and keys. Computed in float64 (exact for the float32 inputs).
heads = {heads}  # H
head = {head}  # K, the head shown
shift = {shift}  # M: the same sentence at positions M ... M+n-1 (0: where it is)

torch.manual_seed({attention_seed})
mha = MultiHeadAttention(emb_dim, emb_dim, n, 0.0, heads).double()
head_dim = mha.head_dim


def head_scores(x, positions, with_positions=True):
    """MultiHeadAttention.forward's steps up to its attention weights, for head K: the scaled
    scores q.k / sqrt(head_dim) of x [n, d] (float32 rows) at `positions`, with the scheme's
    positions (or none), and their causal softmax; masked cells (key after query) are NaN."""
    x = x.double()[None]  # [1, n, d]
    b, num_tokens, d_in = x.shape
    keys = mha.W_key(x).view(b, num_tokens, heads, head_dim).transpose(1, 2)
    queries = mha.W_query(x).view(b, num_tokens, heads, head_dim).transpose(1, 2)
{queries}    attn_scores = queries @ keys.transpose(2, 3) / keys.shape[-1] ** 0.5  # [1, H, n, n]
{scores}    mask_bool = mha.mask.bool()[:num_tokens, :num_tokens]
    attn_weights = torch.softmax(attn_scores.masked_fill(mask_bool, -torch.inf), dim=-1)
    nan = float("nan")
    return (
        attn_scores[0, head].masked_fill(mask_bool, nan),  # [n, n]
        attn_weights[0, head].masked_fill(mask_bool, nan),
    )


with torch.no_grad():
    tokens = token_embeddings[window]  # [n, emb_dim]
    content_scores, _ = head_scores(tokens, torch.arange(n), with_positions=False)
    attn_scores, attn_weights = head_scores({base_input}, torch.arange(n))
    shift_error = None
    if shift:
        base_scores, base_weights = attn_scores, attn_weights
        try:
{moved}            moved_positions = torch.arange(shift, shift + n)
            attn_scores, attn_weights = head_scores(moved, moved_positions)
        except IndexError as error:  # a learned table has no rows past its end
            shift_error = f"{{type(error).__name__}}: {{error}}"
            print(f"positions {{shift}}-{{shift + n - 1}}: {{shift_error}}")
        else:
            scores_change = float((attn_scores - base_scores).nan_to_num().abs().max())
            weights_change = float((attn_weights - base_weights).nan_to_num().abs().max())
            print(f"moved {{shift}} positions later: scores change by up to {{scores_change:.3g}}")
position_part = attn_scores - content_scores  # [n, n]: what the scheme adds
torch.set_printoptions(precision=4, linewidth=100)
print(f"head {{head}} of {{heads}}: attention scores [n, n] (NaN: masked, key after query)")
print(attn_scores)
print("attention weights [n, n]")
print(attn_weights)
'''


def attention_part(settings: Settings) -> str:
    """The script's Attention part for ``settings`` (after the section 2.8 part): head
    ``settings.head`` of ``settings.heads`` at positions ``settings.shift`` on (see the
    module docstring)."""
    code = scheme_code(scheme(settings.scheme))
    return _MULTI_HEAD.format(
        ch03=BOOK_CH03_URL,
        attention_seed=ATTENTION_SEED,
        heads=settings.heads,
        head=settings.head,
        shift=settings.shift,
        queries=code.attention_queries,
        scores=code.attention_scores,
        base_input="input_embeddings[window]" if code.adds_to_input else "tokens",
        moved=code.moved,
    )
