"""What the script writes for a positional scheme, read from its specification
(:class:`posviz.schemes.SchemeSpec`): where it acts, and the names of its functions (its
formula's table, its rotation, its bias per distance), which the script calls and copies
(:mod:`._source`). Nothing here names a scheme or writes a formula.

>>> from posviz.schemes import scheme
>>> code = scheme_code(scheme("rope"))
>>> code.adds_to_input, "rope_rotate(token_embeddings, angles)" in code.embed
(False, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from posviz.position_tables import cos_sin_table
from posviz.schemes import Rotation, SchemeSpec, ScoreBias, sinusoidal_encoding


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


_LEARNED: Final = 'geometry["learned"] = shape_of(learned_table)\n'
# The table the Geometry tab shows beside the learned one (and for schemes without a table)
_CONTRAST: Final = (
    f'geometry["sinusoidal"] = shape_of({sinusoidal_encoding.__name__}(context_length, emb_dim))\n'
)
_NOTHING_ADDED: Final = """\
    pos_embeddings = torch.zeros(n, emb_dim)  # [n, emb_dim]
    input_embeddings = token_embeddings.clone()  # [B, n, emb_dim]
"""
_COMPARE: Final = """\
# {label}: {how}
{bias}positioned_first = context_vectors(first_tokens{added}{options})
positioned_second = context_vectors(second_tokens{added}{options})"""


def _compare(
    spec: SchemeSpec, how: str, *, bias: str = "", added: str = "", options: str = ""
) -> str:
    """Compare mode's context vectors with the scheme's positions (``_COMPARE``)."""
    return _COMPARE.format(label=spec.label, how=how, bias=bias, added=added, options=options)


def _added(spec: SchemeSpec) -> SchemeCode:
    """A scheme that adds positions to the input: a learned table or a formula's."""
    if spec.table is None:  # learned: rows of pos_embedding_layer
        rows, moved_rows = (
            "pos_embedding_layer(torch.arange(n))",
            ("pos_embedding_layer(torch.arange(shift, shift + n))"),
        )
        geometry = _LEARNED + _CONTRAST
    else:
        table = spec.table.__name__
        rows, moved_rows = f"{table}(n, emb_dim)", f"{table}(shift + n, emb_dim)[shift:]"
        geometry = f'geometry["{spec.name}"] = shape_of({table}(context_length, emb_dim))\n'
        geometry += _LEARNED
    return SchemeCode(
        adds_to_input=True,
        embed=f"    # {spec.label}: positions added to the token embeddings\n"
        f"    pos_embeddings = {rows}  # [n, emb_dim]\n"
        "    input_embeddings = token_embeddings + pos_embeddings  # [B, n, emb_dim]\n",
        compare=_compare(spec, "positions added", added=" + pos_embeddings"),
        geometry=geometry,
        moved=f"            moved = tokens + {moved_rows}\n",
    )


def _rotated(spec: SchemeSpec, rotation: Rotation) -> SchemeCode:
    """A scheme that rotates queries and keys (shown rotating the token vectors)."""
    angles, rotate = rotation.angles.__name__, rotation.rotate.__name__
    scale = rotation.scale.__name__
    return SchemeCode(
        adds_to_input=False,
        embed=f"    # {spec.label}: nothing is added; {rotate} turns each pair of dims by its\n"
        "    # position. Real models rotate queries and keys inside attention; here the token\n"
        "    # vectors.\n"
        f"    angles = {angles}(n, emb_dim, options)  # [n, emb_dim]\n"
        "    pos_embeddings = torch.cos(angles)  # [n, emb_dim]: posviz's middle panel\n"
        f"    input_embeddings = {rotate}(token_embeddings, angles) * {scale}(emb_dim, options)\n"
        "    # [B, n, emb_dim]; the factor on cos and sin is 1 but for YaRN's attention factor\n",
        compare=_compare(
            spec,
            "the input stays the token embeddings; queries and keys are rotated",
            bias=f"angles = {angles}(len(first_ids), emb_dim, options)  # [n, emb_dim]\n",
            options=", rope=True, angles=angles",
        ),
        geometry=f'geometry["{spec.name}"] = shape_of({cos_sin_table.__name__}'
        f"({angles}(context_length, emb_dim, options)))\n" + _LEARNED,
        attention_queries="    if with_positions:  # rotate the queries and keys of the positions\n"
        f"        angles = {angles}(int(positions[-1]) + 1, head_dim, options)[positions]\n"
        f"        factor = {scale}(head_dim, options)  # on cos and sin: 1, or YaRN's factor\n"
        f"        queries = {rotate}(queries, angles) * factor\n"
        f"        keys = {rotate}(keys, angles) * factor\n",
    )


def _biased(spec: SchemeSpec, bias: ScoreBias) -> SchemeCode:
    """A scheme that adds a bias to the attention scores, by the distance j - i."""
    per_distance = bias.per_distance.__name__
    return SchemeCode(
        adds_to_input=False,
        embed=f"    # {spec.label}: nothing is added to the input; it biases the scores\n"
        + _NOTHING_ADDED,
        compare=_compare(
            spec,
            f"the input stays the token embeddings; {per_distance} of each\n"
            "# j - i is added to the scores, for the one head SelfAttention_v2 has",
            bias="positions = torch.arange(len(first_ids))\n"
            "relative = positions[None, :] - positions[:, None]  # [n, n]: j - i\n"
            f"bias = {per_distance}(relative.flatten(), heads=1, seed=seed)"
            ".reshape(relative.shape)\n",
            options=", bias=bias",
        ),
        # no positional table (it biases the scores): the tab shows the learned and another
        geometry=_LEARNED + _CONTRAST,
        attention_scores=f"    if with_positions:  # {per_distance} of every head, by j - i\n"
        "        relative = positions[None, :] - positions[:, None]  # [n, n]: j - i\n"
        f"        bias = {per_distance}(relative.flatten(), heads=heads, seed=seed)\n"
        "        attn_scores = attn_scores + bias.reshape(heads, *relative.shape)  # [H, n, n]\n",
    )


def scheme_code(spec: SchemeSpec) -> SchemeCode:
    """``spec``'s lines in the script, by where it acts and the functions it has."""
    if spec.adds_to_input:
        return _added(spec)
    if spec.rotation is not None:
        return _rotated(spec, spec.rotation)
    if spec.bias is not None:
        return _biased(spec, spec.bias)
    return SchemeCode(  # nothing anywhere
        adds_to_input=False,
        embed=f"    # {spec.label}: no position signal; attention is blind to word order\n"
        + _NOTHING_ADDED,
        compare=_compare(spec, "no position signal, the same computation again"),
        geometry="# the positional table is all zeros, nothing to project\n" + _LEARNED,
    )
