"""posviz_app.chart.shared_chart through the page (issue 42, item 6): a class that follows the
lecturer's values asks for the same figure again and again, so a figure is built once per
server process for every session that shows it at the same settings in the same room, and
each session gets the very bytes a build of its own would have sent; other settings get a
figure of their own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from charts import sent_figures, sent_payloads
from reference import book_tables, token_ids
from streamlit.testing.v1 import AppTest
from widgets import ok

import posviz_app.views.embeddings as embeddings_view

AppFactory = Callable[..., AppTest]
SEED = 98_765  # a seed no other test shows, so this process has no figure of it yet


def payload(at: AppTest) -> bytes:
    (chart,) = sent_payloads(at).values()
    return chart


def test_sessions_at_the_same_settings_share_one_build(
    app_test: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Any] = []
    original = embeddings_view.embeddings_chart

    def counted(*args: Any, **kwargs: Any) -> Any:
        built.append(args[0].token_ids)
        return original(*args, **kwargs)

    monkeypatch.setattr(embeddings_view, "embeddings_chart", counted)
    query = {"seed": str(SEED), "emb_dim": "8", "text": "Every effort moves you"}
    first = ok(app_test(query))
    second = ok(app_test(query))
    assert len(built) == 1  # the second session drew the first one's figure
    assert payload(second) == payload(first)
    # and that figure is the second session's own: its rows are torch's for its seed
    token_table, _ = book_tables(SEED, 8, 16)
    ids = token_ids("Every effort moves you")
    z = sent_figures(second)["embeddings"]["data"][0]["z"]
    torch.testing.assert_close(torch.tensor(z.tolist()), token_table[ids])
    other = ok(app_test({**query, "seed": str(SEED + 1)}))
    assert len(built) == 2  # another seed: another figure
    assert payload(other) != payload(first)
