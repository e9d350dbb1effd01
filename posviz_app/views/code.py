"""The Show-the-code view, and the script behind a tab's numbers: a torch + tiktoken script
that prints the same numbers as the page, for the settings on screen."""

from __future__ import annotations

import streamlit as st

from posviz.codegen import BOOK_CH02_URL, reproduction_script
from posviz.config import Settings
from posviz.viewspec import CodeName
from posviz_app import state
from posviz_app.room import Room


def gpt2_revision(settings: Settings) -> str:
    """The commit of the GPT-2 tables on screen (the script reads the same), else ``main``."""
    return state.tables_commit() if settings.weights == "gpt2" else "main"


def view_code(settings: Settings, name: CodeName, *, beyond: int | None = None) -> None:
    """The script with a tab's numbers, behind an expander (built when opened)."""
    code = st.expander(
        "The code behind these numbers", key=state.code_expander(name), on_change="rerun"
    )
    if code.open:
        with code:
            script = reproduction_script(
                settings, gpt2_revision=gpt2_revision(settings), view=name, beyond=beyond
            )
            st.code(script, language="python", line_numbers=False)


def render(room: Room) -> None:
    """The tab: the script that recreates the batch and the three matrices on screen."""
    settings = room.settings
    st.markdown(
        "This script uses only `torch` and `tiktoken` and recreates exactly the batch and the "
        "three matrices on screen, as section 2.8 builds them "
        f"([the book's chapter-2 code]({BOOK_CH02_URL}); `pip install torch tiktoken`). Its "
        "formulas are posviz's own functions, copied from the code that drew the page. "
        "Where posviz is installed it reads GPT-2's vocabulary from posviz's copy; elsewhere "
        "tiktoken downloads it on its first run."
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
