"""Ready-made views, each a :class:`~posviz.config.Settings`, named for the menu.

>>> matching_preset(Settings(scheme="rope"))
'A rose is a rose (repeated words)'
>>> matching_preset(Settings(text="my own words")) is None
True
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from posviz.compare import DEFAULT_COMPARE_TEXT as WORD_ORDER_COMPARE_TEXT
from posviz.compare import DEFAULT_TEXT as WORD_ORDER_TEXT
from posviz.config import Settings, for_weights

BOOK_2_5_TEXT: Final = (
    "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace."
)
# The first 33 tokens of The Verdict (Edith Wharton, 1908, public domain), the short story the
# book trains on: with context length 4 and stride 4 they are the book's first batch, [8, 4].
# The 33rd token (" in") is the target of the last window: the book's GPTDatasetV1 needs it to
# cut 8 windows, and posviz shows it as the one token left over.
VERDICT_OPENING: Final = (
    "I HAD always thought Jack Gisburn rather a cheap genius--though a good fellow "
    "enough--so it was no great surprise to me to hear that, in"
)

PRESETS: Final[dict[str, Settings]] = {
    "A rose is a rose (repeated words)": Settings(),
    "Book §2.5: Hello, do you like tea?": Settings(text=BOOK_2_5_TEXT, context_length=32),
    "Every effort moves you": Settings(text="Every effort moves you", context_length=4),
    "Book §2.8: The Verdict, [8, 4, 256]": Settings(
        text=VERDICT_OPENING, context_length=4, emb_dim=256, stride=4
    ),
    # The same five tokens in another order (see posviz.compare): the "Word order" tab.
    "Word order: The dog bites the man": Settings(
        text=WORD_ORDER_TEXT, compare_text=WORD_ORDER_COMPARE_TEXT
    ),
}


def matching_preset(settings: Settings) -> str | None:
    """The name of the preset ``settings`` shows, or ``None``; an example seen under another
    positional scheme, with GPT-2's trained tables, with the causal mask toggled, in another
    window of its batch, through other attention heads or shifted (the Attention tab's
    controls) or beside another training run (the Training tab's), is still that example.

    >>> verdict = PRESETS["Book §2.8: The Verdict, [8, 4, 256]"]
    >>> matching_preset(replace(verdict, window=3)), matching_preset(replace(verdict, seed=7))
    ('Book §2.8: The Verdict, [8, 4, 256]', None)
    """
    return next(
        (
            name
            for name, preset in PRESETS.items()
            if for_weights(
                replace(
                    preset,
                    scheme=settings.scheme,
                    causal=settings.causal,
                    window=settings.window,
                    heads=settings.heads,
                    head=settings.head,
                    shift=settings.shift,
                    run=settings.run,
                    train_step=settings.train_step,
                ),
                settings.weights,
            )
            == settings
        ),
        None,
    )
