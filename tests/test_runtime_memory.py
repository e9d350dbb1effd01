"""posviz_app.runtime's bounds: glibc's malloc told to give memory back, and one script run at
a time doing its work (the load test's ``steady`` scenario measures the latency it buys, and
``explore`` the peak memory), a run that waits for a download giving its slot up meanwhile."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import pytest

from posviz_app import runtime


def test_malloc_is_bounded_on_glibc() -> None:
    # In a process of its own: the settings last as long as the process (tests/conftest.py).
    code = "from posviz_app import runtime as r; print(r.bound_malloc(), r._malloc_trim(0) < 2)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["True", "True"], done.stderr  # Debian: glibc


def test_this_test_process_keeps_glibcs_malloc_settings(app_test: Callable[..., Any]) -> None:
    assert app_test().exception == []  # the page's first run, in this process
    assert runtime._prepared
    assert runtime._malloc_trim is None  # bound_malloc, which sets it, never ran here


def most_at_once(enter: Callable[[], AbstractContextManager[object]]) -> int:
    """How many of six threads, released together, were inside ``enter()`` at once at most."""
    inside, most, lock = 0, 0, threading.Lock()
    go = threading.Barrier(6, timeout=30)

    def run() -> None:
        nonlocal inside, most
        go.wait()
        with enter():
            with lock:
                inside += 1
                most = max(most, inside)
            threading.Event().wait(timeout=0.2)  # let the others try to enter meanwhile
            with lock:
                inside -= 1

    threads = [threading.Thread(target=run) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return most


def test_one_run_at_a_time_does_its_work() -> None:
    assert most_at_once(runtime.run_slot) == runtime.RUN_SLOTS == 1


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


def test_a_big_view_lets_a_small_run_have_the_turn_and_its_fragment_goes_on() -> None:
    has_turn, finish = threading.Event(), threading.Event()
    fragments: list[str] = []

    def small_run() -> None:
        with runtime.run_slot():
            has_turn.set()
            # False if the fragment below waited for this turn instead of going on
            fragments.append("small run told to finish" if finish.wait(timeout=10) else "")

    with runtime.run_slot(), runtime.big_view_slot():
        thread = threading.Thread(target=small_run)
        thread.start()
        assert has_turn.wait(timeout=30), "the small run waited for the big view"
        with runtime.run_slot():  # the big view's fragment, while the small run has the turn
            fragments.append("drawn")
        finish.set()
        thread.join(timeout=30)
    assert fragments == ["drawn", "small run told to finish"]


def test_at_most_two_big_views_at_once() -> None:
    @contextmanager
    def big_view() -> Iterator[None]:
        with runtime.run_slot(), runtime.big_view_slot():
            yield

    assert most_at_once(big_view) == runtime.BIG_VIEW_SLOTS == 2


@pytest.mark.parametrize(
    ("context_length", "emb_dim", "characters", "big"),
    [(16, 64, 27, False), (255, 256, 4_999, False), (256, 256, 27, True), (16, 64, 5_000, True)],
)
def test_a_big_view_is_64k_cells_or_5000_characters(
    context_length: int, emb_dim: int, characters: int, big: bool
) -> None:
    assert runtime.is_big_view(context_length, emb_dim, characters) is big


def test_a_big_views_turn_is_decided_in_one_place_and_nests() -> None:
    from posviz.config import Settings

    assert isinstance(runtime.view_turn(Settings()), nullcontext)  # the default view: its turn
    has_turn, finish = threading.Event(), threading.Event()

    def small_run() -> None:
        with runtime.run_slot():
            has_turn.set()
            finish.wait(timeout=10)

    big = Settings(context_length=1024, emb_dim=768)
    with runtime.run_slot(), runtime.view_turn(big):  # the page's run of a big view
        thread = threading.Thread(target=small_run)
        thread.start()
        assert has_turn.wait(timeout=30), "the small run waited for the big view"
        with runtime.run_slot(), runtime.view_turn(big):  # its fragment: straight on
            pass
        finish.set()
        thread.join(timeout=30)
    assert most_at_once(runtime.run_slot) == 1  # every slot given back
