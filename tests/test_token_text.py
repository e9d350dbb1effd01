"""posviz.token_text: tokens are shown literally, with invisible characters made visible."""

from __future__ import annotations

import html
import re
import string
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    WORD_JOINER,
    byte_characters,
    tiktoken_gpt2,
    unescape_markdown,
    visible_token,
)

from posviz.token_text import character_labels, for_markdown, for_plotly, visible
from posviz.tokenizer import encode, token_bytes

INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}


@pytest.mark.parametrize(
    ("token", "shown"),
    [
        pytest.param(b" ", "␣", id="space"),
        pytest.param(b" the", "␣the", id="leading-space"),
        pytest.param(b"  ", "␣␣", id="two-spaces"),
        pytest.param(b"\n", "↵", id="newline"),
        pytest.param(b"\n\n", "↵↵", id="newlines"),
        pytest.param(b"\t", "⇥", id="tab"),
        pytest.param(b"\r\n", "␍↵", id="crlf"),
        pytest.param(b"rose", "rose", id="plain"),
        pytest.param("大型".encode(), "大型", id="cjk"),
        pytest.param("🦜".encode(), "🦜", id="whole-emoji"),
        pytest.param(b"\x00", "\\x00", id="nul"),
        pytest.param(b"\x1b", "\\x1b", id="escape"),
        pytest.param(b"\x7f", "\\x7f", id="del"),
        pytest.param("\u0085".encode(), "\\x85", id="c1-next-line"),
        pytest.param("\u00a0".encode(), "\\xa0", id="no-break-space"),
        pytest.param("\u202e".encode(), "\\u202e", id="rtl-override"),
        pytest.param("\u202d".encode(), "\\u202d", id="ltr-override"),
        pytest.param("\u2066".encode(), "\\u2066", id="ltr-isolate"),
        pytest.param("\u200b".encode(), "\\u200b", id="zero-width-space"),
        pytest.param("\u200c".encode(), "\\u200c", id="zero-width-non-joiner"),
        pytest.param("\u200d".encode(), "\\u200d", id="zero-width-joiner"),
        pytest.param("\u2060".encode(), "\\u2060", id="word-joiner"),
        pytest.param("\ufeff".encode(), "\\ufeff", id="byte-order-mark"),
        pytest.param("\u2028".encode(), "\\u2028", id="line-separator"),
        pytest.param("\u3000".encode(), "\\u3000", id="ideographic-space"),
        pytest.param(b"\xf0\x9f", "\\xf0\\x9f", id="emoji-first-half"),
        pytest.param(b"\xa6", "\\xa6", id="continuation-byte"),
        pytest.param(b"\xff", "\\xff", id="never-utf8"),
    ],
)
def test_visible(token: bytes, shown: str) -> None:
    assert visible(token) == shown


def test_emoji_split_across_tokens_shows_its_bytes() -> None:
    """🦜 is three GPT-2 tokens: none of them is a whole character."""
    pieces = token_bytes(encode("🦜"))
    assert len(pieces) > 1
    assert b"".join(pieces) == "🦜".encode()
    for piece in pieces:
        with pytest.raises(UnicodeDecodeError):
            piece.decode("utf-8")
        assert visible(piece) == "".join(f"\\x{byte:02x}" for byte in piece)


def test_rtl_override_cannot_reorder_what_follows() -> None:
    token_ids = encode("\u202eevil")
    shown = "".join(visible(piece) for piece in token_bytes(token_ids))
    assert "\u202e" not in shown
    assert shown.endswith("evil")


@given(st.binary(max_size=12))
def test_visible_never_outputs_invisible_characters(token: bytes) -> None:
    shown = visible(token)
    assert all(unicodedata.category(ch) not in INVISIBLE for ch in shown)


@given(st.text(max_size=12))
def test_visible_keeps_visible_text(text: str) -> None:
    if all(unicodedata.category(ch) not in INVISIBLE for ch in text):
        assert visible(text.encode()) == text
    else:
        assert visible(text.encode()) != text


# --- Plotly labels --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        pytest.param("<b>bold</b>", "&lt;b&gt;bold&lt;/b&gt;", id="bold"),
        pytest.param("<br>", "&lt;br&gt;", id="br"),
        pytest.param("a & b", "a &amp; b", id="ampersand"),
        pytest.param("&lt;", "&amp;lt;", id="already-an-entity"),
        pytest.param("<a href='javascript:x'>", "&lt;a href='javascript:x'&gt;", id="link"),
        pytest.param("plain", "plain", id="plain"),
    ],
)
def test_for_plotly(text: str, escaped: str) -> None:
    assert for_plotly(text) == escaped


@given(st.text(alphabet=st.sampled_from("<>&;abr/ \"'#x0"), max_size=30) | st.text())
def test_for_plotly_property(text: str) -> None:
    escaped = for_plotly(text)
    assert "<" not in escaped and ">" not in escaped
    assert re.search(r"&(?!amp;|lt;|gt;)", escaped) is None  # every & starts our own entity
    assert html.unescape(escaped) == text


# --- Streamlit Markdown ---------------------------------------------------------------


def assert_every_punctuation_escaped(escaped: str, original: str) -> None:
    """Reading left to right, each ASCII punctuation character is the second of a
    backslash pair; dropping the backslashes (and the invisible word joiners for_markdown
    adds to break autolinks) gives the original back."""
    assert unescape_markdown(escaped) == original.replace(WORD_JOINER, "")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("**b**", id="bold"),
        pytest.param("_em_ __strong__", id="underscores"),
        pytest.param("[x](javascript:alert(1))", id="link"),
        pytest.param("![img](http://x/y.png)", id="image"),
        pytest.param("$x$ $$y$$", id="latex"),
        pytest.param(":red[x] :material/home:", id="streamlit-colour-and-icon"),
        pytest.param("<script>alert(1)</script>", id="script"),
        pytest.param("`code` ```block```", id="code"),
        pytest.param("# heading", id="heading"),
        pytest.param("> quote", id="quote"),
        pytest.param("- item + item * item", id="list"),
        pytest.param("1. item", id="ordered-list"),
        pytest.param("~~strike~~", id="strike"),
        pytest.param("| a | b |", id="table"),
        pytest.param("a\\b \\*", id="backslashes"),
        pytest.param("&amp; &#60;", id="entities"),
        pytest.param("<https://example.com>", id="autolink"),
        pytest.param(string.punctuation, id="all-ascii-punctuation"),
        pytest.param("␣rose↵", id="stand-ins"),
    ],
)
def test_for_markdown_escapes_every_punctuation(text: str) -> None:
    escaped = for_markdown(text)
    assert_every_punctuation_escaped(escaped, text)


def test_for_markdown_exact_example() -> None:
    assert for_markdown("**b**") == "\\*\\*b\\*\\*"
    assert for_markdown("a\\b") == "a\\\\b"


@settings(deadline=None)  # no timing: on a busy 2-core machine one example took over 200 ms
@given(st.text())
def test_for_markdown_property(text: str) -> None:
    assert_every_punctuation_escaped(for_markdown(text), text)


# The bare-link rules of mdast-util-gfm-autolink-literal (what remark-gfm runs on text after
# escapes are resolved): a protocol or www. link, or an e-mail address.
GFM_LITERAL_LINK = re.compile(
    r"(https?://|www(?=\.))[-.\w]+|[-.\w+]+@[-\w]+(?:\.[-\w]+)+", re.IGNORECASE
)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("see https://evil.example/login now", id="https"),
        pytest.param("HTTP://EVIL.EXAMPLE", id="upper-case"),
        pytest.param("www.evil.example", id="www"),
        pytest.param("mail me@evil.example", id="email"),
        pytest.param("mailto:me@evil.example", id="mailto"),
    ],
)
def test_for_markdown_leaves_no_bare_link_for_gfm(text: str) -> None:
    assert GFM_LITERAL_LINK.search(text), "the example must be a link before escaping"
    shown = re.sub(r"\\(.)", r"\1", for_markdown(text))  # the text after escapes resolve
    assert not GFM_LITERAL_LINK.search(shown), shown
    assert shown.replace("\u2060", "") == text


# --- a character split over several tokens, named in each ----------------------------------


def expected_labels(tokens: list[bytes]) -> list[str]:
    """What each token should say, from reference.byte_characters (Python's UTF-8 decoder)."""
    labels = []
    for characters in byte_characters(tokens):
        parts: list[str] = []
        for char, part, total in characters:
            shown = visible(char.encode()) if char else None
            if total == 1 and shown is not None:
                if parts and not parts[-1].endswith(")"):
                    parts[-1] += shown
                else:
                    parts.append(shown)
            else:
                parts.append(f"{shown} ({part} of {total})")
        labels.append(" + ".join(parts))
    return [
        label if "None" not in label else visible(token)  # bytes that form no character
        for label, token in zip(labels, tokens, strict=True)
    ]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("東京は日本の首都です", id="cjk"),
        pytest.param("我爱你 我爱你", id="cjk-repeated"),
        pytest.param("🙂 ok 🎉🎉", id="emoji"),
        pytest.param("naïve café", id="accents-whole"),
        pytest.param("A rose is a rose", id="ascii"),
    ],
)
def test_split_characters_are_named_in_each_token(text: str) -> None:
    tokens = token_bytes(encode(text))
    labels = character_labels(tokens)
    assert list(labels) == expected_labels(tokens)
    assert len(labels) == len(tokens)


def test_east_is_one_character_in_two_tokens() -> None:
    tokens = token_bytes(encode("東京"))
    assert [visible(t) for t in tokens] == ["\\xe6\\x9d", "\\xb1", "\\xe4\\xba", "\\xac"]
    assert character_labels(tokens) == ("東 (1 of 2)", "東 (2 of 2)", "京 (1 of 2)", "京 (2 of 2)")


def test_a_run_that_starts_mid_character_keeps_its_bytes() -> None:
    tokens = token_bytes(encode("東京"))[1:]  # a window that starts inside 東
    assert character_labels(tokens) == ("\\xb1", "京 (1 of 2)", "京 (2 of 2)")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab 東京🎉é\n"), max_size=20))
def test_labels_follow_the_decoder_for_any_text(text: str) -> None:
    tokens = token_bytes(encode(text))
    assert list(character_labels(tokens)) == expected_labels(tokens)


def test_every_gpt2_token_of_visible_characters_reads_as_the_reference() -> None:
    """All 50,257 tokens: each one of whole, visible characters (spaces, newlines, tabs and
    carriage returns aside) is written as the reference writes it."""
    checked = 0
    for token_id in range(50257):
        try:
            text = tiktoken_gpt2().decode_single_token_bytes(token_id).decode("utf-8")
        except UnicodeDecodeError:
            continue  # part of a character: the tests above
        if all(ch.isprintable() or ch in " \n\t\r" for ch in text):
            assert visible(text.encode()) == visible_token(token_id), token_id
            checked += 1
    assert checked > 49_000
