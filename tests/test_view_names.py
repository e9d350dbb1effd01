"""Every view opens by its one name everywhere a user types it: a link (``?tab=NAME``, parsed
and in the page through AppTest), the command line (``--view NAME``), the notebook
(``posviz.show(view=NAME)``) and lecture mode (a slide whose step names the view).

The registry is walked, so a new view is checked in every place without touching this file;
what each place shows is read back (the page's open tab and the chart it sent, the figure
the command line wrote), so a name that opened another view fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import plotly.io as pio
import pytest
from charts import sent_figures
from streamlit.testing.v1 import AppTest
from widgets import slide_title

from posviz.cli import main
from posviz.config import Settings
from posviz.lesson.lecture import SLIDES
from posviz.notebook import show
from posviz.query import read_link
from posviz.viewspec import FIGURE_NAMES, TAB_NAMES, VIEWS, FigureName, ViewName, view_named

PAIR = ("The dog bites the man", "The man bites the dog")
# The chart each view sends the page, by the chart's key (None: a view without a chart).
CHART_KEYS: dict[ViewName, str | None] = {
    "embeddings": "embeddings",
    "similarity": "similarity",
    "geometry": "geometry",
    "distance": "distance",
    "word-order": "compare",
    "attention": "attention",
    "training": "training",
    "length": "length",
    "code": None,
    "download": None,
    "text": None,
    "tokens": None,
}
SLIDE_NAMES = sorted({slide.step.view for slide in SLIDES})


def test_every_view_is_named_here() -> None:
    assert set(CHART_KEYS) == {spec.name for spec in VIEWS}
    assert set(SLIDE_NAMES) <= set(CHART_KEYS), "a lecture step names a view the registry lacks"


@pytest.mark.parametrize("name", TAB_NAMES)
def test_a_link_names_the_tab(name: ViewName) -> None:
    link = read_link({"tab": name})
    assert (link.tab, link.notices) == (name, ())


@pytest.mark.parametrize("old", ["compare", "word_order"])
def test_a_link_with_an_old_name_opens_the_view_and_says_its_name(old: str) -> None:
    link = read_link({"tab": old})
    assert link.tab == "word-order"
    assert link.notices == (
        f"tab: '{old}' is now called 'word-order'; a link made now says tab=word-order",
    )


@pytest.mark.parametrize("name", TAB_NAMES)
def test_the_page_opens_the_tab_a_link_names(
    app_test: Callable[..., AppTest], name: ViewName
) -> None:
    at = app_test({"tab": name, "text": PAIR[0], "compare": PAIR[1], "emb_dim": "16"})
    assert not at.exception, at.exception
    assert not at.error, [error.value for error in at.error]
    assert at.session_state["view"] == view_named(name).label  # the open tab's button
    charts = set(sent_figures(at))
    chart = CHART_KEYS[name]
    assert (chart in charts) if chart else not (charts & {c for c in CHART_KEYS.values() if c})
    if name == "code":
        assert any("import torch" in block.value for block in at.code)
    if name == "download":
        assert at.get("download_button")


def _cli_figure(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, spelled: str | None = None
) -> dict[str, object]:
    """The figure ``--view`` writes as JSON, the view's name ``spelled`` as given."""
    monkeypatch.setenv("POSVIZ_CACHE_DIR", str(tmp_path / "cache"))  # no GPT-2 tables cached
    out = tmp_path / f"{name}.json"
    pair = ["--text", PAIR[0], "--compare", PAIR[1]] if name == "word-order" else []
    argv = [*pair, "--emb-dim", "16", "--view", spelled or name, "--out", str(out)]
    assert main(argv) == 0
    figure: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return figure


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_the_command_line_and_the_notebook_draw_the_same_view(
    name: FigureName, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = _cli_figure(name, tmp_path, monkeypatch)
    text, compare_text = PAIR if name == "word-order" else (Settings.text, "")
    shown = show(text, view=name, compare_text=compare_text, emb_dim=16)
    assert written["data"] == json.loads(pio.to_json(shown))["data"]
    assert written["data"], f"--view {name} wrote an empty figure"


def test_the_command_line_reads_an_old_name_and_says_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _cli_figure("word-order", tmp_path, monkeypatch, spelled="compare")
    assert "--view 'compare' is now called 'word-order'" in capsys.readouterr().err
    assert old == _cli_figure("word-order", tmp_path, monkeypatch)


def test_the_command_line_refuses_a_view_without_a_figure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--view", "code", "--out", "x.json"])
    assert exit_info.value.code == 2
    assert "view 'code' is not one of embeddings, similarity, geometry" in capsys.readouterr().err


@pytest.mark.parametrize("name", SLIDE_NAMES)
def test_a_lecture_slide_draws_the_view_its_step_names(
    app_test: Callable[..., AppTest], name: ViewName
) -> None:
    # The revealed slide: a question's first slide may hold its chart back.
    number, slide = next(
        (i, s) for i, s in enumerate(SLIDES, 1) if s.step.view == name and s.revealed
    )
    at = app_test({"lecture": "1", "step": str(number)})
    assert not at.exception, at.exception
    assert not at.error, [error.value for error in at.error]
    assert slide_title(at) == slide.title
    chart = CHART_KEYS[name]
    charts = set(sent_figures(at))
    assert (chart in charts) if chart else not (charts & {c for c in CHART_KEYS.values() if c})
