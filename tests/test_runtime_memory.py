"""posviz_app.runtime's bounds: glibc's malloc told to give memory back, and one script run at
a time doing its work (the load test's ``steady`` scenario measures the latency it buys, and
``explore`` the peak memory), a run that waits for a download giving its slot up meanwhile."""

from __future__ import annotations

import threading

import pytest

from posviz_app import runtime


def test_malloc_is_bounded_on_glibc() -> None:
    pytest.importorskip("ctypes")
    assert runtime.bound_malloc() is True  # this machine (Debian) has glibc
    assert runtime._malloc_trim is not None and runtime._malloc_trim(0) in (0, 1)


def test_one_run_at_a_time_does_its_work() -> None:
    inside, most, lock = 0, 0, threading.Lock()
    go = threading.Barrier(6, timeout=30)
    release = threading.Event()

    def run() -> None:
        nonlocal inside, most
        go.wait()
        with runtime.run_slot():
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
    assert most == runtime.RUN_SLOTS == 1


def test_a_run_that_waits_for_a_download_lets_another_run_go() -> None:
    other_ran = threading.Event()
    order: list[str] = []

    def other() -> None:
        with runtime.run_slot():
            order.append("other")
            other_ran.set()

    with runtime.run_slot():
        order.append("first")
        with runtime.slot_released():  # the download: another run may go meanwhile
            thread = threading.Thread(target=other)
            thread.start()
            assert other_ran.wait(timeout=30), "the other run never got the slot"
        thread.join(timeout=30)
        with runtime.run_slot():  # the slot is this thread's again: a fragment goes straight on
            order.append("first again")
    assert order == ["first", "other", "first again"]


def test_a_thread_without_a_slot_gives_none_up() -> None:
    with runtime.slot_released():  # no slot held: nothing to give up, nothing taken after
        pass
    with runtime.run_slot():  # and the slot is free
        pass
