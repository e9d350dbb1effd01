"""Downloads: CSV and .npy hold exactly the window's matrices; HTML works offline."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import pytest
import torch
from reference import book_window, tiktoken_gpt2

from posviz.config import Settings
from posviz.embeddings import SeededEmbeddings
from posviz.export import (
    download_name,
    figure_html,
    matrices_csv,
    matrices_npy,
    spreadsheet_safe,
)
from posviz.pipeline import WindowEmbeddings, embed_window
from posviz.plots.heatmaps import embeddings_figure
from posviz.tokenizer import encode, token_texts

SEED, EMB_DIM, CONTEXT_LENGTH = 7, 5, 8
TOKEN_IDS = [40, 367, 2885, 40, 50256]


@pytest.fixture(scope="module")
def window() -> WindowEmbeddings:
    tables = SeededEmbeddings.create(seed=SEED, emb_dim=EMB_DIM)
    return embed_window(tables, TOKEN_IDS, context_length=CONTEXT_LENGTH, scheme="sinusoidal")


def book_matrices() -> list[torch.Tensor]:
    """The book's token rows and the sin/cos formula (tests/reference.py)."""
    return book_window(
        "sinusoidal",
        seed=SEED,
        emb_dim=EMB_DIM,
        context_length=CONTEXT_LENGTH,
        token_ids=TOKEN_IDS,
    )


def test_npy_is_three_float32_matrices_in_order(window: WindowEmbeddings) -> None:
    data = matrices_npy(window)
    assert data.startswith(b"\x93NUMPY")
    array = np.load(io.BytesIO(data), allow_pickle=False)
    assert array.shape == (3, len(TOKEN_IDS), EMB_DIM)
    assert array.dtype == np.float32
    for stored, expected in zip(array, book_matrices(), strict=True):
        assert np.array_equal(stored, expected.numpy())


def test_csv_rows_hold_exact_float32_values(window: WindowEmbeddings) -> None:
    texts = ("I", "␣HAD", '=HYPERLINK("x")', "I", '"a",\nb')
    shown = replace(window, token_texts=texts)
    rows = list(csv.reader(io.StringIO(matrices_csv(shown).decode("utf-8"))))
    header, body = rows[0], rows[1:]
    assert header == ["matrix", "position", "token", "token_id", "token_shown"] + [
        f"dim_{j}" for j in range(EMB_DIM)
    ]
    assert len(body) == 3 * len(TOKEN_IDS)
    matrices = (window.token_embeddings, window.pos_embeddings, window.input_embeddings)
    for index, row in enumerate(body):
        which, position = divmod(index, len(TOKEN_IDS))
        assert row[0] == ("token", "position", "input")[which]
        assert int(row[1]) == position
        assert int(row[3]) == TOKEN_IDS[position]
        values = np.array([np.float32(float(v)) for v in row[5:]], dtype=np.float32)
        assert np.array_equal(values, matrices[which][position].numpy())  # bit for bit
    assert [row[4] for row in body[:5]] == ["I", "␣HAD", '\'=HYPERLINK("x")', "I", '"a",\nb']
    for row, expected in zip(body[5:10], book_matrices()[1], strict=True):
        values = np.array([np.float32(float(v)) for v in row[5:]], dtype=np.float32)
        assert np.array_equal(values, expected.numpy())


def test_csv_token_column_is_the_tokens_own_text() -> None:
    """The token's text as tiktoken decodes it (spaces and newlines as they are); the page's
    visible form beside it; a token holding part of a character as its bytes."""
    tables = SeededEmbeddings.create(seed=SEED, emb_dim=EMB_DIM)
    encoding = tiktoken_gpt2()
    token_ids = [*encoding.encode(" the rose\n=1"), 12520]  # 12520: the first bytes of an emoji
    window = embed_window(tables, token_ids, context_length=16, scheme="learned")
    rows = list(csv.reader(io.StringIO(matrices_csv(window).decode("utf-8"))))[1:]
    raw = encoding.decode_single_token_bytes(12520)
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")  # a space and half a character
    want = [encoding.decode([t]) for t in token_ids[:-1]] + [
        raw.decode("utf-8", "backslashreplace")
    ]
    want = ["'" + w if w.startswith("=") else w for w in want]
    assert [row[2] for row in rows[: len(token_ids)]] == want
    assert [row[2] for row in rows[: len(token_ids)]][:3] == [" the", " rose", "\n"]
    assert rows[len(token_ids) - 1][2] == " \\xf0\\x9f"
    assert [row[4] for row in rows[:3]] == ["␣the", "␣rose", "↵"]


@pytest.mark.parametrize(
    ("settings", "name"),
    [
        pytest.param(Settings(), "posviz_T16_d64_seed123_w0.csv", id="defaults"),
        pytest.param(
            Settings(context_length=8, emb_dim=256, seed=7, window=2),
            "posviz_T8_d256_seed7_w2.csv",
            id="book",
        ),
        pytest.param(
            Settings(scheme="sinusoidal", stride=4, context_length=8),
            "posviz_T8_d64_seed123_sinusoidal_stride4_w0.csv",
            id="scheme-and-stride",
        ),
        pytest.param(
            Settings(weights="gpt2", emb_dim=768, seed=99), "posviz_T16_d768_gpt2_w0.csv", id="gpt2"
        ),
    ],
)
def test_download_names_carry_the_settings(settings: Settings, name: str) -> None:
    assert download_name(settings, "csv") == name
    assert download_name(settings, "npy") == name.removesuffix(".csv") + ".npy"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("=1+1", "'=1+1", id="equals"),
        pytest.param("+cmd", "'+cmd", id="plus"),
        pytest.param("-2", "'-2", id="minus"),
        pytest.param("@SUM(A1)", "'@SUM(A1)", id="at"),
        pytest.param("\tx", "'\tx", id="tab"),
        pytest.param("\rx", "'\rx", id="carriage-return"),
        pytest.param("␣=", "␣=", id="visible-space-first"),
        pytest.param("rose", "rose", id="plain"),
        pytest.param("", "", id="empty"),
    ],
)
def test_spreadsheet_formulas_are_defused(text: str, expected: str) -> None:
    assert spreadsheet_safe(text) == expected


def _outside_plotly_bundle(page: str) -> str:
    """The page without the inlined plotly.js library (the one script that starts with its
    licence banner)."""
    bundle = re.compile(r"<script[^>]*>\s*/\*\*\s*\* plotly\.js v[\d.]+.*?</script>", re.S)
    stripped, count = bundle.subn("", page)
    assert count == 1
    return stripped


def test_html_is_standalone_and_offline(window: WindowEmbeddings) -> None:
    figure = embeddings_figure(replace(window, token_texts=("I", "␣HAD", "<b>", "I", "x")))
    page = figure_html(figure, title="posviz <T=8>").decode("utf-8")
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert "<title>posviz &lt;T=8&gt;</title>" in page
    assert "plotly.js v" in page  # the library itself is inlined
    assert len(page) > 1_000_000
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I)  # nothing is fetched
    assert not re.search(r"<link[^>]*\bhref\s*=", page, re.I)
    rest = _outside_plotly_bundle(page)
    assert "cdn.plot.ly" not in rest
    assert "http" not in rest
    assert "mathjax" not in rest.lower().replace("mathjaxconfig: 'local'", "")
    assert "Plotly.newPlot" in rest
    assert "input embeddings = sum" in rest  # the figure is in the page
    assert "&lt;b&gt;" in rest  # token text stays escaped


def test_html_of_a_similarity_like_figure_keeps_its_data() -> None:
    figure = go.Figure(go.Heatmap(z=[[0.25, -0.5]], name="probe-trace"))
    rest = _outside_plotly_bundle(figure_html(figure).decode("utf-8"))
    assert "probe-trace" in rest


def test_csv_keeps_the_exact_bytes_of_a_split_character() -> None:
    """Chips and tick labels name the character (東 (1 of 2)); the CSV keeps each token's own
    bytes and id, as tiktoken gives them."""
    ids = encode("東京")
    window = embed_window(SeededEmbeddings.create(seed=SEED, emb_dim=EMB_DIM), ids,
                          context_length=CONTEXT_LENGTH)  # fmt: skip
    assert token_texts(ids)[0] == "東 (1 of 2)"
    rows = list(csv.reader(io.StringIO(matrices_csv(window).decode("utf-8"))))[1:]
    exact = [tiktoken_gpt2().decode_single_token_bytes(i) for i in ids]
    expected = ["".join(f"\\x{b:02x}" for b in token) for token in exact]
    assert [(row[2], int(row[3])) for row in rows[: len(ids)]] == list(
        zip(expected, ids, strict=True)
    )
