"""The lesson sentence: what the matrices on screen show about a repeated token, in numbers.

Words only. Each sentence reads what its figure decided and measured (the
:class:`~posviz.plots.heatmaps.EmbeddingsDecisions` or
:class:`~posviz.plots.heatmaps.SimilarityDecisions` a ``*_chart`` builder returns): the token
named first is the one the figure marks first, the numbers are those of the cells drawn, and
every claim is chosen by them: rows are called identical only when their largest difference
is 0.0, and a pattern the numbers do not show is not stated. Panels are named with their place
in the figure's layout: left / middle / right side by side, top / middle / bottom when stacked
(a phone).

Markdown by default (token texts escaped with :func:`~posviz.token_text.for_markdown`, so
nothing a user typed is interpreted); ``markdown=False`` gives plain text for the command line.

>>> from posviz.embeddings import SeededEmbeddings
>>> from posviz.pipeline import embed_window
>>> from posviz.plots.heatmaps import embeddings_chart
>>> from posviz.tokenizer import encode
>>> tables = SeededEmbeddings.create(seed=123, emb_dim=8)
>>> window = embed_window(tables, encode(" rose and rose and rose"), context_length=8)
>>> drawn = embeddings_chart(window)  # the figure, and what it decided
>>> print(lesson_sentence(drawn.decisions, markdown=False))  # doctest: +NORMALIZE_WHITESPACE
Self-attention on its own is blind to order. '␣rose' is at positions 0, 2 and 4: its token
rows are identical (token panel, left: largest difference 0.0); its input rows differ (input
panel, right: largest difference 2.98): only the position vectors added to them tell the 3
occurrences apart. The same holds for '␣and' (1 and 3).
>>> panel_place("input", stacked=True)
'bottom'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from posviz.plots.heatmaps import EmbeddingsDecisions, SimilarityDecisions
from posviz.repeats import RepeatedToken
from posviz.schemes import SchemeSpec, scheme
from posviz.similarity import READS_ONE, RepeatSimilarity
from posviz.token_text import for_markdown

Panel = Literal["token", "position", "input"]
_PLACES: Final[dict[bool, tuple[str, str, str]]] = {
    False: ("left", "middle", "right"),
    True: ("top", "middle", "bottom"),
}
_PANELS: Final[tuple[Panel, ...]] = ("token", "position", "input")
# What stands in the input panel (RoPE's third panel is rotated, not summed).
_INPUT_PANEL: Final = "input panel"
_ROTATED_PANEL: Final = "rotated panel"


def _input_panel(spec: SchemeSpec) -> str:
    return _ROTATED_PANEL if spec.rotates else _INPUT_PANEL


NAMED_POSITIONS: Final = 6  # positions (or pairs) written out before "and N more"
OTHERS_NAMED: Final = 4  # other repeated tokens named after the main one


def panel_place(panel: Panel, *, stacked: bool) -> str:
    """Where ``panel`` stands among the three: left / middle / right, or top / middle / bottom
    when the panels are stacked.

    >>> panel_place("token", stacked=False), panel_place("token", stacked=True)
    ('left', 'top')
    """
    return _PLACES[stacked][_PANELS.index(panel)]


def number(value: float) -> str:
    """A difference as the sentences print it: ``0.0`` only for exactly zero, two decimals
    from 0.01, else scientific (a tiny difference is not written as 0.00).

    >>> number(0.0), number(2.3125), number(0.0004)
    ('0.0', '2.31', '4.0e-04')
    """
    if value == 0.0:
        return "0.0"
    return f"{value:.2f}" if abs(value) >= 0.005 else f"{value:.1e}"


def listing(items: Sequence[str], *, limit: int = NAMED_POSITIONS) -> str:
    """``"1, 4 and 7"``; beyond ``limit`` items, ``"1, 4, … and 12 more"``.

    >>> listing(["1", "4", "7"]), listing(["2", "5"]), listing([str(n) for n in range(9)], limit=3)
    ('1, 4 and 7', '2 and 5', '0, 1, 2 and 6 more')
    """
    if len(items) > limit:
        return f"{', '.join(items[:limit])} and {len(items) - limit} more"
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} and {items[-1]}"


def quoted(text: str, *, markdown: bool) -> str:
    """A token's text in quotes: typographic and escaped for Markdown, or plain.

    >>> quoted("␣rose", markdown=False), quoted("*", markdown=True)
    ("'␣rose'", '“\\\\*”')
    """
    return f"“{for_markdown(text)}”" if markdown else f"'{text}'"


def _bold(text: str, markdown: bool) -> str:
    return f"**{text}**" if markdown else text


def _behaves_like(token: RepeatedToken, main: RepeatedToken) -> bool:
    """The same verdicts as ``main`` (identical token rows; input rows identical or not)."""
    return (token.token_difference == 0.0) == (main.token_difference == 0.0) and (
        token.input_difference == 0.0
    ) == (main.input_difference == 0.0)


def drawn_dims(decisions: EmbeddingsDecisions) -> str:
    """What a difference quoted from the embeddings figure is over: ``""`` when its panels draw
    every dimension, else the dimensions they draw.

    A sentence beside a figure that shows every k-th dimension quotes the cells drawn, not all
    of d: the learner can find the number by hovering the cells, and a "largest difference"
    found in a dimension that is not drawn would point at nothing on screen. The sentence says
    which dimensions, so nobody takes it for all of d.
    """
    if not decisions.sampled:
        return ""
    return f" over the {len(decisions.columns)} of {decisions.emb_dim} dimensions drawn"


def lesson_sentence(decisions: EmbeddingsDecisions, *, markdown: bool = True) -> str:
    """The sentence above the embeddings figure: where the token the figure marks first
    stands, whether its token rows and its input rows are identical in the cells drawn (with
    their largest differences, see :func:`drawn_dims`), and what the scheme did about it; then
    the other repeated tokens, named. Panels are placed as the figure placed them."""
    facts = decisions.repeats
    stacked = decisions.stacked
    main = decisions.main
    lead = "Self-attention on its own is blind to order."
    if main is None and facts.tokens:
        return (
            f"{lead} {count(len(facts.tokens), 'token')} repeat in this window of "
            f"{facts.num_positions} tokens, each at more positions than the position axis has "
            "room to label, so none is outlined."
        )
    if main is None:
        return (
            f"{lead} A repeated token shows it, but no token occurs twice in this window of "
            f"{facts.num_positions} tokens: try the example *A rose is a rose*."
            if markdown
            else f"{lead} No token occurs twice in this window of {facts.num_positions} tokens."
        )
    spec = scheme(facts.scheme)
    over = drawn_dims(decisions)
    where = listing([str(p) for p in main.positions])
    token_verdict = (
        "its token rows are identical"
        if main.token_difference == 0.0
        else "its token rows differ (unexpected: one id selects one row)"
    )
    token_detail = (
        f"token panel, {panel_place('token', stacked=stacked)}: largest difference "
        f"{number(main.token_difference)}{over}"
    )
    rows = "rotated rows" if spec.rotates else "input rows"
    input_detail = (
        f"{_input_panel(spec)}, {panel_place('input', stacked=stacked)}: largest difference "
        f"{number(main.input_difference)}{over}"
    )
    apart = f"the {main.count} occurrences"
    if main.input_difference == 0.0:
        input_verdict = f"its {rows} are identical too"
        why = (
            f"with no positional signal nothing is added, so self-attention cannot tell {apart} "
            "apart"
            if spec.positionless
            else f"self-attention cannot tell {apart} apart"
        )
        if spec.bias is not None:
            why = f"{spec.bias.scores_only} {apart} apart (see the Attention tab)"
    else:
        input_verdict = f"its {rows} differ"
        if spec.rotates:
            lengths = _lengths(main.length_difference, decisions)
            why = (
                "RoPE adds nothing: it rotates each row by an angle that grows with its "
                f"position, and the rows keep their length ({lengths})"
            )
        elif spec.positionless:
            why = "although nothing was added"
        else:
            why = f"only {spec.words.added} tell {apart} apart"
    head = f"{quoted(main.token_text, markdown=markdown)} is at positions {where}: {token_verdict}"
    sentence = (
        f"{lead} {_bold(head, markdown)} ({token_detail}); {_bold(input_verdict, markdown)} "
        f"({input_detail}): {why}."
    )
    others = facts.tokens[1:]
    if others:
        named = [
            f"{quoted(t.token_text, markdown=markdown)} ({listing([str(p) for p in t.positions])})"
            for t in others
        ]
        same = all(_behaves_like(token, main) for token in others)
        start = "The same holds for" if same else "Also repeated:"
        sentence += f" {start} {listing(named, limit=OTHERS_NAMED)}."
    return sentence


def _lengths(difference: float, decisions: EmbeddingsDecisions) -> str:
    """Rows' lengths are of whole rows: said so when the panels draw a sample."""
    whole = f" over all {decisions.emb_dim} dimensions" if decisions.sampled else ""
    if difference < 5e-6:
        return f"their lengths{whole} agree to 5 decimals"
    return f"their lengths{whole} differ by up to {number(difference)}"


def count(amount: int, noun: str) -> str:
    """``"1 pair"``, ``"5 pairs"``."""
    return f"{amount} {noun}" if amount == 1 else f"{amount} {noun}s"


def _read(amount: int) -> str:
    return "reads" if amount == 1 else "read"


def _pairs(repeat: RepeatSimilarity) -> str:
    return listing([f"({p}, {q})" for p, q in repeat.pairs])


def _span(values: tuple[float, float]) -> str:
    low, high = values
    return f"{low:.3f}" if f"{low:.3f}" == f"{high:.3f}" else f"{low:.3f} to {high:.3f}"


def similarity_sentence(decisions: SimilarityDecisions, *, markdown: bool = True) -> str:
    """The sentence above the similarity figure: which cells read 1.000 in the token panel
    (the answer to "which cells are 1.0?") among the rows drawn, and what the same cells read
    in the input panel; the token named first is the one the figure marks first."""
    facts = decisions.facts
    left = panel_place("token", stacked=decisions.stacked)
    right = panel_place("input", stacked=decisions.stacked)
    main = decisions.main
    shown = f"the {facts.shown} positions shown" + (
        f" (of {decisions.positions})" if decisions.cut else ""
    )
    if main is None and facts.tokens:
        return (
            f"{count(len(facts.tokens), 'token')} repeat in {shown}, each too often to "
            f"outline: besides the diagonal, {count(facts.token_ones, 'pair')} of positions "
            f"{_read(facts.token_ones)} 1.000 in the token panel ({left}), "
            f"{facts.token_ones_repeated} of them holding the same token twice."
        )
    if main is None:
        ones = (
            "no cell off the diagonal reads 1.000"
            if facts.token_ones == 0
            else f"{count(facts.token_ones, 'pair')} off the diagonal {_read(facts.token_ones)} "
            "1.000 anyway"
        )
        return (
            f"No token occurs twice in {shown}, and {ones} in the token panel ({left}; the "
            "diagonal is each row with itself)."
        )
    where = f" among {shown}" if decisions.cut else ""
    if facts.token_ones == facts.token_ones_repeated == facts.repeated_pairs:
        token = (
            f"Besides the diagonal (each row with itself), {count(facts.repeated_pairs, 'pair')} "
            f"of positions{where} {_read(facts.repeated_pairs)} 1.000 in the token panel "
            f"({left}): exactly the pairs that hold the same token"
        )
    else:
        token = (
            f"Besides the diagonal, {count(facts.token_ones, 'pair')} of positions{where} "
            f"{_read(facts.token_ones)} 1.000 in the token panel ({left}); "
            f"{facts.token_ones_repeated} of the "
            f"{count(facts.repeated_pairs, 'pair')} that hold the same token are among them"
        )
    named = f"{quoted(main.token_text, markdown=markdown)} {_pairs(main)}"
    others = facts.tokens[1:]
    if others:
        named += "; " + "; ".join(
            f"{quoted(o.token_text, markdown=markdown)} {_pairs(o)}" for o in others[:OTHERS_NAMED]
        )
        if len(others) > OTHERS_NAMED:
            named += f"; and {len(others) - OTHERS_NAMED} more tokens"
    low = main.input[0]
    spec = scheme(facts.scheme)
    panel = f"{_input_panel(spec)} ({right})"
    if low >= READS_ONE:
        inputs = f"In the {panel} {_bold('they still read 1.000', markdown)}"
        if spec.bias is not None:
            inputs += f": {spec.bias.scores_only} them apart"
        else:
            inputs += (
                ": no position signal, nothing tells them apart"
                if spec.positionless
                else ": the position signal did not separate them"
            )
    else:
        read = _span(main.input)
        inputs = (
            f"In the {panel} the pairs of {quoted(main.token_text, markdown=markdown)} "
            f"{_bold(f'read {read}', markdown)}: {spec.words.added} make them point apart"
        )
        if spec.rotates:
            inputs = (
                f"In the {panel} the pairs of {quoted(main.token_text, markdown=markdown)} "
                f"{_bold(f'read {read}', markdown)}: the rotation by position turns them apart"
            )
    return f"{_bold(token, markdown)}: {named}. {inputs}."
