"""``sinusoidal``: the fixed encoding of Vaswani et al. (2017), added to the token embeddings.

>>> sinusoidal_encoding(2, 4)[1]
tensor([0.8415, 0.5403, 0.0100, 0.9999])
"""

from __future__ import annotations

from typing import Final

import torch

from posviz.schemes._spec import Acts, PanelTitles, SchemeSpec, SchemeWords

SINUSOIDAL_BASE: Final = 10_000.0


def sinusoidal_encoding(context_length: int, emb_dim: int) -> torch.Tensor:
    """``PE[p, 2i] = sin(p / 10000^(2i/d))``, ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``.

    Sine and cosine interleave. For an odd ``emb_dim`` the last dimension is a sine (its
    cosine partner would be dimension ``d``, which does not exist). Computed in float64 and
    rounded once to float32: shape ``[context_length, emb_dim]``.
    """
    positions = torch.arange(context_length, dtype=torch.float64)[:, None]  # [T, 1]
    two_i = torch.arange(0, emb_dim, 2, dtype=torch.float64)  # 2i for each pair
    angles = positions / SINUSOIDAL_BASE ** (two_i / emb_dim)  # [T, ceil(d/2)]
    encoding = torch.empty(context_length, emb_dim, dtype=torch.float64)
    encoding[:, 0::2] = torch.sin(angles)
    encoding[:, 1::2] = torch.cos(angles[:, : emb_dim // 2])
    return encoding.to(torch.float32)


SINUSOIDAL: Final = SchemeSpec(
    name="sinusoidal",
    label="Sinusoidal (Transformer paper)",
    acts=Acts.ADDS_TO_INPUT,
    colour="#0072B2",  # blue
    table_label="sinusoidal (formula)",
    table=sinusoidal_encoding,
    titles=PanelTitles(
        embeddings=(
            "token embeddings",
            "positional encoding<br>(sin/cos)",
            "input embeddings<br>= sum",
        ),
        similarity=("token embeddings", "positional encoding<br>(sin/cos)", "input embeddings"),
        attention_position="position part<br>(sin/cos added)",
    ),
    words=SchemeWords(
        note="Vaswani et al. (2017) use fixed sine/cosine waves, "
        "PE[p, 2i] = sin(p / 10000^(2i/d)) and PE[p, 2i+1] = cos(…): nothing to learn, and any "
        "length works. Also **added** to the token vectors.",
        position_panel_note="Middle: similarity of the sin/cos vectors.",
        what_it_does="The sinusoidal scheme adds sin/cos waves to the token at position p, "
        "before W_query and W_key: its position part depends on where both tokens are.",
        name="the sinusoidal scheme",
        scores="the sinusoidal scheme's scores",
        positions="sin/cos positions added",
        added="the sin/cos vectors added to them",
        shape="+ sinusoidal encoding [T, d]",
        table_noun="encoding",
        table_name="the sinusoidal table",
    ),
)
