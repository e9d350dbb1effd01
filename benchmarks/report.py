"""Numbers live where they are generated: each benchmark writes its own table into
``docs/performance.md`` with ``--docs``, stamped with the date, the commit, the machine and the
load average; nobody types a measurement by hand.

The page keeps its prose; each benchmark owns one block between two markers::

    <!-- benchmark: browser_timing -->
    ... written by `python benchmarks/browser_timing.py --docs` ...
    <!-- /benchmark: browser_timing -->

:func:`write_block` replaces that block (or appends it at the end of the page if it is not
there yet) and leaves everything else as it is.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PERFORMANCE = ROOT / "docs" / "performance.md"


@dataclass(frozen=True)
class Stamp:
    """When, where and on what a benchmark ran."""

    started: datetime
    commit: str  # short hash, with "+changes" if the working tree differed from it
    machine: str
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    def line(self) -> str:
        """One Markdown line for the page."""
        load = "load average {:.2f} / {:.2f} / {:.2f} before, {:.2f} / {:.2f} / {:.2f} after"
        return (
            f"Measured {self.started:%Y-%m-%d %H:%M} UTC at commit `{self.commit}` on "
            f"{self.machine}; {load.format(*self.load_before, *self.load_after)} "
            "(1, 5 and 15 minutes)."
        )


def commit() -> str:
    """The checked-out commit, marked when the working tree has uncommitted changes (other
    than to docs/performance.md, which the benchmarks write)."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    page = f":!{PERFORMANCE.relative_to(ROOT)}"
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", page)
    return head + ("+changes" if changed else "")


def machine() -> str:
    """CPU model, cores and memory, as far as the OS says."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        meminfo = Path("/proc/meminfo").read_text(encoding="utf-8")
        kb = int(re.search(r"MemTotal:\s+(\d+)", meminfo)[1])  # type: ignore[index]
        memory = f", {kb / 2**20:.0f} GiB"
    except (OSError, TypeError):
        memory = ""
    return f"{os.cpu_count()} CPUs ({model}){memory}, Python {platform.python_version()}"


def start() -> tuple[datetime, tuple[float, float, float]]:
    """Call before measuring: the time and the load average then."""
    return datetime.now(UTC), os.getloadavg()


def stamp(started: tuple[datetime, tuple[float, float, float]]) -> Stamp:
    """Call after measuring (``started`` from :func:`start`)."""
    return Stamp(started[0], commit(), machine(), started[1], os.getloadavg())


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def print_columns(
    header: Sequence[str], rows: Sequence[Sequence[object]], *, right: bool = False
) -> None:
    """Print ``rows`` under ``header`` as aligned plain-text columns (the terminal's table)."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    for line in (header, *rows):
        cells = zip(line, widths, strict=True)
        print("  ".join(str(c).rjust(w) if right else str(c).ljust(w) for c, w in cells))


def write_block(
    name: str, body: str, *, when: Stamp, command: str, path: Path = PERFORMANCE
) -> None:
    """Put ``body`` (Markdown) into the page's block ``name``, with the command and stamp."""
    begin, end = f"<!-- benchmark: {name} -->", f"<!-- /benchmark: {name} -->"
    block = f"{begin}\n`{command}`\n\n{when.line()}\n\n{body.strip()}\n{end}"
    page = path.read_text(encoding="utf-8") if path.exists() else ""
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(page):
        page = pattern.sub(lambda _: block, page, count=1)
    else:
        page = page.rstrip("\n") + f"\n\n{block}\n"
    path.write_text(page, encoding="utf-8")
    print(f"wrote block {name!r} of {path}")
