"""What one rerun of the default view asks of Streamlit: messages, widgets, and the
session-state copies its widgets make (issue 42, item 6: where a lecture hall's reruns go).

Run from the repository root (about 20 seconds)::

    python benchmarks/rerun_calls.py              # 40 reruns
    python benchmarks/rerun_calls.py --reruns 50

It drives the page with AppTest at its defaults and moves what the load test's students move
on the default view (``benchmarks/loadtest.py``'s ``DEFAULT_VIEW_MOVES``: the seed, the
scheme, the embedding dimension, there and back), then prints, per rerun:

* counts, exact and the same on every machine: the messages the run sends (by kind), the
  keys of the session's state, and the calls Streamlit makes to ``SessionState.filtered_state``
  (each one reads every key of the session's state through its presenters: a copy of the
  state) and to ``SessionState.__getitem__``;
* under ``cProfile``, the share of the rerun's time in a few of Streamlit's parts and in
  posviz's own work. Shares of a profiled run, not times: the profiler's own cost inflates
  small calls, so they say where to look, not what a change would save.

The real server adds the event loop's side (each message is handed to it by the script
thread): ``python benchmarks/loadtest.py --only capacity`` measures both. Nothing here asserts
a time.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/rerun_calls.py`: import from the root
    sys.path.insert(0, str(ROOT))

from benchmarks.tables import print_table  # noqa: E402

# Where a rerun's time goes, by the function that covers it (the file and the name cProfile
# reports). One row each; a function called inside another is also counted in that one.
PARTS: tuple[tuple[str, str, str], ...] = (
    ("the whole rerun (posviz_app.page.run)", "posviz_app/page.py", "run"),
    ("the sidebar's widgets (posviz_app.controls.sidebar)", "posviz_app/controls.py", "sidebar"),
    ("Streamlit: SessionState.filtered_state", "streamlit/runtime/state/session_state.py",
     "filtered_state"),
    ("Streamlit: a message enqueued (DeltaGenerator._enqueue)", "streamlit/delta_generator.py",
     "_enqueue"),
    ("Streamlit: widgets registered (register_widget)", "streamlit/runtime/state/widgets.py",
     "register_widget"),
    ("posviz: settings to a view (posviz.view.build_view)", "posviz/view.py", "build_view"),
)  # fmt: skip


def message_kind(msg: Any) -> str:
    """``delta:new_element:slider``, ``delta:add_block:flex_container``, ``page_info_changed``..."""
    kind = msg.WhichOneof("type")
    if kind != "delta":
        return str(kind)
    delta = msg.delta
    what = delta.WhichOneof("type")
    inner = getattr(delta, what) if what in ("new_element", "add_block") else None
    return f"delta:{what}:{inner.WhichOneof('type')}" if inner is not None else f"delta:{what}"


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """Count the messages every script run sends and the state calls it makes, while inside."""
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
    from streamlit.runtime.state.session_state import SessionState

    counts: Counter[str] = Counter()
    enqueue = ScriptRunner._enqueue_forward_msg
    filtered = SessionState.filtered_state
    getitem = SessionState.__getitem__

    def enqueue_counted(self: Any, msg: Any) -> None:
        counts["message " + message_kind(msg)] += 1
        enqueue(self, msg)

    def filtered_counted(self: Any) -> dict[str, Any]:
        counts["call SessionState.filtered_state"] += 1
        return filtered.fget(self)

    def getitem_counted(self: Any, key: str) -> Any:
        counts["call SessionState.__getitem__"] += 1
        return getitem(self, key)

    ScriptRunner._enqueue_forward_msg = enqueue_counted
    SessionState.filtered_state = property(filtered_counted)
    SessionState.__getitem__ = getitem_counted
    try:
        yield counts
    finally:
        ScriptRunner._enqueue_forward_msg = enqueue
        SessionState.filtered_state = filtered
        SessionState.__getitem__ = getitem


def moves(at: Any) -> list[Callable[[], Any]]:
    """What a student on the default view changes, in the load test's order, there and back
    (a class moves among a few values, so its views come from warm caches, as the load test's
    do). Each looks its widget up when it moves: the seed box's key carries its value."""

    def seed(by: int) -> Any:
        box = at.sidebar.text_input[0]
        return box.set_value(str(int(box.value) + by))

    def scheme(index: int) -> Any:
        menu = at.selectbox(key="scheme")
        return menu.set_value(menu.options[index])

    def emb_dim(by: int) -> Any:
        slider = at.slider(key="emb_dim")
        return slider.set_value(slider.value + by)

    there = [lambda: seed(1), lambda: scheme(1), lambda: emb_dim(2), lambda: scheme(0)]
    back = [lambda: seed(-1), lambda: scheme(1), lambda: emb_dim(-2), lambda: scheme(0)]
    return there + back


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reruns", type=int, default=40)
    args = parser.parse_args()
    os.environ.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    changes = moves(at)
    for change in changes:  # every view of the cycle once: caches warm, the first gc.freeze
        change()
        at.run()
    with counting() as counts:
        for n in range(args.reruns):
            changes[n % len(changes)]()
            at.run()
        assert not at.exception, at.exception
    state = at.session_state._state._state  # SafeSessionState -> SessionState
    keys = len(list(state._keys()))

    # The page runs in AppTest's script thread: profile it there, around posviz_app.page.run
    # (app.py imports it by name at every run).
    import posviz_app.page

    profile = cProfile.Profile()
    run = posviz_app.page.run

    def profiled() -> None:
        profile.runcall(run)

    posviz_app.page.run = profiled
    try:
        for n in range(args.reruns):
            changes[n % len(changes)]()
            at.run()
    finally:
        posviz_app.page.run = run

    runs = args.reruns
    messages = sum(v for k, v in counts.items() if k.startswith("message "))
    rows = [["messages sent", f"{messages / runs:.1f}"]]
    rows += [[f"  {k.removeprefix('message ')}", f"{v / runs:.1f}"]
             for k, v in counts.most_common() if k.startswith("message ")]  # fmt: skip
    rows.append(["keys of the session's state", str(keys)])
    rows += [[k.removeprefix("call "), f"{v / runs:.1f}"]
             for k, v in sorted(counts.items()) if k.startswith("call ")]  # fmt: skip
    print(f"Per rerun of the default view, over {runs} reruns (exact counts):")
    print_table(["what", "per rerun"], rows)

    stats = pstats.Stats(profile).stats

    def cumulative(file: str, name: str) -> float:
        return sum(
            entry[3]
            for (path, _, function), entry in stats.items()
            if function == name and path.replace(os.sep, "/").endswith(file)
        )

    whole = cumulative(*PARTS[0][1:])  # the first part is the whole rerun
    shares = [
        [label, f"{100 * cumulative(file, name) / whole:.0f} %" if whole else "-"]
        for label, file, name in PARTS
    ]
    print("\nUnder cProfile, share of the whole rerun (a profiled run's shares, not times):")
    print_table(["part", "share"], shares)


if __name__ == "__main__":
    main()
