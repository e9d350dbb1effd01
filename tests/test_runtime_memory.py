"""posviz_app.runtime's memory bounds: glibc's malloc told to give memory back, and at most
VIEW_SLOTS views computed at once (the load test's ``explore`` scenario measures the peak)."""

from __future__ import annotations

import threading

import pytest

from posviz_app import runtime


def test_malloc_is_bounded_on_glibc() -> None:
    pytest.importorskip("ctypes")
    assert runtime.bound_malloc() is True  # this machine (Debian) has glibc
    assert runtime._malloc_trim is not None and runtime._malloc_trim(0) in (0, 1)


def test_at_most_view_slots_views_are_computed_at_once() -> None:
    inside, most, lock = 0, 0, threading.Lock()
    go = threading.Barrier(6, timeout=30)
    release = threading.Event()

    def run() -> None:
        nonlocal inside, most
        go.wait()
        with runtime.view_slot():
            with lock:
                inside += 1
                most = max(most, inside)
            release.wait(timeout=0.2)  # let the others try to enter meanwhile
            with lock:
                inside -= 1

    threads = [threading.Thread(target=run) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert most == runtime.VIEW_SLOTS == 2
