"""The session's state: every key named once, read and written only here.

No other module of ``posviz_app`` touches ``st.session_state`` or spells a key: widgets,
charts and containers take their keys from the constants below, and the page reads the state
through typed accessors (:func:`tab_label`, :func:`seed`, :func:`train_step`...), never as
``Any`` (``tests/test_app_state.py`` walks the modules' code to keep it so).

Streamlit keeps a session's state in ``st.session_state``, a dictionary shared by the widgets
(each widget's ``key``) and the page. posviz reads and writes it through this module only:

* the **settings widgets** carry the fields of :class:`~posviz.config.Settings` under the
  fields' own names (``text``, ``context_length``...), so the settings shown are
  :func:`settings`;
* **callbacks only set state** (they never draw): the page's widgets name the callbacks below;
* a **notice lives until the user changes what it describes** (:class:`Notice`), not until the
  next rerun: a chart's size report, a click elsewhere or a fragment's rerun leave it standing.

Why the page never writes a widget's value on an ordinary run: the browser sends every widget's
value with every rerun request, and a value the script set is in the browser only once that
run's elements have arrived. A request sent before (a chart's size report, a fast click) carries
the widget's old value, which Streamlit takes for the user's change and passes to its callback.
That is how a link to a window the text lacks emptied the user's text: the example menu's value,
derived from the settings, changed between the link's first two runs, the size report carried
the old one ("Your own text") and its callback emptied the text boxes. So a widget whose value
is *derived* from other state gets a key that names that value (:func:`derived_key`): when the
value changes, the widget is a new one, drawn with it, and an old value from the browser
belongs to a widget that no longer exists. (Lecture mode's collapsed sidebar is the one
exception, where every run sends its widgets' values: :func:`send_sidebar_values`.)

>>> derived_key(PRESET, "A rose is a rose")
'preset=A rose is a rose'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import wraps
from typing import Final, Literal, ParamSpec, TypeGuard

import streamlit as st

from posviz.compare import DEFAULT_COMPARE_TEXT, DEFAULT_TEXT
from posviz.config import (
    MAX_TEXT_CHARS,
    WIDGET_KEYS,
    Settings,
    SettingsError,
    for_weights,
    settings_from_widgets,
    widget_values,
)
from posviz.lesson.lecture import SLIDES
from posviz.plots import Canvas
from posviz.presets import PRESETS
from posviz.query import seed_from_text
from posviz.tokenizer import TokenizerDataError
from posviz.view import batch_for
from posviz.viewspec import CodeName, ComponentView, view_named

# --- the keys ------------------------------------------------------------------------------
# Settings widgets: the Settings field names, and each scheme option's name
# (posviz.config.widget_values).
SETTINGS_KEYS: Final = WIDGET_KEYS
TEXT: Final = "text"
COMPARE_TEXT: Final = "compare_text"
CONTEXT_LENGTH: Final = "context_length"
EMB_DIM: Final = "emb_dim"
SEED: Final = "seed"  # the seed in use (no widget: the seed box below shows it)
STRIDE: Final = "stride"
WINDOW: Final = "window"
SCHEME: Final = "scheme"
WEIGHTS: Final = "weights"
CAUSAL: Final = "causal"
RUN: Final = "run"  # the Training tab's run
TRAIN_STEP: Final = "train_step"  # ... and its step
HEADS: Final = "heads"  # the Attention tab's heads H, head K and shift M
HEAD: Final = "head"
SHIFT: Final = "shift"
PAST_END: Final = "shift_past_end"  # the shift slider goes past a learned table's end
# Other widgets.
PRESET: Final = "preset"  # the example menu (a derived key: see derived_key)
SEED_BOX: Final = "seed_box"  # the seed as typed (a derived key)
LECTURE: Final = "lecture"  # the lecture-mode toggle
TAB: Final = "view"  # the tab buttons (st.segmented_control); its value: the open tab's label
BEYOND: Final = "beyond"  # Distance tab: positions past the context length
LENGTH_SCHEMES: Final = "length_schemes"  # Length tab: the schemes whose curves it draws
MORE_CHIPS: Final = "more_chips"  # the "and N more tokens" expander
NAV: Final = "lecture_nav"  # lecture mode's navigation component
PLAYING: Final = "training_playing"  # the Training tab's play button: stepping through
TRAIN_3D: Final = "training_3d"  # the Training tab's switch: principal components in 3-D
CODE: Final = "code"  # + "_" + ...: a view's "The code behind these numbers" (code_expander)
EXAMPLE_PAIR: Final = "example_pair"  # the Word-order tab's example button
TRAINING_PAUSE: Final = "training_pause"  # the Training tab's pause and play buttons
TRAINING_PLAY: Final = "training_play"
TRAINING_CODE: Final = "training_code"  # ... its script, behind an expander
LENGTH_CODE: Final = "length_code"  # the Length tab's script of the run on screen (expander)
DOWNLOAD_CSV: Final = "download_csv"  # the Download tab's buttons
DOWNLOAD_NPY: Final = "download_npy"
DOWNLOAD_HTML: Final = "download_html"
DOWNLOAD_TEXT: Final = "download_text"  # the sidebar's text too long for a link, as .txt
# Charts (posviz_app.chart's component: its value, the size the browser reported). The page's
# style and the browser tests find them by these keys (CSS class st-key-<key>).
EMBEDDINGS_CHART: Final = "embeddings"
SIMILARITY_CHART: Final = "similarity"
GEOMETRY_CHART: Final = "geometry"
DISTANCE_CHART: Final = "distance"
WORD_ORDER_CHART: Final = "compare"
ATTENTION_CHART: Final = "attention"
TRAINING_CHART: Final = "training"
TRAINING_LOSS_CHART: Final = "training_loss"  # the loss: a chart of its own
TRAINING_RUN_CHARTS: Final = ("training_small", "training_default")  # a slide's two runs
LENGTH_CHART: Final = "length"
PLOTLY_LOADER: Final = "posviz_plotly"  # the hidden component that loads plotly.js early
# Containers the page's style and tests find (no state; named here with the other keys).
TAB_PANEL: Final = "tab_panel"  # the open tab
LECTURE_STAGE: Final = "lecture_stage"  # lecture mode's slide
LESSON: Final = "lesson"  # a view's lesson sentence
LECTURE_QUESTION: Final = "lecture_question"  # a slide's question, then its answer
LECTURE_ANSWER: Final = "lecture_answer"
WORD_ORDER_TEXTS: Final = "word_order_texts"  # the two texts the Word-order view compares
SHAPES: Final = "shapes"  # the shapes line (B, T, d)
# The page's own state (no widget).
STEP: Final = "step"  # lecture mode's slide, from 0
_LINK_READ: Final = "_link_read"  # the session's settings were read from its link
_NOTICES: Final = "_notices"  # what the page has to say, until what it describes changes
_INIT_DIM_SCHEME: Final = "_init_dim_scheme"  # the random init's d and scheme before GPT-2
_GPT2_COMMIT: Final = "_gpt2_commit"  # the Hub commit of the GPT-2 tables this run shows
_CUT_FROM: Final = "_cut_from:"  # + a text box's key: its length before it was cut
_NAV_SEQ: Final = "_nav_seq"  # the number of the last press the navigation sent and was taken
_CANVASES: Final = "_posviz_canvases"  # the room each chart last reported: chart_canvas
_ANY: Final = ""  # ... under this name, any chart's
_SERVED: Final = "_posviz_plotly_served"  # plotly.js's folders registered for this session
_LECTURE_TOGGLED: Final = "_lecture_toggled"  # lecture mode turned on or off: fold or unfold


def derived_key(key: str, value: object) -> str:
    """The key of a widget whose value is derived from other state: one widget per value."""
    return f"{key}={value}"


def code_expander(view: CodeName) -> str:
    """The key of the expander with the script of ``view``'s numbers.

    >>> code_expander("geometry")
    'geometry_code'
    """
    return f"{view}_{CODE}"


# --- reading the state: typed, so that no caller casts -----------------------------------


def _int(key: str, default: int) -> int:
    value = st.session_state.get(key)
    return value if _whole(value) else default


def _str(key: str, default: str) -> str:
    value = st.session_state.get(key)
    return value if isinstance(value, str) else default


def tab_label() -> str | None:
    """The open tab's label (the tab buttons' value), ``None`` before the first run sets it."""
    value = st.session_state.get(TAB)
    return value if isinstance(value, str) else None


def text() -> str:
    """The text box's text."""
    return _str(TEXT, "")


def weights() -> str:
    """The weights chosen: ``init`` (the book's random tables) or ``gpt2``."""
    return _str(WEIGHTS, Settings.weights)


def scheme_name() -> str:
    """The positional scheme chosen, by name (the registry's, :mod:`posviz.schemes`)."""
    return _str(SCHEME, Settings.scheme)


def seed() -> int:
    """The seed in use."""
    return _int(SEED, Settings.seed)


def run_name() -> str:
    """The Training tab's run, by name."""
    return _str(RUN, Settings.run)


def train_step(default: int) -> int:
    """The Training tab's step (``default`` before it has one)."""
    return _int(TRAIN_STEP, default)


def three_d() -> bool:
    """Whether the Training tab draws its principal components in 3-D."""
    return st.session_state.get(TRAIN_3D) is True


def components() -> ComponentView:
    """The Training tab's principal components as the link and the core name them."""
    return "3d" if three_d() else "2d"


def length_schemes(default: Sequence[str]) -> tuple[str, ...]:
    """The Length tab's schemes (``default`` before the tab has drawn its menu)."""
    value = st.session_state.get(LENGTH_SCHEMES)
    if isinstance(value, list | tuple) and all(isinstance(name, str) for name in value):
        return tuple(value)
    return tuple(default)


def start_length_schemes(names: Sequence[str]) -> None:
    """Give the Length tab's menu its first value, ``names``, once: a value the user chose is
    never written over."""
    if LENGTH_SCHEMES not in st.session_state:
        st.session_state[LENGTH_SCHEMES] = list(names)


def beyond(default: int) -> int:
    """The Distance tab's positions past the context length (``default`` before it has one)."""
    return _int(BEYOND, default)


def head() -> int:
    """The Attention tab's head shown."""
    return _int(HEAD, Settings.head)


def set_values(values: Mapping[str, object]) -> None:
    """Set several keys (in a callback, or before their widgets are drawn)."""
    st.session_state.update(values)


def send_sidebar_values() -> None:
    """In lecture mode, before the sidebar is drawn: have this run send the browser the value of
    every widget the sidebar keeps (the settings and the lecture toggle).

    Streamlit sends a widget's value only in a run that set it; otherwise the browser keeps the
    one it has. A collapsed sidebar (lecture mode's) is drawn in the browser late: a clicker
    press before that asks for a run whose widgets carry no value, the browser then draws them
    with their defaults (lecture mode off, T = 1, d = 2), and the next request sends those
    back as the user's changes. Lecture mode's sidebar is not where anyone types, so sending
    the values every run costs nothing there (a text box being typed in would lose what is not
    yet sent: the normal page never does this).
    """
    for key in (*SETTINGS_KEYS, LECTURE):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def settings() -> Settings:
    """The settings the widgets hold now (not validated)."""
    return settings_from_widgets(_values(SETTINGS_KEYS))


def _values(keys: Iterable[str]) -> dict[str, object]:
    """The values ``keys`` have now (those the session has). One copy of the session's state
    (``st.session_state.to_dict()``: 60 µs with the page's 30 keys) costs less than reading
    the 19 settings keys one by one (130 µs: each ``in`` and each read is a lookup through
    Streamlit's widget map), and :func:`settings` is read twice a run."""
    wanted = tuple(keys)
    if not wanted:
        return {}
    state = st.session_state.to_dict()
    return {key: state[key] for key in wanted if key in state}


def _about(kept: Iterable[Notice]) -> dict[str, object]:
    """The values every notice in ``kept`` is about."""
    return _values({key for notice in kept for key in notice.about})


# --- the session's first run ------------------------------------------------------------


def first_run() -> bool:
    """Whether this run is the session's first (the one that reads the link)."""
    return _LINK_READ not in st.session_state


def mark_link_read() -> None:
    """The link has been read: later runs keep what the user does."""
    st.session_state[_LINK_READ] = True


P = ParamSpec("P")


def once_link_read(callback: Callable[P, None]) -> Callable[P, None]:
    """A widget callback that runs only in a session whose state was set up from its link.

    Streamlit's ``clear_cache`` message empties the session's state too; the callbacks that
    follow would find none of the keys they read (a KeyError the load test found). They are
    skipped instead, and the run after them reads the view back from the link.
    """

    @wraps(callback)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        if _LINK_READ in st.session_state:
            callback(*args, **kwargs)

    return guarded


# --- notices ------------------------------------------------------------------------------

Where = Literal["top", "seed", "window"]


@dataclass(frozen=True)
class Notice:
    """Something the page says (a warning) about some of its state: shown while the values of
    ``about`` are still ``seen``, the ones they had when it was said. ``tag`` names a kind of
    notice that replaces the one before it (a second bad seed, a second failed download)."""

    text: str
    where: Where
    about: tuple[str, ...]
    seen: tuple[object, ...]
    tag: str = ""
    icon: str = "⚠️"

    def stands(self, values: Mapping[str, object]) -> bool:
        """Whether what it describes is unchanged in ``values``."""
        return tuple(values.get(key) for key in self.about) == self.seen


def say(text: str, *, where: Where, about: Sequence[str], tag: str = "", icon: str = "⚠️") -> None:
    """Keep a notice about the current values of ``about``, replacing one with the same text,
    or with the same ``tag``."""
    values = _values(about)
    seen = tuple(values.get(key) for key in about)
    notice = Notice(text, where, tuple(about), seen, tag, icon)
    kept = [
        n
        for n in st.session_state.get(_NOTICES, ())
        if n.text != text and not (tag and n.tag == tag)
    ]
    st.session_state[_NOTICES] = (*kept, notice)


def notices(where: Where) -> list[Notice]:
    """The notices for ``where`` that still stand; the others are forgotten."""
    said: tuple[Notice, ...] = st.session_state.get(_NOTICES, ())
    values = _about(said)
    kept = [n for n in said if n.stands(values)]
    if len(kept) < len(said):  # a write costs 20 µs, and this is read three times a run
        st.session_state[_NOTICES] = tuple(kept)
    return [n for n in kept if n.where == where]


def stands(tag: str) -> bool:
    """Whether a notice tagged ``tag`` still stands."""
    tagged = [n for n in st.session_state.get(_NOTICES, ()) if n.tag == tag]
    values = _about(tagged)
    return any(n.stands(values) for n in tagged)


# --- lecture mode ------------------------------------------------------------------------


def lecture() -> bool:
    """Whether lecture mode is on."""
    return bool(st.session_state.get(LECTURE))


def step() -> int:
    """The lecture slide to show, from 0 (outside lecture mode: the last)."""
    if not lecture():
        return len(SLIDES) - 1
    return min(max(int(st.session_state.get(STEP, 0)), 0), len(SLIDES) - 1)


def go_to_step(number: int) -> None:
    """Show lecture slide ``number`` (from 0; kept within the slides)."""
    st.session_state[STEP] = min(max(int(number), 0), len(SLIDES) - 1)


# --- text boxes ----------------------------------------------------------------------------


def keep_within_limit(key: str) -> None:
    """Cut the text box ``key`` to its first ``MAX_TEXT_CHARS`` characters, remembering that it
    was cut. Called before the box is drawn (the browser then shows the cut text) and by its
    callback."""
    text = st.session_state.get(key)
    if isinstance(text, str) and len(text) > MAX_TEXT_CHARS:
        st.session_state[_CUT_FROM + key] = len(text)
        st.session_state[key] = text[:MAX_TEXT_CHARS]


def cut_to_limit(key: str) -> None:
    """A text box's callback: a paste longer than the limit keeps its first ``MAX_TEXT_CHARS``
    characters (the box has no ``max_chars``: in the browser that refuses the whole paste); an
    edit within the limit forgets an earlier cut."""
    st.session_state.pop(_CUT_FROM + key, None)
    keep_within_limit(key)


def cut_from(key: str) -> int | None:
    """How long the text in box ``key`` was before it was cut, if it was."""
    original = st.session_state.get(_CUT_FROM + key)
    return original if isinstance(original, int) else None


# --- GPT-2's tables ------------------------------------------------------------------------


def remember_init_dim_scheme() -> None:
    """Before switching to GPT-2's tables: the random init's d and scheme, to return to."""
    st.session_state[_INIT_DIM_SCHEME] = (st.session_state[EMB_DIM], st.session_state[SCHEME])


def init_dim_scheme() -> tuple[int, str]:
    """The d and scheme the random init had before GPT-2 (a link that opened with GPT-2: the
    defaults)."""
    emb_dim, scheme = st.session_state.get(_INIT_DIM_SCHEME, (Settings.emb_dim, Settings.scheme))
    return int(emb_dim), str(scheme)


def set_tables_commit(commit: str) -> None:
    """The Hub commit of the GPT-2 tables this run shows."""
    st.session_state[_GPT2_COMMIT] = commit


def tables_commit() -> str:
    """The Hub commit of the GPT-2 tables this run shows (not the cache's current ref)."""
    return str(st.session_state.get(_GPT2_COMMIT, "unknown"))


def tables_of(settings: Settings) -> str:
    """What a view of ``settings`` looks its rows up in besides the settings: the GPT-2
    tables' commit, or ``""`` for the book's init (a function of the settings alone). With
    the settings, the key of a figure shared between sessions."""
    return tables_commit() if settings.weights == "gpt2" else ""


def forget(keys: Iterable[str]) -> None:
    """Drop ``keys`` (a view's own widgets, when what they were for changes)."""
    for key in keys:
        st.session_state.pop(key, None)


# --- charts: the room each reported, and plotly.js served ----------------------------------


def chart_size(key: str) -> object:
    """What chart ``key``'s component holds as the size the browser last reported (untrusted:
    :func:`posviz_app.chart.canvas_from_report` reads it), ``None`` if nothing."""
    value = st.session_state.get(key)
    return value.get("size") if isinstance(value, Mapping) else None


def keep_canvas(key: str, place: str, canvas: Canvas) -> None:
    """Remember ``canvas`` as chart ``key``'s room at ``place``, anywhere, and any chart's."""
    canvases: dict[str, Canvas] = st.session_state.setdefault(_CANVASES, {})
    canvases[f"{key}@{place}"] = canvases[key] = canvases[_ANY] = canvas


def kept_canvas(key: str, place: str) -> Canvas | None:
    """The room chart ``key`` had at ``place`` when the browser last said; else its room
    anywhere, else any chart's (they share the page's width); ``None`` before any said."""
    canvases: Mapping[str, Canvas] = st.session_state.get(_CANVASES, {})
    return canvases.get(f"{key}@{place}") or canvases.get(key) or canvases.get(_ANY)


def plotly_served() -> bool:
    """Whether this session has registered plotly.js's folders with the file route."""
    return st.session_state.get(_SERVED) is True


def mark_plotly_served() -> None:
    """This session has registered plotly.js's folders."""
    st.session_state[_SERVED] = True


# --- callbacks: they only set state --------------------------------------------------------

WORD_ORDER_TAB: Final = view_named("word-order").label  # the tab an example pair opens


@once_link_read
def apply_preset(name: str) -> None:
    """The example menu (``name``: the widget's key): load the chosen example into the widgets
    (keeping the weights); "Your own text" empties the text boxes for the user's own words."""
    preset = PRESETS.get(st.session_state[name])
    if preset is None:
        st.session_state[TEXT] = st.session_state[COMPARE_TEXT] = ""
        return
    st.session_state.update(widget_values(for_weights(preset, st.session_state[WEIGHTS])))
    if preset.compare_text:
        st.session_state[TAB] = WORD_ORDER_TAB


@once_link_read
def switch_weights() -> None:
    """GPT-2's tables fix d = 768 and the learned scheme; back on init, the view's own d and
    scheme return."""
    if st.session_state[WEIGHTS] == "gpt2":
        remember_init_dim_scheme()
        fixed = for_weights(settings(), "gpt2")
        st.session_state.update({EMB_DIM: fixed.emb_dim, SCHEME: fixed.scheme})
    else:
        back_to_init()


def back_to_init() -> None:
    """Weights back to the random init, with the d and scheme it had before GPT-2. Only in a
    callback or before the widgets are drawn."""
    emb_dim, scheme = init_dim_scheme()
    st.session_state.update({WEIGHTS: "init", EMB_DIM: emb_dim, SCHEME: scheme})


@once_link_read
def reset_step() -> None:
    """Lecture mode starts at its first slide (and the sidebar folds, or unfolds when it
    ends: :func:`sidebar_fold`)."""
    st.session_state[STEP] = 0
    st.session_state[_LECTURE_TOGGLED] = True


def sidebar_fold(*, first: bool) -> Literal["collapsed", "auto"] | None:
    """What this run tells the browser's sidebar: fold it where lecture mode starts (a
    lecture link's first run, the toggle turned on), ``"auto"`` where it ends, and else
    nothing (``None``: the browser keeps the sidebar as the user left it).

    Streamlit folds the sidebar when the page's ``initial_sidebar_state`` changes; a run that
    told it "collapsed" again after the lecturer had opened the sidebar could fold it under
    their hand (issue 42). Call :func:`sidebar_told` once the page config is sent."""
    if not (first or st.session_state.get(_LECTURE_TOGGLED)):
        return None
    return "collapsed" if lecture() else "auto"


def sidebar_told() -> None:
    """This run has told the sidebar what :func:`sidebar_fold` said."""
    st.session_state.pop(_LECTURE_TOGGLED, None)


@once_link_read
def keep_stride_in_step() -> None:
    """Moving the context length moves the stride with it (non-overlapping windows)."""
    st.session_state[STRIDE] = st.session_state[CONTEXT_LENGTH]
    st.session_state[WINDOW] = 0


@once_link_read
def keep_window_in_batch() -> None:
    """A new stride keeps the window shown if the batch still has it, else shows its last
    window: a valid window, without the notice meant for links."""
    try:
        batch = batch_for(settings())
    except (SettingsError, TokenizerDataError):
        return  # the run itself says what is wrong
    st.session_state[WINDOW] = min(st.session_state[WINDOW], max(batch.num_windows - 1, 0))


@once_link_read
def read_seed(box: str) -> None:
    """The seed box's callback (``box``: its key): use the seed typed, or keep the one in use
    and say why, until the seed or the box changes."""
    seed, notice = seed_from_text(str(st.session_state[box]), int(st.session_state[SEED]))
    st.session_state[SEED] = seed
    if notice is not None:  # the box keeps what was typed, to be mended
        say(notice, where="seed", about=(SEED, box), tag="seed")


@once_link_read
def use_example_pair() -> None:
    """The Word-order tab's example: "The dog bites the man" / "The man bites the dog"."""
    st.session_state.update({TEXT: DEFAULT_TEXT, COMPARE_TEXT: DEFAULT_COMPARE_TEXT, WINDOW: 0})


@once_link_read
def take_nav_target() -> None:
    """Lecture mode's navigation (Back / Next and the clicker's keys): the slide the browser
    asks for. It counts every press itself and sends the slide they lead to, so presses that
    come faster than the page can answer all count (a rerun request carries the newest)."""
    value = st.session_state.get(NAV)
    target = value.get("target") if isinstance(value, Mapping) else None
    step_asked = target.get("step") if isinstance(target, Mapping) else None
    seq = target.get("seq") if isinstance(target, Mapping) else None
    if _whole(step_asked) and _whole(seq):
        go_to_step(step_asked)
        st.session_state[_NAV_SEQ] = seq


def nav_seq() -> int:
    """The number of the last press the page took (the navigation counts from it)."""
    return int(st.session_state.get(_NAV_SEQ, 0))


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


@once_link_read
def play(steps: Sequence[int]) -> None:
    """The Training tab's play button: step through the run's snapshots from the one shown
    (from the first, when it shows the last)."""
    if st.session_state.get(TRAIN_STEP) == steps[-1]:
        st.session_state[TRAIN_STEP] = steps[0]
    st.session_state[PLAYING] = True


@once_link_read
def pause() -> None:
    """The Training tab's pause button (and a step chosen by hand) stop the stepping."""
    st.session_state[PLAYING] = False


def playing() -> bool:
    """Whether the Training tab is stepping through its run."""
    return bool(st.session_state.get(PLAYING))


def advance(steps: Sequence[int]) -> int:
    """While playing: the next kept step after the one shown (the last one stops the play)."""
    shown = st.session_state.get(TRAIN_STEP, steps[0])
    later = [step for step in steps if step > shown]
    following = later[0] if later else steps[-1]
    st.session_state[TRAIN_STEP] = following
    if following == steps[-1]:
        st.session_state[PLAYING] = False
    return following
