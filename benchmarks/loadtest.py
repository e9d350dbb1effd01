"""The lecture-hall load test: posviz on the real `streamlit run`, judged against its targets.

    python benchmarks/loadtest.py                      # every scenario, one deadline (30 min)
    python benchmarks/loadtest.py --only steady,flood  # some scenarios
    python benchmarks/loadtest.py --quick              # small counts: a smoke run (targets that
                                                       # need more samples say so)
    python benchmarks/loadtest.py --only capacity --reruns 120   # CPU of one rerun, split

It starts its own servers on 127.0.0.1 (free ports; ``devtools.server``; HAProxy replicas via
``deploy/scaleout.py``), drives them with Streamlit's websocket protocol as browsers do
(``devtools.client``), stops every process it started by PID, and prints one table:
target | measured | met?, with this machine's load (``os.getloadavg()``).

Scenarios (issue 8):

* ``steady``: many sessions on the default view click around (seed, scheme, d) for 1,000
  reruns. Server CPU per rerun from ``/proc/<pid>/stat`` (target <= 25 ms), and RSS flat over
  the 1,000 reruns (growth from rerun 200 to the end <= 10 MB). With ``--think S`` each
  student reads each view for S seconds before the next change (starts spread over S
  seconds): a lecture hall, ``--sessions-steady 100 --think 1`` (issue 42: reruns p95 <=
  0.35 s).
* ``capacity``: one session on the default view (the bare link, no query string) reruns the
  same view, one rerun at a time, so the numbers isolate what one rerun costs the server and
  where it goes: CPU per rerun (target <= 25 ms) split into the event-loop thread (the
  process's main thread: websocket, protobuf, sending) and the rest (script threads, which come
  and go with each run, and the post-run garbage collection), wall p50, and VmRSS every 100
  reruns (flat, as in ``steady``).
* ``cold``: 60 sessions open their own link at the same instant on a fresh server: peak RSS
  (``VmHWM``) <= 600 MB, first view p95 <= 5 s, 0 errors. A quarter of them open the
  Attention tab (issue 25: one head of the book's attention, their scores and weights checked
  against the book's ``MultiHeadAttention`` in tests/reference.py) and move the sentence 8
  positions, or show another head. Then a client empties every cache (Streamlit's
  ``clear_cache`` message) and everyone does one more step: still the right numbers.
* ``explore``: a class exploring freely on one fresh server (issue 17): 8 sessions at once,
  each on its own 25,000-character text at T = 1,024 and d = 768, moving through every scheme,
  d 512 and 768, T 256 and 1,024, windows, a second long text, three seeds shared between them;
  then each opens the Word-order tab (a second long text compared through self-attention) and
  changes scheme and d there. Peak RSS (``VmHWM``) <= 500 MB (Community Cloud's smallest
  container is about 690 MB for everything in it), 0 errors, every Embeddings chart bitwise
  equal to the reference and every Word-order run with its chart. Bounded: 8 x (12 + 4) runs.
* ``flood``: one client sends 10,000 rerun requests without reading any answer while 4 other
  sessions keep working: health endpoint <= 0.5 s during the flood, the others' reruns p95 <=
  1 s, and back to normal 3 s after it (the others' reruns from then on: p95 <= twice their
  p95 before the flood; health <= 0.5 s).
* ``balancer``: the same closed-loop work (8 sessions) on one replica, then on 2 replicas
  behind HAProxy: >= 1.7x the reruns/s, p95 <= 0.5 s, 0 errors.
* ``failover``: 2 replicas behind HAProxy, one SIGKILLed mid-run: every student on it
  reconnects (same URL, same cookie, as a browser does), lands on the other replica and gets the
  same numbers back.

Correctness, in every scenario: each chart's three ``z`` arrays are compared bit for bit with
the book's computation (``tests/reference.py``: tiktoken's own ``gpt2`` encoding, never posviz's
tokenizer; ``torch.manual_seed`` + ``nn.Embedding``; window start = window * stride; each
scheme's formula), and the token chips (position, text, id) with tiktoken's tokens. Every step
of every student's plan changes the expected chart (checked when the plan is made), so a stale
chart cannot pass; plans use windows > 0, strides != T and every scheme. (``capacity`` reruns
one view on purpose: there each chart must equal the default view's.)

Why a protocol client and not 60 Chromium tabs: on 2 cores, 60 renderers would measure the
browsers, not the server. The client sends what the browser sends (``BackMsg`` with the widget
states) and reads what it receives (``ForwardMsg``); the browser path itself is covered by the
Playwright tests. Wall-clock numbers depend on what else runs on the machine: the load average
is printed next to them; CPU per rerun is measured on the server process itself.

``--server-option section.name=value`` (repeatable) measures another Streamlit setting, and
``POSVIZ_GC_FREEZE=0`` in the environment (passed on to the servers) measures without
posviz_app.runtime's ``gc.freeze()``. The four garbage-collection variants::

    python benchmarks/loadtest.py --only capacity --reruns 120                 # chosen
    python benchmarks/loadtest.py --only capacity --reruns 120 \\
        --server-option runner.postScriptGC=true                              # + Streamlit's
    POSVIZ_GC_FREEZE=0 python benchmarks/loadtest.py --only capacity --reruns 120
    POSVIZ_GC_FREEZE=0 python benchmarks/loadtest.py --only capacity --reruns 120 \\
        --server-option runner.postScriptGC=true                              # Streamlit's own

``--floor-page`` (``steady`` and ``capacity`` only) serves ``benchmarks/floor_page.py`` in
place of ``app.py``: the default view's page, element for element, with none of posviz's work
(constant text, one constant chart). Its CPU per rerun is Streamlit's own price for a page of
this shape (issue 42, item 6); its charts are not compared, so its correctness rows say n/a::

    python benchmarks/loadtest.py --only steady --sessions-steady 100 --think 1 --floor-page
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# `python benchmarks/loadtest.py`: import deploy and devtools, and the tests' reference
# (tests/reference.py, imported by its bare name as the tests do).
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from reference import (  # noqa: E402
    SCHEMES,
    View,
    book_head_attention,
    chart_problems,
    chip_problems,
    chips,
    decode_array,
    panels,
    token_ids,
    visible_token,
    window_token_ids,
)

from benchmarks import report as docs_report  # noqa: E402
from benchmarks.texts import long_text, varied_text  # noqa: E402
from deploy.scaleout import Cluster, start_cluster  # noqa: E402
from devtools.client import Run, SessionLost, StreamlitSession  # noqa: E402
from devtools.server import APP, Server, start_server  # noqa: E402

MAX_SESSIONS = 200
SCENARIOS = ("steady", "capacity", "cold", "explore", "flood", "balancer", "failover")
FLOOR_PAGE = ROOT / "benchmarks" / "floor_page.py"  # --floor-page: posviz's page, no work
FLOOR_SCENARIOS = ("steady", "capacity")  # a single server on the default view
DEFAULT_VIEW = View(text="A rose is a rose is a rose.")  # the app's defaults (posviz Settings)
TEXTS = (
    "Every effort moves you forward. The verdict: Gisburn had painted a rose, a rose, a rose; "
    "see https://example.com or mail a@b.org. <b>Bold</b> *stars* and [links](x) stay text.",
    "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace, 42 "
    "visitors counted 1,024 tiles while the gardener wrote emb_dim=768 and context_length=1024.",
    "Self-attention is blind to order: the same token gets the same vector wherever it stands.\n"
    "Positional embeddings, learned or sinusoidal, add what the position means; RoPE rotates.",
)
STUDENT_MOVES = ("seed", "window", "scheme", "stride", "emb_dim", "window", "text", "scheme",
                 "context_length", "scheme")  # fmt: skip
DEFAULT_VIEW_MOVES = ("seed", "scheme", "emb_dim", "scheme")  # what the default view offers
RECOVERY_SECONDS = 3.0  # flood: the server must be back to normal this long after it
RECONNECT_ATTEMPTS = 5  # a browser keeps trying; this client tries 5 times, 1 s apart
PLAN_STEPS = 800  # steps planned per student for timed runs (a student stops when done)
CAPACITY_WARMUP = 10  # capacity: reruns before measuring (caches, the first gc.freeze)
THINK_P95 = 0.35  # s: steady with a think time, a lecture hall's p95 (issue 42)


# --- plans: what each student does, and what the chart must then show ----------------------


@dataclass(frozen=True)
class Attention:
    """The Attention tab's settings of a student on it (issue 25): H heads, head K shown, the
    sentence moved to positions M … M+n-1."""

    heads: int = 4
    head: int = 0
    shift: int = 0


@dataclass(frozen=True)
class Step:
    """One interaction: open the link (``key`` None) or set widget ``key`` to ``value``."""

    key: str | None
    value: Any
    view: View  # what the app must show afterwards
    attention: Attention | None = None  # on the Attention tab: what its chart must show


def num_windows(view: View) -> int:
    n, t = len(token_ids(view.text)), view.context_length
    return 1 if n <= t else (n - t) // view.effective_stride + 1


def _differs(a: View, b: View) -> bool:
    """True if the reference charts of ``a`` and ``b`` differ in any bit."""
    return any(
        x.shape != y.shape or not np.array_equal(x.view(np.uint32), y.view(np.uint32))
        for x, y in zip(panels(a), panels(b), strict=True)
    )


def _candidates(view: View, key: str, start: View) -> Iterator[tuple[Any, View]]:
    """Values a student might set ``key`` to, with the view the app then shows.

    Seeds and dimensions toggle between two values (the start's and one more), so a student
    revisits a few tables, as students do, and the reference's table cache stays small.
    """
    t = view.context_length
    if key == "seed":
        seed = start.seed + 1 if view.seed == start.seed else start.seed
        yield seed, replace(view, seed=seed)
    elif key == "emb_dim":
        emb_dim = start.emb_dim + 2 if view.emb_dim == start.emb_dim else start.emb_dim
        yield emb_dim, replace(view, emb_dim=emb_dim)
    elif key == "scheme":
        first = SCHEMES.index(view.scheme)
        for offset in range(1, len(SCHEMES)):
            scheme = SCHEMES[(first + offset) % len(SCHEMES)]
            yield scheme, replace(view, scheme=scheme)
    elif key == "window":
        windows = num_windows(view)
        for offset in range(1, windows):
            window = (view.window + offset) % windows
            yield window, replace(view, window=window)
    elif key == "stride":
        for stride in (t + 1, t - 1, t // 2 + 1, t + 3):
            if 1 <= stride != t and stride != view.stride:
                yield stride, replace(view, stride=stride)
    elif key == "text":
        first = TEXTS.index(view.text) if view.text in TEXTS else -1
        for offset in range(1, len(TEXTS) + 1):
            text = TEXTS[(first + offset) % len(TEXTS)]
            if text != view.text:
                yield text, replace(view, text=text)
    elif key == "context_length":  # the app then sets stride = T and window = 0
        for new_t in (start.context_length + 2, start.context_length):
            if new_t != t and 2 <= new_t <= 24:
                yield new_t, replace(view, context_length=new_t, stride=None, window=0)
    else:
        raise ValueError(f"unknown move {key!r}")


def _valid(view: View) -> bool:
    return view.window < num_windows(view) and (view.scheme != "rope" or view.emb_dim % 2 == 0)


def make_plan(start: View, length: int, moves: Sequence[str], offset: int = 0) -> list[Step]:
    """``length`` steps from opening ``start``; each one changes the expected chart."""
    if not _valid(start):
        raise ValueError(f"invalid start view {start}")
    steps = [Step(None, None, start)]
    view, attempt = start, offset
    while len(steps) < length:
        if attempt - offset > 10 * length * len(moves):
            raise RuntimeError(f"cannot plan {length} steps from {start}")
        key = moves[attempt % len(moves)]
        attempt += 1
        for value, new in _candidates(view, key, start):
            if _valid(new) and _differs(view, new):
                steps.append(Step(key, value, new))
                view = new
                break
    return steps


def student_start(index: int, *, shared: bool = False) -> View:
    """A distinct first view for student ``index``: windows > 0, strides != T, every scheme."""
    text = TEXTS[index % len(TEXTS)]
    t = 4 + index % 9
    stride = (None, t + 1, t - 1, t // 2 + 1)[index % 4]
    view = View(
        text=text,
        context_length=t,
        emb_dim=48 if shared else 8 + 2 * (index % 12),
        seed=4242 if shared else 1_000 + index,
        stride=None if stride == t else stride,
        scheme=SCHEMES[index % len(SCHEMES)],
    )
    return replace(view, window=(index // 2) % num_windows(view))


ATTENTION_EVERY = 4  # one student in this many is on the Attention tab (issue 25: a quarter)
ATTENTION_SCHEMES = ("rope", "alibi", "t5", "sinusoidal", "learned", "none")


def attention_plan(index: int) -> list[Step]:
    """Student ``index`` on the Attention tab: open its link (head ``index % 4`` of 4, the
    sentence where it is), then move the sentence 8 positions later; on the learned scheme,
    whose table ends at T, show the next head instead. d = 48 splits into 4 heads of 12
    columns (RoPE rotates pairs)."""
    start = replace(student_start(index), emb_dim=48)
    scheme = ATTENTION_SCHEMES[(index // ATTENTION_EVERY) % len(ATTENTION_SCHEMES)]
    view = replace(start, scheme=scheme)
    opened = Attention(heads=4, head=index % 4)
    if scheme == "learned":
        moved = replace(opened, head=(opened.head + 1) % 4)
        second = Step("head", str(moved.head), view, moved)
    else:
        moved = replace(opened, shift=8)
        second = Step("shift", 8, view, moved)
    return [Step(None, None, view, opened), second]


def link(view: View, attention: Attention | None = None) -> dict[str, str]:
    """The URL query that opens ``view`` (as a student's link would), on the Attention tab if
    ``attention`` says so."""
    query = {
        "text": view.text,
        "context_length": str(view.context_length),
        "emb_dim": str(view.emb_dim),
        "seed": str(view.seed),
        "window": str(view.window),
        "scheme": view.scheme,
    }
    if view.stride is not None:
        query["stride"] = str(view.stride)
    if attention is not None:
        query |= {
            "tab": "attention",
            "heads": str(attention.heads),
            "head": str(attention.head),
            "shift": str(attention.shift),
        }
    return query


def attention_problems(figure: dict[str, Any], view: View, attention: Attention) -> list[str]:
    """How the Attention chart differs from the book's head ``attention.head`` of
    ``attention.heads`` (tests/reference.py ``book_head_attention``): its scores and weights
    panels (the third and fourth heatmaps, float32, empty above the diagonal) against the
    reference's float64 numbers, to float32's precision, and its rows at the positions the
    sentence was moved to (a relative scheme's scores do not change when it moves: the
    positions on the axis do)."""
    ids = window_token_ids(view)
    scores, weights = book_head_attention(
        view.scheme, seed=view.seed, emb_dim=view.emb_dim, context_length=view.context_length,
        token_ids=ids, num_heads=attention.heads, head=attention.head, start=attention.shift,
    )  # fmt: skip
    found = []
    heatmaps = [t for t in figure["data"] if t.get("type") == "heatmap"]
    for name, index, want in (("scores", 2, scores), ("weights", 3, weights)):
        if len(heatmaps) <= index:
            return [f"attention chart with {len(heatmaps)} heatmaps, not 4"]
        got = decode_array(heatmaps[index]["z"]).astype(np.float64)
        expected = want.numpy()
        below = np.tril(np.ones(expected.shape, dtype=bool))
        if got.shape != expected.shape:
            found.append(f"{name}: shape {got.shape}, expected {expected.shape}")
        elif not np.isnan(got[~below]).all():
            found.append(f"{name}: cells above the diagonal are not empty")
        elif not np.allclose(got[below], expected[below], rtol=1e-5, atol=1e-6):
            worst = float(np.abs(got[below] - expected[below]).max())
            found.append(f"{name}: differs from the reference by up to {worst:.3g}")
    rows = [str(label).split(" · ", 1)[0] for label in heatmaps[0].get("y", [])]
    want_rows = [str(attention.shift + p) for p in range(len(ids))]
    if rows != want_rows:
        found.append(f"rows at positions {rows[:3]}…, expected {want_rows[:3]}…")
    return found


def widget_change(key: str, value: Any) -> tuple[str, Any]:
    """The widget a move sets and the value the browser sends: the seed is typed into the
    text box ``seed_box``."""
    return ("seed_box", str(value)) if key == "seed" else (key, value)


# --- students -------------------------------------------------------------------------------


class PlanExhausted(RuntimeError):
    """A student did every step of its plan (make longer plans for longer runs)."""


@dataclass
class Record:
    """One completed interaction: what was expected, what came back, when."""

    view: View
    run: Run
    started: float
    finished: float
    reconnect: bool = False
    attention: Attention | None = None  # on the Attention tab


@dataclass
class Student:
    """A browser tab following its plan; records every run, never hides an error."""

    base_url: str
    index: int
    plan: list[Step]
    timeout: float = 120.0
    records: list[Record] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    reconnects: list[float] = field(default_factory=list)  # seconds to get the view back
    failed: list[float] = field(default_factory=list)  # start times of steps that failed
    notes: list[str] = field(default_factory=list)
    position: int = 0  # next step of the plan
    session: StreamlitSession = field(init=False)

    def __post_init__(self) -> None:
        self.session = StreamlitSession(self.base_url, timeout=self.timeout)

    @property
    def view(self) -> View:
        return self.plan[max(self.position - 1, 0)].view

    def step(self) -> Record:
        """Do the next step of the plan."""
        if self.position >= len(self.plan):
            raise PlanExhausted(f"session {self.index} did all {len(self.plan)} steps")
        step = self.plan[self.position]
        started = time.monotonic()
        if step.key is None:
            run = self.session.open(link(step.view, step.attention))
        else:
            run = self.session.change(*widget_change(step.key, step.value))
        record = Record(step.view, run, started, time.monotonic(), attention=step.attention)
        self.records.append(record)
        self.position += 1
        return record

    def rerun(self) -> Record:
        """Rerun the view on screen (the browser's "Rerun"): the same chart must come back."""
        started = time.monotonic()
        run = self.session.rerun()
        shown = self.plan[max(self.position - 1, 0)].attention
        record = Record(self.view, run, started, time.monotonic(), attention=shown)
        self.records.append(record)
        return record

    def recover(self) -> Record:
        """The socket died: reconnect to the same URL and cookie; expect the URL's view."""
        in_flight = self.plan[self.position] if self.position < len(self.plan) else None
        done = self.records[-1] if self.records else None
        expected = self.view
        if in_flight is not None and (
            done is None or self.session.query_string != done.run.query_string
        ):  # the link was opened, or the app had already written the in-flight step's URL
            expected, self.position = in_flight.view, self.position + 1
        started = time.monotonic()
        for attempt in range(RECONNECT_ATTEMPTS):  # as the browser: retry, a second apart
            try:
                run = self.session.reconnect()
                break
            except SessionLost:
                if attempt == RECONNECT_ATTEMPTS - 1:
                    raise
                time.sleep(1)  # the browser's reconnect back-off
        record = Record(expected, run, started, time.monotonic(), reconnect=True)
        self.records.append(record)
        self.reconnects.append(record.finished - started)
        return record

    def work(
        self,
        until: float,
        *,
        steps: int | None = None,
        may_reconnect: bool = False,
        think: float = 0.0,
        start_after: float = 0.0,
    ) -> None:
        """Follow the plan until ``until`` (monotonic) or ``steps`` steps; record errors.
        ``think``: seconds between seeing a view and the next change (a person reading it;
        0: the next change at once); ``start_after``: seconds before the first."""
        done = 0
        try:
            if start_after > 0:
                time.sleep(start_after)  # students do not all click at the same instant
            while time.monotonic() < until and (steps is None or done < steps):
                if done and think > 0:
                    time.sleep(think)  # the student reads the view
                if self.position >= len(self.plan):
                    self.notes.append(f"session {self.index}: plan of {len(self.plan)} done")
                    return
                try:
                    self.step()
                except SessionLost as lost:
                    if not may_reconnect:
                        raise
                    self.errors.append(f"(expected) session {self.index} lost: {lost}")
                    self.recover()
                done += 1
        except Exception as error:  # counted and reported, never hidden
            self.failed.append(time.monotonic())
            self.errors.append(f"session {self.index}: {type(error).__name__}: {error}")

    def close(self) -> None:
        self.session.close()


def verify(students: Sequence[Student]) -> tuple[int, int, list[str]]:
    """Every recorded chart and chip row against the reference.

    Returns (runs checked, runs with a problem, the problems).
    """
    checked, bad, problems = 0, 0, []
    for student in students:
        for record in student.records:
            run, view = record.run, record.view
            where = (
                f"session {student.index} step {view.scheme}/w{view.window}/T{view.context_length}"
            )
            found = list(run.errors)
            if run.chart is None:
                found.append("no chart in this run")
            elif record.attention is not None:
                found += attention_problems(run.chart, view, record.attention)
                found += chip_problems(run.markdown, view)
            else:
                found += chart_problems(run.chart, view) + chip_problems(run.markdown, view)
            checked += 1
            bad += bool(found)
            problems += [f"{where}: {p}" for p in found]
    return checked, bad, problems


def real_errors(students: Sequence[Student]) -> list[str]:
    return [e for s in students for e in s.errors if not e.startswith("(expected)")]


def run_together(students: Sequence[Student], work: Callable[[Student], None]) -> None:
    """Run ``work(student)`` in one thread each, all released at the same instant."""
    barrier = threading.Barrier(len(students))

    def body(student: Student) -> None:
        try:
            barrier.wait(timeout=120)
        except threading.BrokenBarrierError as error:
            student.errors.append(f"session {student.index}: start barrier broken: {error}")
            return
        work(student)

    threads = [threading.Thread(target=body, args=(s,), daemon=True) for s in students]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=3600)


# --- the server side: CPU and memory from /proc -------------------------------------------


def cpu_seconds(pid: int, tid: int | None = None) -> float:
    """User + system CPU time so far of process ``pid`` (``/proc/<pid>/stat``), or of its
    thread ``tid`` (``/proc/<pid>/task/<tid>/stat``; the main thread's ``tid`` is ``pid``)."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    with open(path, encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_kb(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (peak) of process ``pid`` in kB."""
    values = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                name, amount = line.split(":")
                values[name] = int(amount.split()[0])
    return values


class Watch(threading.Thread):
    """Polls a server's RSS every 0.1 s, with a caller-supplied progress counter."""

    def __init__(self, pid: int, progress: Callable[[], int]) -> None:
        super().__init__(daemon=True)
        self.pid, self.progress = pid, progress
        self.samples: list[tuple[float, int, int]] = []  # (time, progress, VmRSS kB)
        self.hwm_kb = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.1):
            try:
                values = memory_kb(self.pid)
            except OSError:
                return
            self.samples.append((time.monotonic(), self.progress(), values.get("VmRSS", 0)))
            self.hwm_kb = max(self.hwm_kb, values.get("VmHWM", 0))

    def finish(self) -> None:
        self.stop.set()
        self.join(timeout=5)


def log_errors(*logs: Path | None) -> list[str]:
    """Tracebacks in the servers' logs (an exception the user never saw is still an error).

    One entry per exception (a chained "During handling ..." traceback is the same one),
    named by its last line (``KeyError: ...``).
    """
    found = []
    for log in logs:
        if log is None or not log.exists():
            continue
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines):
            if not line.startswith("Traceback"):
                continue
            earlier = [text for text in lines[max(0, number - 3) : number] if text.strip()]
            if earlier and earlier[-1].startswith(("During handling", "The above exception")):
                continue  # the same error, chained
            found.append(f"{log.name}: {_final_exception(lines[number + 1 :])[:240]}")
    return found


def _final_exception(lines: list[str]) -> str:
    """The ``Name: message`` line that ends a traceback, following chained ones to the end."""
    chained = ("During handling", "The above exception", "Traceback")
    heads = [text for text in lines if text.strip() and not text[0].isspace()]
    for index, text in enumerate(heads):
        if text.startswith(chained):
            continue
        if index + 1 < len(heads) and heads[index + 1].startswith(chained[:2]):
            continue  # this exception caused another one: keep reading
        return text
    return "Traceback"


# --- statistics and the report ------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` 0.95 -> p95); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


@dataclass
class Row:
    scenario: str
    target: str
    measured: str
    met: bool | None  # None: not judged (too few samples, or not run)


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, scenario: str, target: str, measured: str, met: bool | None) -> None:
        self.rows.append(Row(scenario, target, measured, met))
        flag = {True: "yes", False: "NO", None: "n/a"}[met]
        print(f"  [{flag:>3}] {target}: {measured}", flush=True)

    def correctness(
        self, scenario: str, students: Sequence[Student], extra: list[str], *, compared: bool = True
    ) -> None:
        """Errors, and every chart against the reference; ``compared=False``: the floor page's
        constant chart, not compared (the row says so)."""
        if compared:
            checked, bad, problems = verify(students)
            charts, met = f"{checked - bad}/{checked} runs", not problems and checked > 0
        else:
            problems, met = [], None
            runs = sum(len(s.records) for s in students)
            charts = f"not compared: the floor page's constant chart ({runs} runs)"
        errors = real_errors(students) + extra
        self.add(scenario, "errors = 0", str(len(errors)), not errors)
        self.add(scenario, "every chart + chip row bitwise equal to the reference", charts, met)
        for line in (errors + problems)[:10]:
            print(f"      {line}")
        notes = [n for s in students for n in s.notes]
        if notes:
            print(f"      note: {notes[0]} (and {len(notes) - 1} more)")


def load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} CPUs"


# --- scenarios ------------------------------------------------------------------------------


@dataclass
class Context:
    args: argparse.Namespace
    deadline: float
    logs: Path
    report: Report

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def server(self, name: str) -> Server:
        app = FLOOR_PAGE if self.args.floor_page else APP
        return start_server(app=app, log=self.logs / f"{name}.log", options=self.args.server_option)

    def cluster(self, name: str, replicas: int) -> Cluster:
        return start_cluster(
            replicas=replicas, options=self.args.server_option, log_dir=self.logs / name
        )


def steady(ctx: Context) -> None:
    """Many sessions on the default view, closed loop: CPU per rerun and RSS over 1,000 reruns."""
    args = ctx.args
    sessions, total = args.sessions_steady, args.reruns
    per_session = math.ceil(total / sessions)
    plan = make_plan(DEFAULT_VIEW, per_session + 1, DEFAULT_VIEW_MOVES)
    server = ctx.server("steady")
    students = [Student(server.url, i, plan) for i in range(sessions)]
    watch = Watch(server.pid, lambda: sum(len(s.records) for s in students) - sessions)
    think = args.think
    try:
        run_together(students, lambda s: s.work(ctx.deadline, steps=1))  # open: not measured
        watch.start()
        cpu_before, started = cpu_seconds(server.pid), time.monotonic()
        run_together(
            students,
            lambda s: s.work(
                ctx.deadline,
                steps=per_session,
                think=think,
                start_after=think * s.index / sessions,
            ),
        )
        cpu = cpu_seconds(server.pid) - cpu_before
        wall = time.monotonic() - started
    finally:
        watch.finish()
        for student in students:
            student.close()
        server.stop()
    reruns = sum(len(s.records) for s in students) - sessions
    latencies = [r.run.latency for s in students for r in s.records[1:]]
    per_rerun_ms = cpu / max(reruns, 1) * 1000
    print(f"  {sessions} sessions, {reruns} reruns in {wall:.1f} s ({reruns / wall:.1f}/s), "
          f"latency p50 {percentile(latencies, 0.5):.3f} s, p95 {percentile(latencies, 0.95):.3f}"
          f" s; server CPU {cpu:.1f} s")  # fmt: skip
    ctx.report.add(
        "steady",
        "server CPU per rerun <= 25 ms (>= 60 reruns, default view)",
        f"{per_rerun_ms:.1f} ms over {reruns} reruns",
        per_rerun_ms <= 25 if reruns >= 60 else None,
    )
    if think > 0:
        p95 = percentile(latencies, 0.95)
        ctx.report.add(
            "steady",
            f"reruns p95 <= {THINK_P95:g} s ({sessions} students, {think:g} s to read each view)",
            f"p95 {p95:.3f} s, p50 {percentile(latencies, 0.5):.3f} s over {len(latencies)}",
            p95 <= THINK_P95 if len(latencies) >= 100 else None,
        )
    after_200 = [rss for _, done, rss in watch.samples if done >= 200]
    if reruns >= 1000 and after_200:
        growth = (watch.samples[-1][2] - after_200[0]) / 1024
        ctx.report.add(
            "steady",
            "RSS flat over 1,000 reruns (growth after rerun 200 <= 10 MB)",
            f"{after_200[0] / 1024:.0f} -> {watch.samples[-1][2] / 1024:.0f} MB "
            f"({growth:+.1f} MB), peak {watch.hwm_kb / 1024:.0f} MB",
            growth <= 10,
        )
    else:
        last = watch.samples[-1][2] / 1024 if watch.samples else math.nan
        ctx.report.add(
            "steady",
            "RSS flat over 1,000 reruns (growth after rerun 200 <= 10 MB)",
            f"only {reruns} reruns (RSS at the end {last:.0f} MB)",
            None,
        )
    ctx.report.correctness(
        "steady", students, log_errors(server.log), compared=not ctx.args.floor_page
    )


def capacity(ctx: Context) -> None:
    """One session reruns the default view, one rerun at a time: what one rerun costs."""
    reruns = ctx.args.reruns
    server = ctx.server("capacity")
    student = Student(server.url, 0, [Step(None, None, DEFAULT_VIEW)])
    readings: list[float] = []  # VmRSS MB after the warm-up, then every 100 reruns
    used = loop = 0.0
    try:
        started = time.monotonic()
        run = student.session.open("")  # the bare link: the app's defaults
        student.records.append(Record(DEFAULT_VIEW, run, started, time.monotonic()))
        student.position = 1
        for _ in range(CAPACITY_WARMUP):
            student.rerun()
        readings.append(memory_kb(server.pid)["VmRSS"] / 1024)
        used, loop = cpu_seconds(server.pid), cpu_seconds(server.pid, server.pid)
        for count in range(1, reruns + 1):
            if ctx.remaining() < 0:
                raise TimeoutError(f"deadline reached after {count - 1} reruns")
            student.rerun()
            if count % 100 == 0:
                readings.append(memory_kb(server.pid)["VmRSS"] / 1024)
        used = cpu_seconds(server.pid) - used
        loop = cpu_seconds(server.pid, server.pid) - loop
    except Exception as error:  # counted and reported, never hidden
        student.errors.append(f"session 0: {type(error).__name__}: {error}")
    finally:
        student.close()
        server.stop()
    done = max(len(student.records) - 1 - CAPACITY_WARMUP, 0)
    measured = done == reruns
    latencies = [r.run.latency for r in student.records[1 + CAPACITY_WARMUP :]]
    per_rerun = 1000 / max(done, 1)
    print("  VmRSS MB every 100 reruns: " + " ".join(f"{r:.0f}" for r in readings))
    ctx.report.add(
        "capacity",
        "server CPU per rerun <= 25 ms (identical reruns of the default view, >= 60)",
        f"{used * per_rerun:.1f} ms over {done} reruns: event loop {loop * per_rerun:.1f} ms, "
        f"script threads and collection {(used - loop) * per_rerun:.1f} ms; wall p50 "
        f"{percentile(latencies, 0.5) * 1000:.0f} ms"
        if measured
        else f"not measured: {done} of {reruns} reruns",
        used * per_rerun <= 25 if measured and done >= 60 else None,
    )
    rss = f"VmRSS {readings[0]:.0f} MB after the warm-up" if readings else "no RSS reading"
    growth = math.nan
    if len(readings) > 2:  # readings[2] is taken at rerun 200
        growth = readings[-1] - readings[2]
        rss += f", {readings[2]:.0f} MB at rerun 200, {readings[-1]:.0f} MB at the end"
        rss += f" ({growth:+.1f} MB)"
    ctx.report.add(
        "capacity",
        "RSS flat over 1,000 reruns (growth after rerun 200 <= 10 MB)",
        rss,
        growth <= 10 if measured and done >= 1000 else None,
    )
    ctx.report.correctness(
        "capacity", [student], log_errors(server.log), compared=not ctx.args.floor_page
    )


def cold(ctx: Context) -> None:
    """N sessions open their links at the same instant on a fresh server.

    Then another connection sends Streamlit's ``clear_cache`` message (any client can: it
    empties the caches of every user) and everyone does one more step on cold caches.
    """
    count = ctx.args.sessions_cold
    plans = [  # made before the server starts: nothing between its start and `try` can fail
        attention_plan(i)
        if i % ATTENTION_EVERY == ATTENTION_EVERY - 1
        else make_plan(student_start(i, shared=i % 2 == 0), 2, STUDENT_MOVES, i)
        for i in range(count)
    ]
    server = ctx.server("cold")
    students = [Student(server.url, i, plan) for i, plan in enumerate(plans)]
    watch = Watch(server.pid, lambda: sum(len(s.records) for s in students))
    watch.start()
    janitor = StreamlitSession(server.url, timeout=120)
    try:
        run_together(students, lambda s: s.work(ctx.deadline, steps=1))
        hwm = max(watch.hwm_kb, memory_kb(server.pid).get("VmHWM", 0)) / 1024
        janitor.open({})
        janitor.clear_cache()
        janitor.rerun()  # runs after the clear: the caches are empty now
        run_together(students, lambda s: s.work(ctx.deadline, steps=1))
    finally:
        watch.finish()
        janitor.close()
        for student in students:
            student.close()
        server.stop()
    first = [s.records[0].run.latency for s in students if s.records]
    second = [r.run.latency for s in students for r in s.records[1:]]
    p95 = percentile(first, 0.95)
    print(f"  {count} sessions at once: {len(first)} first views, p50 "
          f"{percentile(first, 0.5):.2f} s, max {max(first, default=math.nan):.2f} s; after "
          f"clear_cache: {len(second)} steps, p50 {percentile(second, 0.5):.2f} s")  # fmt: skip
    ctx.report.add("cold", "peak RSS <= 600 MB (first views)", f"{hwm:.0f} MB", hwm <= 600)
    ctx.report.add(
        "cold",
        f"first view p95 <= 5 s ({count} sessions at the same instant)",
        f"{p95:.2f} s ({len(first)} views)",
        p95 <= 5 and len(first) == count if count >= 60 else None,
    )
    ctx.report.correctness("cold", students, log_errors(server.log))


EXPLORE_SEEDS = (101, 202, 303)  # students share three seeds, as a class following along


def explore_plan(index: int) -> list[Step]:
    """Student ``index`` of the ``explore`` scenario: big views, every scheme, and each step
    changes the chart (T = 1,024 windows of a 25,000-character text)."""
    start = View(
        text=long_text(index),
        context_length=1024,
        emb_dim=768,
        seed=EXPLORE_SEEDS[index % len(EXPLORE_SEEDS)],
        scheme=SCHEMES[index % len(SCHEMES)],
    )
    start = replace(start, window=index % num_windows(start))
    moves: list[tuple[str, Any]] = [
        ("scheme", SCHEMES[(index + 1) % len(SCHEMES)]),
        ("window", (start.window + 1) % num_windows(start)),
        ("emb_dim", 512),
        ("scheme", SCHEMES[(index + 2) % len(SCHEMES)]),
        ("context_length", 256),  # the app then sets stride = T and window = 0
        ("window", 7),
        ("emb_dim", 768),
        ("scheme", SCHEMES[(index + 3) % len(SCHEMES)]),
        ("window", 3),
        ("context_length", 1024),
        ("text", varied_text(index)),  # ~1,100 distinct tokens from the whole vocabulary
    ]
    steps, view = [Step(None, None, start)], start
    for key, value in moves:
        if key == "context_length":
            view = replace(view, context_length=value, stride=None, window=0)
        else:
            view = replace(view, **{key: value})
        if not _valid(view) or not _differs(steps[-1].view, view):
            raise ValueError(f"explore plan {index}: {key}={str(value)[:40]!r} is not a new view")
        steps.append(Step(key, value, view))
    return steps


WORD_ORDER_PAIR = (  # 126 tokens each, the same ones in another order (compare takes <= 128)
    "The dog bites the man." + " The dog bites the man." * 20,
    "The man bites the dog." + " The man bites the dog." * 20,
)


def explore_word_order(index: int) -> tuple[dict[str, str], list[tuple[str, Any]]]:
    """The Word-order phase of student ``index``: its link (the tab opens on a link with a
    second text; the first text is 24,000 characters whose first window, T = 126, is the
    pair's first text) and the widget changes made there."""
    query = {
        "text": WORD_ORDER_PAIR[0] + " " + long_text(index)[:24_000],
        "compare": WORD_ORDER_PAIR[1],
        "context_length": "126",
        "emb_dim": "768",
        "seed": str(EXPLORE_SEEDS[index % len(EXPLORE_SEEDS)]),
        "scheme": SCHEMES[index % len(SCHEMES)],
    }
    changes = [
        ("scheme", SCHEMES[(index + 1) % len(SCHEMES)]),
        ("emb_dim", 512),
        ("scheme", SCHEMES[(index + 2) % len(SCHEMES)]),
        ("emb_dim", 768),
    ]
    return query, changes


def chip_prefix_problems(markdown: list[str], view: View) -> list[str]:
    """The chips shown (a long window shows its first 64, the rest behind "and N more")
    against the first tokens of the window's reference."""
    shown = chips(markdown)
    ids = window_token_ids(view)
    want = [(p, visible_token(i), i) for p, i in enumerate(ids[: len(shown)])]
    if not shown or len(shown) > len(ids) or shown != want:
        wrong = [c for c in shown if c not in want][:3]
        return [f"chips: {len(shown)} shown, first differences {wrong}"]
    return []


def explore(ctx: Context) -> None:
    """A class exploring freely: big views, every scheme, the Word-order tab; peak RSS."""
    count = ctx.args.sessions_explore
    plans = [explore_plan(i) for i in range(count)]
    word_order = [explore_word_order(i) for i in range(count)]
    server = ctx.server("explore")
    students = [Student(server.url, i, plan, timeout=300) for i, plan in enumerate(plans)]
    compare_runs: list[tuple[int, Run]] = []
    compare_errors: list[str] = []
    lock = threading.Lock()

    def compare_phase(student: Student) -> None:
        query, changes = word_order[student.index]
        session = StreamlitSession(server.url, timeout=300)
        try:
            runs = [session.open(query)]
            for key, value in changes:
                if time.monotonic() > ctx.deadline:
                    break
                runs.append(session.change(key, value))
        except Exception as error:  # counted and reported, never hidden
            with lock:
                compare_errors.append(f"session {student.index}: {type(error).__name__}: {error}")
            runs = []
        finally:
            session.close()
        with lock:
            compare_runs.extend((student.index, run) for run in runs)

    watch = Watch(server.pid, lambda: sum(len(s.records) for s in students) + len(compare_runs))
    watch.start()
    started = time.monotonic()
    try:
        run_together(students, lambda s: s.work(ctx.deadline))
        run_together(students, compare_phase)
        wall = time.monotonic() - started
        hwm = max(watch.hwm_kb, memory_kb(server.pid).get("VmHWM", 0)) / 1024
        rss = memory_kb(server.pid).get("VmRSS", 0) / 1024
    finally:
        watch.finish()
        for student in students:
            student.close()
        server.stop()
    runs = sum(len(s.records) for s in students)
    print(f"  {count} sessions at once: {runs} Embeddings runs and {len(compare_runs)} "
          f"Word-order runs in {wall:.0f} s (T up to 1,024, d up to 768, 25,000-character "
          f"texts, every scheme); server peak RSS {hwm:.0f} MB, {rss:.0f} MB at the "
          "end")  # fmt: skip
    ctx.report.add(
        "explore",
        "peak RSS <= 500 MB (a class exploring freely)",
        f"{hwm:.0f} MB over {runs + len(compare_runs)} runs",
        hwm <= 500 and runs == sum(len(p) for p in plans),
    )
    errors = real_errors(students) + compare_errors + log_errors(server.log)
    problems, checked = [], 0
    for student in students:
        for record in student.records:
            found = list(record.run.errors)
            if record.run.chart is None:
                found.append("no chart")
            else:
                found += chart_problems(record.run.chart, record.view)
                found += chip_prefix_problems(record.run.markdown, record.view)
            problems += [f"session {student.index}: {p}" for p in found]
            checked += not found
    for index, run in compare_runs:
        problems += [f"session {index} Word order: {e}" for e in run.errors]
        if run.chart is None:
            problems.append(f"session {index} Word order: no comparison chart")
    ctx.report.add("explore", "errors = 0", str(len(errors)), not errors)
    ctx.report.add(
        "explore",
        "Embeddings charts bitwise equal to the reference; Word order compared",
        f"{checked}/{runs} charts; {len(compare_runs)} Word-order runs",
        not problems and checked == runs > 0,
    )
    for line in (errors + problems)[:10]:
        print(f"      {line[:300]}")


def _health_prober(url: str, stop: threading.Event, out: list[tuple[float, float]]) -> None:
    while not stop.wait(0.1):
        started = time.monotonic()
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as response:
                response.read()
            out.append((started, time.monotonic() - started))
        except OSError:
            out.append((started, math.inf))


def _flood(flooder: StreamlitSession, count: int, seconds: float, deadline: float) -> str:
    """Send ``count`` rerun requests evenly over ``seconds``, never reading; say how it went."""
    started = time.monotonic()
    pace = seconds / count
    for sent in range(1, count + 1):
        flooder.set_widget("seed_box", str(123 + sent % 2))  # two views: each a new request
        try:
            flooder.send_rerun()
        except SessionLost as lost:  # the server stopped reading from this client
            return f"{sent - 1} sent, then the server stopped reading ({lost})"
        if time.monotonic() > deadline:
            return f"{sent} sent, then the deadline"
        ahead = started + sent * pace - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)  # an even rate
    return f"{count} sent"


def flood(ctx: Context) -> None:
    """One client floods rerun requests without reading; others keep working."""
    args = ctx.args
    count = args.sessions_flood
    plans = [make_plan(student_start(i), PLAN_STEPS, STUDENT_MOVES, i) for i in range(count)]
    server = ctx.server("flood")
    others = [Student(server.url, i, plan, 60) for i, plan in enumerate(plans)]
    flooder = StreamlitSession(server.url, timeout=10)
    health: list[tuple[float, float]] = []
    stop = threading.Event()
    prober = threading.Thread(target=_health_prober, args=(server.url, stop, health), daemon=True)
    observe_until = [math.inf]

    def keep_working(student: Student) -> None:  # one step at a time until the window closes
        while time.monotonic() < min(observe_until[0], ctx.deadline) and not student.errors:
            student.work(min(observe_until[0], ctx.deadline), steps=1)

    workers = [threading.Thread(target=keep_working, args=(s,), daemon=True) for s in others]
    how, baseline = "not started", []
    flood_start = flood_end = time.monotonic()
    try:
        run_together(others, lambda s: s.work(ctx.deadline, steps=4))  # open + baseline
        baseline = [r.run.latency for s in others for r in s.records[1:]]
        flooder.open({})
        prober.start()
        for worker in workers:
            worker.start()
        flood_start = time.monotonic()
        how = _flood(flooder, args.flood_messages, args.flood_seconds, ctx.deadline - 60)
        flood_end = time.monotonic()
        observe_until[0] = flood_end + args.observe
        for worker in workers:
            worker.join(timeout=max(1.0, observe_until[0] - time.monotonic() + 90))
    finally:
        observe_until[0] = -math.inf  # a worker still waiting stops after its step
        stop.set()
        prober.join(timeout=10)
        flooder.close()
        for student in others:
            student.close()
        server.stop()
    during = [lat for t, lat in health if flood_start <= t <= flood_end]
    health_max = max(during, default=math.nan)
    overlapping = [
        r for s in others for r in s.records if r.started < flood_end and r.finished > flood_start
    ]
    lost = [t for s in others for t in s.failed if t > flood_start]  # never answered: infinite
    during_p95 = percentile([r.run.latency for r in overlapping] + [math.inf] * len(lost), 0.95)
    normal = max(2 * percentile(baseline, 0.95), 0.25)
    settled = flood_end + RECOVERY_SECONDS
    after = [r.run.latency for s in others for r in s.records if r.started >= settled]
    after_p95 = percentile(after, 0.95) if not lost else math.inf
    health_after = max((lat for t, lat in health if t >= settled), default=math.nan)
    print(f"  flood: {how} in {flood_end - flood_start:.1f} s, never read; {len(overlapping)} "
          f"reruns of {len(others)} other sessions overlapped it; {len(during)} health probes; "
          f"normal rerun <= {normal:.2f} s (2x baseline p95)")  # fmt: skip
    ctx.report.add(
        "flood",
        "health endpoint <= 0.5 s during the flood",
        f"max {health_max:.2f} s over {len(during)} probes",
        health_max <= 0.5 if during else False,
    )
    ctx.report.add(
        "flood",
        "other sessions' reruns p95 <= 1 s during the flood",
        f"p95 {during_p95:.2f} s over {len(overlapping)} reruns ({len(lost)} never answered)",
        during_p95 <= 1 if overlapping or lost else False,
    )
    ctx.report.add(
        "flood",
        f"back to normal {RECOVERY_SECONDS:g} s after it (reruns p95 <= 2x baseline p95)",
        f"p95 {after_p95:.2f} s over {len(after)} reruns (baseline p95 "
        f"{percentile(baseline, 0.95):.2f} s), health max {health_after:.2f} s",
        bool(after) and after_p95 <= normal and health_after <= 0.5,
    )
    ctx.report.correctness("flood", others, log_errors(server.log))


@dataclass
class Loop:
    """A closed-loop run: who did what, for how long, at what CPU cost."""

    students: list[Student] = field(default_factory=list)
    seconds: float = math.nan
    client_cpu: float = math.nan  # this process (the load generator), all threads
    server_cpu: float = math.nan  # every streamlit replica
    haproxy_cpu: float = 0.0

    @property
    def runs(self) -> list[Record]:
        return [r for s in self.students for r in s.records]


def _closed_loop(ctx: Context, url: str, pids: Sequence[int], haproxy: int | None) -> Loop:
    loop = Loop(
        [
            Student(url, i, make_plan(student_start(i), PLAN_STEPS, STUDENT_MOVES, i))
            for i in range(ctx.args.sessions_balancer)
        ]
    )
    run_together(loop.students, lambda s: s.work(ctx.deadline, steps=3))  # open + warm caches
    for student in loop.students:
        student.records.clear()
    before = (time.monotonic(), time.process_time(), [cpu_seconds(p) for p in pids])
    haproxy_before = cpu_seconds(haproxy) if haproxy else 0.0
    until = min(time.monotonic() + ctx.args.seconds, ctx.deadline)
    run_together(loop.students, lambda s: s.work(until))
    loop.seconds = time.monotonic() - before[0]
    loop.client_cpu = time.process_time() - before[1]
    loop.server_cpu = sum(cpu_seconds(p) for p in pids) - sum(before[2])
    loop.haproxy_cpu = cpu_seconds(haproxy) - haproxy_before if haproxy else 0.0
    return loop


def balancer(ctx: Context) -> None:
    """Reruns/s of one replica, then of 2 replicas behind HAProxy, same closed-loop work."""
    one, two = Loop(), Loop()
    logs: list[Path | None] = []
    server = ctx.server("balancer-one")
    logs.append(server.log)
    try:
        one = _closed_loop(ctx, server.url, [server.pid], None)
    finally:
        for student in one.students:
            student.close()
        server.stop()
    cluster = ctx.cluster("balancer-two", replicas=2)
    logs += [r.log for r in cluster.replicas]
    try:
        pids = [r.pid for r in cluster.replicas]
        haproxy = cluster.haproxy.pid if cluster.haproxy else None
        two = _closed_loop(ctx, cluster.url, pids, haproxy)
    finally:
        for student in two.students:
            student.close()
        cluster.stop()
    rates = {}
    for name, loop in (("1 replica", one), ("2 replicas + HAProxy", two)):
        runs = len(loop.runs)
        rates[name] = runs / loop.seconds
        latency = [r.run.latency for r in loop.runs]
        print(f"  {name}: {runs} reruns in {loop.seconds:.1f} s = {rates[name]:.1f}/s, p50 "
              f"{percentile(latency, 0.5):.3f} s, p95 {percentile(latency, 0.95):.3f} s; CPU per "
              f"rerun: servers {loop.server_cpu / max(runs, 1) * 1000:.0f} ms, HAProxy "
              f"{loop.haproxy_cpu / max(runs, 1) * 1000:.1f} ms, load generator "
              f"{loop.client_cpu / max(runs, 1) * 1000:.0f} ms")  # fmt: skip
    ratio = rates["2 replicas + HAProxy"] / rates["1 replica"] if rates["1 replica"] else math.nan
    p95 = percentile([r.run.latency for r in two.runs], 0.95)
    ctx.report.add(
        "balancer",
        "2 replicas behind HAProxy >= 1.7x the reruns/s of one",
        f"{ratio:.2f}x ({rates['1 replica']:.1f} -> {rates['2 replicas + HAProxy']:.1f} "
        f"reruns/s, {ctx.args.sessions_balancer} sessions)",
        ratio >= 1.7,
    )
    ctx.report.add("balancer", "p95 <= 0.5 s through HAProxy", f"{p95:.3f} s", p95 <= 0.5)
    ctx.report.correctness("balancer", [*one.students, *two.students], log_errors(*logs))


def _restored(student: Student, n: int) -> bool:
    """Record ``n`` is not a reconnect, or it shows the view of the URL: the reference's, or the
    same numbers as the chart just before (the app's own view of that URL)."""
    record, before = student.records[n], student.records[n - 1]
    if not record.reconnect:
        return True
    chart = record.run.chart
    if chart is None:
        return False
    same = (
        record.view == before.view
        and before.run.chart is not None
        and _z(chart) == _z(before.run.chart)
    )
    return same or not chart_problems(chart, record.view)


def _z(figure: dict[str, Any]) -> list[bytes]:
    return [np.asarray(trace["z"]).tobytes() for trace in figure["data"]]


def failover(ctx: Context) -> None:
    """Kill one of 2 replicas mid-run: its students reconnect and get the same numbers."""
    args = ctx.args
    plans = [
        make_plan(student_start(i), PLAN_STEPS, STUDENT_MOVES, i)
        for i in range(args.sessions_failover)
    ]
    cluster = ctx.cluster("failover", replicas=2)
    students = [Student(cluster.url, i, plan) for i, plan in enumerate(plans)]
    victims: list[int] = []
    try:
        run_together(students, lambda s: s.work(ctx.deadline, steps=2))
        victims = [s.index for s in students if s.session.cookies.get("SERVERID") == "replica1"]
        until = min(time.monotonic() + args.seconds, ctx.deadline)
        killer = threading.Timer(args.seconds / 3, cluster.replicas[0].kill)
        killer.start()
        run_together(students, lambda s: s.work(until, may_reconnect=True))
        killer.join()
    finally:
        for student in students:
            student.close()
        cluster.stop()
    moved = [s for s in students if s.reconnects]
    restored = [s for s in moved if all(_restored(s, n) for n in range(1, len(s.records)))]
    times = [t for s in moved for t in s.reconnects]
    print(f"  {len(victims)} of {len(students)} sessions were on the killed replica; "
          f"{len(moved)} reconnected (p95 {percentile(times, 0.95):.2f} s), "
          f"now on {sorted({s.session.cookies.get('SERVERID') for s in moved})}")  # fmt: skip
    ctx.report.add(
        "failover",
        "every student of the killed replica gets the same numbers back",
        f"{len(restored)}/{len(victims)} restored ({len(moved)} reconnected)",
        bool(victims) and len(restored) == len(victims) and len(moved) == len(victims),
    )
    ctx.report.correctness("failover", students, log_errors(*(r.log for r in cluster.replicas)))


# --- main -----------------------------------------------------------------------------------


def print_table(report: Report) -> None:
    rows = [("scenario", "target", "measured", "met?")] + [
        (r.scenario, r.target, r.measured, {True: "yes", False: "NO", None: "n/a"}[r.met])
        for r in report.rows
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    print()
    for number, row in enumerate(rows):
        print(" | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        if number == 0:
            print("-+-".join("-" * width for width in widths))


def write_docs(
    report: Report, chosen: Sequence[str], when: docs_report.Stamp, argv: Sequence[str] | None
) -> None:
    """Each scenario's rows into its own block of docs/performance.md (``loadtest <name>``),
    so runs of different scenarios each keep their stamp."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    command = "python benchmarks/loadtest.py " + " ".join(arguments)
    met = {True: "yes", False: "**no**", None: "n/a"}
    for name in chosen:
        rows = [(r.target, r.measured, met[r.met]) for r in report.rows if r.scenario == name]
        body = docs_report.table(["target", "measured", "met?"], rows)
        docs_report.write_block(f"loadtest {name}", body, when=when, command=command)


def options(pairs: Sequence[str]) -> dict[str, str]:
    parsed = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or "." not in name:
            raise argparse.ArgumentTypeError(f"--server-option takes section.name=value: {pair}")
        parsed[name] = value
    return parsed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios")
    parser.add_argument("--timeout", type=float, default=1800, help="deadline for everything, s")
    parser.add_argument("--quick", action="store_true", help="small counts (a smoke run)")
    parser.add_argument(
        "--reruns",
        type=int,
        default=1000,
        help="steady: reruns in total; capacity: reruns after the warm-up",
    )
    parser.add_argument("--sessions-steady", type=int, default=10)
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="steady: seconds each student reads a view before the next change (0: at once)",
    )
    parser.add_argument("--sessions-cold", type=int, default=60)
    parser.add_argument("--sessions-explore", type=int, default=8)
    parser.add_argument("--sessions-flood", type=int, default=4, help="sessions besides it")
    parser.add_argument("--flood-messages", type=int, default=10_000)
    parser.add_argument(
        "--flood-seconds", type=float, default=10, help="flood: send them evenly over this time"
    )
    parser.add_argument("--observe", type=float, default=10, help="flood: seconds watched after")
    parser.add_argument("--sessions-balancer", type=int, default=8)
    parser.add_argument("--sessions-failover", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20, help="balancer/failover run time")
    parser.add_argument(
        "--server-option",
        action="append",
        default=[],
        metavar="SECTION.NAME=VALUE",
        help="extra streamlit option for every server, e.g. runner.postScriptGC=true",
    )
    parser.add_argument(
        "--floor-page",
        action="store_true",
        help="steady/capacity: serve benchmarks/floor_page.py (the page, none of posviz's work)",
    )
    parser.add_argument("--json", type=Path, help="also write the table here")
    parser.add_argument(
        "--docs",
        action="store_true",
        help="also write each scenario's rows into its block of docs/performance.md",
    )
    args = parser.parse_args(argv)
    args.server_option = options(args.server_option)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(SCENARIOS))
    if unknown:
        parser.error(f"unknown scenarios {unknown}; known: {', '.join(SCENARIOS)}")
    if args.floor_page and set(chosen) - set(FLOOR_SCENARIOS):
        parser.error(
            f"--floor-page serves the default view only: --only {','.join(FLOOR_SCENARIOS)}"
        )
    if args.floor_page and args.docs:
        parser.error("--floor-page is a comparison, not the app: no --docs")
    if args.quick:
        args.reruns, args.sessions_cold, args.flood_messages = 120, 20, 2_000
        args.sessions_explore = 3
        args.seconds, args.observe = 10, 6
    for name in ("sessions_steady", "sessions_cold", "sessions_explore", "sessions_flood",
                 "sessions_balancer", "sessions_failover"):  # fmt: skip
        if not 1 <= getattr(args, name) <= MAX_SESSIONS:
            parser.error(f"--{name.replace('_', '-')} must be from 1 to {MAX_SESSIONS}")
    if not 0 <= args.think <= 60:
        parser.error("--think must be 0..60 seconds")
    if not 1 <= args.flood_messages <= 100_000 or not 1 <= args.reruns <= 20_000:
        parser.error("--flood-messages must be 1..100000 and --reruns 1..20000")

    started = time.monotonic()
    logs = Path(tempfile.mkdtemp(prefix="posviz-loadtest-"))
    report = Report()
    ctx = Context(args, started + args.timeout, logs, report)
    load_before = load_text()
    docs_started = docs_report.start()
    print(f"posviz load test: {', '.join(chosen)}; deadline {args.timeout:g} s; logs in {logs}")
    print(f"before: {load_before}", flush=True)
    for name in chosen:
        if ctx.remaining() < 30:
            report.add(name, "(scenario)", "not run: deadline reached", None)
            continue
        print(f"\n== {name} ({load_text()})", flush=True)
        try:
            globals()[name](ctx)
        except Exception as error:  # a scenario that could not run is a failed scenario
            report.add(name, "(scenario ran)", f"{type(error).__name__}: {error}", False)
    print_table(report)
    load_after = load_text()
    print(f"\nbefore: {load_before}\nafter:  {load_after}\nwall time "
          f"{time.monotonic() - started:.0f} s; server logs in {logs}")  # fmt: skip
    if args.docs:
        write_docs(report, chosen, docs_report.stamp(docs_started), argv)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "rows": [r.__dict__ for r in report.rows],
                    "load_before": load_before,
                    "load_after": load_after,
                    "argv": sys.argv[1:],
                },
                indent=2,
            )
        )
    return 0 if report.rows and all(r.met for r in report.rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
