"""The Training tab through AppTest (issue 26): a link opens a run at a step, the figure draws
the stored snapshot, the sentence above it quotes numbers recomputed here from the run file
with numpy (never posviz), the step slider and the play button move through the snapshots,
and the link follows.

The run files are read here as what they are, zip archives of ``.npy`` arrays
(``numpy.load(..., allow_pickle=False)``), not with posviz's reader.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from charts import sent_figures
from streamlit.testing.v1 import AppTest
from widgets import ok

AppFactory = Callable[..., AppTest]
RUNS = Path(__file__).resolve().parent.parent / "posviz" / "data" / "runs"


def snapshot(run: str, step: int) -> np.ndarray:
    """The run's positional table at ``step``, [T, d] float32, read with numpy."""
    with np.load(RUNS / f"{run}.npz", allow_pickle=False) as stored:
        (index,) = np.flatnonzero(stored["steps"] == step)
        table: np.ndarray = stored["pos_embeddings"][index]
    return table


def cosines(table: np.ndarray) -> np.ndarray:
    """Cosine similarity between the rows, in float64."""
    rows = table.astype(np.float64)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit @ unit.T


def neighbours(table: np.ndarray, distance: int = 1) -> float:
    """The mean cosine of positions p and p + distance."""
    similarity = cosines(table)
    return float(np.mean(np.diagonal(similarity, offset=distance)))


def lesson(at: AppTest) -> str:
    (found,) = [str(m.value) for m in at.markdown if "neighbouring positions" in str(m.value)]
    return found


def step_slider(at: AppTest) -> object:
    (slider,) = [s for s in at.select_slider if s.label == "Training step"]
    return slider


@pytest.mark.parametrize(("run", "step"), [("small-init", 600), ("default-init", 1500)])
def test_a_link_opens_the_run_at_its_step(app_test: AppFactory, run: str, step: int) -> None:
    """The issue's link, ``?tab=training&run=small-init&step=600``: on the Training tab
    ``step`` is the training step, not lecture mode's slide."""
    at = ok(app_test({"tab": "training", "run": run, "step": str(step)}))
    assert not at.toggle(key="lecture").value, "step= on the Training tab is not a slide"
    assert at.selectbox(key="run").value == run
    assert step_slider(at).value == step
    figure = sent_figures(at)["training"]
    table, similarity = (np.asarray(trace["z"]) for trace in figure["data"][:2])
    expected = snapshot(run, step)
    np.testing.assert_array_equal(table, expected)  # the stored float32 numbers, as stored
    np.testing.assert_allclose(similarity, cosines(expected), atol=1e-6)
    start = snapshot(run, 0)
    said = lesson(at)
    assert f"After {step:,} steps neighbouring positions have cosine" in said
    assert f"cosine {neighbours(expected):.2f}" in said, said
    assert f"at step 0 they had {abs(neighbours(start)):.2f}" in said, said
    assert dict(at.query_params).get("run", "small-init") == run
    assert dict(at.query_params).get("step", "1500") == str(step)
    assert "train_step" not in at.query_params


def test_the_components_are_a_plane_and_the_switch_turns_them_into_a_scene(
    app_test: AppFactory,
) -> None:
    """PC 1 against PC 2 by default (no WebGL scene to redraw at each step); the switch draws
    the first three in 3-D, for this step and the ones after it."""
    at = ok(app_test({"tab": "training", "step": "600"}))
    types = [t["type"] for t in sent_figures(at)["training"]["data"]]
    assert "scatter3d" not in types and types.count("scatter") == 3  # 2 curves, the plane
    assert not at.toggle(key="training_3d").value
    at.toggle(key="training_3d").set_value(True).run()
    ok(at)
    (scene,) = [t for t in sent_figures(at)["training"]["data"] if t["type"] == "scatter3d"]
    centred = snapshot("small-init", 600).astype(np.float64)
    centred -= centred.mean(axis=0)
    _, _, right = np.linalg.svd(centred, full_matrices=False)
    pc1 = centred @ right[0]
    assert np.allclose(np.abs(np.asarray(scene["x"])), np.abs(pc1), atol=1e-4)
    step_slider(at).set_value(650).run()
    ok(at)
    assert [t["type"] for t in sent_figures(at)["training"]["data"]].count("scatter3d") == 1


def test_the_loss_is_a_chart_of_its_own_whose_step_marks_alone_move(app_test: AppFactory) -> None:
    """The loss panel is a second chart: its arrays are the run's at every step, so a step
    moves only its marks (a dotted line, a dot on each text's loss) and keeps its
    ``datarevision``, which tells plotly.js to redraw the marks alone."""
    at = ok(app_test({"tab": "training", "step": "600"}))
    figures = sent_figures(at)
    assert not [t for t in figures["training"]["data"] if "loss" in str(t.get("hovertemplate"))]
    loss = figures["training_loss"]
    by_name = {t["name"]: t for t in loss["data"]}
    with np.load(RUNS / "small-init.npz", allow_pickle=False) as stored:
        steps, batch = list(stored["steps"]), stored["batch_loss"]
        train, val = stored["train_loss"], stored["val_loss"]
    np.testing.assert_array_equal(np.asarray(by_name["each step's batch"]["y"]), batch)
    np.testing.assert_allclose(np.asarray(by_name["validation text"]["y"]), val, rtol=1e-6)
    revision = loss["layout"]["datarevision"]
    for step in (600, 650):
        shapes = sent_figures(at)["training_loss"]["layout"]["shapes"]
        assert [s["x0"] for s in shapes if s["type"] == "line"] == [step]
        dots = [s for s in shapes if s["type"] == "circle"]
        index = steps.index(step)
        assert [d["xanchor"] for d in dots] == [step, step]
        assert [d["yanchor"] for d in dots] == pytest.approx([train[index], val[index]])
        assert sent_figures(at)["training_loss"]["layout"]["datarevision"] == revision
        step_slider(at).set_value(650).run()
        ok(at)
    other = ok(app_test({"tab": "training", "run": "default-init", "step": "600"}))
    assert sent_figures(other)["training_loss"]["layout"]["datarevision"] != revision


def test_a_step_the_run_did_not_keep_shows_the_nearest(app_test: AppFactory) -> None:
    at = ok(app_test({"tab": "training", "step": "620"}))
    assert step_slider(at).value == 600
    assert at.query_params["step"] == "600", "the link names the step shown"
    assert not [w.value for w in at.warning]


def test_a_train_step_link_opens_the_step_and_another_tab_keeps_it(app_test: AppFactory) -> None:
    """``train_step=`` names the training step on any page (links made before the Training
    tab's own ``step=``); a page on another tab keeps it as ``train_step``, since ``step=``
    there is lecture mode's slide."""
    at = ok(app_test({"tab": "training", "train_step": "650"}))
    assert step_slider(at).value == 650
    assert at.query_params["step"] == "650" and "train_step" not in at.query_params
    at = ok(app_test({"tab": "geometry", "train_step": "650"}))
    assert not at.toggle(key="lecture").value
    assert at.query_params["train_step"] == "650" and "step" not in at.query_params


def test_a_run_this_server_lacks_is_named_and_the_first_is_shown(app_test: AppFactory) -> None:
    at = ok(app_test({"tab": "training", "run": "my-run"}))
    said = " ".join(str(w.value) for w in at.warning)
    assert "There is no run named 'my-run' here" in said
    assert "small-init" in said and "default-init" in said and "book-settings" in said
    assert at.selectbox(key="run").value == "small-init"


def test_the_slider_and_the_play_button_move_through_the_snapshots(app_test: AppFactory) -> None:
    at = ok(app_test({"tab": "training", "step": "600"}))
    step_slider(at).set_value(650).run()
    ok(at)
    assert at.query_params["step"] == "650"
    np.testing.assert_array_equal(
        np.asarray(sent_figures(at)["training"]["data"][0]["z"]), snapshot("small-init", 650)
    )
    at.button(key="training_play").click().run()  # each run while playing shows the next one
    ok(at)
    assert step_slider(at).value == 700
    assert at.button(key="training_pause")
    at.button(key="training_pause").click().run()
    ok(at)
    assert step_slider(at).value == 700 and at.button(key="training_play")


def test_play_from_the_last_step_starts_again_from_the_first(app_test: AppFactory) -> None:
    at = ok(app_test({"tab": "training"}))  # step 1,500, the last
    at.button(key="training_play").click().run()
    ok(at)
    assert step_slider(at).value == 50, "from step 0, the next one is shown"


def test_the_3d_switch_is_in_the_link_and_a_link_opens_it(app_test: AppFactory) -> None:
    """Issue 42: the switch writes ``components=3d`` into the link (and takes it out again);
    the link opens the tab with the switch on and the scene drawn, a cube that fills its
    cell."""
    at = ok(app_test({"tab": "training", "step": "600"}))
    assert "components" not in at.query_params
    at.toggle(key="training_3d").set_value(True).run()
    ok(at)
    assert at.query_params["components"] == "3d"
    link = dict(at.query_params)
    at.toggle(key="training_3d").set_value(False).run()
    ok(at)
    assert "components" not in at.query_params
    opened = ok(app_test(link))
    assert opened.toggle(key="training_3d").value
    figure = sent_figures(opened)["training"]
    assert [t["type"] for t in figure["data"]].count("scatter3d") == 1
    scene = figure["layout"]["scene"]
    assert scene["aspectmode"] == "cube", scene  # PC 3's ticks get an axis as long as PC 1's
    assert dict(opened.query_params) == link
