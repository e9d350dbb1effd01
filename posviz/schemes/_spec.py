"""What a positional scheme is: one :class:`SchemeSpec` holding everything about it.

A scheme acts in one place (:class:`Acts`): it adds vectors to the input embeddings, rotates
the queries and keys, adds a bias to the attention scores, or does nothing. Its spec carries
the functions it computes with (a table, a rotation, a bias; ``None`` where it has none), its
words for the lesson, its colour, the titles of its panels and its options. Every other module
asks the spec; none compares a scheme's name (a test checks).

>>> Acts.ROTATES_QK.value
'rotates the queries and keys'
>>> SchemeOption("x_base", "Base", "its base", "int", 10, low=2, high=99).check(1)
'x_base must be a whole number from 2 to 99, got 1; choose one in that range (default 10)'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Literal

import torch

SchemeName = Literal["learned", "sinusoidal", "none", "rope", "alibi", "t5"]
OptionValue = int | float | str
OptionKind = Literal["int", "float", "choice"]
Options = Mapping[str, OptionValue]  # a scheme's options by name, every one filled in


class Acts(Enum):
    """Where a scheme puts the position."""

    ADDS_TO_INPUT = "adds vectors to the input embeddings"
    ROTATES_QK = "rotates the queries and keys"
    BIASES_SCORES = "adds a bias to the attention scores"
    NOTHING = "nothing"


@dataclass(frozen=True)
class SchemeOption:
    """One setting of a scheme beyond the common ones (RoPE's base, ...), declared once.

    ``name`` is its Settings key and its link parameter (``rope_base=``); the command line's
    flag is ``--`` and the name with dashes (:attr:`flag`); the app draws one widget from
    ``label``, ``help``, ``kind`` and the range. Whole numbers (``int``) and numbers
    (``float``) lie in ``low … high``; a ``choice`` is one of ``choices``.

    ``follows``: the name of a :class:`~posviz.config.Settings` field whose value is the
    default (RoPE's original length follows the context length T); ``Settings.options()``
    reads it there, and ``default`` stands only where no settings are known
    (:func:`posviz.schemes.default_options`). A value set for it is kept even when it equals
    the field's value, so that it stays when the field changes.
    """

    name: str
    label: str
    help: str
    kind: OptionKind
    default: OptionValue
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    # A Settings field whose value is this option's default while it is not set (RoPE's
    # original length follows the context length T); ``default`` is then only its value
    # where no settings are at hand. ``None``: the default is ``default``.
    follows: str | None = None

    @property
    def default_text(self) -> str:
        """Its default in words: ``10,000``, or ``the context_length`` for one that follows."""
        return f"the {self.follows}" if self.follows else _number(self.default)

    @property
    def flag(self) -> str:
        """The command line's flag: ``--rope-base``."""
        return "--" + self.name.replace("_", "-")

    @property
    def allowed(self) -> str:
        """What it takes, in words: ``a whole number from 2 to 99`` or ``one of a, b``."""
        if self.kind == "choice":
            return f"one of {', '.join(self.choices)}"
        what = "a whole number" if self.kind == "int" else "a number"
        return f"{what} from {_number(self.low)} to {_number(self.high)}"

    def check(self, value: object) -> str | None:
        """``None`` if ``value`` is allowed, else a message naming it, the range and the fix."""
        fix = f"; choose one in that range (default {self.default_text})"
        if self.kind == "choice":
            if isinstance(value, str) and value in self.choices:
                return None
            default = self.default_text
            return f"{self.name} must be {self.allowed}, got {value!r} (default {default})"
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (self.kind == "int" and not isinstance(value, int))
            or not math.isfinite(value)
        ):
            return f"{self.name} must be {self.allowed}, got {value!r}{fix}"
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        if not low <= value <= high:
            return f"{self.name} must be {self.allowed}, got {_number(value)}{fix}"
        return None

    def text(self, value: OptionValue) -> str:
        """``value`` as a link or a command line writes it (``500000``, ``0.5``, ``yarn``), so
        that :meth:`parse` reads it back.

        >>> SchemeOption("x", "X", "x", "float", 1.0, low=0, high=9).text(500_000.0)
        '500000'
        """
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return str(value)

    def parse(self, raw: str) -> OptionValue:
        """``raw`` text (a link's, the command line's) as this option's value; ``ValueError``
        with :meth:`check`'s message if it is not one."""
        text = raw.strip()
        value: OptionValue = text
        if self.kind != "choice":
            try:
                value = int(text) if self.kind == "int" else float(text)
            except ValueError:
                value = text
        message = self.check(value)
        if message is not None:
            raise ValueError(message)
        return value


def _number(value: object) -> str:
    """``10,000`` for 10000 or 10000.0; other values as they are."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def _unscaled(dim: int, options: Options) -> float:
    """A rotation that leaves cos and sin as they are."""
    return 1.0


def _nothing_to_say(dim: int, options: Options, length: int) -> str:
    """No sentence about the options."""
    return ""


def _no_shift_note(dim: int, options: Options, tokens: int, shift: int) -> str:
    """Nothing beyond the distance changes when the input moves."""
    return ""


@dataclass(frozen=True)
class Rotation:
    """How a rotating scheme turns a vector at a position.

    ``angles(length, d, options)``: the angles of positions ``0 … length−1`` ``[length, d]``
    (float32, as models compute them), read as an input of ``length`` positions (a rotation
    whose frequencies depend on the length read, such as dynamic NTK, computes them for that
    length: positions ``M … M+n−1`` come from ``angles(M + n, …)[M:]``). ``rotate(x, angles)``
    ``[n, d]``. ``theta(d, options, length)``: each pair's angle per position at that length
    read, ``[d/2]`` float64. ``scale(d, options)``: what cos and sin are multiplied by (1
    for most; YaRN's attention factor), so every score by its square; :meth:`turn` applies it.
    ``describe(d, options, length)``: one sentence saying what the options did to the rotation,
    from the numbers ("" when there is nothing to say). ``shift_note(d, options, n, M)``: why
    moving ``n`` tokens ``M`` positions later changes more than the distance ("" when it does
    not). ``settings_check(options, emb_dim, heads)``: a message naming a value the options
    cannot rotate with, and the fix (``None``: fine).
    """

    angles: Callable[[int, int, Options], torch.Tensor]
    rotate: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    theta: Callable[[int, Options, int], torch.Tensor]
    scale: Callable[[int, Options], float] = _unscaled
    describe: Callable[[int, Options, int], str] = _nothing_to_say
    shift_note: Callable[[int, Options, int, int], str] = _no_shift_note
    settings_check: Callable[[Options, int, int], str | None] | None = None

    def turn(self, x: torch.Tensor, angles: torch.Tensor, options: Options) -> torch.Tensor:
        """``x`` ``[n, d]`` rotated by ``angles`` ``[n, d]`` and multiplied by :attr:`scale`
        (as a model multiplies cos and sin), ``[n, d]``."""
        factor = self.scale(x.shape[-1], options)
        rotated = self.rotate(x, angles)
        return rotated if factor == 1.0 else rotated * factor


@dataclass(frozen=True)
class ScoreBias:
    """How a scheme biases the scores, and its words.

    ``per_distance(values, heads=, seed=)``: the bias of every head at each ``j − i`` in
    ``values`` ``[R]``, ``[H, R]`` float64. ``slopes`` (ALiBi's m per head) and ``table`` (T5's
    seeded E ``[buckets, H]``) where the scheme has them; ``bucket(relative)``: the row of
    ``table`` each ``j − i`` reads (a model that learns the table looks its rows up there).
    """

    per_distance: Callable[..., torch.Tensor]
    slopes: Callable[[int], tuple[float, ...]] | None
    table: Callable[..., torch.Tensor] | None
    line_shape: Literal["linear", "hv"]  # how its chart draws it: a line, or a staircase
    title: str  # its chart's title
    scores_only: str  # "... can tell" (the repeated tokens' sentence)
    inputs: str  # the word-order view's sentence about the input embeddings
    distance_note: str  # the Distance view: why it has no curve
    geometry_note: str  # the Geometry view: why it has no table
    bucket: Callable[[torch.Tensor], torch.Tensor] | None = None  # the row of table per j − i


@dataclass(frozen=True)
class PanelTitles:
    """The titles of its panels ("<br>": where a title breaks best)."""

    embeddings: tuple[str, str, str]  # token | position | input
    similarity: tuple[str, str, str]
    attention_position: str  # the Attention figure's position part


@dataclass(frozen=True)
class SchemeWords:
    """What the lesson says about the scheme (Markdown where shown as Markdown)."""

    note: str  # under the embeddings figure
    position_panel_note: str  # under the similarity figure
    what_it_does: str  # the Attention tab
    name: str  # "the learned scheme", "RoPE"
    scores: str  # "{scores} are unchanged"
    positions: str  # "self-attention with {positions}"
    added: str  # "only {added} tell them apart"
    shape: str  # the shape metric of what it adds: "+ positional embeddings [T, d]"
    table_noun: str  # "table", "encoding": rows 0–8 of the [16, 64] {table_noun}
    table_name: str  # "the sinusoidal table": "positions T… come from the formulas of {}"


@dataclass(frozen=True, eq=False)
class SchemeSpec:
    """One positional scheme: everything posviz knows about it, in one place.

    Compared and hashed by identity: there is one spec per scheme (the registry's).
    """

    name: SchemeName  # the Settings value, the link's ``scheme=``, the command line's choice
    label: str  # the scheme menu
    acts: Acts
    colour: str  # its line and dots in the figures (Okabe & Ito's colour-blind-safe palette)
    table_label: str  # its positional table in the Geometry and Distance figures
    titles: PanelTitles
    words: SchemeWords
    learned: bool = False  # its added table is learned (looked up), not a formula
    table: Callable[[int, int], torch.Tensor] | None = None  # the formula's [T, d] table
    rotation: Rotation | None = None
    bias: ScoreBias | None = None
    options: tuple[SchemeOption, ...] = ()
    # How far the shift test must be able to move a sentence to show what the scheme does far
    # away (T5: past its max_distance, 128), beyond passing the context length T.
    shift_reach: int = 0

    @property
    def adds_to_input(self) -> bool:
        """It adds position vectors to the token vectors (the input embeddings change)."""
        return self.acts is Acts.ADDS_TO_INPUT

    @property
    def rotates(self) -> bool:
        """It rotates the queries and keys by position."""
        return self.acts is Acts.ROTATES_QK

    @property
    def biases_scores(self) -> bool:
        """It adds a bias to the attention scores."""
        return self.acts is Acts.BIASES_SCORES

    @property
    def positionless(self) -> bool:
        """It puts no position anywhere."""
        return self.acts is Acts.NOTHING

    @property
    def formula(self) -> bool:
        """Its positions come from a formula, for any position (no table that ends)."""
        return self.table is not None or self.rotation is not None

    def __repr__(self) -> str:
        return f"SchemeSpec({self.name!r})"
