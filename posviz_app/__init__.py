"""posviz's Streamlit app: the page (:mod:`posviz_app.page`) and how it runs inside the
server (:mod:`posviz_app.runtime`).

The core, :mod:`posviz`, never imports this package or Streamlit; this package holds only
widgets, layout and caching, and calls into the core.
"""
