"""The numbers a posviz chart must show, computed without posviz: tiktoken, torch, formulas.

The load test and the scale-out tests check every chart the server sends against this:

* token ids from tiktoken's own ``gpt2`` encoding: :func:`tiktoken_gpt2` builds it with
  ``tiktoken_ext.openai_public.gpt2()`` (the published URLs, hashes and split pattern), its
  reader served from posviz/data, so tiktoken checks the files' SHA-256 itself;
* tables as in the book, section 2.8: ``torch.manual_seed(seed)``, then
  ``nn.Embedding(50257, emb_dim)``, then ``nn.Embedding(context_length, emb_dim)``, under
  ``torch.random.fork_rng`` so the caller's random state is untouched;
* window ``w`` of a text covers token ids ``[w * stride, w * stride + T)``;
* each scheme's formula: learned (added table rows), sinusoidal (Vaswani et al. 2017,
  float64 rounded to float32), none (zeros), RoPE (the book's Llama notebook,
  ``precompute_rope_params`` / ``compute_rope``; even ``emb_dim`` only).

Equality is bitwise in float32: the same float32 operations in the same order.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import numpy as np
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public
import torch

DATA = Path(__file__).resolve().parent.parent / "posviz" / "data"
VOCAB_SIZE = 50257
END_OF_TEXT = "<|endoftext|>"
SCHEMES = ("learned", "sinusoidal", "none", "rope")


@functools.cache
def tiktoken_gpt2() -> tiktoken.Encoding:
    """tiktoken's ``gpt2`` Encoding, built by tiktoken from posviz/data (hash-checked, offline)."""
    files = {"vocab.bpe": DATA / "vocab.bpe", "encoder.json": DATA / "encoder.json"}

    def read_local(blobpath: str) -> bytes:
        return files[blobpath.rsplit("/", 1)[-1]].read_bytes()  # KeyError: not a GPT-2 file

    with (
        tempfile.TemporaryDirectory(prefix="posviz-tiktoken-") as cache,
        mock.patch.dict(os.environ, {"TIKTOKEN_CACHE_DIR": cache}),
        mock.patch.object(tiktoken.load, "read_file", read_local),
    ):
        return tiktoken.Encoding(**tiktoken_ext.openai_public.gpt2())


def token_ids(text: str) -> list[int]:
    """GPT-2 token ids of ``text``; ``<|endoftext|>`` is the special token 50256."""
    return list(_token_ids(text))


@functools.lru_cache(maxsize=256)
def _token_ids(text: str) -> tuple[int, ...]:
    return tuple(tiktoken_gpt2().encode(text, allowed_special={END_OF_TEXT}))


@functools.lru_cache(maxsize=8)
def seeded_tables(seed: int, emb_dim: int, context_length: int) -> tuple[np.ndarray, np.ndarray]:
    """The book's token table ``[50257, d]`` and positional table ``[T, d]`` for ``seed``."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        token_layer = torch.nn.Embedding(VOCAB_SIZE, emb_dim)
        pos_layer = torch.nn.Embedding(context_length, emb_dim)
    return token_layer.weight.detach().numpy(), pos_layer.weight.detach().numpy()


@dataclass(frozen=True)
class View:
    """Everything that decides the chart (the app's settings)."""

    text: str
    context_length: int = 16
    emb_dim: int = 64
    seed: int = 123
    stride: int | None = None  # None: equal to context_length
    window: int = 0
    scheme: str = "learned"

    @property
    def effective_stride(self) -> int:
        return self.context_length if self.stride is None else self.stride


def window_token_ids(view: View) -> list[int]:
    """The token ids of the view's window: ``[window * stride, window * stride + T)``."""
    ids = token_ids(view.text)
    start = view.window * view.effective_stride
    if view.window and start + view.context_length > len(ids):
        raise ValueError(f"window {view.window} is past the end of {len(ids)} tokens")
    return ids[start : start + view.context_length]


def sinusoidal(num_positions: int, emb_dim: int) -> np.ndarray:
    """``PE[p, 2i] = sin(p / 10000^(2i/d))``, ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``."""
    p = np.arange(num_positions, dtype=np.float64)[:, None]  # [n, 1]
    j = np.arange(emb_dim)
    angles = p / 10000.0 ** ((j - j % 2) / emb_dim)  # [n, d]: pairs (2i, 2i+1) share 2i
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles)).astype(np.float32)


def rope(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The book's Llama notebook: ``cos`` of the angles and ``x`` rotated, for even ``d``."""
    num_positions, head_dim = x.shape
    if head_dim % 2:
        raise ValueError(f"the book's RoPE needs an even dimension, got {head_dim}")
    theta_base = 10_000
    inv_freq = 1.0 / (
        theta_base ** (torch.arange(0, head_dim, 2)[: (head_dim // 2)].float() / head_dim)
    )
    positions = torch.arange(num_positions)
    angles = positions[:, None] * inv_freq[None, :]  # [n, d/2]
    angles = torch.cat([angles, angles], dim=1)  # [n, d]
    cos, sin = torch.cos(angles), torch.sin(angles)
    x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2 :]
    rotated = torch.cat((-x2, x1), dim=-1)
    return cos, (x * cos) + (rotated * sin)


@functools.lru_cache(maxsize=4096)
def panels(view: View) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token embeddings, the position signal and the input embeddings ``[n, d]``, float32.

    Cached: do not modify the arrays.
    """
    ids = window_token_ids(view)
    token_table, pos_table = seeded_tables(view.seed, view.emb_dim, view.context_length)
    token_embeddings = token_table[ids]  # [n, d]
    n = len(ids)
    if view.scheme == "learned":
        signal = pos_table[:n]
        return token_embeddings, signal, token_embeddings + signal
    if view.scheme == "sinusoidal":
        signal = sinusoidal(n, view.emb_dim)
        return token_embeddings, signal, token_embeddings + signal
    if view.scheme == "none":
        return token_embeddings, np.zeros_like(token_embeddings), token_embeddings
    if view.scheme == "rope":
        cos, rotated = rope(torch.from_numpy(token_embeddings))
        return token_embeddings, cos.numpy(), rotated.numpy()
    raise ValueError(f"unknown scheme {view.scheme!r}; known: {SCHEMES}")


def visible_token(token_id: int) -> str:
    """The token's text as a reader expects it in a chip: `` `` -> ``␣``, newline -> ``↵``."""
    text = tiktoken_gpt2().decode_single_token_bytes(token_id).decode("utf-8")
    return text.replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥").replace("\r", "␍")


# --- reading what the app sent -------------------------------------------------------------

_CHIP = re.compile(r":(?:blue|orange)-(?:badge|background)\[(\d+) · ((?:\\.|[^\\\]])*) · (\d+)\]")
_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash before ASCII punctuation
WORD_JOINER = "\u2060"  # the app puts it around ':' and '@' so Markdown links nothing


def decode_array(value: object) -> np.ndarray:
    """A plotly array: a list, or the typed-array spec ``{dtype, bdata, shape}``."""
    if not isinstance(value, dict):
        return np.asarray(value)
    flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    shape = value.get("shape")
    return flat if shape is None else flat.reshape([int(s) for s in str(shape).split(",")])


def chart_problems(spec: str, view: View) -> list[str]:
    """How the figure JSON ``spec`` differs from :func:`panels` of ``view`` (empty: bitwise equal).

    Each heatmap's ``z`` must be float32, hold the columns its ``x`` names, and equal the
    reference's values in those columns bit for bit.
    """
    traces = [t for t in json.loads(spec)["data"] if t.get("type") == "heatmap"]
    want = panels(view)
    if len(traces) != len(want):
        return [f"{len(traces)} heatmaps, expected {len(want)}"]
    problems = []
    for index, (trace, expected) in enumerate(zip(traces, want, strict=True)):
        z = decode_array(trace["z"])
        columns = decode_array(trace["x"]).astype(np.int64)
        if z.dtype != np.float32:
            problems.append(f"panel {index}: z is {z.dtype}, not float32")
            continue
        if len(columns) == 0 or columns.min() < 0 or columns.max() >= view.emb_dim:
            problems.append(f"panel {index}: columns {columns[:5]}… outside 0..{view.emb_dim - 1}")
            continue
        shown = np.ascontiguousarray(expected[:, columns], dtype=np.float32)
        if z.shape != shown.shape:
            problems.append(f"panel {index}: shape {z.shape}, expected {shown.shape}")
        elif not np.array_equal(z.view(np.uint32), shown.view(np.uint32)):
            wrong = int((z.view(np.uint32) != shown.view(np.uint32)).sum())
            problems.append(f"panel {index}: {wrong} of {z.size} values differ from the reference")
    return problems


def chips(markdown: list[str]) -> list[tuple[int, str, int]]:
    """The token chips ``(position, text, token id)`` in the Markdown of a run, un-escaped."""
    found = []
    for body in markdown:
        for position, text, token_id in _CHIP.findall(body):
            plain = _MARKDOWN_ESCAPE.sub(r"\1", text).replace(WORD_JOINER, "")
            found.append((int(position), plain, int(token_id)))
    return found


def chip_problems(markdown: list[str], view: View) -> list[str]:
    """How the chips differ from the window's reference tokens (empty: all equal)."""
    ids = window_token_ids(view)
    want = [(position, visible_token(i), i) for position, i in enumerate(ids)]
    got = chips(markdown)
    if got == want:
        return []
    wrong = [(g, w) for g, w in zip(got, want, strict=False) if g != w]
    return [f"chips: {len(got)} shown, {len(want)} expected; first differences {wrong[:3]}"]
