"""What one view of posviz shows, the allowed ranges, and the one check that enforces them.

>>> validate(Settings(text="Every effort moves you", context_length=4)).effective_stride
4
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Final, Literal, NoReturn, get_args

from posviz.schemes import (
    LEARNED,
    OPTIONS,
    SCHEME_NAMES,
    OptionValue,
    SchemeName,
    SchemeSpec,
    default_options,
    scheme,
)
from posviz.schemes import (
    SCHEMES as SCHEME_SPECS,
)

Scheme = SchemeName  # a scheme's name; everything about it: posviz.schemes.scheme(name)
SCHEMES: Final[tuple[Scheme, ...]] = SCHEME_NAMES
Weights = Literal["init", "gpt2"]  # the book's seeded random tables, or GPT-2 124M's trained
WEIGHTS: Final[tuple[Weights, ...]] = get_args(Weights)

GPT2_VOCAB_SIZE: Final = 50257  # tiktoken "gpt2": 50,000 merges + 256 bytes + <|endoftext|>
CONTEXT_LENGTH_RANGE: Final = (1, 1024)  # GPT-2's context is 1,024 positions
EMB_DIM_RANGE: Final = (2, 768)  # 2 is the smallest pair RoPE can rotate; 768 is GPT-2 small
GPT2_EMB_DIM: Final = 768  # GPT-2 124M's wte and wpe have 768 columns
SEED_RANGE: Final = (0, 2**32 - 1)  # any seed torch.manual_seed takes that fits in a URL nicely
MAX_TEXT_CHARS: Final = 25_000  # room for the whole of The Verdict (20,479 characters)
HEADS_RANGE: Final = (1, 12)  # attention heads H (GPT-2 small has 12); H must divide d
# The Attention tab's shift M: the window moved to positions M ... M+n-1. Up to GPT-2's whole
# context again, far enough to take T5's buckets past 128 and any learned table past its end.
SHIFT_RANGE: Final = (0, 1024)
TRAIN_STEP_RANGE: Final = (0, 1_000_000)  # the Training tab's step (snapped to one a run kept)
# A training run's name: a file's stem among the shipped runs and the cache folder's, never a
# path (posviz.training.runs looks names up, it never joins them into one).
RUN_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class SettingsError(ValueError):
    """A setting is outside its allowed range; the message names the value and the range."""


@dataclass(frozen=True)
class Settings:
    """Everything that decides the numbers on screen.

    The defaults show a short sentence with repeated words, so the lesson is visible at once:
    the same token gets the same token vector, and only the position vector tells them apart.
    """

    text: str = "A rose is a rose is a rose."
    context_length: int = 16  # rows of the positional table, T
    emb_dim: int = 64  # d; the book's section 2.8 uses 256, GPT-2 small 768
    seed: int = 123  # the book's torch.manual_seed(123)
    stride: int | None = None  # None: equal to context_length (no overlap), as in section 2.8
    window: int = 0  # which window of the batch [B, T] to show
    scheme: Scheme = LEARNED.name  # posviz.schemes.scheme(name): everything about it
    # "gpt2": GPT-2 124M's trained wte/wpe (emb_dim 768, scheme learned, seed unused)
    weights: Weights = "init"
    # Compare mode (word order): a second text, compared with the window on screen through
    # the book's self-attention; "" is off. URL parameter ``compare``.
    compare_text: str = ""
    causal: bool = False  # mask future tokens in that self-attention, as GPT does
    # The Attention tab: the window through H heads of the book's attention, head K shown,
    # the sentence moved to positions shift ... shift+n-1 (0: where it is).
    heads: int = 4  # H: d/H columns per head, as the book's MultiHeadAttention splits them
    head: int = 0  # K, from 0 to H-1
    shift: int = 0  # M
    # The Training tab: a run of the book's GPT on The Verdict, at one of its kept steps.
    run: str = "small-init"  # URL ``run=``
    train_step: int = 1500  # URL: ``step=`` on the Training tab, else ``train_step=``
    # The schemes' own options (posviz.schemes.OPTIONS, e.g. RoPE's base), those not at their
    # default, by name: ``(("rope_base", 500000.0),)``. Each is its own link parameter and
    # command-line flag; read one with :meth:`option`, set them with :func:`with_options`.
    scheme_options: tuple[tuple[str, OptionValue], ...] = ()

    def option(self, name: str) -> OptionValue:
        """The value of the scheme option ``name`` (its default unless set).

        >>> rope_base = with_options(Settings(), rope_base=5e5).option("rope_base")
        >>> Settings().option("rope_base"), rope_base
        (10000.0, 500000.0)
        """
        if name not in OPTIONS:
            return _unknown_option(name)
        return self.options()[name]

    def options(self) -> dict[str, OptionValue]:
        """Every scheme option, by name: the ones set, the others at their defaults (an option
        that follows a field, such as RoPE's original length, at that field's value).

        >>> Settings().options()["rope_base"]
        10000.0
        """
        following = {
            name: getattr(self, declared.follows)
            for name, declared in OPTIONS.items()
            if declared.follows is not None
        }
        return {**default_options(), **following, **dict(self.scheme_options)}

    @property
    def effective_stride(self) -> int:
        """The stride in tokens: ``stride``, or ``context_length`` when it is ``None``."""
        return self.context_length if self.stride is None else self.stride


def _unknown_option(name: str) -> NoReturn:
    raise SettingsError(
        f"no positional scheme has an option {name!r}; the options: {', '.join(OPTIONS)}"
    )


def with_options(settings: Settings, **values: OptionValue | None) -> Settings:
    """``settings`` with the scheme options ``values`` set (not validated); an option set to
    its default is dropped, so equal settings stay equal, and so is one set to ``None`` (an
    empty box: the default; for an option that follows a field, that field's value).

    >>> with_options(Settings(), rope_base=10_000.0).scheme_options
    ()
    """
    merged = {**dict(settings.scheme_options), **values}
    kept = tuple(
        sorted(
            (name, value)
            for name, value in merged.items()
            if value is not None
            and (name not in OPTIONS or OPTIONS[name].follows or value != OPTIONS[name].default)
        )
    )
    return replace(settings, scheme_options=kept)


def _check_options(settings: Settings) -> None:
    """Each option set is one a scheme declares, with a value it takes."""
    pairs = settings.scheme_options
    if not isinstance(pairs, tuple) or not all(
        isinstance(pair, tuple) and len(pair) == 2 for pair in pairs
    ):
        raise SettingsError(f"scheme_options must be (name, value) pairs, got {pairs!r}")
    for name, value in pairs:
        if name not in OPTIONS:
            _unknown_option(name)
        message = OPTIONS[name].check(value)
        if message is not None:
            raise SettingsError(message)
    _check_rotations(settings, heads=1)  # the views that rotate whole vectors (d columns)


def _check_rotations(settings: Settings, *, heads: int) -> None:
    """Each rotation's own check of its options against ``emb_dim`` split into ``heads``."""
    options = settings.options()
    for spec in SCHEME_SPECS:
        check = None if spec.rotation is None else spec.rotation.settings_check
        message = None if check is None else check(options, settings.emb_dim, heads)
        if message is not None:
            raise SettingsError(message)


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsError(f"{name} must be a whole number from {low} to {high}, got {value!r}")
    if not low <= value <= high:
        raise SettingsError(f"{name} must be from {low} to {high}, got {value}")
    return value


def validate(settings: Settings) -> Settings:
    """Return ``settings`` if every value is in range, else raise :class:`SettingsError`.

    The window is checked against the text later (see ``batching.make_batch``): how many
    windows there are depends on the tokens.
    """
    if not isinstance(settings.text, str):
        raise SettingsError(f"text must be a string, got {type(settings.text).__name__}")
    if len(settings.text) > MAX_TEXT_CHARS:
        raise SettingsError(
            f"text has {len(settings.text):,} characters; posviz takes at most "
            f"{MAX_TEXT_CHARS:,} (enough for the whole of The Verdict). Paste a shorter passage."
        )
    _check_int("context_length", settings.context_length, *CONTEXT_LENGTH_RANGE)
    _check_int("emb_dim", settings.emb_dim, *EMB_DIM_RANGE)
    _check_int("seed", settings.seed, *SEED_RANGE)
    if settings.stride is not None:
        _check_int("stride", settings.stride, 1, CONTEXT_LENGTH_RANGE[1])
    if isinstance(settings.window, bool) or not isinstance(settings.window, int):
        raise SettingsError(f"window must be a whole number, got {settings.window!r}")
    if settings.window < 0:
        raise SettingsError(f"window must be 0 or more, got {settings.window}")
    if not isinstance(settings.compare_text, str):
        raise SettingsError(
            f"compare_text must be a string, got {type(settings.compare_text).__name__}"
        )
    if len(settings.compare_text) > MAX_TEXT_CHARS:
        raise SettingsError(
            f"the second text has {len(settings.compare_text):,} characters; posviz takes at "
            f"most {MAX_TEXT_CHARS:,}. Paste a shorter passage."
        )
    if not isinstance(settings.causal, bool):
        raise SettingsError(f"causal must be True or False, got {settings.causal!r}")
    if settings.scheme not in SCHEMES:
        raise SettingsError(f"scheme must be one of {', '.join(SCHEMES)}, got {settings.scheme!r}")
    _check_int("heads", settings.heads, *HEADS_RANGE)
    _check_int("head", settings.head, 0, HEADS_RANGE[1] - 1)
    _check_int("shift", settings.shift, *SHIFT_RANGE)
    if not isinstance(settings.run, str) or RUN_NAME.fullmatch(settings.run) is None:
        raise SettingsError(
            f"run must be a run's name (letters, digits, '.', '_' or '-', up to 64, such as "
            f"small-init), got {settings.run!r}"
        )
    _check_int("train_step", settings.train_step, *TRAIN_STEP_RANGE)
    _check_options(settings)
    if settings.weights not in WEIGHTS:
        raise SettingsError(f"weights must be init or gpt2, got {settings.weights!r}")
    if settings.weights == "gpt2" and settings.emb_dim != GPT2_EMB_DIM:
        raise SettingsError(
            f"with weights=gpt2, emb_dim is GPT-2's {GPT2_EMB_DIM} (its trained tables have "
            f"{GPT2_EMB_DIM} columns), got {settings.emb_dim}"
        )
    if settings.weights == "gpt2" and not scheme(settings.scheme).learned:
        raise SettingsError(
            f"with weights=gpt2 the scheme is learned (GPT-2 learned its positional table), "
            f"got {settings.scheme}; the other schemes apply to weights=init"
        )
    return settings


def head_counts(emb_dim: int) -> tuple[int, ...]:
    """The numbers of heads ``emb_dim`` can be split into: the divisors of d in
    :data:`HEADS_RANGE`.

    >>> head_counts(64), head_counts(2)
    ((1, 2, 4, 8), (1, 2))
    """
    low, high = HEADS_RANGE
    return tuple(h for h in range(low, high + 1) if emb_dim % h == 0)


def fitting_heads(emb_dim: int, positional: str | SchemeSpec) -> tuple[int, ...]:
    """The numbers of heads the scheme ``positional`` can split ``emb_dim`` into:
    :func:`head_counts`, and for one that rotates pairs (RoPE), only those of an even number
    of columns.

    >>> fitting_heads(12, "alibi"), fitting_heads(12, "rope"), fitting_heads(7, "rope")
    ((1, 2, 3, 4, 6, 12), (1, 2, 3, 6), ())
    """
    choices = head_counts(emb_dim)
    if not scheme(positional).rotates:
        return choices
    return tuple(h for h in choices if (emb_dim // h) % 2 == 0)


def _or(numbers: tuple[int, ...] | list[int]) -> str:
    """``"1, 2, 4 or 8"``."""
    *first, last = map(str, numbers)
    return f"{', '.join(first)} or {last}" if first else last


def check_heads(settings: Settings) -> Settings:
    """``settings`` if its heads fit its d (the Attention tab's own check, so another tab never
    fails for them), else :class:`SettingsError` naming the value, the choices and the fix: H
    must divide d, K must be a head, and RoPE rotates pairs, so it needs an even d/H.

    >>> check_heads(Settings(emb_dim=64, heads=5))
    Traceback (most recent call last):
    ...
    posviz.config.SettingsError: heads must divide emb_dim 64 into equal heads: 1, 2, 4 or 8, \
got 5; choose one of them, or another emb_dim
    """
    validate(settings)
    choices = head_counts(settings.emb_dim)
    if settings.heads not in choices:
        raise SettingsError(
            f"heads must divide emb_dim {settings.emb_dim} into equal heads: {_or(choices)}, got "
            f"{settings.heads}; choose one of them, or another emb_dim"
        )
    if settings.head >= settings.heads:
        raise SettingsError(
            f"head must be from 0 to {settings.heads - 1} (one of the {settings.heads} heads), "
            f"got {settings.head}; choose a head below {settings.heads} or more heads"
        )
    head_dim = settings.emb_dim // settings.heads
    if scheme(settings.scheme).rotates and head_dim % 2:
        even = fitting_heads(settings.emb_dim, settings.scheme)
        fix = f"choose heads {_or(even)}" if even else "choose an even emb_dim"
        raise SettingsError(
            f"RoPE rotates pairs of dimensions, so a head needs an even number of them; "
            f"emb_dim {settings.emb_dim} / heads {settings.heads} = {head_dim}: {fix}"
        )
    if scheme(settings.scheme).rotates:
        _check_rotations(settings, heads=settings.heads)
    return settings


def fit_heads(settings: Settings) -> tuple[Settings, tuple[str, ...]]:
    """``settings`` with heads and head fitted to its d, and a notice for each change (a link
    or a d slider may ask for heads that do not divide d): the most heads up to the ones asked
    for that divide d (with RoPE, into even heads), and the last head if the one asked for is
    gone. Settings that cannot be fitted (RoPE with an odd d) come back as they are;
    :func:`check_heads` says why.

    >>> fit_heads(Settings(emb_dim=64, heads=6, head=5))[0].heads
    4
    >>> fit_heads(Settings(emb_dim=64, heads=6, head=5))[1]
    ('heads: 6 does not divide emb_dim 64 into equal heads; using 4', 'head: 5 is not one of \
the 4 heads; using 3')
    """
    notices = []
    choices = fitting_heads(settings.emb_dim, settings.scheme)
    heads, head = settings.heads, settings.head
    if choices and heads not in choices:
        fitted = max((h for h in choices if h <= heads), default=choices[0])
        rope = " with RoPE's even heads" if scheme(settings.scheme).rotates else ""
        notices.append(
            f"heads: {heads} does not divide emb_dim {settings.emb_dim} into equal heads{rope}; "
            f"using {fitted}"
        )
        heads = fitted
    if head >= heads:
        notices.append(f"head: {head} is not one of the {heads} heads; using {heads - 1}")
        head = heads - 1
    return replace(settings, heads=heads, head=head), tuple(notices)


def fit_emb_dim(settings: Settings) -> tuple[Settings, str | None]:
    """For a link that names its heads but not its d: the nearest d the heads divide into
    equal heads (RoPE: even ones; the larger of two as near), and a sentence saying so; the
    settings as they are (and ``None``) where the heads already fit, or GPT-2's tables fix d.

    >>> fitted, said = fit_emb_dim(Settings(heads=6, head=5))
    >>> fitted.emb_dim, said
    (66, 'emb_dim: 66, not the default 64, so that its 6 heads divide d into equal heads \
(the link names no emb_dim)')
    >>> fit_emb_dim(Settings(heads=6, scheme="rope"))[0].emb_dim
    60
    >>> fit_emb_dim(Settings(heads=8))[1] is None
    True
    """
    heads, emb_dim = settings.heads, settings.emb_dim
    low, high = EMB_DIM_RANGE
    if settings.weights == "gpt2" or heads in fitting_heads(emb_dim, settings.scheme):
        return settings, None
    fitting = [d for d in range(low, high + 1) if heads in fitting_heads(d, settings.scheme)]
    if not fitting:
        return settings, None
    nearest = min(fitting, key=lambda d: (abs(d - emb_dim), -d))
    even = " of an even size (RoPE rotates pairs)" if scheme(settings.scheme).rotates else ""
    return replace(settings, emb_dim=nearest), (
        f"emb_dim: {nearest}, not the default {emb_dim}, so that its {heads} heads divide d into "
        f"equal heads{even} (the link names no emb_dim)"
    )


def with_changes(settings: Settings, **changes: object) -> Settings:
    """A validated copy of ``settings`` with ``changes`` applied."""
    return validate(replace(settings, **changes))  # type: ignore[arg-type]


# The settings widgets' keys: the fields' names, and each scheme option's name for its own.
_FIELD_KEYS: Final = tuple(f.name for f in fields(Settings) if f.name != "scheme_options")
WIDGET_KEYS: Final = (*_FIELD_KEYS, *OPTIONS)


def widget_values(settings: Settings) -> dict[str, object]:
    """The value of each settings widget (keyed by field name) that shows ``settings``; the
    stride widget shows the effective stride.

    >>> widget_values(Settings(context_length=8))["stride"]
    8
    """
    values = {name: getattr(settings, name) for name in _FIELD_KEYS}
    values["stride"] = settings.effective_stride
    following = {  # an option that follows a field, not set: an empty box
        name: None for name, declared in OPTIONS.items() if declared.follows is not None
    }
    return {**values, **settings.options(), **following, **dict(settings.scheme_options)}


def settings_from_widgets(values: Mapping[str, object]) -> Settings:
    """The inverse of :func:`widget_values`: a stride equal to the context length is the
    default (``None``). Not validated (see :func:`validate`).

    >>> settings_from_widgets(widget_values(Settings())) == Settings()
    True
    """
    changes = {name: values[name] for name in _FIELD_KEYS if name in values}
    if changes.get("stride") == changes.get("context_length", Settings.context_length):
        changes["stride"] = None
    options = {name: values[name] for name in OPTIONS if name in values}
    return with_options(Settings(**changes), **options)  # type: ignore[arg-type]


def for_weights(settings: Settings, weights: Weights) -> Settings:
    """``settings`` with ``weights``: GPT-2's trained tables fix ``emb_dim`` to 768 and the
    scheme to learned (not validated).

    >>> for_weights(Settings(emb_dim=64, scheme="rope"), "gpt2").emb_dim
    768
    """
    if weights == "gpt2":
        return replace(settings, weights=weights, emb_dim=GPT2_EMB_DIM, scheme=LEARNED.name)
    return replace(settings, weights=weights)
