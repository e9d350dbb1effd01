"""posviz.cache.BytesCache: bounded by bytes, least recently used out first, one build per key."""

from __future__ import annotations

import threading

import pytest

from posviz.cache import BytesCache
from posviz.embeddings import SeededEmbeddings


def test_the_least_recently_used_go_first_when_bytes_run_out() -> None:
    cache: BytesCache[str, bytes] = BytesCache(max_bytes=100, size=len)
    for key in "abc":
        cache.get(key, lambda: bytes(40))
    assert cache.keys() == ["b", "c"] and cache.nbytes == 80  # a + b + c = 120 > 100
    cache.get("b", lambda: pytest.fail("b is cached"))  # b is now the most recent
    cache.get("d", lambda: bytes(50))
    assert cache.keys() == ["b", "d"] and cache.nbytes == 90


def test_a_value_larger_than_the_budget_is_kept_alone() -> None:
    cache: BytesCache[str, bytes] = BytesCache(max_bytes=10, size=len)
    cache.get("small", lambda: bytes(5))
    assert cache.get("big", lambda: bytes(50)) == bytes(50)
    assert cache.keys() == ["big"]


def test_concurrent_askers_build_once() -> None:
    cache: BytesCache[int, object] = BytesCache(max_bytes=10, size=lambda _: 1)
    builds, start = [], threading.Barrier(8, timeout=30)

    def build() -> object:
        builds.append(1)
        return object()

    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: (start.wait(), results.append(cache.get(7, build))))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(builds) == 1 and len(results) == 8 and len({id(r) for r in results}) == 1


def test_a_failed_build_is_not_cached() -> None:
    cache: BytesCache[str, int] = BytesCache(max_bytes=10, size=lambda _: 1)

    def fail() -> int:
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        cache.get("k", fail)
    assert cache.get("k", lambda: 3) == 3


def test_tables_are_counted_at_their_largest() -> None:
    """A table at d = 768 counts its checkpoints, 8 MB of rows and a [1024, 768] positional
    table: a 64 MiB cache keeps two of them."""
    tables = SeededEmbeddings.create(seed=5, emb_dim=768)
    states = 3142 + 1  # one per 16-row block (50,257 rows: the last has 1), one after them
    assert tables.nbytes == states * 5056
    assert tables.max_bytes == tables.nbytes + 2730 * 768 * 4 + 1024 * 768 * 4
    cache: BytesCache[int, SeededEmbeddings] = BytesCache(
        max_bytes=64 * 2**20, size=lambda t: t.max_bytes
    )
    for seed in range(3):
        cache.get(seed, lambda: tables)
    assert cache.keys() == [1, 2]
