"""posviz in the browser: ``streamlit run app.py`` (Streamlit Community Cloud's main file).

The page lives in :mod:`posviz_app.page` (widgets, layout, caching), the core in ``posviz``;
``posviz app`` runs the same page once posviz is installed.
"""

from posviz_app.page import run

run()
