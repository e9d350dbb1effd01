"""benchmarks/browser_timing.py without a browser: a recorded key press split into phases, the
targets table, and the block it writes into docs/performance.md (to a temporary page here).
No time is measured: the records are made up, their expected phases computed from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.browser_timing import (
    DEFAULTS,
    FLOOR_FRESH,
    FLOOR_KEY,
    LOAD_FRESH,
    _phases,
    report_tables,
    write_docs,
)
from benchmarks.report import start


def _record(key: float, drawn_at: float) -> dict[str, object]:
    """A key press at ``key`` ms whose one Plotly.react starts at ``drawn_at`` ms."""
    react = {"name": "react", "t0": drawn_at, "t1": drawn_at + 20, "t2": drawn_at + 25,
             "t3": drawn_at + 30, "shown": True}  # fmt: skip
    return {
        "key": key,
        "sent": key + 5,
        "msgs": [{"t": key + 40, "bytes": 30_000}, {"t": key + 41, "bytes": 2_000}],
        "calls": [react],
        "drawn": react,
        "resources": [],
    }


def test_a_key_press_splits_into_its_phases() -> None:
    phases = _phases(_record(1000.0, 1050.0))
    assert phases["s"] == pytest.approx(0.080)  # key -> the frame after the react
    assert phases["to_request"] == pytest.approx(0.005)
    assert phases["server"] == pytest.approx(0.035)  # the largest message is the chart's
    assert phases["msg_to_plotly"] == pytest.approx(0.010)
    assert phases["messages"] == 2
    assert phases["last_msg_to_plotly"] == pytest.approx(0.009)  # after the run's last message
    assert phases["first_draw"] == pytest.approx(0.025)
    assert phases["to_frame"] == pytest.approx(0.005)
    assert phases["received_kb"] == pytest.approx(32.0)
    assert phases["waits"] == pytest.approx(0.0)


def test_targets_are_judged_by_the_median_and_written_to_the_docs(tmp_path: Path) -> None:
    fast, slow = _phases(_record(0.0, 20.0)), _phases(_record(0.0, 200.0))
    load = _phases(_record(0.0, 900.0), load=True)
    result = {"rows": {DEFAULTS: [fast, fast, slow], LOAD_FRESH: [load]}, "notes": ["a note"]}
    caption, _, rows = report_tables(result)[0]
    assert caption.startswith("Browser timings")
    assert [row[2] for row in rows] == ["yes", "yes"]  # 50 ms <= 90 ms; 930 ms <= 1.5 s
    page = tmp_path / "performance.md"
    page.write_text("# Performance\n", encoding="utf-8")
    write_docs(result, start(), "python benchmarks/browser_timing.py --quick", path=page)
    text = page.read_text(encoding="utf-8")
    assert "<!-- benchmark: browser_timing -->" in text and "- a note" in text
    assert "`python benchmarks/browser_timing.py --quick`" in text
    assert "| key press -> redrawn chart, defaults (T=16, d=64) <= 90 ms |" in text


def test_the_floor_apps_key_press_is_a_key_press_row_and_its_loads_are_page_loads() -> None:
    press, load = _phases(_record(0.0, 20.0)), _phases(_record(0.0, 900.0), load=True)
    result = {"rows": {DEFAULTS: [press], FLOOR_KEY: [press], FLOOR_FRESH: [load]}}
    tables = {caption.split(" ")[0]: rows for caption, _, rows in report_tables(result)}
    assert [row[0] for row in tables["Key"]] == [
        "defaults (T=16, d=64)",
        "floor: 6-line st.plotly_chart app",
    ]
    assert [row[0] for row in tables["Page"]] == ["floor, new context"]
    assert [row[2] for row in tables["Browser"]] == ["yes", "-", "-"]  # the floor has no target
