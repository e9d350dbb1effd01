"""posviz.batching: windows equal an independent slicing loop in the style of the book's
``GPTDatasetV1`` (section 2.6), for inputs only.

The book's loop is ``for i in range(0, len(token_ids) - max_length, stride)`` because every
input chunk also needs a target chunk one token further. posviz shows inputs only, so the
window that ends exactly at the last token is kept: ``range(0, len - max_length + 1, stride)``.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posviz.batching import make_batch
from posviz.config import SettingsError


def reference_windows(token_ids: list[int], max_length: int, stride: int) -> list[list[int]]:
    """Input chunks of the book's sliding window; a short text is one shorter chunk."""
    if not token_ids:
        return []
    if len(token_ids) < max_length:
        return [list(token_ids)]
    input_chunks = []
    for i in range(0, len(token_ids) - max_length + 1, stride):
        input_chunk = token_ids[i : i + max_length]
        input_chunks.append(input_chunk)
    return input_chunks


def reference_left_out(
    num_tokens: int, max_length: int, stride: int
) -> tuple[list[int], list[int]]:
    """Positions in no window: (before the last window's end, after it)."""
    starts = list(range(0, max(num_tokens - max_length, 0) + 1, stride)) if num_tokens else []
    covered: set[int] = set()
    end = 0
    for start in starts:
        span = range(start, min(start + max_length, num_tokens))
        covered.update(span)
        end = max(end, span.stop)
    uncovered = sorted(set(range(num_tokens)) - covered)
    return [p for p in uncovered if p < end], [p for p in uncovered if p >= end]


def check_against_reference(token_ids: list[int], context_length: int, stride: int) -> None:
    batch = make_batch(token_ids, context_length=context_length, stride=stride)
    expected = reference_windows(token_ids, context_length, stride)
    assert [list(batch.window_token_ids(i)) for i in range(batch.num_windows)] == expected
    for i in range(batch.num_windows):
        span = batch.window_span(i)
        assert [token_ids[p] for p in span] == expected[i]
    skipped, dropped = reference_left_out(len(token_ids), context_length, stride)
    assert list(batch.dropped) == dropped
    assert batch.skipped == len(skipped)
    assert batch.shape == ((len(expected), len(expected[0])) if expected else (0, 0))
    assert batch.num_windows == len(expected)
    if expected:
        inputs = torch.tensor(expected)  # the book's inputs tensor [B, T]
        assert batch.shape == tuple(inputs.shape)


TOKEN_IDS = [101 + 7 * i for i in range(23)]  # distinct ids, so a wrong slice shows


@pytest.mark.parametrize(
    ("context_length", "stride"),
    [
        pytest.param(4, 1, id="stride1-overlap"),
        pytest.param(4, 2, id="stride<T"),
        pytest.param(4, 4, id="stride=T-book-2.8"),
        pytest.param(4, 5, id="stride>T-skip1"),
        pytest.param(4, 9, id="stride>>T"),
        pytest.param(5, 5, id="T5-drops3"),
        pytest.param(23, 23, id="T=n-one-window"),
        pytest.param(22, 1, id="T=n-1-two-windows"),
        pytest.param(1, 1, id="T1"),
        pytest.param(1, 3, id="T1-stride3"),
        pytest.param(7, 100, id="stride-beyond-text"),
    ],
)
def test_windows_equal_the_book_loop(context_length: int, stride: int) -> None:
    check_against_reference(TOKEN_IDS, context_length, stride)


@given(
    st.lists(st.integers(0, 50256), max_size=60),
    st.integers(1, 70),
    st.integers(1, 70),
)
def test_windows_equal_the_book_loop_property(
    token_ids: list[int], context_length: int, stride: int
) -> None:
    check_against_reference(token_ids, context_length, stride)


def test_default_stride_is_context_length() -> None:
    batch = make_batch(TOKEN_IDS, context_length=4)
    assert batch.stride == 4
    assert [list(batch.window_token_ids(i)) for i in range(5)] == reference_windows(TOKEN_IDS, 4, 4)


def test_book_2_8_batch_shape() -> None:
    token_ids = list(range(1000, 1032))
    batch = make_batch(token_ids, context_length=4, stride=4)
    inputs = torch.tensor([batch.window_token_ids(i) for i in range(batch.num_windows)])
    assert batch.shape == (8, 4)
    assert torch.equal(inputs, torch.tensor(token_ids[:32]).view(8, 4))
    assert list(batch.dropped) == []
    assert batch.skipped == 0


def test_short_text_is_one_shorter_window() -> None:
    batch = make_batch([5, 6, 7], context_length=8)
    assert batch.num_windows == 1
    assert batch.window_length == 3
    assert batch.shape == (1, 3)
    assert batch.window_token_ids(0) == (5, 6, 7)
    assert batch.window_span(0) == range(0, 3)  # positions 0..n-1
    assert batch.context_length == 8  # the positional table still has T rows
    assert list(batch.dropped) == [] and batch.skipped == 0


def test_empty_text_has_no_windows() -> None:
    batch = make_batch([], context_length=4)
    assert batch.num_windows == 0
    assert batch.shape == (0, 0)
    assert list(batch.dropped) == []
    assert batch.skipped == 0
    with pytest.raises(SettingsError, match="got 0"):
        batch.window_token_ids(0)


def test_dropped_and_skipped_counts() -> None:
    # 10 tokens, T=3, stride 4: windows at 0 and 4 -> [0,1,2] [4,5,6]; 3 skipped, 7..9 dropped.
    batch = make_batch(list(range(10)), context_length=3, stride=4)
    assert [batch.window_token_ids(i) for i in range(batch.num_windows)] == [(0, 1, 2), (4, 5, 6)]
    assert batch.skipped == 1
    assert batch.dropped == range(7, 10)


@pytest.mark.parametrize("window", [-1, 6, 7, 100])
def test_window_out_of_range(window: int) -> None:
    batch = make_batch(TOKEN_IDS, context_length=4)  # 5 windows
    assert batch.num_windows == 5
    with pytest.raises(SettingsError) as error:
        batch.window_token_ids(window)
    message = str(error.value)
    assert f"got {window}" in message and "from 0 to 4" in message
    with pytest.raises(SettingsError):
        batch.window_span(window)


def test_window_five_is_out_of_range() -> None:
    batch = make_batch(TOKEN_IDS, context_length=4)
    assert batch.window_token_ids(4) == tuple(TOKEN_IDS[16:20])
    with pytest.raises(SettingsError, match="got 5"):
        batch.window_token_ids(5)


@pytest.mark.parametrize(
    ("context_length", "stride"),
    [
        pytest.param(0, None, id="T0"),
        pytest.param(4, 0, id="stride0"),
        pytest.param(-1, 2, id="T-1"),
    ],
)
def test_bad_context_length_or_stride(context_length: int, stride: int | None) -> None:
    with pytest.raises(SettingsError, match="at least 1"):
        make_batch(TOKEN_IDS, context_length=context_length, stride=stride)


@pytest.mark.parametrize(
    ("num_tokens", "context_length", "stride"),
    [
        pytest.param(32, 4, 4, id="verdict-32-no-target"),
        pytest.param(33, 4, 4, id="verdict-33"),
        pytest.param(3, 4, 4, id="short"),
        pytest.param(4, 4, 4, id="exactly-T"),
        pytest.param(10, 4, 3, id="stride-3"),
        pytest.param(11, 4, 3, id="stride-3-no-target"),
        pytest.param(20, 4, 6, id="skipping"),
    ],
)
def test_book_windows_follow_the_books_dataset(
    num_tokens: int, context_length: int, stride: int
) -> None:
    """GPTDatasetV1 (section 2.6) cuts a window at i only if token i + max_length exists."""
    token_ids = list(range(num_tokens))
    book_inputs = [
        token_ids[i : i + context_length] for i in range(0, len(token_ids) - context_length, stride)
    ]
    batch = make_batch(token_ids, context_length=context_length, stride=stride)
    assert batch.book_num_windows == len(book_inputs)
    ours = [list(batch.window_token_ids(i)) for i in range(batch.num_windows)]
    assert batch.same_as_book is (ours == book_inputs)
