"""What the script writes for each positional scheme: the ONE table of the codegen package
keyed by a scheme's name (at the scheme registry's merge, :class:`SchemeCode` becomes a field
of each scheme's specification, and :func:`scheme_code` its lookup).

The lines only call posviz's functions (``sinusoidal_encoding``, ``rope_angles`` and
``rope_rotate``, ``score_bias``...); the script copies their source (:mod:`._source`), so no
formula is written here.

>>> scheme_code("rope").adds_to_input, "rope_rotate(" in scheme_code("rope").embed
(False, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from posviz.config import Scheme


@dataclass(frozen=True)
class SchemeCode:
    """One scheme's lines in the script."""

    adds_to_input: bool  # the positions are added to the token embeddings (attention reads them)
    # Section 2.8 (inside `with torch.no_grad():`): pos_embeddings [n, d], input_embeddings
    embed: str
    # Compare mode: positioned_first and positioned_second, the context vectors with positions
    compare: str
    # The Geometry tab's tables: `geometry[name] = shape_of(table)` lines
    geometry: str
    # The Attention part, in head_scores: before the scores (queries, keys) and after them
    attention_queries: str = ""
    attention_scores: str = ""
    # The shift test's input at positions shift ... shift + n - 1 (tokens [n, d] on screen)
    moved: str = "            moved = tokens\n"


_ADDED_COMPARE: Final = """\
# {scheme}: positions added to the token embeddings
positioned_first = context_vectors(first_tokens + pos_embeddings)
positioned_second = context_vectors(second_tokens + pos_embeddings)"""

_BIAS_COMPARE: Final = """\
# {scheme}: the input stays the token embeddings; score_bias is added to the scores, for the
# one head SelfAttention_v2 has{note}
positions = torch.arange(len(first_ids))
bias = score_bias("{scheme}", positions, positions, heads=1, seed=seed)[0]  # [n, n]
positioned_first = context_vectors(first_tokens, bias=bias)
positioned_second = context_vectors(second_tokens, bias=bias)"""

_NOTHING_ADDED: Final = """\
    pos_embeddings = torch.zeros(n, emb_dim)  # [n, emb_dim]
    input_embeddings = token_embeddings.clone()  # [B, n, emb_dim]
"""

_LEARNED: Final = 'geometry["learned"] = shape_of(learned_table)\n'
_SINUSOIDAL: Final = (
    'geometry["sinusoidal"] = shape_of(sinusoidal_encoding(context_length, emb_dim))\n'
)

_BIAS_SCORES: Final = """\
    if with_positions:  # {scheme}: score_bias of every head added to the scaled scores
        bias = score_bias("{scheme}", positions, positions, heads=heads, seed=seed)  # [H, n, n]
        attn_scores = attn_scores + bias
"""

_SCHEME_CODE: Final[dict[Scheme, SchemeCode]] = {
    "learned": SchemeCode(
        adds_to_input=True,
        embed="""\
    # learned (GPT-2, the book): add row p of the positional table to position p
    pos_embeddings = pos_embedding_layer(torch.arange(n))  # [n, emb_dim]
    input_embeddings = token_embeddings + pos_embeddings  # [B, n, emb_dim]
""",
        compare=_ADDED_COMPARE.format(scheme="learned"),
        geometry=_LEARNED + _SINUSOIDAL,
        moved="            moved = tokens + pos_embedding_layer(torch.arange(shift, shift + n))\n",
    ),
    "sinusoidal": SchemeCode(
        adds_to_input=True,
        embed="""\
    # sinusoidal (Vaswani et al. 2017): posviz's sinusoidal_encoding, added
    pos_embeddings = sinusoidal_encoding(n, emb_dim)  # [n, emb_dim]
    input_embeddings = token_embeddings + pos_embeddings  # [B, n, emb_dim]
""",
        compare=_ADDED_COMPARE.format(scheme="sinusoidal"),
        geometry=_SINUSOIDAL + _LEARNED,
        moved="            moved = tokens + sinusoidal_encoding(shift + n, emb_dim)[shift:]\n",
    ),
    "none": SchemeCode(
        adds_to_input=False,
        embed="    # none: no position signal; attention would be blind to word order\n"
        + _NOTHING_ADDED,
        compare="""\
# none: no position signal, the same computation again
positioned_first = context_vectors(first_tokens)
positioned_second = context_vectors(second_tokens)""",
        geometry="# none: the positional table is all zeros, nothing to project\n" + _LEARNED,
    ),
    "rope": SchemeCode(
        adds_to_input=False,
        embed="""\
    # RoPE (Llama): nothing is added; rope_rotate turns each pair of dims by its position.
    # Real models rotate queries and keys inside attention; here the token vectors.
    angles = rope_angles(n, emb_dim)  # [n, emb_dim]
    pos_embeddings = torch.cos(angles)  # [n, emb_dim]: what posviz shows in the middle panel
    input_embeddings = rope_rotate(token_embeddings, angles)  # [B, n, emb_dim]
""",
        compare="""\
# RoPE: the input stays the token embeddings; queries and keys are rotated
positioned_first = context_vectors(first_tokens, rope=True)
positioned_second = context_vectors(second_tokens, rope=True)""",
        geometry='geometry["rope"] = shape_of(rope_cos_sin(context_length, emb_dim))\n' + _LEARNED,
        attention_queries="""\
    if with_positions:  # RoPE: rotate the queries and keys of the positions
        angles = rope_angles(int(positions[-1]) + 1, head_dim)[positions]  # [n, head_dim]
        queries, keys = rope_rotate(queries, angles), rope_rotate(keys, angles)
""",
    ),
    "alibi": SchemeCode(
        adds_to_input=False,
        embed="    # ALiBi: nothing is added to the input; it adds -m * (i - j) to the scores\n"
        + _NOTHING_ADDED,
        compare=_BIAS_COMPARE.format(
            scheme="alibi", note="; without the causal mask it is symmetric, -m * |i - j|"
        ),
        # ALiBi and T5 have no positional table (they bias the scores): the tab shows these
        geometry=_LEARNED + _SINUSOIDAL,
        attention_scores=_BIAS_SCORES.format(scheme="alibi"),
    ),
    "t5": SchemeCode(
        adds_to_input=False,
        embed="    # T5's relative bias: nothing is added to the input; it adds E[bucket(j - i)]\n"
        "    # to the scores\n" + _NOTHING_ADDED,
        compare=_BIAS_COMPARE.format(
            scheme="t5", note=", E the seeded init of T5's relative_attention_bias"
        ),
        geometry=_LEARNED + _SINUSOIDAL,
        attention_scores=_BIAS_SCORES.format(scheme="t5"),
    ),
}


def scheme_code(scheme: Scheme) -> SchemeCode:
    """``scheme``'s lines in the script."""
    return _SCHEME_CODE[scheme]
