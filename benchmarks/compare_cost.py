"""What compare mode adds to a rerun: CPU time of the comparison and its chart (the figure's
spec and the bytes the chart component gets, as the page sends them), and their size, for a few
window sizes (the tables are built once, as the app caches them).

Run from the repository root::

    python benchmarks/compare_cost.py
    python benchmarks/compare_cost.py --docs    # and write the table into docs/performance.md

CPU time of this process (``time.process_time``, one torch thread as in the app), median of
``REPEATS`` runs; the load average is printed with the numbers. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report
from posviz.attention import book_attention_weights
from posviz.compare import MAX_COMPARE_TOKENS, compare_with_text
from posviz.embeddings import SeededEmbeddings
from posviz.plots import UNKNOWN
from posviz.plots.word_order import compare_spec
from posviz.tokenizer import encode
from posviz_app.chart import chart_payload

REPEATS = 5
WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "an",
    "old",
    "cat",
    "sleeps",
]


def texts(num_tokens: int) -> tuple[str, str]:
    """A text of about ``num_tokens`` single-token words, and its words reversed."""
    words = [WORDS[i % len(WORDS)] for i in range(num_tokens)]
    first = " " + " ".join(words)
    second = " " + " ".join(reversed(words))
    return first, second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", action="store_true", help="write the table into docs/")
    args = parser.parse_args()
    torch.set_num_threads(1)
    started = report.start()
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    header = ["n", "d", "scheme", "causal", "compare CPU ms", "chart CPU ms", "chart kB"]
    rows = []
    for num_tokens, emb_dim in ((5, 64), (5, 768), (32, 256), (MAX_COMPARE_TOKENS, 768)):
        tables = SeededEmbeddings.create(seed=123, emb_dim=emb_dim)
        first, second = texts(num_tokens)
        ids = encode(first)
        for scheme, causal in (("learned", False), ("rope", True)):
            compare_ms, figure_ms, size = [], [], 0
            for _ in range(REPEATS):
                start = time.process_time()
                weights = book_attention_weights(d_in=emb_dim, d_out=emb_dim)
                comparison = compare_with_text(
                    tables,
                    ids,
                    second,
                    context_length=len(ids),
                    scheme=scheme,
                    weights=weights,
                    causal=causal,
                )
                middle = time.process_time()
                spec = compare_spec(comparison)
                size = len(chart_payload(spec, canvas=UNKNOWN, fill=False))
                end = time.process_time()
                compare_ms.append((middle - start) * 1e3)
                figure_ms.append((end - middle) * 1e3)
            rows.append([
                len(ids), emb_dim, scheme, causal, f"{statistics.median(compare_ms):.1f}",
                f"{statistics.median(figure_ms):.1f}", f"{size / 1000:.0f}",
            ])  # fmt: skip
            print(" | ".join(str(cell) for cell in rows[-1]), flush=True)
    if args.docs:
        body = (
            f"Median of {REPEATS} runs, CPU time of this process:\n\n{report.table(header, rows)}"
        )
        command = "python benchmarks/compare_cost.py " + " ".join(sys.argv[1:])
        report.write_block("compare_cost", body, when=report.stamp(started), command=command)


if __name__ == "__main__":
    main()
