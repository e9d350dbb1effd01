"""benchmarks/report.py: a benchmark's block in docs/performance.md is replaced, never the
prose around it, and it carries the command, the date, the commit, the machine and the load."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmarks.report import Stamp, table, write_block

WHEN = Stamp(
    started=datetime(2026, 12, 1, 9, 30, tzinfo=UTC),
    commit="abc1234",
    machine="2 CPUs (test CPU), 24 GiB, Python 3.11.7",
    load_before=(0.1, 0.2, 0.3),
    load_after=(1.0, 0.5, 0.25),
)


def test_a_block_is_written_then_replaced_and_the_prose_kept(tmp_path: Path) -> None:
    page = tmp_path / "performance.md"
    page.write_text("# Performance\n\nProse before.\n", encoding="utf-8")
    write_block("timing", table(["a", "b"], [[1, 2]]), when=WHEN, command="python x.py", path=page)
    first = page.read_text(encoding="utf-8")
    assert first.startswith("# Performance\n\nProse before.\n")
    assert "`python x.py`" in first and "| 1 | 2 |" in first
    assert "Measured 2026-12-01 09:30 UTC at commit `abc1234` on 2 CPUs (test CPU)" in first
    assert "load average 0.10 / 0.20 / 0.30 before, 1.00 / 0.50 / 0.25 after" in first
    page.write_text(first + "\nProse after.\n", encoding="utf-8")
    write_block("timing", "| 3 |", when=WHEN, command="python x.py", path=page)
    second = page.read_text(encoding="utf-8")
    assert "| 1 | 2 |" not in second and "| 3 |" in second
    assert second.count("<!-- benchmark: timing -->") == 1
    assert second.startswith("# Performance\n\nProse before.\n") and second.endswith("after.\n")


def test_the_commit_is_marked_changed_by_any_file_but_the_page_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    from benchmarks import report

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "performance.md"
    page.write_text("# Performance\n", encoding="utf-8")
    (tmp_path / "code.py").write_text("x = 1\n", encoding="utf-8")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    monkeypatch.setattr(report, "ROOT", tmp_path)
    monkeypatch.setattr(report, "PERFORMANCE", page)
    head = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "--short", "HEAD"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    assert report.commit() == head
    page.write_text("# Performance\n\nA block.\n", encoding="utf-8")  # a benchmark wrote it
    assert report.commit() == head
    (tmp_path / "code.py").write_text("x = 2\n", encoding="utf-8")
    assert report.commit() == head + "+changes"
