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


class _Key:
    """A key equal to every other ``_Key``, with one hash: a dict holding one compares the next
    with it (``__eq__``), which tells the test that a second asker found the first one's key
    in the cache's books."""

    def __init__(self, compared: threading.Event) -> None:
        self.compared = compared

    def __hash__(self) -> int:
        return 7

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Key) and other is not self:
            self.compared.set()
        return isinstance(other, _Key)


def test_an_asker_between_the_build_and_its_storing_does_not_build_again() -> None:
    """The first asker has built the value and is storing it (``size`` runs): a second asker
    must wait for it and get its value, not build the key a second time.

    Deterministic, no sleeps: the first asker's ``size`` holds until the second asker has
    decided, either by building (``build`` called again: the key's build lock was let go before
    the value was stored) or by finding the first asker's build under way (its key compared
    with the first one's in the cache's dict of builds)."""
    decided = threading.Event()
    first_sizing, builds = threading.Event(), []

    def build() -> object:
        builds.append(threading.current_thread().name)
        if len(builds) > 1:
            decided.set()  # the second asker builds: the defect
        return object()

    def size(value: object) -> int:
        if not first_sizing.is_set():  # the first value: hold it between build and store
            first_sizing.set()
            assert decided.wait(timeout=60), "the second asker neither built nor waited"
        return 1

    cache: BytesCache[_Key, object] = BytesCache(max_bytes=10, size=size)
    results: dict[str, object] = {}

    def ask(name: str) -> None:
        results[name] = cache.get(_Key(decided), build)

    first = threading.Thread(target=ask, args=("first",), name="first")
    first.start()
    assert first_sizing.wait(timeout=60)
    second = threading.Thread(target=ask, args=("second",), name="second")
    second.start()
    for thread in (first, second):
        thread.join(timeout=60)
        assert not thread.is_alive()
    assert builds == ["first"], f"the key was built {len(builds)} times: {builds}"
    assert results["second"] is results["first"]


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
