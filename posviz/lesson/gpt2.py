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


# What each kind of table usually shows; pattern_sentence says whether these numbers do.
_USUAL: Final = {
    True: (
        "Trained position tables usually make neighbouring positions alike: a bright band "
        "along the diagonal."
    ),
    False: (
        "A random table, as before training, usually makes neighbouring positions no more "
        "alike than positions far apart."
    ),
}
_AFTER: Final = {
    True: "",
    False: " Switch the weights to GPT-2 124M to see what training makes of this table.",
}


def pattern_sentence(summary: NeighbourSimilarity, *, trained: bool) -> str:
    """What trained (or random) position tables usually show, and whether the numbers of
    ``summary`` show it: the usual pattern is never stated as a fact of this window unless
    its numbers show it.

    >>> from posviz.similarity import NeighbourSimilarity
    >>> pattern_sentence(NeighbourSimilarity(0.02, 0.01, 8), trained=True).split(". ")[-1]
    'These numbers do not show it: neighbours are no more alike than positions far apart.'
    """
    verdict = {
        "neighbours_alike": "neighbours are more alike than positions far apart",
        "no_pattern": "neighbours are no more alike than positions far apart",
        "neighbours_apart": "neighbours are less alike than positions far apart",
    }
    usual = "neighbours_alike" if trained else "no_pattern"
    pattern = summary.pattern
    if pattern == "too_short":
        found = (
            "With fewer than 4 positions there are no positions far apart to compare: use a "
            "longer text."
        )
    elif pattern == usual:
        found = f"These numbers show it: {verdict[pattern]}."
    else:
        found = f"These numbers do not show it: {verdict[pattern]}."
    return f"{_USUAL[trained]} {found}{_AFTER[trained]}"
