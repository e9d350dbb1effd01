"""The view registry (:mod:`posviz.viewspec`): one name per view, old spellings that name the
new word, and each name drawing its own view's figure."""

from __future__ import annotations

import warnings

import pytest

from posviz.config import Settings, SettingsError
from posviz.notebook import show
from posviz.viewspec import (
    FIGURE_NAMES,
    NAMES,
    TAB_NAMES,
    VIEWS,
    FigureName,
    UnknownViewError,
    renamed,
    view_named,
)

# Written out here, not read from posviz: the names the guide and the links promise.
EXPECTED_TABS = (
    "embeddings", "similarity", "geometry", "distance", "word-order", "attention", "training",
    "length", "code", "download",
)  # fmt: skip
PAIR = Settings(text="The dog bites the man", compare_text="The man bites the dog", emb_dim=16)


def test_one_name_per_view() -> None:
    assert TAB_NAMES == EXPECTED_TABS
    assert set(NAMES) == {*EXPECTED_TABS, "text", "tokens"}
    assert len({spec.label for spec in VIEWS}) == len(VIEWS)
    assert all(name == name.lower() and "_" not in name for name in NAMES)


@pytest.mark.parametrize("old", ["compare", "word_order"])
def test_an_old_spelling_names_the_new_word(old: str) -> None:
    assert view_named(old).name == "word-order"
    assert renamed(old) == f"'{old}' is now called 'word-order'"


@pytest.mark.parametrize(
    ("name", "among"),
    [("nope", NAMES), ("code", FIGURE_NAMES), ("text", FIGURE_NAMES), ("", NAMES)],
)
def test_an_unknown_view_is_named_with_the_choices(name: str, among: tuple[str, ...]) -> None:
    with pytest.raises(UnknownViewError, match=f"view {name!r} is not one of embeddings, "):
        view_named(name, among=among)


# What each figure shows first (traces, and a title only that view's figure has).
FIRST_TRACES = {
    "embeddings": ["heatmap"] * 3,
    "similarity": ["heatmap"] * 3,
    "geometry": ["scatter3d", "scatter3d"],
    "distance": ["scatter"],
    "word-order": ["heatmap"] * 4,
    "attention": ["heatmap"] * 4,
    "training": ["heatmap", "heatmap", "scatter"],
    "length": ["scatter"] * 6,
}


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_show_draws_every_view(name: FigureName) -> None:
    figure = show(PAIR.text, view=name, compare_text=PAIR.compare_text, emb_dim=16)
    traces = [trace.type for trace in figure.data]
    assert traces[: len(FIRST_TRACES[name])] == FIRST_TRACES[name]


def test_show_reads_an_old_spelling_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match="'word_order' is now called 'word-order'"):
        old = show(PAIR.text, view="word_order", compare_text=PAIR.compare_text, emb_dim=16)  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = show(PAIR.text, view="word-order", compare_text=PAIR.compare_text, emb_dim=16)
    assert old.to_json() == new.to_json()


def test_show_refuses_a_view_without_a_figure() -> None:
    with pytest.raises(SettingsError, match="view 'code' is not one of embeddings, similarity"):
        show(view="code")  # type: ignore[arg-type]


def test_show_needs_a_second_text_for_word_order() -> None:
    with pytest.raises(SettingsError, match="needs compare_text"):
        show("The dog bites the man", view="word-order")
    # identical texts: nothing to compare, no chart (whose panels said "differ"; issue 42)
    same = "The dog bites the man"
    with pytest.raises(SettingsError, match="got status 'identical'"):
        show(same, view="word-order", compare_text=same)


def test_show_says_whose_option_it_was_given() -> None:
    with pytest.raises(SettingsError, match="beyond is for view='distance', not view='geometry'"):
        show(view="geometry", beyond=4)
    figure = show(view="training", components="3d", train_step=600)
    assert "scatter3d" in {trace.type for trace in figure.data}
