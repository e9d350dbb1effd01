"""posviz in the browser, as installed: ``posviz app`` runs this script with ``streamlit run``
(its settings are ``.streamlit/config.toml`` beside it). In the repository, ``app.py`` is the
same script for ``streamlit run app.py`` and Streamlit Community Cloud.
"""

from posviz_app.page import run

run()
