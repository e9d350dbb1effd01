"""A cache bounded by bytes, not by entries: what keeps one server's memory in hand.

The page keeps per process the book's tables of each ``(seed, d)`` asked for and the
attention weights of each ``d``. Their sizes differ by a factor of 30 (a table at ``d = 768``
holds about 28 MB: 16 MB of generator checkpoints, up to 8 MB of recent rows and a positional
table; at ``d = 32`` about 1 MB), so a number of entries bounds nothing: eight entries at
``d = 768`` are 220 MB, a third of a small container. :class:`BytesCache` keeps the most
recently used values while their sizes add up to at most ``max_bytes`` (always the newest),
and builds each key once even when several sessions ask at the same moment.

A value evicted while a session still uses it lives until that session's run ends; a key
asked for again after eviction is built again (for a table, the 0.25 s walk at ``d = 768``).

>>> cache = BytesCache(max_bytes=10, size=len)
>>> cache.get("a", lambda: "xxxxxx"), cache.get("b", lambda: "yyyy")
('xxxxxx', 'yyyy')
>>> cache.get("c", lambda: "zz"), sorted(cache.keys()), cache.nbytes
('zz', ['b', 'c'], 6)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BytesCache(Generic[K, V]):
    """Least recently used values, at most ``max_bytes`` of them by ``size(value)``; one
    build per key at a time (thread-safe)."""

    def __init__(self, *, max_bytes: int, size: Callable[[V], int]) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        self.max_bytes = max_bytes
        self._size = size
        self._values: OrderedDict[K, tuple[V, int]] = OrderedDict()  # key -> (value, bytes)
        self._building: dict[K, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, key: K, build: Callable[[], V]) -> V:
        """The value of ``key``: cached, or ``build()`` (once, however many threads ask)."""
        with self._lock:
            found = self._hit(key)
            if found is not None:
                return found[0]
            building = self._building.setdefault(key, threading.Lock())
        # A second asker waits here until the first one's value is stored: the key's lock
        # leaves the books only after that, so no asker can find neither the value nor the
        # build under way (and build the key again).
        with building:
            with self._lock:
                found = self._hit(key)
                if found is not None:
                    return found[0]
            try:
                value = build()
                self._store(key, value)
            finally:
                with self._lock:
                    self._building.pop(key, None)
            return value

    def _hit(self, key: K) -> tuple[V] | None:
        entry = self._values.get(key)
        if entry is None:
            return None
        self._values.move_to_end(key)
        return (entry[0],)

    def _store(self, key: K, value: V) -> None:
        nbytes = self._size(value)
        with self._lock:
            self._values[key] = (value, nbytes)
            self._values.move_to_end(key)
            while len(self._values) > 1 and self.nbytes > self.max_bytes:
                self._values.popitem(last=False)

    def is_cached(self, key: K) -> bool:
        """Whether ``key`` is cached now (without marking it used)."""
        with self._lock:
            return key in self._values

    def keys(self) -> list[K]:
        """The cached keys, least recently used first."""
        with self._lock:
            return list(self._values)

    @property
    def nbytes(self) -> int:
        """Bytes the cached values hold, by ``size``."""
        return sum(nbytes for _, nbytes in self._values.values())

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._values.clear()
