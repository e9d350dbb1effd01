"""devtools.client: the websocket client the load test and the cost benchmarks drive the real
server with. A widget drawn in a fragment (the Length tab's Schemes menu) is changed as the
browser changes it: the fragment's run alone is asked for, and the page's other widgets, not
sent again in that run, keep their states for the next page run."""

from __future__ import annotations

import pytest

from devtools.client import StreamlitSession

pytestmark = pytest.mark.server


def test_a_widget_in_a_fragment_reruns_the_fragment_and_keeps_the_pages_widgets(
    server_url: str,
) -> None:
    session = StreamlitSession(server_url, timeout=120)
    try:
        first = session.open({"tab": "length", "emb_dim": "32"})
        assert not first.errors, first.errors
        assert first.fragment_id == ""  # the page's run
        changed = session.change("length_schemes", ["rope", "alibi"])
        assert not changed.errors, changed.errors
        assert changed.fragment_id != ""
        assert session.widgets["length_schemes"].fragment_id == changed.fragment_id
        assert changed.chart is not None
        names = {t["name"] for t in changed.chart["data"] if "mean loss" in t["hovertemplate"]}
        assert {name.split(" +")[0] for name in names} == {"RoPE", "ALiBi"}, names
        # the sidebar's widgets were not sent again, and are still there to change
        assert {"emb_dim", "context_length", "text"} <= set(session.widgets)
        again = session.change("context_length", 8)
        assert not again.errors, again.errors
        assert again.fragment_id == ""
        assert "context_length=8" in again.query_string and "emb_dim=32" in again.query_string
    finally:
        session.close()
