"""Hostile text in the app (AppTest): every input ends in a clear message or a correct view.

For each input of the corpus the app must show no exception element, and either a message
(``st.info`` / ``st.warning`` / ``st.error``) or a chart whose numbers equal the torch
reference of tests/reference.py, bit for bit. Token text must never be interpreted: the chips'
Markdown escapes every ASCII punctuation character, Plotly labels carry no raw ``<``, and no
control or format character (bidi overrides, zero-width joiners, NUL) reaches the page
unescaped.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from charts import sent_figures
from reference import book_window, decode_array, unescape_markdown
from streamlit.testing.v1 import AppTest

from posviz.token_text import WORD_JOINER
from posviz.tokenizer import encode

APP_LIMIT = 25_000  # the limit the app announces (posviz.config.MAX_TEXT_CHARS)
DEFAULT_SEED, DEFAULT_EMB_DIM, DEFAULT_CONTEXT_LENGTH = 123, 64, 16
RAW_INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Zl", "Zp"}
BADGE = re.compile(r":(blue|orange|gray)-badge\[((?:\\.|[^\\\]])*)\]")
OWN_MARK = re.compile(r'^<span style="color:#[0-9a-f]{6}"><b>(.*)</b></span>$')


# --- reading the page (the references are in tests/reference.py) ---------------------------


def chart_spec(at: AppTest) -> dict[str, Any]:
    figures = list(sent_figures(at).values())
    assert len(figures) == 1, f"expected one chart, found {len(figures)}"
    return figures[0]


def messages(at: AppTest) -> list[str]:
    return [str(e.value) for kind in ("error", "warning", "info") for e in at.get(kind)]


def markdown_text(at: AppTest) -> str:
    return "\n".join(str(e.value) for e in at.markdown)


def assert_no_raw_invisible(text: str, where: str) -> None:
    # for_markdown's own word joiners (U+2060, breaking bare links) are the one exception:
    # a joiner the user typed reaches the page as the visible escape \u2060.
    bad = [
        f"U+{ord(c):04X}"
        for c in text
        if unicodedata.category(c) in RAW_INVISIBLE and c != WORD_JOINER
    ]
    assert not bad, f"raw control/format characters {bad} in {where}: {text!r}"


def chips(at: AppTest) -> list[tuple[int, str, int]]:
    """(position, token text, token id) of each chip of the shown window."""
    found = []
    for colour, content in BADGE.findall(markdown_text(at)):
        if colour == "gray":  # dropped tokens: ~~text~~
            assert content.startswith("~~") and content.endswith("~~"), content
            unescape_markdown(content[2:-2])
            continue
        position, text, token_id, *count = content.split(" · ")
        assert (colour == "orange") == bool(count), f"a repeated chip says how often: {content}"
        found.append((int(position), unescape_markdown(text), int(token_id)))
    return found


def check_view(at: AppTest, text: str, *, seed: int, emb_dim: int, context_length: int) -> None:
    """The chart and the chips of window 0 are right for ``text``."""
    token_ids = encode(text)
    n = min(len(token_ids), context_length)
    expected = book_window(
        "learned",
        seed=seed,
        emb_dim=emb_dim,
        context_length=context_length,
        token_ids=token_ids[:n],
    )
    spec = chart_spec(at)
    zs = [decode_array(trace["z"]) for trace in spec["data"]]
    assert [z.shape for z in zs] == [(n, emb_dim)] * 3
    for got, want in zip(zs, expected, strict=True):
        assert np.array_equal(got, want.numpy())

    labels = list(spec["data"][0]["y"])
    assert len(labels) == n
    for position, label in enumerate(labels):
        assert "<" not in label and ">" not in label, f"unescaped markup in tick label {label!r}"
        assert html.unescape(label).startswith(f"{position} · ")
        assert_no_raw_invisible(label, "a tick label")
    for tick in spec["layout"]["yaxis"].get("ticktext", []):
        tick = OWN_MARK.sub(r"\1", tick)  # the colour posviz gives a repeated token's row
        assert "<" not in tick, f"unescaped markup in tick text {tick!r}"

    shown = chips(at)
    assert [(p, i) for p, _, i in shown] == list(enumerate(token_ids[:n]))
    for _, chip_text, _ in shown:
        assert_no_raw_invisible(chip_text, "a chip")
        assert chip_text, "an empty chip hides a token"
    for element in at.markdown:  # the app's own Markdown may break lines; tokens may not
        assert_no_raw_invisible(str(element.value).replace("\n", ""), "the page's Markdown")


# --- the corpus --------------------------------------------------------------------------

MARKUP = (
    '<img src=x onerror=alert(1)> <script>alert(2)</script> <a href="javascript:alert(3)">x</a> '
    '<b>bold</b> <br> <sup>up</sup> <span style="color:red">red</span> <iframe src=//x>'
)
MARKDOWN = (
    "# Title\n**bold** _it_ ~~gone~~ [link](javascript:alert(1)) ![img](x) :red[colour] "
    ":material/home: :smile: `code` > quote\n- item\n| a | b |\n|---|---|\n---"
)
LATEX = r"$\frac{1}{2}$ and $$\int_0^1 x\,dx$$ \(x^2\) \[y\]"

CHART_CASES = [
    pytest.param("Hello, world", id="plain"),
    pytest.param(MARKUP, id="html-script-javascript-img-onerror"),
    pytest.param(MARKDOWN, id="markdown"),
    pytest.param(LATEX, id="latex"),
    pytest.param("[click](javascript:alert(document.cookie))", id="javascript-link"),
    pytest.param("a\x00b\x00\x00c", id="nul"),
    pytest.param("".join(chr(i) for i in range(32)) + "\x7f\x85", id="control-chars"),
    pytest.param("abc \u202eevil\u202c \u2066x\u2069 \u200f\u200b", id="rtl-override-zero-width"),
    pytest.param("שלום عربي مرحبا", id="rtl-scripts"),
    pytest.param("👩\u200d👩\u200d👧\u200d👦 🏳️\u200d🌈 👍🏽", id="emoji-zwj-split-across-tokens"),
    pytest.param("漢字とかなカナ한국어", id="cjk"),
    pytest.param("e\u0301 Z\u0351\u0327\u0334\u035b\u0320 a\u20dd", id="combining-marks"),
    # Lone surrogates cannot reach the app (protobuf strings are UTF-8; browsers send U+FFFD):
    # the core's handling of them is in test_properties.py.
    pytest.param("\ufffd replaced \ufffd\ufffe\uffff", id="replacement-and-noncharacters"),
    pytest.param("a" * 20_000, id="long-single-token-a"),
    pytest.param("7" * 20_000, id="long-single-token-digits"),
    pytest.param("<|endoftext|>" * 20, id="endoftext-repeated"),
    pytest.param("<|endoftext <|endof |endoftext|> <|endoftext|", id="endoftext-fragments"),
    pytest.param("\n!" * 1_000, id="one-token-per-character"),
    pytest.param("\u2028line\u2029para\u00a0nbsp\u3000wide", id="unicode-separators"),
]


@pytest.mark.parametrize("text", CHART_CASES)
def test_hostile_text_gives_correct_view(app_test: Callable[..., AppTest], text: str) -> None:
    at = app_test()
    at.text_area(key="text").set_value(text).run()
    assert not at.exception
    assert not at.get("error"), messages(at)
    check_view(
        at,
        text,
        seed=DEFAULT_SEED,
        emb_dim=DEFAULT_EMB_DIM,
        context_length=DEFAULT_CONTEXT_LENGTH,
    )


def test_endoftext_is_the_special_token(app_test: Callable[..., AppTest]) -> None:
    at = app_test()
    at.text_area(key="text").set_value("<|endoftext|>" * 3).run()
    assert not at.exception
    assert [token_id for _, _, token_id in chips(at)] == [50256] * 3


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("   ", id="spaces"),
        pytest.param(" \n\t\r\n \u00a0\u3000 ", id="whitespace-mixed"),
    ],
)
def test_empty_text_gets_a_prompt(app_test: Callable[..., AppTest], text: str) -> None:
    at = app_test()
    at.text_area(key="text").set_value(text).run()
    assert not at.exception
    assert not sent_figures(at)
    assert any("Type or paste" in m for m in messages(at)), messages(at)


@pytest.mark.parametrize(
    "size", [pytest.param(APP_LIMIT + 1, id="limit+1"), pytest.param(1_000_000, id="1MB")]
)
@pytest.mark.parametrize("key", ["text", "compare_text"])
def test_too_long_paste_keeps_the_first_25000_characters_and_says_so(
    app_test: Callable[..., AppTest], size: int, key: str
) -> None:
    """What a client sends past the limit is cut on the server (the boxes have no max_chars:
    in the browser that refuses an oversize paste whole), kept in the box, and named."""
    at = app_test(query={"compare": "The man bites the dog"} if key == "compare_text" else None)
    text = ("The Verdict. " * (size // 13 + 1))[:size]
    at.text_area(key=key).set_value(text).run()
    assert not at.exception
    assert at.text_area(key=key).value == text[:APP_LIMIT]
    shown = messages(at)
    cut = [m for m in shown if f"had {size:,} characters" in m]
    assert len(cut) == 1 and f"keeps the first {APP_LIMIT:,}" in cut[0], shown
    at.text_area(key=key).set_value("A rose is a rose.").run()  # a new text: no message
    assert not any("characters: posviz keeps" in m for m in messages(at))


def test_a_text_at_the_limit_is_taken_whole_without_a_message(
    app_test: Callable[..., AppTest],
) -> None:
    at = app_test()
    text = ("The Verdict. " * 2000)[:APP_LIMIT]
    at.text_area(key="text").set_value(text).run()
    assert not at.exception
    assert at.text_area(key="text").value == text
    assert not any("posviz keeps the first" in m for m in messages(at))


def test_thousands_of_windows(app_test: Callable[..., AppTest]) -> None:
    text = "\n!" * 1_500  # 3,000 tokens
    token_ids = encode(text)
    assert len(token_ids) == 3_000
    at = app_test()
    at.text_area(key="text").set_value(text).run()
    at.slider(key="context_length").set_value(1).run()
    assert not at.exception
    assert at.slider(key="stride").value == 1
    shapes = {str(m.label): str(m.value) for m in at.metric}
    assert shapes.get("inputs [B, T]") == "[3000, 1]", shapes
    at.slider(key="window").set_value(2_999).run()
    assert not at.exception
    spec = chart_spec(at)
    token, _, total = book_window(
        "learned",
        seed=DEFAULT_SEED,
        emb_dim=DEFAULT_EMB_DIM,
        context_length=1,
        token_ids=token_ids[-1:],
    )
    assert np.array_equal(decode_array(spec["data"][0]["z"]), token.numpy())
    assert np.array_equal(decode_array(spec["data"][2]["z"]), total.numpy())
    assert [(p, i) for p, _, i in chips(at)] == [(0, token_ids[-1])]


def test_markup_is_escaped_in_chips_and_dropped_tokens(app_test: Callable[..., AppTest]) -> None:
    at = app_test()
    at.text_area(key="text").set_value(MARKUP + " " + MARKDOWN).run()  # > 16 tokens: drops
    at.slider(key="context_length").set_value(8).run()
    assert not at.exception
    page = markdown_text(at)
    assert "**Dropped:**" in page
    assert "<" not in page.replace("\\<", ""), "a raw '<' reached st.markdown"
    assert "](" not in page.replace("\\]\\(", ""), "a raw Markdown link reached st.markdown"
    shown = [text for _, text, _ in chips(at)]
    assert "<" in "".join(shown), "the literal '<' should still be readable in the chips"


def test_lecture_mode_title_escapes_the_text(app_test: Callable[..., AppTest]) -> None:
    """Lecture mode starts by showing the whole text as a heading: still no live markup."""
    at = app_test(query={"lecture": "1", "text": MARKUP + " " + MARKDOWN + " " + LATEX})
    assert not at.exception
    headings = [str(e.value) for e in at.markdown if str(e.value).startswith("## ")]
    assert headings, "lecture mode should open with the text as a heading"
    for heading in headings:
        shown = unescape_markdown(heading.removeprefix("## "))
        assert "<img src=x onerror=alert(1)>" in shown
        assert_no_raw_invisible(shown, "the lecture heading")
