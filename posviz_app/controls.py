"""The sidebar: the settings widgets, and the notes that belong beside them.

Each widget carries its setting under the setting's own name (:mod:`posviz_app.state`); the
example menu and the seed box show a value derived from the settings, so their keys name that
value (see :func:`posviz_app.state.derived_key`).
"""

from __future__ import annotations

from typing import Any, Final, TypedDict

import streamlit as st

from posviz.config import (
    CONTEXT_LENGTH_RANGE,
    EMB_DIM_RANGE,
    MAX_TEXT_CHARS,
    SEED_RANGE,
    WEIGHTS,
    Settings,
)
from posviz.lesson.gpt2 import (
    EMB_DIM_FIXED,
    SCHEME_FIXED,
    SEED_NO_EFFECT,
    TRAINED_FIXES,
    WEIGHTS_HELP,
    WEIGHTS_LABELS,
)
from posviz.presets import PRESETS, matching_preset
from posviz.query import text_fits_in_link
from posviz.schemes import SCHEME_NAMES, scheme
from posviz_app import state

CUSTOM: Final = "Your own text"


class FixedOptions(TypedDict):
    """The options of a widget GPT-2's tables may fix."""

    disabled: bool
    help: str | None


def fixed_by_gpt2(trained: bool, why: str) -> FixedOptions:
    """Widget options for a setting GPT-2's tables fix: greyed out, saying why."""
    return {"disabled": trained, "help": why if trained else None}


def sidebar(*, lecture: bool) -> Settings:
    """The sidebar's widgets; returns the settings they hold."""
    with st.sidebar:
        example_menu()
        trained = state.weights() == "gpt2"
        st.radio(
            "Weights",
            WEIGHTS,
            format_func=WEIGHTS_LABELS.__getitem__,
            key=state.WEIGHTS,
            on_change=state.switch_weights,
            horizontal=True,
            help=WEIGHTS_HELP,
        )
        if trained:
            st.caption(TRAINED_FIXES)
        st.selectbox(
            "Positional scheme",
            SCHEME_NAMES,
            format_func=lambda name: scheme(name).label,
            key=state.SCHEME,
            **fixed_by_gpt2(trained, SCHEME_FIXED),
        )
        scheme_options(state.scheme_name(), trained=trained)
        text_box(
            state.TEXT,
            "Text",
            height=130,
            help=f"Up to {MAX_TEXT_CHARS:,} characters. `<|endoftext|>` becomes token 50256.",
        )
        link_note(state.text())
        st.slider(
            "Context length T (rows of the positional table)",
            *CONTEXT_LENGTH_RANGE,
            key=state.CONTEXT_LENGTH,
            on_change=state.keep_stride_in_step,
        )
        st.slider(
            "Embedding dimension d",
            *EMB_DIM_RANGE,
            key=state.EMB_DIM,
            **fixed_by_gpt2(trained, EMB_DIM_FIXED),
        )
        if not lecture:  # lecture mode: fewer controls
            st.slider(
                "Stride (tokens between window starts)",
                1,
                CONTEXT_LENGTH_RANGE[1],
                key=state.STRIDE,
                on_change=state.keep_window_in_batch,
                persist_state="session",
                help="Equal to the context length: windows do not overlap, as in section 2.8.",
            )
            seed_box(trained)
        st.toggle(
            "Lecture mode",
            key=state.LECTURE,
            on_change=state.reset_step,
            help="Large type for a projector, and a step-by-step walk through the pipeline. "
            "Next / Back: the buttons, PageDown / PageUp or → / ← (a presentation clicker).",
        )
    return state.settings()


def scheme_options(name: str, *, trained: bool) -> None:
    """A widget for each option of the scheme ``name`` (RoPE's base ...), drawn from its spec
    under the option's own name; each keeps its value while another scheme is shown."""
    for declared in scheme(name).options:
        if declared.kind == "choice":
            st.selectbox(
                declared.label,
                declared.choices,
                key=declared.name,
                help=declared.help,
                disabled=trained,
                persist_state="session",
            )
        elif declared.kind == "int":
            following = declared.follows is not None  # empty: the field's value (RoPE's L₀: T)
            st.number_input(
                declared.label,
                min_value=None if declared.low is None else int(declared.low),
                max_value=None if declared.high is None else int(declared.high),
                value=None if following else "min",
                step=1,
                key=declared.name,
                help=declared.help,
                placeholder=f"= {declared.follows}" if following else None,  # empty: that field
                disabled=trained,
                persist_state="session",
            )
        else:
            st.number_input(
                declared.label,
                min_value=declared.low,
                max_value=declared.high,
                format="%g",
                key=declared.name,
                help=declared.help,
                disabled=trained,
                persist_state="session",
            )


def example_menu() -> None:
    """The example menu names the example the widgets show (a scheme, the weights or the causal
    mask alone keep it), else "Your own text"; choosing one loads it."""
    shown = matching_preset(state.settings()) or CUSTOM
    options = [*PRESETS, CUSTOM]
    key = state.derived_key(state.PRESET, options.index(shown))
    st.selectbox(
        "Example",
        options,
        index=options.index(shown),
        key=key,
        on_change=state.apply_preset,
        args=(key,),
    )


def seed_box(trained: bool) -> None:
    """The seed as a text box (a number box turns "abc" into 0 and "1e3" into 1 without a
    word): what cannot be a seed is named under it, the box keeps it to be mended, and the seed
    in use stays."""
    seed = state.seed()
    key = state.derived_key(state.SEED_BOX, seed)
    low, high = SEED_RANGE
    options = fixed_by_gpt2(trained, SEED_NO_EFFECT)
    st.text_input(
        "Seed for torch.manual_seed",
        value=str(seed),
        key=key,
        on_change=state.read_seed,
        args=(key,),
        disabled=options["disabled"],
        help=options["help"] or f"A whole number from {low} to {high:,}, as in the book (123).",
    )
    for notice in state.notices("seed"):
        st.warning(notice.text, icon=notice.icon)


def text_box(key: str, label: str, *, height: int, **options: Any) -> None:
    """A text box for ``key`` that keeps the first ``MAX_TEXT_CHARS`` characters of a longer
    paste (also from a client that skipped the browser's box) and says so under it."""
    state.keep_within_limit(key)
    st.text_area(
        label, key=key, height=height, on_change=state.cut_to_limit, args=(key,), **options
    )
    cut_notice(key)


def cut_notice(key: str) -> None:
    """Under a text box: say that what was pasted into it was cut, and how much."""
    original = state.cut_from(key)
    if original is not None:
        st.warning(
            f"The text had {original:,} characters: posviz keeps the first {MAX_TEXT_CHARS:,} "
            "(enough for the whole of The Verdict) and cut the rest off.",
            icon="✂️",
        )


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
        key=state.DOWNLOAD_TEXT,
        on_click="ignore",
    )
