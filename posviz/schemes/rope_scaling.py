"""RoPE's context extensions: how its frequencies are stretched past the length it was trained on.

RoPE rotates dimension pair ``(j, j + h/2)`` of a query or key at position ``p`` by
``p · inv_freq[j]``, with ``inv_freq[j] = base^(−2j/h)`` (``h`` the rotated head dimension; the
split-halves pairing of the book's ``llama3.py``). A model trained on ``original_length`` (L₀)
positions has never seen the slow pairs turn further than ``L₀ · inv_freq[j]``; each scaling
changes ``inv_freq`` (and, for YaRN, the size of cos and sin) so that a longer input stays in
familiar angles. Every formula is computed as Hugging Face transformers 5.17.0's
``modeling_rope_utils.py`` computes it (the same float32 operations in the same order):

* ``default``: no scaling (transformers' ``compute_default_rope_parameters``).
* ``linear``, Position Interpolation (Chen et al. 2023): every frequency divided by ``s``.
* ``ntk``, NTK-aware scaling (bloc97, 2023): the base raised to ``base · s^(h/(h−2))``, which
  keeps the fastest pair and divides the slowest by exactly ``s``.
* ``dynamic``, dynamic NTK (emozilla, 2023): the base ``base · ((s·L/L₀) − (s − 1))^(h/(h−2))``
  with ``L = max(length read, L₀)``: unscaled up to L₀, stretched more as the input grows.
* ``ntk_parts``, NTK-by-parts (bloc97, 2023; Peng et al. 2023, section 3.2): YaRN's ramp
  without its attention factor (transformers' ``yarn`` with ``attention_factor = 1``).
* ``yarn`` (Peng et al. 2023): pairs that turn more than ``β_fast = 32`` times within L₀ kept,
  pairs that turn less than ``β_slow = 1`` time divided by ``s``, a linear ramp between; cos
  and sin multiplied by the attention factor ``0.1 · ln s + 1``.
* ``llama3`` (Llama 3.1, the book's ``compute_rope_params(freq_config=...)``): wavelengths under
  ``L₀ / high_freq_factor`` (4) kept, over ``L₀ / low_freq_factor`` (1) divided by ``s``, a
  smooth blend between.

Formulas and their facts only (which pairs were kept, divided or blended, and one sentence
that says so): the page's other words live in :mod:`posviz.lesson`.

>>> config = RopeConfig(scaling="yarn", factor=4.0, original_length=64)
>>> inv_freq, attention_factor = inv_freq_and_factor(32, config, length_read=64)
>>> inv_freq.shape, round(attention_factor, 4)
(torch.Size([16]), 1.1386)
>>> import textwrap
>>> print(textwrap.fill(scaling_sentence(scaling_facts(32, config, length_read=64)), 90))
YaRN with s = 4 keeps the fastest of 16 frequency pairs, divides the 11 slowest by 4 and
the 4 between by 1.18 to 2.5; cos and sin are multiplied by 1.139 (0.1 · ln 4 + 1), so
every score by its square.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, assert_never, get_args

import torch

Scaling = Literal["default", "linear", "ntk", "dynamic", "ntk_parts", "yarn", "llama3"]
SCALINGS: Final[tuple[Scaling, ...]] = get_args(Scaling)
Treatment = Literal["kept", "blended", "divided"]  # what a scaling did to one frequency pair

ROPE_BASE: Final = 10_000.0  # theta base of the Transformer paper and of Llama 2
# The ranges a RopeConfig accepts. The base must be above 1 (base^(−2j/h) must fall with j);
# Llama 3 uses 500,000 and some long-context models a few million.
ROPE_BASE_RANGE: Final = (1.0, 10_000_000.0)  # the low end excluded
ROPE_FACTOR_RANGE: Final = (1.0, 128.0)  # s; Llama 3.2 uses 32
ROPE_ORIGINAL_RANGE: Final = (1, 131_072)  # L₀; Llama 3.1's longest context is 131,072
# YaRN's defaults (transformers: ``beta_fast``, ``beta_slow``, ``truncate``) and Llama 3.1's.
YARN_BETA_FAST: Final = 32  # a pair that turns more often than this within L₀ is kept
YARN_BETA_SLOW: Final = 1  # a pair that turns less often than this within L₀ is divided by s
YARN_TRUNCATE: Final = True  # the band edges rounded outwards to whole pairs (floor / ceil)
LLAMA3_LOW_FREQ_FACTOR: Final = 1.0  # wavelengths over L₀ / 1 are divided by s
LLAMA3_HIGH_FREQ_FACTOR: Final = 4.0  # wavelengths under L₀ / 4 are kept


@dataclass(frozen=True, kw_only=True)
class RopeConfig:
    """RoPE's base and its scaling, checked when made (:func:`check_rope` names a bad value).

    >>> RopeConfig(original_length=16)
    RopeConfig(base=10000.0, scaling='default', factor=4.0, original_length=16)
    """

    base: float = ROPE_BASE  # theta base; Llama 2 uses 10,000, Llama 3 500,000
    scaling: Scaling = "default"  # "default": none
    factor: float = 4.0  # s: how many times longer an input the scaling prepares for
    original_length: int  # L₀: the context length the model was trained on (posviz: T)

    def __post_init__(self) -> None:
        check_rope(self)


def check_rope(config: RopeConfig) -> RopeConfig:
    """Return ``config`` if its values are in range, else raise ``ValueError`` naming the value,
    its range and the fix.

    >>> RopeConfig(factor=0.5, original_length=16)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: RoPE factor s must be a number from 1 to 128, got 0.5: s = 1 leaves RoPE as ...
    """
    if config.scaling not in SCALINGS:
        raise ValueError(
            f"RoPE scaling must be one of {', '.join(SCALINGS)}, got {config.scaling!r}: "
            "use default for no scaling"
        )
    low, high = ROPE_BASE_RANGE
    if not _is_number(config.base) or not low < config.base <= high:
        raise ValueError(
            f"RoPE base must be a number above {low:g} and at most {high:,.0f}, got "
            f"{config.base!r}: Llama 2 uses 10,000, Llama 3 500,000"
        )
    low, high = ROPE_FACTOR_RANGE
    if not _is_number(config.factor) or not low <= config.factor <= high:
        raise ValueError(
            f"RoPE factor s must be a number from {low:g} to {high:g}, got {config.factor!r}: "
            "s = 1 leaves RoPE as trained, s = 4 prepares it for 4 times original_length"
        )
    low_length, high_length = ROPE_ORIGINAL_RANGE
    length = config.original_length
    if isinstance(length, bool) or not isinstance(length, int):
        raise ValueError(
            f"RoPE original_length L₀ must be a whole number from {low_length} to "
            f"{high_length:,}, got {length!r}: the context length the model was trained on"
        )
    if not low_length <= length <= high_length:
        raise ValueError(
            f"RoPE original_length L₀ must be from {low_length} to {high_length:,}, got "
            f"{length}: the context length the model was trained on (posviz's default: T)"
        )
    return config


def _is_number(value: object) -> bool:
    """A finite int or float, not a bool."""
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


@dataclass(frozen=True)
class _Scaled:
    """What one scaling computed: the frequencies, the factor on cos and sin, the base they
    come from, and how far each pair moved towards ``inv_freq / s`` (0 kept, 1 divided)."""

    inv_freq: torch.Tensor  # [h/2] float32
    attention_factor: float
    base: float  # the base used: raised by ntk and dynamic, else the config's
    interpolated: torch.Tensor  # [h/2] float32, 0 ... 1


def _default_inv_freq(dim: int, base: float | torch.Tensor) -> torch.Tensor:
    """``1 / base^(2j/h)`` for ``j = 0 … h/2 − 1``: [h/2] float32 (transformers' default)."""
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float) / dim))


def _default(dim: int, config: RopeConfig, length_read: int) -> _Scaled:
    """No scaling: every pair as trained."""
    inv_freq = _default_inv_freq(dim, config.base)
    return _Scaled(inv_freq, 1.0, config.base, torch.zeros_like(inv_freq))


def _linear(dim: int, config: RopeConfig, length_read: int) -> _Scaled:
    """Position Interpolation (``_compute_linear_scaling_rope_parameters``): ``inv_freq / s``,
    the same as reading position ``p`` as ``p / s``."""
    inv_freq = _default_inv_freq(dim, config.base) / config.factor
    return _Scaled(inv_freq, 1.0, config.base, torch.ones_like(inv_freq))


def _ntk_share(dim: int) -> torch.Tensor:
    """How far pair ``j`` moves towards ``inv_freq / s`` when the base is raised by
    ``s^(h/(h−2))``: it is divided by ``s^(2j/(h−2))``, so the share is ``2j / (h − 2)``."""
    return torch.arange(0, dim, 2, dtype=torch.float) / (dim - 2)


def _ntk(dim: int, config: RopeConfig, length_read: int) -> _Scaled:
    """NTK-aware scaling: the base raised to ``base · s^(h/(h−2))`` (float64, as Python
    computes it), then the default frequencies."""
    base = config.base * config.factor ** (dim / (dim - 2))
    inv_freq = _default_inv_freq(dim, base)
    share = _ntk_share(dim) if config.factor > 1 else torch.zeros_like(inv_freq)
    return _Scaled(inv_freq, 1.0, base, share)


def _dynamic(dim: int, config: RopeConfig, length_read: int) -> _Scaled:
    """Dynamic NTK (``_compute_dynamic_ntk_parameters``): ``base · ((s·L/L₀) − (s − 1))^(h/(h−2))``
    with ``L = max(length read, L₀)``.

    As a fresh transformers model does: up to L₀ it keeps the frequencies made at start-up
    (``seq_len`` None, so ``L = L₀`` in Python floats: the base unchanged); past L₀ its
    forward reads ``seq_len = max(position_ids) + 1``, a tensor, so the new base is a float32
    tensor."""
    original = config.original_length
    if length_read <= original:
        stretch = (config.factor * original / original) - (config.factor - 1)  # 1: unscaled
        base: float | torch.Tensor = config.base * stretch ** (dim / (dim - 2))
    else:
        seq_len = torch.maximum(torch.tensor(length_read), torch.tensor(original))  # int64
        base = config.base * ((config.factor * seq_len / original) - (config.factor - 1)) ** (
            dim / (dim - 2)
        )
    inv_freq = _default_inv_freq(dim, base)
    share = _ntk_share(dim) if float(base) != config.base else torch.zeros_like(inv_freq)
    return _Scaled(inv_freq, 1.0, float(base), share)


def _yarn_correction_range(dim: int, config: RopeConfig) -> tuple[float, float]:
    """The pairs where YaRN's ramp starts and ends: ``h · ln(L₀ / (2π · r)) / (2 · ln base)``
    for ``r = β_fast`` and ``r = β_slow`` rotations within L₀ (the pair that turns ``r`` times),
    floored / ceiled to whole pairs and kept within ``0 … h − 1``."""

    def correction_dim(rotations: int) -> float:
        turns = config.original_length / (rotations * 2 * math.pi)
        return (dim * math.log(turns)) / (2 * math.log(config.base))

    low, high = correction_dim(YARN_BETA_FAST), correction_dim(YARN_BETA_SLOW)
    if YARN_TRUNCATE:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, dim - 1)


def _yarn(dim: int, config: RopeConfig, length_read: int) -> _Scaled:
    """YaRN (``_compute_yarn_parameters``, ``mscale`` and ``attention_factor`` unset): a
    linear ramp from the original frequencies (extrapolation) to ``inv_freq / s``
    (interpolation) between the correction range's pairs; cos and sin multiplied by
    ``0.1 · ln s + 1`` (1 for ``s = 1``)."""
    factor = config.factor
    attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    pos_freqs = config.base ** (torch.arange(0, dim, 2).to(dtype=torch.float) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    low, high = _yarn_correction_range(dim, config)
    if low == high:
        high += 0.001  # transformers' guard against a zero-width ramp
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    extrapolation_factor = 1 - ramp  # 1: the pair is kept
    inv_freq = (
        inv_freq_interpolation * (1 - extrapolation_factor)
        + inv_freq_extrapolation * extrapolation_factor
    )
    return _Scaled(inv_freq, attention_factor, config.base, 1 - extrapolation_factor)


def _ntk_parts(dim: int, config: RopeConfig, length_read: int) -> _Scaled:
    """NTK-by-parts: YaRN's frequencies, cos and sin left as they are (the step before YaRN,
    whose attention factor is what it adds)."""
    yarn = _yarn(dim, config, length_read)
    return _Scaled(yarn.inv_freq, 1.0, yarn.base, yarn.interpolated)


def _llama3(dim: int, config: RopeConfig, length_read: int) -> _Scaled:
    """Llama 3.1 (``_compute_llama3_parameters``; the book's ``compute_rope_params`` with its
    ``freq_config``): wavelengths under ``L₀ / 4`` kept, over ``L₀`` divided by ``s``, and
    between them ``(1 − smooth) · inv_freq / s + smooth · inv_freq`` with
    ``smooth = (L₀ / wavelength − 1) / (4 − 1)``."""
    inv_freq = _default_inv_freq(dim, config.base)
    factor, original = config.factor, config.original_length
    low_freq_wavelen = original / LLAMA3_LOW_FREQ_FACTOR
    high_freq_wavelen = original / LLAMA3_HIGH_FREQ_FACTOR
    wavelen = 2 * math.pi / inv_freq
    slow = wavelen > low_freq_wavelen
    inv_freq_llama = torch.where(slow, inv_freq / factor, inv_freq)
    smooth_factor = (original / wavelen - LLAMA3_LOW_FREQ_FACTOR) / (
        LLAMA3_HIGH_FREQ_FACTOR - LLAMA3_LOW_FREQ_FACTOR
    )
    smoothed_inv_freq = (
        1 - smooth_factor
    ) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~slow
    inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    share = torch.where(is_medium_freq, 1 - smooth_factor, slow.to(torch.float32))
    return _Scaled(inv_freq_llama, 1.0, config.base, share)


# --- the facts a lesson reads -------------------------------------------------------------------


@dataclass(frozen=True)
class PairFact:
    """One frequency pair ``j`` (dimensions ``j`` and ``j + h/2``) before and after the scaling.

    ``wavelength_*`` is ``2π / inv_freq[j]`` in positions (the positions one full turn takes);
    ``interpolated`` how far the pair moved towards ``inv_freq / s``: 0 kept, 1 divided (by
    ``s``; for dynamic NTK by its stretch at the length read), between blended (YaRN's ramp,
    Llama 3's smooth factor, the NTK bases' ``2j / (h − 2)``).
    """

    pair: int
    wavelength_before: float
    wavelength_after: float
    interpolated: float
    treatment: Treatment

    @property
    def divisor(self) -> float:
        """How many times slower the pair turns: 1 kept, about ``s`` divided."""
        return self.wavelength_after / self.wavelength_before


@dataclass(frozen=True)
class ScalingFacts:
    """What a scaling did to RoPE at one head dimension and length read, from the numbers."""

    config: RopeConfig
    head_dim: int
    length_read: int
    base: float  # the base the frequencies come from (raised by ntk and dynamic)
    attention_factor: float
    pairs: tuple[PairFact, ...]  # fastest first

    @property
    def rotated_dim(self) -> int:
        """``h``: the dimensions RoPE rotates (an odd last one is not)."""
        return 2 * len(self.pairs)

    def count(self, treatment: Treatment) -> int:
        """How many pairs got ``treatment``."""
        return sum(pair.treatment == treatment for pair in self.pairs)

    def divisors(self, treatment: Treatment) -> tuple[float, ...]:
        """The divisors of the pairs that got ``treatment``, fastest first."""
        return tuple(pair.divisor for pair in self.pairs if pair.treatment == treatment)

    def wavelengths(self, *, after: bool) -> tuple[float, ...]:
        """Every pair's wavelength before (``after=False``) or after the scaling."""
        return tuple(p.wavelength_after if after else p.wavelength_before for p in self.pairs)


def _number(value: float) -> str:
    """``43,871`` from 1,000 on, else three significant digits (``6.28``, ``4``)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _span(values: tuple[float, ...]) -> str:
    """``1.22 to 3.36``, or one number when they round alike."""
    low, high = _number(min(values)), _number(max(values))
    return low if low == high else f"{low} to {high}"


def _group(count: int, total: int, adjective: str) -> str:
    """``all 16``, ``the fastest``, ``the 5 fastest``; ``the one between``, ``the 2 others``."""
    if count == total:
        return f"all {total}"
    if count > 1:
        return f"the {count} {adjective}"
    return {"between": "the one between", "others": "the other"}.get(adjective, f"the {adjective}")


def _treatments(facts: ScalingFacts) -> str:
    """``keeps the 5 fastest of 16 frequency pairs, divides the 9 slowest by 4 and the 2
    between by 1.22 to 3.36``: each count read from the facts."""
    total = len(facts.pairs)
    kept, blended, divided = (facts.count(t) for t in ("kept", "blended", "divided"))
    clauses: list[tuple[str, str, str]] = []  # verb, group, what follows
    if kept:
        clauses.append(("keeps", _group(kept, total, "fastest"), ""))
    if divided:
        clauses.append(
            (
                "divides",
                _group(divided, total, "slowest"),
                f" by {_span(facts.divisors('divided'))}",
            )
        )
    if blended:
        verb = "" if divided else "divides"  # "... divides the 9 slowest by 4 and the 2 between"
        group = _group(blended, total, "between" if kept and divided else "others")
        clauses.append((verb, group, f" by {_span(facts.divisors('blended'))}"))
    noun = "frequency pair" if total == 1 else "frequency pairs"
    verb, group, rest = clauses[0]
    group = f"{group} {noun}" if group.startswith("all") else f"{group} of {total} {noun}"
    words = [f"{verb} {group}{rest}"] + [f"{v} {g}{r}".strip() for v, g, r in clauses[1:]]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _say_default(facts: ScalingFacts, label: str) -> str:
    return (
        f"{label} with base {_number(facts.config.base)} and no scaling {_treatments(facts)}: "
        f"wavelengths from {_span(facts.wavelengths(after=False))} positions."
    )


def _say_linear(facts: ScalingFacts, label: str) -> str:
    return (
        f"{label} with s = {facts.config.factor:g} {_treatments(facts)}: wavelengths from "
        f"{_span(facts.wavelengths(after=True))} positions instead of "
        f"{_span(facts.wavelengths(after=False))}."
    )


def _say_ntk(facts: ScalingFacts, label: str) -> str:
    config, h = facts.config, facts.rotated_dim
    return (
        f"{label} with s = {config.factor:g} raises the base from {_number(config.base)} to "
        f"{_number(facts.base)} ({_number(config.base)} · {config.factor:g}^({h}/{h - 2})): "
        f"it {_treatments(facts)}."
    )


def _say_dynamic(facts: ScalingFacts, label: str) -> str:
    config, h = facts.config, facts.rotated_dim
    length, original = facts.length_read, config.original_length
    if facts.count("kept") == len(facts.pairs):
        return (
            f"{label}'s base depends on the length read: at {length:,} tokens read (no more "
            f"than L₀ = {original:,}) it stays {_number(facts.base)} and the scaling "
            f"{_treatments(facts)}; past {original:,} tokens the base grows."
        )
    stretch = f"{config.factor:g}·{length:,}/{original:,} − {config.factor - 1:g}"
    return (
        f"{label}'s base depends on the length read: at {length:,} tokens read it is "
        f"{_number(config.base)} · ({stretch})^({h}/{h - 2}) = {_number(facts.base)}, so it "
        f"{_treatments(facts)}."
    )


def _say_ntk_parts(facts: ScalingFacts, label: str) -> str:
    return (
        f"{label} with s = {facts.config.factor:g} {_treatments(facts)}; cos and sin are left "
        "as they are (YaRN's ramp without its attention factor)."
    )


def _say_yarn(facts: ScalingFacts, label: str) -> str:
    s = f"{facts.config.factor:g}"
    return (
        f"{label} with s = {s} {_treatments(facts)}; cos and sin are multiplied by "
        f"{facts.attention_factor:.4g} (0.1 · ln {s} + 1), so every score by its square."
    )


def _say_llama3(facts: ScalingFacts, label: str) -> str:
    original = facts.config.original_length
    return (
        f"{label} with s = {facts.config.factor:g} {_treatments(facts)}: wavelengths under "
        f"L₀/{LLAMA3_HIGH_FREQ_FACTOR:g} = {_number(original / LLAMA3_HIGH_FREQ_FACTOR)} "
        f"positions are kept, over L₀ = {original:,} divided."
    )


@dataclass(frozen=True)
class ScalingSpec:
    """One scaling: its name, its label in the lesson, the function that says what it did
    (:func:`_compute` computes it) and its clause in the option's help ("" for none)."""

    name: Scaling
    label: str
    say: Callable[[ScalingFacts, str], str]
    hint: str = ""


# One entry per scaling, as transformers' ROPE_INIT_FUNCTIONS (a test checks it covers them all).
SCALING_SPECS: Final[Mapping[Scaling, ScalingSpec]] = {
    spec.name: spec
    for spec in (
        ScalingSpec("default", "RoPE", _say_default),
        ScalingSpec(
            "linear", "Position Interpolation", _say_linear,
            "linear (Position Interpolation) divides every frequency by s",
        ),
        ScalingSpec("ntk", "NTK-aware scaling", _say_ntk, "ntk raises the base"),
        ScalingSpec(
            "dynamic", "Dynamic NTK", _say_dynamic,
            "dynamic raises it by how long the input is",
        ),
        ScalingSpec(
            "ntk_parts", "NTK-by-parts", _say_ntk_parts,
            "ntk_parts (NTK-by-parts) keeps the fast pairs and divides the slow ones by s",
        ),
        ScalingSpec("yarn", "YaRN", _say_yarn, "yarn does the same and scales cos and sin"),
        ScalingSpec(
            "llama3", "Llama 3 scaling", _say_llama3,
            "llama3 (Llama 3.1) keeps short wavelengths and divides long ones",
        ),
    )
}  # fmt: skip
SCALING_HELP: Final = (
    "How RoPE is stretched past the length L₀ it was trained on: "
    + "; ".join(spec.hint for spec in SCALING_SPECS.values() if spec.hint)
    + "."
)  # the rope_scaling option's help, a clause per scaling


def _compute(dim: int, config: RopeConfig, length_read: int) -> _Scaled:
    """``config``'s scaling at rotated head dimension ``dim`` (a match, not a table, so that a
    script can copy it)."""
    match config.scaling:
        case "default":
            return _default(dim, config, length_read)
        case "linear":
            return _linear(dim, config, length_read)
        case "ntk":
            return _ntk(dim, config, length_read)
        case "dynamic":
            return _dynamic(dim, config, length_read)
        case "ntk_parts":
            return _ntk_parts(dim, config, length_read)
        case "yarn":
            return _yarn(dim, config, length_read)
        case "llama3":
            return _llama3(dim, config, length_read)
        case unknown:
            assert_never(unknown)


def _scaled(head_dim: int, config: RopeConfig, length_read: int) -> _Scaled:
    """Check ``head_dim`` and ``length_read``, then compute ``config``'s scaling."""
    if isinstance(head_dim, bool) or not isinstance(head_dim, int) or head_dim < 1:
        raise ValueError(f"head_dim must be a whole number of 1 or more, got {head_dim!r}")
    if isinstance(length_read, bool) or not isinstance(length_read, int) or length_read < 1:
        raise ValueError(
            f"length_read must be a whole number of 1 or more (the largest position read + 1), "
            f"got {length_read!r}"
        )
    dim = head_dim - head_dim % 2  # h: an odd last dimension is not rotated
    if config.scaling in ("ntk", "dynamic") and dim == 2:
        raise ValueError(
            f"{'NTK-aware scaling' if config.scaling == 'ntk' else 'Dynamic NTK'} needs a head "
            "dimension of 4 or more (its "
            f"exponent h/(h − 2) divides by h − 2), got head_dim {head_dim}: use fewer heads "
            "or a larger emb_dim"
        )
    return _compute(dim, config, length_read)


def inv_freq_and_factor(
    head_dim: int, config: RopeConfig, *, length_read: int
) -> tuple[torch.Tensor, float]:
    """RoPE's frequencies under ``config``'s scaling and the attention factor that multiplies
    cos and sin, as transformers' ``ROPE_INIT_FUNCTIONS[...]`` returns them: ``inv_freq``
    ``[head_dim // 2]`` float32 (pair ``j`` rotates dimensions ``j`` and ``j + head_dim // 2``)
    and a float (1 except for YaRN).

    ``length_read`` is the largest position read + 1 (transformers' ``seq_len``); only
    dynamic NTK reads it. An odd ``head_dim`` leaves its last dimension unrotated.

    >>> inv_freq, factor = inv_freq_and_factor(8, RopeConfig(scaling="linear", factor=2.0,
    ...     original_length=16), length_read=16)
    >>> inv_freq, factor
    (tensor([0.5000, 0.0500, 0.0050, 0.0005]), 1.0)
    """
    scaled = _scaled(head_dim, config, length_read)
    return scaled.inv_freq, scaled.attention_factor


def _pair_angles(positions: torch.Tensor, inv_freq: torch.Tensor, head_dim: int) -> torch.Tensor:
    """``position · inv_freq[j]`` for dimensions ``j`` and ``j + h/2``, 0 for an odd last
    dimension: ``[n, head_dim]`` float32."""
    angles = positions.to(torch.float32)[:, None] * inv_freq[None, :]  # [n, h/2]
    pad = torch.zeros(len(positions), head_dim % 2)  # odd head_dim: one unrotated dimension
    return torch.cat([angles, angles, pad], dim=1)


def scaled_rope_angles(
    positions: torch.Tensor, head_dim: int, config: RopeConfig, *, length_read: int
) -> torch.Tensor:
    """The angle each dimension of a query or key at ``positions`` (``[n]``, integers) is
    rotated by: ``[n, head_dim]`` float32, split halves (dimension ``j`` and ``j + h/2``
    share a frequency), 0 for an odd last dimension. With ``scaling="default"`` and base
    10,000 these are :func:`posviz.schemes.scaled_rope_angles`'s angles, bit for bit.

    >>> scaled_rope_angles(torch.arange(3), 4, RopeConfig(original_length=3), length_read=3)
    tensor([[0.0000, 0.0000, 0.0000, 0.0000],
            [1.0000, 0.0100, 1.0000, 0.0100],
            [2.0000, 0.0200, 2.0000, 0.0200]])
    """
    inv_freq, _ = inv_freq_and_factor(head_dim, config, length_read=length_read)
    return _pair_angles(positions, inv_freq, head_dim)


def rope_cos_sin(
    positions: torch.Tensor, head_dim: int, config: RopeConfig, *, length_read: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos`` and ``sin`` of :func:`scaled_rope_angles`, each times the attention factor (YaRN's
    ``0.1 · ln s + 1``, else 1), as transformers' rotary embedding returns them: two
    ``[n, head_dim]`` float32 tables for :func:`rotate`. An odd last dimension gets
    ``cos = factor``, ``sin = 0``: scaled like the rest, not rotated.

    >>> cos, sin = rope_cos_sin(torch.arange(2), 2, RopeConfig(scaling="yarn",
    ...     original_length=16), length_read=2)
    >>> cos
    tensor([[1.1386, 1.1386],
            [0.6152, 0.6152]])
    """
    scaled = _scaled(head_dim, config, length_read)
    angles = _pair_angles(positions, scaled.inv_freq, head_dim)  # [n, head_dim]
    return angles.cos() * scaled.attention_factor, angles.sin() * scaled.attention_factor


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate the pairs ``(x[j], x[j + h/2])`` of each row of ``x`` ``[n, d]`` by the tables of
    :func:`rope_cos_sin`: ``x · cos + rotate_half(x) · sin`` (transformers'
    ``apply_rotary_pos_emb``, the book's ``apply_rope``), ``[n, d]``. An odd last dimension is
    multiplied by its ``cos``. :func:`posviz.schemes.rope_rotate` is this rotation with
    ``cos`` and ``sin`` of its angles.

    >>> rotate(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 0.0]]), torch.tensor([[1.0, 1.0]]))
    tensor([[0., 1.]])
    """
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half : 2 * half]  # [n, d/2] each
    rest = x[..., 2 * half :]  # [n, d % 2]: an odd last dimension, not rotated
    rotated = torch.cat((-x2, x1, torch.zeros_like(rest)), dim=-1)  # [n, d]
    return x * cos + rotated * sin


def _treatment(interpolated: float) -> Treatment:
    if interpolated <= 0:
        return "kept"
    return "divided" if interpolated >= 1 else "blended"


def scaling_facts(head_dim: int, config: RopeConfig, *, length_read: int) -> ScalingFacts:
    """Each pair's wavelength before (the same base, no scaling) and after ``config``'s
    scaling, and whether it was kept, blended or divided.

    >>> facts = scaling_facts(16, RopeConfig(scaling="llama3", factor=8.0,
    ...     original_length=64), length_read=64)
    >>> [facts.count(t) for t in ("kept", "blended", "divided")]
    [1, 2, 5]
    """
    scaled = _scaled(head_dim, config, length_read)
    dim = head_dim - head_dim % 2
    before = _default(dim, config, length_read).inv_freq.double().tolist()
    after = scaled.inv_freq.double().tolist()
    shares = scaled.interpolated.double().tolist()
    pairs = tuple(
        PairFact(j, 2 * math.pi / before[j], 2 * math.pi / after[j], share, _treatment(share))
        for j, share in enumerate(shares)
    )
    return ScalingFacts(config, head_dim, length_read, scaled.base, scaled.attention_factor, pairs)


def scaling_sentence(facts: ScalingFacts) -> str:
    """One sentence that says what the scaling did, every number read from ``facts``.

    >>> import textwrap
    >>> facts = scaling_facts(8, RopeConfig(scaling="linear", original_length=64), length_read=64)
    >>> print(textwrap.fill(scaling_sentence(facts), 80))
    Position Interpolation with s = 4 divides all 4 frequency pairs by 4:
    wavelengths from 25.1 to 25,133 positions instead of 6.28 to 6,283.
    """
    spec = SCALING_SPECS[facts.config.scaling]
    if not facts.pairs:
        return (
            f"{spec.label} has no frequency pair to scale: head_dim {facts.head_dim} rotates none."
        )
    return spec.say(facts, spec.label)
