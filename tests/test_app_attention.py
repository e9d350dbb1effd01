"""The Attention tab through AppTest: a ``tab=attention`` link opens it with its heads, head and
shift, the chart carries the book's numbers (tests/reference.py), the words follow them, heads
that do not divide d are fitted with a notice, and lecture mode asks, then answers, the shift
question. AppTest skips the browser (tests/test_browser_* draw the page in Chromium)."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
from charts import sent_figures
from reference import book_head_attention, get_slopes, token_ids, visible_token
from streamlit.testing.v1 import AppTest

from posviz.lesson.lecture import SLIDES

AppFactory = Callable[..., AppTest]
ROSE = "A rose is a rose is a rose."


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def unescaped(markdown: object) -> str:
    """The words of a Markdown string as the page shows them."""
    return re.sub(r"\\(.)", r"\1", str(markdown)).replace("\u2060", "")


def text_of(at: AppTest) -> str:
    parts = [e.value for e in (*at.markdown, *at.caption, *at.warning)]
    return unescaped("\n".join(str(p) for p in parts))


def heatmaps(at: AppTest) -> list[dict[str, object]]:
    figures = sent_figures(at)
    assert list(figures) == ["attention"]
    return [t for t in figures["attention"]["data"] if t["type"] == "heatmap"]  # type: ignore[attr-defined]


def assert_head_5_of_6_is_the_books(at: AppTest, emb_dim: int) -> None:
    """ALiBi's head 5 of 6 for the rose, moved 8 positions: the book's scores and weights (the
    masked cells empty), the rows labelled with their positions, the head's slope named."""
    assert (at.selectbox(key="heads").value, at.selectbox(key="head").value) == (6, 5)
    ids = token_ids(ROSE)
    scores, weights = book_head_attention(
        "alibi", seed=123, emb_dim=emb_dim, context_length=16, token_ids=ids, num_heads=6,
        head=5, start=8,
    )  # fmt: skip
    traces = heatmaps(at)
    assert len(traces) == 4
    below = np.tril(np.ones((9, 9), dtype=bool))
    for trace, want in ((traces[2], scores), (traces[3], weights)):
        z = np.asarray(trace["z"], dtype=np.float64)
        assert np.isnan(z[~below]).all()  # the masked cells: empty
        np.testing.assert_allclose(z[below], want.numpy()[below], rtol=1e-6, atol=1e-6)
    assert list(traces[0]["y"]) == [f"{8 + i} · {visible_token(t)}" for i, t in enumerate(ids)]
    m = get_slopes(6)[5]
    assert f"head 5 (m = 1/{round(1 / m)})" in text_of(at)  # 1/8
    assert at.query_params["heads"] == "6"
    assert at.query_params["head"] == "5" and at.query_params["shift"] == "8"
    assert at.query_params["tab"] == "attention"


def test_the_issues_link_opens_head_5_of_6_heads(app_test: AppFactory) -> None:
    """The issue's link names 6 heads and no d: it gets the nearest d they divide (66, not the
    default 64, which would have left 4 heads and no head 5), says so, and draws head 5."""
    at = app_test({"tab": "attention", "scheme": "alibi", "heads": "6", "head": "5", "shift": "8"})
    assert_ok(at)
    assert at.session_state["view"] == "Attention"
    assert at.slider(key="emb_dim").value == 66 and at.slider(key="shift").value == 8
    said = [unescaped(e.value) for e in at.info]
    assert any("Link: emb_dim: 66, not the default 64, so that its 6 heads divide d" in s
               for s in said), said  # fmt: skip
    assert not at.warning, [e.value for e in at.warning]  # every value of the link was used
    assert_head_5_of_6_is_the_books(at, 66)
    assert "ALiBi's scores are **unchanged** (largest change 0.0)" in text_of(at)
    assert at.query_params["emb_dim"] == "66"


def test_a_link_naming_d_that_6_heads_do_not_divide_fits_its_heads(app_test: AppFactory) -> None:
    """A link that names both keeps its d: 6 heads do not divide 64, so the tab shows 4 (and
    says so)."""
    at = app_test({"tab": "attention", "scheme": "alibi", "heads": "6", "head": "5",
                   "shift": "8", "emb_dim": "64"})  # fmt: skip
    assert_ok(at)
    text = text_of(at)
    assert "heads: 6 does not divide emb_dim 64 into equal heads; using 4" in text
    assert "head: 5 is not one of the 4 heads; using 3" in text
    assert at.selectbox(key="heads").value == 4 and at.selectbox(key="head").value == 3
    assert at.slider(key="emb_dim").value == 64 and at.slider(key="shift").value == 8
    assert "ALiBi's scores are **unchanged** (largest change 0.0)" in text
    assert len(heatmaps(at)) == 4


def test_six_heads_of_96_columns_are_the_books(app_test: AppFactory) -> None:
    query = {"tab": "attention", "scheme": "alibi", "heads": "6", "head": "5", "shift": "8",
             "emb_dim": "96"}  # fmt: skip
    at = app_test(query)
    assert_ok(at)
    assert_head_5_of_6_is_the_books(at, 96)
    assert not at.info  # a link that names d and heads that divide it: nothing chosen for it


def test_the_controls_change_the_view(app_test: AppFactory) -> None:
    at = app_test({"tab": "attention", "scheme": "learned"})
    assert_ok(at)
    assert "The sentence stands at positions 0–8." in text_of(at)
    at.slider(key="shift").set_value(4).run()
    assert_ok(at)
    assert "the learned scheme's scores **change by up to" in text_of(at)
    assert at.slider(key="shift").max == 7  # 7 ... 15: the table's last rows (issue 42)
    at.toggle(key="shift_past_end").set_value(True).run()  # past its end, on purpose
    at.slider(key="shift").set_value(8).run()  # 8 ... 16: past nn.Embedding(16, 64)
    assert_ok(at)
    assert "raises `IndexError: index out of range in self` (torch's message)" in text_of(at)
    at.selectbox(key="heads").set_value(8).run()
    assert_ok(at)
    assert at.selectbox(key="head").options == [str(k) for k in range(8)]
    assert "Head 0 of 8: columns 0–7" in text_of(at)


@pytest.mark.parametrize("scheme", ["rope", "learned"])
def test_lecture_asks_then_answers_the_shift(app_test: AppFactory, scheme: str) -> None:
    asked_at = next(s.number for s in SLIDES if s.step.view == "attention" and not s.revealed)
    asked = app_test({"lecture": "1", "step": str(asked_at), "scheme": scheme})
    assert_ok(asked)
    name = {"rope": "RoPE's", "learned": "the learned scheme's"}[scheme]
    # 9 tokens of the rose fit a 16-row learned table at 0 ... 15: 7 positions later at most
    moves = {"rope": 8, "learned": 16 - 9}[scheme]
    question = f"The sentence moves {moves} positions later. Will {name} attention scores change?"
    assert question in text_of(asked)
    shown = app_test({"lecture": "1", "step": str(asked_at + 1), "scheme": scheme})
    assert_ok(shown)
    answer = text_of(shown)
    if scheme == "rope":
        assert "**Answer:** No: RoPE's scores are unchanged" in answer
        assert heatmaps(shown)[0]["y"][0].startswith("8 · ")  # type: ignore[index]  # moved
    else:  # 9 tokens at 8 ... 16 do not fit a 16-row table: moved 7 (the book's numbers)
        assert (
            "**Answer:** Yes: moved 7 positions later (as far as the table's 16 rows hold "
            "these 9 tokens: 8 later they would need row 16, which raises `IndexError`), the "
            "learned scheme's scores change by up to" in answer
        )
        assert heatmaps(shown)[0]["y"][0].startswith("7 · ")  # type: ignore[index]  # moved


def test_a_new_d_fits_the_heads_and_says_so(app_test: AppFactory) -> None:
    at = app_test({"tab": "attention", "scheme": "rope"})
    assert_ok(at)
    at.slider(key="emb_dim").set_value(66).run()  # 4 heads of 66 columns do not exist
    assert_ok(at)
    assert (
        "heads: 4 does not divide emb_dim 66 into equal heads with RoPE's even heads; using 3"
        in (text_of(at))
    )
    # RoPE rotates pairs: of the divisors 1, 2, 3, 6, 11 only those with an even d/H
    assert at.selectbox(key="heads").options == ["1", "3", "11"]
    assert at.selectbox(key="heads").value == 3
    assert "Head 0 of 3: columns 0–21" in text_of(at)
