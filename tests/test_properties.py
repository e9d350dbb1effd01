"""Property tests of the posviz core: any text, any in-range settings.

Every property is checked against a reference written here: torch's ``manual_seed`` +
``nn.Embedding``, the window arithmetic of section 2.8, Python's own UTF-8 and HTML codecs.
Example counts are bounded so the file runs in well under a minute; ``deadline=None`` because
the first call builds the tokenizer.
"""

from __future__ import annotations

import html
import re
import string
import unicodedata
from functools import cache

import hypothesis.strategies as st
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from reference import book_tables

from posviz.batching import make_batch
from posviz.config import (
    CONTEXT_LENGTH_RANGE,
    EMB_DIM_RANGE,
    MAX_TEXT_CHARS,
    SCHEMES,
    SEED_RANGE,
    Settings,
    SettingsError,
    validate,
)
from posviz.embeddings import SeededEmbeddings
from posviz.pipeline import embed_window
from posviz.token_text import WORD_JOINER, for_markdown, for_plotly, visible
from posviz.tokenizer import decode, encode, token_bytes

VOCAB = 50257
END_OF_TEXT = "<|endoftext|>"
FRAGMENTS = [END_OF_TEXT, "<|endoftext", "endoftext|>", "<|", "|>", "<|endoftext|", "<||>"]
INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}
FEW = settings(
    max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
MANY = settings(
    max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

# Every code point, lone surrogates (Cs), NUL and other controls included.
any_char = st.characters(codec=None, exclude_categories=())
special_chars = st.sampled_from(
    "\x00\x01\x1b\x7f\x85\u200b\u200d\u200e\u200f\u202a\u202e\u2066\u2069\ufeff\ufffd"
    "\ud800\udbff\udc00\udfff\u0301\u0336\u20dd😀👩🏽\U0001f3f3\ufe0f漢字한ا\u05d0 \n\t\r"
)
texts = st.lists(
    st.one_of(
        st.text(any_char, max_size=12),
        st.text(special_chars, max_size=12),
        st.sampled_from(FRAGMENTS),
    ),
    max_size=12,
).map("".join)


def without_surrogates(text: str) -> str:
    return re.sub("[\ud800-\udfff]", "\ufffd", text)


# --- tokenizer ----------------------------------------------------------------------------


@MANY
@given(texts)
def test_encode_gives_gpt2_ids_and_round_trips(text: str) -> None:
    token_ids = encode(text)
    assert all(isinstance(i, int) and 0 <= i < VOCAB for i in token_ids)
    clean = without_surrogates(text)
    assert decode(token_ids) == clean
    assert b"".join(token_bytes(token_ids)) == clean.encode("utf-8")
    # <|endoftext|> in the text is always the one special token, and only it is
    assert token_ids.count(50256) == clean.count(END_OF_TEXT)


@FEW
@given(st.text(st.sampled_from("\ud800\udc00\udfffab "), min_size=1, max_size=30))
def test_lone_surrogates_become_replacement_characters(text: str) -> None:
    replaced = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    assert decode(encode(text)) == replaced


# --- windows and embeddings ---------------------------------------------------------------


@MANY
@given(
    token_ids=st.lists(st.integers(0, VOCAB - 1), max_size=300),
    context_length=st.integers(*CONTEXT_LENGTH_RANGE),
    stride=st.one_of(st.none(), st.integers(1, CONTEXT_LENGTH_RANGE[1])),
)
def test_batch_matches_the_sliding_window_formula(
    token_ids: list[int], context_length: int, stride: int | None
) -> None:
    step = stride or context_length
    batch = make_batch(token_ids, context_length=context_length, stride=stride)
    n = len(token_ids)
    expected_windows = (
        0 if n == 0 else (n - context_length) // step + 1 if n > context_length else 1
    )
    length = min(n, context_length)
    assert batch.num_windows == expected_windows
    assert batch.shape == (expected_windows, length)
    covered: set[int] = set()
    for window in range(expected_windows):
        assert batch.window_token_ids(window) == tuple(
            token_ids[window * step : window * step + length]
        )
        covered.update(range(window * step, window * step + length))
    dropped = set(batch.dropped)
    assert dropped == (set(range(max(covered, default=-1) + 1, n)))
    gaps = set(range(n)) - covered - dropped  # tokens a stride > T jumps over
    assert len(gaps) == batch.skipped
    with pytest.raises(SettingsError, match=str(expected_windows)):
        batch.window_span(expected_windows)


@FEW
@given(
    seed=st.integers(*SEED_RANGE),
    emb_dim=st.integers(1, 40),
    vocab_size=st.integers(1, 300),
    context_length=st.integers(1, 40),
    data=st.data(),
)
def test_embed_window_equals_the_book(
    seed: int, emb_dim: int, vocab_size: int, context_length: int, data: st.DataObject
) -> None:
    token_ids = data.draw(st.lists(st.integers(0, vocab_size - 1), max_size=context_length))
    tables = SeededEmbeddings.create(seed=seed, emb_dim=emb_dim, vocab_size=vocab_size)
    view = embed_window(tables, token_ids, context_length=context_length)
    token_weight, pos_weight = book_tables(seed, emb_dim, context_length, vocab_size=vocab_size)
    n = len(token_ids)
    for matrix in (view.token_embeddings, view.pos_embeddings, view.input_embeddings):
        assert matrix.shape == (n, emb_dim)
        assert matrix.dtype == torch.float32
        assert bool(torch.isfinite(matrix).all())
    expected_tok = token_weight[torch.tensor(token_ids, dtype=torch.long)]
    assert torch.equal(view.token_embeddings, expected_tok)
    assert torch.equal(view.pos_embeddings, pos_weight[:n])
    assert torch.equal(view.input_embeddings, expected_tok + pos_weight[:n])


@cache
def gpt2_tables(seed: int) -> tuple[SeededEmbeddings, torch.Tensor]:
    """Module-wide d=8 GPT-2 table: the posviz checkpoints and torch's whole weight."""
    weight, _ = book_tables(seed, 8, 1)
    return SeededEmbeddings.create(seed=seed, emb_dim=8), weight


@FEW
@given(
    text=texts,
    seed=st.sampled_from([0, 123, 2**32 - 1]),
    context_length=st.integers(1, 64),
    stride=st.integers(1, 64),
    scheme=st.sampled_from(SCHEMES),
    data=st.data(),
)
def test_any_text_any_window_any_scheme_is_finite_and_shaped(
    text: str,
    seed: int,
    context_length: int,
    stride: int,
    scheme: str,
    data: st.DataObject,
) -> None:
    tables, weight = gpt2_tables(seed)
    batch = make_batch(encode(text), context_length=context_length, stride=stride)
    if batch.num_windows == 0:
        assert encode(text) == []
        return
    window = data.draw(st.integers(0, batch.num_windows - 1))
    token_ids = batch.window_token_ids(window)
    view = embed_window(tables, token_ids, context_length=context_length, scheme=scheme)  # type: ignore[arg-type]
    n = len(token_ids)
    for matrix in (view.token_embeddings, view.pos_embeddings, view.input_embeddings):
        assert matrix.shape == (n, 8) and matrix.dtype == torch.float32
        assert bool(torch.isfinite(matrix).all())
    torch.testing.assert_close(view.token_embeddings, weight[list(token_ids)], rtol=0, atol=0)


# --- token text on screen -------------------------------------------------------------------


@MANY
@given(st.one_of(st.binary(max_size=40), texts.map(lambda t: without_surrogates(t).encode())))
def test_visible_shows_no_raw_invisible_characters(token: bytes) -> None:
    shown = visible(token)
    bad = [f"U+{ord(c):04X}" for c in shown if unicodedata.category(c) in INVISIBLE]
    assert not bad, f"{token!r} -> {shown!r} keeps {bad}"
    assert not any(c.isspace() for c in shown)
    assert (shown == "") == (token == b"")


@FEW
@given(st.text(st.characters(categories=["L", "M", "N", "P", "S"]), max_size=30))
def test_visible_leaves_printable_text_alone(text: str) -> None:
    assert visible(text.encode("utf-8")) == text


@MANY
@given(texts)
def test_for_plotly_has_no_markup_and_unescapes_back(text: str) -> None:
    escaped = for_plotly(text)
    assert "<" not in escaped and ">" not in escaped
    assert html.unescape(escaped) == text


@MANY
@given(texts)
def test_for_markdown_escapes_every_ascii_punctuation(text: str) -> None:
    escaped = for_markdown(text)
    out, i = [], 0
    while i < len(escaped):
        if escaped[i] == "\\":
            assert escaped[i + 1] in string.punctuation
            out.append(escaped[i + 1])
            i += 2
        else:
            assert escaped[i] not in string.punctuation, (text, escaped)
            out.append(escaped[i])
            i += 1
    # for_markdown adds invisible word joiners (U+2060) to break bare links; nothing else.
    assert "".join(out).replace(WORD_JOINER, "") == text.replace(WORD_JOINER, "")


# --- settings out of range: one error type, a message naming the value --------------------

INT_FIELDS = {
    "context_length": CONTEXT_LENGTH_RANGE,
    "emb_dim": EMB_DIM_RANGE,
    "seed": SEED_RANGE,
    "stride": (1, CONTEXT_LENGTH_RANGE[1]),
}


@MANY
@given(
    field=st.sampled_from(sorted(INT_FIELDS)),
    value=st.one_of(st.integers(max_value=0), st.integers(min_value=1)),
)
def test_out_of_range_numbers_raise_settings_error(field: str, value: int) -> None:
    low, high = INT_FIELDS[field]
    candidate = Settings(**{field: value})  # type: ignore[arg-type]
    if low <= value <= high:
        assert validate(candidate) is candidate
        return
    with pytest.raises(SettingsError) as caught:
        validate(candidate)
    assert isinstance(caught.value, ValueError)
    message = str(caught.value)
    assert field in message and str(value) in message
    assert str(low) in message and str(high) in message


@FEW
@given(
    field=st.sampled_from([*sorted(INT_FIELDS), "window"]),
    value=st.one_of(
        st.floats(allow_nan=True),
        st.text(max_size=10),
        st.booleans(),
        st.none(),
        st.decimals(allow_nan=False, allow_infinity=False),
    ),
)
def test_non_integers_raise_settings_error(field: str, value: object) -> None:
    if field == "stride" and value is None:
        return  # None means "equal to the context length"
    with pytest.raises(SettingsError) as caught:
        validate(Settings(**{field: value}))  # type: ignore[arg-type]
    assert field in str(caught.value) and repr(value) in str(caught.value)


@FEW
@given(st.integers(max_value=-1))
def test_negative_window_raises_settings_error(window: int) -> None:
    with pytest.raises(SettingsError, match=re.escape(str(window))):
        validate(Settings(window=window))


@FEW
@given(st.text(max_size=20).filter(lambda s: s not in SCHEMES))
def test_unknown_scheme_raises_settings_error(scheme: str) -> None:
    with pytest.raises(SettingsError) as caught:
        validate(Settings(scheme=scheme))  # type: ignore[arg-type]
    assert repr(scheme) in str(caught.value)


@FEW
@given(st.integers(MAX_TEXT_CHARS + 1, 3 * MAX_TEXT_CHARS))
def test_too_long_text_raises_settings_error(length: int) -> None:
    with pytest.raises(SettingsError) as caught:
        validate(Settings(text="x" * length))
    assert f"{length:,}" in str(caught.value) and f"{MAX_TEXT_CHARS:,}" in str(caught.value)


@FEW
@given(st.integers(max_value=0), st.integers(1, 10))
def test_make_batch_rejects_bad_sizes(context_length: int, stride: int) -> None:
    with pytest.raises(SettingsError, match=re.escape(str(context_length))):
        make_batch([1, 2, 3], context_length=context_length, stride=stride)
    with pytest.raises(SettingsError, match=re.escape(str(context_length))):
        make_batch([1, 2, 3], context_length=stride, stride=context_length)
