"""Plain-text tables and times for the benchmark scripts (``bench.py``, ``browser_timing.py``)."""

from __future__ import annotations


def fmt_time(seconds: float | None) -> str:
    """``"215 ms"`` below 10 s, else ``"12.3 s"``; ``"-"`` for no value."""
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    """Columns padded to their widest cell; the first column left-aligned, the others right."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    print(line)
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                         enumerate(zip(row, widths, strict=True))))  # fmt: skip
    print()
