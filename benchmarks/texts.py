"""Deterministic long texts for the benchmarks (no posviz import: workers import lazily)."""

from __future__ import annotations

MAX_TEXT_CHARS = 25_000  # posviz.config.MAX_TEXT_CHARS (kept literal: the worker imports lazily)

_PARAGRAPHS = (
    "I had always thought Jack Gisburn rather a cheap genius, though a good fellow enough, so "
    "it was no great surprise to me to hear that, in the height of his glory, he had dropped "
    "his painting, married a rich widow, and established himself in a villa on the Riviera.",
    "Hello, do you like tea? In the sunlit terraces of the palace, 42 visitors counted 1,024 "
    "tiles while a rose is a rose is a rose; the gardener's notebook listed emb_dim=768 and "
    "context_length=1024 as if they were plants.",
    "Self-attention on its own is blind to order: the same token gets the same vector wherever "
    "it stands. Positional embeddings, learned or sinusoidal, add what the position means; "
    "rotary embeddings rotate pairs of dimensions instead (Llama, 2023).",
    "Mrs. Thwing's drawing-room was full of sketches: charcoal, sepia, watercolour. \"It's the "
    'last he painted, you know," she said, and her eyes wandered to the mantel-piece, where '
    "a small picture of a donkey hung above the clock.",
)


def long_text(variant: int = 0) -> str:
    """A deterministic English text just under the app's limit (about 5,500 GPT-2 tokens)."""
    parts, part = [f"Take {variant}."], 0
    while sum(len(p) + 1 for p in parts) < MAX_TEXT_CHARS - 400:
        parts.append(f"Part {part}. {_PARAGRAPHS[part % len(_PARAGRAPHS)]}")
        part += 1
    return " ".join(parts)[: MAX_TEXT_CHARS - 1]
