"""posviz's page: token + position = input embeddings, side by side (Raschka, LLMs from
Scratch, §2.8).

Widgets, layout and caching only; everything else lives in the ``posviz`` package.
:func:`run` draws the page once; Streamlit calls it through ``app.py`` (``streamlit run
app.py``, Community Cloud's main file) or ``posviz app``, at every rerun.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from functools import wraps
from typing import Final, TypedDict, TypeVar, cast

import streamlit as st
import torch
from streamlit.delta_generator import DeltaGenerator

from posviz.attention import AttentionWeights
from posviz.batching import Batch
from posviz.cache import BytesCache
from posviz.codegen import BOOK_CH02_NOTEBOOK_URL, BOOK_CH02_URL, reproduction_script
from posviz.codegen_shapes import CodeView
from posviz.compare import DEFAULT_COMPARE_TEXT, DEFAULT_TEXT
from posviz.config import (
    CONTEXT_LENGTH_RANGE,
    EMB_DIM_RANGE,
    MAX_TEXT_CHARS,
    SEED_RANGE,
    WEIGHTS,
    Scheme,
    Settings,
    SettingsError,
    for_weights,
    settings_from_widgets,
    widget_values,
)
from posviz.distance import MAX_BEYOND, build_distance, default_beyond
from posviz.embeddings import SeededEmbeddings, TorchFillError
from posviz.export import download_name, figure_html, matrices_csv, matrices_npy
from posviz.geometry import build_geometry
from posviz.gpt2.store import Gpt2Embeddings, Gpt2Store, Gpt2Unavailable
from posviz.lesson import distance as distance_lesson
from posviz.lesson import geometry as geometry_lesson
from posviz.lesson.gpt2 import (
    EMB_DIM_FIXED,
    SCHEME_FIXED,
    SEED_NO_EFFECT,
    TRAINED_FIXES,
    WEIGHTS_HELP,
    WEIGHTS_LABELS,
    fallback_sentence,
    neighbour_sentence,
    pattern_sentence,
    source_caption,
)
from posviz.lesson.lecture import (
    SLIDES,
    Slide,
    input_answer,
    question_text,
    similarity_answer,
    token_answer,
    word_order_answer,
)
from posviz.lesson.repeats import lesson_sentence, similarity_sentence
from posviz.lesson.schemes import (
    SCHEME_LABELS,
    SCHEME_NOTES,
    position_panel_note,
    shape_labels,
)
from posviz.lesson.word_order import (
    ATTENTION_NOTE,
    CAUSAL_NOTE,
    cut_note,
    findings,
    status_message,
    texts_line,
)
from posviz.pipeline import EmbeddingTables, WindowEmbeddings
from posviz.plots.distance import distance_chart
from posviz.plots.geometry import geometry_chart
from posviz.plots.heatmaps import embeddings_chart, embeddings_figure, similarity_chart, stacks
from posviz.plots.word_order import compare_chart
from posviz.presets import PRESETS, matching_preset
from posviz.query import (
    TABS,
    query_from_settings,
    read_link,
    seed_from_text,
    text_fits_in_link,
)
from posviz.token_text import for_markdown, readable
from posviz.tokenizer import TokenizerDataError, token_labels, token_texts
from posviz.view import TablesFor, View, batch_for, book_attention, build_view, build_word_order
from posviz_app import runtime
from posviz_app.chart import chart_canvas, show_chart, start_plotly_early

CUSTOM = "Your own text"
WORD_ORDER = "Word order"  # the compare tab
TAB_LABELS: Final = dict(  # tab= in a link (posviz.query.TABS) -> the tab's label, in order
    zip(
        TABS,
        ("Embeddings", "Similarity", "Geometry", "Distance & length", WORD_ORDER,
         "Show the code", "Download"),
        strict=True,
    )
)  # fmt: skip
R = TypeVar("R")
CHIPS_SHOWN = 64  # token chips before "and N more" (lecture mode: 24, they are larger)
LECTURE_CHIPS_SHOWN = 24
# One static style block, the only HTML posviz sends; it holds no user text and
# tests/test_faults.py allows this one constant and nothing else. The chart sizes itself
# (posviz_app/chart.py: lecture mode's chart is as tall as the window leaves below its top, the
# panels stack below a width); Streamlit 1.67 has no option for what this block does:
# * type sizes per page: theme.baseFontSize is one size for every user and mode. Lecture mode
#   needs Back/Next at least 48 px tall with 20-px text and everything a student reads at
#   least 20 px; on screens from 1600 px wide captions, tabs and metric labels grow;
# * the page's top bar: in lecture mode it is see-through and the stage starts under it (its
#   only control, the sidebar's arrow, stands left of Back). The bar and the page's padding
#   are Streamlit's own elements, reachable only by their data-testid. The bar is selected
#   through its sibling, the main area (`:has(~ ...)`), and only its full-width toolbar rows
#   are named: `body:has(...) [data-testid="stHeader"] *` made each style recalculation of
#   the page 2-3x slower, in every mode (Plotly measures its labels one by one: each forces
#   one), which cost 80-100 ms per key press at the defaults (benchmarks/browser_timing.py);
# * st.button takes one shortcut: Back/Next carry PageUp/PageDown, and two buttons that only
#   carry the arrow keys (what the other presentation clickers send) are not shown;
# * st.tabs scrolls its tab bar sideways behind an arrow when the tabs are wider than the
#   page (on a phone the last tab hid behind it): they wrap onto a second row instead, so
#   every tab shows (the tab bar is found by its key and its ARIA role, not a test id).
PAGE_STYLE = """<style>
[data-testid="stMainBlockContainer"]:has(.st-key-lecture_stage) { padding-top: 1rem; }
[data-testid="stHeader"]:has(~ [data-testid="stMain"] .st-key-lecture_stage) {
  background: transparent; pointer-events: none; }
[data-testid="stHeader"]:has(~ [data-testid="stMain"] .st-key-lecture_stage)
  [data-testid="stToolbar"],
[data-testid="stHeader"]:has(~ [data-testid="stMain"] .st-key-lecture_stage)
  [data-testid="stToolbar"] > div { pointer-events: none; }
[data-testid="stHeader"]:has(~ [data-testid="stMain"] .st-key-lecture_stage) button {
  pointer-events: auto; }
.st-key-lecture_stage h2 { font-size: 2rem; padding: 0; }
.st-key-lecture_stage [data-testid="stMarkdownContainer"] p,
.st-key-lecture_stage [data-testid="stWidgetLabel"] p,
.st-key-lecture_stage [data-testid="stSliderTickBarMin"],
.st-key-lecture_stage [data-testid="stSliderTickBarMax"],
.st-key-lecture_stage [data-testid="stSliderThumbValue"] { font-size: 1.375rem; }
.st-key-step_back button, .st-key-step_next button { min-height: 3.5rem; }
.st-key-step_back button p, .st-key-step_next button p { font-size: 1.5rem; }
.st-key-step_keys { display: none; }
.st-key-view [role="tablist"] { flex-wrap: wrap; }
@media (max-height: 959px) {  /* a short screen (1280 x 720): lecture mode's chart keeps its rows */
  .st-key-step_back button, .st-key-step_next button { min-height: 3rem; }
  [data-testid="stMainBlockContainer"]:has(.st-key-lecture_stage) { padding-top: 0.5rem; } }
@media (max-width: 1023px) {  /* the top bar's arrow would stand over Back: start below it */
  [data-testid="stMainBlockContainer"]:has(.st-key-lecture_stage) { padding-top: 3.75rem; } }
@media (max-width: 1279px) { .st-key-step_back kbd, .st-key-step_next kbd { display: none; } }
@media (max-width: 640px) { [data-testid="stMain"] h1 { font-size: 2.25rem !important; } }
@media (min-width: 1600px) {
  [data-testid="stCaptionContainer"], [data-testid="stMetricLabel"] p,
  [data-testid="stTab"] p { font-size: 1.0625rem; }
}
</style>"""
# posviz's tensors are small: torch's intra-op threads only add hand-offs, which cost 5-20 ms
# per operation when the CPU is shared with other sessions (benchmarks/bench.py measures it).
torch.set_num_threads(1)


# Caches bounded by bytes, not entries (posviz.cache): a table at d = 768 holds ~26 MB, one at
# d = 32 ~1 MB. 64 MiB keeps the two or three tables a lecture's class shares at d = 768 (the
# rest are walked again, 0.25 s each, when asked for) and keeps a server under a class
# exploring freely within 500 MB (benchmarks/loadtest.py, scenario explore).
TABLES_BYTES = 64 * 2**20
ATTENTION_BYTES = 16 * 2**20  # SelfAttention_v2 weights: 7 MB at d = 768
SHAPES_BYTES = 32 * 2**20  # Geometry / Distance results: ten tables at T = 1024, d = 768


@st.cache_resource(show_spinner=False)
def table_cache() -> BytesCache[tuple[int, int], SeededEmbeddings]:
    """The book's tables of each (seed, d) asked for, shared by all sessions of the process."""
    return BytesCache(max_bytes=TABLES_BYTES, size=lambda tables: tables.max_bytes)


def seeded_tables(seed: int, emb_dim: int) -> SeededEmbeddings:
    """Checkpoints of ``nn.Embedding(50257, emb_dim)`` after ``torch.manual_seed(seed)``."""

    def walk() -> SeededEmbeddings:
        with st.spinner("Walking the 50,257-row token table once…"):
            return SeededEmbeddings.create(seed=seed, emb_dim=emb_dim)

    return table_cache().get((seed, emb_dim), walk)


# Not cached: recomputing a window from the cached tables takes milliseconds, and a cache of
# [n, d] matrices (9 MB each at T=1024, d=768) would cost more memory than it saves time.
def tables_for(settings: Settings) -> EmbeddingTables:
    """The tables a view of ``settings`` looks its rows up in (cached per process)."""
    return seeded_tables(settings.seed, settings.emb_dim)


@st.cache_resource(show_spinner=False)
def gpt2_store() -> Gpt2Store:
    """GPT-2's tables in the cache folder; one store per process, so sessions that ask at the
    same time download once (its lock) and share the memory-mapped tables."""
    return Gpt2Store()


_TABLES_COMMIT = "_gpt2_commit"  # this run's GPT-2 tables' commit (set by main)


def tables_commit() -> str:
    """The Hub commit of the GPT-2 tables this run shows (not the cache's current ref)."""
    return str(st.session_state.get(_TABLES_COMMIT, "unknown"))


def gpt2_tables() -> Gpt2Embeddings | str:
    """GPT-2's trained tables (downloaded once, with a progress bar), or why they cannot be
    shown: not cached and not downloadable, or damaged."""
    bars: list[DeltaGenerator] = []

    def progress(done: int, total: int) -> None:
        table = "token table (wte)" if total > 10_000_000 else "positional table (wpe)"
        text = f"Downloading GPT-2's {table} once: {done / 1e6:.0f} of {total / 1e6:.0f} MB"
        if not bars:
            bars.append(st.progress(0.0, text=text))
        bars[0].progress(min(done / total, 1.0), text=text)

    try:
        return gpt2_store().tables(progress=progress)
    except Gpt2Unavailable as error:
        return str(error)
    finally:
        for bar in bars:
            bar.empty()


_LINK_READ = "_link_read"  # set once a session has read its settings from the link
_LINK_NOTICES = "_link_notices"  # what the link said, while its settings are shown


def once_link_read(callback: Callable[..., None]) -> Callable[..., None]:
    """A widget callback that runs only in a session whose state was set up by ``init_state``.

    Streamlit's ``clear_cache`` message empties the session's state too; the callbacks that
    follow would find none of the keys they read (a KeyError the load test found). They are
    skipped instead, and the run after them reads the view back from the link.
    """

    @wraps(callback)
    def guarded(*args: object) -> None:
        if _LINK_READ in st.session_state:
            callback(*args)

    return guarded


_INIT_DIM_SCHEME = "init_dim_scheme"  # the d and scheme the random init had before GPT-2


@once_link_read
def switch_weights() -> None:
    """GPT-2's tables fix d = 768 and the learned scheme; back on init, the view's own d and
    scheme return."""
    weights = st.session_state["weights"]
    if weights == "gpt2":
        st.session_state[_INIT_DIM_SCHEME] = (
            st.session_state["emb_dim"],
            st.session_state["scheme"],
        )
        fixed = for_weights(widget_settings(), "gpt2")
        st.session_state.update(emb_dim=fixed.emb_dim, scheme=fixed.scheme)
    else:
        back_to_init()


def back_to_init() -> None:
    """Weights back to the random init, with the d and scheme it had before GPT-2 (a link
    that opened with GPT-2: the defaults). Only before the widgets are drawn."""
    emb_dim, scheme = st.session_state.get(_INIT_DIM_SCHEME, (Settings.emb_dim, Settings.scheme))
    st.session_state.update(weights="init", emb_dim=emb_dim, scheme=scheme)


def trained_or_init() -> Gpt2Embeddings | None:
    """Before the widgets are drawn: GPT-2's tables if the weights ask for them; if they
    cannot be had, the random init the user had (all controls enabled again) and one
    message saying why and what to run."""
    if st.session_state.get("weights") != "gpt2":
        return None
    trained = gpt2_tables()
    if isinstance(trained, Gpt2Embeddings):
        return trained
    back_to_init()
    shown = widget_settings()
    st.warning(
        f"{for_markdown(trained.rstrip('.'))}. "
        f"{fallback_sentence(shown.emb_dim, shown.seed, shown.scheme)}",
        icon="⚠️",
    )
    return None


@st.cache_resource(show_spinner=False)
def attention_cache() -> BytesCache[int, AttentionWeights]:
    """SelfAttention_v2 weights of each d asked for, shared by all sessions of the process."""
    return BytesCache(max_bytes=ATTENTION_BYTES, size=lambda weights: weights.nbytes)


def attention_weights(emb_dim: int) -> AttentionWeights:
    """The book's SelfAttention_v2(d, d) weights after torch.manual_seed(789) (cached)."""
    return attention_cache().get(emb_dim, lambda: book_attention(emb_dim))


def widget_settings() -> Settings:
    """The settings the widgets hold now (not validated)."""
    return settings_from_widgets(st.session_state.to_dict())


def init_state() -> list[str]:
    """On a session's first run, take the settings from the URL; return the link's notices,
    at every run until the settings are changed (the chart's size report reruns the page at
    once: the notices must outlive that run)."""
    if _LINK_READ in st.session_state:
        notices, settings = st.session_state.get(_LINK_NOTICES, ((), None))
        if settings != widget_settings():
            st.session_state.pop(_LINK_NOTICES, None)
            return []
        return list(notices)
    st.session_state[_LINK_READ] = True
    link = read_link({key: st.query_params.get_all(key) for key in st.query_params})
    st.session_state[_LINK_NOTICES] = (link.notices, link.settings)
    st.session_state.update(widget_values(link.settings))
    st.session_state["lecture"] = link.lecture
    reset_step()
    if link.step is not None:
        st.session_state["step"] = link.step - 1  # links count steps from 1
    if link.settings.compare_text:  # a link with a second text opens the compare tab
        st.session_state["view"] = WORD_ORDER
    if link.tab is not None:  # unless it names a tab
        st.session_state["view"] = TAB_LABELS[link.tab]
    return list(link.notices)


@once_link_read
def apply_preset() -> None:
    """The example menu: load the chosen example into the widgets (keeping the weights);
    "Your own text" empties the text boxes for the user's own words."""
    preset = PRESETS.get(st.session_state["preset"])
    if preset is None:
        st.session_state["text"] = st.session_state["compare_text"] = ""
        return
    st.session_state.update(widget_values(for_weights(preset, st.session_state["weights"])))
    if preset.compare_text:
        st.session_state["view"] = WORD_ORDER


def explain(text: str, *, lecture: bool) -> None:
    """A caption; in lecture mode normal-size text, readable from the back of the room."""
    if lecture:
        st.markdown(text)
    else:
        st.caption(text)


@once_link_read
def reset_step() -> None:
    """Lecture mode starts at step 1; outside it every step is shown at once."""
    st.session_state["step"] = 0 if st.session_state.get("lecture") else len(SLIDES) - 1


@once_link_read
def keep_stride_in_step() -> None:
    """Moving the context length moves the stride with it (non-overlapping windows)."""
    st.session_state["stride"] = st.session_state["context_length"]
    st.session_state["window"] = 0


@once_link_read
def keep_window_in_batch() -> None:
    """A new stride keeps the window shown if the batch still has it, else shows its last
    window: a valid window, without the notice meant for links."""
    try:
        batch = batch_for(widget_settings())
    except (SettingsError, TokenizerDataError):
        return  # the run itself says what is wrong
    st.session_state["window"] = min(st.session_state["window"], max(batch.num_windows - 1, 0))


_CUT = "_cut_from"  # + widget key: how long a text was before it was cut to the limit


def keep_within_limit(key: str) -> None:
    """Cut the text box ``key`` to its first ``MAX_TEXT_CHARS`` characters, remembering
    that it was cut. Called before the box is drawn: the browser then shows the cut text."""
    text = st.session_state.get(key)
    if isinstance(text, str) and len(text) > MAX_TEXT_CHARS:
        st.session_state[_CUT + key] = len(text)
        st.session_state[key] = text[:MAX_TEXT_CHARS]


def cut_to_limit(key: str) -> None:
    """The text box's callback: a paste longer than the limit keeps its first
    ``MAX_TEXT_CHARS`` characters (the box has no ``max_chars``: in the browser that refuses
    the whole paste); an edit within the limit forgets an earlier cut."""
    st.session_state.pop(_CUT + key, None)
    keep_within_limit(key)


def cut_notice(key: str) -> None:
    """Under a text box: say that what was pasted into it was cut, and how much."""
    original = st.session_state.get(_CUT + key)
    if isinstance(original, int):
        st.warning(
            f"The text had {original:,} characters: posviz keeps the first {MAX_TEXT_CHARS:,} "
            "(enough for the whole of The Verdict) and cut the rest off.",
            icon="✂️",
        )


def controls(*, lecture: bool) -> Settings:
    """The sidebar widgets; returns the settings they hold."""
    with st.sidebar:
        # The menu names the example the widgets show (a scheme, the weights or the causal
        # mask alone keep it), else "Your own text": derived from the settings at each run.
        st.session_state["preset"] = matching_preset(widget_settings()) or CUSTOM
        st.selectbox("Example", [*PRESETS, CUSTOM], key="preset", on_change=apply_preset)
        trained = st.session_state.get("weights") == "gpt2"
        st.radio(
            "Weights",
            WEIGHTS,
            format_func=WEIGHTS_LABELS.__getitem__,
            key="weights",
            on_change=switch_weights,
            horizontal=True,
            help=WEIGHTS_HELP,
        )
        if trained:
            st.caption(TRAINED_FIXES)
        st.selectbox(
            "Positional scheme",
            list(SCHEME_LABELS),
            format_func=SCHEME_LABELS.__getitem__,
            key="scheme",
            **fixed_by_gpt2(trained, SCHEME_FIXED),
        )
        keep_within_limit("text")  # a client that skipped the browser's box, or its callback
        st.text_area(
            "Text",
            key="text",
            height=130,
            on_change=cut_to_limit,
            args=("text",),
            help=f"Up to {MAX_TEXT_CHARS:,} characters. `<|endoftext|>` becomes token 50256.",
        )
        cut_notice("text")
        link_note(st.session_state["text"])
        st.slider(
            "Context length T (rows of the positional table)",
            *CONTEXT_LENGTH_RANGE,
            key="context_length",
            on_change=keep_stride_in_step,
        )
        st.slider(
            "Embedding dimension d",
            *EMB_DIM_RANGE,
            key="emb_dim",
            **fixed_by_gpt2(trained, EMB_DIM_FIXED),
        )
        if not lecture:  # lecture mode: fewer controls
            st.slider(
                "Stride (tokens between window starts)",
                1,
                CONTEXT_LENGTH_RANGE[1],
                key="stride",
                on_change=keep_window_in_batch,
                persist_state="session",
                help="Equal to the context length: windows do not overlap, as in section 2.8.",
            )
            seed_box(trained)
        st.toggle(
            "Lecture mode",
            key="lecture",
            on_change=reset_step,
            help="Large type for a projector, and a step-by-step walk through the pipeline.",
        )
    return widget_settings()


_SEED_BOX = "seed_box"  # the seed as typed; the seed in use is st.session_state["seed"]
_SEED_NOTICE = "_seed_notice"  # why the last seed typed was not used


def seed_box(trained: bool) -> None:
    """The seed as a text box (a number box turns "abc" into 0 and "1e3" into 1 without a
    word): what cannot be a seed is named under it, and the seed in use stays."""
    if st.session_state.get(_SEED_BOX) != str(st.session_state["seed"]):
        st.session_state[_SEED_BOX] = str(st.session_state["seed"])
    low, high = SEED_RANGE
    options = fixed_by_gpt2(trained, SEED_NO_EFFECT)
    st.text_input(
        "Seed for torch.manual_seed",
        key=_SEED_BOX,
        on_change=read_seed,
        disabled=options["disabled"],
        help=options["help"] or f"A whole number from {low} to {high:,}, as in the book (123).",
    )
    notice = st.session_state.pop(_SEED_NOTICE, None)
    if isinstance(notice, str):
        st.warning(notice, icon="⚠️")


@once_link_read
def read_seed() -> None:
    """The seed box's callback: use the seed typed, or keep the one in use and say why."""
    seed, notice = seed_from_text(str(st.session_state[_SEED_BOX]), int(st.session_state["seed"]))
    st.session_state["seed"] = seed
    st.session_state[_SEED_BOX] = str(seed)
    if notice is not None:
        st.session_state[_SEED_NOTICE] = notice


class FixedOptions(TypedDict):
    """The options of a widget GPT-2's tables may fix."""

    disabled: bool
    help: str | None


def fixed_by_gpt2(trained: bool, why: str) -> FixedOptions:
    """Widget options for a setting GPT-2's tables fix: greyed out, saying why."""
    return {"disabled": trained, "help": why if trained else None}


def link_note(text: str) -> None:
    """Next to the text: say when the page's link cannot carry it, and offer the text file."""
    if text_fits_in_link(text):
        return
    st.caption(
        f"This text ({len(text):,} characters) is too long for the page's link: the link "
        "keeps the other settings and tells whoever opens it that the text was left out. "
        "Share the text as a file:"
    )
    st.download_button(
        "Download the text (.txt)",
        data=text.encode("utf-8"),
        file_name="posviz_text.txt",
        mime="text/plain",
        key="download_text",
        on_click="ignore",
    )


def window_picker(view: View) -> None:
    """The view's notices (a window the text does not have), and the window slider."""
    for notice in view.notices:
        st.warning(notice, icon="⚠️")
    # Always set: a new number of windows gives the slider a new identity, which would
    # otherwise restart it at 0 while the chart shows another window.
    st.session_state["window"] = view.window
    if view.batch.num_windows > 1:
        st.slider(
            f"Window of the batch (B = {view.batch.num_windows})",
            0,
            view.batch.num_windows - 1,
            key="window",
        )


def chips_markdown(view: View, start: int, stop: int, *, lecture: bool) -> str:
    """Markdown for the token chips of positions ``start``..``stop - 1``: ``position · token ·
    id``. A token that repeats in the window is orange and says how often it occurs (``×3``:
    colour is not the only sign); a character split over several tokens is named in each
    (``東 (1 of 2)``, decoded across the window's tokens)."""
    counts = Counter(view.token_ids)
    texts = token_labels(view.token_ids)
    # Badges have a fixed small size; coloured backgrounds grow with the heading in lecture mode.
    style, chips = ("background", ["####"]) if lecture else ("badge", [])
    for offset in range(start, stop):
        token_id, text = view.token_ids[offset], for_markdown(texts[offset])
        if counts[token_id] > 1:
            chips.append(f":orange-{style}[{offset} · {text} · {token_id} · ×{counts[token_id]}]")
        else:
            chips.append(f":blue-{style}[{offset} · {text} · {token_id}]")
    return " ".join(chips)


def token_chips(view: View, *, lecture: bool) -> None:
    """The window's tokens as chips: the first screenful, the rest behind "and N more"."""
    batch, window = view.batch, view.window
    span = batch.window_span(window)
    shown = min(len(view.token_ids), LECTURE_CHIPS_SHOWN if lecture else CHIPS_SHOWN)
    st.markdown(chips_markdown(view, 0, shown, lecture=lecture))
    if shown < len(view.token_ids):
        more = st.expander(
            f"and {len(view.token_ids) - shown:,} more tokens", key="more_chips", on_change="rerun"
        )
        if more.open:  # built only when opened: a thousand chips are slow to draw
            with more:
                st.markdown(chips_markdown(view, shown, len(view.token_ids), lecture=False))
    if lecture:
        return  # the step's caption is the narration
    explain(
        lecture=False,
        text=f"Window {window} of the batch covers tokens {span.start}–{span.stop - 1} of "
        f"{len(batch.token_ids)} (positions 0–{len(span) - 1}). Orange, ×N: a token that occurs "
        "N times in this window: same token id, same token vector.",
    )
    if batch.dropped:
        dropped = batch.token_ids[batch.dropped.start : batch.dropped.stop]
        struck = " ".join(
            f":gray-badge[~~{for_markdown(text)}~~]" for text in token_texts(dropped[:32])
        )
        rest = f" and {len(dropped) - 32} more" if len(dropped) > 32 else ""
        st.markdown(
            f"**Dropped:** {len(dropped)} token(s) at the end do not fill a window of "
            f"{batch.context_length}: {struck}{rest}"
        )
    if batch.skipped:
        st.markdown(f"**Skipped:** the stride jumps over {batch.skipped} token(s) between windows.")


def shapes_line(settings: Settings, batch: Batch, *, compact: bool) -> None:
    """The tensor shapes of section 2.8 for this text, worded for the scheme: large numbers,
    each as wide as it needs (never cut), wrapping onto a second row on narrow screens.
    ``compact`` (lecture mode, a phone): one line of text, to leave the window's height to the
    chart and keep the lesson sentence on the first screen."""
    labels = shape_labels(
        settings.scheme, (batch.num_windows, batch.window_length), settings.emb_dim,
        settings.context_length,
    )  # fmt: skip
    if compact:
        st.markdown("  ".join(f"{s.label.rsplit(' [', 1)[0]} **{s.value}**" for s in labels))
        return
    with st.container(horizontal=True, gap="medium", key="shapes"):
        for shape in labels:
            st.metric(
                shape.label,
                shape.value,
                delta=shape.note,
                delta_color="off",
                delta_arrow="off",
                width="content",
            )


def current_step(*, lecture: bool) -> int:
    """The lecture slide to show, 0-based (outside lecture mode: the last)."""
    if not lecture:
        return len(SLIDES) - 1
    return min(max(int(st.session_state.get("step", 0)), 0), len(SLIDES) - 1)


def lecture_steps(slide: Slide, scheme: Scheme) -> None:
    """Back / Next with the slide's title and narration. A presentation clicker sends PageDown /
    PageUp or the arrow keys: Back and Next carry the first two, two unseen buttons the
    others (Streamlit ignores them while a text box or slider has the keyboard)."""
    back, middle, forward = st.columns([2, 7, 2], vertical_alignment="center")
    first, last = slide.number == 1, slide.number == len(SLIDES)
    back.button(
        "◀ Back", key="step_back", on_click=move_step, args=(-1,), disabled=first,
        width="stretch", shortcut="PageUp",
    )  # fmt: skip
    forward.button(
        "Next ▶", key="step_next", type="primary", on_click=move_step, args=(1,),
        disabled=last, width="stretch", shortcut="PageDown",
    )  # fmt: skip
    # The title and the unseen arrow-key buttons side by side: the hidden ones take no row.
    with middle.container(horizontal=True, gap=None, vertical_alignment="center"):
        st.header(slide.title_for(scheme))
        with st.container(key="step_keys", width=1):  # display: none (PAGE_STYLE)
            st.button("←", key="step_back_arrow", on_click=move_step, args=(-1,),
                      disabled=first, shortcut="Left")  # fmt: skip
            st.button("→", key="step_next_arrow", on_click=move_step, args=(1,),
                      disabled=last, shortcut="Right")  # fmt: skip
    caption = slide.caption_for(scheme)
    if caption:
        st.markdown(caption)


def keyed_markdown(text: str, key: str) -> None:
    """Markdown in a container the page's tests (and PAGE_STYLE) can find by ``key``."""
    with st.container(key=key):
        st.markdown(text)


def ask_or_answer(slide: Slide, question: str, answer: Callable[[], str]) -> None:
    """A question step: before the reveal its question, after it the answer (computed only
    then); other steps say nothing more."""
    if slide.step.question is None:
        return
    if slide.revealed:
        keyed_markdown(f"**Answer:** {answer()}", "lecture_answer")
    else:
        keyed_markdown(f"**Your guess?** {question}", "lecture_question")


@once_link_read
def move_step(delta: int) -> None:
    """Back / Next (and the clicker keys): one lecture slide back or forward."""
    step = int(st.session_state.get("step", 0)) + delta
    st.session_state["step"] = min(max(step, 0), len(SLIDES) - 1)


def chart_stacks(embeddings: WindowEmbeddings, key: str) -> bool:
    """Whether chart ``key`` stacks its panels in the room it last reported (the words above
    it say "top" and "bottom" then, not "left" and "right")."""
    return stacks(embeddings, canvas=chart_canvas(key))


def embeddings_view(settings: Settings, embeddings: WindowEmbeddings) -> None:
    """The Embeddings tab: the lesson in numbers, the three heatmaps, what the scheme adds."""
    # The figure first: the sentence reads what it decided (rows, dims, stacking, outlines).
    drawn = embeddings_chart(embeddings, canvas=chart_canvas("embeddings"))
    keyed_markdown(lesson_sentence(drawn.decisions), "lesson")
    show_chart(drawn.spec, key="embeddings")
    if settings.weights == "gpt2":
        st.markdown(source_caption(tables_commit(), len(embeddings.token_ids)))
    else:
        st.markdown(SCHEME_NOTES[settings.scheme])


def similarity_view(settings: Settings, embeddings: WindowEmbeddings) -> None:
    """The Similarity tab: which cells read 1.0 and why, the three similarity matrices, and
    what the position panel shows (said only as far as its numbers show it)."""
    drawn = similarity_chart(embeddings, canvas=chart_canvas("similarity"))
    decisions = drawn.decisions  # and the numbers of the cells it drew
    keyed_markdown(similarity_sentence(decisions), "lesson")
    show_chart(drawn.spec, key="similarity")
    if settings.scheme == "learned" and decisions.neighbours is not None:
        st.markdown(neighbour_sentence(decisions))
        explain(pattern_sentence(decisions, trained=settings.weights == "gpt2"), lecture=False)
    else:
        explain(position_panel_note(settings.scheme, spread=decisions.spread), lecture=False)


@once_link_read
def use_example_pair() -> None:
    """The compare tab's example: "The dog bites the man" / "The man bites the dog"."""
    st.session_state["text"] = DEFAULT_TEXT
    st.session_state["compare_text"] = DEFAULT_COMPARE_TEXT
    st.session_state["window"] = 0


def compare_view(view: View, tables: TablesFor, *, lecture: bool) -> None:
    """Compare mode: the window on screen and a second text, through self-attention."""
    settings = view.settings
    st.markdown(
        "Type the **same words in another order**. Section 2.8 adds positions because "
        "self-attention cannot see order: here is the proof, on your words."
    )
    text_column, options = st.columns([3, 2], vertical_alignment="bottom")
    keep_within_limit("compare_text")
    text_column.text_area(
        "Second text (compared with the window on screen)",
        key="compare_text",
        height=80,
        on_change=cut_to_limit,
        args=("compare_text",),
        persist_state="session",
    )
    with text_column:
        cut_notice("compare_text")
    options.toggle(
        "Causal mask, as GPT",
        help="Each token attends only to itself and the tokens before it (chapter 3.5).",
        key="causal",
        persist_state="session",
    )
    options.button(
        "Example: dog bites man / man bites dog",
        help=f"First text *{DEFAULT_TEXT}*, second text *{DEFAULT_COMPARE_TEXT}*.",
        key="example_pair",
        on_click=use_example_pair,
    )
    comparison = build_word_order(view, tables=tables, attention=attention_weights)
    message = status_message(comparison)
    if message is not None:
        st.info(message)
    note = cut_note(comparison)
    if note is not None:
        st.caption(note)
    without, positioned = comparison.without_positions, comparison.with_positions
    if without is None or positioned is None:
        return
    mask = "causal, " if settings.causal else ""
    labels = ("no positions", f"with positions ({settings.scheme})")
    for column, label, summary in zip(st.columns(2), labels, (without, positioned), strict=True):
        column.metric(
            f"mean context vector, {mask}{label}: cosine",
            f"{summary.mean_cosine:.6f}",
            delta="the same" if summary.permuted else "differs",
            delta_color="off",
            delta_arrow="off",
        )
    drawn = compare_chart(comparison, lecture=lecture, canvas=chart_canvas("compare"))
    show_chart(drawn.spec, key="compare")
    for paragraph in findings(comparison, drawn.decisions):
        st.markdown(paragraph)
    if settings.causal:
        st.markdown(CAUSAL_NOTE)
    explain(ATTENTION_NOTE, lecture=lecture)


@st.cache_resource(show_spinner=False)
def shape_cache() -> BytesCache[tuple[object, ...], object]:
    """The Geometry and Distance views' results per positional table, for every session: a
    table's geometry (its rows included: 3 MB at T = 1024, d = 768), its distance curve,
    GPT-2's cosines (see posviz.geometry.Memo)."""
    return BytesCache(max_bytes=SHAPES_BYTES, size=lambda value: getattr(value, "nbytes", 256))


def kept(key: tuple[object, ...], compute: Callable[[], R]) -> R:
    """:class:`posviz.geometry.Memo` over :func:`shape_cache`."""
    return cast(R, shape_cache().get(key, compute))


def geometry_view(view: View, tables: TablesFor) -> None:
    """The Geometry tab: the positional table's principal components beside a contrasting
    table, their singular values and row lengths, and what the numbers say."""
    geometry = build_geometry(view, tables=tables, init_tables=tables_for, memo=kept)
    explain(geometry_lesson.INTRO, lecture=False)
    drawn = geometry_chart(geometry, canvas=chart_canvas("geometry"))
    show_chart(drawn.spec, key="geometry")
    for paragraph in geometry_lesson.sentences(geometry, drawn.decisions):
        st.markdown(paragraph)
    view_code(view.settings, "geometry")


def distance_view(view: View, tables: TablesFor) -> None:
    """The Distance & length tab: cosine of positions i and i + k per scheme, and what lies
    past the context length."""
    settings = view.settings
    most = min(MAX_BEYOND, max(settings.context_length, 8))  # up to T more (at least 8)
    if "beyond" not in st.session_state:
        st.session_state["beyond"] = default_beyond(settings.context_length)
    st.session_state["beyond"] = min(int(st.session_state["beyond"]), most)  # T went down
    beyond = st.slider(
        "Positions past the context length (E)",
        0,
        most,
        key="beyond",
        help=distance_lesson.BEYOND_HELP,
    )
    distance = build_distance(view, beyond=beyond, tables=tables, init_tables=tables_for, memo=kept)
    explain(distance_lesson.INTRO, lecture=False)
    drawn = distance_chart(distance, canvas=chart_canvas("distance"))
    show_chart(drawn.spec, key="distance")
    for paragraph in distance_lesson.sentences(distance, drawn.decisions):
        st.markdown(paragraph)
    view_code(settings, "distance", beyond=beyond)


def view_code(settings: Settings, name: CodeView, *, beyond: int | None = None) -> None:
    """The Show-the-code script with this tab's numbers, behind an expander (built when
    opened)."""
    code = st.expander("The code behind these numbers", key=f"{name}_code", on_change="rerun")
    if code.open:
        with code:
            script = reproduction_script(
                settings, gpt2_revision=gpt2_revision(settings), view=name, beyond=beyond
            )
            st.code(script, language="python", line_numbers=False)


def gpt2_revision(settings: Settings) -> str:
    """The commit of the GPT-2 tables on screen (the script reads the same), else ``main``."""
    return tables_commit() if settings.weights == "gpt2" else "main"


def code_view(settings: Settings) -> None:
    """The Show-the-code tab: a torch + tiktoken script that prints the same numbers."""
    st.markdown(
        "This script uses only `torch` and `tiktoken` and recreates exactly the batch and the "
        "three matrices on screen, as section 2.8 builds them "
        f"([the book's chapter-2 code]({BOOK_CH02_URL}); `pip install torch tiktoken`; "
        "tiktoken downloads GPT-2's vocabulary on its first run)."
    )
    revision = gpt2_revision(settings)
    if settings.weights == "gpt2":
        st.markdown(
            "With GPT-2's trained tables the script reads them from the Hugging Face Hub at "
            f"commit `{revision[:12]}` (157 MB per run, standard library HTTP), not the seed."
        )
    st.code(
        reproduction_script(settings, gpt2_revision=revision), language="python", line_numbers=False
    )


def download_view(settings: Settings, embeddings: WindowEmbeddings) -> None:
    """The Download tab: CSV, .npy and an offline HTML figure of the window on screen, each
    named for the settings (``posviz_T16_d64_seed123_w0.csv``)."""
    st.markdown("The matrices of the window on screen, and the figure as an offline web page.")
    downloads = (  # label, bytes on click, file name, MIME type, widget key
        ("Matrices (.csv)", lambda: matrices_csv(embeddings), download_name(settings, "csv"),
         "text/csv", "download_csv"),
        ("Matrices (.npy, [3, n, d])", lambda: matrices_npy(embeddings),
         download_name(settings, "npy"), "application/octet-stream", "download_npy"),
        ("Figure (offline .html)", lambda: figure_html(embeddings_figure(embeddings)),
         download_name(settings, "html"), "text/html", "download_html"),
    )  # fmt: skip
    for column, (label, data, file_name, mime, key) in zip(st.columns(3), downloads, strict=True):
        column.download_button(
            label, data=data, file_name=file_name, mime=mime, key=key, on_click="ignore"
        )
    st.caption(
        "PNG: use the camera icon at the top right of a chart. The .npy file holds one float32 "
        "array [3, n, d] (token, position, input); `numpy.load` reads it without pickle."
    )


def stage_text(view: View, slide: Slide, tables: TablesFor) -> None:
    """Lecture mode's first view: the text as typed (escaped), before it is tokenized."""
    st.markdown(f"## {for_markdown(readable(view.settings.text[:400]))}")


def stage_tokens(view: View, slide: Slide, tables: TablesFor) -> None:
    """Lecture mode: the window's tokens as chips with their ids."""
    token_chips(view, lecture=True)


def stage_embeddings(view: View, slide: Slide, tables: TablesFor) -> None:
    """Lecture mode: the slide's heatmap panels (token | position | input) filling the window;
    a question slide hides the outlines (and the panel that answers it)."""
    embeddings = view.embeddings
    if embeddings is None:
        return
    place = f"slide {slide.number}"  # each slide has its own text above the chart
    drawn = embeddings_chart(
        embeddings,
        lecture=True,
        panels=slide.panels,
        outlines=slide.outlines,
        canvas=chart_canvas("embeddings", place=place),
    )
    decisions = drawn.decisions
    answer = token_answer if slide.step.panels == 1 else input_answer
    question = question_text(slide, view.settings.scheme, decisions)
    ask_or_answer(slide, question, lambda: answer(decisions))
    if not (slide.step.question and slide.revealed):  # an answer leaves its height to the rows
        shapes_line(view.settings, view.batch, compact=True)
    # Side by side: as tall as the window leaves below the chart's top; stacked (a phone): as
    # tall as its panels need, the page scrolls.
    show_chart(drawn.spec, key="embeddings", fill=decisions.fills, place=place)


def stage_similarity(view: View, slide: Slide, tables: TablesFor) -> None:
    """Lecture mode: the similarity matrices; the answer outlines the cells that read 1.0."""
    embeddings = view.embeddings
    if embeddings is None:
        return
    place = f"slide {slide.number}"
    drawn = similarity_chart(
        embeddings,
        lecture=True,
        outlines=slide.outlines,
        canvas=chart_canvas("similarity", place=place),
    )
    decisions = drawn.decisions
    question = question_text(slide, view.settings.scheme, decisions)
    ask_or_answer(slide, question, lambda: similarity_answer(decisions))
    show_chart(drawn.spec, key="similarity", fill=decisions.fills, place=place)


def stage_word_order(view: View, slide: Slide, tables: TablesFor) -> None:
    """Lecture mode: the word-order comparison. The page's second text if it has one, else
    the example pair; before the reveal the two texts, after it the figure and the numbers."""
    settings = view.settings
    if not settings.compare_text.strip():
        example = replace(settings, text=DEFAULT_TEXT, compare_text=DEFAULT_COMPARE_TEXT, window=0)
        view = build_view(example, tables=tables)
    comparison = build_word_order(view, tables=tables, attention=attention_weights)
    # The texts as compared (each cut to one window), not as typed.
    keyed_markdown(f"### {texts_line(comparison)}", "word_order_texts")
    question = question_text(slide, settings.scheme, None, compared=comparison)
    ask_or_answer(slide, question, lambda: word_order_answer(comparison))
    if not slide.revealed:
        return
    message = status_message(comparison)
    if message is not None:
        st.info(message)
        return
    place = f"slide {slide.number}"
    drawn = compare_chart(comparison, lecture=True, canvas=chart_canvas("compare", place=place))
    show_chart(drawn.spec, key="compare", fill=drawn.decisions.fills, place=place)


def slide_question(view: View, slide: Slide) -> str:
    """The slide's question for this window and these weights (``""`` for a blank text)."""
    if view.embeddings is None:
        return ""
    settings = view.settings
    return question_text(slide, settings.scheme, None, weights=settings.weights)


def stage_geometry(view: View, slide: Slide, tables: TablesFor) -> None:
    """Lecture mode: cloud or curve? Before the reveal the question alone; after it the two
    tables' 3D scatters filling the window, and the answer from their numbers."""
    question = slide_question(view, slide)
    if not slide.revealed:
        ask_or_answer(slide, question, lambda: "")
        return
    geometry = build_geometry(view, tables=tables, init_tables=tables_for, memo=kept)
    place = f"slide {slide.number}"
    drawn = geometry_chart(
        geometry, lecture=True, spectrum=False, canvas=chart_canvas("geometry", place=place)
    )
    ask_or_answer(
        slide, question, lambda: geometry_lesson.lecture_answer(geometry, drawn.decisions)
    )
    # One scene under the other on a phone: taller than its window, the page scrolls.
    show_chart(drawn.spec, key="geometry", fill=drawn.decisions.fills, place=place)


def stage_distance(view: View, slide: Slide, tables: TablesFor) -> None:
    """Lecture mode: similarity against distance, with a quarter of T past the context
    length; before the reveal the question alone."""
    question = slide_question(view, slide)
    if not slide.revealed or view.embeddings is None:
        ask_or_answer(slide, question, lambda: "")
        return
    distance = build_distance(view, tables=tables, init_tables=tables_for, memo=kept)
    place = f"slide {slide.number}"
    drawn = distance_chart(distance, lecture=True, canvas=chart_canvas("distance", place=place))
    ask_or_answer(
        slide, question, lambda: distance_lesson.lecture_answer(distance, drawn.decisions)
    )
    show_chart(drawn.spec, key="distance", fill=drawn.decisions.fills, place=place)


# Lecture mode draws each step's view with one of these (posviz.lesson.lecture: Step.view).
STAGE_VIEWS: dict[str, Callable[[View, Slide, TablesFor], None]] = {
    "text": stage_text,
    "tokens": stage_tokens,
    "embeddings": stage_embeddings,
    "similarity": stage_similarity,
    "word_order": stage_word_order,
    "geometry": stage_geometry,
    "distance": stage_distance,
}


def lecture_stage(view: View, step: int, tables: TablesFor) -> None:
    """Lecture mode: one slide on one screen, the chart filling what the text leaves."""
    slide = SLIDES[step]
    with st.container(key="lecture_stage", border=False, gap="xsmall"):
        lecture_steps(slide, view.settings.scheme)
        window_picker(view)
        STAGE_VIEWS[slide.step.view](view, slide, tables)


def window_views(view: View, tables: TablesFor) -> None:
    """Below the controls: chips, shapes and the tabs (each built only when open); outside
    lecture mode (lecture mode is :func:`lecture_stage`)."""
    settings = view.settings
    embeddings = view.embeddings
    if embeddings is None:
        return
    token_chips(view, lecture=False)
    shapes_line(settings, view.batch, compact=chart_stacks(embeddings, "embeddings"))
    views: dict[str, Callable[[], None]] = {  # by their tab= names, in TAB_LABELS' order
        "embeddings": lambda: embeddings_view(settings, embeddings),
        "similarity": lambda: similarity_view(settings, embeddings),
        "geometry": lambda: geometry_view(view, tables),
        "distance": lambda: distance_view(view, tables),
        "word-order": lambda: compare_view(view, tables, lecture=False),
        "code": lambda: code_view(settings),
        "download": lambda: download_view(settings, embeddings),
    }
    made = st.tabs(list(TAB_LABELS.values()), key="view", on_change="rerun")
    for name, tab in zip(TAB_LABELS, made, strict=True):
        if tab.open:  # each tab is built only when open
            with tab:
                views[name]()


def open_tab() -> str:
    """The ``tab=`` name of the tab the reader has open (the first until they choose)."""
    names = {label: name for name, label in TAB_LABELS.items()}
    return names.get(str(st.session_state.get("view")), TABS[0])


def main() -> None:
    """The page, top to bottom."""
    start_plotly_early()  # first: the page fetches plotly.js while the rest is drawn
    link_run = _LINK_READ not in st.session_state  # the first run reads the link
    notices = init_state()
    lecture = bool(st.session_state.get("lecture"))
    st.set_page_config(
        page_title="posviz: positional embeddings",
        page_icon="➕",
        layout="wide",
        initial_sidebar_state="collapsed" if lecture else "auto",  # lecture: the whole screen
    )
    st.html(PAGE_STYLE)
    if not lecture:  # in lecture mode the step's title heads the page
        st.title("Token + position = input embeddings")
        st.caption(
            f"[Section 2.8]({BOOK_CH02_NOTEBOOK_URL}) of *Build a Large Language Model (From "
            "Scratch)*: GPT-2's tokenizer, "
            "`torch.manual_seed(seed)`, `nn.Embedding(50257, d)` and `nn.Embedding(T, d)`."
        )
    for notice in notices:
        st.warning(f"Link setting not used: {for_markdown(notice)}", icon="⚠️")
    trained = trained_or_init()  # before the widgets: a fallback may change them
    if trained is not None:
        st.session_state[_TABLES_COMMIT] = trained.commit
    settings = controls(lecture=lecture)

    with runtime.view_slot():  # at most VIEW_SLOTS views computed at once: bounded memory
        view_page(settings, trained, lecture=lecture, link_run=link_run)


def view_page(
    settings: Settings, trained: Gpt2Embeddings | None, *, lecture: bool, link_run: bool
) -> None:
    """Everything below the controls: the view of ``settings``, its link, and its tabs."""

    def view_tables(settings: Settings) -> EmbeddingTables:
        return trained if trained is not None else tables_for(settings)

    try:
        view = build_view(settings, tables=view_tables)
    except (SettingsError, TokenizerDataError, TorchFillError) as error:  # bad files or torch
        st.error(str(error))
        return
    step = current_step(lecture=lecture)
    st.query_params.from_dict(  # in lecture mode the link opens this step: one per slide
        query_from_settings(
            view.settings,
            lecture=lecture,
            step=step + 1 if lecture else None,
            tab=None if lecture else open_tab(),
        )
    )
    if view.embeddings is None:
        st.info(
            "Type or paste some text in the sidebar (or pick an example) to see its embeddings."
        )
        return

    if not link_run:  # a window the text lacks after an interaction: no notice (links only)
        view = replace(view, notices=())
    if lecture:
        lecture_stage(view, step, view_tables)
        return
    window_picker(view)
    window_views(view, view_tables)


def run() -> None:
    """One script run: the page, with a message (never a traceback) if anything fails."""
    runtime.prepare()
    try:
        main()
    except Exception:  # last line of defence: a message; the traceback goes to the log
        runtime.LOGGER.exception("unexpected error in a script run")
        st.error(
            "posviz hit an unexpected problem with these settings. Try other values or reload."
        )
    else:
        runtime.run_finished()
