"""The default view's page with none of posviz's work: what Streamlit itself costs a rerun.

``python benchmarks/loadtest.py --only steady --floor-page`` serves this script in place of
``app.py`` (issue 42, item 6). It draws what posviz's default view draws, element for element
(``tests/test_loadtest.py`` counts both pages' elements): the sidebar's nine widgets under the
same keys and labels, so the load test's students move them as they move posviz's; the tab
buttons; the chips, the metrics and the sentence as constant text; and posviz's own chart
component (``posviz_app.chart``) in a fragment, with a payload of three 16 x 64 heatmaps built
once per process. posviz's run slot and rerun coalescing (``posviz_app.runtime``) are kept, as
they change how a class's runs share the GIL. Its charts are not the settings' charts, so the
load test does not compare them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `streamlit run benchmarks/floor_page.py`: import from the root
    sys.path.insert(0, str(ROOT))

from posviz.plots import Canvas  # noqa: E402
from posviz.schemes import SCHEME_NAMES, scheme  # noqa: E402
from posviz_app import runtime  # noqa: E402
from posviz_app.chart import chart_payload, show_payload  # noqa: E402

KEY = "embeddings_chart"


@st.cache_resource(show_spinner=False)
def payload() -> bytes:
    """Three 16 x 64 heatmaps, as the default view's chart (T = 16, d = 64)."""
    figure = make_subplots(rows=1, cols=3)
    rows = np.random.default_rng(123).standard_normal((3, 16, 64)).astype(np.float32)
    for column, z in enumerate(rows, start=1):
        figure.add_trace(go.Heatmap(z=z), row=1, col=column)
    return chart_payload(figure, canvas=Canvas(), fill=False)


@st.fragment
def chart() -> None:
    with st.container(gap="small"):
        show_payload(payload(), key=KEY)


def main() -> None:
    st.set_page_config(page_title="posviz floor", layout="wide")
    st.empty()
    st.html("<style>.floor { color: #111111; }</style>")
    st.title("Positional embeddings")
    st.markdown("Token + position = input embeddings.")
    with st.sidebar:
        st.selectbox("Example", ["A rose is a rose", "Code", "A list"], key="preset=0")
        st.radio("Weights", ["init", "gpt2"], key="weights", horizontal=True)
        st.selectbox(
            "Positional scheme",
            SCHEME_NAMES,
            format_func=lambda name: scheme(name).label,
            key="scheme",
        )
        st.text_area("Text", "A rose is a rose is a rose.", key="text")
        st.slider(
            "Context length T (rows of the positional table)", 1, 1024, 16, key="context_length"
        )
        st.slider("Embedding dimension d", 2, 768, 64, key="emb_dim")
        st.slider("Stride (tokens between window starts)", 1, 1024, 16, key="stride")
        st.text_input("Seed for torch.manual_seed", "123", key="seed_box=123")
        st.checkbox("Lecture mode", key="lecture")
    st.query_params.from_dict({"text": "A rose is a rose is a rose."})  # the page's link
    st.markdown("`A` `␣rose` `␣is` `␣a` `␣rose` `␣is` `␣a` `␣rose` `.`")
    st.markdown("The same token at two positions has the same token vector.")
    st.segmented_control(
        "Tab",
        ["Embeddings", "Geometry", "Distance"],
        key="view",
        default="Embeddings",
        required=True,
        label_visibility="collapsed",
    )
    with st.container(gap="small"), st.container(horizontal=True):
        for label, shape in (
            ("token_ids", "[9]"),
            ("token_embeddings", "[9, 64]"),
            ("pos_embeddings", "[9, 64]"),
            ("input_embeddings", "[9, 64]"),
        ):
            st.metric(label, shape)
    with st.container(), st.container():
        st.markdown("Rows 1, 4 and 7 hold the same token; only the position tells them apart.")
        chart()
    st.markdown("Learned: one trained row per position, added to the token's row.")


runtime.prepare()
with runtime.run_slot():
    main()
runtime.run_finished()
