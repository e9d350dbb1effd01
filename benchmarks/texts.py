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


def varied_text(variant: int = 0, words: int = 1100) -> str:
    """About ``words`` GPT-2 tokens of English words, nearly all distinct, spread over the
    whole vocabulary: a window of 1,024 tokens touches ~350 of the 393 128-row blocks of the
    token table (``long_text`` repeats four paragraphs and touches few). The words are GPT-2's
    own whole-word tokens (`` word``), read from the vendored ``encoder.json``, in an order
    fixed by ``variant``."""
    import json
    import random
    from pathlib import Path

    encoder = json.loads((Path(__file__).parent.parent / "posviz/data/encoder.json").read_text())
    vocabulary = sorted(
        (token_id, text[1:])
        for text, token_id in encoder.items()
        if text.startswith("\u0120") and text[1:].isalpha() and text[1:].islower() and len(text) > 4
    )
    chosen = random.Random(variant).sample(vocabulary, words)
    return " ".join(word for _, word in chosen)


def edited(text: str, edit: int) -> str:
    """``text`` with one word replaced (word ``97 * edit`` mod its length): a small edit."""
    words = text.split(" ")
    position = (97 * edit) % len(words)
    words[position] = ["rose", "tea", "effort", "palace", "garden"][edit % 5]
    return " ".join(words)
