"""The words of the Attention tab, each built from the numbers of an
:class:`~posviz.scores.AttentionView` and the decisions of its figure
(:class:`~posviz.plots.attention.AttentionDecisions`), so none can claim what they do not show.

>>> from posviz.config import Settings
>>> from posviz.scores import build_attention
>>> from posviz.view import build_view
>>> print(shift_sentence(build_attention(build_view(Settings(scheme="alibi", shift=8)))))
Moved 8 positions later (to positions 8–16), ALiBi's scores are **unchanged** (largest \
change 0.0): only the distance between two tokens matters.
"""

from __future__ import annotations

from typing import Final

import torch

from posviz.config import Settings
from posviz.lesson.repeats import count, number
from posviz.plots.attention import AttentionDecisions, ordinal, positions, slope
from posviz.schemes import T5_MAX_DISTANCE, T5_NUM_BUCKETS, scheme, t5_buckets
from posviz.scores import AttentionView, table_rows

LECTURE_SHIFT: Final = 8  # the lecture's shift test moves the sentence this far


def lecture_shift(settings: Settings, tokens: int) -> int:
    """How far the lecture's shift test moves a sentence of ``tokens`` tokens:
    :data:`LECTURE_SHIFT` positions, or, for a learned table too short for that, as far as its
    rows hold the sentence (the question and the answer then name that shift, and the answer
    says why), so the learner sees the scores change rather than an error; a sentence that fills
    its table moves :data:`LECTURE_SHIFT` anyway (the answer: it cannot move at all).

    >>> lecture_shift(Settings(), 9), lecture_shift(Settings(scheme="rope"), 9)
    (7, 8)
    >>> lecture_shift(Settings(context_length=32), 9), lecture_shift(Settings(), 16)
    (8, 8)
    """
    if not scheme(settings.scheme).learned:
        return LECTURE_SHIFT
    room = table_rows(settings) - tokens
    return min(LECTURE_SHIFT, room) if room >= 1 else LECTURE_SHIFT


INTRO: Final = (
    "One head of the book's self-attention (`SelfAttention_v2`'s weights after "
    "`torch.manual_seed(789)`, split into heads as `MultiHeadAttention` splits them): row *i* "
    "is a query, column *j* a key, and the causal mask of section 3.5 leaves the keys after "
    "each query empty. **Content part**: the scores of the token rows alone, "
    "q·k/√(d/H) with no position anywhere. **Position part**: what the scheme adds to them "
    "(scores − content). **Scores**: their sum. **Attention weights**: the softmax of each "
    "row over its keys j ≤ i."
)


def _scores(view: AttentionView) -> str:
    return scheme(view.settings.scheme).words.scores


def shift_sentence(view: AttentionView, *, markdown: bool = True) -> str:
    """What moving the sentence did to its scores, with the largest change (or, for a learned
    table that ends, torch's error); ``shift`` 0 says how to try it."""
    test = view.shift_test
    spec = scheme(view.settings.scheme)
    bold = (lambda text: f"**{text}**") if markdown else (lambda text: text)
    code = (lambda text: f"`{text}`") if markdown else (lambda text: text)
    if test.shift == 0:
        return (
            f"The sentence stands at {positions(0, test.last_position)}. Move it later with "
            "the shift control: a relative scheme (RoPE, ALiBi, T5) gives the same scores, an "
            "absolute one (learned, sinusoidal) does not."
        )
    where = f"(to {positions(test.shift, test.last_position)})"
    later = f"Moved {count(test.shift, 'position')} later {where}"
    if not test.moved:
        rows = test.table_rows or 0
        table = (
            f"GPT-2's wpe has {rows:,} rows"
            if view.settings.weights == "gpt2"
            else f"the learned table nn.Embedding({rows}, {view.settings.emb_dim}) has rows"
        )
        return (
            f"{later}, the sentence would need position {rows}, but {table} 0–{rows - 1} only: "
            f"looking it up raises {code(str(test.error))} (torch's message). The heatmaps "
            f"show the sentence where it is, at {positions(0, view.shown.size - 1)}."
        )
    change = number(test.scores_change or 0.0)
    note = _shift_note(view)
    if test.unchanged:
        why = (
            "no position reaches them"
            if spec.positionless
            else "only the distance between two tokens matters"
        )
        rounding = ", float32 rounding of its angles" if spec.rotates and change != "0.0" else ""
        return (
            f"{later}, {_scores(view)} are {bold('unchanged')} (largest change "
            f"{change}{rounding}): {why}.{note}"
        )
    why = note.strip() or "the position itself matters, not only the distance."
    return (
        f"{later}, {_scores(view)} {bold(f'change by up to {change}')} "
        f"({_weights_change(view)}): {why[0].lower()}{why[1:]}"
    )


def _weights_change(view: AttentionView) -> str:
    """How far the weights moved with the scores, worded for no change at all (a single
    token's one weight is always 1)."""
    weights = view.shift_test.weights_change or 0.0
    if weights != 0.0:
        return f"the weights by up to {number(weights)}"
    if len(view.token_ids) == 1:
        return "its one weight stays 1: a single token can attend only to itself"
    return "the weights do not change at all"


def _shift_note(view: AttentionView) -> str:
    """The rotation's own words on why moving the sentence changes more than the distance
    (" " and the sentence; "" when it has none)."""
    rotation = scheme(view.settings.scheme).rotation
    if rotation is None:
        return ""
    options, shift = view.settings.options(), view.shift_test.shift
    note = rotation.shift_note(view.head_dim, options, len(view.token_ids), shift)
    return f" {note}" if note else ""


def variant_sentence(view: AttentionView) -> str | None:
    """What the scheme's options did to its rotation at the head dimension, for the sentence
    at positions ``0 … n−1`` (``None``: nothing to say)."""
    rotation = scheme(view.settings.scheme).rotation
    if rotation is None:
        return None
    said = rotation.describe(view.head_dim, view.settings.options(), len(view.token_ids))
    return said or None


def t5_flat_from() -> int:
    """The first distance in T5's last bucket: every distance from it on gets the same bias.

    >>> t5_flat_from()
    113
    """
    distances = torch.arange(0, 2 * T5_MAX_DISTANCE)
    buckets = t5_buckets(-distances)
    return int(distances[buckets == T5_NUM_BUCKETS - 1][0])


def beyond_sentences(view: AttentionView) -> list[str]:
    """What the scheme does past the context length T (the distances and positions training
    saw), from the view's numbers."""
    settings = view.settings
    spec, context = scheme(settings.scheme), settings.context_length
    bias = view.bias
    found: list[str] = []
    last = view.shift_test.last_position
    if view.shift_test.moved and last >= context and spec.formula:
        first = max(context, view.shift_test.shift)
        where = f"Position {last} lies" if first == last else f"Positions {first}–{last} lie"
        found.append(
            f"{where} past the context length T = {context}: {spec.words.name} computes "
            f"{'it' if first == last else 'them'} by its formula."
        )
    if view.slopes:  # ALiBi: one slope per head
        far = bias.distances - 1
        value = float(bias.mean[view.head, far])
        found.append(
            f"Past T = {context} ALiBi keeps its line: head {view.head} "
            f"(m = {slope(view.slopes[view.head])}) adds −m·k at every distance k, "
            f"{signed(value)} at k = {far}, so a longer text only "
            "continues the penalty; each head has its own slope (the shaded part of the chart)."
        )
    elif view.t5_table is not None:  # T5: a seeded table of buckets
        flat = t5_flat_from()
        value = float(bias.mean[view.head, flat])
        found.append(
            f"T5's bias stops changing at distance {flat}: every k ≥ {flat} falls in the last "
            f"of its {T5_NUM_BUCKETS} buckets (the one that holds everything past max_distance "
            f"{T5_MAX_DISTANCE}), so head {view.head} adds {signed(value)} to every key that far "
            f"back, past T = {context} too."
        )
        found.append(
            f"T5 learns E; posviz shows its seeded init, nn.Embedding({T5_NUM_BUCKETS}, "
            f"{view.heads}) after torch.manual_seed({settings.seed}), so the values are random, "
            "the buckets are T5's."
        )
    elif spec.learned:
        rows = view.shift_test.table_rows or context
        if settings.weights == "init":
            found.append(
                f"The learned table has rows for {positions(0, rows - 1)} only: past them there "
                "is nothing to look up (the shift control shows torch's error)."
            )
    return found


def signed(value: float) -> str:
    """A number with a true minus sign, 4 digits: ``−31.88``.

    >>> signed(-31.875), signed(0.5)
    ('−31.88', '0.5')
    """
    return f"{value:.4g}".replace("-", "−")


def head_sentence(view: AttentionView) -> str:
    """Which head is shown, and ALiBi's slopes when the scheme has them."""
    head = (
        f"Head {view.head} of {view.heads}: columns {view.head * view.head_dim}–"
        f"{(view.head + 1) * view.head_dim - 1} of the queries and keys (d/H = "
        f"{view.head_dim})."
    )
    if view.slopes:
        slopes = ", ".join(slope(m) for m in view.slopes)
        power = view.heads & (view.heads - 1) == 0
        rule = (
            ""
            if power
            else f" ({view.heads} is not a power of two: the slopes of the largest power below, "
            "then every other slope of the next)"
        )
        head += f" ALiBi's slopes for {view.heads} heads{rule}: {slopes}."
    return head


def drawn_sentence(decisions: AttentionDecisions) -> str | None:
    """What the heatmaps left out, read from the figure's decisions (``None``: nothing)."""
    if not decisions.reduced:
        return None
    return (
        f"The heatmaps draw every {ordinal(decisions.step)} row and column of the "
        f"{decisions.tokens} tokens ({decisions.drawn} of each): the cells drawn hold their "
        "exact values; hover one for its tokens and numbers."
    )


def sentences(
    view: AttentionView, decisions: AttentionDecisions, *, markdown: bool = True
) -> list[str]:
    """The paragraphs beside the Attention figure ``decisions`` describe, in reading order
    (Markdown, or plain text for the command line)."""
    found = [
        shift_sentence(view, markdown=markdown),
        scheme(view.settings.scheme).words.what_it_does,
        head_sentence(view),
    ]
    variant = variant_sentence(view)
    if variant is not None:
        found.insert(2, variant)
    found += beyond_sentences(view)
    drawn = drawn_sentence(decisions)
    if drawn is not None:
        found.append(drawn)
    return found


def shift_answer(view: AttentionView) -> str:
    """Lecture mode's answer to "the sentence moves later: will the scores change?"."""
    test = view.shift_test
    if test.shift == 0:
        return "The sentence has not moved: set a shift to ask."
    if not test.moved:
        return (
            f"It cannot even move that far: the learned table has rows 0–"
            f"{(test.table_rows or 0) - 1} only, and position {test.table_rows} raises "
            f"`{test.error}`. A learned table knows only the positions it was trained on."
        )
    change = number(test.scores_change or 0.0)
    rows = table_rows(view.settings)
    tokens = len(view.token_ids)
    learned = scheme(view.settings.scheme).learned
    if learned and test.shift == rows - tokens < LECTURE_SHIFT:
        return (
            f"Yes: moved {count(test.shift, 'position')} later (as far as the table's {rows} "
            f"rows hold these {tokens} tokens: {LECTURE_SHIFT} later they would need row "
            f"{rows}, which raises `IndexError`), {_scores(view)} change by up to {change}: the "
            "position itself matters, not only the distance."
        )
    if test.unchanged:
        return f"No: {_scores(view)} are unchanged (largest change {change}): " + (
            "without positions nothing about them reaches the scores."
            if scheme(view.settings.scheme).positionless
            else "only the distance between two tokens matters, not where they stand."
        )
    return (
        f"Yes: {_scores(view)} change by up to {change}: the position itself matters, "
        "not only the distance."
    )
