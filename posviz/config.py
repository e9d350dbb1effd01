"""What one view of posviz shows, the allowed ranges, and the one check that enforces them.

>>> validate(Settings(text="Every effort moves you", context_length=4)).effective_stride
4
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Final, Literal, get_args

Scheme = Literal["learned", "sinusoidal", "none", "rope"]
SCHEMES: Final[tuple[Scheme, ...]] = get_args(Scheme)
Weights = Literal["init", "gpt2"]  # the book's seeded random tables, or GPT-2 124M's trained
WEIGHTS: Final[tuple[Weights, ...]] = get_args(Weights)

GPT2_VOCAB_SIZE: Final = 50257  # tiktoken "gpt2": 50,000 merges + 256 bytes + <|endoftext|>
CONTEXT_LENGTH_RANGE: Final = (1, 1024)  # GPT-2's context is 1,024 positions
EMB_DIM_RANGE: Final = (2, 768)  # 2 is the smallest pair RoPE can rotate; 768 is GPT-2 small
GPT2_EMB_DIM: Final = 768  # GPT-2 124M's wte and wpe have 768 columns
SEED_RANGE: Final = (0, 2**32 - 1)  # any seed torch.manual_seed takes that fits in a URL nicely
MAX_TEXT_CHARS: Final = 25_000  # room for the whole of The Verdict (20,479 characters)


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
    scheme: Scheme = "learned"
    # "gpt2": GPT-2 124M's trained wte/wpe (emb_dim 768, scheme learned, seed unused)
    weights: Weights = "init"
    # Compare mode (word order): a second text, compared with the window on screen through
    # the book's self-attention; "" is off. URL parameter ``compare``.
    compare_text: str = ""
    causal: bool = False  # mask future tokens in that self-attention, as GPT does

    @property
    def effective_stride(self) -> int:
        """The stride in tokens: ``stride``, or ``context_length`` when it is ``None``."""
        return self.context_length if self.stride is None else self.stride


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
    if settings.weights not in WEIGHTS:
        raise SettingsError(f"weights must be init or gpt2, got {settings.weights!r}")
    if settings.weights == "gpt2" and settings.emb_dim != GPT2_EMB_DIM:
        raise SettingsError(
            f"with weights=gpt2, emb_dim is GPT-2's {GPT2_EMB_DIM} (its trained tables have "
            f"{GPT2_EMB_DIM} columns), got {settings.emb_dim}"
        )
    if settings.weights == "gpt2" and settings.scheme != "learned":
        raise SettingsError(
            f"with weights=gpt2 the scheme is learned (GPT-2 learned its positional table), "
            f"got {settings.scheme}; the other schemes apply to weights=init"
        )
    return settings


def with_changes(settings: Settings, **changes: object) -> Settings:
    """A validated copy of ``settings`` with ``changes`` applied."""
    return validate(replace(settings, **changes))  # type: ignore[arg-type]


def widget_values(settings: Settings) -> dict[str, object]:
    """The value of each settings widget (keyed by field name) that shows ``settings``; the
    stride widget shows the effective stride.

    >>> widget_values(Settings(context_length=8))["stride"]
    8
    """
    values = {field.name: getattr(settings, field.name) for field in fields(Settings)}
    values["stride"] = settings.effective_stride
    return values


def settings_from_widgets(values: Mapping[str, object]) -> Settings:
    """The inverse of :func:`widget_values`: a stride equal to the context length is the
    default (``None``). Not validated (see :func:`validate`).

    >>> settings_from_widgets(widget_values(Settings())) == Settings()
    True
    """
    changes = {field.name: values[field.name] for field in fields(Settings) if field.name in values}
    if changes.get("stride") == changes.get("context_length", Settings.context_length):
        changes["stride"] = None
    return Settings(**changes)  # type: ignore[arg-type]


def for_weights(settings: Settings, weights: Weights) -> Settings:
    """``settings`` with ``weights``: GPT-2's trained tables fix ``emb_dim`` to 768 and the
    scheme to learned (not validated).

    >>> for_weights(Settings(emb_dim=64, scheme="rope"), "gpt2").emb_dim
    768
    """
    if weights == "gpt2":
        return replace(settings, weights=weights, emb_dim=GPT2_EMB_DIM, scheme="learned")
    return replace(settings, weights=weights)
