"""The naive reference app: section 2.8 written the straightforward way, for the benchmark.

This is what a first version of posviz looks like when written straight from the book: on
every rerun it seeds torch, builds the whole ``nn.Embedding(50257, d)`` token table and the
``nn.Embedding(T, d)`` positional table, slices the text into windows with a Python loop, and
builds the Plotly figure from Python lists (``.tolist()``), with no caching and no reduction.
It uses the same widget keys and chart key as ``app.py`` so the same benchmark driver runs
against both. Its numbers are the same as posviz's (same seed, same order of the two tables);
only the cost differs. Not part of the app: run it with ``streamlit run benchmarks/naive_app.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st
import torch
from plotly.subplots import make_subplots

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# GPT-2's tokenizer; tiktoken.get_encoding("gpt2") would download it, posviz's is offline.
from posviz.tokenizer import encode, token_bytes

DEFAULT_TEXT = "A rose is a rose is a rose."

st.set_page_config(page_title="naive section 2.8", layout="wide")
st.title("Token + position = input embeddings (naive reference)")

presets = {
    "A rose is a rose": DEFAULT_TEXT,
    "Every effort moves you": "Every effort moves you",
}
preset = st.sidebar.selectbox("Example", [*presets, "Your own text"], key="preset")
if "text" not in st.session_state:
    st.session_state["text"] = presets.get(preset, DEFAULT_TEXT)
text = st.sidebar.text_area("Text", key="text", max_chars=25_000)
context_length = st.sidebar.slider("Context length", 1, 1024, 16, key="context_length")
emb_dim = st.sidebar.slider("Embedding dimension", 2, 768, 64, key="emb_dim")
stride = st.sidebar.slider("Stride", 1, 1024, context_length, key="stride")
seed = st.sidebar.number_input("Seed", 0, 2**32 - 1, 123, step=1, key="seed")
scheme = st.sidebar.selectbox("Scheme", ["learned", "sinusoidal", "none", "rope"], key="scheme")

if not text.strip():
    st.info("Type some text.")
    st.stop()

# Section 2.6: token ids, then windows of context_length tokens every `stride` tokens.
token_ids = encode(text)
windows = []
for i in range(0, max(len(token_ids) - context_length, 0) + 1, stride):
    windows.append(token_ids[i : i + context_length])
inputs = torch.tensor(windows)  # [B, T]
window = 0
if len(windows) > 1:
    window = st.slider("Window", 0, len(windows) - 1, 0, key="window")
window = min(window, len(windows) - 1)
st.write("Tokens:", [t.decode("utf-8", "replace") for t in token_bytes(windows[window])])
st.write("inputs", list(inputs.shape))

# Section 2.7 and 2.8: both tables, built in full on every rerun.
torch.manual_seed(int(seed))
token_embedding_layer = torch.nn.Embedding(50257, emb_dim)
pos_embedding_layer = torch.nn.Embedding(context_length, emb_dim)
token_embeddings = token_embedding_layer(inputs)  # [B, n, d]
n = inputs.shape[1]
if scheme == "learned":
    pos_embeddings = pos_embedding_layer(torch.arange(n))  # [n, d]
elif scheme == "sinusoidal":
    pos_embeddings = torch.zeros(n, emb_dim)
    for p in range(n):
        for i in range(0, emb_dim, 2):
            pos_embeddings[p, i] = torch.sin(torch.tensor(p / 10000 ** (i / emb_dim)))
            if i + 1 < emb_dim:
                pos_embeddings[p, i + 1] = torch.cos(torch.tensor(p / 10000 ** (i / emb_dim)))
else:
    pos_embeddings = torch.zeros(n, emb_dim)
input_embeddings = token_embeddings + pos_embeddings  # [B, n, d]
if scheme == "rope":
    half = emb_dim // 2
    theta = 1.0 / 10000 ** (torch.arange(0, 2 * half, 2)[:half].float() / (2 * half))
    angles = torch.arange(n)[:, None] * theta[None, :]
    angles = torch.cat([angles, angles, torch.zeros(n, emb_dim - 2 * half)], dim=1)
    x = token_embeddings
    rotated = torch.cat([-x[..., half : 2 * half], x[..., :half], 0 * x[..., 2 * half :]], -1)
    pos_embeddings = torch.cos(angles)
    input_embeddings = x * torch.cos(angles) + rotated * torch.sin(angles)
st.write("input embeddings", list(input_embeddings.shape))

labels = [
    f"{p} · {t.decode('utf-8', 'replace')}" for p, t in enumerate(token_bytes(windows[window]))
]
figure = make_subplots(
    rows=1,
    cols=3,
    shared_yaxes=True,
    subplot_titles=["token embeddings", "positional embeddings", "input embeddings"],
)
for col, matrix in enumerate(
    [token_embeddings[window], pos_embeddings, input_embeddings[window]], start=1
):
    figure.add_trace(go.Heatmap(z=matrix.tolist(), y=labels, coloraxis="coloraxis"), row=1, col=col)
figure.update_layout(coloraxis={"colorscale": "RdBu_r", "cmid": 0}, height=600)
figure.update_yaxes(autorange="reversed", type="category")
st.plotly_chart(figure, key="embeddings")
