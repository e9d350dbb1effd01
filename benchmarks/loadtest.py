"""Lecture-hall load test: many students at once on one `streamlit run app.py`.

    python benchmarks/loadtest.py --sessions 60

Starts the real server on 127.0.0.1 (loopback only, a free port), opens ``--sessions``
concurrent sessions over Streamlit's own websocket protocol (``/_stcore/stream``, the
``BackMsg``/``ForwardMsg`` protobufs the browser speaks), and makes every session do the same
sequence of interactions at the same moment, each with its OWN settings:

1. ``open``: load the app from a link with its own text, seed, emb_dim and context length.
   Half the sessions share one (seed, emb_dim) that no one has used yet, so ~30 sessions build
   the same cached table at the same time (concurrent first use).
2. ``seed``: type a new seed;  3. ``emb_dim``: move the slider;  4. ``text``: paste a new text;
5. ``context_length``: move the slider.

Between steps 3 and 4 an extra connection sends Streamlit's ``clear_cache`` message (the one
the "Clear cache" menu item sends, which empties the process-wide caches of every user), so
the later steps also run with a cold cache.

It reports p50/p95/max latency per interaction (request sent -> ``script_finished``
received), errors (exceptions, ``st.error``, timeouts, protocol problems: must be 0), the
server's peak RSS (VmHWM, polled from /proc), and checks that every session got its own
numbers: each chart's three ``z`` arrays are decoded and compared with torch's
``manual_seed`` + ``nn.Embedding`` for that session's settings (no cross-talk). It is bounded:
at most 200 sessions, one deadline for the whole run (``--timeout``), and it always stops the
server it started.

Why the protocol and not 60 headless Chromium pages: this machine has 2 cores. Sixty
Chromium renderers (each ~150 MB, and Plotly drawing three heatmaps on every rerun) would
saturate the CPU themselves and measure the browsers, not the server. The websocket client
sends exactly what a browser sends for each interaction, and lets the test read back the
chart's numbers for the cross-talk check. The browser path itself is covered by the Playwright
tests in tests/.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import numpy as np
import torch
import websocket  # websocket-client
from streamlit.elements.lib.utils import user_key_from_element_id
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.server import start_server  # noqa: E402
from posviz.tokenizer import encode  # noqa: E402

MAX_SESSIONS = 200
STEPS = ("open", "seed", "emb_dim", "text", "context_length")
SHARED_SEED, SHARED_EMB_DIM = 4242, 96  # the table half the sessions first use together
WORDS = [
    "every",
    "effort",
    "moves",
    "you",
    "a",
    "rose",
    "is",
    "the",
    "verdict",
    "gisburn",
    "tea",
    "sunlit",
    "terraces",
    "place",
]


# --- server -----------------------------------------------------------------------------


class MemoryWatch(threading.Thread):
    """Polls /proc/<pid>/status: the largest VmRSS seen and the kernel's VmHWM."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_rss_kb, self.hwm_kb, self.start_rss_kb = pid, 0, 0, 0
        self.stop = threading.Event()

    def read(self) -> dict[str, int]:
        values = {}
        with open(f"/proc/{self.pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    name, amount = line.split(":")
                    values[name] = int(amount.split()[0])
        return values

    def run(self) -> None:
        self.start_rss_kb = self.read().get("VmRSS", 0)
        while not self.stop.wait(0.1):
            try:
                values = self.read()
            except OSError:
                return
            self.peak_rss_kb = max(self.peak_rss_kb, values.get("VmRSS", 0))
            self.hwm_kb = max(self.hwm_kb, values.get("VmHWM", 0))


# --- one simulated student -----------------------------------------------------------------


@dataclass
class View:
    """What a session asked for, and the chart it got back."""

    step: str
    seed: int
    emb_dim: int
    context_length: int
    text: str
    latency: float = 0.0
    z: list[np.ndarray] = field(default_factory=list)


def plan_for(index: int) -> list[dict[str, Any]]:
    """The settings of session ``index`` at each step (distinct from every other session)."""
    shared = index % 2 == 0
    words = " ".join(WORDS[(index + k) % len(WORDS)] for k in range(6 + index % 5))
    first = {
        "seed": SHARED_SEED if shared else 1_000 + index,
        "emb_dim": SHARED_EMB_DIM if shared else 24 + 8 * (index % 6),
        "context_length": 8 + index % 9,
        "text": f"Student {index} reads: {words}, {index * 37}.",
    }
    seed = {**first, "seed": 50_000 + 7 * index}
    emb_dim = {**seed, "emb_dim": 16 + 8 * (index % 12)}
    text = {**emb_dim, "text": f"<b>{index}</b> pasted: {words.upper()} #{index} <|endoftext|>"}
    context_length = {**text, "context_length": 3 + index % 13}
    return [first, seed, emb_dim, text, context_length]


def decode_array(value: Any) -> np.ndarray:
    if isinstance(value, dict):
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(s) for s in str(value.get("shape", len(data))).split(",")]
        return data.reshape(shape)
    return np.asarray(value, dtype=np.float32)


class Session:
    """A websocket session that behaves like the browser for the widgets it touches."""

    def __init__(self, port: int, index: int, timeout: float) -> None:
        self.port, self.index, self.timeout = port, index, timeout
        self.widget_ids: dict[str, str] = {}  # user key -> element id
        self.widget_states: dict[str, Any] = {}  # element id -> WidgetState we keep sending
        self.query_string = ""
        self.views: list[View] = []
        self.errors: list[str] = []
        self.ws: websocket.WebSocket | None = None

    def connect(self) -> None:
        self.ws = websocket.create_connection(
            f"ws://127.0.0.1:{self.port}/_stcore/stream",
            subprotocols=["streamlit"],
            origin=f"http://127.0.0.1:{self.port}",
            timeout=self.timeout,
        )

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()

    def send_rerun(self) -> None:
        assert self.ws is not None
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = ""
        for widget_state in self.widget_states.values():
            state.widget_states.widgets.append(widget_state)
        self.ws.send_binary(message.SerializeToString())

    def clear_cache(self) -> None:
        assert self.ws is not None
        message = BackMsg()
        message.clear_cache = True
        self.ws.send_binary(message.SerializeToString())

    def set_widget(self, key: str, value: Any) -> None:
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        widget_id = self.widget_ids[key]
        state = WidgetState(id=widget_id)
        if key == "text":
            state.string_value = value
        elif key == "seed":
            state.double_value = float(value)  # st.number_input's value_type
        else:  # sliders send [value]
            state.double_array_value.data.append(float(value))
        self.widget_states[widget_id] = state

    def receive_run(self) -> dict[str, Any]:
        """Read ForwardMsgs until the script run finishes; return what the run showed."""
        assert self.ws is not None
        shown: dict[str, Any] = {"chart": None, "errors": []}
        while True:
            raw = self.ws.recv()
            if isinstance(raw, str):
                continue
            message = ForwardMsg()
            message.ParseFromString(raw)
            kind = message.WhichOneof("type")
            if kind == "ref_hash":
                shown["errors"].append("got a cached-message reference it cannot resolve")
            elif kind == "page_info_changed":
                self.query_string = message.page_info_changed.query_string
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                self._read_element(message.delta.new_element, shown)
            elif kind == "script_finished":
                status = message.script_finished
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue
                if status != ForwardMsg.FINISHED_SUCCESSFULLY:
                    shown["errors"].append(f"script finished with status {status}")
                return shown

    def _read_element(self, element: Any, shown: dict[str, Any]) -> None:
        kind = element.WhichOneof("type")
        if kind is None:
            return
        proto = getattr(element, kind)
        widget_id = getattr(proto, "id", "")
        if widget_id:
            key = user_key_from_element_id(widget_id)
            if key:
                self.widget_ids[key] = widget_id
        if kind == "plotly_chart":
            shown["chart"] = proto.spec
        elif kind == "exception":
            shown["errors"].append(f"exception element: {proto.message[:200]}")
        elif kind == "alert" and proto.format == Alert.ERROR:
            shown["errors"].append(f"st.error: {proto.body[:200]}")

    def interact(self, step: str, settings: dict[str, Any]) -> None:
        started = time.perf_counter()
        if step == "open":
            self.query_string = urlencode({k: str(v) for k, v in settings.items()})
            self.connect()
        else:
            self.set_widget(step, settings[step])
        self.send_rerun()
        shown = self.receive_run()
        latency = time.perf_counter() - started
        view = View(step=step, latency=latency, **settings)
        if shown["chart"] is None:
            shown["errors"].append("no chart in this run")
        else:
            spec = json.loads(shown["chart"])
            view.z = [decode_array(trace["z"]).astype(np.float32) for trace in spec["data"]]
        self.errors.extend(f"session {self.index} {step}: {e}" for e in shown["errors"])
        self.views.append(view)


# --- orchestration ---------------------------------------------------------------------


def run_sessions(
    port: int, sessions: int, timeout: float, deadline: float, spread: float
) -> list[Session]:
    students = [Session(port, index, timeout) for index in range(sessions)]
    plans = [plan_for(index) for index in range(sessions)]
    barrier = threading.Barrier(sessions + 1)  # every step starts for everyone at once
    clear_done = threading.Event()

    def student(session: Session, plan: list[dict[str, Any]]) -> None:
        try:
            for step, settings in zip(STEPS, plan, strict=True):
                barrier.wait(timeout=max(1.0, deadline - time.monotonic()))
                if step == "text":
                    clear_done.wait(timeout=max(1.0, deadline - time.monotonic()))
                # arrivals: all at once (spread 0), or evenly over `spread` seconds
                time.sleep(spread * session.index / sessions)
                session.interact(step, settings)
        except Exception as error:  # counted and reported, never hidden
            session.errors.append(f"session {session.index}: {type(error).__name__}: {error}")
            barrier.abort()
        finally:
            session.close()

    threads = [
        threading.Thread(target=student, args=(s, p), daemon=True)
        for s, p in zip(students, plans, strict=True)
    ]
    for thread in threads:
        thread.start()
    janitor = Session(port, -1, timeout)
    try:
        for step in STEPS:
            barrier.wait(timeout=max(1.0, deadline - time.monotonic()))
            if step == "text":  # all emb_dim runs are done once everyone is at this barrier
                janitor.connect()
                janitor.clear_cache()
                clear_done.set()
    except threading.BrokenBarrierError:
        clear_done.set()
    for thread in threads:
        thread.join(timeout=max(1.0, deadline - time.monotonic()))
    janitor.close()
    hung = [s.index for s, t in zip(students, threads, strict=True) if t.is_alive()]
    for index in hung:
        students[index].errors.append(f"session {index}: still running at the deadline")
    return students


def reference(view: View) -> list[np.ndarray]:
    torch.manual_seed(view.seed)
    token_layer = torch.nn.Embedding(50257, view.emb_dim)
    pos_layer = torch.nn.Embedding(view.context_length, view.emb_dim)
    token_ids = encode(view.text)[: view.context_length]  # window 0
    tok = token_layer.weight.detach()[torch.tensor(token_ids)]
    pos = pos_layer.weight.detach()[: len(token_ids)]
    return [tok.numpy(), pos.numpy(), (tok + pos).numpy()]


def verify(students: list[Session]) -> list[str]:
    """Each chart equals torch's reference for that session's own settings."""
    problems = []
    for session in students:
        for view in session.views:
            if not view.z:
                continue
            for panel, (got, want) in enumerate(zip(view.z, reference(view), strict=True)):
                if got.shape != want.shape or not np.allclose(got, want, rtol=1e-6, atol=1e-6):
                    problems.append(
                        f"session {session.index} {view.step}: panel {panel} differs from "
                        f"torch (seed {view.seed}, emb_dim {view.emb_dim}, "
                        f"T {view.context_length}); shapes {got.shape} vs {want.shape}"
                    )
    return problems


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (from /proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=60, help="concurrent sessions (<=200)")
    parser.add_argument("--timeout", type=float, default=600, help="deadline for the whole run, s")
    parser.add_argument(
        "--warm",
        action="store_true",
        help="open the app once before the sessions (the lecturer's check before class)",
    )
    parser.add_argument(
        "--spread",
        type=float,
        default=0.0,
        help="students act within this many seconds of each other (0: all in the same instant)",
    )
    args = parser.parse_args()
    if not 1 <= args.sessions <= MAX_SESSIONS:
        parser.error(f"--sessions must be from 1 to {MAX_SESSIONS}, got {args.sessions}")

    started = time.monotonic()
    deadline = started + args.timeout
    log = Path(tempfile.mkdtemp(prefix="posviz-loadtest-")) / "server.log"
    server = start_server(log=log, options={"logger.level": "warning"})
    port = server.port
    print(f"streamlit on 127.0.0.1:{port} (log: {log})", flush=True)
    watch = MemoryWatch(server.pid)
    watch.start()
    try:
        if args.warm:  # the first run imports torch: about 2 s, once per server process
            lecturer = Session(port, -2, timeout=120)
            lecturer.interact("open", {"seed": 1, "emb_dim": 8, "context_length": 4, "text": "Hi"})
            lecturer.close()
            if lecturer.errors:
                raise RuntimeError(f"warm-up failed: {lecturer.errors}")
        students = run_sessions(
            port, args.sessions, timeout=120, deadline=deadline, spread=args.spread
        )
        server_cpu = cpu_seconds(server.pid)
    finally:
        watch.stop.set()
        watch.join(timeout=5)
        server.stop()
    wall = time.monotonic() - started

    errors = [error for s in students for error in s.errors]
    log_text = log.read_text(encoding="utf-8", errors="replace")
    errors += [f"server log: {line}" for line in log_text.splitlines() if "Traceback" in line]
    completed = sum(len(s.views) for s in students)
    print(f"verifying {completed} charts against torch …", flush=True)
    problems = verify(students)

    arrival = f"within {args.spread:g} s" if args.spread else "all in the same instant"
    arrival += ", warm server" if args.warm else ", cold server"
    print(f"\n{args.sessions} concurrent sessions, {len(STEPS)} interactions each ({arrival}), "
          f"{completed} runs completed, wall time {wall:.1f} s")  # fmt: skip
    print(f"{'interaction':<16}{'n':>5}{'p50 s':>9}{'p95 s':>9}{'max s':>9}")
    for step in STEPS:
        latencies = [v.latency for s in students for v in s.views if v.step == step]
        if latencies:
            print(
                f"{step:<16}{len(latencies):>5}{statistics.median(latencies):>9.2f}"
                f"{percentile(latencies, 0.95):>9.2f}{max(latencies):>9.2f}"
            )
    every = [v.latency for s in students for v in s.views]
    if every:
        print(f"{'all':<16}{len(every):>5}{statistics.median(every):>9.2f}"
              f"{percentile(every, 0.95):>9.2f}{max(every):>9.2f}")  # fmt: skip
    idle_mb, peak_mb, hwm_mb = (
        kb / 1024 for kb in (watch.start_rss_kb, watch.peak_rss_kb, watch.hwm_kb)
    )
    print(f"server RSS: {idle_mb:.0f} MB idle, peak {peak_mb:.0f} MB (VmHWM {hwm_mb:.0f} MB)")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    per_run_ms = server_cpu / max(completed, 1) * 1000
    client_s = usage.ru_utime + usage.ru_stime
    print(
        f"CPU: server {server_cpu:.1f} s ({per_run_ms:.0f} ms per run), "
        f"load generator {client_s:.1f} s"
    )
    print(f"errors: {len(errors)}")
    for error in errors[:20]:
        print(f"  {error}")
    print(f"charts not equal to the torch reference (cross-talk): {len(problems)}")
    for problem in problems[:20]:
        print(f"  {problem}")
    expected_runs = args.sessions * len(STEPS)
    ok = not errors and not problems and completed == expected_runs
    print("PASS" if ok else f"FAIL ({completed}/{expected_runs} runs)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
