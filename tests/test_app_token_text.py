"""Every tab through AppTest with an emoji and a Chinese text (issue 42): each chip, sentence,
label and hover writes a token in the chips' characters (``🍕 (1 of 3)``), never as loose
bytes (``\\xf0\\x9f``), the "Dropped:" line and a character split across the window's edge
included. The expected names come from tests/reference.py (tiktoken and Python's decoder)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from charts import sent_figures
from reference import character_tokens
from streamlit.testing.v1 import AppTest

AppFactory = Callable[..., AppTest]
PIZZA = "I love pizza 🍕🍕 and pizza loves me 😀"
TOKYO = "東京は日本の首都です。東京"
TABS = (
    "embeddings", "attention", "similarity", "geometry", "distance", "word-order", "training",
    "length",
)  # fmt: skip
LOOSE_BYTE = re.compile(r"\\x[0-9a-f]{2}")  # how a token's bytes read when not named


def unescaped(markdown: object) -> str:
    """The words of a Markdown string as the page shows them."""
    return re.sub(r"\\(.)", r"\1", str(markdown)).replace("\u2060", "")


def said(at: AppTest) -> list[str]:
    """Every text element of the run, as the page shows it."""
    elements = (*at.markdown, *at.caption, *at.info, *at.warning, *at.error, *at.code)
    return [unescaped(e.value) for e in elements]


def strings(value: Any) -> Iterator[str]:
    """Every string in a sent figure (labels, ticks, hovers, titles, annotations)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "OU":
        for item in value.ravel():
            yield from strings(item)


@pytest.mark.parametrize("tab", TABS)
@pytest.mark.parametrize("text", [pytest.param(PIZZA, id="emoji"), pytest.param(TOKYO, id="cjk")])
def test_every_tab_names_split_characters(app_test: AppFactory, text: str, tab: str) -> None:
    """T = 8 cuts both texts inside a character (at the window's end and before the dropped
    tokens): every word and every figure string still names the characters."""
    at = app_test({"text": text, "context_length": "8", "tab": tab, "compare_text": text})
    assert not at.exception, [e.value for e in at.exception]
    words = said(at)
    loose = [w for w in words if LOOSE_BYTE.search(w)]
    assert not loose, loose
    for key, figure in sent_figures(at).items():
        bad = [s for s in strings(figure) if LOOSE_BYTE.search(s)]
        assert not bad, (key, bad[:5])
    names = character_tokens(text)
    dropped = next(w for w in words if w.startswith("**Dropped:**"))
    struck = names[len(names) - len(names) % 8 :]  # after the last full window of 8
    assert dropped.endswith(" ".join(f":gray-badge[~~{name}~~]" for name in struck)), dropped
    chips = next(w for w in words if "-badge[0 · " in w)
    assert f"7 · {names[7]} · " in chips, chips  # the window's last token, split at its edge


def test_attention_rows_are_the_chips_names(app_test: AppFactory) -> None:
    """The Attention tab's rows and columns for window 1 of the Chinese text, which starts
    inside 本: ``position · name`` with every name as the chips write it, read in the whole
    text (the issue saw "\\xe6\\x9c" and "の\\xe9")."""
    at = app_test({"text": TOKYO, "context_length": "8", "window": "1", "tab": "attention"})
    assert not at.exception, [e.value for e in at.exception]
    names = character_tokens(TOKYO)[8:16]
    assert names[0] == "本 (2 of 2)" and names[1] == "の + 首 (1 of 3)"
    heatmaps = [t for t in sent_figures(at)["attention"]["data"] if t["type"] == "heatmap"]
    assert len(heatmaps) == 4
    labels = [f"{position} · {name}" for position, name in enumerate(names)]
    for trace in heatmaps:
        assert list(trace["y"]) == labels and list(trace["x"]) == labels


def test_the_attention_slide_names_split_characters(app_test: AppFactory) -> None:
    """Lecture mode's slide 16 (the issue saw "\\xf0\\x9f" there too): the same rows."""
    at = app_test({"text": PIZZA, "context_length": "8", "lecture": "1", "step": "16"})
    assert not at.exception, [e.value for e in at.exception]
    heatmaps = [t for t in sent_figures(at)["attention"]["data"] if t["type"] == "heatmap"]
    labels = [f"{position} · {name}" for position, name in enumerate(character_tokens(PIZZA)[:8])]
    assert heatmaps and all(list(trace["y"]) == labels for trace in heatmaps)
