"""What the Geometry, Distance and Attention tabs cost the server, and what they send (issue 16,
item 4; issue 25 for the Attention view).

Run from the repository root::

    python benchmarks/views_cost.py            # T = 1024, d = 768 (the issue's size)
    python benchmarks/views_cost.py --quick    # T = 128, d = 64, fewer repeats: does it run?
    python benchmarks/views_cost.py --docs     # and write the table into docs/performance.md

For each view, with the book's random init and with GPT-2's shapes (random stand-in tables of
[50257, 768] and [1024, 768] in memory: the same arithmetic, no download), it prints the CPU
time of this process (``time.process_time``, one torch thread as in the app) for

* ``cold``: the first time these settings are shown (the tables cached, as the app's
  ``st.cache_resource`` keeps them, but nothing computed from them yet), and
* ``warm``: a rerun after a text edit, with the per-table results kept as the app keeps them
  (``memo``): the Geometry tab recomputes only GPT-2's cosines with the window's tokens, the
  Distance tab only RoPE's curve;

each from settings to the bytes the chart component gets (the figure's spec and
``chart_payload``: what the server serialises for the browser), median of ``--reps`` runs, and
their size. The Attention view (``attention`` rows: the book's init; learned, RoPE moved 8
positions, ALiBi with 12 heads, T5) keeps nothing between reruns but the attention weights
(cached as the app caches the tables), so its warm run is a whole recomputation too. Then
(``app`` rows; ``--no-app`` skips them) the same through the page itself, driven by AppTest:
the whole rerun of the open tab (Geometry and Distance: the page has no Attention tab yet).
The Training view (``training`` rows, issue 26): per shipped run, a step shown the first time
(``cold``) and a step change back to one already shown (``warm``), the run loaded as the app
keeps it, with GPT-2 stand-in tables beside; the weights column names the run. And through the
page (``app`` rows, ``key press`` / ``step change``): the Training tab's step slider moved by
one snapshot beside a key press on the main view (its window slider moved by one), both at
the page's defaults: issue 26 asks that the first cost no more than the second.
``--key-presses --server``: the key press and the Length tab's schemes change on the real
server instead, as a browser asks for them (the Schemes menu is drawn in the tab's fragment, so
its change runs that fragment alone; AppTest always runs the whole page): issue 41 asks that
the second cost no more than the first.
The load average is printed with the numbers; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report
from posviz.config import Settings, fit_heads, for_weights
from posviz.distance import build_distance
from posviz.embeddings import SeededEmbeddings
from posviz.geometry import build_geometry
from posviz.gpt2.store import Gpt2Embeddings
from posviz.plots import UNKNOWN
from posviz.plots.attention import attention_spec
from posviz.plots.distance import distance_spec
from posviz.plots.geometry import geometry_spec
from posviz.scores import build_attention
from posviz.view import book_attention, build_view
from posviz_app.chart import chart_payload

R = TypeVar("R")
APP = Path(__file__).resolve().parent.parent / "app.py"
TEXT = "The cat sat on the mat. "  # repeated: a window of T tokens


class Kept:
    """A memo like the app's ``st.cache_resource``: one value per key."""

    def __init__(self) -> None:
        self.values: dict[tuple[object, ...], object] = {}

    def __call__(self, key: tuple[object, ...], compute: Callable[[], R]) -> R:
        if key not in self.values:
            self.values[key] = compute()
        return self.values[key]  # type: ignore[return-value]


def stand_in_gpt2(vocab: int, rows: int, emb_dim: int) -> Gpt2Embeddings:
    """Random tables of GPT-2's shapes, in memory (NOT GPT-2's numbers)."""
    generator = torch.Generator().manual_seed(2026)
    wte = torch.randn(vocab, emb_dim, generator=generator)
    wpe = torch.randn(rows, emb_dim, generator=generator)
    return Gpt2Embeddings("0" * 40, wte, wpe)


def figure_bytes(view: str, settings: Settings, tables: object, init: object, memo: Kept) -> int:
    """Settings to the bytes the chart component gets, as the tab does it (the figure's spec
    and :func:`~posviz_app.chart.chart_payload`); returns their size."""
    shown = build_view(settings, tables=lambda _: tables)  # as the page: the view, then the tab
    if view == "attention":  # the weights cached, as the app keeps them
        weights = memo(("attention", settings.emb_dim), lambda: book_attention(settings.emb_dim))
        attention = build_attention(
            shown,
            tables=lambda _: tables,
            attention=lambda _: weights,  # type: ignore[arg-type, return-value]
        )
        return len(chart_payload(attention_spec(attention), canvas=UNKNOWN, fill=False))
    kwargs = {"tables": lambda _: tables, "init_tables": lambda _: init, "memo": memo}
    if view == "geometry":
        spec = geometry_spec(build_geometry(shown, **kwargs))  # type: ignore[arg-type]
    else:
        spec = distance_spec(build_distance(shown, **kwargs))  # type: ignore[arg-type]
    return len(chart_payload(spec, canvas=UNKNOWN, fill=False))


def measure(
    view: str, settings: Settings, tables: object, init: object, reps: int
) -> tuple[float, float, int]:
    """Median CPU ms cold and warm (see the module docstring), and the payload's bytes."""
    cold, warm, size = [], [], 0
    edited = Settings(**{**vars(settings), "text": settings.text.replace("cat", "dog")})
    for _ in range(reps):
        memo = Kept()
        start = time.process_time()
        size = figure_bytes(view, settings, tables, init, memo)
        middle = time.process_time()
        figure_bytes(view, edited, tables, init, memo)
        end = time.process_time()
        cold.append((middle - start) * 1e3)
        warm.append((end - middle) * 1e3)
    return statistics.median(cold), statistics.median(warm), size


def core_rows(rows: int, emb_dim: int, reps: int) -> list[list[object]]:
    """The core path (settings to the chart's bytes) for each view, weights and scheme."""
    init = SeededEmbeddings.create(seed=123, emb_dim=emb_dim)
    init_768 = init if emb_dim == 768 else SeededEmbeddings.create(seed=123, emb_dim=768)
    gpt2 = stand_in_gpt2(50257, 1024, 768)  # GPT-2 fixes d = 768
    text = TEXT * (rows // 6 + 1)
    found: list[list[object]] = []
    for view in ("geometry", "distance"):
        for weights, scheme in (("init", "learned"), ("init", "sinusoidal"), ("gpt2", "learned")):
            settings = Settings(text=text, context_length=rows, emb_dim=emb_dim, scheme=scheme)  # type: ignore[arg-type]
            if weights == "gpt2":
                settings = for_weights(settings, "gpt2")
            tables, book = (gpt2, init_768) if weights == "gpt2" else (init, init)
            cold, warm, size = measure(view, settings, tables, book, reps)
            found.append(["core", view, weights, scheme, f"{cold:.1f}", f"{warm:.1f}", f"{size:,}"])
    for scheme, changes in ATTENTION_CASES:
        asked = Settings(text=text, context_length=rows, emb_dim=emb_dim, scheme=scheme)  # type: ignore[arg-type]
        settings, _ = fit_heads(replace(asked, **changes))  # --quick's d = 64: 8 heads, not 12
        cold, warm, size = measure("attention", settings, init, init, reps)
        shown = {key: getattr(settings, key) for key in changes}
        label = ", ".join([scheme, *(f"{key} {value}" for key, value in shown.items())])
        found.append(
            ["core", "attention", "init", label, f"{cold:.1f}", f"{warm:.1f}", f"{size:,}"]
        )
    return found


# The Attention view's rows: the default heads (4), a moved RoPE, ALiBi's 12 slopes, T5.
ATTENTION_CASES: tuple[tuple[str, dict[str, int]], ...] = (
    ("learned", {}),
    ("rope", {"shift": 8}),
    ("alibi", {"heads": 12, "head": 11}),
    ("t5", {}),
)


def app_rows(rows: int, emb_dim: int, reps: int) -> list[list[object]]:
    """The page through AppTest (the script runs in this process, so its CPU is this
    process's): a ``tab=`` link, then per repeat a text edit with the per-table results
    dropped (cold) and another edit (warm); bytes are the tab's chart as sent. The book's
    init only: GPT-2's tables would need the Hub."""
    from streamlit.testing.v1 import AppTest

    import posviz_app.caches
    from posviz_app.chart import COMPONENT_NAME as CHART_COMPONENT

    found: list[list[object]] = []
    text = TEXT * (rows // 6 + 1)
    for view in ("geometry", "distance"):
        for scheme in ("learned", "sinusoidal"):
            at = AppTest.from_file(str(APP), default_timeout=600)
            query = {"tab": view, "context_length": rows, "emb_dim": emb_dim, "scheme": scheme}
            for key, value in query.items():
                at.query_params[key] = str(value)
            at.run()  # imports, the seeded tables: not measured
            at.text_area(key="text").input(text).run()
            cold, warm, size = [], [], 0
            for rep in range(reps):
                posviz_app.caches.shape_cache().clear()  # nothing computed for these tables yet
                start = time.process_time()
                at.text_area(key="text").input(text.replace("cat", f"cat{rep}")).run()
                middle = time.process_time()
                at.text_area(key="text").input(text.replace("mat", f"mat{rep}")).run()
                end = time.process_time()
                if at.exception or at.error:
                    raise RuntimeError([e.value for e in (*at.exception, *at.error)])
                cold.append((middle - start) * 1e3)
                warm.append((end - middle) * 1e3)
                size = sum(  # the chart component's payload: JSON header + raw arrays
                    len(element.proto.bytes)
                    for element in at.get("bidi_component")
                    if element.proto.component_name == CHART_COMPONENT
                )
            found.append(
                ["app", view, "init", scheme, f"{statistics.median(cold):.1f}",
                 f"{statistics.median(warm):.1f}", f"{size:,}"]
            )  # fmt: skip
    return found


def chart_bytes(at: object) -> int:
    """The bytes the chart component got in ``at``'s last run (JSON header + raw arrays)."""
    from posviz_app.chart import COMPONENT_NAME as CHART_COMPONENT

    return sum(
        len(element.proto.bytes)
        for element in at.get("bidi_component")  # type: ignore[attr-defined]
        if element.proto.component_name == CHART_COMPONENT
    )


# The Length tab's change (issue 41: no more than a key press, at most 1.5 MB): its scheme menu
# from all six runs to two, to four, back to two.
LENGTH_CHOICES = (["alibi", "rope"], ["alibi", "rope", "sinusoidal", "none"], ["alibi", "rope"])


def key_press_rows(reps: int, *, script: bool = False) -> list[list[object]]:
    """What a step change of the Training tab costs the server beside a key press on the main
    view (issue 26: no more), both through the page (AppTest), at the page's defaults: the
    Embeddings tab's window slider moved by one (a 40-token text, T = 16: a new window), and the
    Training tab's step slider moved by one snapshot. ``cold``: a window or step not shown
    before; ``warm``: back to one shown. ``script``: two more columns, the CPU time of the
    script run's own thread (``time.thread_time`` around ``posviz_app.page.run``): the
    server's part of the rerun, without AppTest reading the run's messages back, which the
    process's time includes."""
    import posviz_app.page as page

    spent: list[float] = []
    original = page.run

    def timed() -> None:  # app.py imports run from the module at every run: this one
        began = time.thread_time()
        try:
            original()
        finally:
            spent.append(time.thread_time() - began)

    page.run = timed
    try:
        return _key_press_rows(reps, spent, script=script)
    finally:
        page.run = original


def _key_press_rows(reps: int, spent: list[float], *, script: bool) -> list[list[object]]:
    from streamlit.testing.v1 import AppTest

    found: list[list[object]] = []
    text = TEXT * 7  # 7 x 6 tokens: windows 0, 1, 2 at T = 16
    for view, query, widget, values in (
        ("embeddings", {"text": text}, "window", (1, 2, 1)),
        ("training", {"tab": "training", "train_step": "600"}, "train_step", (650, 700, 650)),
        ("length", {"tab": "length"}, "length_schemes", LENGTH_CHOICES),
    ):
        cold, warm, size = [], [], 0
        cold_script: list[float] = []
        warm_script: list[float] = []
        for _ in range(reps):
            at = AppTest.from_file(str(APP), default_timeout=600)
            for key, value in query.items():
                at.query_params[key] = str(value)
            at.run()  # imports, the tables, the run: not measured
            for value, times, script_times in zip(
                values, (cold, cold, warm), (cold_script, cold_script, warm_script), strict=True
            ):
                control = (
                    at.slider(key=widget)
                    if widget == "window"
                    else at.multiselect(key=widget)
                    if widget == "length_schemes"
                    else next(s for s in at.select_slider if s.key == widget)
                )
                spent.clear()
                start = time.process_time()
                control.set_value(value).run()
                times.append((time.process_time() - start) * 1e3)
                script_times.append(sum(spent) * 1e3)
                if at.exception or at.error:
                    raise RuntimeError([e.value for e in (*at.exception, *at.error)])
            size = chart_bytes(at)
        found.append(
            ["app", view, {"embeddings": "init", "training": "small-init"}.get(view, "shipped"),
             {"embeddings": "key press", "training": "step change"}.get(view, "schemes change"),
             f"{statistics.median(cold):.1f}", f"{statistics.median(warm):.1f}", f"{size:,}"]
            + ([f"{statistics.median(cold_script):.1f}", f"{statistics.median(warm_script):.1f}"]
               if script else [])
        )  # fmt: skip
    return found


SERVER_HEADER = ("path", "view", "change", "server CPU ms", "latency ms", "bytes received")
SERVER_CHANGES = (["alibi", "rope"], ["alibi", "rope", "none"])  # back and forth


def server_key_press_rows(reps: int) -> list[list[object]]:
    """A key press on the main view and a Length tab change on the real server (``streamlit
    run app.py``, one websocket session each: devtools.client, which asks for a run as the
    browser does, a fragment's alone for a widget drawn in one): the server process's CPU per
    change (``/proc``, whose 10 ms ticks average out over the mean of ``reps``), the time to
    the run's end and the bytes it sent (medians). The two alternate, a quiet 0.3 s before
    each; both change between two values already shown (warm)."""
    from benchmarks.loadtest import cpu_seconds
    from devtools.client import StreamlitSession
    from devtools.server import running_server

    with running_server() as server:
        key = StreamlitSession(server.url, timeout=120)
        length = StreamlitSession(server.url, timeout=120)
        changes = (
            ("embeddings", "key press", key, "window", (1, 2)),
            ("length", "schemes change", length, "length_schemes", SERVER_CHANGES),
        )
        try:
            key.open({"text": TEXT * 7})  # windows 0, 1, 2 at T = 16
            length.open({"tab": "length"})
            for _, _, session, widget, values in changes:  # each value shown once
                for value in values:
                    session.change(widget, value)
            spent: dict[str, list[float]] = {name: [] for name, *_ in changes}
            waited: dict[str, list[float]] = {name: [] for name, *_ in changes}
            sent: dict[str, list[int]] = {name: [] for name, *_ in changes}
            for i in range(reps):
                for name, _, session, widget, values in changes:
                    time.sleep(0.3)
                    before = cpu_seconds(server.pid)
                    run = session.change(widget, values[i % 2])
                    time.sleep(0.05)  # the server's last messages after the run's end
                    spent[name].append((cpu_seconds(server.pid) - before) * 1e3)
                    if run.errors:
                        raise RuntimeError(run.errors)
                    waited[name].append(run.latency * 1e3)
                    sent[name].append(run.bytes_received)
        finally:
            key.close()
            length.close()
    return [
        ["server", name, change, f"{statistics.mean(spent[name]):.1f}",
         f"{statistics.median(waited[name]):.1f}", f"{int(statistics.median(sent[name])):,}"]
        for name, change, *_ in changes
    ]  # fmt: skip


def training_rows(reps: int) -> list[list[object]]:
    """The Training view (issue 26) of each shipped run: ``cold`` a step shown the first time
    (the run loaded, as the app keeps it, nothing computed for that step), ``warm`` a step
    change to a step already shown (its numbers kept with ``memo``), each from the run to
    the chart component's bytes; GPT-2 stand-in tables beside. The app's page for it is not
    written yet: core rows only."""
    from posviz.plots.training import training_chart
    from posviz.training.runs import load_named_run
    from posviz.training.view import build_training

    gpt2 = stand_in_gpt2(50257, 1024, 768)
    found: list[list[object]] = []
    for name in ("small-init", "default-init", "book-settings"):
        run = load_named_run(name)
        run.digest  # noqa: B018 (computed once when the app loads the run)
        cold, warm, size = [], [], 0
        for _ in range(reps):
            memo = Kept()
            for step, times in ((600, cold), (650, cold), (600, warm)):
                start = time.process_time()
                view = build_training(run, step, gpt2=gpt2, memo=memo)
                spec = training_chart(view).spec
                size = len(chart_payload(spec, canvas=UNKNOWN, fill=False))
                times.append((time.process_time() - start) * 1e3)
        found.append(
            ["core", "training", name, "step", f"{statistics.median(cold):.1f}",
             f"{statistics.median(warm):.1f}", f"{size:,}"]
        )  # fmt: skip
    return found


HEADER = ("path", "view", "weights", "scheme", "cold CPU ms", "warm CPU ms", "bytes")
KEY_HEADER = (*HEADER, "cold script ms", "warm script ms")  # --key-presses: the script thread


def main(argv: list[str] | None = None) -> None:
    """Measure, print the table, and with ``--docs`` write it into docs/performance.md."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="T = 128, d = 64, 2 repeats")
    parser.add_argument("--reps", type=int, default=None, help="repeats per row (default 5)")
    parser.add_argument("--no-app", action="store_true", help="the core path only")
    parser.add_argument(
        "--key-presses",
        action="store_true",
        help="only the page's key press, Training step and Length tab change (AppTest)",
    )
    parser.add_argument(
        "--server",
        action="store_true",
        help="with --key-presses: the key press and the Length change on the real server "
        "instead (websocket sessions; mean of --reps, default 40)",
    )
    parser.add_argument("--docs", action="store_true", help="write the table into docs/")
    args = parser.parse_args(argv)
    rows, emb_dim = (128, 64) if args.quick else (1024, 768)
    reps = args.reps or (2 if args.quick else 40 if args.server else 5)
    torch.set_num_threads(1)  # as the app (posviz_app/page.py)
    started = report.start()
    sized = "" if args.key_presses else f"T = {rows}, d = {emb_dim}, "
    average = "mean" if args.server else "median"
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs; "
          f"{sized}{average} of {reps}")  # fmt: skip
    if args.key_presses:
        if args.server:
            block, header = "views_cost server key presses", SERVER_HEADER
            found = server_key_press_rows(reps)
            intro = (
                "A key press on the main view and a Length tab change on the real server, one "
                f"websocket session each, alternating; the server process's CPU (mean of {reps}), "
                "the time to the run's end and the bytes sent (medians)"
            )
        else:
            block, header = "views_cost key presses", KEY_HEADER
            found = key_press_rows(reps, script=True)
            intro = (
                "A key press on the main view, a Training step and a Length tab change through "
                f"the page (AppTest), median of {reps}; CPU of the process (AppTest reading the "
                "run back included) and of the script run's thread alone"
            )
        report.print_columns(header, found, right=True)
        if args.docs:
            command = "python benchmarks/views_cost.py " + " ".join(argv or sys.argv[1:])
            body = f"{intro}:\n\n{report.table(header, found)}"
            report.write_block(block, body, when=report.stamp(started), command=command)
        return
    found = core_rows(rows, emb_dim, reps) + training_rows(reps)
    if not args.no_app:
        found += app_rows(rows, emb_dim, reps) + key_press_rows(reps)
    report.print_columns(HEADER, found, right=True)
    if args.docs:
        command = "python benchmarks/views_cost.py " + " ".join(argv or sys.argv[1:])
        body = (
            f"Geometry, Distance and Attention views at T = {rows}, d = {emb_dim} (issues 16 "
            "and 25: at most 150 ms of server CPU and 1.5 MB per view), median of "
            f"{reps}:\n\n{report.table(HEADER, found)}"
        )
        report.write_block("views_cost", body, when=report.stamp(started), command=command.strip())


if __name__ == "__main__":
    main()
