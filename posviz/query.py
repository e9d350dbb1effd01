"""Settings to and from a URL query string, so a link restores a view.

Query parameters are untrusted text: each is parsed on its own, and a value that is not a
number, out of range or unknown falls back to the default with a notice saying why. Nothing is
ever evaluated.

>>> settings, notices = settings_from_query({"emb_dim": "256", "seed": "abc"})
>>> settings.emb_dim, settings.seed, notices
(256, 123, ["seed: 'abc' is not a whole number; using 123"])
>>> link = read_link({"scheme": "rope", "lecture": "1"})
>>> link.settings.scheme, link.lecture, link.notices, link.step
('rope', True, (), None)
>>> read_link({"step": "4"}).step, read_link({"step": "4"}).lecture
(4, True)
>>> read_link({"lecture": "0", "step": "3"}).lecture
False
>>> link = read_link({"lecture": "maybe", "step": "3", "utm_source": "mail", "fbclid": "x"})
>>> link.lecture, link.notices
(False, ("lecture: 'maybe' is not one of 1, true, on, 0, false, off; lecture mode stays off",))
>>> read_link({"tab": "geometry"}).tab, query_from_settings(Settings(), tab="distance")
('geometry', {'tab': 'distance'})
>>> read_link({"tab": "compare"}).tab, read_link({"tab": "compare"}).notices
('word-order', ("tab: 'compare' is now called 'word-order'; a link made now says tab=word-order",))

On the Training tab ``step`` is the training step (``?tab=training&run=small-init&step=600``);
anywhere else it is lecture mode's slide. ``train_step`` names the training step on any page:

>>> link = read_link({"tab": "training", "run": "small-init", "step": "600"})
>>> link.lecture, link.settings.train_step, link.tab, link.notices
(False, 600, 'training', ())
>>> query_from_settings(replace(Settings(), train_step=600), tab="training")
{'step': '600', 'tab': 'training'}
>>> query_from_settings(replace(Settings(), train_step=600), tab="geometry")
{'train_step': '600', 'tab': 'geometry'}

A text longer than :data:`MAX_TEXT_IN_URL` characters is left out of its link, and the link
says so (``text_omitted=1``, ``compare_omitted=1``): the page it opens tells the reader that
the text shown is not the one the link was made from, instead of silently showing another text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Final, get_args

from posviz.config import (
    CONTEXT_LENGTH_RANGE,
    EMB_DIM_RANGE,
    HEADS_RANGE,
    MAX_TEXT_CHARS,
    RUN_NAME,
    SCHEMES,
    SEED_RANGE,
    SHIFT_RANGE,
    TRAIN_STEP_RANGE,
    WEIGHTS,
    Settings,
    fit_emb_dim,
    for_weights,
    with_options,
)
from posviz.lesson.lecture import SLIDES
from posviz.schemes import OPTIONS, OptionValue
from posviz.viewspec import (
    TAB_NAMES,
    ComponentView,
    UnknownViewError,
    ViewName,
    renamed,
    view_named,
)

MAX_TEXT_IN_URL: Final = 2_000  # longer texts are not put in links (browsers cut long URLs)
_INT_RANGES: Final = {
    "context_length": CONTEXT_LENGTH_RANGE,
    "emb_dim": EMB_DIM_RANGE,
    "seed": SEED_RANGE,
    "stride": (1, CONTEXT_LENGTH_RANGE[1]),
    "window": (0, 10_000_000),
    "heads": HEADS_RANGE,  # the Attention tab; its own check fits H to d (config.check_heads)
    "head": (0, HEADS_RANGE[1] - 1),
    "shift": SHIFT_RANGE,
    "train_step": TRAIN_STEP_RANGE,  # the Training tab's step; the page snaps it to a kept one
}
_CHOICES: Final[dict[str, tuple[str, ...]]] = {"scheme": SCHEMES, "weights": WEIGHTS}
_WHOLE_NUMBER: Final = re.compile(r"-?[0-9]{1,20}")  # ASCII digits, one optional minus sign
# URL parameter of each Settings field, where it is not the field's name.
_URL_KEYS: Final = {"compare_text": "compare"}
_OMITTED: Final = {"text": "text_omitted", "compare_text": "compare_omitted"}
# The page's tabs as links name them (``tab=``): the views' one names (posviz.viewspec); the
# first is the default, never written.
TABS: Final = TAB_NAMES
# The schemes' options (posviz.schemes.OPTIONS) are link parameters by their own names.
_OPTIONS_FIELD: Final = "scheme_options"
_FIELDS: Final = tuple(f.name for f in fields(Settings) if f.name != _OPTIONS_FIELD)
_KNOWN_KEYS: Final = frozenset(_URL_KEYS.get(name, name) for name in _FIELDS) | {
    *OPTIONS,
    "components",
    "lecture",
    "step",
    "tab",
    *_OMITTED.values(),
}
# The Training tab's link names its step ``step`` (the tab's own word for it); every other
# page, ``train_step`` (``step`` is lecture mode's slide there). A Training tab's link may
# carry any of these keys.
TRAINING_TAB: Final = "training"
TRAINING_LINK_KEYS: Final = ("run", "step", "train_step", "components")
# The Training view's principal components (``components=3d``, as ``--components`` and
# ``posviz.show(components=...)`` say it): a plane unless the link asks for the 3-D scene.
COMPONENT_VIEWS: Final[tuple[ComponentView, ...]] = get_args(ComponentView)
STEP_COUNT: Final = len(SLIDES)  # lecture mode's slides (clicks), numbered from 1 in links
_LECTURE_ON: Final = ("1", "true", "on")  # what `lecture=` takes (any case), as the guide says
_LECTURE_OFF: Final = ("0", "false", "off")
# Parameters that sites and mail programs add to links they pass on (campaign tags, click ids):
# not posviz's, and no reason to put a warning on a projected slide. Ignored without a word.
_TRACKING: Final = re.compile(
    r"utm_\w*|fbclid|gclid|dclid|gbraid|wbraid|msclkid|yclid|mc_cid|mc_eid|igshid|_ga|_gl",
    re.IGNORECASE,
)
_TEXT_FIELDS: Final = {"text": "text", "compare": "compare_text"}  # URL key -> field


@dataclass(frozen=True)
class Link:
    """What a link asks for: the settings, lecture mode, and why any parameter was not used."""

    settings: Settings
    lecture: bool
    notices: tuple[str, ...]
    step: int | None = None  # lecture mode's slide, from 1 (one link per slide); implies lecture
    tab: ViewName | None = None  # one of TABS, if the link names one (None: the page's choice)
    # Settings the link leaves out, chosen to fit what it gives (each with why): a link naming
    # 6 heads and no d gets the nearest d they divide, not the default's 4 heads.
    chosen: tuple[str, ...] = ()
    components: ComponentView = "2d"  # the Training view's principal components


def _one(value: str | Sequence[str]) -> str:
    """The last value of a repeated key."""
    return value if isinstance(value, str) else (value[-1] if value else "")


def _parse_int(
    key: str, raw: str, default: object, *, name: str | None = None
) -> tuple[int | None, str | None]:
    """``raw`` as a whole number in ``key``'s range, or ``None`` and a notice naming the
    parameter ``name`` (``key`` unless the link calls it otherwise)."""
    low, high = _INT_RANGES[key]
    name = name or key
    text = raw.strip()
    if _WHOLE_NUMBER.fullmatch(text) is None:
        return None, f"{name}: {raw[:40]!r} is not a whole number; using {default}"
    number = int(text)
    if not low <= number <= high:
        return None, f"{name}: {number} is outside {low}–{high}; using {default}"
    return number, None


def seed_from_text(raw: str, current: int) -> tuple[int, str | None]:
    """The seed typed into a text box, or ``current`` and a sentence saying why not.

    >>> seed_from_text(" 42 ", 123)
    (42, None)
    >>> seed_from_text("1e3", 123)
    (123, "Seed: '1e3' is not a whole number from 0 to 4,294,967,295; still using 123.")
    """
    number, notice = _parse_int("seed", raw, current)
    if notice is None and number is not None:
        return number, None
    low, high = _INT_RANGES["seed"]
    return current, (
        f"Seed: {raw[:40]!r} is not a whole number from {low:,} to {high:,}; still using {current}."
    )


def settings_from_query(
    params: Mapping[str, str | Sequence[str]], base: Settings | None = None
) -> tuple[Settings, list[str]]:
    """Settings from query parameters, and one notice per value that was not used."""
    settings = base or Settings()
    changes: dict[str, object] = {}
    options: dict[str, OptionValue] = {}
    notices: list[str] = []
    for key, value in params.items():
        raw = _one(value)
        if _TRACKING.fullmatch(key):
            continue
        if key not in _KNOWN_KEYS:
            notices.append(f"unknown parameter {key[:40]!r} ignored")
        elif key in _TEXT_FIELDS:
            if len(raw) > MAX_TEXT_CHARS:
                notices.append(
                    f"{key}: longer than {MAX_TEXT_CHARS:,} characters; using the default"
                )
            else:
                changes[_TEXT_FIELDS[key]] = raw
        elif key == "causal":
            if raw.lower() in _LECTURE_ON + _LECTURE_OFF:
                changes["causal"] = raw.lower() in _LECTURE_ON
            else:
                notices.append(f"causal: {raw[:40]!r} is not on/off; using {settings.causal}")
        elif key == "run":
            if RUN_NAME.fullmatch(raw):
                changes["run"] = raw
            else:
                notices.append(
                    f"run: {raw[:40]!r} is not a run's name (letters, digits, '.', '_', '-'); "
                    f"using {settings.run}"
                )
        elif key in _CHOICES:
            if raw in _CHOICES[key]:
                changes[key] = raw
            else:
                notices.append(
                    f"{key}: {raw[:40]!r} is not one of {', '.join(_CHOICES[key])}; "
                    f"using {getattr(settings, key)}"
                )
        elif key in OPTIONS:
            try:
                options[key] = OPTIONS[key].parse(raw[:40])
            except ValueError as error:
                notices.append(f"{key}: {error}; using {OPTIONS[key].text(settings.option(key))}")
        elif key in _INT_RANGES:
            current = getattr(settings, key)
            number, notice = _parse_int(key, raw, "auto" if current is None else current)
            if notice:
                notices.append(notice)
            else:
                changes[key] = number
        if not isinstance(value, str) and len(value) > 1 and key in _KNOWN_KEYS:
            notices.append(f"{key}: given {len(value)} times; using the last")
    settings = with_options(replace(settings, **changes), **options)  # type: ignore[arg-type]
    if settings.weights == "gpt2":
        fixed = for_weights(settings, "gpt2")
        if "emb_dim" in changes and settings.emb_dim != fixed.emb_dim:
            notices.append(
                f"emb_dim: GPT-2's trained tables have {fixed.emb_dim} columns; "
                f"using {fixed.emb_dim}, not {settings.emb_dim}"
            )
        if "scheme" in changes and settings.scheme != fixed.scheme:
            notices.append(
                f"scheme: GPT-2 learned its positions, so with weights=gpt2 the scheme is "
                f"learned; {settings.scheme} applies to weights=init"
            )
        settings = fixed
    return settings, notices


def read_link(params: Mapping[str, str | Sequence[str]]) -> Link:
    """Everything a link sets (see :func:`settings_from_query`, plus ``lecture``)."""
    settings, notices = settings_from_query(params)
    chosen: list[str] = []
    if "heads" in params and "emb_dim" not in params:
        settings, said = fit_emb_dim(settings)
        chosen += [said] if said else []
    lecture = _one(params.get("lecture", "0")).strip().lower()
    if lecture not in _LECTURE_ON + _LECTURE_OFF:
        notices.append(
            f"lecture: {lecture[:40]!r} is not one of {', '.join(_LECTURE_ON + _LECTURE_OFF)}; "
            "lecture mode stays off"
        )
    tab: ViewName | None = None
    if "tab" in params:
        raw = _one(params["tab"]).strip().lower()
        try:
            tab = view_named(raw, among=TABS).name
        except UnknownViewError:
            notices.append(f"tab: {raw[:40]!r} is not one of {', '.join(TABS)}; ignored")
        note = renamed(raw)
        if note is not None and tab is not None:
            notices.append(f"tab: {note}; a link made now says tab={tab}")
    # lecture=0, or a value it does not take: off, whatever step says
    off = "lecture" in params and lecture not in _LECTURE_ON
    # On the Training tab, out of lecture mode, step= is the training step; else the slide.
    training_step = "step" in params and tab == TRAINING_TAB and lecture not in _LECTURE_ON
    if training_step:
        settings = _training_step(params, settings, notices)
    slide = "step" in params and not training_step
    step = None
    if slide and off and lecture in _LECTURE_OFF:
        notices.append(
            f"step: {_one(params['step'])[:40]!r} is a lecture step and lecture=0 turns "
            "lecture mode off; showing the whole page"
        )
    elif slide and not off:
        raw = _one(params["step"]).strip()
        if raw.isascii() and raw.isdigit() and 1 <= int(raw) <= STEP_COUNT:
            step = int(raw)
        else:
            notices.append(f"step: {raw[:40]!r} is not a step from 1 to {STEP_COUNT}; using 1")
    for field, flag in _OMITTED.items():
        key = _URL_KEYS.get(field, field)
        if _one(params.get(flag, "")) == "1" and key not in params:
            notices.append(
                f"{key}: the link was made from a text longer than {MAX_TEXT_IN_URL:,} "
                "characters, too long for a link; this page shows the default text instead"
            )
    components = _components(params, notices)
    on = not off and (lecture in _LECTURE_ON or slide)
    return Link(settings, on, tuple(notices), step if on else None, tab, tuple(chosen), components)


def _components(params: Mapping[str, str | Sequence[str]], notices: list[str]) -> ComponentView:
    """The link's ``components`` (``2d`` unless it names another of :data:`COMPONENT_VIEWS`).

    >>> said: list[str] = []
    >>> _components({"components": "3D"}, said), _components({"components": "4d"}, said), said
    ('3d', '2d', ["components: '4d' is not one of 2d, 3d; using 2d"])
    """
    if "components" not in params:
        return "2d"
    raw = _one(params["components"]).strip().lower()
    for name in COMPONENT_VIEWS:
        if raw == name:
            return name
    notices.append(f"components: {raw[:40]!r} is not one of {', '.join(COMPONENT_VIEWS)}; using 2d")
    return "2d"


def _training_step(
    params: Mapping[str, str | Sequence[str]], settings: Settings, notices: list[str]
) -> Settings:
    """The Training tab's link: ``step`` is the training step (over ``train_step``)."""
    number, notice = _parse_int(
        "train_step", _one(params["step"]), settings.train_step, name="step"
    )
    if number is None:
        notices.append(str(notice))
        return settings
    if "train_step" in params and settings.train_step != number:
        notices.append(
            f"train_step: {settings.train_step} not used; the link's step={number} names the "
            "training step on this tab"
        )
    return replace(settings, train_step=number)


def query_from_settings(
    settings: Settings,
    *,
    lecture: bool = False,
    step: int | None = None,
    tab: str | None = None,
    components: ComponentView = "2d",
) -> dict[str, str]:
    """The query parameters that restore ``settings`` (defaults left out), lecture mode and
    its ``step`` (a slide, from 1), the open ``tab`` (one of :data:`TABS`; the first is left
    out) and the Training view's ``components`` (``2d``, the default, left out). A text too
    long for a link is left out and marked as left out.

    >>> query_from_settings(Settings(), tab="training", components="3d")
    {'tab': 'training', 'components': '3d'}
    """
    default = Settings()
    params: dict[str, str] = {}
    implied = {"emb_dim", "scheme"} if settings.weights == "gpt2" else set()  # for_weights
    for name in _FIELDS:
        value = getattr(settings, name)
        if value == getattr(default, name) or value is None or name in implied:
            continue
        if name in _OMITTED and len(str(value)) > MAX_TEXT_IN_URL:
            params[_OMITTED[name]] = "1"
            continue
        key = _URL_KEYS.get(name, name)
        params[key] = ("1" if value else "0") if isinstance(value, bool) else str(value)
    for name, value in settings.scheme_options:  # those not at their default
        params[name] = OPTIONS[name].text(value)
    if lecture:
        params["lecture"] = "1"
        if step is not None:
            params["step"] = str(step)
    if tab is not None and tab != TABS[0]:
        if tab not in TABS:
            raise ValueError(f"tab must be one of {', '.join(TABS)}, got {tab!r}")
        params["tab"] = tab
    if components != "2d":
        if components not in COMPONENT_VIEWS:
            raise ValueError(
                f"components must be one of {', '.join(COMPONENT_VIEWS)}, got {components!r}"
            )
        params["components"] = components
    if tab == TRAINING_TAB and not lecture and "train_step" in params:
        params = {("step" if key == "train_step" else key): value for key, value in params.items()}
    return params


def text_fits_in_link(text: str) -> bool:
    """Whether a link can carry ``text`` (see :data:`MAX_TEXT_IN_URL`)."""
    return len(text) <= MAX_TEXT_IN_URL
