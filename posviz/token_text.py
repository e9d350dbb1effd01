"""How a token is written on screen: whitespace made visible, nothing interpretable.

A token is a byte string. posviz shows it as text in three places, each with its own rules:

* :func:`visible`: the token's characters with spaces, newlines, tabs, control and format
  characters (bidirectional overrides, zero-width marks) replaced by visible stand-ins, and
  bytes that are not whole UTF-8 characters written as ``\\xNN``: the exact bytes;
* :func:`character_labels`: the same for a run of tokens, except that a character whose bytes
  are split over several tokens is decoded across them and named in each, ``東 (1 of 2)``:
  what a reader can tell apart, and what every chip, label, hover and sentence shows
  (through :func:`posviz.tokenizer.token_texts`, which reads a window in its whole text);
* :func:`for_plotly`: ``visible`` text escaped for Plotly's small HTML-like label language
  (``<br>``, ``<b>``, ``<a href>``...), so a token reads literally in ticks, hover and titles.
* :func:`for_markdown`: ``visible`` text with every ASCII punctuation character escaped, so
  Streamlit's Markdown shows it literally (no links, emphasis, colours, LaTeX or HTML).

>>> visible(b" rose\\n")
'␣rose↵'
>>> for_plotly("<b>&")
'&lt;b&gt;&amp;'
>>> for_markdown("**x**")
'\\\\*\\\\*x\\\\*\\\\*'
"""

from __future__ import annotations

import bisect
import html
import itertools
import re
import string
import unicodedata
from collections.abc import Sequence
from typing import Final

_STAND_INS: Final = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}
_INVISIBLE_CATEGORIES: Final = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}
_MARKDOWN_ESCAPES: Final = {ord(ch): "\\" + ch for ch in string.punctuation}
WORD_JOINER: Final = "\u2060"
_AUTOLINK_TRIGGERS: Final = re.compile(r"(?<=:)|(?=@)|(?<=www)(?=\.)", re.IGNORECASE)


def _show_char(ch: str) -> str:
    if ch in _STAND_INS:
        return _STAND_INS[ch]
    if unicodedata.category(ch) in _INVISIBLE_CATEGORIES:
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return ch


def visible(token: bytes) -> str:
    """The token's text with invisible characters and partial UTF-8 bytes made visible."""
    if token.isascii() and (text := token.decode("ascii")).isprintable():
        return text.replace(" ", "␣")  # most tokens: letters, digits, punctuation, spaces
    text = token.decode("utf-8", errors="backslashreplace")
    return "".join(_show_char(ch) for ch in text)


_LEAD_LENGTHS: Final = ((0x80, 1), (0xC0, 0), (0xE0, 2), (0xF0, 3), (0xF8, 4))


def _char_length(lead: int) -> int:
    """Bytes of the UTF-8 character that ``lead`` starts (0: not a lead byte)."""
    return next(length for limit, length in _LEAD_LENGTHS if lead < limit) if lead < 0xF8 else 0


def _characters(data: bytes) -> list[tuple[int, int, str]]:
    """``(start, stop, text)`` of each character of ``data``; a byte that starts no valid
    character is its own piece, written ``\\xNN``."""
    pieces, start = [], 0
    while start < len(data):
        length = _char_length(data[start])
        chunk = data[start : start + length] if length else b""
        try:
            text = chunk.decode("utf-8") if len(chunk) == length and length else None
        except UnicodeDecodeError:
            text = None
        if text is None:
            pieces.append((start, start + 1, f"\\x{data[start]:02x}"))
            start += 1
        else:
            pieces.append((start, start + length, _show_char(text)))
            start += length
    return pieces


def character_labels(tokens: Sequence[bytes]) -> tuple[str, ...]:
    """Each token of a run as a reader can tell it apart: like :func:`visible`, but a
    character split over several adjacent tokens is decoded across them and named in each
    token with its part, ``"東 (1 of 2)"``; parts of two characters are joined by ``" + "``.
    Bytes that form no character in the run (a window that starts mid-character) stay
    ``\\xNN``.

    >>> character_labels([b"\\xe6\\x9d", b"\\xb1", b" rose"])
    ('東 (1 of 2)', '東 (2 of 2)', '␣rose')
    >>> character_labels([b"\\xe3\\x81\\xae\\xe9", b"\\xa6", b"\\x96"])
    ('の + 首 (1 of 3)', '首 (2 of 3)', '首 (3 of 3)')
    >>> character_labels([b"\\xb1", b"a"])
    ('\\\\xb1', 'a')
    """
    labels: list[str] = []
    run: list[bytes] = []  # tokens since the last of whole characters
    for token in tokens:
        # A token of whole characters starts and ends on a character's boundary: no character
        # crosses into or out of it, and it reads as it does alone. (An empty one may sit
        # inside a character split around it, and then names that character.)
        if token and _whole_characters(token):
            labels += _run_labels(run) if run else []
            labels.append(visible(token))
            run = []
        else:
            run.append(token)
    return tuple(labels + (_run_labels(run) if run else []))


def _whole_characters(token: bytes) -> bool:
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _run_labels(tokens: Sequence[bytes]) -> list[str]:
    """:func:`character_labels` of tokens between two tokens of whole characters (or the
    run's ends), character by character."""
    starts = list(itertools.accumulate((len(token) for token in tokens), initial=0))
    parts: list[list[str]] = [[] for _ in tokens]
    whole = [False] * len(tokens)  # the token's last part is whole characters
    for first, last, text in _characters(b"".join(tokens)):
        low = bisect.bisect_right(starts, first) - 1  # the token holding the first byte
        high = bisect.bisect_left(starts, last) - 1  # ... and the last byte
        if low == high:
            if whole[low]:
                parts[low][-1] += text
            else:
                parts[low].append(text)
                whole[low] = True
            continue
        for index in range(low, high + 1):
            parts[index].append(f"{text} ({index - low + 1} of {high - low + 1})")
            whole[index] = False
    return [" + ".join(token_parts) for token_parts in parts]


def readable(text: str) -> str:
    """``text`` on one line as a reader sees it: spaces stay, everything else invisible is
    made visible as in :func:`visible`.

    >>> readable("a b\\nc\\u202e")
    'a b↵c\\\\u202e'
    """
    return "".join(ch if ch == " " else _show_char(ch) for ch in text)


def for_plotly(text: str) -> str:
    """``text`` escaped so Plotly shows it literally (it reads ``&lt;`` as ``<``)."""
    return html.escape(text, quote=False)


def for_markdown(text: str) -> str:
    """``text`` escaped so Streamlit Markdown shows it literally.

    Backslash escapes stop emphasis, links, directives, LaTeX and HTML. GitHub-flavoured
    Markdown also turns bare ``https://…``, ``www.…`` and ``name@host`` into links *after*
    escapes are resolved, so an invisible WORD JOINER (U+2060) goes after each ``:``, before
    each ``@`` and between ``www`` and ``.``: the text reads the same and links nothing.
    """
    return _AUTOLINK_TRIGGERS.sub(WORD_JOINER, text).translate(_MARKDOWN_ESCAPES)
