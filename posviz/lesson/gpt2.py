"""The words of the GPT-2 view: what the trained tables are, and why some controls are fixed.

Lesson text only (Markdown); the numbers it quotes are computed elsewhere and passed in.

>>> print(WEIGHTS_LABELS["gpt2"])
GPT-2 124M, trained
"""

from __future__ import annotations

from typing import Final

from posviz.config import Scheme, Weights
from posviz.lesson.schemes import SCHEME_LABELS
from posviz.similarity import NeighbourSimilarity

WEIGHTS_LABELS: Final[dict[Weights, str]] = {
    "init": "Random init (the book, seeded)",
    "gpt2": "GPT-2 124M, trained",
}
WEIGHTS_HELP: Final = (
    "Random init: `torch.manual_seed(seed)` and `nn.Embedding`, as section 2.8 creates the "
    "tables. GPT-2 124M: the same two tables after OpenAI trained them (`wte`, `wpe`), read "
    "from the Hugging Face Hub once (157 MB) and cached."
)
EMB_DIM_FIXED: Final = "GPT-2 124M's tables have d = 768 columns: fixed with trained weights."
SCHEME_FIXED: Final = (
    "GPT-2 learned its positional table, so with trained weights the scheme is *learned*. "
    "Sinusoidal, RoPE and none apply to the random init."
)
SEED_NO_EFFECT: Final = "The seed has no effect on trained weights: nothing is random."
TRAINED_FIXES: Final = (
    "GPT-2's trained tables fix d = 768 and the learned scheme; the seed has no effect."
)


def fallback_sentence(emb_dim: int, seed: int, scheme: Scheme) -> str:
    """What the page shows when GPT-2's tables cannot be: the random init the user had.

    >>> fallback_sentence(32, 5, "rope")
    "Showing the book's random init instead (d = 32, seed 5, scheme RoPE (rotary, Llama))."
    """
    return (
        f"Showing the book's random init instead (d = {emb_dim}, seed {seed}, scheme "
        f"{SCHEME_LABELS[scheme]})."
    )


def source_caption(commit: str, n: int) -> str:
    """What the three panels are, with the Hub commit the tables came from."""
    last = f"0–{n - 1}" if n > 1 else "0"
    return (
        f"**GPT-2 124M, trained** (Hugging Face Hub `openai-community/gpt2`, commit "
        f"`{commit[:12]}`). Token panel: rows of `wte.weight` [50257, 768] for this window's "
        f"token ids. Positional panel: rows {last} of `wpe.weight` [1024, 768]. Input panel: "
        "their float32 sum, what GPT-2's first transformer block receives (before dropout). "
        "The seed has no effect."
    )


def neighbour_sentence(summary: NeighbourSimilarity, n: int) -> str:
    """The position panel's similarity in numbers: neighbours vs positions far apart."""
    text = (
        f"Over the {n} positions of this window, neighbouring positions (p and p + 1) have "
        f"mean cosine similarity **{summary.adjacent:.3f}** in the positional panel"
    )
    if summary.distant is not None:
        text += f"; positions {summary.distance} or more apart, **{summary.distant:.3f}**"
    return text + "."


TRAINED_POSITIONS: Final = (
    "Trained, GPT-2's position vectors change smoothly: neighbouring positions are alike "
    "(a bright band along the diagonal) and many dimensions are slow waves across the "
    "positions. Before training (weights: random init) neighbours are no more alike than "
    "positions far apart."
)
RANDOM_POSITIONS: Final = (
    "Random, as before training: neighbouring positions are no more alike than positions far "
    "apart. Switch the weights to GPT-2 124M to see what training makes of this table."
)
