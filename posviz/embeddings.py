"""The book's two embedding tables, exactly, without holding the big one.

The book (sections 2.7 and 2.8) does::

    torch.manual_seed(seed)
    token_embedding_layer = torch.nn.Embedding(vocab_size, emb_dim)   # 50,257 x d
    pos_embedding_layer = torch.nn.Embedding(context_length, emb_dim)  # T x d

posviz gives the same numbers. The token table is 155 MB at ``emb_dim=768``, and a text only
needs a few of its rows, so posviz does not keep it. ``nn.Embedding`` fills its weight with
one ``normal_()`` call on the CPU generator. For a float32 tensor of at least 16 elements
that call draws one 32-bit number per element, in order, then turns them into normal values
in chunks of 16 consecutive elements (if the size is not a multiple of 16, the last 16
elements are redrawn). So a block of rows whose size is a multiple of 16 elements, filled by
``normal_()`` from the generator state at the start of that block, holds exactly the values
of the same rows of the whole table. :class:`SeededEmbeddings` walks the table once, keeps the
generator state at the start of each block (a few kB each), and later refills only the blocks
whose rows are asked for. Tests compare it with ``nn.Embedding`` for many seeds and sizes.

Any multiple of 16 rows per block works for every ``emb_dim``: a block of ``16 * k`` rows
holds ``16 * (k * emb_dim)`` elements, a whole number of chunks of 16 whatever ``d`` is. Which
multiple is a trade: refilling a block costs one normal draw per element (about 10 ns each on
this machine) whichever of its rows are needed, and each checkpoint holds 5,056 bytes (torch's
Mersenne Twister state). :func:`rows_per_block_for` takes the multiple of 16 closest to
:data:`BLOCK_ELEMENTS` numbers per block: 16 rows at ``d=768`` (3,141 checkpoints, 16 MB),
256 at ``d=64`` (197, 1 MB). A window of 1,024 distinct GPT-2 tokens at ``d=768`` then refills
about 11 M numbers, not the 35 M of 128-row blocks (80 ms of CPU instead of 450 ms). Rows once
made are also kept: the most recently used ones, up to :data:`ROW_CACHE_BYTES` per table, so an
edit of a long text refills only the blocks of its new tokens, and the last positional table,
which every rerun at that context length needs. Both caches return bit-for-bit the rows a
refill would.

This rests on how ``torch.Tensor.normal_`` fills a float32 CPU tensor, which torch does not
document. It was verified on torch 2.13.0 (``VERIFIED_TORCH``), the version requirements.txt
pins. Another torch could fill differently and posviz would then show numbers that are not
the book's, so :meth:`SeededEmbeddings.create` first runs :func:`check_torch_fill`, a
millisecond comparison of streamed rows with a real ``nn.Embedding``, and stops with a
:class:`TorchFillError` that names both versions instead of showing wrong numbers.

It never touches torch's global generator, so concurrent sessions cannot disturb each other
(the one-time check forks it and restores it), and one table is safe to share between threads
(its caches take a lock).
"""

from __future__ import annotations

import functools
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import groupby, pairwise
from typing import Final

import torch

from posviz.config import GPT2_VOCAB_SIZE

_CHUNK = 16  # torch's CPU normal_ transforms uniform draws in chunks of 16 elements
ROWS_PER_BLOCK = 128  # rows per block of the self-check's small table (3 blocks)
BLOCK_ELEMENTS: Final = 16_384  # numbers per block, about: 16 rows at d=768, 256 rows at d=64
ROW_CACHE_BYTES: Final = 8 * 2**20  # recently used token rows kept per table: 2,730 at d=768
_ROW_CACHE_MAX_ROWS: Final = 4_096  # and at most this many (each row is one tensor object)
_LONGEST_CONTEXT: Final = 1024  # the longest positional table the app asks for (GPT-2's)
VERIFIED_TORCH: Final = "2.13.0"  # the torch whose Tensor.normal_ fill the trick was checked on
# The self-check's table: 3 blocks (the last one short, of 44 rows), an odd emb_dim and a
# table size that is not a multiple of 16, so every rule of the docstring is exercised.
_CHECK_SEED, _CHECK_VOCAB, _CHECK_EMB_DIM, _CHECK_CONTEXT = 123, 300, 3, 5
_CHECK_LOCK: Final = threading.Lock()  # one check at a time: it forks the global generator


def rows_per_block_for(emb_dim: int) -> int:
    """Rows per checkpointed block: a multiple of 16 (so ``rows * emb_dim`` is a multiple of
    16 for every ``emb_dim``) holding about :data:`BLOCK_ELEMENTS` numbers.

    >>> rows_per_block_for(768), rows_per_block_for(64), rows_per_block_for(4096)
    (16, 256, 16)
    """
    return _CHUNK * max(1, round(BLOCK_ELEMENTS / (_CHUNK * emb_dim)))


class _RecentRows:
    """The most recently used rows of one table, by token id, up to ``capacity`` rows."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._rows: OrderedDict[int, torch.Tensor] = OrderedDict()  # token id -> [d]
        self._lock = threading.Lock()

    def get(self, token_ids: Sequence[int]) -> dict[int, torch.Tensor]:
        """The cached rows among ``token_ids`` (each marked as just used)."""
        found = {}
        with self._lock:
            for token_id in token_ids:
                row = self._rows.get(token_id)
                if row is not None:
                    self._rows.move_to_end(token_id)
                    found[token_id] = row
        return found

    def put(self, rows: dict[int, torch.Tensor]) -> None:
        """Remember ``rows`` (token id -> row), dropping the least recently used beyond capacity."""
        with self._lock:
            self._rows.update(rows)
            while len(self._rows) > self.capacity:
                self._rows.popitem(last=False)

    def __len__(self) -> int:
        return len(self._rows)


class TorchFillError(RuntimeError):
    """This torch fills ``nn.Embedding`` differently from the torch posviz was verified on."""


def check_torch_fill() -> None:
    """Compare streamed rows with ``nn.Embedding`` for a small table (a few milliseconds, once
    per process); raise :class:`TorchFillError`, naming the versions, if they differ.

    >>> check_torch_fill()  # passes on the pinned torch
    """
    with _CHECK_LOCK:
        _torch_fill_matches()


@functools.cache  # a pass is remembered for the process; a failure is not (it raises)
def _torch_fill_matches() -> bool:
    """The body of :func:`check_torch_fill` (call that: it holds the lock)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(_CHECK_SEED)
        token_layer = torch.nn.Embedding(_CHECK_VOCAB, _CHECK_EMB_DIM)
        pos_layer = torch.nn.Embedding(_CHECK_CONTEXT, _CHECK_EMB_DIM)
    tables = SeededEmbeddings._walk(
        seed=_CHECK_SEED,
        emb_dim=_CHECK_EMB_DIM,
        vocab_size=_CHECK_VOCAB,
        rows_per_block=ROWS_PER_BLOCK,
    )
    streamed = tables.token_embeddings(range(_CHECK_VOCAB))  # [V, d]
    if not (
        torch.equal(streamed, token_layer.weight.detach())
        and torch.equal(tables.pos_embeddings(_CHECK_CONTEXT), pos_layer.weight.detach())
    ):
        raise TorchFillError(
            f"posviz's self-check failed: torch {torch.__version__} fills nn.Embedding "
            f"differently from torch {VERIFIED_TORCH}, so posviz would show numbers that "
            f"are not the book's. Install torch=={VERIFIED_TORCH} "
            "(pip install -r requirements.txt)."
        )
    return True


@dataclass(frozen=True, eq=False)
class SeededEmbeddings:
    """Exact rows of ``nn.Embedding(vocab_size, emb_dim)`` and of the positional table made
    right after it, for ``torch.manual_seed(seed)``.

    >>> tables = SeededEmbeddings.create(seed=123, emb_dim=3, vocab_size=6)
    >>> tables.token_embeddings([2, 3, 5, 1]).shape
    torch.Size([4, 3])
    """

    seed: int
    emb_dim: int
    vocab_size: int
    block_starts: tuple[int, ...]  # first row of each block; the last entry is vocab_size
    _block_states: tuple[torch.Tensor, ...] = field(repr=False)
    _state_after_token_table: torch.Tensor = field(repr=False)
    _recent: _RecentRows = field(repr=False)
    _pos_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _last_pos: list[torch.Tensor] = field(default_factory=list, repr=False)  # [T, d], 0 or 1

    @classmethod
    def create(
        cls,
        *,
        seed: int,
        emb_dim: int,
        vocab_size: int = GPT2_VOCAB_SIZE,
        rows_per_block: int | None = None,
    ) -> SeededEmbeddings:
        """Walk the token table once (about 0.25 s at ``emb_dim=768``) and keep checkpoints,
        every ``rows_per_block`` rows (default: :func:`rows_per_block_for` ``emb_dim``).

        Raises :class:`TorchFillError` if this torch fills tables differently (see
        :func:`check_torch_fill`).
        """
        check_torch_fill()
        if rows_per_block is None:
            rows_per_block = rows_per_block_for(max(emb_dim, 1))  # _walk rejects emb_dim < 1
        return cls._walk(
            seed=seed, emb_dim=emb_dim, vocab_size=vocab_size, rows_per_block=rows_per_block
        )

    @classmethod
    def _walk(
        cls, *, seed: int, emb_dim: int, vocab_size: int, rows_per_block: int
    ) -> SeededEmbeddings:
        """:meth:`create` without the self-check."""
        if emb_dim < 1 or vocab_size < 1:
            raise ValueError(
                f"emb_dim and vocab_size must be positive, got {emb_dim}, {vocab_size}"
            )
        if rows_per_block < 1 or (rows_per_block * emb_dim) % _CHUNK:
            raise ValueError(
                f"rows_per_block * emb_dim must be a multiple of {_CHUNK}, "
                f"got {rows_per_block} * {emb_dim}"
            )
        starts = list(range(0, vocab_size, rows_per_block))
        # A block of fewer than 16 elements would take torch's other (scalar) path: fold it in.
        if len(starts) > 1 and (vocab_size - starts[-1]) * emb_dim < _CHUNK:
            starts.pop()
        starts.append(vocab_size)

        generator = torch.Generator().manual_seed(seed)
        buffer = torch.empty(max(b - a for a, b in pairwise(starts)) * emb_dim)
        states = []
        for begin, end in pairwise(starts):
            states.append(generator.get_state())
            _fill_normal(buffer[: (end - begin) * emb_dim], generator)
        return cls(
            seed=seed,
            emb_dim=emb_dim,
            vocab_size=vocab_size,
            block_starts=tuple(starts),
            _block_states=tuple(states),
            _state_after_token_table=generator.get_state(),
            _recent=_RecentRows(min(_ROW_CACHE_MAX_ROWS, max(1, ROW_CACHE_BYTES // (4 * emb_dim)))),
        )

    def _block(self, index: int) -> torch.Tensor:
        """Rows ``block_starts[index]:block_starts[index + 1]`` of the token table."""
        begin, end = self.block_starts[index], self.block_starts[index + 1]
        generator = torch.Generator()
        generator.set_state(self._block_states[index])
        return _fill_normal(torch.empty((end - begin) * self.emb_dim), generator).view(
            -1, self.emb_dim
        )  # [rows, d]

    def token_embeddings(self, token_ids: Sequence[int]) -> torch.Tensor:
        """``token_embedding_layer(torch.tensor(token_ids))``, shape ``[n, emb_dim]``."""
        ids = [int(token_id) for token_id in token_ids]
        bad = next((i for i in ids if not 0 <= i < self.vocab_size), None)
        if bad is not None:
            raise ValueError(f"token ids must be in 0..{self.vocab_size - 1}, got {bad}")
        if not ids:
            return torch.empty(0, self.emb_dim)
        unique = sorted(set(ids))
        rows = self._recent.get(unique)
        missing = [token_id for token_id in unique if token_id not in rows]
        if missing:
            made = self._make_rows(missing)
            self._recent.put(made)
            rows.update(made)
        return torch.stack([rows[token_id] for token_id in ids])  # [n, d]

    def _make_rows(self, token_ids: list[int]) -> dict[int, torch.Tensor]:
        """Rows ``token_ids`` (sorted), each block they fall in refilled once."""
        rows = {}
        starts = self.block_starts
        for index, in_block in groupby(token_ids, key=lambda i: bisect_right(starts, i) - 1):
            block = self._block(index)  # [rows of the block, d]
            for token_id in in_block:
                rows[token_id] = block[token_id - starts[index]].clone()  # [d], not a view
        return rows

    def pos_embeddings(self, context_length: int) -> torch.Tensor:
        """``pos_embedding_layer.weight`` for ``nn.Embedding(context_length, emb_dim)`` made
        right after the token table: shape ``[context_length, emb_dim]``."""
        if context_length < 1:
            raise ValueError(f"context_length must be positive, got {context_length}")
        with self._pos_lock:  # the last one is kept: every rerun at this T needs it again
            if not self._last_pos or len(self._last_pos[0]) != context_length:
                generator = torch.Generator()
                generator.set_state(self._state_after_token_table)
                table = _fill_normal(torch.empty(context_length, self.emb_dim), generator)
                self._last_pos[:] = [table]  # [T, d]
            return self._last_pos[0].clone()  # the caller's own copy: it may change it

    @property
    def nbytes(self) -> int:
        """Memory held by the checkpoints."""
        states = (*self._block_states, self._state_after_token_table)
        return sum(state.numel() * state.element_size() for state in states)

    @property
    def max_bytes(self) -> int:
        """The most memory this table can hold: the checkpoints, a full cache of recent rows
        and the positional table of the longest context (1,024 rows). What a cache of tables
        counts it as (:class:`posviz.cache.BytesCache`).

        >>> tables = SeededEmbeddings.create(seed=1, emb_dim=768)
        >>> round(tables.nbytes / 2**20), round(tables.max_bytes / 2**20)
        (15, 26)
        """
        rows = self._recent.capacity * self.emb_dim * 4  # float32 rows
        return self.nbytes + rows + _LONGEST_CONTEXT * self.emb_dim * 4


def _fill_normal(buffer: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``buffer.normal_()`` from ``generator``, as ``nn.Embedding`` fills its weight."""
    return buffer.normal_(generator=generator)
