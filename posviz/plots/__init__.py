"""posviz's Plotly figures: builders that take computed views and return ``go.Figure``.

* :mod:`posviz.plots.heatmaps`: the three-panel embeddings and similarity figures;
* :mod:`posviz.plots.word_order`: two texts through self-attention;
* :mod:`posviz.plots.geometry`: positional tables on their first three principal components;
* :mod:`posviz.plots.distance`: similarity against distance, one line per scheme;
* :mod:`posviz.plots._layout` and :mod:`posviz.plots._identity`: the layout the three-panel
  figures share, and the outlines of repeated tokens (internal).
"""

from posviz.plots._layout import (
    CHART_BOTTOM_GAP,
    MIN_FILL_HEIGHT,
    UNKNOWN,
    Canvas,
    CanvasError,
)

# The room a chart has on the page (the app's chart component reports it; figure builders
# take it as ``canvas=``), and what a chart that fills the window leaves under it.
__all__ = ["CHART_BOTTOM_GAP", "MIN_FILL_HEIGHT", "UNKNOWN", "Canvas", "CanvasError"]
