"""``alibi``: attention with linear biases (Press et al. 2022). Nothing is added to the input;
head ``K`` adds ``-m_K * (i - j)`` to the attention score of query ``i`` and key ``j``, with
the slopes of ALiBi's reference ``get_slopes`` (:func:`alibi_slopes`).

>>> alibi_slopes(4)
(0.25, 0.0625, 0.015625, 0.00390625)
"""

from __future__ import annotations

import math
from typing import Final

import torch

from posviz.schemes._spec import Acts, PanelTitles, SchemeSpec, SchemeWords, ScoreBias


def alibi_slopes(heads: int) -> tuple[float, ...]:
    """ALiBi's slope ``m_K`` of each of ``heads`` heads, by the rule of its reference
    ``get_slopes``: for ``2^a`` heads the geometric sequence that starts at
    ``2^(-8/2^a)`` with that ratio; otherwise the slopes of the largest power of two below,
    then every other slope of the next power of two, as many as are missing.

    >>> alibi_slopes(6)
    (0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125)
    """
    if heads < 1:
        raise ValueError(f"heads must be 1 or more, got {heads}")
    power = 2 ** math.floor(math.log2(heads))  # the largest power of two <= heads
    start = 2.0 ** -(2.0 ** -(math.log2(power) - 3))  # 2^(-8/power), written as the reference
    slopes = [start * start**k for k in range(power)]  # the reference's start * ratio**k
    if power == heads:
        return tuple(slopes)
    return tuple(slopes + list(alibi_slopes(2 * power)[0::2][: heads - power]))


def alibi_per_distance(relative: torch.Tensor, *, heads: int, seed: int) -> torch.Tensor:
    """``-m_K * |j - i|`` for each ``j - i`` in ``relative`` ``[R]`` and every head: ``[H, R]``
    float64 (``seed`` unused: ALiBi has nothing random)."""
    slopes = torch.tensor(alibi_slopes(heads), dtype=torch.float64)  # [H]
    return slopes[:, None] * (-relative.abs()).double()  # [H, R]


ALIBI: Final = SchemeSpec(
    name="alibi",
    label="ALiBi (linear bias, BLOOM)",
    acts=Acts.BIASES_SCORES,
    colour="#D55E00",  # vermillion
    table_label="ALiBi (no positional table)",
    bias=ScoreBias(
        per_distance=alibi_per_distance,
        slopes=alibi_slopes,
        table=None,
        line_shape="linear",
        title="ALiBi's bias against distance k = i − j, every head",
        scores_only="ALiBi adds nothing to the input; only its bias on the attention scores, "
        "which grows with the distance between two tokens, can tell",
        inputs="ALiBi adds nothing to them; it adds −m·|i − j| to the attention scores (one "
        f"head, as here: m = 1/{round(1 / alibi_slopes(1)[0])}), so tokens at other distances "
        "score differently.",
        distance_note="*ALiBi* adds no position vectors, so it has no curve of similar "
        "positions here: its bias, −m·k at distance k, acts on the attention scores. See the "
        "Attention tab.",
        geometry_note="*ALiBi* has no positional table: it adds −m·(i − j) to the attention "
        "scores (the Attention tab). Shown instead: the learned table and the sinusoidal one.",
    ),
    titles=PanelTitles(
        embeddings=(
            "token embeddings",
            "ALiBi adds nothing<br>(zeros)",
            "input = token<br>embeddings",
        ),
        similarity=(
            "token embeddings",
            "ALiBi adds nothing<br>(all 0)",
            "input = token<br>embeddings",
        ),
        attention_position="position part<br>= −m·(i − j)",
    ),
    words=SchemeWords(
        note="ALiBi adds nothing to the input: it adds −m·(i − j) to the attention score of "
        "query i and key j, a penalty that grows linearly with the distance, with one slope m "
        "per head. The middle panel is zeros and the input equals the token embeddings; see "
        "the **Attention** tab.",
        position_panel_note=(
            "Middle: ALiBi adds no position vectors (every vector is zero, shown as 0); its "
            "bias acts on the attention scores, see the Attention tab."
        ),
        what_it_does="ALiBi adds nothing to the input: it adds −m·(i − j) to the score, a "
        "penalty that grows linearly with the distance, with one slope m per head.",
        name="ALiBi",
        scores="ALiBi's scores",
        positions="ALiBi's linear bias on the scores",
        added="nothing",
        shape="+ nothing (ALiBi biases the scores)",
        table_noun="table",
        table_name="ALiBi",
    ),
)
