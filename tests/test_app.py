"""app.py driven through Streamlit's AppTest: widgets by key, the chart's numbers decoded.

Every chart is checked, bit for bit, against the independent torch reference in
tests/reference.py, exactly as the book writes it: ``torch.manual_seed(seed);
nn.Embedding(50257, d); nn.Embedding(T, d)``.
Token ids come from ``posviz.tokenizer.encode`` (itself checked against tiktoken's ``gpt2``
in the tokenizer tests); the embeddings never come from posviz.

The app turns any unexpected exception into an ``st.error``, so "no exception" here means
both ``not at.exception`` and no error element (unless the test expects a message).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import numpy as np
import pytest
import torch
from charts import report_size, sent_figures
from reference import book_window, repeated_groups, unescape_markdown
from streamlit.testing.v1 import AppTest
from widgets import example_menu, seed_box

from posviz.tokenizer import encode, get_encoding

AppFactory = Callable[..., AppTest]
Decode = Callable[[object], np.ndarray]
DEFAULT_TEXT = "A rose is a rose is a rose."
CHIP = re.compile(r":(\w+)-badge\[(\d+) · (.*?) · (\d+)(?: · ×\d+)?\]")
# The bold colour posviz gives a repeated token's tick label (its own markup, not user text).
OWN_MARK = re.compile(r'^<span style="color:#[0-9a-f]{6}"><b>(.*)</b></span>$')


# --- independent references (the book's tables: tests/reference.py) -------------------------


def visible_tokens(token_ids: list[int]) -> list[str]:
    """How a lecturer expects to read each token: spaces as ␣, newlines as ↵."""
    encoding = get_encoding()
    texts = [encoding.decode_single_token_bytes(t).decode("utf-8") for t in token_ids]
    return [t.replace(" ", "␣").replace("\n", "↵") for t in texts]


# --- reading the page --------------------------------------------------------------------


def assert_ok(at: AppTest) -> None:
    """No exception element, and no error message from the app's last-resort handler."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def page_text(at: AppTest) -> str:
    parts = [element.value for element in (*at.title, *at.markdown, *at.caption)]
    parts += [element.value for element in (*at.info, *at.warning, *at.error)]
    parts += [f"{m.label} {m.value} {m.proto.delta}".strip() for m in at.metric]
    return "\n".join(str(part) for part in parts)


def chips(at: AppTest) -> list[tuple[int, str, int]]:
    """(position, markdown text, token id) of each token chip of the shown window (beyond the
    first screenful, chips are drawn once their "and N more" expander is opened)."""
    shown = [
        (int(pos), text, int(tid))
        for element in at.markdown
        if "Dropped" not in element.value
        for _, pos, text, tid in CHIP.findall(element.value)
    ]
    assert shown, "no token chips on the page"
    return shown


def chart(at: AppTest) -> dict[str, object]:
    figures = sent_figures(at)
    assert list(figures) == ["embeddings"], f"charts: {list(figures)}"
    return figures["embeddings"]


def panels(at: AppTest, decode: Decode) -> list[np.ndarray]:
    data = chart(at)["data"]
    assert [trace["type"] for trace in data] == ["heatmap"] * 3
    return [decode(trace["z"]) for trace in data]


def assert_matches_book(
    at: AppTest, decode: Decode, *, seed: int, emb_dim: int, context_length: int, ids: list[int]
) -> None:
    shown = panels(at, decode)
    expected = book_window(
        "learned", seed=seed, emb_dim=emb_dim, context_length=context_length, token_ids=ids
    )
    for name, z, reference in zip(("token", "positional", "input"), shown, expected, strict=True):
        assert z.dtype == np.float32, name
        assert z.shape == (len(ids), emb_dim), name
        assert np.array_equal(z, reference.numpy()), name  # bit for bit


# --- the default view ----------------------------------------------------------------------


def test_default_page_shows_the_books_numbers(app_test: AppFactory, decode_array: Decode) -> None:
    at = app_test()
    assert_ok(at)
    ids = encode(DEFAULT_TEXT)
    assert [tid for _, _, tid in chips(at)] == ids
    assert_matches_book(at, decode_array, seed=123, emb_dim=64, context_length=16, ids=ids)
    text = page_text(at)
    n = len(ids)
    assert f"inputs [B, T] [1, {n}]" in text
    assert f"token embeddings [B, T, d] [1, {n}, 64]" in text
    assert f"+ positional embeddings [T, d] [{n}, 64]" in text
    assert f"= input embeddings [B, T, d] [1, {n}, 64]" in text


def test_tick_labels_are_position_and_visible_token(app_test: AppFactory) -> None:
    at = app_test()
    assert_ok(at)
    ids = encode(DEFAULT_TEXT)
    expected = [f"{i} · {html.escape(t)}" for i, t in enumerate(visible_tokens(ids))]
    repeated = {p for group in repeated_groups(ids).values() for p in group}
    spec = chart(at)
    for trace in spec["data"]:
        assert [y.split(" (same token vector as ")[0] for y in trace["y"]] == expected
        assert [" (same token vector as " in y for y in trace["y"]] == [
            row in repeated for row in range(len(ids))
        ], "a repeated row's hover names its twins"
    ticks = spec["layout"]["yaxis"]["ticktext"]
    assert [OWN_MARK.sub(r"\1", tick) for tick in ticks] == expected
    assert [bool(OWN_MARK.match(tick)) for tick in ticks] == [
        row in repeated for row in range(len(ids))
    ]
    assert "1 · ␣rose" in expected and "4 · ␣rose" in expected  # repeated, yet two rows


# --- every control changes the numbers as the book says --------------------------------------


@pytest.mark.parametrize(
    ("seed", "emb_dim", "context_length", "text"),
    [
        pytest.param(0, 2, 1, "Hello", id="T1-d2-seed0"),
        pytest.param(123, 256, 4, "Every effort moves you", id="book-2.8-sizes"),
        pytest.param(
            2**32 - 1,
            768,
            1024,
            "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace.",
            id="gpt2-sizes-max-seed",
        ),
        pytest.param(42, 3, 5, "naïve café 東京 🙂", id="unicode-d3"),
    ],
)
def test_controls_reproduce_the_torch_reference(
    app_test: AppFactory,
    decode_array: Decode,
    seed: int,
    emb_dim: int,
    context_length: int,
    text: str,
) -> None:
    at = app_test()
    at.text_area(key="text").input(text).run()
    assert_ok(at)
    at.slider(key="context_length").set_value(context_length).run()
    assert_ok(at)
    at.slider(key="emb_dim").set_value(emb_dim).run()
    assert_ok(at)
    seed_box(at).set_value(str(seed)).run()
    assert_ok(at)
    ids = encode(text)[:context_length]  # window 0
    assert [tid for _, _, tid in chips(at)] == ids
    assert_matches_book(
        at, decode_array, seed=seed, emb_dim=emb_dim, context_length=context_length, ids=ids
    )


def test_window_and_stride_pick_the_books_windows(
    app_test: AppFactory, decode_array: Decode
) -> None:
    ids = encode(DEFAULT_TEXT)  # 9 tokens
    at = app_test()
    at.slider(key="context_length").set_value(4).run()
    assert_ok(at)
    assert at.slider(key="window").max == 1  # windows start at 0, 4; token 8 is dropped
    at.slider(key="window").set_value(1).run()
    assert_ok(at)
    assert_matches_book(at, decode_array, seed=123, emb_dim=64, context_length=4, ids=ids[4:8])
    assert [pos for pos, _, _ in chips(at)] == [0, 1, 2, 3]  # positions restart in each window

    at.slider(key="stride").set_value(2).run()  # overlapping windows start at 0, 2, 4
    assert_ok(at)
    assert at.slider(key="window").max == 2
    at.slider(key="window").set_value(2).run()
    assert_ok(at)
    assert_matches_book(at, decode_array, seed=123, emb_dim=64, context_length=4, ids=ids[4:8])
    at.slider(key="window").set_value(1).run()
    assert_matches_book(at, decode_array, seed=123, emb_dim=64, context_length=4, ids=ids[2:6])

    at.slider(key="stride").set_value(5).run()  # windows start at 0, 5: token 4 is skipped
    assert_ok(at)
    at.slider(key="window").set_value(1).run()
    assert_ok(at)
    assert_matches_book(at, decode_array, seed=123, emb_dim=64, context_length=4, ids=ids[5:9])
    assert "Skipped" in page_text(at)


def test_changing_context_length_resets_stride_and_window(app_test: AppFactory) -> None:
    at = app_test()
    at.slider(key="context_length").set_value(2).run()
    at.slider(key="window").set_value(3).run()
    assert_ok(at)
    at.slider(key="context_length").set_value(3).run()
    assert_ok(at)
    assert at.slider(key="stride").value == 3
    assert at.slider(key="window").value == 0
    assert len(chart(at)["data"][0]["y"]) == 3


def test_book_2_8_preset_shows_the_books_shapes(app_test: AppFactory, decode_array: Decode) -> None:
    at = app_test()
    preset = example_menu(at)
    (name,) = [option for option in preset.options if "2.8" in option]
    preset.set_value(name).run()
    assert_ok(at)
    text = page_text(at)
    for shape in ("[8, 4]", "[8, 4, 256]", "[4, 256]"):
        assert shape in text
    assert "inputs [B, T] [8, 4]" in text
    assert "= input embeddings [B, T, d] [8, 4, 256]" in text
    assert at.slider(key="window").max == 7
    verdict = at.text_area(key="text").value
    assert verdict.startswith("I HAD always thought Jack Gisburn")
    ids = encode(verdict)
    at.slider(key="window").set_value(7).run()
    assert_ok(at)
    assert_matches_book(at, decode_array, seed=123, emb_dim=256, context_length=4, ids=ids[28:32])


# --- what the page says about the text --------------------------------------------------------


def test_short_text_is_one_window_using_the_first_rows_of_the_table(app_test: AppFactory) -> None:
    at = app_test()
    at.text_area(key="text").input("Every effort moves you").run()
    assert_ok(at)
    assert "window" not in [slider.key for slider in at.slider]
    text = page_text(at)
    assert "inputs [B, T] [1, 4]" in text
    assert "rows 0–3 of the [16, 64] table" in text
    assert len(chart(at)["data"][1]["y"]) == 4


def test_dropped_tokens_are_shown(app_test: AppFactory) -> None:
    at = app_test()
    at.slider(key="context_length").set_value(4).run()  # 9 tokens: 2 windows, 1 dropped
    assert_ok(at)
    text = page_text(at)
    assert "Dropped" in text
    assert "1 token" in text
    assert "~~\\.~~" in text  # the final "." struck through, escaped for Markdown


@pytest.mark.parametrize("text", ["", "   \n\t  "], ids=["empty", "whitespace"])
def test_empty_text_gets_a_friendly_prompt_and_no_chart(app_test: AppFactory, text: str) -> None:
    at = app_test()
    at.text_area(key="text").input(text).run()
    assert_ok(at)
    assert at.info and "text" in at.info[0].value.lower()
    assert not sent_figures(at)


HOSTILE = (
    "<script>alert(1)</script> <img src=x onerror=alert(1)> **bold** _it_ "
    "[link](javascript:alert(1)) `code` $x^2$ :red[red] # title <b>b</b>&amp; %{y}"
)


def test_html_and_markdown_in_text_show_literally(app_test: AppFactory) -> None:
    at = app_test()
    at.text_area(key="text").input(HOSTILE).run()
    assert_ok(at)
    at.slider(key="context_length").set_value(256).run()
    assert_ok(at)
    at.session_state["more_chips"] = True  # open "and N more tokens"
    assert_ok(at.run())
    shown = chips(at)
    ids = encode(HOSTILE)
    assert [tid for _, _, tid in shown] == ids
    literal = "".join(unescape_markdown(text) for _, text, _ in shown)
    assert literal.replace("␣", " ") == HOSTILE
    labels = [label.split(" (same token vector as ")[0] for label in chart(at)["data"][0]["y"]]
    assert "<" not in "".join(labels)
    assert [html.unescape(label) for label in labels] == [
        f"{i} · {t}" for i, t in enumerate(visible_tokens(ids))
    ]


def test_endoftext_is_the_special_token_50256(app_test: AppFactory, decode_array: Decode) -> None:
    at = app_test()
    at.text_area(key="text").input("tea? <|endoftext|> In").run()
    assert_ok(at)
    shown = chips(at)
    assert 50256 in [tid for _, _, tid in shown]
    ids = [tid for _, _, tid in shown]
    position = ids.index(50256)
    assert unescape_markdown(shown[position][1]) == "<|endoftext|>"
    assert chart(at)["data"][0]["y"][position].startswith(f"{position} · &lt;|endoftext|&gt;")
    assert_matches_book(at, decode_array, seed=123, emb_dim=64, context_length=16, ids=ids)


# --- links ---------------------------------------------------------------------------------


def test_query_parameters_restore_a_view(app_test: AppFactory, decode_array: Decode) -> None:
    query = {"text": "Every effort moves you", "context_length": "4", "emb_dim": "8", "seed": "7"}
    at = app_test(query)
    assert_ok(at)
    assert not at.warning
    assert at.slider(key="context_length").value == 4
    assert at.slider(key="emb_dim").value == 8
    assert seed_box(at).value == "7"
    ids = encode("Every effort moves you")
    assert_matches_book(at, decode_array, seed=7, emb_dim=8, context_length=4, ids=ids)


def test_settings_are_written_back_to_the_url(app_test: AppFactory) -> None:
    at = app_test()
    at.slider(key="emb_dim").set_value(32).run()
    seed_box(at).set_value("5").run()
    assert_ok(at)
    assert at.query_params["emb_dim"] in ("32", ["32"])
    assert at.query_params["seed"] in ("5", ["5"])


def test_bad_query_parameters_fall_back_with_a_notice(
    app_test: AppFactory, decode_array: Decode
) -> None:
    at = app_test({"emb_dim": "abc", "context_length": "99999", "seed": "-1", "bogus": "<b>x"})
    assert_ok(at)
    notices = re.sub(r"\\(.)", r"\1", " ".join(w.value for w in at.warning))  # as shown
    for key in ("emb_dim", "context_length", "seed", "bogus"):
        assert key in notices
    assert at.slider(key="emb_dim").value == 64
    assert at.slider(key="context_length").value == 16
    ids = encode(DEFAULT_TEXT)
    assert_matches_book(at, decode_array, seed=123, emb_dim=64, context_length=16, ids=ids)


@pytest.mark.usefixtures("other_torch_fill")
def test_a_torch_that_fails_the_self_check_stops_with_its_name(app_test: AppFactory) -> None:
    at = app_test({"seed": "424242"})  # a seed no earlier test has cached tables for
    assert not at.exception
    assert not sent_figures(at), "a chart with numbers that are not the book's"
    errors = [str(e.value) for e in at.error]
    assert len(errors) == 1 and "self-check failed" in errors[0]
    assert f"torch {torch.__version__} fills nn.Embedding differently" in errors[0]
    assert "torch==2.13.0" in errors[0]


@pytest.mark.parametrize("typed", ["abc", "1e3", "-5", "12.5", "4294967296", ""])
def test_a_seed_that_cannot_be_used_is_named_and_the_seed_stays(
    app_test: AppFactory, decode_array: Decode, typed: str
) -> None:
    """The seed box says what it could not use (a number box would turn "abc" into 0 and
    "1e3" into 1 without a word); the chart keeps the seed in use."""
    at = app_test(
        {"seed": "7", "emb_dim": "8", "context_length": "4", "text": "Every effort moves you"}
    )
    seed_box(at).set_value(typed).run()
    assert_ok(at)
    said = [str(w.value) for w in at.warning if "Seed:" in str(w.value)]
    assert said == [
        f"Seed: {typed!r} is not a whole number from 0 to 4,294,967,295; still using 7."
    ]
    assert seed_box(at).value == typed, "the box keeps what was typed, to be mended"
    ids = encode("Every effort moves you")
    assert_matches_book(at, decode_array, seed=7, emb_dim=8, context_length=4, ids=ids)
    report_size(at, "embeddings", width=900, height=600, window_width=1280, window_height=800)
    assert [str(w.value) for w in at.warning if "Seed:" in str(w.value)] == said, (
        "the notice stands until the seed box changes"
    )
    seed_box(at).set_value(" 11 ").run()  # a whole number: used, no message
    assert not [w for w in at.warning if "Seed:" in str(w.value)]
    assert_matches_book(at, decode_array, seed=11, emb_dim=8, context_length=4, ids=ids)


WINDOWS_TEXT = "Every effort moves you forward, and every effort counts. " * 3  # 34 tokens


@pytest.mark.parametrize(("stride", "window"), [(8, 3), (2, 6), (12, 2)])
def test_moving_the_stride_keeps_a_valid_window_without_a_notice(
    app_test: AppFactory, decode_array: Decode, stride: int, window: int
) -> None:
    """Window 6 of stride 4 shown, then a new stride: the window stays if the batch still has
    it, else the last one; the notice is for links that ask for a window the text lacks."""
    at = app_test({"text": WINDOWS_TEXT, "context_length": "4", "emb_dim": "8"})
    at.slider(key="window").set_value(6).run()
    at.slider(key="stride").set_value(stride).run()
    assert_ok(at)
    assert not [w for w in at.warning if "does not exist" in str(w.value)]
    ids = encode(WINDOWS_TEXT)
    assert len(ids) == 34
    windows = len(range(0, len(ids) - 4, stride))  # GPTDatasetV1's loop (inputs and targets)
    assert window == min(6, windows - 1)
    assert at.slider(key="window").value == window
    start = window * stride
    assert_matches_book(
        at, decode_array, seed=123, emb_dim=8, context_length=4, ids=ids[start : start + 4]
    )


def test_moving_t_shows_window_0_without_a_notice(app_test: AppFactory) -> None:
    at = app_test({"text": WINDOWS_TEXT, "context_length": "4", "window": "6"})
    at.slider(key="context_length").set_value(16).run()
    assert_ok(at)
    assert not [w for w in at.warning if "does not exist" in str(w.value)]
    assert at.slider(key="window").value == 0


def test_a_link_to_a_window_the_text_lacks_still_says_so(app_test: AppFactory) -> None:
    at = app_test({"text": WINDOWS_TEXT, "context_length": "4", "window": "40"})
    assert_ok(at)
    assert [str(w.value) for w in at.warning if "does not exist" in str(w.value)] == [
        "Window 40 does not exist: this text gives 8 window(s). Showing window 0."
    ]
