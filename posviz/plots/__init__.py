"""posviz's Plotly figures: builders that take computed views and return ``go.Figure``.

* :mod:`posviz.plots.heatmaps`: the three-panel embeddings and similarity figures;
* :mod:`posviz.plots.word_order`: two texts through self-attention;
* :mod:`posviz.plots._layout`: the layout the three-panel figures share (internal).
"""
