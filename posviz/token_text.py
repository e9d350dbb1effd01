"""How a token is written on screen: whitespace made visible, nothing interpretable.

A token is a byte string. posviz shows it as text in three places, each with its own rules:

* :func:`visible`: the token's characters with spaces, newlines, tabs, control and format
  characters (bidirectional overrides, zero-width marks) replaced by visible stand-ins, and
  bytes that are not whole UTF-8 characters written as ``\\xNN``.
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

import html
import re
import string
import unicodedata
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
    text = token.decode("utf-8", errors="backslashreplace")
    return "".join(_show_char(ch) for ch in text)


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
