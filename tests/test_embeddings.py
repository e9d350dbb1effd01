"""posviz.embeddings: exactly the book's ``nn.Embedding`` tables (tests/reference.py).

Reference, as in the book (sections 2.7 and 2.8), under ``torch.random.fork_rng``::

    torch.manual_seed(seed)
    token_embedding_layer = torch.nn.Embedding(vocab_size, emb_dim)
    pos_embedding_layer = torch.nn.Embedding(context_length, emb_dim)
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from reference import book_layers, book_tables

from posviz import embeddings
from posviz.embeddings import (
    VERIFIED_TORCH,
    SeededEmbeddings,
    TorchFillError,
    check_torch_fill,
    rows_per_block_for,
)

GPT2_VOCAB = 50257

# The weight matrix printed in the book, section 2.7 (seed 123, vocab_size 6, output_dim 3).
BOOK_2_7_WEIGHT = [
    [0.3374, -0.1778, -0.1690],
    [0.9178, 1.5810, 1.3010],
    [1.2753, -0.2010, -0.1606],
    [-0.4015, 0.9666, -1.1481],
    [-1.1589, 0.3255, -0.6315],
    [-2.8400, -0.7849, -1.4096],
]


@pytest.fixture(autouse=True)
def global_rng_untouched() -> Iterator[None]:
    """Every test here also checks that torch's global generator is left as it was."""
    torch.manual_seed(20240601)
    before = torch.get_rng_state().clone()
    yield
    assert torch.equal(torch.get_rng_state(), before)


# (seed, vocab_size, emb_dim, context_length, rows_per_block)
SMALL_CASES = [
    pytest.param(123, 6, 3, 4, 128, id="book-2.7-V6-d3"),
    pytest.param(123, 6, 3, 1, 16, id="book-2.7-rows16"),
    pytest.param(0, 5, 3, 2, 128, id="V*d=15-below-16"),
    pytest.param(7, 1, 2, 1, 128, id="V1-d2-two-elements"),
    pytest.param(7, 2, 8, 3, 2, id="V*d=16-exactly"),
    pytest.param(1, 17, 1, 5, 16, id="d1-V17-tail-of-1"),
    pytest.param(2, 257, 8, 17, 128, id="tail-block-folded"),
    pytest.param(3, 1000, 7, 9, 16, id="odd-d7-rows16"),
    pytest.param(4, 1001, 5, 33, 32, id="odd-V-odd-d-rows32"),
    pytest.param(5, 333, 13, 7, 48, id="d13-rows48"),
    pytest.param(6, 300, 16, 16, 1, id="rows1-d16"),
    pytest.param(8, 300, 2, 1024, 8, id="d2-rows8-T1024"),
    pytest.param(9, 129, 4, 3, 4, id="rows4-d4-exact-multiple"),
    pytest.param(2**32 - 1, 64, 6, 4, 8, id="largest-seed"),
]


@pytest.mark.parametrize(("seed", "vocab_size", "emb_dim", "context_length", "rows"), SMALL_CASES)
def test_every_row_equals_nn_embedding(
    seed: int, vocab_size: int, emb_dim: int, context_length: int, rows: int
) -> None:
    token_weight, pos_weight = book_tables(seed, emb_dim, context_length, vocab_size=vocab_size)
    tables = SeededEmbeddings.create(
        seed=seed, emb_dim=emb_dim, vocab_size=vocab_size, rows_per_block=rows
    )
    every_id = list(range(vocab_size))
    assert torch.equal(tables.token_embeddings(every_id), token_weight)
    assert torch.equal(tables.pos_embeddings(context_length), pos_weight)


@pytest.mark.parametrize(
    ("seed", "emb_dim", "context_length", "rows"),
    [
        pytest.param(123, 2, 4, 128, id="d2"),
        pytest.param(123, 3, 5, 16, id="d3-rows16"),
        pytest.param(42, 256, 4, 128, id="book-2.8-d256"),
        pytest.param(1, 768, 1024, 128, id="gpt2-small-d768-T1024"),
        pytest.param(2, 768, 7, 1000, id="d768-rows1000"),
        pytest.param(3, 50, 3, 8, id="d50-rows8"),
    ],
)
def test_gpt2_vocabulary_rows_equal_nn_embedding(
    seed: int, emb_dim: int, context_length: int, rows: int
) -> None:
    token_weight, pos_weight = book_tables(seed, emb_dim, context_length, vocab_size=GPT2_VOCAB)
    tables = SeededEmbeddings.create(seed=seed, emb_dim=emb_dim, rows_per_block=rows)
    # Edges of blocks, first and last rows, repeats, any order, and a random sample.
    token_ids = [0, 1, 127, 128, 129, 255, 256, 50255, 50256, 50256, 0, 40, 367, 2885, 1464]
    token_ids += random.Random(seed).sample(range(GPT2_VOCAB), 200)
    assert torch.equal(tables.token_embeddings(token_ids), token_weight[token_ids])
    assert torch.equal(tables.pos_embeddings(context_length), pos_weight)


def test_every_row_of_the_gpt2_table_at_d2() -> None:
    token_weight, pos_weight = book_tables(123, 2, 4, vocab_size=GPT2_VOCAB)
    tables = SeededEmbeddings.create(seed=123, emb_dim=2)
    assert torch.equal(tables.token_embeddings(range(GPT2_VOCAB)), token_weight)
    assert torch.equal(tables.pos_embeddings(4), pos_weight)


@pytest.mark.parametrize("context_length", [1, 2, 3, 4, 5, 8, 17, 100])
def test_positional_table_comes_after_the_token_table(context_length: int) -> None:
    """Each context length is its own ``nn.Embedding(T, d)`` made right after the token table."""
    _, pos_weight = book_tables(11, 3, context_length, vocab_size=40)
    tables = SeededEmbeddings.create(seed=11, emb_dim=3, vocab_size=40, rows_per_block=16)
    assert torch.equal(tables.pos_embeddings(context_length), pos_weight)
    # ... and it is not a table drawn from the fresh seed.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(11)
        fresh = torch.nn.Embedding(context_length, 3).weight.detach()
    assert not torch.equal(tables.pos_embeddings(context_length), fresh)


def test_book_section_2_7_weight_matrix() -> None:
    token_weight, _ = book_tables(123, 3, 1, vocab_size=6)
    tables = SeededEmbeddings.create(seed=123, emb_dim=3, vocab_size=6)
    weight = tables.token_embeddings(range(6))
    assert torch.equal(weight, token_weight)
    torch.testing.assert_close(weight, torch.tensor(BOOK_2_7_WEIGHT), rtol=0, atol=1e-4)


def test_book_section_2_7_lookup() -> None:
    """The book's ``embedding_layer(torch.tensor([2, 3, 5, 1]))``."""
    embedding_layer, _ = book_layers(123, 3, 1, vocab_size=6)
    expected = embedding_layer(torch.tensor([2, 3, 5, 1])).detach()
    tables = SeededEmbeddings.create(seed=123, emb_dim=3, vocab_size=6)
    assert torch.equal(tables.token_embeddings([2, 3, 5, 1]), expected)


def test_results_are_float32_and_repeatable() -> None:
    tables = SeededEmbeddings.create(seed=5, emb_dim=8, vocab_size=300, rows_per_block=2)
    first = tables.token_embeddings([299, 3, 3])
    assert first.dtype == torch.float32 and first.shape == (3, 8)
    assert torch.equal(first, tables.token_embeddings([299, 3, 3]))
    assert torch.equal(first[1], first[2])
    assert tables.pos_embeddings(4).dtype == torch.float32
    assert tables.token_embeddings([]).shape == (0, 8)


def test_different_seeds_give_different_tables() -> None:
    a = SeededEmbeddings.create(seed=1, emb_dim=4, vocab_size=50)
    b = SeededEmbeddings.create(seed=2, emb_dim=4, vocab_size=50)
    assert not torch.equal(a.token_embeddings(range(50)), b.token_embeddings(range(50)))


def test_global_rng_is_not_used_or_changed() -> None:
    """Creating and reading tables neither reads nor advances torch's global generator."""
    original = torch.get_rng_state().clone()
    torch.manual_seed(999)
    state = torch.get_rng_state().clone()
    expected_next = torch.rand(5)
    torch.set_rng_state(state)

    tables = SeededEmbeddings.create(seed=123, emb_dim=16, vocab_size=1000)
    tables.token_embeddings([1, 500, 999])
    tables.pos_embeddings(8)

    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(torch.rand(5), expected_next)
    # The global state at creation time does not matter either.
    torch.manual_seed(31337)
    again = SeededEmbeddings.create(seed=123, emb_dim=16, vocab_size=1000)
    assert torch.equal(again.token_embeddings(range(1000)), tables.token_embeddings(range(1000)))
    torch.set_rng_state(original)


@pytest.mark.parametrize(
    "bad_ids",
    [
        pytest.param([-1], id="negative"),
        pytest.param([6], id="vocab-size"),
        pytest.param([0, 1, 7], id="one-too-large"),
        pytest.param([2**40], id="huge"),
    ],
)
def test_bad_token_ids_raise(bad_ids: list[int]) -> None:
    tables = SeededEmbeddings.create(seed=123, emb_dim=3, vocab_size=6)
    with pytest.raises(ValueError, match=r"0\.\.5"):
        tables.token_embeddings(bad_ids)


@pytest.mark.parametrize(
    ("emb_dim", "rows_per_block", "pattern"),
    [
        pytest.param(3, 0, r"multiple of 16, got 0 \* 3", id="zero"),
        pytest.param(3, -16, r"multiple of 16, got -16 \* 3", id="negative"),
        pytest.param(3, 5, r"multiple of 16, got 5 \* 3", id="15-elements"),
        pytest.param(3, 17, r"multiple of 16, got 17 \* 3", id="51-elements"),
        pytest.param(768, 1, None, id="768-is-fine"),
        pytest.param(8, 3, r"multiple of 16, got 3 \* 8", id="24-elements"),
    ],
)
def test_rows_per_block_must_fill_whole_chunks(
    emb_dim: int, rows_per_block: int, pattern: str | None
) -> None:
    if pattern is None:
        tables = SeededEmbeddings.create(
            seed=0, emb_dim=emb_dim, vocab_size=40, rows_per_block=rows_per_block
        )
        assert tables.token_embeddings([39]).shape == (1, emb_dim)
        return
    with pytest.raises(ValueError, match=pattern):
        SeededEmbeddings.create(
            seed=0, emb_dim=emb_dim, vocab_size=40, rows_per_block=rows_per_block
        )


@pytest.mark.parametrize(
    ("emb_dim", "vocab_size"),
    [pytest.param(0, 6, id="emb_dim-0"), pytest.param(3, 0, id="vocab-0")],
)
def test_sizes_must_be_positive(emb_dim: int, vocab_size: int) -> None:
    with pytest.raises(ValueError, match=rf"got {emb_dim}, {vocab_size}"):
        SeededEmbeddings.create(seed=0, emb_dim=emb_dim, vocab_size=vocab_size)


@pytest.mark.parametrize("context_length", [0, -1])
def test_context_length_must_be_positive(context_length: int) -> None:
    tables = SeededEmbeddings.create(seed=0, emb_dim=3, vocab_size=6)
    with pytest.raises(ValueError, match=rf"got {context_length}"):
        tables.pos_embeddings(context_length)


# --- the startup self-check ---------------------------------------------------------------


def test_the_verified_torch_is_the_pinned_one() -> None:
    """Bumping torch in requirements.txt means re-verifying the fill (and this constant)."""
    pins = (Path(__file__).resolve().parent.parent / "requirements.txt").read_text()
    assert f"torch=={VERIFIED_TORCH}" in pins
    assert torch.__version__.split("+")[0] == VERIFIED_TORCH
    check_torch_fill()  # passes here


@pytest.mark.usefixtures("other_torch_fill")
def test_a_different_fill_fails_loudly_naming_both_torch_versions() -> None:
    this, verified = re.escape(torch.__version__), re.escape(VERIFIED_TORCH)
    message = rf"torch {this} fills nn\.Embedding differently from torch {verified}"
    with pytest.raises(TorchFillError, match=message):
        check_torch_fill()
    with pytest.raises(TorchFillError, match=message):
        SeededEmbeddings.create(seed=123, emb_dim=4, vocab_size=50)


# --- default block size and the caches of recent rows -------------------------------------


@pytest.mark.parametrize("emb_dim", [768, 64, 7, 1])
def test_default_blocks_give_the_book_rows(emb_dim: int) -> None:
    """The default block size (a multiple of 16 rows, about 16,384 numbers) at several d."""
    token_weight, pos_weight = book_tables(21, emb_dim, 9, vocab_size=GPT2_VOCAB)
    tables = SeededEmbeddings.create(seed=21, emb_dim=emb_dim)
    rows = tables.block_starts[1] - tables.block_starts[0]
    assert rows % 16 == 0 and rows == rows_per_block_for(emb_dim)
    token_ids = [0, rows - 1, rows, rows + 1, 50256, 50255, 7, 7]
    token_ids += random.Random(emb_dim).sample(range(GPT2_VOCAB), 300)
    assert torch.equal(tables.token_embeddings(token_ids), token_weight[token_ids])
    assert torch.equal(tables.pos_embeddings(9), pos_weight)


def test_rows_from_the_cache_equal_the_book_after_edits_and_evictions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Overlapping look-ups (an edited text), with a cache small enough to evict."""
    monkeypatch.setattr(embeddings, "_ROW_CACHE_MAX_ROWS", 40)
    token_weight, _ = book_tables(8, 16, 1, vocab_size=GPT2_VOCAB)
    tables = SeededEmbeddings.create(seed=8, emb_dim=16)
    text = random.Random(8).sample(range(GPT2_VOCAB), 60)
    for edit in range(12):
        edited = list(text)
        edited[(7 * edit) % 60] = (edited[(7 * edit) % 60] + 1000 * edit) % GPT2_VOCAB
        window = edited[: 30 + edit]
        assert torch.equal(tables.token_embeddings(window), token_weight[window])
        assert len(tables._recent) <= 40


def test_a_caller_changing_its_rows_does_not_change_the_cache() -> None:
    token_weight, pos_weight = book_tables(9, 4, 6, vocab_size=GPT2_VOCAB)
    tables = SeededEmbeddings.create(seed=9, emb_dim=4)
    tables.token_embeddings([5, 6]).mul_(0)
    tables.pos_embeddings(6).mul_(0)
    assert torch.equal(tables.token_embeddings([6, 5]), token_weight[[6, 5]])
    assert torch.equal(tables.pos_embeddings(6), pos_weight)


def test_the_last_positional_table_is_kept_per_context_length() -> None:
    tables = SeededEmbeddings.create(seed=10, emb_dim=8)
    for context_length in (5, 5, 9, 5, 1):
        _, pos_weight = book_tables(10, 8, context_length, vocab_size=GPT2_VOCAB)
        assert torch.equal(tables.pos_embeddings(context_length), pos_weight)


def test_one_table_shared_by_threads_gives_every_thread_the_book_rows() -> None:
    """Sessions share a table (st.cache_resource): concurrent look-ups, overlapping ids."""
    token_weight, pos_weight = book_tables(12, 32, 16, vocab_size=GPT2_VOCAB)
    tables = SeededEmbeddings.create(seed=12, emb_dim=32)
    start, failures = threading.Barrier(6), []

    def session(index: int) -> None:
        start.wait(timeout=30)
        for step in range(20):
            ids = random.Random(100 * index + step).sample(range(0, GPT2_VOCAB, 7), 50)
            if not torch.equal(tables.token_embeddings(ids), token_weight[ids]):
                failures.append((index, step, "token rows"))
            if not torch.equal(tables.pos_embeddings(16 - step % 3), pos_weight[: 16 - step % 3]):
                failures.append((index, step, "positions"))

    threads = [threading.Thread(target=session, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures
