"""The Geometry and Distance parts of the Show-the-code script (:mod:`posviz.codegen`).

Appended to the section 2.8 script, they compute the two views' numbers with posviz's own
functions, whose source the script copies: ``principal_components`` and ``directions_90`` of
:mod:`posviz.geometry`, ``cosine_by_distance`` and ``rope_score`` of :mod:`posviz.distance`,
the tables of :mod:`posviz.schemes` and :mod:`posviz.position_tables`, GPT-2's ``|cosine|``
with ``abs_cosines``. The names they leave (``geometry``, ``cosines``, ``distance``,
``past_the_end``) are what the tests compare with posviz.

>>> from posviz.config import Settings
>>> "principal_components(table)" in shapes_part(Settings(), view="geometry", beyond=0)
True
"""

from __future__ import annotations

from typing import Final

from posviz.codegen._schemes import scheme_code
from posviz.config import GPT2_VOCAB_SIZE, Settings
from posviz.distance import default_beyond
from posviz.geometry import VOCAB_SAMPLE
from posviz.position_tables import GPT2_POSITIONS
from posviz.schemes import ROPE, scheme
from posviz.viewspec import CodeName

CodeView = CodeName  # the views whose numbers the script reproduces (posviz.viewspec)
_SAMPLE_STEP: Final = VOCAB_SAMPLE[1] - VOCAB_SAMPLE[0]

_TABLES: Final = """
# --- The positional tables of posviz's Geometry and Distance tabs ---------------------------
{learned}"""

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
def shape_of(table):
    """posviz's principal_components of table [T, d], and how many directions hold 90 % of
    its variance."""
    points, singular_values, row_norms, _ = principal_components(table)
    return {{
        "points": points,  # [T, 3]
        "singular_values": singular_values,
        "directions_90": directions_90(singular_values),
        "row_norms": row_norms,  # [T]
    }}


geometry = {{}}
{tables}for name, shape in geometry.items():
    k, total = shape["directions_90"], len(shape["singular_values"])
    print(f"geometry: {{name}}: 90 % of the variance in {{k}} of {{total}} directions")
'''

_GPT2_GEOMETRY: Final = (
    'geometry["gpt2"] = shape_of(gpt2_table)\ngeometry["learned"] = shape_of(learned_table)\n'
)

_COSINES: Final = """
window_ids = list(dict.fromkeys(inputs[window].tolist()))  # the window's distinct tokens
sample_ids = list(range(0, {vocab_size}, {step}))  # a fixed sample: every {step}th token id
with torch.no_grad():
    window_tokens = token_embedding_layer(torch.tensor(window_ids))  # [m, 768]
    sample_tokens = token_embedding_layer(torch.tensor(sample_ids))  # [1006, 768]
cosines = {{}}
for name, table in (("gpt2", gpt2_table), ("learned", learned_table)):
    cosines[name] = (  # the largest |cosine| of a position row and a token row
        float(abs_cosines(table, window_tokens).max()),
        float(abs_cosines(table, sample_tokens).max()),
    )
    print(f"largest |cosine| of {{name}} positions and GPT-2's tokens: {{cosines[name]}}")
"""

_DISTANCE: Final = """
# --- Distance & length: cosine of positions i and i + k, and past the context length --------
beyond = {beyond}  # positions past the context length: context_length ... + beyond - 1
with torch.no_grad():
    window_vectors = token_embedding_layer(inputs[window])  # [n, emb_dim]
rows = context_length + beyond
theta = {theta}(emb_dim, options, rows)  # [d/2]: RoPE's angle per position of each pair
rope = rope_score(window_vectors, theta, rows=rows)  # the same for every i
distance = {{  # the mean, smallest and largest cosine of rows i and i + k, for each k
    "learned": cosine_by_distance(learned_table),
    "sinusoidal": cosine_by_distance(sinusoidal_encoding(context_length + beyond, emb_dim)),
    "rope": (rope, rope, rope),
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
"""

_GPT2_DISTANCE: Final = """\
gpt2_rows = min(context_length + beyond, {positions})  # GPT-2 has {positions} positions, no more
distance["gpt2"] = cosine_by_distance(pos_embedding_layer.weight.detach()[:gpt2_rows])
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
    part = _TABLES.format(learned=learned)
    if view == "geometry":
        tables = _GPT2_GEOMETRY if gpt2 else scheme_code(scheme(settings.scheme)).geometry
        part += _GEOMETRY.format(tables=tables)
        if gpt2:
            part += _COSINES.format(vocab_size=GPT2_VOCAB_SIZE, step=_SAMPLE_STEP)
        return part
    extra = default_beyond(settings.context_length) if beyond is None else beyond
    gpt2_part = _GPT2_DISTANCE.format(positions=GPT2_POSITIONS) if gpt2 else ""
    theta = ROPE.rotation.theta.__name__ if ROPE.rotation else ""
    return part + _DISTANCE.format(beyond=extra, gpt2=gpt2_part, theta=theta)
