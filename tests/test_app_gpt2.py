"""The app with ``weights=gpt2``, against the loopback Hub stand-in (made-up tables with
GPT-2's shapes, NOT GPT-2's: nothing here is a picture of GPT-2).

Expected numbers come from the arrays the fixture wrote into the served file, looked up here
with numpy; token ids from ``posviz.tokenizer.encode`` (checked against tiktoken elsewhere).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from charts import sent_figures
from reference import book_tables
from streamlit.testing.v1 import AppTest
from widgets import seed_box

from devtools.fake_hub import COMMIT, Blob, FakeHub
from posviz.tokenizer import encode

AppFactory = Callable[..., AppTest]
Decode = Callable[[object], np.ndarray]
TEXT = "A rose is a rose is a rose."


def chart_panels(at: AppTest, decode: Decode, key: str = "embeddings") -> list[np.ndarray]:
    return [decode(trace["z"]) for trace in sent_figures(at)[key]["data"]]


def plain(markdown: str) -> str:
    """Text escaped by ``token_text.for_markdown``, as the reader sees it."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")


def page_text(at: AppTest) -> str:
    parts = [e.value for e in (*at.markdown, *at.caption, *at.info, *at.warning, *at.error)]
    return "\n".join(plain(str(p)) for p in parts)


def warnings(at: AppTest) -> list[str]:
    return [plain(w.value) for w in at.warning]


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def served_window(blob: Blob, text: str) -> list[np.ndarray]:
    token_ids = encode(text)
    wte, wpe = blob.arrays["wte.weight"], blob.arrays["wpe.weight"]
    tokens, positions = wte[token_ids], wpe[: len(token_ids)]
    return [tokens, positions, tokens + positions]


def cdn_downloads(hub: FakeHub, blob: Blob, name: str) -> int:
    begin, end = blob.offsets[name]
    return sum(1 for r in hub.on("cdn") if r.range == f"bytes={begin}-{end - 1}")


def test_gpt2_view_shows_the_served_rows_exactly(
    app_test: AppFactory, decode_array: Decode, gpt2_hub: FakeHub, gpt2_blob: Blob
) -> None:
    at = app_test({"weights": "gpt2"})
    assert_ok(at)
    for shown, want in zip(
        chart_panels(at, decode_array), served_window(gpt2_blob, TEXT), strict=True
    ):
        assert shown.dtype == np.float32
        assert np.array_equal(shown, want)
    assert at.slider(key="emb_dim").value == 768 and at.slider(key="emb_dim").disabled
    assert at.selectbox(key="scheme").value == "learned" and at.selectbox(key="scheme").disabled
    assert seed_box(at).disabled
    text = page_text(at)
    assert f"commit `{COMMIT[:12]}`" in text and "The seed has no effect" in text
    assert "GPT-2's trained tables fix d = 768 and the learned scheme" in text
    assert at.query_params["weights"] == "gpt2"
    assert cdn_downloads(gpt2_hub, gpt2_blob, "wte.weight") == 1


def test_the_seed_has_no_effect(
    app_test: AppFactory, decode_array: Decode, gpt2_hub: FakeHub, gpt2_blob: Blob
) -> None:
    at = app_test({"weights": "gpt2", "seed": "7"})
    assert_ok(at)
    assert np.array_equal(chart_panels(at, decode_array)[2], served_window(gpt2_blob, TEXT)[2])


def test_switching_weights_fixes_then_restores_d_and_scheme(
    app_test: AppFactory, decode_array: Decode, gpt2_hub: FakeHub, gpt2_blob: Blob
) -> None:
    at = app_test({"emb_dim": "32", "scheme": "rope"})
    at.radio(key="weights").set_value("gpt2").run()
    assert_ok(at)
    assert (at.slider(key="emb_dim").value, at.selectbox(key="scheme").value) == (768, "learned")
    assert np.array_equal(chart_panels(at, decode_array)[0], served_window(gpt2_blob, TEXT)[0])
    at.radio(key="weights").set_value("init").run()
    assert_ok(at)
    assert (at.slider(key="emb_dim").value, at.selectbox(key="scheme").value) == (32, "rope")
    assert chart_panels(at, decode_array)[0].shape == (len(encode(TEXT)), 32)


def test_a_link_with_gpt2_and_other_d_or_scheme_says_what_it_uses(
    app_test: AppFactory, gpt2_hub: FakeHub
) -> None:
    at = app_test({"weights": "gpt2", "emb_dim": "64", "scheme": "rope"})
    assert_ok(at)
    shown = " ".join(warnings(at))
    assert "GPT-2's trained tables have 768 columns; using 768, not 64" in shown
    assert "with weights=gpt2 the scheme is learned" in shown
    assert at.slider(key="emb_dim").value == 768


def test_an_unknown_weights_value_keeps_init(app_test: AppFactory) -> None:
    at = app_test({"weights": "gpt3"})
    assert_ok(at)
    assert at.radio(key="weights").value == "init"
    assert "weights: 'gpt3' is not one of init, gpt2; using init" in " ".join(warnings(at))


def test_offline_without_cache_says_so_once_and_shows_the_init_view(
    app_test: AppFactory, decode_array: Decode
) -> None:
    st.cache_resource.clear()  # a fresh store reads the offline environment of conftest
    at = app_test({"weights": "gpt2"})
    assert_ok(at)
    offline = [w for w in warnings(at) if "not in the cache" in w]
    assert len(offline) == 1
    assert "python -m posviz --fetch-gpt2" in offline[0]
    assert "Showing the book's random init instead (d = 64, seed 123" in offline[0]
    token_table, _ = book_tables(123, 64, 16)  # a link with GPT-2 alone: the defaults
    shown = chart_panels(at, decode_array)[0]
    assert np.array_equal(shown, token_table[encode(TEXT)].numpy())
    assert at.radio(key="weights").value == "init"
    assert dict(at.query_params) == {"weights": "gpt2"}, "the link keeps asking: a reload retries"
    at.slider(key="emb_dim").set_value(32).run()  # what the notice describes changes
    assert not [w for w in warnings(at) if "not in the cache" in w]
    assert dict(at.query_params) == {"emb_dim": "32"}


def test_choosing_gpt2_offline_restores_the_users_view(
    app_test: AppFactory, decode_array: Decode
) -> None:
    """From ?emb_dim=32&seed=5&scheme=rope, GPT-2 chosen with no network and no cache: the
    radio back on the random init with d, seed and scheme as they were, all enabled, the
    chart and the link those of that view, one message saying why and what to run."""
    st.cache_resource.clear()
    at = app_test({"emb_dim": "32", "seed": "5", "scheme": "rope"})
    at.radio(key="weights").set_value("gpt2").run()
    assert_ok(at)
    assert at.radio(key="weights").value == "init"
    d, seed, scheme = (
        at.slider(key="emb_dim"),
        seed_box(at),
        at.selectbox(key="scheme"),
    )
    assert (d.value, seed.value, scheme.value) == (32, "5", "rope")
    assert not (d.disabled or seed.disabled or scheme.disabled)
    shown = [w for w in warnings(at) if "GPT-2" in w]
    assert len(shown) == 1
    assert "python -m posviz --fetch-gpt2" in shown[0]
    assert "(d = 32, seed 5, scheme RoPE" in shown[0]
    token_table, _ = book_tables(5, 32, 16)
    assert np.array_equal(chart_panels(at, decode_array)[0], token_table[encode(TEXT)].numpy())
    assert dict(at.query_params) == {"emb_dim": "32", "seed": "5", "scheme": "rope"}
    assert "GPT-2's trained tables fix" not in page_text(at)


def test_an_altered_cache_is_named_and_never_shown(
    app_test: AppFactory, decode_array: Decode, gpt2_hub: FakeHub, gpt2_blob: Blob
) -> None:
    assert_ok(app_test({"weights": "gpt2"}))  # downloads into the test's cache folder
    (wte,) = Path(os.environ["POSVIZ_CACHE_DIR"]).rglob("wte.weight.f32")
    with wte.open("r+b") as handle:
        handle.seek(1000)
        byte = handle.read(1)
        handle.seek(1000)
        handle.write(bytes([byte[0] ^ 0x01]))
    st.cache_resource.clear()  # as in a new process: the store checks the file again
    at = app_test({"weights": "gpt2"})
    assert_ok(at)
    assert any("was altered: sha256" in w for w in warnings(at))
    token_table, _ = book_tables(123, 64, 16)  # the random init, at the defaults
    assert np.array_equal(chart_panels(at, decode_array)[0], token_table[encode(TEXT)].numpy())
    assert at.radio(key="weights").value == "init"


def neighbour_numbers(positions: np.ndarray) -> tuple[float, float]:
    """Mean cosine similarity of positions p, p+1 and of pairs n // 2 or more apart (numpy)."""
    unit = positions.astype(np.float64)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    similarity = (unit @ unit.T).astype(np.float32).astype(np.float64)
    n = len(positions)
    adjacent = np.mean([similarity[p, p + 1] for p in range(n - 1)])
    distant = np.mean([similarity[p, q] for p in range(n) for q in range(p + n // 2, n)])
    return float(adjacent), float(distant)


@pytest.mark.parametrize("weights", ["init", "gpt2"])
def test_similarity_quotes_how_alike_neighbouring_positions_are(
    app_test: AppFactory, gpt2_hub: FakeHub, gpt2_blob: Blob, weights: str
) -> None:
    at = app_test({"weights": weights, "emb_dim": "768"})
    at.session_state["view"] = "Similarity"
    at.run()
    assert_ok(at)
    n = len(encode(TEXT))
    if weights == "gpt2":
        positions = gpt2_blob.arrays["wpe.weight"][:n]
    else:
        positions = book_tables(123, 768, 16)[1][:n].numpy()
    adjacent, distant = neighbour_numbers(positions)
    text = page_text(at)
    assert f"have mean cosine similarity **{adjacent:.3f}**" in text
    assert f"positions {n // 2} or more apart, **{distant:.3f}**" in text
    usual = "Trained position tables usually make neighbouring positions alike"
    assert (usual in text) == (weights == "gpt2")
    # The served tables are made up (random): the numbers show no band on the diagonal, and
    # the page must say so rather than state what trained tables usually show.
    assert abs(adjacent - distant) < 0.1
    assert "neighbours are more alike" not in text
    assert "These numbers do not show it" in text if weights == "gpt2" else "show it" in text
