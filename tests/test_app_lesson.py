"""The lesson features of app.py through AppTest: schemes, similarity, code, downloads,
lecture mode and shareable links.

Every number is checked, bit for bit, against tests/reference.py (never posviz): the book's
``torch.manual_seed(seed); nn.Embedding(50257, d); nn.Embedding(T, d)`` for the tables, the
sinusoidal formula of Vaswani et al. written as a loop, the RoPE functions of the book's Llama
notebook (``precompute_rope_params`` / ``compute_rope``), and
``torch.nn.functional.cosine_similarity`` for the similarity view. Token ids come from
``posviz.tokenizer.encode`` (checked against tiktoken in the tokenizer tests).

The app turns any unexpected exception into an ``st.error``, so after every interaction
:func:`ok` checks both ``not at.exception`` and that no error element is shown.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from charts import sent_figures
from reference import book_window, cosine_similarity
from reproduce import run_scripts
from streamlit.testing.v1 import AppTest
from widgets import example_menu, has_seed_box, nav, ok, press, seed_box, slide_title

from posviz.tokenizer import encode

AppFactory = Callable[..., AppTest]
Decode = Callable[[object], np.ndarray]
DEFAULT_TEXT = "A rose is a rose is a rose."  # tokens: A ␣rose ␣is ␣a ␣rose ␣is ␣a ␣rose .
ROSE = (1, 4)  # the first two positions of " rose"
SCHEMES = ("learned", "sinusoidal", "none", "rope")


# --- driving and reading the app ---------------------------------------------------------


def show_tab(at: AppTest, name: str) -> AppTest:
    at.session_state["view"] = name
    return ok(at.run())


def panels(at: AppTest, decode: Decode, key: str = "embeddings") -> list[torch.Tensor]:
    data = sent_figures(at)[key]["data"]
    assert [trace["type"] for trace in data] == ["heatmap"] * 3
    return [torch.from_numpy(decode(trace["z"]).copy()) for trace in data]


def visible_panels(at: AppTest) -> int | None:
    """How many heatmaps of the embeddings chart are visible (None: no chart)."""
    figure = sent_figures(at).get("embeddings")
    if figure is None:
        return None
    flags = [trace.get("visible", True) is not False for trace in figure["data"]]
    titles = [note.get("visible", True) is not False for note in figure["layout"]["annotations"]]
    assert flags == sorted(flags, reverse=True), f"panels shown out of order: {flags}"
    assert titles[:3] == flags, "a panel title is shown without its panel (or the reverse)"
    return sum(flags)


def page_text(at: AppTest) -> str:
    parts = [e.value for e in (*at.title, *at.header, *at.markdown, *at.caption)]
    parts += [e.value for e in (*at.info, *at.warning)]
    return "\n".join(str(part) for part in parts)


def params(at: AppTest) -> dict[str, str]:
    """at.query_params as plain strings (a value may arrive as a one-item list)."""
    return {k: v if isinstance(v, str) else v[0] for k, v in at.query_params.items()}


def assert_panels_equal(shown: list[torch.Tensor], expected: list[torch.Tensor]) -> None:
    for name, z, ref in zip(("token", "position", "input"), shown, expected, strict=True):
        assert z.dtype == torch.float32, name
        assert z.shape == ref.shape, name
        assert torch.equal(z, ref), name  # bit for bit


# --- positional schemes --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "emb_dim"),
    [
        pytest.param("learned", 64, id="learned"),
        pytest.param("sinusoidal", 64, id="sinusoidal"),
        pytest.param("sinusoidal", 7, id="sinusoidal-odd-d"),
        pytest.param("none", 64, id="none"),
        pytest.param("rope", 64, id="rope"),
        pytest.param("rope", 6, id="rope-d6"),
    ],
)
def test_each_scheme_matches_its_formula(
    app_test: AppFactory, decode_array: Decode, scheme: str, emb_dim: int
) -> None:
    at = ok(app_test())
    ok(at.selectbox(key="scheme").set_value(scheme).run())
    ok(at.slider(key="emb_dim").set_value(emb_dim).run())
    ids = encode(DEFAULT_TEXT)
    shown = panels(at, decode_array)
    expected = book_window(scheme, seed=123, emb_dim=emb_dim, context_length=16, token_ids=ids)
    assert_panels_equal(shown, expected)
    if scheme == "none":
        assert torch.equal(shown[2], shown[0])  # input == token, exactly
        assert not shown[1].any()
        assert "order" in page_text(at)  # the page says attention is blind to order


def test_rope_dot_products_depend_only_on_the_distance(
    app_test: AppFactory, decode_array: Decode
) -> None:
    """RoPE's defining property, on the app's own chart: the same token at positions 1, 4 and
    7 gives rotated vectors whose dot product with another token's depends on p - q only."""
    at = ok(app_test({"scheme": "rope"}))
    token, _, rotated = (z.double() for z in panels(at, decode_array))
    # " rose" at 1, 4, 7 and " is" at 2, 5: pairs (1, 2) and (4, 5) are one step apart.
    assert torch.equal(token[1], token[4]) and torch.equal(token[2], token[5])
    assert float(rotated[1] @ rotated[2]) == pytest.approx(float(rotated[4] @ rotated[5]), abs=1e-4)
    assert float(rotated[1] @ rotated[4]) == pytest.approx(float(rotated[4] @ rotated[7]), abs=1e-4)
    assert not torch.allclose(rotated[1], rotated[4])  # but the vectors themselves differ


# --- similarity view ------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
def test_similarity_tab_shows_cosine_similarities(
    app_test: AppFactory, decode_array: Decode, scheme: str
) -> None:
    at = ok(app_test({"scheme": scheme}))
    show_tab(at, "Similarity")
    assert list(sent_figures(at)) == ["similarity"]  # only the open tab runs
    ids = encode(DEFAULT_TEXT)
    matrices = book_window(scheme, seed=123, emb_dim=64, context_length=16, token_ids=ids)
    shown = panels(at, decode_array, key="similarity")
    for name, z, matrix in zip(("token", "position", "input"), shown, matrices, strict=True):
        assert z.shape == (len(ids), len(ids)), name
        torch.testing.assert_close(z.double(), cosine_similarity(matrix), atol=1e-6, rtol=0)
    token_sim, position_sim, input_sim = shown
    first, second = ROSE
    assert token_sim[first, second] == pytest.approx(1.0, abs=1e-6)
    if scheme == "none":
        assert not position_sim.any()  # zero vectors: no direction, similarity 0 by definition
        assert input_sim[first, second] == pytest.approx(1.0, abs=1e-6)
    else:
        assert input_sim[first, second] < 0.99
    text = page_text(at)
    rose = [float(cosine_similarity(matrices[2])[p, q]) for p, q in ((1, 4), (1, 7), (4, 7))]
    assert "5 pairs of positions read 1.000 in the token panel (left)" in text
    assert "“␣rose” (1, 4), (1, 7) and (4, 7)" in text  # all three positions, not 1 and 4
    if scheme == "none":
        assert "they still read 1.000" in text
    else:
        assert f"read {min(rose):.3f} to {max(rose):.3f}" in text


def test_the_tab_buttons_open_one_tab_at_a_time(app_test: AppFactory) -> None:
    """The row of tab buttons (st.segmented_control, not st.tabs: docs/architecture.md): one
    per tab, in the tabs' order, the open one chosen; a click opens that tab alone (a second
    click on the open one keeps it open: tests/test_browser_page.py)."""
    assert ok(app_test()).button_group(key="view").value == "Embeddings"  # a new page
    at = ok(app_test({"tab": "geometry"}))
    buttons = at.button_group(key="view")
    assert buttons.options == [
        "Embeddings", "Similarity", "Geometry", "Distance & length", "Word order",
        "Attention", "Training", "Length", "Show the code", "Download",
    ]  # fmt: skip
    assert buttons.value == "Geometry"
    ok(buttons.set_value("Similarity").run())
    assert at.button_group(key="view").value == "Similarity"
    assert list(sent_figures(at)) == ["similarity"]


def test_repeated_tokens_are_highlighted_in_the_chips(app_test: AppFactory) -> None:
    at = ok(app_test())
    chips = next(m.value for m in at.markdown if "-badge[" in m.value)
    assert ":orange-badge[1 · ␣rose · 8278 · ×3]" in chips  # it occurs 3 times
    assert ":orange-badge[7 · ␣rose · 8278 · ×3]" in chips
    assert ":orange-badge[2 · ␣is · 318 · ×2]" in chips
    assert ":blue-badge[0 · A · 32]" in chips  # "A" occurs once


# --- reproducible code ------------------------------------------------------------------------


CODE_SETTINGS = {"context_length": 4, "emb_dim": 12, "seed": 7, "stride": 3, "window": 1}


def set_code_settings(at: AppTest) -> AppTest:
    ok(at.slider(key="context_length").set_value(CODE_SETTINGS["context_length"]).run())
    ok(at.slider(key="emb_dim").set_value(CODE_SETTINGS["emb_dim"]).run())
    ok(seed_box(at).set_value(str(CODE_SETTINGS["seed"])).run())
    ok(at.slider(key="stride").set_value(CODE_SETTINGS["stride"]).run())
    return ok(at.slider(key="window").set_value(CODE_SETTINGS["window"]).run())


def shown_script(at: AppTest) -> str:
    show_tab(at, "Show the code")
    assert len(at.code) == 1
    return str(at.code[0].value)


def test_code_tab_shows_a_script_with_the_settings(app_test: AppFactory) -> None:
    at = set_code_settings(ok(app_test()))
    ok(at.selectbox(key="scheme").set_value("sinusoidal").run())
    script = shown_script(at)
    ast.parse(script)
    assert "torch.manual_seed(seed)" in script
    for name, value in CODE_SETTINGS.items():
        assert f"\n{name} = {value}" in script, name
    assert "scheme=sinusoidal" in script
    assert "torch.sin(" in script and "torch.cos(" in script
    assert f"text = {DEFAULT_TEXT!r}\n" in script
    imported = {
        name.split(".")[0]
        for node in ast.walk(ast.parse(script))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for name in (
            [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module]
        )
        if name
    }
    assert not imported & {"posviz", "streamlit"}  # posviz's functions are copied, not imported


@pytest.mark.slow
def test_shown_script_reproduces_the_chart_for_every_scheme(
    app_test: AppFactory, decode_array: Decode, tmp_path: Path
) -> None:
    at = set_code_settings(ok(app_test()))
    shown: list[list[torch.Tensor]] = []
    scripts: list[str] = []
    for scheme in SCHEMES:
        ok(at.selectbox(key="scheme").set_value(scheme).run())
        show_tab(at, "Embeddings")
        shown.append(panels(at, decode_array))
        scripts.append(shown_script(at))
    results, _ = run_scripts(scripts, tmp_path)
    for index, scheme in enumerate(SCHEMES):
        theirs = results[index]
        for name, z, tensor in zip(("token", "pos", "input"), shown[index], theirs, strict=True):
            assert tensor.shape == (CODE_SETTINGS["context_length"], CODE_SETTINGS["emb_dim"])
            assert torch.equal(tensor.to(torch.float32), z), f"{scheme}: {name}"


# --- downloads --------------------------------------------------------------------------------


def test_download_tab_has_three_download_buttons(app_test: AppFactory) -> None:
    at = show_tab(ok(app_test()), "Download")
    buttons = at.get("download_button")
    keys = [button.proto.id.rsplit("-", 1)[-1] for button in buttons]
    assert keys == ["download_csv", "download_npy", "download_html"]
    labels = " ".join(button.proto.label for button in buttons)
    for kind in (".csv", ".npy", ".html"):
        assert kind in labels


# --- lecture mode -------------------------------------------------------------------------------


def step_buttons(at: AppTest) -> tuple[bool, bool]:
    """(Back disabled, Next disabled)."""
    data = nav(at)
    assert data is not None
    return data["step"] == 0, data["step"] == data["count"] - 1


def outlined(at: AppTest, key: str) -> bool:
    """Whether chart ``key`` marks the repeated tokens (outline shapes)."""
    return bool(sent_figures(at)[key]["layout"].get("shapes"))


# One row per click: (title, chart key or None, panels drawn, outlined, question or answer)
LECTURE = [
    ("1. Text", None, None, None, None),
    ("2. Token IDs", None, None, None, None),
    ("3. Token embeddings", "embeddings", 1, False, "question"),
    ("4. Token embeddings", "embeddings", 1, True, "answer"),
    ("5. Positional embeddings", "embeddings", 2, True, None),
    ("6. Input embeddings = token + position", "embeddings", 2, False, "question"),
    ("7. Input embeddings = token + position", "embeddings", 3, True, "answer"),
    ("8. Similarity between positions", "similarity", None, False, "question"),
    ("9. Similarity between positions", "similarity", None, True, "answer"),
    ("10. Word order", None, None, None, "question"),
    ("11. Word order", "compare", None, None, "answer"),
    ("12. The shape of the positions", None, None, None, "question"),  # issue 16
    ("13. The shape of the positions", "geometry", None, None, "answer"),
    ("14. Distance and length", None, None, None, "question"),
    ("15. Distance and length", "distance", None, None, "answer"),
    ("16. Positions inside attention", "attention", None, None, None),  # issue 25
    ("17. The shift test", "attention", None, None, "question"),
    ("18. The shift test", "attention", None, None, "answer"),
    ("19. Watch a positional table learn", "training", None, None, "question"),  # issue 26
    ("20. Watch a positional table learn", "training", None, None, "answer"),
    ("21. Which table moves?", ("training_small", "training_default"), None, None, "question"),
    ("22. Which table moves?", ("training_small", "training_default"), None, None, "answer"),
    ("23. Train short, test long", "length", None, None, "question"),  # issue 41
    ("24. Train short, test long", "length", None, None, "answer"),
    ("25. Stretch RoPE", "length", None, None, "question"),
    ("26. Stretch RoPE", "length", None, None, "answer"),
]


def test_lecture_mode_tells_the_story_one_click_at_a_time(app_test: AppFactory) -> None:
    at = ok(app_test())
    assert visible_panels(at) == 3  # outside lecture mode everything shows at once
    ok(at.toggle(key="lecture").set_value(True).run())
    assert "## A rose is a rose is a rose\\." in [m.value for m in at.markdown]
    assert not any("-badge[" in m.value for m in at.markdown)
    for number, (title, chart, shown, marks, says) in enumerate(LECTURE, start=1):
        if number > 1:
            ok(press(at, 1))
        assert slide_title(at) == title
        assert params(at)["step"] == str(number), "the link follows the slide"
        assert step_buttons(at) == (number == 1, number == len(LECTURE))
        assert list(sent_figures(at)) == ([chart] if isinstance(chart, str) else list(chart or ()))
        if chart == "embeddings":
            assert visible_panels(at) == shown
        if marks is not None:
            assert outlined(at, chart) == marks, title
        text = "\n".join(str(m.value) for m in at.markdown)
        assert ("**Your guess?**" in text) == (says == "question"), title
        assert ("**Answer:**" in text) == (says == "answer"), title
        if number == 2:  # the repeated " rose" is highlighted and says how often
            assert any(re.search(r":orange-\w+\[1 · ␣rose · 8278 · ×3\]", m.value)
                       for m in at.markdown)  # fmt: skip
        if chart == "compare":  # the example pair
            assert "The dog bites the man" in text and "The man bites the dog" in text
    for number in range(len(LECTURE) - 1, 0, -1):
        ok(press(at, -1))
        assert slide_title(at) == LECTURE[number - 1][0]
    assert step_buttons(at) == (True, False)


@pytest.mark.parametrize("scheme", ["learned", "none", "rope"])
def test_lecture_answers_quote_the_numbers(
    app_test: AppFactory, decode_array: Decode, scheme: str
) -> None:
    ids = encode(DEFAULT_TEXT)
    token, _, inputs = book_window(scheme, seed=123, emb_dim=64, context_length=16, token_ids=ids)
    rose = [1, 4, 7]
    difference = float((inputs[rose].max(dim=0).values - inputs[rose].min(dim=0).values).max())
    assert float((token[rose].max(dim=0).values - token[rose].min(dim=0).values).max()) == 0.0
    at = ok(app_test({"lecture": "1", "step": "4", "scheme": scheme}))
    answer = next(str(m.value) for m in at.markdown if "**Answer:**" in str(m.value))
    assert "“␣rose” at 1, 4 and 7: identical (largest difference 0.0)" in answer
    at = ok(app_test({"lecture": "1", "step": "6", "scheme": scheme}))
    question = next(str(m.value) for m in at.markdown if "**Your guess?**" in str(m.value))
    assert "“␣rose” at 1, 4 and 7 still equal?" in question
    ok(press(at, 1))
    answer = next(str(m.value) for m in at.markdown if "**Answer:**" in str(m.value))
    if scheme == "none":
        assert difference == 0.0 and "still identical (largest difference 0.0)" in answer
    else:
        assert f"now differs (largest difference {difference:.2f})" in answer


@pytest.mark.parametrize("flag", ["1", "true", "on"])
def test_lecture_flag_in_the_url_turns_it_on(app_test: AppFactory, flag: str) -> None:
    at = ok(app_test({"lecture": flag}))
    assert not at.warning
    assert at.toggle(key="lecture").value is True
    assert visible_panels(at) is None  # starts at step 0
    assert step_buttons(at) == (True, False)
    assert params(at).get("lecture") == "1"


def test_lecture_hides_stride_and_seed_but_keeps_their_values(
    app_test: AppFactory, decode_array: Decode
) -> None:
    at = set_code_settings(ok(app_test()))  # T=4, d=12, seed 7, stride 3, window 1
    ok(at.toggle(key="lecture").set_value(True).run())
    assert "stride" not in [slider.key for slider in at.slider]
    assert not has_seed_box(at)
    assert params(at)["seed"] == "7" and params(at)["stride"] == "3"
    for _ in range(6):  # to slide 7: the three panels
        ok(press(at, 1))
    ids = encode(DEFAULT_TEXT)[3:7]  # window 1 starts at the stride, 3
    expected = book_window("learned", seed=7, emb_dim=12, context_length=4, token_ids=ids)
    assert_panels_equal(panels(at, decode_array), expected)

    ok(at.toggle(key="lecture").set_value(False).run())
    assert at.slider(key="stride").value == 3
    assert seed_box(at).value == "7"
    assert_panels_equal(panels(at, decode_array), expected)


# --- shareable links -------------------------------------------------------------------------


def test_settings_written_to_the_url_restore_the_same_numbers(
    app_test: AppFactory, decode_array: Decode
) -> None:
    at = ok(app_test())
    ok(at.selectbox(key="scheme").set_value("rope").run())
    ok(at.slider(key="emb_dim").set_value(10).run())
    link = params(at)
    assert link["scheme"] == "rope"
    assert link["emb_dim"] == "10"
    before = panels(at, decode_array)

    again = ok(app_test(link))
    assert not again.warning
    assert again.selectbox(key="scheme").value == "rope"
    assert again.slider(key="emb_dim").value == 10
    after = panels(again, decode_array)
    for z_before, z_after in zip(before, after, strict=True):
        assert torch.equal(z_before, z_after)
    ids = encode(DEFAULT_TEXT)
    assert_panels_equal(
        after, book_window("rope", seed=123, emb_dim=10, context_length=16, token_ids=ids)
    )


# --- issue 9: scheme-aware words, stable examples, step links, honest links --------------------


def metric_labels(at: AppTest) -> list[str]:
    return [metric.label for metric in at.metric]


@pytest.mark.parametrize(
    ("scheme", "added", "absent"),
    [
        ("learned", "+ positional embeddings [T, d]", "nothing"),
        ("sinusoidal", "+ sinusoidal encoding [T, d]", "+ positional embeddings"),
        ("none", "+ nothing (no positional signal)", "+ positional embeddings"),
        ("rope", "↻ rotation angles [T, d/2]", "+ positional embeddings"),
    ],
)
def test_labels_say_what_the_scheme_adds(
    app_test: AppFactory, scheme: str, added: str, absent: str
) -> None:
    at = ok(app_test({"scheme": scheme}))
    labels = metric_labels(at)
    assert added in labels
    assert not any(absent in label for label in labels)
    text = page_text(at)
    if scheme == "none":
        assert "only the" not in text and "cannot tell the 3 occurrences apart" in text
    if scheme == "rope":
        assert "RoPE adds nothing: it rotates each row by an angle" in text


def test_changing_only_the_scheme_keeps_the_example(app_test: AppFactory) -> None:
    at = ok(app_test())
    example = example_menu(at).value
    assert example != "Your own text"
    ok(at.selectbox(key="scheme").set_value("rope").run())
    assert example_menu(at).value == example
    ok(at.slider(key="emb_dim").set_value(10).run())
    assert example_menu(at).value == "Your own text"
    ok(at.slider(key="emb_dim").set_value(64).run())  # back to the example's d
    assert example_menu(at).value == example


def test_the_example_menu_follows_the_settings(app_test: AppFactory) -> None:
    """The menu's label is derived from the settings at each run: a link that shows an
    example names it, a text typed by hand is the user's own, and choosing "Your own text"
    empties the text box for the user's words."""
    at = ok(app_test({"text": "Every effort moves you", "context_length": "4"}))
    assert example_menu(at).value == "Every effort moves you"
    ok(at.text_area(key="text").set_value("my own words").run())
    assert example_menu(at).value == "Your own text"
    ok(example_menu(at).set_value("A rose is a rose (repeated words)").run())
    assert at.text_area(key="text").value == "A rose is a rose is a rose."
    ok(example_menu(at).set_value("Your own text").run())
    assert at.text_area(key="text").value == ""
    assert example_menu(at).value == "Your own text"
    assert any("Type or paste some text" in info.value for info in at.info)


@pytest.mark.parametrize(
    ("step", "shown"), [("1", None), ("3", 1), ("4", 1), ("5", 2), ("6", 2), ("7", 3)]
)
def test_step_link_opens_that_step(app_test: AppFactory, step: str, shown: int | None) -> None:
    at = ok(app_test({"lecture": "1", "step": step}))
    assert slide_title(at).startswith(f"{step}.")
    assert visible_panels(at) == shown
    assert params(at)["step"] == step
    if step != "1":
        ok(press(at, -1))
        assert params(at)["step"] == str(int(step) - 1), "the link follows the slide"


def test_the_position_steps_follow_the_scheme(app_test: AppFactory) -> None:
    at = ok(app_test({"step": "7", "scheme": "none"}))
    assert slide_title(at) == "7. Input embeddings = token embeddings"
    ok(press(at, -1))
    assert slide_title(at) == "6. Input embeddings = token embeddings"
    ok(press(at, -1))
    assert slide_title(at) == "5. No positional signal"


def test_a_text_too_long_for_its_link_says_so_and_offers_the_file(app_test: AppFactory) -> None:
    at = ok(app_test())
    text = "word " * 500  # 2,500 characters
    ok(at.text_area(key="text").input(text).run())
    assert "text" not in params(at) and params(at)["text_omitted"] == "1"
    notes = " ".join(caption.value for caption in at.sidebar.caption)
    assert "too long for the page's link" in notes
    buttons = [b for b in at.get("download_button") if b.proto.id.endswith("download_text")]
    assert len(buttons) == 1
    opened = ok(app_test(params(at)))  # whoever opens that link is told
    assert any("too long for a link" in warning.value for warning in opened.warning)


def test_chips_beyond_a_screenful_wait_behind_and_n_more(app_test: AppFactory) -> None:
    at = ok(app_test({"text": "a b c d e f g h " * 20, "context_length": "128"}))
    first = [m.value for m in at.markdown if "-badge[" in m.value and "Dropped" not in m.value]
    assert len(first) == 1 and first[0].count("-badge[") == 64
    (more,) = [e for e in at.expander if "more tokens" in e.label]
    assert more.label == f"and {128 - 64} more tokens"
