"""``t5``: T5's relative position bias (Raffel et al. 2020). Nothing is added to the input;
head ``K`` adds ``E[bucket(j - i), K]`` to the score, ``bucket`` as T5's
``_relative_position_bucket`` (:func:`t5_buckets`), ``E`` a learned ``nn.Embedding(32, H)``
(posviz has the seeded init, :func:`t5_bias_table`).

>>> t5_buckets(torch.tensor([0, -1, -15, -16, -127, -128, -300, 5])).tolist()
[0, 1, 15, 16, 31, 31, 31, 0]
"""

from __future__ import annotations

import math
from typing import Final

import torch

from posviz.schemes._spec import Acts, PanelTitles, SchemeSpec, SchemeWords, ScoreBias

T5_NUM_BUCKETS: Final = 32  # T5's relative_attention_num_buckets
T5_MAX_DISTANCE: Final = 128  # T5's relative_attention_max_distance: buckets stop growing here


def t5_buckets(relative_position: torch.Tensor) -> torch.Tensor:
    """T5's bucket of each ``relative_position`` (``j - i``, key minus query) for a causal
    model (``bidirectional=False``, 32 buckets, ``max_distance`` 128): a key ``k = i - j``
    tokens back is in bucket ``k`` for ``k < 16``, then in logarithmically wider buckets up to
    bucket 31, which holds every ``k >= 128``; keys ahead (``j > i``) are in bucket 0.
    ``torch.long``, the shape of ``relative_position``."""
    distance = (-relative_position).clamp(min=0)  # k = i - j >= 0
    max_exact = T5_NUM_BUCKETS // 2
    safe = distance.clamp(min=max_exact).float()  # float32, as T5; the log only where used
    large = max_exact + (
        torch.log(safe / max_exact)
        / math.log(T5_MAX_DISTANCE / max_exact)
        * (T5_NUM_BUCKETS - max_exact)
    ).to(torch.long)
    large = large.clamp(max=T5_NUM_BUCKETS - 1)
    return torch.where(distance < max_exact, distance, large)


def t5_bias_table(*, seed: int, heads: int) -> torch.Tensor:
    """``E``, T5's ``relative_attention_bias = nn.Embedding(32, heads)`` made right after
    ``torch.manual_seed(seed)``: its random init (T5 learns these values). ``[32, H]``
    float32, drawn from posviz's own generator, so torch's global one is untouched.

    >>> t5_bias_table(seed=123, heads=4).shape
    torch.Size([32, 4])
    """
    generator = torch.Generator().manual_seed(seed)
    return torch.empty(T5_NUM_BUCKETS, heads).normal_(generator=generator)  # [32, H]


def t5_per_distance(relative: torch.Tensor, *, heads: int, seed: int) -> torch.Tensor:
    """``E[bucket(j - i), K]`` for each ``j - i`` in ``relative`` ``[R]`` and every head:
    ``[H, R]`` float64."""
    table = t5_bias_table(seed=seed, heads=heads).double()  # [32, H]
    return table[t5_buckets(relative)].T  # [H, R]


T5: Final = SchemeSpec(
    shift_reach=T5_MAX_DISTANCE + 1,  # one past max_distance: where the buckets stop growing
    name="t5",
    label="T5 relative bias",
    acts=Acts.BIASES_SCORES,
    colour="#56B4E9",  # sky blue
    table_label="T5 (no positional table)",
    bias=ScoreBias(
        per_distance=t5_per_distance,
        slopes=None,
        table=t5_bias_table,
        bucket=t5_buckets,
        line_shape="hv",
        title="T5's bias against distance k = i − j, every head (seeded init)",
        scores_only="T5's relative bias adds nothing to the input; only its bias on the "
        "attention scores, by the distance between two tokens, can tell",
        inputs="T5's relative bias adds nothing to them; it adds E[bucket(j − i)] to the "
        "attention scores (E: the seeded init of nn.Embedding(32, 1)), so tokens at other "
        "distances score differently.",
        distance_note="*T5's relative bias* adds no position vectors, so it has no curve of "
        "similar positions here: its bias, one number per distance bucket, acts on the "
        "attention scores. See the Attention tab.",
        geometry_note="*T5's relative bias* has no positional table: it adds a bias per "
        "distance bucket to the attention scores (the Attention tab). Shown instead: the "
        "learned table and the sinusoidal one.",
    ),
    titles=PanelTitles(
        embeddings=(
            "token embeddings",
            "T5 bias adds nothing<br>(zeros)",
            "input = token<br>embeddings",
        ),
        similarity=(
            "token embeddings",
            "T5 bias adds nothing<br>(all 0)",
            "input = token<br>embeddings",
        ),
        attention_position="position part<br>= E[bucket(j − i)]",
    ),
    words=SchemeWords(
        note="T5's relative bias adds nothing to the input: it adds a number E[bucket(j − i)] "
        "per head to the attention score of query i and key j, one of 32 buckets of distance "
        "(exact up to 15, wider up to 128, one bucket beyond). The middle panel is zeros and "
        "the input equals the token embeddings; see the **Attention** tab.",
        position_panel_note=(
            "Middle: T5's relative bias adds no position vectors (every vector is zero, shown "
            "as 0); its bias acts on the attention scores, see the Attention tab."
        ),
        what_it_does="T5's relative bias adds nothing to the input: it adds E[bucket(j − i), K] "
        "to the score, one learned number per head for each of 32 buckets of distance.",
        name="T5's relative bias",
        scores="T5's scores",
        positions="T5's relative bias on the scores",
        added="nothing",
        shape="+ nothing (T5 biases the scores)",
        table_noun="table",
        table_name="T5",
    ),
)
