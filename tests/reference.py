"""The book's reference computations, written without posviz, for the tests and the load test.

Only tiktoken, torch, numpy and formulas: nothing here imports posviz. The tests import it as
``reference`` (pytest puts ``tests/`` on the path); ``benchmarks/loadtest.py`` and the scale-out
tests check every chart a real server sends against it.

* Token ids from tiktoken's own ``gpt2`` encoding: :func:`tiktoken_gpt2` builds it with
  ``tiktoken_ext.openai_public.gpt2()`` (the published URLs, hashes and split pattern), its
  reader served from posviz/data, so tiktoken checks the files' SHA-256 itself.
* Tables as the book makes them (sections 2.7 and 2.8): ``torch.manual_seed(seed)``, then
  ``nn.Embedding(vocab_size, emb_dim)``, then ``nn.Embedding(context_length, emb_dim)``, under
  ``torch.random.fork_rng`` so no caller disturbs (or depends on) the global random state.
* The sinusoidal encoding of Vaswani et al. (2017), cell by cell with ``math``, float64
  rounded once to float32.
* RoPE with the functions of the book's Llama notebook (``precompute_rope_params`` /
  ``compute_rope``, copied verbatim); an odd last dimension stays unrotated, as posviz's
  notes say.
* Cosine similarity with ``torch.nn.functional.cosine_similarity``.
* Repeated tokens, pair by pair: the positions of each repeated id, the largest difference
  between two occurrences' rows (numpy, every pair with ``itertools.combinations``), the
  similarity of each pair, the mean similarity of neighbouring and of distant positions, and
  the character each byte of a run of tokens belongs to (Python's own UTF-8 decoder).
* The book's chapter-3 self-attention: ``SelfAttention_v2`` verbatim, made after
  ``torch.manual_seed(789)`` under ``fork_rng``, and the causal masking of section 3.5.1 as
  the book writes it (RoPE'd queries and keys use :func:`book_rope`).
* The book's first batch of section 2.8 (``BOOK_2_8_INPUTS``), as the book prints it.
* The geometry of a table (:func:`centred_pca`: numpy's SVD of the centred float64 table), the
  mean / smallest / largest cosine of rows ``i`` and ``i + k`` (:func:`cosines_by_distance`,
  one ``np.diagonal`` at a time), RoPE's score of one vector rotated to every pair of
  positions (:func:`rope_scores`, as complex numbers ``x_j + i·x_{j+d/2}`` times
  ``exp(i·p·θⱼ)``), the cos/sin table RoPE carries (:func:`rope_cos_sin`, from the notebook's
  ``precompute_rope_params``), and the error ``nn.Embedding(T, d)`` raises at position ``T``
  (:func:`embedding_error_past_the_end`).
* A view as the app shows it (:class:`View`: window ``w`` covers token ids
  ``[w * stride, w * stride + T)``) and its three panels (:func:`panels`).
* The Attention tab (issue 25, the last section): the book's chapter-3 ``MultiHeadAttention``
  and its ``llama3.py`` ``compute_rope_params`` / ``apply_rope``, ALiBi's reference
  ``get_slopes`` and T5's ``_relative_position_bucket`` (Hugging Face's), each verbatim, and
  T5's seeded ``nn.Embedding(32, H)``.
* RoPE's context extensions (issue 40, the last section): transformers 5.17.0's rope
  functions (``default``, ``linear``, ``dynamic``, ``yarn``, ``llama3``, each body as there),
  bloc97's NTK-aware rule (``ntk``), a fresh ``LlamaRotaryEmbedding``'s first forward
  (:func:`hf_rotary_cos_sin`, dynamic NTK's recomputation included) and the scores after
  ``apply_rotary_pos_emb`` (:func:`hf_rope_scores`); the book's ``compute_rope_params`` above
  takes Llama 3.1's ``freq_config`` as llama3.py does. Checked once against the real
  transformers 5.17.0 (1,296 comparisons, every one bit for bit).
* Reading what the app sent: plotly's typed arrays, a strict un-escaper for the Markdown of
  the token chips, and the differences of a chart or a chip row from the reference
  (:func:`chart_problems`, :func:`chip_problems`).

Where float32 is exact (the same float32 operations in the same order) callers compare with
``torch.equal`` / ``np.array_equal`` (the load test: bit patterns); the few formulas computed in
another precision say so.
"""

from __future__ import annotations

import base64
import functools
import itertools
import math
import os
import re
import string
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public
import torch
import torch.nn.functional as F

DATA = Path(__file__).resolve().parent.parent / "posviz" / "data"  # the vendored GPT-2 files
END_OF_TEXT = "<|endoftext|>"
VOCAB_SIZE = 50257  # GPT-2's vocabulary, written out here rather than imported from posviz
# The schemes whose embeddings panels differ (the load test walks them). ALiBi and T5 add
# nothing to the input: book_window gives them none's panels; they act on the scores.
SCHEMES = ("learned", "sinusoidal", "none", "rope")
ATTENTION_SEED = 789  # the book's torch.manual_seed(789) before SelfAttention_v2
# Section 2.8: the first batch of the data loader over The Verdict (batch_size=8,
# max_length=4, stride=4), as the book prints it.
BOOK_2_8_INPUTS = [
    [40, 367, 2885, 1464],
    [1807, 3619, 402, 271],
    [10899, 2138, 257, 7026],
    [15632, 438, 2016, 257],
    [922, 5891, 1576, 438],
    [568, 340, 373, 645],
    [1049, 5975, 284, 502],
    [284, 3285, 326, 11],
]
WORD_JOINER = "\u2060"  # posviz puts it after ':' and before '@' so Markdown links nothing

__all__ = [
    "ATTENTION_SEED",
    "BOOK_2_8_INPUTS",
    "DATA",
    "END_OF_TEXT",
    "HF_ROPE_INIT_FUNCTIONS",
    "SCHEMES",
    "VOCAB_SIZE",
    "WORD_JOINER",
    "HFRopeConfig",
    "MultiHeadAttention",
    "SelfAttention_v2",
    "View",
    "apply_rope",
    "apply_rotary_pos_emb",
    "book_attention",
    "book_causal_attention",
    "book_head_attention",
    "book_layers",
    "book_multi_head",
    "book_rope",
    "book_tables",
    "book_window",
    "byte_characters",
    "centred_pca",
    "character_tokens",
    "chart_problems",
    "chip_counts",
    "chip_problems",
    "chips",
    "compute_rope",
    "compute_rope_params",
    "cosine_similarity",
    "cosines_by_distance",
    "decode_array",
    "embedding_error_past_the_end",
    "get_slopes",
    "hf_compute_default_rope_parameters",
    "hf_compute_dynamic_ntk_parameters",
    "hf_compute_linear_scaling_rope_parameters",
    "hf_compute_llama3_parameters",
    "hf_compute_yarn_parameters",
    "hf_rope_config",
    "hf_rope_scores",
    "hf_rotary_cos_sin",
    "hf_wavelengths",
    "largest_row_difference",
    "neighbour_means",
    "ntk_aware_rope_parameters",
    "panels",
    "precompute_rope_params",
    "random_rows",
    "relative_position_bucket",
    "repeated_groups",
    "rope_cos_sin",
    "rope_scores",
    "rotate_half",
    "same_up_to_sign",
    "sinusoidal",
    "t5_relative_attention_bias",
    "tiktoken_gpt2",
    "token_ids",
    "unescape_markdown",
    "visible_token",
    "window_token_ids",
]


# --- token ids: tiktoken's own gpt2 encoding -------------------------------------------------


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


def visible_token(token_id: int) -> str:
    """The token's text as a reader expects it in a chip: `` `` -> ``␣``, newline -> ``↵``."""
    text = tiktoken_gpt2().decode_single_token_bytes(token_id).decode("utf-8")
    return text.replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥").replace("\r", "␍")


# --- the book's tables -----------------------------------------------------------------------


def book_layers(
    seed: int, emb_dim: int, context_length: int, *, vocab_size: int = VOCAB_SIZE
) -> tuple[torch.nn.Embedding, torch.nn.Embedding]:
    """Sections 2.7-2.8: ``token_embedding_layer`` then ``pos_embedding_layer``."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        token_embedding_layer = torch.nn.Embedding(vocab_size, emb_dim)
        pos_embedding_layer = torch.nn.Embedding(context_length, emb_dim)
    return token_embedding_layer, pos_embedding_layer


@functools.lru_cache(maxsize=8)
def book_tables(
    seed: int, emb_dim: int, context_length: int, *, vocab_size: int = VOCAB_SIZE
) -> tuple[torch.Tensor, torch.Tensor]:
    """The weights of :func:`book_layers`: ``[vocab_size, d]`` and ``[T, d]`` (cached: the
    token table takes a quarter of a second at ``d = 768``; treat them as read-only)."""
    token_layer, pos_layer = book_layers(seed, emb_dim, context_length, vocab_size=vocab_size)
    return token_layer.weight.detach(), pos_layer.weight.detach()


# --- positional schemes ----------------------------------------------------------------------


def sinusoidal(num_positions: int, emb_dim: int) -> torch.Tensor:
    """``PE[p, 2i] = sin(p / 10000^(2i/d))``, ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``, each
    cell with ``math`` in float64, rounded to float32: ``[num_positions, emb_dim]``."""
    table = [
        [
            (math.sin if j % 2 == 0 else math.cos)(p / 10000 ** ((j - j % 2) / emb_dim))
            for j in range(emb_dim)
        ]
        for p in range(num_positions)
    ]
    return torch.tensor(table, dtype=torch.float64).reshape(num_positions, emb_dim).float()


# From the book's notebook "Converting GPT to Llama 2" (LLMs-from-scratch, ch05/07_gpt_to_llama).
def precompute_rope_params(
    head_dim: int, theta_base: float = 10_000, context_length: int = 4096
) -> tuple[torch.Tensor, torch.Tensor]:
    if head_dim % 2 != 0:
        raise ValueError("Embedding dimension must be even")
    inv_freq = 1.0 / (
        theta_base ** (torch.arange(0, head_dim, 2)[: (head_dim // 2)].float() / head_dim)
    )
    positions = torch.arange(context_length)
    angles = positions[:, None] * inv_freq[None, :]  # Shape: (context_length, head_dim // 2)
    angles = torch.cat([angles, angles], dim=1)  # Shape: (context_length, head_dim)
    cos = torch.cos(angles)
    sin = torch.sin(angles)
    return cos, sin


def compute_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # x: (batch_size, num_heads, seq_len, head_dim)
    _batch_size, _num_heads, seq_len, head_dim = x.shape
    if head_dim % 2 != 0:
        raise ValueError("Head dimension must be even")
    x1 = x[..., : head_dim // 2]  # First half
    x2 = x[..., head_dim // 2 :]  # Second half
    cos = cos[:seq_len, :].unsqueeze(0).unsqueeze(0)  # Shape: (1, 1, seq_len, head_dim)
    sin = sin[:seq_len, :].unsqueeze(0).unsqueeze(0)
    rotated = torch.cat((-x2, x1), dim=-1)
    x_rotated = (x * cos) + (rotated * sin)
    return x_rotated.to(dtype=x.dtype)


def book_rope(x: torch.Tensor, theta_base: float = 10_000) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos`` of the angles and the rows of ``x`` ``[n, d]`` rotated by their position, with
    the notebook's functions. For an odd ``d`` the last dimension is not rotated (cos = 1)."""
    n, d = x.shape
    even = d - d % 2
    cos, sin = (
        precompute_rope_params(even, theta_base, context_length=n) if even else (x[:, :0],) * 2
    )
    rotated = compute_rope(x[None, None, :, :even], cos, sin)[0, 0] if even else x[:, :0]
    rest = x[:, even:]
    return torch.cat([cos, torch.ones_like(rest)], dim=1), torch.cat([rotated, rest], dim=1)


def book_window(
    scheme: str,
    *,
    seed: int,
    emb_dim: int,
    context_length: int,
    token_ids: Sequence[int],
    theta_base: float = 10_000,
) -> list[torch.Tensor]:
    """``[token, position signal, input]`` embeddings of one window, each ``[n, d]`` float32."""
    token_table, pos_table = book_tables(seed, emb_dim, context_length)
    token_embeddings = token_table[list(token_ids)]  # [n, d]
    n = len(token_ids)
    if scheme == "learned":
        pos_embeddings = pos_table[:n]  # [n, d]
        return [token_embeddings, pos_embeddings, token_embeddings + pos_embeddings]
    if scheme == "sinusoidal":
        pos_embeddings = sinusoidal(n, emb_dim)
        return [token_embeddings, pos_embeddings, token_embeddings + pos_embeddings]
    if scheme in ("none", "alibi", "t5"):  # ALiBi and T5 add nothing to the input
        return [token_embeddings, torch.zeros(n, emb_dim), token_embeddings]
    if scheme == "rope":
        cos, rotated = book_rope(token_embeddings, theta_base)
        return [token_embeddings, cos, rotated]
    raise ValueError(f"unknown scheme {scheme!r}")


def cosine_similarity(matrix: torch.Tensor) -> torch.Tensor:
    """``[n, n]`` cosine similarity of the rows of ``matrix`` ``[n, d]``, in float64, by
    ``torch.nn.functional.cosine_similarity`` (a zero row gives 0)."""
    rows = matrix.double()
    return F.cosine_similarity(rows[:, None, :], rows[None, :, :], dim=-1)


# --- the geometry of a positional table, and similarity against distance ---------------------


def centred_pca(table: np.ndarray | torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """numpy's SVD of the table ``[T, d]`` in float64, centred (the mean row subtracted): its
    rows on the first three principal components ``[T, min(3, T, d)]`` (signs as numpy gives
    them: compare with :func:`same_up_to_sign`) and all ``min(T, d)`` singular values."""
    x = np.asarray(table, dtype=np.float64)
    centred = x - x.mean(axis=0)
    _, singular_values, vh = np.linalg.svd(centred, full_matrices=False)
    return centred @ vh[:3].T, singular_values


def same_up_to_sign(got: np.ndarray, want: np.ndarray, atol: float) -> bool:
    """Whether each column of ``got`` equals the same column of ``want`` or its negative."""
    return all(
        np.allclose(got[:, j], want[:, j], atol=atol)
        or np.allclose(got[:, j], -want[:, j], atol=atol)
        for j in range(want.shape[1])
    )


def cosines_by_distance(table: np.ndarray | torch.Tensor) -> tuple[np.ndarray, ...]:
    """For ``k = 0 … P-1``: the mean, smallest and largest cosine of rows ``i`` and ``i + k``
    of ``table`` ``[P, d]`` over ``i``, in float64 (a zero row has cosine 0 with every row)."""
    x = np.asarray(table, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    unit = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
    cosines = unit @ unit.T
    diagonals = [np.diagonal(cosines, k) for k in range(len(x))]
    return tuple(np.array([f(d) for d in diagonals]) for f in (np.mean, np.min, np.max))


def rope_scores(
    token_vectors: np.ndarray | torch.Tensor, num_positions: int, theta_base: float = 10000.0
) -> np.ndarray:
    """``[P, P]``: the cosine of one token vector rotated to position ``i`` and to position
    ``j``, averaged over the rows of ``token_vectors`` ``[n, d]``. Each pair of dimensions
    ``(m, m + d/2)`` is the complex number ``x_m + i·x_{m+d/2}``, rotated by
    ``exp(i·p·θ_m)`` with ``θ_m = base^(-2m/(2·(d//2)))`` (``theta_base``, 10,000 unless
    given); an odd last dimension is not rotated."""
    x = np.asarray(token_vectors, dtype=np.float64)
    half = x.shape[1] // 2
    theta = theta_base ** (-2 * np.arange(half) / (2 * half))
    turns = np.exp(1j * np.arange(num_positions)[:, None] * theta[None, :])  # [P, d/2]
    scores = np.zeros((num_positions, num_positions))
    for row in x / np.linalg.norm(x, axis=1, keepdims=True):
        pairs = row[:half] + 1j * row[half : 2 * half]
        rotated = pairs[None, :] * turns  # [P, d/2]: the vector at every position
        scores += (np.conj(rotated) @ rotated.T).real + float(row[2 * half :] @ row[2 * half :])
    return scores / len(x)


def rope_cos_sin(num_positions: int, emb_dim: int, theta_base: float = 10_000) -> torch.Tensor:
    """``[P, d]``: ``cos(p·θⱼ)`` for the ``d // 2`` pairs, then ``sin(p·θⱼ)``, then 1 for an odd
    last dimension, with the notebook's ``precompute_rope_params`` (float32)."""
    even = emb_dim - emb_dim % 2
    cos, sin = precompute_rope_params(even, theta_base, context_length=num_positions)
    half = even // 2
    ones = torch.ones(num_positions, emb_dim % 2)
    return torch.cat([cos[:, :half], sin[:, :half], ones], dim=1)


def embedding_error_past_the_end(context_length: int, emb_dim: int) -> str:
    """``"IndexError: ..."``: what ``nn.Embedding(context_length, emb_dim)`` raises when asked
    for position ``context_length`` (made under ``fork_rng``)."""
    with torch.random.fork_rng(devices=[]):
        layer = torch.nn.Embedding(context_length, emb_dim)
    try:
        layer(torch.tensor([context_length]))
    except IndexError as error:
        return f"{type(error).__name__}: {error}"
    raise AssertionError("nn.Embedding looked up a row it does not have")


# --- repeated tokens, pair by pair ----------------------------------------------------------


def repeated_groups(token_ids: Sequence[int]) -> dict[int, list[int]]:
    """``{token id: positions}`` of every id occurring more than once (plain loop)."""
    groups: dict[int, list[int]] = {}
    for position, token_id in enumerate(token_ids):
        groups[token_id] = [*groups.get(token_id, []), position]
    return {token_id: found for token_id, found in groups.items() if len(found) > 1}


def largest_row_difference(rows: np.ndarray) -> float:
    """max over every pair of rows (``itertools.combinations``) of max |row_p - row_q|, in
    float64; 0.0 for a single row."""
    values = np.asarray(rows, dtype=np.float64)
    return max(
        (float(np.abs(a - b).max()) for a, b in itertools.combinations(values, 2)), default=0.0
    )


def neighbour_means(similarity: np.ndarray) -> tuple[float, float | None]:
    """Mean of ``similarity[p, p + 1]``, and of ``similarity[p, q]`` for ``q - p >= n // 2``
    (at least 2; ``None`` below 4 positions), each pair once, in float64."""
    n = len(similarity)
    far = max(2, n // 2)
    adjacent = float(np.mean([float(similarity[p, p + 1]) for p in range(n - 1)]))
    distant = [float(similarity[p, q]) for p in range(n) for q in range(p + far, n)]
    return adjacent, (float(np.mean(distant)) if n >= 4 and distant else None)


def byte_characters(tokens: Sequence[bytes]) -> list[list[tuple[str, int, int]]]:
    """For each token: ``(character, part, parts)`` of each character its bytes belong to,
    ``parts`` being how many tokens the character spans (1: whole). Decoded with Python's
    UTF-8 decoder one character at a time from the run's bytes; a byte that starts no
    character is ``("", 1, 1)``."""
    data = b"".join(tokens)
    owner = [index for index, token in enumerate(tokens) for _ in token]  # token of each byte
    result: list[list[tuple[str, int, int]]] = [[] for _ in tokens]
    start = 0
    while start < len(data):
        for length in (1, 2, 3, 4):
            try:
                char = data[start : start + length].decode("utf-8")
            except UnicodeDecodeError:
                continue
            break
        else:
            char, length = "", 1
        spanned = sorted(set(owner[start : start + length]))
        for part, index in enumerate(spanned, start=1):
            result[index].append((char, part, len(spanned)))
        start += length
    return result


def character_tokens(text: str) -> list[str]:
    """Each token of ``text`` (tiktoken's ids) as the chips name it, read in the whole text:
    whitespace as a stand-in, a character split over several tokens named in each with its
    part (``"🍕 (1 of 3)"``), parts of two characters joined by ``" + "``. Valid text only
    (every byte belongs to a character)."""
    encoding = tiktoken_gpt2()
    tokens = [encoding.decode_single_token_bytes(i) for i in token_ids(text)]
    labels = []
    for characters in byte_characters(tokens):
        parts: list[str] = []
        for char, part, total in characters:
            if not char:
                raise ValueError(f"{text!r} has bytes that form no character")
            shown = char.replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥")
            if total > 1:
                parts.append(f"{shown} ({part} of {total})")
            elif parts and not parts[-1].endswith(")"):
                parts[-1] += shown  # whole characters of one token read as one word
            else:
                parts.append(shown)
        labels.append(" + ".join(parts))
    return labels


# --- a view as the app shows it -------------------------------------------------------------


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
        """The stride the app uses: ``stride``, or ``context_length`` when it is None."""
        return self.context_length if self.stride is None else self.stride


def window_token_ids(view: View) -> list[int]:
    """The token ids of the view's window: ``[window * stride, window * stride + T)``."""
    ids = token_ids(view.text)
    start = view.window * view.effective_stride
    if view.window and start + view.context_length > len(ids):
        raise ValueError(f"window {view.window} is past the end of {len(ids)} tokens")
    return ids[start : start + view.context_length]


@functools.lru_cache(maxsize=4096)
def panels(view: View) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`book_window` of the view, as numpy: token embeddings, the position signal and the
    input embeddings, each ``[n, d]`` float32.

    Cached (the load test asks for each view many times): do not modify the arrays.
    """
    token_embeddings, signal, input_embeddings = book_window(
        view.scheme,
        seed=view.seed,
        emb_dim=view.emb_dim,
        context_length=view.context_length,
        token_ids=window_token_ids(view),
    )
    return token_embeddings.numpy(), signal.numpy(), input_embeddings.numpy()


def random_rows(n: int, d: int, seed: int = 0) -> torch.Tensor:
    """``[n, d]`` standard normal rows from their own generator (the global one is untouched)."""
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed))


# --- reading what the app sent ---------------------------------------------------------------

# A chip: position · token · id, and for a token repeated in the window "· ×N" (orange).
_CHIP = re.compile(
    r":(blue|orange)-(?:badge|background)\[(\d+) · ((?:\\.|[^\\\]])*) · (\d+)(?: · ×(\d+))?\]"
)


def decode_array(value: object) -> np.ndarray:
    """A plotly array: a list, or the typed-array spec ``{dtype, bdata, shape}``."""
    if not isinstance(value, dict):
        return np.asarray(value)
    flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    shape = value.get("shape")
    return flat if shape is None else flat.reshape([int(s) for s in str(shape).split(",")])


def unescape_markdown(text: str) -> str:
    """Undo Markdown backslash escapes and drop the invisible word joiners posviz adds to break
    bare links; ``ValueError`` if any ASCII punctuation was left unescaped."""
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 >= len(text) or text[i + 1] not in string.punctuation:
                raise ValueError(f"a backslash escapes no punctuation at {i} in {text!r}")
            out.append(text[i + 1])
            i += 2
        else:
            if char in string.punctuation:
                raise ValueError(f"unescaped {char!r} in {text!r}")
            out.append(char)
            i += 1
    return "".join(out).replace(WORD_JOINER, "")


def chart_problems(figure: dict[str, Any], view: View) -> list[str]:
    """How ``figure`` (as the app sent it: tests/charts.py, devtools.client) differs from
    :func:`panels` of ``view`` (empty: bitwise equal).

    Each heatmap's ``z`` must be float32, hold the columns its ``x`` names, and equal the
    reference's values in those columns bit for bit.
    """
    traces = [t for t in figure["data"] if t.get("type") == "heatmap"]
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
    """The token chips ``(position, text, token id)`` in the Markdown of a run, un-escaped by
    :func:`unescape_markdown` (``ValueError`` on punctuation left unescaped)."""
    return [
        (int(position), unescape_markdown(text), int(token_id))
        for body in markdown
        for _, position, text, token_id, _ in _CHIP.findall(body)
    ]


def chip_counts(markdown: list[str]) -> list[tuple[str, int | None]]:
    """``(colour, N)`` of each chip: N is its "×N" (``None``: the chip says no count)."""
    return [
        (colour, int(count) if count else None)
        for body in markdown
        for colour, _, _, _, count in _CHIP.findall(body)
    ]


def chip_problems(markdown: list[str], view: View) -> list[str]:
    """How the chips differ from the window's reference tokens (empty: all equal)."""
    ids = window_token_ids(view)
    want = [(position, visible_token(i), i) for position, i in enumerate(ids)]
    try:
        got = chips(markdown)
    except ValueError as error:
        return [f"chips: {error}"]
    if got != want:
        wrong = [(g, w) for g, w in zip(got, want, strict=False) if g != w]
        return [f"chips: {len(got)} shown, {len(want)} expected; first differences {wrong[:3]}"]
    occurs = {i: ids.count(i) for i in ids}
    counts = [("orange", occurs[i]) if occurs[i] > 1 else ("blue", None) for i in ids]
    if chip_counts(markdown) != counts:
        return [f"chips: colours and counts {chip_counts(markdown)[:5]}, expected {counts[:5]}"]
    return []


# --- the book's self-attention (chapter 3) ---------------------------------------------------


class SelfAttention_v2(torch.nn.Module):  # the book's name
    """Chapter 3, section 3.4.2 of the book, verbatim."""

    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False) -> None:
        super().__init__()
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = attn_weights @ values
        return context_vec


def book_attention(d_in: int, d_out: int, seed: int = ATTENTION_SEED) -> SelfAttention_v2:
    """``torch.manual_seed(seed); sa_v2 = SelfAttention_v2(d_in, d_out)``, under fork_rng."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return SelfAttention_v2(d_in, d_out)


def book_causal_attention(module: SelfAttention_v2, x: torch.Tensor) -> torch.Tensor:
    """Section 3.5.1: the scores above the diagonal masked with -inf, then softmax."""
    keys, queries, values = module.W_key(x), module.W_query(x), module.W_value(x)
    attn_scores = queries @ keys.T
    context_length = attn_scores.shape[0]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    attn_weights = torch.softmax(masked / keys.shape[-1] ** 0.5, dim=-1)
    return attn_weights @ values


# --- the Attention tab (issue 25): the book's multi-head attention, ALiBi, T5 ----------------
# Each written from its original: the book's chapter-3 MultiHeadAttention and its llama3.py
# RoPE (rasbt/LLMs-from-scratch, pkg/llms_from_scratch), ALiBi's get_slopes
# (ofirpress/attention_with_linear_biases, fairseq/models/transformer.py) and T5's
# _relative_position_bucket (huggingface/transformers, models/t5/modeling_t5.py).


class MultiHeadAttention(torch.nn.Module):  # the book's chapter 3, section 3.6.2, verbatim
    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
    ) -> None:
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by n_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = torch.nn.Linear(d_out, d_out)
        self.dropout = torch.nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )


def book_multi_head(
    d: int, num_heads: int, context_length: int, seed: int = ATTENTION_SEED
) -> MultiHeadAttention:
    """``torch.manual_seed(seed); MultiHeadAttention(d, d, ...)`` under fork_rng, in float64:
    its W_query, W_key, W_value are made first and in that order, as SelfAttention_v2's."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MultiHeadAttention(d, d, context_length, 0.0, num_heads).double()


def compute_rope_params(
    head_dim: int,
    theta_base: float = 10_000,
    context_length: int = 4096,
    freq_config: dict[str, float] | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:  # llama3.py, verbatim (Llama 3.1's freq_config too)
    assert head_dim % 2 == 0, "Embedding dimension must be even"

    # Compute the inverse frequencies
    inv_freq = 1.0 / (
        theta_base
        ** (torch.arange(0, head_dim, 2, dtype=dtype)[: (head_dim // 2)].float() / head_dim)
    )

    # Frequency adjustments
    if freq_config is not None:
        low_freq_wavelen = freq_config["original_context_length"] / freq_config["low_freq_factor"]
        high_freq_wavelen = freq_config["original_context_length"] / freq_config["high_freq_factor"]

        wavelen = 2 * torch.pi / inv_freq

        inv_freq_llama = torch.where(
            wavelen > low_freq_wavelen, inv_freq / freq_config["factor"], inv_freq
        )

        smooth_factor = (
            freq_config["original_context_length"] / wavelen - freq_config["low_freq_factor"]
        ) / (freq_config["high_freq_factor"] - freq_config["low_freq_factor"])

        smoothed_inv_freq = (1 - smooth_factor) * (
            inv_freq / freq_config["factor"]
        ) + smooth_factor * inv_freq

        is_medium_freq = (wavelen <= low_freq_wavelen) & (wavelen >= high_freq_wavelen)
        inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
        inv_freq = inv_freq_llama

    # Generate position indices
    positions = torch.arange(context_length, dtype=dtype)
    angles = positions[:, None] * inv_freq[None, :]  # Shape: (context_length, head_dim // 2)
    angles = torch.cat([angles, angles], dim=1)  # Shape: (context_length, head_dim)
    cos = torch.cos(angles)
    sin = torch.sin(angles)
    return cos, sin


# llama3.py's apply_rope is the notebook's compute_rope above, line for line.
apply_rope = compute_rope


def get_slopes(n: int) -> list[float]:  # ALiBi's reference, verbatim
    def get_slopes_power_of_2(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def relative_position_bucket(
    relative_position: torch.Tensor,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> torch.Tensor:  # T5Attention._relative_position_bucket (Hugging Face), verbatim
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets  # type: ignore[return-value]


def t5_relative_attention_bias(seed: int, num_heads: int) -> torch.Tensor:
    """T5's ``relative_attention_bias = nn.Embedding(32, num_heads)`` made right after
    ``torch.manual_seed(seed)`` (under fork_rng): its weight ``[32, H]``."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return torch.nn.Embedding(32, num_heads).weight.detach()


def book_head_attention(
    scheme: str,
    *,
    seed: int,
    emb_dim: int,
    context_length: int,
    token_ids: Sequence[int],
    num_heads: int,
    head: int,
    start: int = 0,
    theta_base: float = 10_000,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Head ``head``'s scaled scores and attention weights (``[n, n]`` float64, causal) for the
    window at positions ``start … start+n−1``, the book's way: ``MultiHeadAttention.forward``'s
    steps up to its ``attn_weights`` (the W_query / W_key projections, ``view`` and
    ``transpose`` into heads, the causal mask of its buffer, ``softmax(… / head_dim**0.5)``),
    with the positions of ``scheme``: the learned table's rows or the sinusoidal encoding added
    to the token rows (float32, as §2.8); RoPE by llama3.py's ``compute_rope_params`` /
    ``apply_rope`` on the queries and keys; ALiBi's ``-m·(i − j)`` or T5's
    ``E[bucket(j − i)]`` added to the scaled scores. Raises ``IndexError`` (torch's own) for
    learned rows past the table."""
    token_layer, pos_layer = book_layers(seed, emb_dim, context_length)
    n = len(token_ids)
    positions = torch.arange(start, start + n)
    with torch.no_grad():
        x = token_layer(torch.tensor(list(token_ids)))  # [n, d] float32
        if scheme == "learned":
            x = x + pos_layer(positions)
        elif scheme == "sinusoidal":
            x = x + sinusoidal(start + n, emb_dim)[start:]
        module = book_multi_head(emb_dim, num_heads, context_length=start + n)
        x = x.double()[None]  # [1, n, d]
        b, num_tokens, _d_in = x.shape
        keys = module.W_key(x).view(b, num_tokens, module.num_heads, module.head_dim)
        queries = module.W_query(x).view(b, num_tokens, module.num_heads, module.head_dim)
        keys, queries = keys.transpose(1, 2), queries.transpose(1, 2)  # [1, H, n, dh]
        if scheme == "rope":
            cos, sin = compute_rope_params(module.head_dim, theta_base, context_length=start + n)
            keys = apply_rope(keys, cos[start:], sin[start:])
            queries = apply_rope(queries, cos[start:], sin[start:])
        attn_scores = queries @ keys.transpose(2, 3) / keys.shape[-1] ** 0.5  # [1, H, n, n]
        relative = positions[None, :] - positions[:, None]  # j - i
        if scheme == "alibi":
            slopes = torch.tensor(get_slopes(num_heads), dtype=torch.float64)
            attn_scores = attn_scores + slopes[:, None, None] * (-relative.abs()).double()
        elif scheme == "t5":
            table = t5_relative_attention_bias(seed, num_heads).double()  # [32, H]
            buckets = relative_position_bucket(relative, bidirectional=False)
            attn_scores = attn_scores + table[buckets].permute(2, 0, 1)
        mask_bool = module.mask.bool()[:num_tokens, :num_tokens]
        attn_weights = torch.softmax(attn_scores.masked_fill(mask_bool, -torch.inf), dim=-1)
    return attn_scores[0, head], attn_weights[0, head]


# --- the Training view (issue 26): the book's GPT on The Verdict -----------------------------

VERDICT = DATA / "the-verdict.txt"  # the book repository's file, shipped with posviz


def book_gpt_init(
    *, vocab_size: int, context_length: int, emb_dim: int, n_layers: int, seed: int
) -> dict[str, torch.Tensor]:
    """The weights ``torch.manual_seed(seed); GPTModel(cfg)`` gives in the book (chapter 4),
    by name, made layer by layer in the order the book's ``__init__`` methods make them
    (``qkv_bias`` False), under ``fork_rng``."""
    state: dict[str, torch.Tensor] = {}

    def linear(name: str, d_in: int, d_out: int, bias: bool = True) -> None:
        layer = torch.nn.Linear(d_in, d_out, bias=bias)
        state[f"{name}.weight"] = layer.weight.detach()
        if bias:
            state[f"{name}.bias"] = layer.bias.detach()

    def norm(name: str) -> None:
        state[f"{name}.scale"] = torch.ones(emb_dim)
        state[f"{name}.shift"] = torch.zeros(emb_dim)

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        state["tok_emb.weight"] = torch.nn.Embedding(vocab_size, emb_dim).weight.detach()
        state["pos_emb.weight"] = torch.nn.Embedding(context_length, emb_dim).weight.detach()
        for block in range(n_layers):
            prefix = f"trf_blocks.{block}"
            for name in ("W_query", "W_key", "W_value"):
                linear(f"{prefix}.att.{name}", emb_dim, emb_dim, bias=False)
            linear(f"{prefix}.att.out_proj", emb_dim, emb_dim)
            linear(f"{prefix}.ff.layers.0", emb_dim, 4 * emb_dim)
            linear(f"{prefix}.ff.layers.2", 4 * emb_dim, emb_dim)
            norm(f"{prefix}.norm1")
            norm(f"{prefix}.norm2")
        norm("final_norm")
        linear("out_head", emb_dim, vocab_size, bias=False)
    return state


def gpt_logits(
    state: dict[str, torch.Tensor], token_ids: torch.Tensor, *, n_heads: int
) -> torch.Tensor:
    """Chapter 4's forward pass without dropout, written with ``torch.nn.functional`` from the
    weights by name: ``F.layer_norm`` (eps 1e-5), ``F.scaled_dot_product_attention`` with a
    causal mask, ``F.gelu(approximate="tanh")``. ``[b, n]`` token ids to ``[b, n, V]``."""
    return scheme_gpt_logits(state, token_ids, n_heads=n_heads, scheme="learned")


# --- train short, test long (issue 41): the book's GPT with each scheme inside ---------------


def scheme_gpt_logits(
    state: dict[str, torch.Tensor],
    token_ids: torch.Tensor,
    *,
    n_heads: int,
    scheme: str,
    rope: HFRopeConfig | None = None,
) -> torch.Tensor:
    """:func:`gpt_logits` with ``scheme``'s positions, each from its original: the learned
    rows (``pos_emb.weight``, torch's ``IndexError`` past them) or the sinusoidal encoding
    added to the token rows; RoPE by llama3.py's ``compute_rope_params`` / ``apply_rope`` on
    every head's queries and keys (``rope``: transformers' cos and sin of that config instead,
    YaRN's attention factor in them); ALiBi's ``get_slopes`` and ``-m·(i − j)``, or T5's
    ``bias_table[relative_position_bucket(j − i)]`` (unidirectional), added to the scaled
    scores, as ``F.scaled_dot_product_attention``'s float mask with ``-inf`` above the
    diagonal. ``[b, n]`` token ids to ``[b, n, V]``, in the weights' dtype."""
    num_tokens = token_ids.shape[1]
    dtype = state["tok_emb.weight"].dtype
    x = F.embedding(token_ids, state["tok_emb.weight"])
    positions = torch.arange(num_tokens)
    if scheme == "learned":
        x = x + F.embedding(positions, state["pos_emb.weight"])
    elif scheme == "sinusoidal":
        x = x + sinusoidal(num_tokens, x.shape[-1]).to(dtype)
    emb_dim = x.shape[-1]
    head_dim = emb_dim // n_heads
    relative = positions[None, :] - positions[:, None]  # [n, n]: j - i
    mask = torch.zeros(n_heads, num_tokens, num_tokens, dtype=dtype)
    if scheme == "alibi":
        slopes = torch.tensor(get_slopes(n_heads), dtype=torch.float64)
        mask = (slopes[:, None, None] * (-relative.abs()).double()).to(dtype)
    elif scheme == "t5":
        buckets = relative_position_bucket(relative, bidirectional=False)
        mask = state["bias_table"][buckets].permute(2, 0, 1)  # [H, n, n]
    mask = mask.masked_fill(relative > 0, -torch.inf)  # causal
    if rope is not None:
        cos, sin = hf_rotary_cos_sin(rope, positions)  # [n, head_dim], scaled
    else:
        cos, sin = compute_rope_params(head_dim, context_length=num_tokens)

    def norm(name: str, value: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(value, (emb_dim,), state[f"{name}.scale"], state[f"{name}.shift"], 1e-5)

    def heads(value: torch.Tensor) -> torch.Tensor:  # [b, n, d] -> [b, heads, n, d / heads]
        return value.view(value.shape[0], num_tokens, n_heads, -1).transpose(1, 2)

    blocks = sorted({int(key.split(".")[1]) for key in state if key.startswith("trf_blocks.")})
    for block in blocks:
        p = f"trf_blocks.{block}."
        h = norm(p + "norm1", x)
        q, k, v = (
            heads(F.linear(h, state[f"{p}att.{w}.weight"])) for w in ("W_query", "W_key", "W_value")
        )
        if scheme == "rope":
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        attended = attended.transpose(1, 2).reshape(x.shape)
        x = x + F.linear(attended, state[p + "att.out_proj.weight"], state[p + "att.out_proj.bias"])
        h = F.linear(
            norm(p + "norm2", x), state[p + "ff.layers.0.weight"], state[p + "ff.layers.0.bias"]
        )
        x = x + F.linear(
            F.gelu(h, approximate="tanh"),
            state[p + "ff.layers.2.weight"],
            state[p + "ff.layers.2.bias"],
        )
    return F.linear(norm("final_norm", x), state["out_head.weight"])


def sliding_windows(
    token_ids: Sequence[int], max_length: int, stride: int
) -> list[tuple[list[int], list[int]]]:
    """The book's windows (section 2.6): inputs ``ids[i : i + L]`` and targets one later,
    for ``i = 0, stride, …`` while ``i < len(ids) - L``, as plain lists."""
    return [
        (list(token_ids[i : i + max_length]), list(token_ids[i + 1 : i + max_length + 1]))
        for i in range(0, len(token_ids) - max_length, stride)
    ]


def mean_cosine_at(table: np.ndarray | torch.Tensor, k: int) -> float:
    """The mean over ``i`` of ``cos(row i, row i + k)``, each pair with ``np.dot`` in float64."""
    x = np.asarray(table, dtype=np.float64)
    values = [
        float(np.dot(x[i], x[i + k]) / (np.linalg.norm(x[i]) * np.linalg.norm(x[i + k])))
        for i in range(len(x) - k)
    ]
    return float(np.mean(values))


# --- issue 24: what a figure shows, read from its JSON (the views' sentences, helper B) --------
# Each helper reads a figure as plotly JSON (a dict: `go.Figure.to_plotly_json()` or what the
# page sent), never posviz's own decisions, so a sentence can be checked against the figure.

_TAG = re.compile(r"<[^>]+>")


def tick_text(label: str) -> str:
    """A tick label as a reader reads it: tags dropped, entities unescaped, the leading
    ``"position · "`` dropped (``"<b>4 · &lt;b&gt;</b>"`` -> ``"<b>"``)."""
    import html

    text = html.unescape(_TAG.sub("", label))
    return text.split(" · ", 1)[1] if " · " in text else text


def axis_rows(figure: dict[str, Any], yaxis: str = "yaxis") -> dict[int, str]:
    """``{row: tick text}`` of the labelled rows of the position axis ``yaxis``: each tick's
    category is found among the y values of a heatmap on that axis."""
    layout = figure["layout"]
    ref = "y" + yaxis.removeprefix("yaxis")
    trace = next(t for t in figure["data"] if t.get("yaxis", "y") == ref)
    categories = list(decode_array(trace["y"]))
    axis = layout[yaxis]
    return {
        categories.index(value): tick_text(text)
        for value, text in zip(axis["tickvals"], axis["ticktext"], strict=True)
    }


def _coloured(shapes: list[dict[str, Any]], xref: str) -> list[dict[str, Any]]:
    """The coloured outlines on ``xref`` (each is drawn over a white casing: skipped)."""
    return [s for s in shapes if s.get("xref") == xref and s["line"]["color"].lower() != "#ffffff"]


def _runs(shapes: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The outlines, one list per marked token: posviz draws a token's outlines one after the
    other, and two tokens drawn one after the other never share a colour."""
    runs: list[list[dict[str, Any]]] = []
    for shape in shapes:
        if not runs or runs[-1][0]["line"]["color"] != shape["line"]["color"]:
            runs.append([])
        runs[-1].append(shape)
    return runs


def outlined_rows(figure: dict[str, Any], x: str = "x") -> list[tuple[tuple[int, ...], str]]:
    """The rows outlined across the embeddings panel on axis ``x`` (``"x"``, ``"x3"``): per
    marked token, in the order they are drawn, its rows and the line's dash."""
    shapes = _coloured(figure["layout"].get("shapes", []), f"{x} domain")
    return [
        (tuple(sorted(round(s["y0"] + 0.5) for s in run)), run[0]["line"]["dash"])
        for run in _runs(shapes)
    ]


def outlined_cells(figure: dict[str, Any], x: str = "x") -> list[tuple[tuple[int, ...], str]]:
    """The similarity panel on axis ``x``: per marked token, in the order they are drawn, the
    positions whose pairs of cells are outlined, and the line's dash."""
    shapes = _coloured(figure["layout"].get("shapes", []), x)
    return [
        (
            tuple(
                sorted({round(s["y0"] + 0.5) for s in run} | {round(s["x0"] + 0.5) for s in run})
            ),
            run[0]["line"]["dash"],
        )
        for run in _runs(shapes)
    ]


def panel_places(figure: dict[str, Any], count: int = 3) -> tuple[str, ...]:
    """Where each of the figure's first ``count`` panels (2 or 3) stands, from its axes'
    domains: ``("left", "middle", "right")`` side by side, ``("top", "middle", "bottom")``
    stacked (every panel the full width)."""
    layout = figure["layout"]
    boxes = []
    for index in range(count):
        suffix = "" if index == 0 else str(index + 1)
        x = layout[f"xaxis{suffix}"]["domain"]
        y = layout[layout[f"xaxis{suffix}"]["anchor"].replace("y", "yaxis")]["domain"]
        boxes.append((tuple(x), tuple(y)))
    full_width = all(x == (0.0, 1.0) for x, _ in boxes)
    names = ("top", "middle", "bottom") if full_width else ("left", "middle", "right")
    order = sorted(range(count), key=lambda i: -boxes[i][1][1] if full_width else boxes[i][0][0])
    return tuple(names[order.index(i)] for i in range(count))


def heatmap_z(figure: dict[str, Any], index: int) -> np.ndarray:
    """The ``z`` values of the figure's ``index``-th trace, float64."""
    return decode_array(figure["data"][index]["z"]).astype(np.float64)


# --- RoPE's context extensions (issue 40): transformers' rope functions, NTK-aware, YaRN -------
# Transcribed from Hugging Face transformers 5.17.0 (the wheel's own files):
# src/transformers/modeling_rope_utils.py (_compute_linear_scaling_rope_parameters,
# _compute_dynamic_ntk_parameters, _compute_yarn_parameters, _compute_llama3_parameters, and
# dynamic_rope_update's dynamic_frequency_update) and models/llama/modeling_llama.py
# (LlamaRotaryEmbedding's compute_default_rope_parameters, __init__ and forward, rotate_half,
# apply_rotary_pos_emb). Each body as there from the line after ``config.standardize_rope_params()``
# (the per-layer and device plumbing left out), reading :class:`HFRopeConfig`, a stand-in for the
# attributes of a PreTrainedConfig they read. Static NTK-aware scaling is not in transformers: it
# is bloc97's rule ("NTK-Aware Scaled RoPE", r/LocalLLaMA, June 2023),
# ``base = base * alpha ** (dim / (dim - 2))``, then the default frequencies.


@dataclass
class HFRopeConfig:
    """What transformers' rope functions read from a model config."""

    head_dim: int
    max_position_embeddings: int  # dynamic NTK's L0
    rope_parameters: dict[str, Any]  # rope_type, rope_theta, factor, original_max_position_...
    hidden_size: int = 0
    num_attention_heads: int = 1


def hf_rope_config(
    rope_type: str, *, head_dim: int, base: float, factor: float, original_length: int
) -> HFRopeConfig:
    """The config of a model trained on ``original_length`` positions with ``rope_type``."""
    parameters: dict[str, Any] = {"rope_type": rope_type, "rope_theta": base}
    if rope_type != "default":
        parameters["factor"] = factor
    if rope_type in ("yarn", "ntk_parts", "llama3"):  # standardize_rope_params sets it
        parameters["original_max_position_embeddings"] = original_length
    if rope_type == "llama3":
        parameters["low_freq_factor"] = 1.0  # Llama 3.1's config.json
        parameters["high_freq_factor"] = 4.0
    return HFRopeConfig(head_dim, original_length, parameters)


def hf_compute_default_rope_parameters(
    config: HFRopeConfig, device: Any = None, seq_len: Any = None
) -> tuple[torch.Tensor, float]:  # LlamaRotaryEmbedding.compute_default_rope_parameters
    base = config.rope_parameters["rope_theta"]
    dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads

    attention_factor = 1.0  # Unused in this type of RoPE
    # Compute the inverse frequencies
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
    return inv_freq.to(device), attention_factor


def hf_compute_linear_scaling_rope_parameters(
    config: HFRopeConfig, device: Any = None, seq_len: Any = None
) -> tuple[torch.Tensor, float]:
    rope_parameters_dict = config.rope_parameters
    factor = rope_parameters_dict["factor"]

    # Gets the default RoPE parameters
    base = rope_parameters_dict["rope_theta"]
    partial_rotary_factor = rope_parameters_dict.get("partial_rotary_factor", 1.0)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    dim = int(head_dim * partial_rotary_factor)
    attention_factor = 1.0  # Unused in this type of RoPE

    # Compute the inverse frequencies
    inv_freq = 1.0 / (
        base
        ** (torch.arange(0, dim, 2, dtype=torch.int64).to(device=device, dtype=torch.float) / dim)
    )

    # Then applies linear scaling to the frequencies.
    inv_freq /= factor
    return inv_freq, attention_factor


def hf_compute_dynamic_ntk_parameters(
    config: HFRopeConfig, device: Any = None, seq_len: Any = None
) -> tuple[torch.Tensor, float]:
    rope_parameters_dict = config.rope_parameters

    base = rope_parameters_dict["rope_theta"]
    partial_rotary_factor = rope_parameters_dict.get("partial_rotary_factor", 1.0)
    head_dim = getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    dim = int(head_dim * partial_rotary_factor)
    factor = rope_parameters_dict["factor"]
    attention_factor = 1.0  # Unused in this type of RoPE

    # seq_len: default to max_position_embeddings, e.g. at init time
    if seq_len is None:
        seq_len = config.max_position_embeddings
    elif isinstance(seq_len, torch.Tensor):
        seq_len = torch.maximum(
            seq_len,
            torch.tensor(
                config.max_position_embeddings, dtype=seq_len.dtype, device=seq_len.device
            ),
        )
    else:
        seq_len = max(seq_len, config.max_position_embeddings)

    # Compute the inverse frequencies
    base = base * ((factor * seq_len / config.max_position_embeddings) - (factor - 1)) ** (
        dim / (dim - 2)
    )
    inv_freq = 1.0 / (
        base
        ** (torch.arange(0, dim, 2, dtype=torch.int64).to(device=device, dtype=torch.float) / dim)
    )
    return inv_freq, attention_factor


def hf_compute_yarn_parameters(
    config: HFRopeConfig, device: Any = None, seq_len: Any = None
) -> tuple[torch.Tensor, float]:
    rope_parameters_dict = config.rope_parameters

    base = rope_parameters_dict["rope_theta"]
    partial_rotary_factor = rope_parameters_dict.get("partial_rotary_factor", 1.0)
    head_dim = getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    dim = int(head_dim * partial_rotary_factor)

    factor = rope_parameters_dict["factor"]
    attention_factor = rope_parameters_dict.get("attention_factor")
    mscale = rope_parameters_dict.get("mscale")
    mscale_all_dim = rope_parameters_dict.get("mscale_all_dim")
    original_max_position_embeddings = rope_parameters_dict["original_max_position_embeddings"]

    if factor is None:
        factor = config.max_position_embeddings / original_max_position_embeddings

    def get_mscale(scale: float, mscale: float = 1) -> float:
        if scale <= 1:
            return 1.0
        return 0.1 * mscale * math.log(scale) + 1.0

    # Sets the attention factor as suggested in the paper
    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(
                get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
            )
        else:
            attention_factor = get_mscale(factor)

    # Optional config options
    # beta_fast/beta_slow: as suggested in the paper, default to 32/1 (correspondingly)
    beta_fast = rope_parameters_dict.get("beta_fast") or 32
    beta_slow = rope_parameters_dict.get("beta_slow") or 1

    # Compute the inverse frequencies
    def find_correction_dim(
        num_rotations: float, dim: int, base: float, max_position_embeddings: int
    ) -> float:
        """Inverse dimension formula to find the dimension based on the number of rotations"""
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (
            2 * math.log(base)
        )

    def find_correction_range(
        low_rot: float,
        high_rot: float,
        dim: int,
        base: float,
        max_position_embeddings: int,
        truncate: bool,
    ) -> tuple[float, float]:
        """Find dimension range bounds based on rotations"""
        low = find_correction_dim(low_rot, dim, base, max_position_embeddings)
        high = find_correction_dim(high_rot, dim, base, max_position_embeddings)
        if truncate:
            low = math.floor(low)
            high = math.ceil(high)
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min: float, max: float, dim: int) -> torch.Tensor:
        if min == max:
            max += 0.001  # Prevent singularity

        linear_func = (torch.arange(dim, dtype=torch.float32) - min) / (max - min)
        ramp_func = torch.clamp(linear_func, 0, 1)
        return ramp_func

    pos_freqs = base ** (torch.arange(0, dim, 2).to(device=device, dtype=torch.float) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)

    truncate = config.rope_parameters.get("truncate", True)
    low, high = find_correction_range(
        beta_fast, beta_slow, dim, base, original_max_position_embeddings, truncate
    )

    # Get n-dimensional rotational scaling corrected for extrapolation
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2).to(
        device=device, dtype=torch.float
    )
    inv_freq = (
        inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
        + inv_freq_extrapolation * inv_freq_extrapolation_factor
    )
    return inv_freq, attention_factor


def hf_compute_llama3_parameters(
    config: HFRopeConfig, device: Any = None, seq_len: Any = None
) -> tuple[torch.Tensor, float]:
    rope_parameters_dict = config.rope_parameters

    # Gets the default RoPE parameters
    base = rope_parameters_dict["rope_theta"]
    partial_rotary_factor = rope_parameters_dict.get("partial_rotary_factor", 1.0)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    dim = int(head_dim * partial_rotary_factor)
    attention_factor = 1.0  # Unused in this type of RoPE

    # Compute the inverse frequencies
    inv_freq = 1.0 / (
        base
        ** (torch.arange(0, dim, 2, dtype=torch.int64).to(device=device, dtype=torch.float) / dim)
    )

    factor = rope_parameters_dict["factor"]  # `8` in the original implementation
    low_freq_factor = rope_parameters_dict["low_freq_factor"]  # `1` in the original implementation
    high_freq_factor = rope_parameters_dict[
        "high_freq_factor"
    ]  # `4` in the original implementation
    old_context_len = rope_parameters_dict["original_max_position_embeddings"]  # `8192` there

    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor

    wavelen = 2 * math.pi / inv_freq
    # wavelen < high_freq_wavelen: do nothing
    # wavelen > low_freq_wavelen: divide by factor
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    # otherwise: interpolate between the two, using a smooth factor
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (
        high_freq_factor - low_freq_factor
    )
    smoothed_inv_freq = (
        1 - smooth_factor
    ) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)

    return inv_freq_llama, attention_factor


def ntk_aware_rope_parameters(
    config: HFRopeConfig, device: Any = None, seq_len: Any = None
) -> tuple[torch.Tensor, float]:
    """bloc97's NTK-aware rule: ``base * alpha ** (dim / (dim - 2))``, then the default."""
    dim = config.head_dim
    alpha = config.rope_parameters["factor"]
    base = config.rope_parameters["rope_theta"] * alpha ** (dim / (dim - 2))
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
    return inv_freq, 1.0


def ntk_by_parts_rope_parameters(
    config: HFRopeConfig, device: Any = None, seq_len: Any = None
) -> tuple[torch.Tensor, float]:
    """NTK-by-parts (YaRN's paper, section 3.2): transformers' YaRN with its config's
    ``attention_factor`` set to 1, the one way transformers computes it."""
    parameters = {**config.rope_parameters, "rope_type": "yarn", "attention_factor": 1.0}
    return hf_compute_yarn_parameters(replace(config, rope_parameters=parameters), device, seq_len)


HF_ROPE_INIT_FUNCTIONS = {
    "default": hf_compute_default_rope_parameters,
    "linear": hf_compute_linear_scaling_rope_parameters,
    "ntk": ntk_aware_rope_parameters,
    "dynamic": hf_compute_dynamic_ntk_parameters,
    "ntk_parts": ntk_by_parts_rope_parameters,
    "yarn": hf_compute_yarn_parameters,
    "llama3": hf_compute_llama3_parameters,
}


def hf_wavelengths(
    rope_type: str,
    *,
    head_dim: int,
    base: float,
    factor: float,
    original_length: int,
    length_read: int,
) -> np.ndarray:
    """Each pair's wavelength ``2π / inv_freq[j]`` in positions (float64 of transformers'
    float32 ``inv_freq``) for a model trained on ``original_length`` positions reading
    ``length_read`` (dynamic NTK's ``seq_len`` past the original length; the others ignore it),
    ``[head_dim // 2]``."""
    config = hf_rope_config(
        rope_type, head_dim=head_dim, base=base, factor=factor, original_length=original_length
    )
    rope_init_fn = HF_ROPE_INIT_FUNCTIONS[rope_type]
    if rope_type == "dynamic" and length_read > original_length:
        inv_freq, _ = rope_init_fn(config, None, seq_len=torch.tensor(length_read))
    else:
        inv_freq, _ = rope_init_fn(config, None)
    return 2 * math.pi / inv_freq.double().numpy()


def hf_rotary_cos_sin(
    config: HFRopeConfig, position_ids: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """A fresh ``LlamaRotaryEmbedding(config)``'s first ``forward(x, position_ids)``
    (``position_ids`` ``[n]``): ``__init__``'s inverse frequencies, ``dynamic_rope_update``'s
    recomputation when ``max(position_ids) + 1`` passes ``max_position_embeddings``, then
    cos and sin times the attention scaling, float32 ``[n, head_dim]``."""
    rope_type = config.rope_parameters["rope_type"]
    rope_init_fn = HF_ROPE_INIT_FUNCTIONS[rope_type]
    inv_freq, attention_scaling = rope_init_fn(config, None)  # __init__
    max_seq_len_cached = config.max_position_embeddings
    position_ids = position_ids[None, :]  # [batch 1, n]
    if "dynamic" in rope_type:  # dynamic_frequency_update, growth
        seq_len = torch.max(position_ids) + 1
        if seq_len > max_seq_len_cached:
            inv_freq, attention_scaling = rope_init_fn(config, None, seq_len=seq_len)
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos() * attention_scaling
    sin = emb.sin() * attention_scaling
    return cos[0], sin[0]


def rotate_half(x: torch.Tensor) -> torch.Tensor:  # modeling_llama.py
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, unsqueeze_dim: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:  # modeling_llama.py
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def hf_rope_scores(
    queries: torch.Tensor, keys: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> torch.Tensor:
    """``q · kᵀ / √h`` of ``queries`` and ``keys`` ``[n, h]`` after ``apply_rotary_pos_emb``
    with ``cos`` and ``sin`` ``[n, h]`` (batch 1, one head): ``[n, n]``."""
    q_embed, k_embed = apply_rotary_pos_emb(
        queries[None, None], keys[None, None], cos[None], sin[None]
    )
    return (q_embed @ k_embed.transpose(2, 3) / keys.shape[-1] ** 0.5)[0, 0]
