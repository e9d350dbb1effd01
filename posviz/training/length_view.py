"""The Length view's numbers: train short, test long, read from the shipped length runs.

:func:`build_length` takes :class:`~posviz.config.Settings` and the runs
(:func:`~posviz.training.length.shipped_length_runs`, or the app's cached ones) and gives a
frozen :class:`LengthView`:

* per scheme chosen, the mean held-out loss at every position for inputs of L, 2L and 4L
  (L = the trained length, 64), each band's mean and standard error; a learned table ends at
  L, and its readings past it hold torch's ``IndexError`` instead;
* RoPE's context extension chosen in the settings (``rope_scaling``, ``rope_factor``),
  applied to the trained RoPE run without retraining, when the run read it (s = 2 and 4); no
  extension chosen: the lesson's own, YaRN with s = 4 (:data:`LESSON_EXTENSION`);
* RoPE's frequencies at the runs' head dimension: each pair's wavelength ``2π/θⱼ`` before and
  after the extension, and what it did to the pair (kept, blended, divided), computed by the
  scheme registry (:func:`~posviz.schemes.rope_scaling.scaling_facts`);
* the settings' own sentence read past L: one head's scores under RoPE with and without the
  extension (the Attention view's :func:`~posviz.scores.build_attention`, the sentence moved
  to end at position 4L − 1, RoPE's L₀ the trained L).

Nothing is trained here: every loss is a number the run stored.

>>> view = build_length(Settings())
>>> view.context_length, [curve.spec.name for curve in view.curves][:2]
(64, ['learned', 'sinusoidal'])
>>> view.extension.name, view.extension.chosen, len(view.extension.readings)
('yarn-4', False, 3)
>>> view.attention_plain is not None and view.attention_plain.shown.start >= view.context_length
True
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, cast

from posviz.config import Settings, SettingsError, with_options
from posviz.schemes import SCHEMES, SchemeName
from posviz.schemes._spec import SchemeSpec
from posviz.schemes.rope_scaling import (
    ROPE_BASE,
    SCALING_SPECS,
    RopeConfig,
    Scaling,
    ScalingFacts,
    scaling_facts,
)
from posviz.scores import AttentionView, build_attention
from posviz.training.length import (
    EXTENSIONS,
    MULTIPLES,
    LengthRun,
    Reading,
    shipped_length_runs,
    variant_name,
)
from posviz.view import (
    AttentionFor,
    TablesFor,
    batch_for,
    book_attention,
    build_view,
    seeded_tables,
)

TEXT: Final = "held-out"  # the reading the view shows: text the model never saw
# The extension shown when the settings choose none: the lesson's (issue 41's sentence).
LESSON_EXTENSION: Final[tuple[Scaling, float]] = ("yarn", 4.0)
NO_EXTENSION: Final[Scaling] = "default"


def rotating_scheme() -> SchemeSpec:
    """The scheme the context extensions stretch: the registry's rotating one (RoPE)."""
    return next(spec for spec in SCHEMES if spec.rotation is not None)


@dataclass(frozen=True, eq=False)
class SchemeCurves:
    """One scheme's run read on held-out text at L, 2L and 4L, as trained."""

    spec: SchemeSpec
    readings: tuple[Reading, ...]  # one per multiple of L, in MULTIPLES' order

    @property
    def ends(self) -> int | None:
        """The first length it could not read (a learned table's end), else ``None``."""
        return next((r.length for r in self.readings if r.error), None)

    @property
    def error(self) -> str:
        """torch's words where it could not read ("" if it read every length)."""
        return next((r.error for r in self.readings if r.error), "")


@dataclass(frozen=True, eq=False)
class Extension:
    """RoPE's context extension shown: its scaling, s, its name in a run and its readings."""

    scaling: Scaling
    factor: float
    chosen: bool  # the settings chose it (False: the lesson's, the settings choose none)
    readings: tuple[Reading, ...]  # held-out at L, 2L, 4L; () when the run did not read it

    @property
    def name(self) -> str:
        """Its name in a run: ``yarn-4``."""
        return variant_name(self.scaling, self.factor)

    @property
    def label(self) -> str:
        """``YaRN (s = 4)``."""
        return f"{SCALING_SPECS[self.scaling].label} (s\u00a0=\u00a0{self.factor:g})"

    @property
    def in_runs(self) -> bool:
        """The RoPE run read the model with this extension."""
        return bool(self.readings)


@dataclass(frozen=True, eq=False)
class LengthView:
    """Everything the Length view shows."""

    settings: Settings
    context_length: int  # L: the length the runs were trained on
    multiples: tuple[int, ...]  # the lengths read, as multiples of L
    curves: tuple[SchemeCurves, ...]  # the schemes chosen, in the registry's order
    rope: SchemeCurves | None  # RoPE's run (for the extension), if shipped
    extension: Extension
    frequencies: ScalingFacts  # at the runs' head dimension, L₀ = L
    # the settings' sentence past L under RoPE as trained, and with the extension (None: the
    # text is blank)
    attention_plain: AttentionView | None
    attention_extended: AttentionView | None
    notices: tuple[str, ...]  # what the view could not show as asked, in words

    @property
    def lengths(self) -> tuple[int, ...]:
        """The input lengths read: L, 2L, 4L."""
        return tuple(m * self.context_length for m in self.multiples)

    @property
    def longest(self) -> int:
        """4L."""
        return self.lengths[-1]

    @property
    def head_dim(self) -> int:
        """The runs' head dimension (the frequencies panel's)."""
        return self.frequencies.head_dim

    @property
    def nbytes(self) -> int:
        """Memory its tensors hold (a cache's measure)."""
        curves = (*self.curves, *(() if self.rope is None else (self.rope,)))
        readings = [r for c in curves for r in c.readings] + list(self.extension.readings)
        held = sum(
            t.numel() * t.element_size() for r in readings for t in (r.position_loss, r.band_loss)
        )
        shown = (self.attention_plain, self.attention_extended)
        return int(held + sum(view.nbytes for view in shown if view is not None))

    def with_schemes(self, names: Sequence[str] | None) -> LengthView:
        """This view with the curves of ``names`` only (``None``: every one it has), in the
        registry's order; ``SettingsError`` naming an unknown scheme. Nothing else in the view
        depends on which schemes are drawn, so a page keeps one view per settings and asks
        this of it."""
        wanted = {spec.name for spec in chosen_schemes(names, {c.spec.name for c in self.curves})}
        return replace(self, curves=tuple(c for c in self.curves if c.spec.name in wanted))

    @property
    def scores_change(self) -> float:
        """The largest change the extension makes to the sentence's scores (cells ``j ≤ i``)."""
        if self.attention_plain is None or self.attention_extended is None:
            return 0.0
        change = self.attention_extended.shown.scores - self.attention_plain.shown.scores
        return float(change.nan_to_num(0.0).abs().max())


def band(reading: Reading) -> tuple[int, int]:
    """The positions a reading's band covers: the second half of its input, first and last.

    >>> band(Reading("held-out", 256, "", *(2 * [__import__("torch").empty(0)])))
    (128, 255)
    """
    return reading.length // 2, reading.length - 1


def chosen_schemes(names: Sequence[str] | None, runs: Collection[str]) -> list[SchemeSpec]:
    """The registry's schemes among ``names`` (``None``: all) that have a run, in its order;
    ``SettingsError`` naming an unknown one."""
    known = {spec.name for spec in SCHEMES}
    unknown = [name for name in names or () if name not in known]
    if unknown:
        raise SettingsError(
            f"schemes must be among {', '.join(sorted(known))}, got {', '.join(unknown)}"
        )
    wanted = known if names is None else set(names)
    return [spec for spec in SCHEMES if spec.name in wanted and spec.name in runs]


def _curves(run: LengthRun, variant: str = "") -> tuple[Reading, ...]:
    """``run`` read on held-out text at L, 2L and 4L with ``variant``."""
    return tuple(run.reading(TEXT, multiple, variant) for multiple in MULTIPLES)


def _extension(settings: Settings, rope_run: LengthRun | None) -> tuple[Extension, list[str]]:
    scaling = cast(Scaling, settings.option("rope_scaling"))
    factor = float(settings.option("rope_factor"))
    notices = []
    chosen = scaling != NO_EXTENSION
    if not chosen:
        scaling, factor = LESSON_EXTENSION
    readings: tuple[Reading, ...] = ()
    name = variant_name(scaling, factor)
    if rope_run is not None and (scaling, factor) in EXTENSIONS:
        readings = _curves(rope_run, name)
    elif rope_run is not None and (held := sorted({f for s, f in EXTENSIONS if s == scaling})):
        notices.append(
            f"The RoPE run was read with {SCALING_SPECS[scaling].label} at s = "
            f"{' and '.join(f'{f:g}' for f in held)}, not s = {factor:g}: the frequencies "
            "below are s = "
            f"{factor:g}'s, the losses RoPE's as trained (choose s = {held[-1]:g} to see its "
            "losses; `posviz train` reads no other)."
        )
    elif rope_run is not None:  # a scaling newer than the shipped runs
        read = sorted({SCALING_SPECS[cast(Scaling, s)].label for s, _ in EXTENSIONS})
        notices.append(
            f"The shipped RoPE run was never read with {SCALING_SPECS[scaling].label}: the "
            f"frequencies below are s = {factor:g}'s, the losses RoPE's as trained (the runs "
            f"were read with {', '.join(read)})."
        )
    return Extension(scaling, factor, chosen, readings), notices


def _attention_settings(settings: Settings, config: RopeConfig, longest: int) -> Settings:
    """The settings' sentence under RoPE (the book's seeded tables), moved to end at position
    ``longest − 1`` and at least past L₀, with ``config``'s scaling."""
    batch = batch_for(settings)
    tokens = batch.window_length if batch.num_windows else 0
    shift = max(config.original_length, longest - tokens)
    moved = replace(settings, scheme=rotating_scheme().name, weights="init", shift=shift)
    return with_options(
        moved,
        rope_base=ROPE_BASE,
        rope_scaling=config.scaling,
        rope_factor=config.factor,
        rope_original=config.original_length,
    )


def build_length(
    settings: Settings,
    *,
    runs: Mapping[SchemeName, LengthRun] | None = None,
    schemes: Sequence[str] | None = None,
    tables: TablesFor = seeded_tables,
    attention: AttentionFor = book_attention,
) -> LengthView:
    """The Length view for ``settings`` (see the module docstring).

    ``runs``: the length runs by scheme (default: the shipped ones, read now); ``schemes``:
    the schemes whose curves to show (default: every one with a run); ``tables`` and
    ``attention`` as for :func:`~posviz.scores.build_attention`. ``SettingsError`` for an
    unknown scheme or a text the Attention view cannot read.
    """
    found = dict(shipped_length_runs() if runs is None else runs)
    if not found:
        raise SettingsError("there is no length run: posviz/data/length/ holds none")
    rotating = rotating_scheme()
    rope_run = found.get(rotating.name)
    lengths = {run.config.context_length for run in found.values()}
    if len(lengths) != 1:
        raise SettingsError(f"the length runs were trained at different lengths: {lengths}")
    context_length = lengths.pop()
    curves = tuple(
        SchemeCurves(spec, _curves(found[spec.name]))
        for spec in chosen_schemes(schemes, set(found))
    )
    extension, notices = _extension(settings, rope_run)
    config = RopeConfig(
        base=ROPE_BASE,
        scaling=extension.scaling,
        factor=extension.factor,
        original_length=context_length,
    )
    some_run = rope_run or next(iter(found.values()))
    head_dim = some_run.config.emb_dim // some_run.config.n_heads
    longest = MULTIPLES[-1] * context_length
    frequencies = scaling_facts(head_dim, config, length_read=longest)
    plain = RopeConfig(base=ROPE_BASE, original_length=context_length)
    scored = [
        build_attention(build_view(moved, tables=tables), tables=tables, attention=attention)
        for moved in (_attention_settings(settings, rope, longest) for rope in (plain, config))
        if batch_for(moved).num_windows
    ]
    if not extension.chosen:
        notices.insert(
            0,
            f"No RoPE scaling is chosen (RoPE's option rope_scaling): the view shows "
            f"{extension.label}, the lesson's.",
        )
    return LengthView(
        settings=settings,
        context_length=context_length,
        multiples=MULTIPLES,
        curves=curves,
        rope=None if rope_run is None else SchemeCurves(rotating, _curves(rope_run)),
        extension=extension,
        frequencies=frequencies,
        attention_plain=scored[0] if scored else None,
        attention_extended=scored[-1] if scored else None,
        notices=tuple(notices),
    )
