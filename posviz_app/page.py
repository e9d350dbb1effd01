"""posviz's page: token + position = input embeddings, side by side (Raschka, LLMs from
Scratch, §2.8).

:func:`run` draws the page once; Streamlit calls it through ``app.py`` (``streamlit run
app.py``, Community Cloud's main file) or ``posviz app``, at every rerun. Top to bottom: the
link (first run only), GPT-2's tables if asked for, the sidebar, the view of the settings, its
link, and then lecture mode's stage or the tabs. Each view draws itself
(``posviz_app/views/``); the session's state is :mod:`posviz_app.state`'s; the page's style is
``page.css``.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Final

import streamlit as st
import torch
from streamlit.delta_generator import DeltaGenerator

from posviz.codegen import BOOK_CH02_NOTEBOOK_URL
from posviz.config import Settings, SettingsError, widget_values
from posviz.embeddings import TorchFillError
from posviz.gpt2.store import FETCH_COMMAND, Gpt2Embeddings
from posviz.lesson.gpt2 import fallback_sentence
from posviz.lesson.lecture import SLIDES
from posviz.pipeline import EmbeddingTables
from posviz.query import query_from_settings, read_link
from posviz.token_text import for_markdown
from posviz.tokenizer import TokenizerDataError
from posviz.view import TablesFor, View, build_view
from posviz_app import lecture, runtime, state
from posviz_app.caches import gpt2_tables, tables_for
from posviz_app.chart import start_plotly_early
from posviz_app.controls import sidebar
from posviz_app.room import Room
from posviz_app.views import LABELS, TABS, tab_named
from posviz_app.views.tokens import chips

PAGE_CSS: Final = Path(str(resources.files("posviz_app").joinpath("page.css")))
# A link's notices stand until the user changes any setting (the page is then no longer the
# link's); a failed GPT-2 download's, until the weights or what the fallback shows change.
LINK_ABOUT: Final = (*state.SETTINGS_KEYS, state.LECTURE)
GPT2_ABOUT: Final = (state.WEIGHTS, state.EMB_DIM, state.SEED, state.SCHEME)
INFO: Final = "ℹ️"  # the icon of what the page says about a choice it made for the user
GPT2_FALLBACK: Final = "gpt2-fallback"
GPT2_LINK_FALLBACK: Final = "gpt2-fallback-link"  # a link's request: the link keeps asking
# posviz's tensors are small: torch's intra-op threads only add hand-offs, which cost 5-20 ms
# per operation when the CPU is shared with other sessions (benchmarks/bench.py measures it).
torch.set_num_threads(1)


def read_the_link() -> list[tuple[str, str]]:
    """On a session's first run: the settings, lecture mode, slide and tab its link asks for,
    into the widgets (before they are drawn); returns what to say about the link's values (each
    sentence with its icon): values not used, and settings chosen to fit the ones given."""
    link = read_link({key: st.query_params.get_all(key) for key in st.query_params})
    state.set_values(widget_values(link.settings))
    state.set_values({state.LECTURE: link.lecture, state.STEP: (link.step or 1) - 1})
    state.set_values({state.TRAIN_3D: link.components == "3d"})
    if link.settings.compare_text:  # a link with a second text opens the compare tab
        state.set_values({state.TAB: LABELS["word-order"]})
    if link.tab is not None:  # unless it names a tab
        state.set_values({state.TAB: LABELS[link.tab]})
    state.mark_link_read()
    not_used = [(f"Link setting not used: {text}", "⚠️") for text in link.notices]
    return not_used + [(f"Link: {text}", INFO) for text in link.chosen]


def trained_or_init(*, from_link: bool) -> Gpt2Embeddings | None:
    """Before the widgets are drawn: GPT-2's tables if the weights ask for them; if they
    cannot be had, the random init the user had (all controls enabled again) and one notice
    saying why and what to run, which stands until the weights or what it shows change. A
    link's request (``from_link``) stays in the page's link while the notice stands, so a
    reload tries again (a lecture's link, once the tables are fetched); a choice made on the
    page that fails leaves the link of the view it restores."""
    if state.weights() != "gpt2":
        return None
    with runtime.slot_released():  # a download, or a wait for another session's
        trained = gpt2_tables()
    if isinstance(trained, Gpt2Embeddings):
        state.set_tables_commit(trained.commit)
        return trained
    state.back_to_init()
    shown = state.settings()
    state.say(
        f"{trained}\n\n{fallback_sentence(shown.emb_dim, shown.seed, shown.scheme)}",
        where="top",
        about=GPT2_ABOUT,
        tag=GPT2_LINK_FALLBACK if from_link else GPT2_FALLBACK,
    )
    return None


def notice_markdown(text: str) -> str:
    """A notice's ``text`` as Markdown that shows it literally (:func:`for_markdown`), the
    command it asks to run as code: whole on one line, copied as it is (a browser breaks plain
    text after the hyphen of ``-m``)."""
    block = f"\n\n```\n{FETCH_COMMAND}\n```\n\n"  # a code block does not wrap
    return for_markdown(text).replace(for_markdown(FETCH_COMMAND), block)


def window_picker(view: View) -> None:
    """The window's notices (a link to a window the text lacks), and the window slider."""
    for notice in state.notices("window"):
        st.warning(notice.text, icon=notice.icon)
    # Always set: a new number of windows gives the slider a new identity, which would
    # otherwise restart it at 0 while the chart shows another window.
    state.set_values({state.WINDOW: view.window})
    if view.batch.num_windows > 1:
        st.slider(
            f"Window of the batch (B = {view.batch.num_windows})",
            0,
            view.batch.num_windows - 1,
            key=state.WINDOW,
        )


def tabs(view: View, tables: TablesFor) -> None:
    """Below the controls: the chips, a row of buttons that picks the tab, and the open tab
    (the only one built).

    Buttons (``st.segmented_control``), not ``st.tabs``: Streamlit's tabs redraw their bar and
    their panel at every rerun, about 50 ms of the browser's CPU per key press on this page
    (react-aria's tab panel; ``docs/performance.md``), a third of the press; the buttons cost
    none of it. ``required``: one tab is always open (a second click keeps it open)."""
    chips(view, lecture=False)
    open_tab = tab_named(state.tab_label())
    if state.tab_label() != open_tab.label:  # none yet (a new session): the first tab
        state.set_values({state.TAB: open_tab.label})
    st.segmented_control(
        "Tab", [tab.label for tab in TABS], key=state.TAB, required=True,
        label_visibility="collapsed",
    )  # fmt: skip
    with st.container(key=state.TAB_PANEL):
        open_tab.render(Room(view, tables))


def view_page(
    settings: Settings,
    trained: Gpt2Embeddings | None,
    *,
    link_notices: list[tuple[str, str]],
    top: DeltaGenerator,
) -> None:
    """Everything below the controls: the view of ``settings``, its link, its notices, and
    lecture mode's stage or the tabs."""

    def view_tables(settings: Settings) -> EmbeddingTables:
        return trained if trained is not None else tables_for(settings)

    try:
        view = build_view(settings, tables=view_tables)
    except (SettingsError, TokenizerDataError, TorchFillError) as error:  # bad files or torch
        st.error(str(error))
        return
    state.set_values({state.WINDOW: view.window})  # a window the text lacks: window 0
    for text, icon in link_notices:  # said now, about the settings as shown
        state.say(text, where="top", about=LINK_ABOUT, icon=icon)
    for text in view.notices:
        state.say(text, where="window", about=LINK_ABOUT)
    with top:
        for notice in state.notices("top"):
            shown = st.info if notice.icon == INFO else st.warning  # a choice, not a fault
            shown(notice_markdown(notice.text), icon=notice.icon)
    in_lecture = state.lecture()
    linked = view.settings
    if state.stands(GPT2_LINK_FALLBACK):  # the link keeps asking for GPT-2: a reload tries again
        linked = replace(linked, weights="gpt2")
    st.query_params.from_dict(  # in lecture mode the link opens this slide: one per slide
        query_from_settings(
            linked,
            lecture=in_lecture,
            step=state.step() + 1 if in_lecture else None,
            tab=None if in_lecture else tab_named(state.tab_label()).name,
            components=state.components(),
        )
    )
    if view.embeddings is None:
        st.info(
            "Type or paste some text in the sidebar (or pick an example) to see its embeddings."
        )
        return
    if in_lecture:
        lecture.stage(view, view_tables, window_picker=window_picker)
        return
    window_picker(view)
    tabs(view, view_tables)


def opens_on_geometry() -> bool:
    """Whether the view this run opens is the Geometry tab or a slide that draws it."""
    if state.lecture():
        slide = SLIDES[state.step()]
        return slide.step.view == "geometry" and slide.revealed
    return tab_named(state.tab_label()).name == "geometry"


def main() -> None:
    """The page, top to bottom."""
    from_link = state.first_run()
    link_notices = read_the_link() if from_link else []  # reads, draws nothing
    # First on the page: it fetches plotly.js while the rest is drawn (the 3-D build for a
    # page that opens on Geometry).
    start_plotly_early(three_d=opens_on_geometry())
    in_lecture = state.lecture()
    st.set_page_config(
        page_title="posviz: positional embeddings",
        page_icon="➕",
        layout="wide",
        # Lecture mode takes the whole screen: folded once, where it starts (never again: the
        # lecturer may have opened the sidebar since).
        initial_sidebar_state=state.sidebar_fold(first=from_link),
    )
    state.sidebar_told()
    st.html(PAGE_CSS)
    if not in_lecture:  # in lecture mode the slide's title heads the page
        st.title("Token + position = input embeddings")
        st.caption(
            f"[Section 2.8]({BOOK_CH02_NOTEBOOK_URL}) of *Build a Large Language Model (From "
            "Scratch)*: GPT-2's tokenizer, "
            "`torch.manual_seed(seed)`, `nn.Embedding(50257, d)` and `nn.Embedding(T, d)`."
        )
    top = st.container()  # the page's notices, written once the run knows them
    trained = trained_or_init(from_link=from_link)  # before the widgets: it may change them
    if in_lecture:
        state.send_sidebar_values()
    settings = sidebar(lecture=in_lecture)
    with runtime.view_turn(settings):  # a big view: the others' turn meanwhile
        view_page(settings, trained, link_notices=link_notices, top=top)


def run() -> None:
    """One script run: the page, with a message (never a traceback) if anything fails."""
    runtime.prepare()
    try:
        with runtime.run_slot():  # one run at a time does its work (the GIL's hand-overs)
            main()
    except Exception:  # last line of defence: a message; the traceback goes to the log
        runtime.LOGGER.exception("unexpected error in a script run")
        st.error(
            "posviz hit an unexpected problem with these settings. Try other values or reload."
        )
    else:
        runtime.run_finished()
