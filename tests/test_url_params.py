"""Untrusted URL query strings (AppTest, plus one real-browser check of raw encodings).

A bad value must leave the default in place and show a visible warning that names the key;
nothing ever raises. Valid values restore the view. The parser itself is unit-tested in
tests/test_query.py; these tests are about what the app shows.

AppTest sends ``at.query_params`` through ``urllib.parse.urlencode(doseq=True)`` and Streamlit
parses it back like a browser's query string, so lists become repeated keys. For broken
percent-encoding the values are what ``urllib.parse.parse_qs`` (Streamlit's parser) makes of
the raw query string.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, quote

import numpy as np
import pytest
import torch
from charts import report_size, sent_figures
from reference import book_tables, decode_array
from streamlit.testing.v1 import AppTest
from widgets import seed_box

from posviz.tokenizer import encode

DEFAULTS = {"context_length": 16, "emb_dim": 64, "seed": 123, "stride": 16}
DEFAULT_TEXT = "A rose is a rose is a rose."


MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # \ before ASCII punctuation


def warnings_of(at: AppTest) -> list[str]:
    """The warnings as a reader sees them: Markdown backslash escapes removed."""
    return [MARKDOWN_ESCAPE.sub(r"\1", str(w.value)) for w in at.warning]


def assert_defaults(at: AppTest, *, except_keys: tuple[str, ...] = ()) -> None:
    for key, value in DEFAULTS.items():
        if key not in except_keys:
            assert at.session_state[key] == value, (key, at.session_state[key])


def assert_warning_names(at: AppTest, key: str) -> None:
    shown = warnings_of(at)
    assert any(key in w for w in shown), f"no warning naming {key!r}; warnings: {shown}"


BAD_NUMBERS = [
    pytest.param("seed", "abc", id="not-a-number"),
    pytest.param("emb_dim", "-5", id="negative"),
    pytest.param("context_length", "0", id="zero"),
    pytest.param("emb_dim", "99999999999999999999999999999", id="huge"),
    pytest.param("seed", str(2**32), id="seed-just-too-big"),
    pytest.param("context_length", "1e3", id="exponent"),
    pytest.param("emb_dim", "8.5", id="float"),
    pytest.param("seed", "", id="empty"),
    pytest.param("seed", "0x10", id="hex"),
    pytest.param("emb_dim", "\u0663\u0662", id="arabic-indic-digits"),
    pytest.param("emb_dim", "\uff18", id="fullwidth-digit"),
    pytest.param("seed", "--5", id="double-minus"),
    pytest.param("seed", "1_000", id="underscore"),
    pytest.param("stride", "NaN", id="nan"),
    pytest.param("context_length", "inf", id="inf"),
    pytest.param("seed", "__import__('os').system('x')", id="python-expression"),
    pytest.param("emb_dim", "8" * 5_000, id="very-long-number"),
]


@pytest.mark.parametrize(("key", "raw"), BAD_NUMBERS)
def test_bad_number_keeps_default_and_warns(
    app_test: Callable[..., AppTest], key: str, raw: str
) -> None:
    at = app_test(query={key: raw})
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert_defaults(at)
    assert_warning_names(at, key)
    assert sent_figures(at), "the default view should still be shown"


@pytest.mark.parametrize(
    "query",
    [
        pytest.param({"scheme": "javascript:alert(1)"}, id="scheme-javascript"),
        pytest.param({"scheme": "LEARNED"}, id="scheme-case"),
        pytest.param({"scheme": "<b>rope</b>"}, id="scheme-markup"),
    ],
)
def test_scheme_nonsense_warns(app_test: Callable[..., AppTest], query: dict[str, str]) -> None:
    at = app_test(query=query)
    assert not at.exception
    assert at.session_state["scheme"] == "learned"
    assert_warning_names(at, "scheme")
    assert_defaults(at)


def test_link_notices_stay_until_a_setting_changes(app_test: Callable[..., AppTest]) -> None:
    """The chart reports its size right after the page loads, which reruns it: the warnings
    about the link must still be there after that run, and go once the reader changes a
    setting."""
    at = app_test(query={"seed": "lots"})
    assert_warning_names(at, "seed")
    report_size(at, "embeddings", width=820, height=400, window_width=1280, window_height=800)
    assert_warning_names(at, "seed")
    at.slider(key="emb_dim").set_value(8).run()
    assert not at.warning, warnings_of(at)


def test_unknown_key_is_named(app_test: Callable[..., AppTest]) -> None:
    at = app_test(query={"colour": "red", "emb_dim": "8"})
    assert not at.exception
    assert at.session_state["emb_dim"] == 8
    assert_warning_names(at, "colour")


def test_tracking_parameters_say_nothing(app_test: Callable[..., AppTest]) -> None:
    """A link passed on by a newsletter or a social site carries campaign tags and click ids:
    not posviz's, and no reason for a warning (on a projected slide least of all)."""
    at = app_test(query={"utm_source": "slides", "fbclid": "x1", "gclid": "y2", "emb_dim": "8"})
    assert not at.exception
    assert at.session_state["emb_dim"] == 8
    assert not at.warning, warnings_of(at)


def test_unknown_key_with_markup_is_shown_literally(app_test: Callable[..., AppTest]) -> None:
    at = app_test(query={"<img src=x onerror=alert(1)>": "1"})
    assert not at.exception
    assert_defaults(at)
    assert any("img" in w for w in warnings_of(at)), warnings_of(at)


def test_repeated_key_uses_last_and_says_so(app_test: Callable[..., AppTest]) -> None:
    at = app_test(query={"emb_dim": ["8", "12"]})
    assert not at.exception
    assert at.session_state["emb_dim"] == 12
    assert_warning_names(at, "emb_dim")


def test_repeated_key_with_bad_last_value(app_test: Callable[..., AppTest]) -> None:
    at = app_test(query={"seed": ["7", "x"]})
    assert not at.exception
    assert at.session_state["seed"] == 123
    assert_warning_names(at, "seed")


@pytest.mark.parametrize(
    "raw_query",
    [
        pytest.param("seed=%ZZ", id="invalid-escape"),
        pytest.param("emb_dim=%", id="lone-percent"),
        pytest.param("seed=%E0%A4", id="truncated-utf8"),
        pytest.param("seed=%00", id="nul"),
        pytest.param("emb_dim=8%", id="trailing-percent"),
    ],
)
def test_broken_percent_encoding(app_test: Callable[..., AppTest], raw_query: str) -> None:
    params = {k: v[-1] for k, v in parse_qs(raw_query, keep_blank_values=True).items()}
    at = app_test(query=params)
    assert not at.exception
    assert_defaults(at)
    assert_warning_names(at, raw_query.split("=")[0])


def test_broken_utf8_in_text_is_shown_as_text(app_test: Callable[..., AppTest]) -> None:
    params = {k: v[-1] for k, v in parse_qs("text=ok%E0%A4%FF!", keep_blank_values=True).items()}
    at = app_test(query=params)
    assert not at.exception
    assert at.session_state["text"] == "ok\ufffd\ufffd!"
    assert sent_figures(at)


def test_empty_text_param_gives_prompt(app_test: Callable[..., AppTest]) -> None:
    at = app_test(query={"text": ""})
    assert not at.exception
    assert any("Type or paste" in str(i.value) for i in at.info)


def test_very_long_text_param_falls_back_with_notice(app_test: Callable[..., AppTest]) -> None:
    at = app_test(query={"text": "x" * 30_000})
    assert not at.exception
    assert at.session_state["text"] == DEFAULT_TEXT
    assert_warning_names(at, "text")


@pytest.mark.parametrize("window", ["9999999", "10000000"])
def test_window_beyond_the_batch_falls_back_to_zero(
    app_test: Callable[..., AppTest], window: str
) -> None:
    at = app_test(query={"window": window})
    assert not at.exception
    assert sent_figures(at)
    assert at.session_state["window"] == 0
    assert_warning_names(at, f"Window {window} does not exist")
    # The rewritten link is the view on screen: window 0 is the default, so no window key.
    assert "window" not in at.query_params


def test_many_bad_keys_at_once(app_test: Callable[..., AppTest]) -> None:
    query = {"seed": "-1", "emb_dim": "1.5", "context_length": "big", "stride": "0", "zzz": "1"}
    at = app_test(query=query)
    assert not at.exception
    assert_defaults(at)
    for key in query:
        assert_warning_names(at, key)


@pytest.mark.parametrize(
    ("seed", "emb_dim", "context_length", "stride", "text"),
    [
        pytest.param(7, 8, 4, 2, "Every effort moves you forward", id="overlapping-windows"),
        pytest.param(0, 3, 32, 32, "tea? <|endoftext|> In", id="short-text-long-table"),
        pytest.param(2**32 - 1, 768, 2, 5, "a b c d e f g h", id="max-seed-max-dim-skip"),
    ],
)
def test_valid_params_restore_the_view(
    app_test: Callable[..., AppTest],
    seed: int,
    emb_dim: int,
    context_length: int,
    stride: int,
    text: str,
) -> None:
    query = {
        "seed": str(seed),
        "emb_dim": str(emb_dim),
        "context_length": str(context_length),
        "stride": str(stride),
        "text": text,
    }
    at = app_test(query=query)
    assert not at.exception
    assert not at.warning, warnings_of(at)
    assert at.text_area(key="text").value == text
    assert at.slider(key="emb_dim").value == emb_dim
    assert at.slider(key="context_length").value == context_length
    assert at.slider(key="stride").value == stride
    assert int(seed_box(at).value) == seed
    token_ids = encode(text)
    n = min(len(token_ids), context_length)
    token_weight, pos_weight = book_tables(seed, emb_dim, context_length)
    spec = sent_figures(at)["embeddings"]
    zs = [decode_array(trace["z"]) for trace in spec["data"]]
    columns = decode_array(spec["data"][0]["x"]).astype(int)  # every k-th dim when reduced
    assert columns[0] == 0 and len(columns) >= min(emb_dim, 65_536 // max(n, 1))
    assert [z.shape for z in zs] == [(n, len(columns))] * 3
    expected_tok = token_weight[torch.tensor(token_ids[:n])][:, columns].numpy()
    assert np.array_equal(zs[0], expected_tok)
    assert np.array_equal(zs[1], pos_weight[:n, columns].numpy())
    # the app writes the same settings back into the URL it shows
    assert at.query_params.get("seed") == str(seed)
    assert at.query_params.get("emb_dim") == str(emb_dim)


@pytest.mark.browser
def test_raw_broken_url_in_a_real_browser(server_url: str, page: Any) -> None:
    """The browser sends the raw query string; the server's parsing must not break the app."""
    raw = "seed=%ZZ&emb_dim=%E0%A4&context_length=4&context_length=8&text=" + quote("ok <b>x</b>")
    page.goto(f"{server_url}/?{raw}&%=&&=&zz%")
    warning = page.locator('[data-testid="stAlertContentWarning"]').first
    warning.wait_for(timeout=60_000)
    page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=60_000)
    texts = " ".join(page.locator('[data-testid="stAlertContentWarning"]').all_inner_texts())
    assert "seed" in texts and "emb_dim" in texts
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not page.dialogs


def test_notices_do_not_render_markdown_from_the_url(app_test: Callable[..., AppTest]) -> None:
    """A warning repeats what the URL said; st.warning renders Markdown, so it must be escaped."""
    link_key = "[click me](https://evil.example/login)"
    at = app_test(query={link_key: "1", "seed": "**bold**", "scheme": "$x^2$ :red[boo]"})
    assert not at.exception
    assert "click me" in "\n".join(warnings_of(at))
    shown = "\n".join(str(w.value) for w in at.warning)  # the Markdown source
    assert "bold" in shown, shown
    for raw in (link_key, "**bold**", "$x^2$", ":red[boo]"):
        assert raw not in shown, f"URL text {raw!r} reaches st.warning as live Markdown"
