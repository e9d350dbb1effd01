"""Server CPU and memory per rerun of one `streamlit run app.py`, from /proc (issue 8 item 1).

    python benchmarks/capacity.py cpu --reruns 120      # CPU per rerun at the default view
    python benchmarks/capacity.py rss --reruns 1000     # VmRSS every 100 reruns: flat?
    python benchmarks/capacity.py --server-option runner.postScriptGC=false cpu

A diagnostic next to the load test (``benchmarks/loadtest.py``, which judges every issue-8
target with many sessions, floods and cold starts): one session on the default view (no
query string) reruns the same view, one rerun at a time, so the numbers isolate what one
rerun costs the server and where that cost goes. Each command starts its own server on
127.0.0.1 (``devtools.server``), speaks the browser's websocket protocol
(``devtools.client``), stops the server by PID and prints the machine's load next to the
numbers.

* ``cpu``: server CPU (utime + stime of the server process, /proc/<pid>/stat) over
  ``--reruns`` reruns after ``--warmup``, per rerun; split into the event-loop thread (the
  process's main thread: websocket, protobuf, sending) and the rest (script threads, which come
  and go with each run, and the post-run garbage collection). Target: <= 25 ms per rerun.
* ``rss``: VmRSS every 100 reruns over ``--reruns`` (after ``--warmup``). Target: flat.

``--server-option section.name=value`` (repeatable) measures another setting, e.g.
``runner.postScriptGC=false`` or ``runner.fastReruns=true``; ``POSVIZ_GC_FREEZE=0`` in the
environment measures without app_runtime's ``gc.freeze()``. The four garbage-collection
variants of the README::

    python benchmarks/capacity.py cpu                                            # chosen
    python benchmarks/capacity.py --server-option runner.postScriptGC=false cpu
    POSVIZ_GC_FREEZE=0 python benchmarks/capacity.py cpu                         # Streamlit's
    POSVIZ_GC_FREEZE=0 python benchmarks/capacity.py --server-option runner.postScriptGC=false cpu
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.loadtest import cpu_seconds, load_text, memory_kb, options  # noqa: E402
from devtools.client import StreamlitSession  # noqa: E402
from devtools.server import Server, running_server  # noqa: E402

MAX_RERUNS = 20_000


@contextmanager
def session_on_default_view(
    server_options: dict[str, str],
) -> Iterator[tuple[Server, StreamlitSession]]:
    log = Path(tempfile.mkdtemp(prefix="posviz-capacity-")) / "server.log"
    with running_server(options=server_options, log=log) as server:
        print(f"server pid {server.pid} on {server.url}; log {log}; options {server_options}")
        session = StreamlitSession(server.url, timeout=120)
        try:
            first = session.open("")
            if first.errors or first.chart is None:
                raise RuntimeError(f"the default view failed: {first.errors}")
            yield server, session
        finally:
            session.close()
    if "Traceback" in log.read_text(encoding="utf-8", errors="replace"):
        print(f"the server log has a traceback: {log}")


def rerun(session: StreamlitSession) -> float:
    run = session.rerun()
    if run.errors or run.chart is None:
        raise RuntimeError(f"rerun failed: {run.errors}")
    return run.latency


def thread_cpu(pid: int, tid: int) -> float:
    """CPU seconds (user + system) of thread ``tid`` of process ``pid``."""
    fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cmd_cpu(args: argparse.Namespace) -> None:
    with session_on_default_view(args.server_option) as (server, session):
        for _ in range(args.warmup):
            rerun(session)
        before, loop_before = cpu_seconds(server.pid), thread_cpu(server.pid, server.pid)
        latencies = [rerun(session) for _ in range(args.reruns)]
        used = cpu_seconds(server.pid) - before
        loop = thread_cpu(server.pid, server.pid) - loop_before
    per_rerun = 1000 / args.reruns
    print(load_text())
    print(
        f"cpu: {args.reruns} reruns at the default view: server CPU {used * per_rerun:.1f} ms "
        f"per rerun (target <= 25): event loop {loop * per_rerun:.1f} ms, script threads and "
        f"collection {(used - loop) * per_rerun:.1f} ms; wall p50 "
        f"{statistics.median(latencies) * 1000:.0f} ms"
    )


def cmd_rss(args: argparse.Namespace) -> None:
    with session_on_default_view(args.server_option) as (server, session):
        for _ in range(args.warmup):
            rerun(session)
        readings = [memory_kb(server.pid)["VmRSS"] / 1024]
        before = cpu_seconds(server.pid)
        for count in range(1, args.reruns + 1):
            rerun(session)
            if count % 100 == 0:
                readings.append(memory_kb(server.pid)["VmRSS"] / 1024)
        used = cpu_seconds(server.pid) - before
    print(load_text())
    print("VmRSS MB every 100 reruns: " + " ".join(f"{r:.0f}" for r in readings))
    print(
        f"rss: {readings[0]:.0f} MB after warm-up, {readings[-1]:.0f} MB after {args.reruns} "
        f"reruns ({readings[-1] - readings[0]:+.0f} MB); CPU {used * 1000 / args.reruns:.1f} ms "
        "per rerun"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--server-option", action="append", default=[], metavar="SECTION.NAME=VALUE"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, reruns, warmup in (("cpu", 120, 10), ("rss", 1000, 20)):
        command = commands.add_parser(name)
        command.add_argument("--reruns", type=int, default=reruns)
        command.add_argument("--warmup", type=int, default=warmup)
    args = parser.parse_args()
    if not 1 <= args.reruns <= MAX_RERUNS:
        parser.error(f"--reruns must be from 1 to {MAX_RERUNS}")
    args.server_option = options(args.server_option)
    {"cpu": cmd_cpu, "rss": cmd_rss}[args.command](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
