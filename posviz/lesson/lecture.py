"""Lecture mode: section 2.8's story one step per click, from the text to what attention sees.

A lecture is data: :data:`STEPS`, each :class:`Step` naming the view the stage shows (``view``,
the view's one name in :mod:`posviz.viewspec`: ``"text"``, ``"tokens"``, ``"embeddings"``,
``"word-order"``...; the page draws each view with one function), its title, its
narration and, where a learner can guess the answer, a :class:`Question`. A step with a
question takes two clicks: first the question on the unrevealed view (no outlines, the answer's
panel not drawn yet), then the same view revealed with the answer, computed from the numbers
on screen. :data:`SLIDES` lists the clicks; links (``?lecture=1&step=N``) and the clicker keys
count slides from 1.

A new view adds its steps by appending :class:`Step` values to :data:`STEPS` (the view itself
is a spec of :mod:`posviz.viewspec`, drawn by its renderer in ``posviz_app.views.RENDERERS``):
nothing else here changes.

>>> [slide.title for slide in SLIDES][1:5]
['2. Token IDs', '3. Token embeddings', '4. Token embeddings', '5. Positional embeddings']
>>> SLIDES[2].revealed, SLIDES[3].revealed, len(SLIDES)
(False, True, 26)
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from posviz.compare import OrderComparison
from posviz.config import Weights
from posviz.lesson.attention import LECTURE_SHIFT
from posviz.lesson.repeats import count, drawn_dims, listing, number, quoted
from posviz.lesson.word_order import compared_texts
from posviz.plots.heatmaps import EmbeddingsDecisions, SimilarityDecisions
from posviz.schemes import ALIBI, LEARNED, NONE, ROPE, SINUSOIDAL, T5, SchemeSpec, scheme
from posviz.similarity import READS_ONE
from posviz.viewspec import ViewName


@dataclass(frozen=True)
class Question:
    """What the learner is asked before the reveal.

    ``text`` may name the token the figure marks first, ``{token}`` (escaped by the caller's
    choice of Markdown) at ``{positions}``, or the two texts compared, ``{texts}``;
    ``no_repeat`` is asked when the view has none of them (no token repeats, nothing compared).
    ``panels``: heatmap panels shown before the reveal (``None``: the step's own).
    """

    text: str
    no_repeat: str
    panels: int | None = None
    by_scheme: Mapping[SchemeSpec, str] = field(default_factory=dict)  # text for these schemes
    trained: str = ""  # asked instead with GPT-2's trained tables (weights "gpt2"), if given


@dataclass(frozen=True)
class Step:
    """One step of lecture mode: the view it shows, its title and narration, how many heatmap
    panels (embeddings), and an optional question asked before the reveal."""

    title: str
    caption: str
    view: ViewName  # "text", "tokens", "embeddings", "similarity", "word-order", "geometry"...
    panels: int = 0  # heatmap panels shown (embeddings): 0 to 3 (token | position | input)
    question: Question | None = None
    by_scheme: Mapping[SchemeSpec, tuple[str, str]] = field(default_factory=dict)  # title, caption


@dataclass(frozen=True)
class Slide:
    """One click of lecture mode: a step, asked (``revealed`` false) or answered."""

    number: int  # 1-based, as links and titles count
    step: Step
    revealed: bool

    @property
    def title(self) -> str:
        """The title, numbered (for the book's learned scheme)."""
        return self.title_for(LEARNED)

    def title_for(self, positional: str | SchemeSpec) -> str:
        """The numbered title for the scheme ``positional`` (the positional steps name what
        it adds)."""
        spec = scheme(positional)
        return f"{self.number}. {self.step.by_scheme.get(spec, (self.step.title, ''))[0]}"

    def caption_for(self, positional: str | SchemeSpec) -> str:
        """The narration for ``scheme``; ``""`` on an answered question, where the answer
        (computed from the numbers) takes its place and the window keeps its height."""
        if self.step.question is not None and self.revealed:
            return ""
        return self.step.by_scheme.get(scheme(positional), ("", self.step.caption))[1]

    @property
    def panels(self) -> int:
        """Heatmap panels drawn: before the reveal, the question's (if it says)."""
        question = self.step.question
        if question is not None and not self.revealed and question.panels is not None:
            return question.panels
        return self.step.panels

    @property
    def outlines(self) -> bool:
        """Whether the figure marks the repeated tokens (not while a question is open)."""
        return self.step.question is None or self.revealed


# The Attention tab's steps (issue 25), view "attention", the last of STEPS: the question's
# slide shows the sentence where it is, the answer's the same sentence moved LECTURE_SHIFT
# positions later, or as far as a learned table holds it (posviz.lesson.attention.lecture_shift;
# shift_answer words it from the numbers).
_MOVES: Final = "The sentence moves {shift} later."  # lecture_shift's positions
ATTENTION_STEPS: Final = (
    Step(
        "Positions inside attention",
        "One head of the book's attention: content part + position part = scores; each row's "
        "softmax over the keys so far gives the weights.",
        view="attention",
    ),
    Step(
        "The shift test",
        "The same sentence at other positions: does attention see where it stands, or only how "
        "far apart two tokens are?",
        view="attention",
        question=Question(
            f"{_MOVES} Will its attention scores change?",
            f"{_MOVES} Will its attention scores change?",
            by_scheme={
                LEARNED: f"{_MOVES} Will the learned scheme's attention scores change?",
                SINUSOIDAL: f"{_MOVES} Will the sinusoidal scheme's attention scores change?",
                ROPE: f"{_MOVES} Will RoPE's attention scores change?",
                ALIBI: f"{_MOVES} Will ALiBi's attention scores change?",
                T5: f"{_MOVES} Will T5's attention scores change?",
            },
        ),
    ),
)


STEPS: Final = (
    Step(
        "Text",
        "We start from raw text. The model never sees letters, only numbers.",
        view="text",
    ),
    Step(
        "Token IDs",
        "GPT-2's byte-pair tokenizer cuts the text into tokens and gives each one of "
        "50,257 IDs. The same token gets the same ID each time: ×N says how often.",
        view="tokens",
    ),
    Step(
        "Token embeddings",
        "Each ID selects one row of the token embedding table, nn.Embedding(50257, d).",
        view="embeddings",
        panels=1,
        question=Question(
            "{token} stands at positions {positions}. Are its token rows equal?",
            "Two occurrences of one token: would their token rows be equal?",
        ),
    ),
    Step(
        "Positional embeddings",
        "A second table, nn.Embedding(context_length, d): one row per position, from 0.",
        view="embeddings",
        panels=2,
        by_scheme={
            SINUSOIDAL: (
                "Positional encoding (sin/cos)",
                "A fixed table of sine and cosine waves, one row per position from 0: nothing "
                "to learn.",
            ),
            NONE: (
                "No positional signal",
                "Without a positional scheme nothing is added: every position gives zeros.",
            ),
            ROPE: (
                "RoPE: an angle per position",
                "RoPE adds nothing: it turns each pair of dimensions by position × θᵢ "
                "(the panel: cos).",
            ),
            ALIBI: (
                "ALiBi: nothing added",
                "ALiBi adds nothing to the input: it adds −m·(i − j) to the attention scores.",
            ),
            T5: (
                "T5's bias: nothing added",
                "T5 adds nothing to the input: it adds a bias per distance to the attention "
                "scores.",
            ),
        },
    ),
    Step(
        "Input embeddings = token + position",
        "Their sum is the input embeddings (in training GPT-2 then applies dropout).",
        view="embeddings",
        panels=3,
        question=Question(
            "After adding, are the rows of {token} at {positions} still equal?",
            "After adding, could two occurrences of one token still be equal?",
            panels=2,
            by_scheme={
                NONE: "Nothing is added: are the rows of {token} at {positions} still equal?",
                ROPE: "After rotating, are the rows of {token} at {positions} still equal?",
                ALIBI: "Nothing is added: are the rows of {token} at {positions} still equal?",
                T5: "Nothing is added: are the rows of {token} at {positions} still equal?",
            },
        ),
        by_scheme={
            SINUSOIDAL: (
                "Input embeddings = token + position",
                "Their sum is the input embeddings, what the first transformer block receives.",
            ),
            NONE: (
                "Input embeddings = token embeddings",
                "With nothing added, the input embeddings are the token embeddings.",
            ),
            ROPE: (
                "Rotated token vectors",
                "Each token row turned by its position (Llama turns queries and keys instead).",
            ),
            ALIBI: (
                "Input embeddings = token embeddings",
                "ALiBi adds nothing here: its bias waits for the attention scores.",
            ),
            T5: (
                "Input embeddings = token embeddings",
                "T5's bias adds nothing here: it waits for the attention scores.",
            ),
        },
    ),
    Step(
        "Similarity between positions",
        "Cosine similarity of every pair of rows: 1.0 where two rows point the same way.",
        view="similarity",
        question=Question(
            "Which cells of the token panel read 1.0? (The diagonal is each row with itself.)",
            "Which cells of the token panel read 1.0?",
        ),
    ),
    Step(
        "Word order",
        "Self-attention (chapter 3) on two texts, token by token.",
        view="word-order",
        question=Question(
            "Without positions, can self-attention tell {texts} apart?",
            "Without positions, can self-attention tell the two texts apart?",
        ),
    ),
    Step(
        "The shape of the positions",
        "Each row of the positional table, centred, on its first three principal components.",
        view="geometry",
        question=Question(
            "Will these positions look like a cloud or a curve?",
            "Will these positions look like a cloud or a curve?",
            trained="Will GPT-2's positions look like a cloud or a curve?",
        ),
    ),
    Step(
        "Distance and length",
        "The cosine of positions i and i + k for every distance k; shaded: past the context "
        "length.",
        view="distance",
        question=Question(
            "Is a position more like its neighbour than like one far away? And past T?",
            "Is a position more like its neighbour than like one far away? And past T?",
        ),
    ),
    *ATTENTION_STEPS,
)


def slides(steps: Sequence[Step]) -> tuple[Slide, ...]:
    """The clicks of a lecture: one per step, two for a step with a question."""
    found: list[Slide] = []
    for step in steps:
        if step.question is not None:
            found.append(Slide(len(found) + 1, step, revealed=False))
        found.append(Slide(len(found) + 1, step, revealed=True))
    return tuple(found)


class NamedToken(Protocol):
    """A repeated token as a figure names it: its text as the chips write it, its positions."""

    @property
    def token_text(self) -> str: ...

    @property
    def positions(self) -> tuple[int, ...]: ...


class Marks(Protocol):
    """A figure's decisions that name a token: the one it marks first (``None``: none)."""

    @property
    def main(self) -> NamedToken | None: ...


def _named(main: NamedToken, markdown: bool) -> tuple[str, str]:
    """The token (quoted) and where it stands: ``("'␣rose'", "1, 4 and 7")``."""
    return quoted(main.token_text, markdown=markdown), listing([str(p) for p in main.positions])


def question_text(
    slide: Slide,
    positional: str | SchemeSpec,
    marks: Marks | None,
    *,
    markdown: bool = True,
    weights: Weights = "init",
    compared: OrderComparison | None = None,
    shift: int = LECTURE_SHIFT,
) -> str:
    """The question of ``slide`` (``""``: none), naming the token the figure ``marks`` first
    (its decisions: :class:`~posviz.plots.heatmaps.EmbeddingsDecisions` or
    :class:`~posviz.plots.heatmaps.SimilarityDecisions`; ``None`` for a view without one) or
    the texts ``compared``, with the view's ``weights`` (GPT-2's trained tables may be asked
    about by name); the shift test's question names the ``shift`` its answer moves by.

    >>> from posviz.embeddings import SeededEmbeddings
    >>> from posviz.pipeline import embed_window
    >>> from posviz.plots.heatmaps import embeddings_chart
    >>> from posviz.tokenizer import encode
    >>> window = embed_window(SeededEmbeddings.create(seed=1, emb_dim=4),
    ...                       encode("A rose is a rose"), context_length=8)
    >>> marks = embeddings_chart(window, panels=1, outlines=False).decisions
    >>> question_text(SLIDES[2], "learned", marks, markdown=False)
    "'␣rose' stands at positions 1 and 4. Are its token rows equal?"
    """
    question = slide.step.question
    if question is None:
        return ""
    if weights == "gpt2" and question.trained:
        return question.trained
    text = question.by_scheme.get(scheme(positional), question.text)
    fields = {"shift": count(shift, "position")}
    main = None if marks is None else marks.main
    if main is not None:
        fields["token"], fields["positions"] = _named(main, markdown)
    if compared is not None and compared.token_ids_a and compared.token_ids_b:
        first, second = compared_texts(compared, markdown=markdown)
        fields["texts"] = f"{first} and {second}"
    wanted = {name for _, name, _, _ in string.Formatter().parse(text) if name}
    if not wanted <= fields.keys():
        return question.no_repeat
    return text.format(**fields)


def token_answer(decisions: EmbeddingsDecisions, *, markdown: bool = True) -> str:
    """The answer of the token-embeddings question, from the cells the figure drew (see
    :func:`posviz.lesson.repeats.drawn_dims`), about the token it marks first."""
    main = decisions.main
    if main is None:
        return "No token repeats in this window: each row belongs to another token."
    token, where = _named(main, markdown)
    over = drawn_dims(decisions)
    if main.token_difference == 0.0:
        return (
            f"Yes: one ID, one row. {token} at {where}: identical (largest difference 0.0{over})."
        )
    return f"No: {token} at {where} differs by up to {number(main.token_difference)}{over}."


def input_answer(decisions: EmbeddingsDecisions, *, markdown: bool = True) -> str:
    """The answer of the input-embeddings question, from the cells the figure drew."""
    main = decisions.main
    if main is None:
        return "No token repeats in this window: nothing to tell apart."
    token, where = _named(main, markdown)
    over = drawn_dims(decisions)
    if main.input_difference == 0.0 and scheme(decisions.repeats.scheme).biases_scores:
        return (
            f"Yes: {token} at {where} still identical (largest difference 0.0{over}): the "
            "input carries no position; only the bias on the attention scores tells them apart."
        )
    if main.input_difference == 0.0:
        return (
            f"Yes: {token} at {where} still identical (largest difference 0.0{over}): to "
            "attention the text is a bag of tokens."
        )
    return (
        f"No: {token} at {where} now differs (largest difference "
        f"{number(main.input_difference)}{over}): attention can tell them apart."
    )


def similarity_answer(decisions: SimilarityDecisions, *, markdown: bool = True) -> str:
    """The answer of the similarity question, from the cells the figure drew."""
    facts = decisions.facts
    main = decisions.main
    if main is None:
        return (
            f"Only the diagonal: no token repeats, and {count(facts.token_ones, 'pair')} off it "
            "read 1.0 in the token panel."
            if not facts.tokens
            else f"The diagonal, and {count(facts.token_ones, 'pair')} off it in the token "
            "panel; the repeated tokens are too many to outline."
        )
    exact = facts.token_ones == facts.token_ones_repeated == facts.repeated_pairs
    pairs = listing([f"({p}, {q})" for p, q in main.pairs])
    head = (
        f"The diagonal, and exactly the {count(facts.repeated_pairs, 'pair')} of one token, "
        f"such as {quoted(main.token_text, markdown=markdown)} {pairs}."
        if exact
        else f"The diagonal, and {count(facts.token_ones, 'pair')}, {facts.token_ones_repeated} "
        "of them holding one token twice."
    )
    low, high = main.input
    if low >= READS_ONE:
        return f"{head} In the input panel they still read 1.0: nothing tells them apart."
    read = f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f} to {high:.2f}"
    return f"{head} In the input panel they read {read}."


def word_order_answer(comparison: OrderComparison, *, markdown: bool = True) -> str:
    """The answer of the word-order question, from the comparison's numbers, naming the texts
    it compared (the token ids it holds, cut to one window: what the figure draws)."""
    without, positioned = comparison.without_positions, comparison.with_positions
    if not (comparison.token_ids_a and comparison.token_ids_b):
        return "One of the texts is empty: nothing to compare."
    first, second = compared_texts(comparison, markdown=markdown)
    if without is None or positioned is None:
        return (
            f"Yes, trivially: {first} and {second} are not the same tokens in another order, "
            "so there is no word order to compare."
        )
    if comparison.status == "identical":
        return (
            f"No: {first} and {second} are the same tokens in the same order: every number is "
            "the same, with positions or without."
        )
    if without.permuted:
        head = (
            f"No: without positions each context vector of {first} is one of {second}'s, "
            f"reordered; their means have cosine {without.mean_cosine:.6f}."
        )
    else:
        head = (
            f"Yes, partly: between {first} and {second} the causal mask alone breaks the "
            f"symmetry (cosine of the means {without.mean_cosine:.6f})."
        )
    if positioned.permuted:
        return f"{head} With positions too ({positioned.mean_cosine:.6f}): still the same."
    return (
        f"{head} With positions the cosine is {positioned.mean_cosine:.6f}: now attention sees "
        "two different sentences."
    )


# The Training view's slides (issue 26); their answers are posviz.lesson.training's
# neighbour_answer (a run trained from the small init, at its last step) and moving_answer
# (both runs). The lecture ends with them (LECTURE).
TRAINING_STEPS: Final = (
    Step(
        "Watch a positional table learn",
        "The book's GPT trained on The Verdict, its positional table started small, as GPT-2 "
        "starts it: the table after training.",
        view="training",
        question=Question(
            "After training, is position 10 more like position 11 or position 50?",
            "After training, is position 10 more like position 11 or position 50?",
        ),
    ),
    Step(
        "Which table moves?",
        "Two runs, the same seed and text: positions started at N(0, 0.02²) as GPT-2, or at "
        "nn.Embedding's N(0, 1) as section 2.8.",
        view="training",
        question=Question(
            "Which table moves: the one that starts small or the one that starts at N(0, 1)?",
            "Which table moves: the one that starts small or the one that starts at N(0, 1)?",
        ),
    ),
)


# The Length view's slides (issue 41): predict, then reveal, what each scheme's model does past
# the length it was trained on; their answers are posviz.lesson.length's keeps_answer and
# stretch_answer, read from the shipped length runs.
LENGTH_STEPS: Final = (
    Step(
        "Train short, test long",
        "Six copies of the book's GPT, only the positional scheme differs, trained on inputs of "
        "64 tokens of Shakespeare. Held-out text, input of 64: the loss at each position.",
        view="length",
        question=Question(
            "A model trained on 64 tokens reads 256. Which scheme keeps its loss?",
            "A model trained on 64 tokens reads 256. Which scheme keeps its loss?",
        ),
    ),
    Step(
        "Stretch RoPE",
        "RoPE's frequency pairs: how many positions one turn takes, against the 64 it was "
        "trained on, before and with a context extension (YaRN unless the sidebar chooses one).",
        view="length",
        question=Question(
            "Can we stretch RoPE to read 256 tokens without retraining?",
            "Can we stretch RoPE to read 256 tokens without retraining?",
        ),
    ),
)


# The lecture, in the order of the story: section 2.8's steps, then a positional table learning,
# then what the schemes do past the length they learned.
LECTURE: Final = (*STEPS, *TRAINING_STEPS, *LENGTH_STEPS)
SLIDES: Final = slides(LECTURE)
