"""The Geometry and Distance parts of the Show-the-code script (:mod:`posviz.codegen`).

Appended to the section 2.8 script, they recompute the two views' numbers with plain torch
and the obvious algorithms, not posviz's faster ones: ``torch.linalg.svd`` of the centred
table, every diagonal of the ``[P, P]`` cosine matrix one by one, and RoPE's rotation written
out for every distance. The names they leave (``geometry``, ``cosines``, ``distance``,
``past_the_end``) are what the tests compare with posviz, within the tolerances the modules
:mod:`posviz.geometry` and :mod:`posviz.distance` state.

>>> from posviz.config import Settings
>>> "torch.linalg.svd(centred" in shapes_part(Settings(), view="geometry", beyond=0)
True
"""

from __future__ import annotations

from typing import Final

from posviz.config import GPT2_VOCAB_SIZE, Settings
from posviz.distance import default_beyond
from posviz.geometry import VOCAB_SAMPLE
from posviz.position_tables import GPT2_POSITIONS
from posviz.schemes import ROPE_BASE, SINUSOIDAL_BASE
from posviz.viewspec import CodeName

CodeView = CodeName  # the views whose numbers the script reproduces (posviz.viewspec)
_SAMPLE_STEP: Final = VOCAB_SAMPLE[1] - VOCAB_SAMPLE[0]

_TABLES: Final = '''
# --- The positional tables of posviz's Geometry and Distance tabs ---------------------------
def sinusoidal_table(num_positions):
    """The sinusoidal encoding (as above) of positions 0..num_positions-1: [P, emb_dim]."""
    positions = torch.arange(num_positions, dtype=torch.float64)[:, None]  # [P, 1]
    two_i = torch.arange(0, emb_dim, 2, dtype=torch.float64)
    angles = positions / {sinusoidal_base!r} ** (two_i / emb_dim)  # [P, ceil(d/2)]
    table = torch.empty(num_positions, emb_dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles[:, : emb_dim // 2])
    return table.to(torch.float32)


def rope_table(num_positions):
    """Where RoPE carries the vector (1, 0) of every pair (j, j + d/2): cos(p*theta_j), then
    sin(p*theta_j); an odd last dimension is never rotated (1). [P, emb_dim]"""
    half = emb_dim // 2
    inv_freq = 1.0 / ({rope_base!r} ** (torch.arange(0, 2 * half, 2)[:half].float() / (2 * half)))
    angles = torch.arange(num_positions, dtype=torch.float32)[:, None] * inv_freq[None, :]
    angles = angles.double()  # [P, d/2]
    unrotated = torch.ones(num_positions, emb_dim % 2, dtype=torch.float64)
    return torch.cat([torch.cos(angles), torch.sin(angles), unrotated], dim=1).float()


{learned}
'''

_LEARNED_INIT: Final = """\
learned_layer = pos_embedding_layer  # nn.Embedding(context_length, emb_dim), random init
learned_table = pos_embedding_layer.weight.detach()  # [T, emb_dim]
"""

_LEARNED_BESIDE_GPT2: Final = """\
gpt2_table = pos_embedding_layer.weight.detach()[:context_length]  # [T, 768] of wpe
# The book's random init of the same shape, to compare with (made as section 2.8 makes it)
torch.manual_seed(seed)
init_token_layer = torch.nn.Embedding({vocab_size}, emb_dim)
learned_layer = torch.nn.Embedding(context_length, emb_dim)
learned_table = learned_layer.weight.detach()  # [T, 768]
"""

_GEOMETRY: Final = '''
# --- Geometry: the centred rows on their first three principal components -------------------
def principal_components(table):
    """Rows of table [T, d], centred, on the first 3 principal components (each component's
    largest |coordinate| made positive), the singular values (SVD in float64), how many
    directions hold 90 % of the variance, and the length of each row."""
    x = table.double()
    centred = x - x.mean(dim=0)  # [T, d]
    _, singular_values, vh = torch.linalg.svd(centred, full_matrices=False)
    points = centred @ vh[:3].T  # [T, 3] (fewer columns below 4 rows)
    biggest = points.abs().argmax(dim=0)
    points = points * torch.sign(points[biggest, torch.arange(points.shape[1])])
    share = singular_values**2 / (singular_values**2).sum()
    directions_90 = int((torch.cumsum(share, dim=0) < 0.9).sum()) + 1
    return {{
        "points": points,
        "singular_values": singular_values,
        "directions_90": directions_90,
        "row_norms": x.norm(dim=1),
    }}


geometry = {{}}
{tables}
for name, shape in geometry.items():
    k, total = shape["directions_90"], len(shape["singular_values"])
    print(f"geometry: {{name}}: 90 % of the variance in {{k}} of {{total}} directions")
'''

# The tables the Geometry tab shows, by scheme (or gpt2): (name, expression) of each.
_LEARNED: Final = ("learned", "learned_table")
_SINUSOIDAL: Final = ("sinusoidal", "sinusoidal_table(context_length)")
_GEOMETRY_TABLES: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "learned": (_LEARNED, _SINUSOIDAL),
    "sinusoidal": (_SINUSOIDAL, _LEARNED),
    "rope": (("rope", "rope_table(context_length)"), _LEARNED),
    "none": (_LEARNED,),  # none: the table is all zeros, there is nothing to project
    # ALiBi and T5 have no positional table (they bias the scores): the tab shows these two
    "alibi": (_LEARNED, _SINUSOIDAL),
    "t5": (_LEARNED, _SINUSOIDAL),
    "gpt2": (("gpt2", "gpt2_table"), _LEARNED),
}

_COSINES: Final = """

def largest_abs_cosine(positions, tokens):
    \"\"\"The largest |cosine| between a row of positions and a row of tokens (float64).\"\"\"
    unit_positions = torch.nn.functional.normalize(positions.double(), dim=1)
    unit_tokens = torch.nn.functional.normalize(tokens.double(), dim=1)
    return float((unit_positions @ unit_tokens.T).abs().max())


window_ids = list(dict.fromkeys(inputs[window].tolist()))  # the window's distinct tokens
sample_ids = list(range(0, {vocab_size}, {step}))  # a fixed sample: every {step}th token id
with torch.no_grad():
    window_tokens = token_embedding_layer(torch.tensor(window_ids))  # [m, 768]
    sample_tokens = token_embedding_layer(torch.tensor(sample_ids))  # [1006, 768]
cosines = {{}}
for name, table in (("gpt2", gpt2_table), ("learned", learned_table)):
    cosines[name] = (
        largest_abs_cosine(table, window_tokens),
        largest_abs_cosine(table, sample_tokens),
    )
    print(f"largest |cosine| of {{name}} positions and GPT-2's tokens: {{cosines[name]}}")
"""

_DISTANCE: Final = '''
# --- Distance & length: cosine of positions i and i + k, and past the context length --------
beyond = {beyond}  # positions past the context length: context_length ... + beyond - 1


def by_distance(table):
    """For every distance k: the mean, smallest and largest cosine of rows i and i + k."""
    unit = torch.nn.functional.normalize(table.double(), dim=1)  # a zero row stays zero
    cosines = unit @ unit.T  # [P, P]
    diagonals = [torch.diagonal(cosines, k) for k in range(len(table))]  # k = 0 .. P-1
    mean = torch.stack([d.mean() for d in diagonals])
    smallest = torch.stack([d.min() for d in diagonals])
    largest = torch.stack([d.max() for d in diagonals])
    return mean, smallest, largest


def rope_score(token_vectors, num_positions):
    """The cosine of one token vector x rotated to positions i and i + k, averaged over the
    vectors. Rotations compose, (R_i x) . (R_(i+k) x) = x . R_k x, the same for every i."""
    x = torch.nn.functional.normalize(token_vectors.double(), dim=1)  # [n, d]
    half = emb_dim // 2
    theta = {rope_base!r} ** (-torch.arange(half, dtype=torch.float64) * 2 / (2 * half))
    x1, x2, rest = x[:, :half], x[:, half : 2 * half], x[:, 2 * half :]
    scores = []
    for k in range(num_positions):
        cos, sin = torch.cos(k * theta), torch.sin(k * theta)
        rotated = torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos, rest], dim=1)  # R_k x
        scores.append((x * rotated).sum(dim=1).mean())
    score = torch.stack(scores)
    return score, score, score  # mean, smallest, largest over i: no band


with torch.no_grad():
    window_vectors = token_embedding_layer(inputs[window])  # [n, emb_dim]
distance = {{
    "learned": by_distance(learned_table),
    "sinusoidal": by_distance(sinusoidal_table(context_length + beyond)),
    "rope": rope_score(window_vectors, context_length + beyond),
}}
{gpt2}for name, (mean, smallest, largest) in distance.items():
    band = float((largest - smallest).max())
    print(f"distance: {{name}}: mean cosine at k = 0..2: {{mean[:3].tolist()}}, band {{band:.1e}}")

# Past the context length: a learned table has no row for position T.
try:
    learned_layer(torch.tensor([context_length]))
except IndexError as error:
    past_the_end = f"{{type(error).__name__}}: {{error}}"
    print(f"position {{context_length}} of the learned table: {{past_the_end}}")
'''

_GPT2_DISTANCE: Final = """\
gpt2_rows = min(context_length + beyond, {positions})  # GPT-2 has {positions} positions, no more
distance["gpt2"] = by_distance(pos_embedding_layer.weight.detach()[:gpt2_rows])
try:
    pos_embedding_layer(torch.tensor([{positions}]))
except IndexError as error:
    gpt2_past_the_end = f"{{type(error).__name__}}: {{error}}"
    print(f"position {positions} of GPT-2's wpe: {{gpt2_past_the_end}}")
"""


def shapes_part(settings: Settings, *, view: CodeView, beyond: int | None) -> str:
    """The script's Geometry or Distance part for ``settings`` (``""`` for the embeddings);
    ``beyond``: the Distance view's positions past the context length (``None``: its
    default)."""
    if view in ("embeddings", "attention"):  # attention: posviz.codegen.attention
        return ""
    gpt2 = settings.weights == "gpt2"
    learned = _LEARNED_BESIDE_GPT2.format(vocab_size=GPT2_VOCAB_SIZE) if gpt2 else _LEARNED_INIT
    part = _TABLES.format(sinusoidal_base=SINUSOIDAL_BASE, rope_base=ROPE_BASE, learned=learned)
    if view == "geometry":
        key = "gpt2" if gpt2 else settings.scheme
        lines = [
            f'geometry["{name}"] = principal_components({table})'
            for name, table in _GEOMETRY_TABLES[key]
        ]
        if key == "none":
            lines.insert(0, "# none: the positional table is all zeros, nothing to project")
        part += _GEOMETRY.format(tables="\n".join(lines))
        if gpt2:
            part += _COSINES.format(vocab_size=GPT2_VOCAB_SIZE, step=_SAMPLE_STEP)
        return part
    extra = default_beyond(settings.context_length) if beyond is None else beyond
    gpt2_part = _GPT2_DISTANCE.format(positions=GPT2_POSITIONS) if gpt2 else ""
    return part + _DISTANCE.format(beyond=extra, rope_base=ROPE_BASE, gpt2=gpt2_part)
