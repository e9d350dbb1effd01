"""The attention parts of the Show-the-code script (:mod:`posviz.codegen`): ALiBi's slopes and
T5's buckets written out, for compare mode and the Attention tab.

The functions are written as their reference implementations write them (ALiBi's
``get_slopes`` from ofirpress/attention_with_linear_biases, T5's ``_relative_position_bucket``
with ``bidirectional=False``), not as posviz computes them, so a reader can check posviz's
numbers against the originals.

>>> "def get_slopes(n):" in BIAS_FUNCTIONS and "def relative_position_bucket(" in BIAS_FUNCTIONS
True
"""

from __future__ import annotations

from typing import Final

from posviz.attention import ATTENTION_SEED
from posviz.config import ADDS_TO_INPUT, Scheme, Settings
from posviz.schemes import ROPE_BASE, SINUSOIDAL_BASE, T5_MAX_DISTANCE, T5_NUM_BUCKETS

BIAS_FUNCTIONS: Final = f"""

# ALiBi (Press et al. 2022): the slope of each head, as its reference code computes them.
def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    # not a power of two: the slopes of the power below, then every other one of the next
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


# T5 (Raffel et al. 2020): the bucket of a relative position j - i (key minus query), as T5's
# _relative_position_bucket computes it for a causal model (bidirectional=False).
def relative_position_bucket(
    relative_position, num_buckets={T5_NUM_BUCKETS}, max_distance={T5_MAX_DISTANCE}
):
    relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    # now relative_position is in the range [0, inf): how many tokens back the key is
    max_exact = num_buckets // 2  # half of the buckets: one per distance 0 ... 15
    is_small = relative_position < max_exact
    # the other half: logarithmically wider up to max_distance, then one bucket for the rest
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    return torch.where(is_small, relative_position, relative_position_if_large)
"""

_MULTI_HEAD: Final = '''
# --- Attention: one head's scores and weights, as posviz's Attention tab shows them ---------
# The book's chapter 3 ({ch03}): torch.manual_seed({attention_seed}), then its
# MultiHeadAttention; its W_query, W_key, W_value are made first and in that order, the same
# numbers as SelfAttention_v2(d, d). Head K is columns K*d/H ... (K+1)*d/H - 1 of the queries
# and keys. Computed in float64 (exact for the float32 inputs).
heads = {heads}  # H
head = {head}  # K, the head shown
shift = {shift}  # M: the same sentence at positions M ... M+n-1 (0: where it is)


class MultiHeadAttention(torch.nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by n_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = torch.nn.Linear(d_out, d_out)
        self.dropout = torch.nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

{scheme_functions}
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
{rotate}    attn_scores = queries @ keys.transpose(2, 3) / keys.shape[-1] ** 0.5  # [1, H, n, n]
{bias}    mask_bool = mha.mask.bool()[:num_tokens, :num_tokens]
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
{moved_input}            moved_positions = torch.arange(shift, shift + n)
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

_ROTATE: Final = """\
    if with_positions:  # RoPE: rotate the queries and keys of the positions
        cos, sin = compute_rope_params(head_dim, context_length=int(positions[-1]) + 1)
        cos, sin = cos[positions], sin[positions]
        keys = apply_rope(keys, cos, sin)
        queries = apply_rope(queries, cos, sin)
"""

_ROPE_FUNCTIONS: Final = f"""
# The book's RoPE (pkg/llms_from_scratch/llama3.py), split halves, base {ROPE_BASE:,.0f}
def compute_rope_params(
    head_dim, theta_base={int(ROPE_BASE):_}, context_length=4096, dtype=torch.float32
):
    assert head_dim % 2 == 0, "Embedding dimension must be even"
    inv_freq = 1.0 / (
        theta_base
        ** (torch.arange(0, head_dim, 2, dtype=dtype)[: (head_dim // 2)].float() / head_dim)
    )
    positions = torch.arange(context_length, dtype=dtype)
    angles = positions[:, None] * inv_freq[None, :]  # Shape: (context_length, head_dim // 2)
    angles = torch.cat([angles, angles], dim=1)  # Shape: (context_length, head_dim)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x, cos, sin):
    batch_size, num_heads, seq_len, head_dim = x.shape
    assert head_dim % 2 == 0, "Head dimension must be even"
    x1 = x[..., : head_dim // 2]  # First half
    x2 = x[..., head_dim // 2 :]  # Second half
    cos = cos[:seq_len, :].unsqueeze(0).unsqueeze(0)  # Shape: (1, 1, seq_len, head_dim)
    sin = sin[:seq_len, :].unsqueeze(0).unsqueeze(0)
    rotated = torch.cat((-x2, x1), dim=-1)
    x_rotated = (x * cos) + (rotated * sin)
    return x_rotated.to(dtype=x.dtype)

"""

_ALIBI: Final = """\
    if with_positions:  # ALiBi: -m_K * (i - j) added to the scaled scores of each head
        slopes = torch.tensor(get_slopes(heads), dtype=torch.float64)  # [H]
        distance = (positions[None, :] - positions[:, None]).abs()  # [n, n]: i - j (j <= i)
        attn_scores = attn_scores + slopes[:, None, None] * (-distance).double()
"""

_T5: Final = """\
    if with_positions:  # T5: E[bucket(j - i), K] added to the scaled scores of each head
        relative = positions[None, :] - positions[:, None]  # [n, n]: j - i
        bias = relative_attention_bias.weight.double()[relative_position_bucket(relative)]
        attn_scores = attn_scores + bias.permute(2, 0, 1)  # [H, n, n]
"""

_T5_TABLE: Final = """
# T5's relative_attention_bias E = nn.Embedding(32, H), made after torch.manual_seed(seed):
# its random init (T5 learns these numbers; posviz shows the init).
torch.manual_seed(seed)
relative_attention_bias = torch.nn.Embedding({buckets}, heads)  # [32, H]
"""

_SINUSOIDAL: Final = '''
def sinusoidal_rows(positions):
    """The sinusoidal encoding (as above) of `positions`: [n, emb_dim] float32."""
    two_i = torch.arange(0, emb_dim, 2, dtype=torch.float64)
    angles = positions.double()[:, None] / {base!r} ** (two_i / emb_dim)  # [n, ceil(d/2)]
    encoding = torch.empty(len(positions), emb_dim, dtype=torch.float64)
    encoding[:, 0::2] = torch.sin(angles)
    encoding[:, 1::2] = torch.cos(angles[:, : emb_dim // 2])
    return encoding.to(torch.float32)

'''

_MOVED: Final[dict[Scheme, str]] = {
    "learned": "            moved = tokens + pos_embedding_layer(torch.arange(shift, shift + n))\n",
    "sinusoidal": "            moved = tokens + sinusoidal_rows(torch.arange(shift, shift + n))\n",
}


def attention_part(settings: Settings) -> str:
    """The script's Attention part for ``settings`` (after the section 2.8 part): head
    ``settings.head`` of ``settings.heads`` at positions ``settings.shift`` on. It leaves
    ``content_scores``, ``attn_scores``, ``attn_weights`` (the shown head, ``[n, n]``, NaN
    where masked), ``position_part``, and with a shift ``scores_change`` /
    ``weights_change`` or ``shift_error`` (torch's message for a learned table that ends).

    >>> from posviz.config import Settings
    >>> "relative_position_bucket(relative)" in attention_part(Settings(scheme="t5"))
    True
    """
    scheme = settings.scheme
    functions = {
        "rope": _ROPE_FUNCTIONS,
        "alibi": BIAS_FUNCTIONS.split("\n\n\n# T5")[0] + "\n\n",
        "t5": "\n\n# T5"
        + BIAS_FUNCTIONS.split("\n\n\n# T5")[1]
        + _T5_TABLE.format(buckets=T5_NUM_BUCKETS),
        "sinusoidal": _SINUSOIDAL.format(base=SINUSOIDAL_BASE),
    }.get(scheme, "")
    added = scheme in ADDS_TO_INPUT
    return _MULTI_HEAD.format(
        ch03="https://github.com/rasbt/LLMs-from-scratch/tree/main/ch03",
        attention_seed=ATTENTION_SEED,
        heads=settings.heads,
        head=settings.head,
        shift=settings.shift,
        scheme_functions=functions,
        rotate=_ROTATE if scheme == "rope" else "",
        bias={"alibi": _ALIBI, "t5": _T5}.get(scheme, ""),
        base_input="input_embeddings[window]" if added else "tokens",
        moved_input=_MOVED.get(scheme, "            moved = tokens\n"),
    )
