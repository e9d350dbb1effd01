"""Server capacity of one `streamlit run app.py` process (issue 8 items 1-3), measured from /proc.

    python benchmarks/capacity.py cpu --reruns 120        # server CPU per rerun, default view
    python benchmarks/capacity.py rss --reruns 1000       # RSS every 100 reruns (flat?)
    python benchmarks/capacity.py flood --messages 10000  # one client floods, others click
    python benchmarks/capacity.py cold --sessions 60      # a class opens the link at once

Each command starts its own server on 127.0.0.1 (a free port), talks Streamlit's websocket
protocol (the ``Session`` client of ``benchmarks/loadtest.py``), stops the server by PID and
prints one table. Extra ``--config key=value`` pairs go to the server as ``--key value`` (for
example ``--config runner.postScriptGC=true`` to measure the collection posviz turns off).

What each number measures:

* ``cpu``: one session at the default view (no query string) reruns ``--reruns`` times, one at
  a time (send, wait for ``script_finished``). Server CPU = utime + stime of the server process
  from /proc/<pid>/stat, over those reruns only (after ``--warmup`` reruns), divided by the
  count. Target: <= 25 ms.
* ``rss``: the same loop for ``--reruns``; VmRSS every 100 reruns. Target: flat (the last
  reading within a few MB of the one after warm-up).
* ``flood``: ``--others`` sessions rerun one at a time while one more client sends
  ``--messages`` rerun requests without reading a single reply. Reports the health endpoint's
  latency and the other sessions' rerun latency during the flood, and both again from 3 s after
  the flood's last message. Targets: health <= 0.5 s, others' p95 <= 1 s, normal after 3 s.
* ``cold``: ``--sessions`` sessions open the default view at the same instant on a fresh
  server. Peak RSS (VmHWM), first-view latency p50/p95/max, errors. Targets: <= 600 MB,
  p95 <= 5 s, 0 errors.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.loadtest import MemoryWatch, Session, cpu_seconds, percentile  # noqa: E402
from devtools.server import running_server  # noqa: E402

MAX_SESSIONS = 200
MAX_MESSAGES = 50_000


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


@contextmanager
def server(config: list[str]) -> Iterator[tuple[int, int]]:
    """A fresh `streamlit run app.py` on 127.0.0.1 with extra ``key=value`` options: (port, pid)."""
    options = dict(pair.partition("=")[::2] for pair in config)
    log = Path(tempfile.mkdtemp(prefix="posviz-capacity-")) / "server.log"
    with running_server(options=options, log=log) as running:
        print(f"server pid {running.pid} on {running.url} (log: {log}) {options or ''}")
        yield running.port, running.pid
    text = log.read_text(encoding="utf-8", errors="replace")
    if "Traceback" in text:
        print(f"server log has tracebacks:\n{text[-3000:]}")


def open_default(port: int, index: int = 0) -> Session:
    session = Session(port, index, timeout=120)
    session.connect()
    session.send_rerun()
    shown = session.receive_run()
    if shown["errors"] or shown["chart"] is None:
        raise RuntimeError(f"default view failed: {shown['errors']}")
    return session


def rerun(session: Session) -> float:
    started = time.perf_counter()
    session.send_rerun()
    shown = session.receive_run()
    if shown["errors"]:
        raise RuntimeError(f"rerun failed: {shown['errors']}")
    return time.perf_counter() - started


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) of each thread of process ``pid``, by thread id."""
    seconds = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended
        seconds[int(task.name)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return seconds


def load() -> str:
    return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])


def cmd_cpu(args: argparse.Namespace) -> None:
    with server(args.config) as (port, pid):
        session = open_default(port)
        for _ in range(args.warmup):
            rerun(session)
        before, threads_before = cpu_seconds(pid), thread_cpu(pid)
        latencies = [rerun(session) for _ in range(args.reruns)]
        used, threads_after = cpu_seconds(pid) - before, thread_cpu(pid)
        session.close()
    print(f"{load()}")
    per_thread = sorted(
        (threads_after[tid] - threads_before.get(tid, 0.0) for tid in threads_after), reverse=True
    )
    print(
        "busiest threads, ms per rerun: "
        + " ".join(f"{t * 1000 / args.reruns:.1f}" for t in per_thread[:4])
        + f" (event loop: {(threads_after[pid] - threads_before[pid]) * 1000 / args.reruns:.1f})"
    )
    print(
        f"cpu: {args.reruns} reruns at the default view: server CPU {used * 1000 / args.reruns:.1f}"
        f" ms per rerun (target <= 25); wall p50 {statistics.median(latencies) * 1000:.0f} ms"
    )


def cmd_rss(args: argparse.Namespace) -> None:
    with server(args.config) as (port, pid):
        session = open_default(port)
        for _ in range(args.warmup):
            rerun(session)
        readings = [rss_mb(pid)]
        before = cpu_seconds(pid)
        for count in range(1, args.reruns + 1):
            rerun(session)
            if count % 100 == 0:
                readings.append(rss_mb(pid))
        used = cpu_seconds(pid) - before
        session.close()
    print(f"{load()}")
    print("rss MB every 100 reruns: " + " ".join(f"{r:.0f}" for r in readings))
    print(
        f"rss: after warm-up {readings[0]:.0f} MB, after {args.reruns} reruns {readings[-1]:.0f}"
        f" MB (growth {readings[-1] - readings[0]:+.0f} MB); CPU "
        f"{used * 1000 / args.reruns:.1f} ms per rerun"
    )


def cmd_flood(args: argparse.Namespace) -> None:
    with server(args.config) as (port, pid):
        others = [open_default(port, index) for index in range(args.others)]
        flooder = open_default(port, 99)
        phase = {"name": "before"}
        samples: dict[str, dict[str, list[float]]] = {}
        stop = threading.Event()
        errors: list[str] = []

        t0 = time.perf_counter()

        def record(kind: str, value: float) -> None:
            samples.setdefault(phase["name"], {}).setdefault(kind, []).append(value)

        def click(session: Session) -> None:
            while not stop.is_set():
                try:
                    record("rerun", rerun(session))
                except Exception as error:  # reported, never hidden
                    errors.append(f"session {session.index}: {error}")
                    return

        def health() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                try:
                    with urllib.request.urlopen(
                        f"http://127.0.0.1:{port}/_stcore/health", timeout=30
                    ):
                        pass
                except OSError as error:
                    errors.append(f"health: {error}")
                took = time.perf_counter() - started
                record("health", took)
                if args.verbose:
                    print(f"  t={time.perf_counter() - t0:6.2f} s health {took:.3f} s", flush=True)
                stop.wait(0.1)

        threads = [threading.Thread(target=click, args=(s,), daemon=True) for s in others]
        threads.append(threading.Thread(target=health, daemon=True))
        for thread in threads:
            thread.start()
        time.sleep(2)
        phase["name"] = "during"
        assert flooder.ws is not None
        flood_started = time.perf_counter()
        for _ in range(args.messages):
            flooder.send_rerun()
        sent = time.perf_counter() - flood_started
        if args.verbose:
            print(f"  t={flood_started - t0:6.2f}..{time.perf_counter() - t0:.2f} s flood sent")
        # the server is still working through the flood after the client sent it
        time.sleep(args.settle)
        phase["name"] = "after"
        time.sleep(5)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        flooder.close()
        for session in others:
            session.close()
        cpu = cpu_seconds(pid)
    print(f"{load()}")
    print(
        f"flood: {args.messages} rerun requests sent in {sent:.1f} s by one client that never reads"
    )
    print(f"{'phase':<8}{'what':<8}{'n':>6}{'p50 s':>9}{'p95 s':>9}{'max s':>9}")
    for name in ("before", "during", "after"):
        for kind in ("health", "rerun"):
            values = samples.get(name, {}).get(kind, [])
            if values:
                print(
                    f"{name:<8}{kind:<8}{len(values):>6}{statistics.median(values):>9.3f}"
                    f"{percentile(values, 0.95):>9.3f}{max(values):>9.3f}"
                )
    print(f"'during' = flood start + {args.settle:g} s; 'after' = the 5 s that follow")
    print(f"server CPU total {cpu:.1f} s; errors: {len(errors)}")
    for error in errors[:10]:
        print(f"  {error}")


def cmd_cold(args: argparse.Namespace) -> None:
    with server(args.config) as (port, pid):
        idle_cpu = cpu_seconds(pid)
        watch = MemoryWatch(pid)
        watch.start()
        barrier = threading.Barrier(args.sessions)
        latencies: list[float] = []
        errors: list[str] = []

        def student(index: int) -> None:
            session = Session(port, index, timeout=120)
            try:
                barrier.wait(timeout=60)
                started = time.perf_counter()
                session.connect()
                session.send_rerun()
                shown = session.receive_run()
                latencies.append(time.perf_counter() - started)
                if shown["errors"] or shown["chart"] is None:
                    errors.append(f"session {index}: {shown['errors'] or 'no chart'}")
            except Exception as error:  # reported, never hidden
                errors.append(f"session {index}: {type(error).__name__}: {error}")
            finally:
                session.close()

        threads = [
            threading.Thread(target=student, args=(i,), daemon=True) for i in range(args.sessions)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=180)
        watch.stop.set()
        watch.join(timeout=5)
        cpu = cpu_seconds(pid) - idle_cpu
    print(f"{load()}")
    print(
        f"cold: {args.sessions} sessions at once on a fresh server: first view p50 "
        f"{statistics.median(latencies):.2f} s, p95 {percentile(latencies, 0.95):.2f} s, max "
        f"{max(latencies):.2f} s (target p95 <= 5); peak RSS {watch.hwm_kb / 1024:.0f} MB "
        f"(target <= 600); errors {len(errors)}; server CPU {cpu:.1f} s (start-up {idle_cpu:.1f} s)"
    )
    for error in errors[:10]:
        print(f"  {error}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", action="append", default=[], help="server option key=value")
    commands = parser.add_subparsers(dest="command", required=True)
    cpu = commands.add_parser("cpu")
    cpu.add_argument("--reruns", type=int, default=120)
    cpu.add_argument("--warmup", type=int, default=10)
    rss = commands.add_parser("rss")
    rss.add_argument("--reruns", type=int, default=1000)
    rss.add_argument("--warmup", type=int, default=20)
    flood = commands.add_parser("flood")
    flood.add_argument("--messages", type=int, default=10_000)
    flood.add_argument("--others", type=int, default=3)
    flood.add_argument("--settle", type=float, default=5.0)
    flood.add_argument("--verbose", action="store_true", help="print a timeline")
    cold = commands.add_parser("cold")
    cold.add_argument("--sessions", type=int, default=60)
    args = parser.parse_args()
    if getattr(args, "sessions", 1) > MAX_SESSIONS:
        parser.error(f"--sessions must be at most {MAX_SESSIONS}")
    if getattr(args, "messages", 1) > MAX_MESSAGES:
        parser.error(f"--messages must be at most {MAX_MESSAGES}")
    {"cpu": cmd_cpu, "rss": cmd_rss, "flood": cmd_flood, "cold": cmd_cold}[args.command](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
