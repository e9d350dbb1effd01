"""Cutting a text's token ids into windows of ``context_length`` tokens, as in section 2.8.

The book's data loader slides a window of ``max_length`` tokens over the text with a
``stride``; with ``stride == max_length`` the windows do not overlap. The windows stacked
give ``inputs`` of shape ``[B, T]``. posviz uses the same rule and keeps what the loader
leaves out visible: tokens after the last full window are *dropped*, and a stride larger than
the context length *skips* the tokens between windows. A text shorter than the context length
gives one window of all its ``n < T`` tokens.

>>> batch = make_batch(list(range(10)), context_length=4)
>>> batch.num_windows, batch.window_token_ids(1), batch.dropped
(2, (4, 5, 6, 7), range(8, 10))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from posviz.config import SettingsError


@dataclass(frozen=True)
class Batch:
    """The windows of one text; window ``i`` covers ``token_ids[starts[i] : starts[i] + T]``."""

    token_ids: tuple[int, ...]
    context_length: int  # T, rows of the positional table
    stride: int
    starts: range  # first token of each window

    @property
    def num_windows(self) -> int:
        """B in ``inputs [B, T]``."""
        return len(self.starts)

    @property
    def window_length(self) -> int:
        """Tokens per window: ``context_length``, or fewer for a short text."""
        return min(len(self.token_ids), self.context_length)

    def window_span(self, window: int) -> range:
        """Positions in the text of the tokens in ``window``."""
        if not 0 <= window < self.num_windows:
            raise SettingsError(
                f"window must be from 0 to {self.num_windows - 1} for this text, got {window}"
            )
        start = self.starts[window]
        return range(start, start + self.window_length)

    def window_token_ids(self, window: int) -> tuple[int, ...]:
        """The token ids of ``window``: row ``window`` of the book's ``inputs [B, T]``."""
        span = self.window_span(window)
        return self.token_ids[span.start : span.stop]

    @property
    def dropped(self) -> range:
        """Positions of the tokens after the last window: no window holds them."""
        if not self.starts:
            return range(0)
        return range(self.starts[-1] + self.window_length, len(self.token_ids))

    @property
    def skipped(self) -> int:
        """Tokens between windows when ``stride > context_length``."""
        gap = self.stride - self.window_length
        return max(gap, 0) * max(self.num_windows - 1, 0)

    @property
    def book_num_windows(self) -> int:
        """Windows the book's ``GPTDatasetV1`` cuts from the same tokens: it needs one more
        token after each window (the last target), so it starts windows at
        ``range(0, len(token_ids) - max_length, stride)``."""
        return len(range(0, len(self.token_ids) - self.context_length, self.stride))

    @property
    def same_as_book(self) -> bool:
        """The book's data loader gives exactly these windows (same starts, full length)."""
        longer = len(self.token_ids) > self.context_length
        return longer and self.book_num_windows == self.num_windows

    @property
    def shape(self) -> tuple[int, int]:
        """Shape of the book's ``inputs`` tensor: ``[B, T]``."""
        return (self.num_windows, self.window_length)


def make_batch(
    token_ids: Sequence[int], *, context_length: int, stride: int | None = None
) -> Batch:
    """Windows of ``context_length`` tokens every ``stride`` tokens (default: no overlap)."""
    step = context_length if stride is None else stride
    if context_length < 1 or step < 1:
        raise SettingsError(
            f"context_length and stride must be at least 1, got {context_length} and {step}"
        )
    ids = tuple(token_ids)
    if not ids:
        return Batch(ids, context_length, step, range(0))
    last_start = max(len(ids) - context_length, 0)
    return Batch(ids, context_length, step, range(0, last_start + 1, step))
