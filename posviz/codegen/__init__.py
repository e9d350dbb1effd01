"""Show the code: self-contained scripts that recompute what posviz shows.

A script needs torch and tiktoken, not posviz, and prints the numbers on screen. Every
formula in it is posviz's own function, copied by :func:`inspect.getsource`
(:mod:`posviz.codegen._source`), so the code shown is the code run.

* :mod:`posviz.codegen.embeddings`: :func:`reproduction_script`, section 2.8's batch and
  matrices, compare mode, and the parts below;
* :mod:`posviz.codegen.shapes`: the Geometry and Distance parts;
* :mod:`posviz.codegen.attention`: the Attention part;
* :mod:`posviz.codegen._schemes`: what the script writes for a positional scheme, read from
  its :class:`~posviz.schemes.SchemeSpec`;
* :mod:`posviz.codegen.length`: :func:`length_script`, the Length view's (issue 41): one length
  run trained as ``posviz train --scheme`` trains it, and the band means it prints
  (:func:`shown_script`: with the extension the view shows);
* the Training view's script is :func:`posviz.training.codegen.training_script`.
"""

from __future__ import annotations

from posviz.codegen.attention import BOOK_CH03_URL
from posviz.codegen.embeddings import (
    BOOK_CH02_NOTEBOOK_URL,
    BOOK_CH02_URL,
    reproduction_script,
    text_literal,
)
from posviz.codegen.length import length_script, shown_script
from posviz.codegen.shapes import CodeView

__all__ = [
    "BOOK_CH02_NOTEBOOK_URL",
    "BOOK_CH02_URL",
    "BOOK_CH03_URL",
    "CodeView",
    "length_script",
    "reproduction_script",
    "shown_script",
    "text_literal",
]
