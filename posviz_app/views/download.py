"""The Download view: CSV, .npy and an offline HTML figure of the window on screen, each named
for the settings (``posviz_T16_d64_seed123_w0.csv``)."""

from __future__ import annotations

import streamlit as st

from posviz.export import download_name, figure_html, matrices_csv, matrices_npy
from posviz.plots.heatmaps import embeddings_figure
from posviz_app import state
from posviz_app.room import Room


def render(room: Room) -> None:
    """The tab: three download buttons, each built when clicked."""
    settings, embeddings = room.settings, room.view.embeddings
    if embeddings is None:
        return
    st.markdown("The matrices of the window on screen, and the figure as an offline web page.")
    downloads = (  # label, bytes on click, file name, MIME type, widget key
        ("Matrices (.csv)", lambda: matrices_csv(embeddings), download_name(settings, "csv"),
         "text/csv", state.DOWNLOAD_CSV),
        ("Matrices (.npy, [3, n, d])", lambda: matrices_npy(embeddings),
         download_name(settings, "npy"), "application/octet-stream", state.DOWNLOAD_NPY),
        ("Figure (offline .html)", lambda: figure_html(embeddings_figure(embeddings)),
         download_name(settings, "html"), "text/html", state.DOWNLOAD_HTML),
    )  # fmt: skip
    for column, (label, data, file_name, mime, key) in zip(st.columns(3), downloads, strict=True):
        column.download_button(
            label, data=data, file_name=file_name, mime=mime, key=key, on_click="ignore"
        )
    st.caption(
        "PNG: use the camera icon at the top right of a chart. The .npy file holds one float32 "
        "array [3, n, d] (token, position, input); `numpy.load` reads it without pickle."
    )
