"""What the page computes once per server process and shares between sessions: the book's
tables, the self-attention weights, GPT-2's store, and the Geometry and Distance views' results.

Each cache is bounded by bytes, not entries (:class:`posviz.cache.BytesCache`): a table at
d = 768 holds ~26 MB, one at d = 32 ~1 MB. 64 MiB keeps the two or three tables a lecture's
class shares at d = 768 (the rest are walked again, 0.25 s each, when asked for) and keeps a
server under a class exploring freely within 500 MB (benchmarks/loadtest.py, scenario explore).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar, cast

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from posviz.attention import AttentionWeights
from posviz.cache import BytesCache
from posviz.config import Settings
from posviz.embeddings import SeededEmbeddings
from posviz.gpt2.store import Gpt2Embeddings, Gpt2Store, Gpt2Unavailable
from posviz.pipeline import EmbeddingTables
from posviz.schemes import SchemeName
from posviz.training.length import LengthRun, shipped_length_runs
from posviz.view import book_attention

R = TypeVar("R")
TABLES_BYTES: Final = 64 * 2**20
ATTENTION_BYTES: Final = 16 * 2**20  # SelfAttention_v2 weights: 7 MB at d = 768
SHAPES_BYTES: Final = 32 * 2**20  # Geometry / Distance results: ten tables at T = 1024, d = 768


@st.cache_resource(show_spinner=False)
def table_cache() -> BytesCache[tuple[int, int], SeededEmbeddings]:
    """The book's tables of each (seed, d) asked for, shared by all sessions of the process."""
    return BytesCache(max_bytes=TABLES_BYTES, size=lambda tables: tables.max_bytes)


def seeded_tables(seed: int, emb_dim: int) -> SeededEmbeddings:
    """Checkpoints of ``nn.Embedding(50257, emb_dim)`` after ``torch.manual_seed(seed)``."""

    def walk() -> SeededEmbeddings:
        with st.spinner("Walking the 50,257-row token table once…"):
            return SeededEmbeddings.create(seed=seed, emb_dim=emb_dim)

    return table_cache().get((seed, emb_dim), walk)


# Not cached: recomputing a window from the cached tables takes milliseconds, and a cache of
# [n, d] matrices (9 MB each at T=1024, d=768) would cost more memory than it saves time.
def tables_for(settings: Settings) -> EmbeddingTables:
    """The book's tables a view of ``settings`` looks its rows up in (cached per process)."""
    return seeded_tables(settings.seed, settings.emb_dim)


@st.cache_resource(show_spinner=False)
def gpt2_store() -> Gpt2Store:
    """GPT-2's tables in the cache folder; one store per process, so sessions that ask at the
    same time download once (its lock) and share the memory-mapped tables."""
    return Gpt2Store()


def gpt2_tables() -> Gpt2Embeddings | str:
    """GPT-2's trained tables (downloaded once, with a progress bar), or why they cannot be
    shown: not cached and not downloadable, or damaged."""
    bars: list[DeltaGenerator] = []

    def progress(done: int, total: int) -> None:
        table = "token table (wte)" if total > 10_000_000 else "positional table (wpe)"
        text = f"Downloading GPT-2's {table} once: {done / 1e6:.0f} of {total / 1e6:.0f} MB"
        if not bars:
            bars.append(st.progress(0.0, text=text))
        bars[0].progress(min(done / total, 1.0), text=text)

    try:
        return gpt2_store().tables(progress=progress)
    except Gpt2Unavailable as error:
        return str(error)
    finally:
        for bar in bars:
            bar.empty()


@st.cache_resource(show_spinner=False)
def attention_cache() -> BytesCache[int, AttentionWeights]:
    """SelfAttention_v2 weights of each d asked for, shared by all sessions of the process."""
    return BytesCache(max_bytes=ATTENTION_BYTES, size=lambda weights: weights.nbytes)


def attention_weights(emb_dim: int) -> AttentionWeights:
    """The book's SelfAttention_v2(d, d) weights after torch.manual_seed(789) (cached)."""
    return attention_cache().get(emb_dim, lambda: book_attention(emb_dim))


@st.cache_resource(show_spinner=False)
def shape_cache() -> BytesCache[tuple[object, ...], object]:
    """The Geometry and Distance views' results per positional table, for every session: a
    table's geometry (its rows included: 3 MB at T = 1024, d = 768), its distance curve,
    GPT-2's cosines (see posviz.geometry.Memo)."""
    return BytesCache(max_bytes=SHAPES_BYTES, size=lambda value: getattr(value, "nbytes", 256))


def kept(key: tuple[object, ...], compute: Callable[[], R]) -> R:
    """:class:`posviz.geometry.Memo` over :func:`shape_cache`."""
    return cast(R, shape_cache().get(key, compute))


@st.cache_resource(show_spinner=False)
def length_runs() -> dict[SchemeName, LengthRun]:
    """The shipped length runs (posviz/data/length/, about 0.3 MB), read once per process and
    shared by every session: the Length tab only reads them, it never trains."""
    return shipped_length_runs()
