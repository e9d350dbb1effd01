"""The Training view's numbers, its sentences and its figure, against numpy references
computed in the tests from the stored snapshots (issue 26)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable

import numpy as np
import pytest
import reference
import torch

from posviz.gpt2.store import Gpt2Embeddings
from posviz.lesson import training as words
from posviz.plots import Canvas
from posviz.plots.training import COMPONENT_VIEWS, training_chart
from posviz.training.runs import RunError, TrainingRun, load_named_run
from posviz.training.view import build_training, run_label

RUNS = ("small-init", "default-init", "book-settings")
STEPS = (0, 600, 1500)


@pytest.fixture(scope="module")
def runs() -> dict[str, TrainingRun]:
    return {name: load_named_run(name) for name in RUNS}


def _stored(run: TrainingRun, step: int) -> np.ndarray:
    """The snapshot as the file stores it, read with numpy alone."""
    with np.load(f"posviz/data/runs/{run.name}.npz", allow_pickle=False) as archive:
        steps = list(archive["steps"])
        return np.array(archive["pos_embeddings"][steps.index(step)])


def two(value: float) -> str:
    """How the sentences print a cosine: two decimals, and -0.001 as 0.00 (not -0.00)."""
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def _cosines(table: np.ndarray) -> np.ndarray:
    x = table.astype(np.float64)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    return unit @ unit.T


@pytest.mark.parametrize("name", RUNS)
@pytest.mark.parametrize("step", STEPS)
def test_the_numbers_are_numpys_on_the_stored_snapshot(
    runs: dict[str, TrainingRun], name: str, step: int
) -> None:
    view = build_training(runs[name], step)
    table = _stored(runs[name], step)
    start = _stored(runs[name], 0)
    assert np.array_equal(view.table.table.numpy(), table)
    np.testing.assert_allclose(view.similarity.numpy(), _cosines(table), atol=1e-6)
    mean, low, high = reference.cosines_by_distance(table)
    np.testing.assert_allclose(view.curve.mean.numpy(), mean, atol=1e-6)
    np.testing.assert_allclose(view.curve.low.numpy(), low, atol=1e-6)
    np.testing.assert_allclose(view.curve.high.numpy(), high, atol=1e-6)
    np.testing.assert_allclose(
        view.start_curve.mean.numpy(), reference.cosines_by_distance(start)[0], atol=1e-6
    )
    points, singular = reference.centred_pca(table)
    np.testing.assert_allclose(  # eigh of the Gram matrix: to ~1e-8 of the largest value
        view.geometry.singular_values.numpy(), singular, rtol=1e-6, atol=1e-6 * singular[0]
    )
    assert reference.same_up_to_sign(view.geometry.points.numpy(), points, atol=1e-5)
    moved = np.linalg.norm(table.astype(np.float64) - start, axis=1)
    np.testing.assert_allclose(view.movement.moved.numpy(), moved, rtol=1e-12)
    norms = np.linalg.norm(start.astype(np.float64), axis=1)
    assert math.isclose(view.movement.mean_start_norm, float(norms.mean()), rel_tol=1e-12)
    change = np.abs(table.astype(np.float64) - start)
    assert math.isclose(view.movement.mean_abs_change, float(change.mean()), abs_tol=1e-12)
    assert math.isclose(view.movement.start_std, float(start.astype(np.float64).std()))
    assert view.shared.colour_limit == float(
        np.abs(np.stack([_stored(runs[name], s) for s in runs[name].steps])).max()
    )


def test_the_losses_up_to_a_step(runs: dict[str, TrainingRun]) -> None:
    run = runs["small-init"]
    with np.load("posviz/data/runs/small-init.npz", allow_pickle=False) as archive:
        val, train, steps = archive["val_loss"], archive["train_loss"], list(archive["steps"])
    for step in (0, 300, 1500):
        facts = build_training(run, step).losses
        upto = val[: steps.index(step) + 1]
        assert facts.best_val == float(upto.min())
        assert facts.best_val_step == steps[int(np.argmin(upto))]
        assert (facts.train, facts.val) == (float(train[steps.index(step)]), float(upto[-1]))
        assert facts.epochs == step * 8 / 4548


def test_a_step_the_run_did_not_keep_names_those_it_did(runs: dict[str, TrainingRun]) -> None:
    with pytest.raises(RunError, match=r"no snapshot at step 601: it kept 0, 50, …, 1500"):
        build_training(runs["small-init"], 601)


def test_memo_keeps_each_steps_numbers_once(runs: dict[str, TrainingRun]) -> None:
    kept: dict[tuple[object, ...], object] = {}
    calls: list[tuple[object, ...]] = []

    def memo(key: tuple[object, ...], compute: Callable[[], object]) -> object:
        calls.append(key)
        if key not in kept:
            kept[key] = compute()
        return kept[key]

    run = runs["small-init"]
    first = build_training(run, 600, memo=memo)  # type: ignore[arg-type]
    again = build_training(run, 600, memo=memo)  # type: ignore[arg-type]
    assert again.numbers is first.numbers and again.shared is first.shared
    assert {key[0] for key in kept} == {"training", "training-run"}
    assert all(key[1] == run.digest for key in kept)


def _stand_in_gpt2() -> Gpt2Embeddings:
    generator = torch.Generator().manual_seed(7)
    return Gpt2Embeddings(
        "0" * 40,
        torch.randn(10, 768, generator=generator),
        torch.randn(1024, 768, generator=generator),
    )


def test_gpt2s_first_positions_stand_beside(runs: dict[str, TrainingRun]) -> None:
    gpt2 = _stand_in_gpt2()
    view = build_training(runs["small-init"], 1500, gpt2=gpt2)
    wpe = gpt2.wpe[:64].numpy()
    assert view.gpt2_curve is not None and view.gpt2_geometry is not None
    np.testing.assert_allclose(
        view.gpt2_curve.mean.numpy(), reference.cosines_by_distance(wpe)[0], atol=1e-6
    )
    points, _ = reference.centred_pca(wpe)
    assert reference.same_up_to_sign(view.gpt2_geometry.points.numpy(), points, atol=1e-4)
    drawn = training_chart(view)
    assert drawn.decisions.gpt2 and "gpt2" in drawn.decisions.panels
    names = [t.get("name") for t in drawn.spec.data]
    assert "GPT-2 124M trained" in names  # the curve
    planes = [t for t in drawn.spec.data if t.get("name") in (run_label(view.run), "GPT-2 124M")]
    assert [t["type"] for t in planes] == ["scatter", "scatter"]
    drawn_3d = training_chart(view, components="3d")
    assert sum(t["type"] == "scatter3d" for t in drawn_3d.spec.data) == 2


# --- the sentences ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", RUNS)
def test_the_progress_sentence_quotes_the_snapshots(
    runs: dict[str, TrainingRun], name: str
) -> None:
    run = runs[name]
    for step in (600, 1500):
        table, start = _stored(run, step), _stored(run, 0)
        now = [reference.mean_cosine_at(table, k) for k in (1, 16)]
        before = [reference.mean_cosine_at(start, k) for k in (1, 16)]
        assert words.progress_sentence(build_training(run, step)) == (
            f"After {step:,} steps neighbouring positions have cosine {two(now[0])} "
            f"(distance 16: {two(now[1])}); at step 0 they had {two(before[0])} "
            f"({two(before[1])})."
        )
    first = words.progress_sentence(build_training(run, 0))
    assert first.startswith(
        f"At step 0 (the init) neighbouring positions have cosine {two(before[0])}"
    )


def test_small_init_learns_an_order_and_default_init_does_not(runs: dict[str, TrainingRun]) -> None:
    """The issue's finding, from the stored tables: neighbours alike after small-init's 1,500
    steps; default-init's and the book-settings run's stay near the random init's 0."""
    small, default, book = (_stored(runs[n], 1500) for n in RUNS)
    assert reference.mean_cosine_at(small, 1) > 0.5
    assert abs(reference.mean_cosine_at(default, 1)) < 0.1
    assert abs(reference.mean_cosine_at(book, 1)) < 0.1


def test_the_movement_sentence_says_why_default_init_barely_moves(
    runs: dict[str, TrainingRun],
) -> None:
    run = runs["default-init"]
    table, start = _stored(run, 1500).astype(np.float64), _stored(run, 0).astype(np.float64)
    moved = float(np.linalg.norm(table - start, axis=1).mean())
    length = float(np.linalg.norm(start, axis=1).mean())
    change = float(np.abs(table - start).mean())
    sentence = words.movement_sentence(build_training(run, 1500))
    assert sentence.startswith(
        f"Since step 0 the rows moved {moved:.3f} on average, {moved / length * 100:.0f} % of "
        f"their length at step 0 ({length:.3f}): against rows that long the table barely moves."
    )
    assert (
        f"(0.001) per step, at most about 1.5 in 1,500 steps (here {change:.3f} on average, weight"
        in sentence
    )
    assert f"spread {start.std():.2f}" in sentence
    assert f"neighbours keep cosine {two(reference.mean_cosine_at(table, 1))}." in sentence
    small = runs["small-init"]
    s_table, s_start = _stored(small, 1500).astype(np.float64), _stored(small, 0).astype(np.float64)
    ratio = (
        np.linalg.norm(s_table - s_start, axis=1).mean() / np.linalg.norm(s_start, axis=1).mean()
    )
    assert f"{ratio:.1f} times their length at step 0" in words.movement_sentence(
        build_training(small, 1500)
    )


def test_the_loss_sentence_says_why_validation_climbs(runs: dict[str, TrainingRun]) -> None:
    run = runs["small-init"]
    with np.load("posviz/data/runs/small-init.npz", allow_pickle=False) as archive:
        val, train, steps = archive["val_loss"], archive["train_loss"], list(archive["steps"])
    best = int(np.argmin(val))
    assert val[-1] - val[best] > 0.05  # the run overfits: the sentence must say so
    sentence = words.loss_sentence(build_training(run, 1500))
    assert sentence == (
        f"By step 1,500 the model has been through the 4,548 training windows "
        f"{1500 * 8 / 4548:.1f} times; the training loss fell from {train[0]:.2f} to "
        f"{train[-1]:.2f}, but the validation loss rose from its lowest, {val[best]:.2f} at "
        f"step {steps[best]:,}, to {val[-1]:.2f}. 4,612 tokens of text are far too few to learn "
        "English from: the model memorises them (overfits), and what it memorised does not "
        "predict the 534 tokens it never trained on."
    )
    first = words.loss_sentence(build_training(run, 0))
    assert f"close to ln 1,417 = {math.log(1417):.2f}" in first
    assert f"training loss is {train[0]:.2f} and the validation loss {val[0]:.2f}" in first


def test_the_lecture_answers_come_from_the_numbers(runs: dict[str, TrainingRun]) -> None:
    small = build_training(runs["small-init"], 1500)
    cos = _cosines(_stored(runs["small-init"], 1500))
    answer = words.neighbour_answer(small)
    assert f"cos(10, 11) = {two(cos[10, 11])}, cos(10, 50) = {two(cos[10, 50])}" in answer
    assert answer.startswith("Position 11:" if cos[10, 11] - cos[10, 50] >= 0.1 else "Neither")


def _moved(start: np.ndarray, end: np.ndarray) -> tuple[float, float, float]:
    """How far a table's rows moved (mean |end - start|), their mean length at the start and
    the mean cosine of each row with its start: numpy alone, float64."""
    start, end = start.astype(np.float64), end.astype(np.float64)
    lengths = np.linalg.norm(start, axis=1), np.linalg.norm(end, axis=1)
    cosines = (start * end).sum(axis=1) / (lengths[0] * lengths[1])
    return (
        float(np.linalg.norm(end - start, axis=1).mean()),
        float(lengths[0].mean()),
        float(cosines.mean()),
    )


@pytest.mark.parametrize("step", [600, 1500])
def test_which_table_moves_is_said_by_the_measure_that_shows_it(
    runs: dict[str, TrainingRun], step: int
) -> None:
    """Slide 22 (issue 42): the headline names the table whose rows moved more against their
    starting length, and every number after it agrees: the ratios, the distances (the other
    travelled further, and the answer says so, and what part of its start that was), the
    cosines with the start. Each number recomputed here from the stored snapshots (numpy)."""
    small = build_training(runs["small-init"], step)
    default = build_training(runs["default-init"], step)
    numbers = {
        name: _moved(_stored(runs[name], 0), _stored(runs[name], step))
        for name in ("small-init", "default-init")
    }
    ratio = {name: moved / start for name, (moved, start, _) in numbers.items()}
    mover = max(ratio, key=ratio.__getitem__)
    other = "default-init" if mover == "small-init" else "small-init"
    answer = words.moving_answer(small, default)
    assert answer.startswith(
        "The one that starts small," if mover == "small-init" else "The one that starts at N(0, 1),"
    ), answer
    assert ratio["small-init"] > 1 > ratio["default-init"]  # the lesson's point holds

    def share(name: str) -> str:
        return f"{ratio[name]:.1f} times" if ratio[name] >= 1 else f"{ratio[name] * 100:.0f} % of"

    moved, start, cosine = numbers[mover]
    assert f"{mover}'s rows moved {share(mover)} their starting length ({moved:.2f} from " \
        f"{start:.2f})." in answer, answer  # fmt: skip
    far, long, kept = numbers[other]
    assert far > moved  # the run that moved less for its size travelled further: said so
    assert (
        f"{other}'s moved further, {far:.2f}, but that is {share(other)} their starting "
        f"length {long:.2f}: they still point where they started (cosine {two(kept)} with "
        f"step 0; {mover}'s {two(cosine)})."
    ) in answer, answer
    assert kept > 0.9 > cosine  # buried under its start, and not


# --- the figure ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", RUNS)
def test_the_figure_draws_the_stored_numbers(
    runs: dict[str, TrainingRun], name: str, decode_array: Callable[[object], np.ndarray]
) -> None:
    run = runs[name]
    view = build_training(run, 600)
    figure = json.loads(training_chart(view).spec.figure().to_json())
    by_name = {t.get("name"): t for t in figure["data"]}
    table = _stored(run, 600)
    assert np.array_equal(decode_array(by_name["positional table, step 600"]["z"]), table)
    np.testing.assert_allclose(
        decode_array(by_name["cosine similarity"]["z"]), _cosines(table), atol=1e-6
    )
    mean = reference.cosines_by_distance(table)[0]
    np.testing.assert_allclose(decode_array(by_name["step 600"]["y"]), mean, atol=1e-6)
    start = reference.cosines_by_distance(_stored(run, 0))[0]
    np.testing.assert_allclose(decode_array(by_name["step 0"]["y"]), start, atol=1e-6)
    with np.load(f"posviz/data/runs/{name}.npz", allow_pickle=False) as archive:
        np.testing.assert_allclose(
            decode_array(by_name["validation text"]["y"]), archive["val_loss"], rtol=1e-6
        )
        assert np.array_equal(
            decode_array(by_name["each step's batch"]["y"]), archive["batch_loss"]
        )
    # The components in a plane (the default): PC 1 on x, PC 2 on y, PC 3 in the hover.
    want = reference.centred_pca(table)[0]
    assert not [t for t in figure["data"] if t["type"] == "scatter3d"]
    plane = by_name[run_label(run)]
    assert plane["type"] == "scatter" and plane["xaxis"] == "x4"
    custom = decode_array(plane["customdata"])
    points = np.stack([decode_array(plane["x"]), decode_array(plane["y"]), custom[:, 1]], axis=1)
    assert reference.same_up_to_sign(points, want, atol=1e-4)
    assert np.array_equal(custom[:, 0], np.arange(64))
    assert figure["layout"]["yaxis4"]["scaleanchor"] == "x4"  # PC 1 and PC 2 on one scale
    # ... and in 3-D, the Geometry tab's view.
    figure_3d = json.loads(training_chart(view, components="3d").spec.figure().to_json())
    (scene,) = [t for t in figure_3d["data"] if t["type"] == "scatter3d"]
    points = np.stack([decode_array(scene[a]) for a in "xyz"], axis=1)
    assert reference.same_up_to_sign(points, want, atol=1e-4)
    lines = [s for s in figure["layout"]["shapes"] if s["type"] == "line"]
    assert [line["x0"] for line in lines] == [600]
    dots = [s for s in figure["layout"]["shapes"] if s["type"] == "circle"]  # each text's loss
    index = list(run.steps).index(600)
    with np.load(f"posviz/data/runs/{name}.npz", allow_pickle=False) as archive:
        wanted = [archive["train_loss"][index], archive["val_loss"][index]]
    assert [dot["yanchor"] for dot in dots] == pytest.approx(wanted)
    assert "datarevision" not in figure["layout"]  # the step's arrays change: none
    colour = figure["layout"]["coloraxis"]
    limit = float(np.abs(np.stack([_stored(run, s) for s in run.steps])).max())
    assert (colour["cmin"], colour["cmax"]) == (pytest.approx(-limit), pytest.approx(limit))
    assert len(json.dumps(figure)) < 1_500_000


@pytest.mark.parametrize(
    ("canvas", "stacked"),
    [
        (Canvas(), False),
        (Canvas(), True),
        (Canvas(width=358, height=700, window_width=390, window_height=844), True),
        (Canvas(width=1200, height=800, window_width=1280, window_height=800), False),
        (Canvas(width=1500, height=900, window_width=1920, window_height=1080), False),
    ],
    ids=["unknown", "unknown-stacked", "phone", "laptop", "projector"],
)
def test_the_panels_never_overlap(
    runs: dict[str, TrainingRun], canvas: Canvas, stacked: bool
) -> None:
    """Every panel's domain lies in the figure and apart from the others'; each panel's title
    sits above it, under the one before."""
    for lecture, components in itertools.product((False, True), COMPONENT_VIEWS):
        drawn = training_chart(
            build_training(runs["small-init"], 600, gpt2=_stand_in_gpt2()),
            canvas=canvas, stacked=stacked, lecture=lecture, components=components,
        )  # fmt: skip
        assert drawn.decisions.stacked is stacked
        layout = drawn.spec.layout
        boxes = []
        for key, value in layout.items():
            if key.startswith("xaxis"):
                y_axis = layout[key.replace("x", "y", 1)]
                boxes.append((tuple(value["domain"]), tuple(y_axis["domain"])))
            elif key.startswith("scene"):
                boxes.append((tuple(value["domain"]["x"]), tuple(value["domain"]["y"])))
        assert len(boxes) == len(drawn.decisions.panels) == 6
        for x, y in boxes:
            assert 0 <= x[0] < x[1] <= 1 and 0 <= y[0] < y[1] <= 1
        for index, (x, y) in enumerate(boxes):
            for x2, y2 in boxes[index + 1 :]:
                apart = x[1] <= x2[0] or x2[1] <= x[0] or y[1] <= y2[0] or y2[1] <= y[0]
                assert apart, (x, y, x2, y2)
        titles = [a for a in layout["annotations"] if a["text"].startswith("<b>")]
        assert len(titles) == 6
        for title, (_, y) in zip(titles, boxes, strict=True):
            assert title["y"] == pytest.approx(y[1]) and title["yanchor"] == "bottom"


@pytest.mark.parametrize(
    "canvas",
    [
        Canvas(width=1800, height=800, window_width=1920, window_height=1080),
        Canvas(width=1200, height=560, window_width=1280, window_height=720),
    ],
    ids=["1920x1080", "1280x720"],
)
def test_a_lecture_slide_draws_its_panels_in_the_windows_height(
    runs: dict[str, TrainingRun], canvas: Canvas
) -> None:
    view = build_training(runs["small-init"], 1500)
    drawn = training_chart(view, lecture=True, canvas=canvas, panels=["distance", "similarity"])
    assert drawn.decisions.panels == ("similarity", "distance") and drawn.decisions.fills
    assert canvas.height is not None and drawn.spec.layout["height"] <= canvas.height
    kinds = [t["type"] for t in drawn.spec.data]
    assert kinds == ["heatmap", "scatter", "scatter"]  # the matrix, step 0 and step 1,500
    alone = training_chart(view, panels=["table"])
    assert alone.decisions.panels == ("table",) and alone.spec.layout["showlegend"] is False
    with pytest.raises(ValueError, match="panels must be among table, similarity, distance"):
        training_chart(view, panels=["tables"])
    with pytest.raises(ValueError, match="no panel to draw"):
        training_chart(view, panels=["gpt2"])  # no GPT-2 tables in this view
