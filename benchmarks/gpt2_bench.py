"""GPT-2 view vs init view on the real server: peak memory and rerun time at T = 1024.

    python benchmarks/gpt2_bench.py            # about 1-2 minutes
    python benchmarks/gpt2_bench.py --reps 20

What it does, all on 127.0.0.1:

1. Writes a made-up file with GPT-2 124M's 148 tensor names and shapes (548 MB, sparse: only
   the two tables hold numbers, random ones, NOT GPT-2's) and serves it from the loopback Hub
   stand-in (``devtools/fake_hub.py``); a fresh cache folder gets the tables with
   ``python -m posviz --fetch-gpt2`` (``HF_ENDPOINT`` points at the stand-in).
2. For each of ``init`` (``emb_dim`` 768) and ``gpt2``: starts a fresh ``streamlit run app.py``
   (``devtools.server``), opens one session over Streamlit's websocket (``devtools.client``) at
   ``context_length=1024``, pastes a 25,000-character text (about 5,500 tokens, five full
   windows) and moves the window slider ``--reps`` times. It records each rerun's latency
   (request sent -> ``script_finished``) and the server's CPU time for it (``/proc``: less
   sensitive to other load than wall time), and the server's peak RSS (``VmHWM``).
3. Measures a baseline: a process that only imports streamlit, torch, tiktoken, plotly and
   numpy (as ``benchmarks/bench.py`` does).

The numbers are of the made-up tables, which have GPT-2's shapes, so memory and time are those
of the real view. Nothing here is shown as GPT-2's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import report  # noqa: E402
from benchmarks.texts import long_text  # noqa: E402
from devtools.client import Run, StreamlitSession  # noqa: E402
from devtools.fake_hub import gpt2_layout, made_up_tables, serve, write_safetensors  # noqa: E402
from devtools.server import running_server  # noqa: E402

BASELINE = "import streamlit, streamlit.testing.v1, torch, tiktoken, plotly, numpy"
TICKS = os.sysconf("SC_CLK_TCK")


def status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for pid {pid}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def baseline_mb() -> float:
    code = f"{BASELINE}; print(open('/proc/self/status').read())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    line = next(x for x in out.stdout.splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def check(run: Run, what: str) -> Run:
    if run.errors or run.chart is None:
        raise RuntimeError(f"{what}: errors {run.errors}, warnings {run.warnings}")
    return run


def measure(weights: str, env: dict[str, str], reps: int) -> dict[str, object]:
    query = {"weights": weights, "context_length": "1024", "emb_dim": "768"}
    with running_server(env=env) as server:
        session = StreamlitSession(server.url, timeout=300)
        try:
            first = check(session.open(query), f"{weights}: open")
            check(session.change("text", long_text(1)), f"{weights}: paste")
            latencies, cpu = [], []
            for rep in range(reps):
                before = cpu_seconds(server.pid)
                run = check(session.change("window", 1 + rep % 4), f"{weights}: window")
                cpu.append(cpu_seconds(server.pid) - before)
                latencies.append(run.latency)
            return {
                "first_load_s": first.latency,
                "rerun_ms_p50": 1000 * statistics.median(latencies),
                "rerun_ms_max": 1000 * max(latencies),
                "rerun_cpu_ms_p50": 1000 * statistics.median(cpu),
                "peak_rss_mb": status_mb(server.pid, "VmHWM"),
                "rss_mb": status_mb(server.pid, "VmRSS"),
            }
        finally:
            session.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=12, help="window changes per view")
    parser.add_argument("--docs", action="store_true", help="write the table into docs/")
    args = parser.parse_args()
    started = report.start()
    if not 1 <= args.reps <= 200:
        parser.error("--reps must be from 1 to 200")
    with tempfile.TemporaryDirectory(prefix="posviz-gpt2-bench-") as folder:
        work = Path(folder)
        blob = write_safetensors(
            work / "model.safetensors", gpt2_layout(), made_up_tables(50257, 1024, 768)
        )
        with serve(blob.path) as hub:
            env = {"HF_ENDPOINT": hub.endpoint, "POSVIZ_CACHE_DIR": str(work / "cache")}
            subprocess.run(
                [sys.executable, "-m", "posviz", "--fetch-gpt2"],
                cwd=ROOT,
                env={**os.environ, **env},
                check=True,
            )
            base = baseline_mb()
            results = {w: measure(w, env, args.reps) for w in ("init", "gpt2")}
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; baseline {base:.0f} MB")
    header = ["view (T=1024, d=768)", "first load", "window change p50 (max)",
              "server CPU p50", "peak RSS", "over baseline"]  # fmt: skip
    rows = [
        [weights, f"{r['first_load_s']:.2f} s", f"{r['rerun_ms_p50']:.0f} ms "
         f"({r['rerun_ms_max']:.0f} ms)", f"{r['rerun_cpu_ms_p50']:.0f} ms",
         f"{r['peak_rss_mb']:.0f} MB", f"+{r['peak_rss_mb'] - base:.0f} MB"]
        for weights, r in results.items()
    ]  # fmt: skip
    print(report.table(header, rows))
    ratio = results["gpt2"]["rerun_ms_p50"] / results["init"]["rerun_ms_p50"]  # type: ignore[operator]
    print(f"gpt2 / init rerun (p50 wall): {ratio:.2f}x")
    print(json.dumps({"baseline_mb": base, "load": load, **results}))
    if args.docs:
        body = (
            f"{args.reps} window changes per view; baseline (imports only) {base:.0f} MB; "
            f"gpt2 / init rerun (p50 wall) {ratio:.2f}x.\n\n{report.table(header, rows)}"
        )
        command = "python benchmarks/gpt2_bench.py " + " ".join(sys.argv[1:])
        report.write_block("gpt2_bench", body, when=report.stamp(started), command=command)


if __name__ == "__main__":
    main()
