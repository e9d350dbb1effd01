"""The words of the GPT-2 view: what the trained tables are, and why some controls are fixed.

Lesson text only (Markdown); the numbers it quotes are computed elsewhere and passed in.

>>> print(WEIGHTS_LABELS["gpt2"])
GPT-2 124M, trained
"""

from __future__ import annotations

from typing import Final

from posviz.config import Scheme, Weights
from posviz.plots.heatmaps import SimilarityDecisions
from posviz.schemes import scheme as scheme_of
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
        f"{scheme_of(scheme).label})."
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


def _positions(decisions: SimilarityDecisions) -> str:
    """The positions the figure draws: ``"the 9 positions of this window"`` or ``"the 256
    positions shown (of 1024)"``."""
    if decisions.cut:
        return f"the {len(decisions.rows)} positions shown (of {decisions.positions})"
    return f"the {decisions.positions} positions of this window"


def neighbour_sentence(decisions: SimilarityDecisions) -> str:
    """The position panel's similarity in numbers, over the positions the figure draws:
    neighbours vs positions far apart (``""`` below 2 positions)."""
    summary = decisions.neighbours
    if summary is None:
        return ""
    text = (
        f"Over {_positions(decisions)}, neighbouring positions (p and p + 1) have "
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


def _verdict(summary: NeighbourSimilarity) -> str:
    """What the two means show, with both numbers and the chance they are weighed against."""
    adjacent, distant = f"{summary.adjacent:.3f}", f"{summary.distant or 0.0:.3f}"
    chance = f"±{summary.noise:.3f}, three standard deviations for random rows"
    pattern = summary.pattern
    if pattern == "no_pattern":
        return (
            f"neighbours ({adjacent}) and positions far apart ({distant}) differ by "
            f"{abs(summary.difference or 0.0):.3f}, within what chance gives a random table "
            f"of this size ({chance}): no pattern"
        )
    word = "more" if pattern == "neighbours_alike" else "less"
    return (
        f"neighbours ({adjacent}) are {word} alike than positions far apart ({distant}), by "
        f"more than chance gives a random table of this size ({chance})"
    )


def pattern_sentence(decisions: SimilarityDecisions, *, trained: bool) -> str:
    """What trained (or random) position tables usually show, and whether the numbers of the
    positions drawn show it: the usual pattern is never stated as a fact of this window unless
    its numbers show it, and a difference is called a pattern only beyond what chance gives a
    random table of the same size (:class:`~posviz.similarity.NeighbourSimilarity`), the
    threshold stated.

    >>> from posviz.embeddings import SeededEmbeddings
    >>> from posviz.pipeline import embed_window
    >>> from posviz.plots.heatmaps import similarity_chart
    >>> window = embed_window(SeededEmbeddings.create(seed=1, emb_dim=64), list(range(16)),
    ...                       context_length=16)
    >>> sentence = pattern_sentence(similarity_chart(window).decisions, trained=True)
    >>> print(sentence.split(". ")[1])  # doctest: +NORMALIZE_WHITESPACE
    These numbers do not show it: neighbours (0.030) and positions far apart (-0.029) differ
    by 0.059, within what chance gives a random table of this size (±0.115, three standard
    deviations for random rows): no pattern.
    """
    summary = decisions.neighbours
    if summary is None or summary.pattern == "too_short":
        found = (
            "With fewer than 4 positions there are no positions far apart to compare: use a "
            "longer text."
        )
    else:
        usual = "neighbours_alike" if trained else "no_pattern"
        shows = "show it" if summary.pattern == usual else "do not show it"
        found = f"These numbers {shows}: {_verdict(summary)}."
    return f"{_USUAL[trained]} {found}{_AFTER[trained]}"
