"""Downloads: the three matrices as CSV or ``.npy``, and a figure as standalone offline HTML.

* :func:`matrices_csv`: one CSV, one row per (matrix, position), columns
  ``matrix,position,token,token_id,token_shown,dim_0,...,dim_{d-1}``; ``matrix`` is
  ``token``, ``position`` or ``input``; ``token`` is the token's own text (``" the"``, its
  UTF-8 bytes decoded; a token that holds part of a character writes those bytes as
  ``\\xNN``), ``token_shown`` the page's visible form (``"␣the"``). Values are the shortest
  decimal that reads back as the same float32. Texts that a spreadsheet would run as a
  formula (starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return) get a leading
  ``'``.
* :func:`matrices_npy`: one ``.npy`` array ``[3, n, d]`` float32, in the order token,
  position, input (no pickle: ``np.load(..., allow_pickle=False)`` reads it).
* :func:`figure_html`: a complete HTML page with plotly.js inlined (about 5 MB), so it opens
  without a network connection;
* :func:`figure_json`: the figure as Plotly JSON (``plotly.io.from_json`` reads it back);
* :func:`download_name`: a file name that carries the settings, so two downloads of
  different views do not overwrite each other.

>>> from posviz.embeddings import SeededEmbeddings
>>> from posviz.pipeline import embed_window
>>> w = embed_window(SeededEmbeddings.create(seed=1, emb_dim=2), [31373], context_length=4)
>>> matrices_csv(w).decode().splitlines()[0]
'matrix,position,token,token_id,token_shown,dim_0,dim_1'
>>> np.load(io.BytesIO(matrices_npy(w))).shape
(3, 1, 2)
"""

from __future__ import annotations

import csv
import html
import io
from typing import Final

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from posviz.config import Settings
from posviz.pipeline import WindowEmbeddings
from posviz.tokenizer import token_bytes

_MATRIX_NAMES: Final = ("token", "position", "input")  # order of rows in the CSV and the .npy
_FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")  # OWASP's CSV-injection triggers


def _stacked(window: WindowEmbeddings) -> np.ndarray:
    """``[3, n, d]`` float32: token, position, input embeddings."""
    matrices = (window.token_embeddings, window.pos_embeddings, window.input_embeddings)
    return np.stack([m.detach().numpy().astype(np.float32, copy=False) for m in matrices])


def spreadsheet_safe(text: str) -> str:
    """``text`` with a leading ``'`` if a spreadsheet would read it as a formula.

    >>> spreadsheet_safe("=1+1"), spreadsheet_safe("rose")
    ("'=1+1", 'rose')
    """
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def matrices_csv(window: WindowEmbeddings) -> bytes:
    """The three matrices of ``window`` as one UTF-8 CSV (see the module docstring)."""
    stacked = _stacked(window)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    dims = (f"dim_{j}" for j in range(window.emb_dim))
    writer.writerow(["matrix", "position", "token", "token_id", "token_shown", *dims])
    texts = [
        spreadsheet_safe(token.decode("utf-8", errors="backslashreplace"))
        for token in token_bytes(list(window.token_ids))
    ]
    shown = [spreadsheet_safe(text) for text in window.token_texts]
    for name, matrix in zip(_MATRIX_NAMES, stacked, strict=True):
        for position, (text, token_id, visible, row) in enumerate(
            zip(texts, window.token_ids, shown, matrix, strict=True)
        ):
            # str(np.float32) is the shortest decimal that reads back as the same float32
            values = (str(value) for value in row)
            writer.writerow([name, position, text, token_id, visible, *values])
    return buffer.getvalue().encode("utf-8")


def matrices_npy(window: WindowEmbeddings) -> bytes:
    """The three matrices as one ``.npy`` file: ``[3, n, d]`` float32 (token, position, input)."""
    buffer = io.BytesIO()
    np.save(buffer, _stacked(window), allow_pickle=False)
    return buffer.getvalue()


def figure_html(figure: go.Figure, *, title: str = "posviz") -> bytes:
    """``figure`` as a standalone HTML page that works offline (plotly.js inlined, no CDN).

    ``title`` becomes the page's ``<title>`` (HTML-escaped).
    """
    page: str = pio.to_html(
        figure,
        include_plotlyjs=True,
        include_mathjax=False,
        full_html=True,
        config={"displaylogo": False, "responsive": True},
    )
    page = page.replace("<head>", f"<head><title>{html.escape(title)}</title>", 1)
    return page.encode("utf-8")


def figure_json(figure: go.Figure) -> bytes:
    """``figure`` as Plotly's JSON (UTF-8), arrays as Plotly's typed arrays.

    >>> import plotly.io
    >>> plotly.io.from_json(figure_json(go.Figure(go.Scatter(y=[1, 2])))).data[0].y
    (1, 2)
    """
    text: str = pio.to_json(figure, validate=False)
    return text.encode("utf-8")


def download_name(settings: Settings, extension: str) -> str:
    """A file name for a download of the view ``settings`` show: context length, d, the
    seed (or ``gpt2``), the scheme and stride where they are not the defaults, the window.

    >>> download_name(Settings(seed=123), "csv")
    'posviz_T16_d64_seed123_w0.csv'
    >>> download_name(Settings(context_length=4, stride=2, scheme="rope", window=3), "npy")
    'posviz_T4_d64_seed123_rope_stride2_w3.npy'
    >>> download_name(Settings(weights="gpt2", emb_dim=768), "html")
    'posviz_T16_d768_gpt2_w0.html'
    """
    parts = [f"T{settings.context_length}", f"d{settings.emb_dim}"]
    parts.append("gpt2" if settings.weights == "gpt2" else f"seed{settings.seed}")
    if settings.scheme != Settings.scheme:  # the default scheme is not named
        parts.append(settings.scheme)
    if settings.effective_stride != settings.context_length:
        parts.append(f"stride{settings.effective_stride}")
    parts.append(f"w{settings.window}")
    return f"posviz_{'_'.join(parts)}.{extension}"
