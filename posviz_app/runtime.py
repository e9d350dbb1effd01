"""How posviz runs inside the Streamlit server: once per process, and after every run.

posviz_app.page calls :func:`prepare` at the top of every script run and
:func:`run_finished` after a run that completed; both do their work once per server process
and cost one flag check afterwards. They change these things in Streamlit 1.67, each the
smallest change that works, each covered by a test against the real server
(tests/test_app_runtime.py); the Streamlit internals they rest on are in
:mod:`posviz_app._streamlit`, checked when it is imported:

* **Rerun floods are coalesced** (:func:`_coalescing_handle_backmsg`).
* **No outbound traffic** (:func:`_no_ip_lookup`).
* **The long-lived heap is frozen** after the first run, and each run collects only its own
  young garbage (:func:`run_finished`).
* **Freed memory goes back to the system** (:func:`bound_malloc`), and **one run at a time
  does its work** (:data:`RUN_SLOTS`, :func:`run_slot`), big views two at a time beside it
  (:func:`big_view_slot`).

:data:`LOGGER` writes to the server's log in Streamlit's format, at Streamlit's log level.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Final

from posviz.config import Settings
from posviz_app import _streamlit
from posviz_app._streamlit import BackMsg, ClientState, Runtime, SessionClient

LOGGER: Final[logging.Logger] = _streamlit.get_logger("posviz")

_lock = threading.Lock()
_prepared = False
_frozen = False
_original_handle_backmsg: _streamlit.BackMsgHandler = _streamlit.original_handle_backmsg
# A session gets at most one rerun request per this many seconds while its requests keep
# coming (a person waits for the view before the next change; a flood does not).
RERUN_INTERVAL: Final = 0.2
# Rerun requests not yet handed to their session, by session id: (message, client), and when
# each session last got one (event-loop time). Only the event-loop thread reads or writes them
# (Runtime.handle_backmsg runs there).
_pending: dict[str, tuple[BackMsg, SessionClient | None]] = {}
_handed_at: dict[str, float] = {}


def prepare() -> None:
    """Once per process, at the first script run: coalesce reruns, no IP lookups, bounded
    malloc."""
    global _prepared
    if _prepared:
        return
    with _lock:
        if not _prepared:
            _streamlit.install_backmsg_handler(_coalescing_handle_backmsg)
            _streamlit.disable_ip_lookups(_no_ip_lookup)
            if os.environ.get("POSVIZ_MALLOC_TUNING", "1") != "0":  # 0: to measure without it
                bound_malloc()
            _prepared = True


def run_finished() -> None:
    """After every complete run: collect the young garbage the run left and give freed memory
    back; after the first, freeze the heap that every later run shares.

    The first run leaves about 220,000 long-lived objects (torch, plotly, streamlit, the
    tokenizer); a full collection walked them in 90-120 ms. ``gc.freeze()`` moves them to a
    generation the collector never walks; they live as long as the process anyway.

    What a full collection still walks grows with the class: every open session keeps about
    400 objects of its own (its websocket, its widgets' state, its charts' fragments), so with
    60 sessions open a full collection took 7 ms of CPU, and Streamlit ran one after every
    script run (``runner.postScriptGC``, turned off in ``.streamlit/config.toml``): a rerun's
    script thread took 16.4 ms instead of 9.3 (issue 42). Instead each run collects the two
    young generations (``gc.collect(1)``: what this run allocated and left in reference
    cycles, about 0.3 ms), and Python's own thresholds run the full collection when the
    objects that survived since the last one reach a quarter of those it kept (every few
    dozen runs under a class, not after each). ``POSVIZ_GC_FREEZE=0`` in the server's
    environment skips the freeze, and ``--runner.postScriptGC true`` brings back Streamlit's
    collection after each run, to measure the difference
    (``python benchmarks/loadtest.py --only capacity``).
    """
    global _frozen
    if _frozen:
        gc.collect(1)
    if _malloc_trim is not None:
        _malloc_trim(0)
    if _frozen:
        return
    with _lock:
        if not _frozen:
            if os.environ.get("POSVIZ_GC_FREEZE", "1") != "0":  # 0: to measure without it
                gc.collect()
                gc.freeze()
            _frozen = True


# --- memory -------------------------------------------------------------------------------

_M_MMAP_THRESHOLD: Final = -3  # glibc's mallopt parameters (malloc.h)
_M_ARENA_MAX: Final = -8
MMAP_THRESHOLD: Final = 128 * 1024  # bytes: blocks this large come from mmap, and go back
ARENA_MAX: Final = 2  # malloc arenas shared by all threads


_malloc_trim: Callable[[int], int] | None = None  # glibc's malloc_trim, once bound_malloc ran


def bound_malloc() -> bool:
    """Make glibc's malloc give freed memory back to the system: ``True`` if it could.

    A big view (T = 1,024, d = 768) allocates buffers of a few MB per run: matrices, the
    figure's JSON, its protobuf message. glibc serves blocks over 128 kB with ``mmap`` and
    unmaps them on ``free``, but after each such free it raises that threshold (up to 32 MB),
    so later buffers come from the heap and stay resident after they are freed; and each of
    the script threads that run at the same moment gets its own arena (up to 8 per core),
    each keeping its own freed memory. Under a class exploring freely (8 sessions at once,
    benchmarks/loadtest.py ``explore``) that took one server from about 560 to 740 MB peak
    RSS. A fixed threshold and two arenas (``mallopt``, what the ``MALLOC_MMAP_THRESHOLD_``
    and ``MALLOC_ARENA_MAX`` variables set at start) keep what is freed returned. No effect
    (``False``) where the C library is not glibc. ``POSVIZ_MALLOC_TUNING=0`` in the server's
    environment skips it, to measure the difference.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl)
        return False
    global _malloc_trim
    _malloc_trim = libc.malloc_trim
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_ARENA_MAX, ARENA_MAX)
    )


# Script runs that do their work at the same moment (see run_slot); the server's environment
# may set POSVIZ_RUN_SLOTS to another number, to measure the difference.
RUN_SLOTS: Final = max(1, int(os.environ.get("POSVIZ_RUN_SLOTS", "1") or 1))
_run_slots: Final = threading.BoundedSemaphore(RUN_SLOTS)
_holder: Final = threading.local()  # depth: how many run_slot() the thread is inside


@contextmanager
def run_slot() -> Iterator[None]:
    """Hold one of :data:`RUN_SLOTS` while a run draws the page (or a fragment its view).

    Every session's script runs in its own thread, and all of them share one GIL. With a
    class changing settings (benchmarks/loadtest.py ``steady``, 100 sessions, a second to read
    each view) forty runs at once took turns with the GIL every few milliseconds, each handing
    it over for every message it sent: the server did 51-65 reruns a second at 80 % of a
    core, p95 0.88-1.50 s. One run at a time, the others waiting in turn, does the same work
    with fewer hand-overs: 70-89 reruns a second, p95 0.23-0.81 s in the same three paired
    runs (docs/performance.md, "One run at a time"). A big view is computed outside the turn
    (:func:`big_view_slot`), two at a time: eight at once held 200 MB more than two (scenario
    ``explore``). A thread that holds a slot already (a view's fragment drawn within its
    page's run) goes on: one run, one slot. A run that waits for something other than the CPU
    (GPT-2's download) gives its slot up meanwhile (:func:`slot_released`).
    """
    if getattr(_holder, "depth", 0):  # this thread holds one: a fragment of its run
        _holder.depth += 1
        try:
            yield
        finally:
            _holder.depth -= 1
        return
    with _run_slots:
        _holder.depth = 1
        try:
            yield
        finally:
            _holder.depth = 0


# A view at least this big (T x d cells of each matrix, or characters of text) is computed
# outside the run's turn, at most BIG_VIEW_SLOTS at once (see big_view_slot).
BIG_VIEW_CELLS: Final = 65_536
BIG_VIEW_TEXT: Final = 5_000
BIG_VIEW_SLOTS: Final = 2
_big_view_slots: Final = threading.BoundedSemaphore(BIG_VIEW_SLOTS)


def is_big_view(context_length: int, emb_dim: int, characters: int) -> bool:
    """Whether a view of ``context_length`` x ``emb_dim`` over ``characters`` of text is big
    enough to be computed outside the run's turn (:func:`big_view_slot`).

    >>> is_big_view(16, 64, 27), is_big_view(1024, 768, 27), is_big_view(16, 64, 25_000)
    (False, True, True)
    """
    return context_length * emb_dim >= BIG_VIEW_CELLS or characters >= BIG_VIEW_TEXT


def view_turn(settings: Settings) -> AbstractContextManager[object]:
    """Where the view of ``settings`` is computed: a big one in :func:`big_view_slot`, any
    other in its run's turn as it is (the page's run and each fragment ask this)."""
    big = is_big_view(
        settings.context_length, settings.emb_dim, len(settings.text) + len(settings.compare_text)
    )
    return big_view_slot() if big else nullcontext()


@contextmanager
def big_view_slot() -> Iterator[None]:
    """Compute and draw a big view in one of :data:`BIG_VIEW_SLOTS`, its run's slot given to
    the next run meanwhile.

    A big view (T = 1,024, d = 768: three [1024, 768] matrices, the figure, its 1.4 MB of JSON
    and protobuf; or a 25,000-character text) spends most of its 0.1-0.3 s in torch, tiktoken
    and serialisation, which let the GIL go: two of them use both cores. Held to the run's
    single turn, 40 students exploring freely (benchmarks/loadtest.py ``explore``) took 83 s
    instead of 46. So such a view gives its turn to the small runs and computes beside at most
    one other big view (which also bounds the memory they hold: about 25 MB each), and takes a
    turn again to finish its run. The thread counts as holding a slot throughout: its
    fragments go straight on, a big view's own fragment included (one run, one big slot).
    """
    if getattr(_holder, "big", False):  # a fragment drawn within its big view's run
        yield
        return
    with _turn_lent(), _big_view_slots:
        _holder.big = True
        try:
            yield
        finally:
            _holder.big = False


@contextmanager
def slot_released() -> Iterator[None]:
    """Let another run have this thread's slot while it waits for the network or for another
    session's download (a lock), and take a slot again after; as is where it holds none."""
    depth = getattr(_holder, "depth", 0)
    with _turn_lent():
        _holder.depth = 0  # what it runs meanwhile takes a slot of its own
        try:
            yield
        finally:
            _holder.depth = depth


@contextmanager
def _turn_lent() -> Iterator[None]:
    """This thread's run slot given to the next run, and taken again after (nothing where the
    thread holds none: a test, or a fragment outside a run)."""
    if not getattr(_holder, "depth", 0):
        yield
        return
    _run_slots.release()
    try:
        yield
    finally:
        _run_slots.acquire()


# --- rerun floods ---------------------------------------------------------------------------


def _coalescing_handle_backmsg(
    runtime: Runtime, session_id: str, msg: BackMsg, *, client: SessionClient | None = None
) -> None:
    """``Runtime.handle_backmsg`` that hands a session at most one rerun request per turn of
    the event loop, and per :data:`RERUN_INTERVAL` while requests keep coming.

    The server reads a client's websocket frames in batches of up to 256 kB and handles
    every message of a batch before it serves anyone else. Handing one rerun request to its
    session (``AppSession.request_rerun``) costs about 0.1-0.3 ms, so a client that sent
    10,000 requests without reading stalled the health endpoint and every other session for
    about 3 s; and each request it handed over restarted that session's script, whose runs
    then took the CPU from everyone else. Here a rerun request only replaces the session's
    pending one (a dictionary store); a callback hands the newest to the session at the next
    turn of the loop, or :data:`RERUN_INTERVAL` after the session's previous one if that was
    sooner. Someone who changes a widget and waits for the view never waits for it; a flood
    costs the server at most 5 script restarts a second. Triggers (button clicks) of a
    replaced request are merged in by Streamlit's own rule, the one it applies when it folds
    queued reruns, so no click is lost. Fragment reruns and every other message go straight
    through, after any pending rerun of their session, in order.
    """
    if msg.WhichOneof("type") == "rerun_script" and not msg.rerun_script.fragment_id:
        older = _pending.get(session_id)
        if older is None:
            loop = asyncio.get_running_loop()
            wait = _handed_at.get(session_id, -RERUN_INTERVAL) + RERUN_INTERVAL - loop.time()
            if wait > 0:
                loop.call_later(wait, _hand_over, runtime, session_id)
            else:
                loop.call_soon(_hand_over, runtime, session_id)
        elif _same_page(older[0].rerun_script, msg.rerun_script):
            _merge_triggers(older[0].rerun_script, msg.rerun_script)
        else:  # another page: the older request runs first (its callback is still due)
            _hand_over(runtime, session_id)
        _pending[session_id] = (msg, client)
        return
    _hand_over(runtime, session_id)
    _original_handle_backmsg(runtime, session_id, msg, client=client)


def _hand_over(runtime: Runtime, session_id: str) -> None:
    pending = _pending.pop(session_id, None)
    if pending is not None:
        now = asyncio.get_running_loop().time()
        _handed_at[session_id] = now
        if len(_handed_at) > 1_000:  # forget sessions whose last request no longer matters
            for stale in [s for s, t in _handed_at.items() if now - t > RERUN_INTERVAL]:
                del _handed_at[stale]
        message, client = pending
        _original_handle_backmsg(runtime, session_id, message, client=client)


def _same_page(older: ClientState, newer: ClientState) -> bool:
    return (older.page_script_hash, older.page_name) == (newer.page_script_hash, newer.page_name)


def _merge_triggers(older: ClientState, newer: ClientState) -> None:
    """Keep the still-active triggers of ``older`` in ``newer`` (Streamlit's rule)."""
    triggers = _streamlit.TRIGGERS
    if any(state.WhichOneof("value") in triggers for state in older.widget_states.widgets):
        merged = _streamlit.coalesce_widget_states(older.widget_states, newer.widget_states)
        if merged is not None:
            newer.widget_states.CopyFrom(merged)


# --- no outbound traffic --------------------------------------------------------------------


def _no_ip_lookup() -> None:
    """Stands in for ``net_util.get_internal_ip`` and ``get_external_ip``.

    Streamlit checks a WebSocket ``Origin`` that is not the page's own against localhost,
    then against this machine's internal IP (a UDP ``connect`` to 8.8.8.8) and external IP
    (an HTTP GET to checkip.amazonaws.com), on the event loop, for every refused connection:
    a failed lookup is not cached, so behind a firewall that drops packets each refusal froze
    the server for about 2 s, and each one sent this machine's traffic outside. No config
    option skips those two calls (``is_url_from_allowed_origins`` in
    ``streamlit/web/server/server_util.py`` tries them before the configured origins). With
    "unknown" (``None``) a foreign origin is refused at once, and the allow-list is exactly
    ``server.corsAllowedOrigins``. The start-up banner, the other caller, is kept off the
    network by ``browser.serverAddress`` in ``.streamlit/config.toml``.
    """
    return None
