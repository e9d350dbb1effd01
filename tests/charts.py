"""What a run sent to posviz's chart component, for AppTest tests: the one place that reads it.

``sent_figures(at)`` gives each chart's figure by its key, as plain JSON-like dicts with every
typed array as a numpy array (``reference.decode_array`` takes them as they are)::

    figure = sent_figures(at)["embeddings"]
    z = figure["data"][0]["z"]  # numpy [rows, dims] float32

The payload is read here from its format (posviz_app/chart.py's module docstring), not with
posviz's own decoder, so a test of the app does not share the encoder's assumptions.
``report_size(at, key, ...)`` reruns the app as if chart ``key`` had measured that size.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np
from streamlit.elements.lib.utils import user_key_from_element_id
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

COMPONENT = "posviz_chart"  # the name posviz registers its chart component under


def decode_chart(payload: bytes) -> dict[str, Any]:
    """The header of one chart payload, its figure's arrays as numpy arrays."""
    assert payload[:4] == b"PVZ1", f"not a chart payload: {payload[:8]!r}"
    (length,) = struct.unpack("<I", payload[4:8])
    header = json.loads(payload[8 : 8 + length].decode("utf-8"))
    start = (8 + length + 7) // 8 * 8

    def array(spec: dict[str, Any]) -> np.ndarray:
        offset, size = header["buffers"][spec["bref"]]
        raw = payload[start + offset : start + offset + size]
        values = np.frombuffer(raw, dtype=np.dtype(spec["dtype"]))
        if "shape" in spec:
            values = values.reshape([int(n) for n in spec["shape"].split(",")])
        return values

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return array(value) if "bref" in value else {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    header["figure"] = walk(header["figure"])
    return header


def sent_payloads(at: AppTest) -> dict[str, bytes]:
    """Every chart of the last run by key: the payload's bytes, as sent."""
    payloads = {}
    for element in at.get("bidi_component"):
        proto = element.proto
        if proto.component_name != COMPONENT:
            continue
        assert proto.WhichOneof("data") == "bytes", "a chart's figure travels as bytes"
        key = user_key_from_element_id(proto.id)
        assert key is not None, f"a chart without a key is remounted at every change: {proto.id}"
        payloads[key] = bytes(proto.bytes)
    return payloads


def sent_charts(at: AppTest) -> dict[str, dict[str, Any]]:
    """Every chart of the last run by key: its decoded header (figure, config, canvas,
    fill, plotly)."""
    return {key: decode_chart(payload) for key, payload in sent_payloads(at).items()}


def sent_figures(at: AppTest) -> dict[str, dict[str, Any]]:
    """The figure each chart of the last run was sent, by the chart's key."""
    return {key: chart["figure"] for key, chart in sent_charts(at).items()}


def report_size(
    at: AppTest, key: str, *, width: int, height: int, window_width: int, window_height: int
) -> AppTest:
    """Rerun ``at`` as the browser does when chart ``key`` reports its size (the component's
    ``setStateValue("size", ...)``). Uses AppTest's internal tree and run: AppTest has no
    public way to set a component's state."""
    (element,) = [
        e for e in at.get("bidi_component") if user_key_from_element_id(e.proto.id) == key
    ]
    states = at._tree.get_widget_states()
    size = {"width": width, "height": height, "window_width": window_width,
            "window_height": window_height}  # fmt: skip
    states.widgets.append(WidgetState(id=element.proto.id, json_value=json.dumps({"size": size})))
    return at._run(states)
