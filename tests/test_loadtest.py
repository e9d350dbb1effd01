"""benchmarks/loadtest.py cannot be fooled: its plans and its checks (no server needed).

The load test checks charts against the tests' reference (``tests/reference.py``: the book's
notebook functions, tiktoken's own encoding). Every step of every plan must change the expected
chart; the plans must reach windows > 0, strides != T and every scheme; and a chart or chip row
from the wrong view must be reported.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import numpy as np
import pytest
from conftest import APP, APP_TIMEOUT
from reference import (
    SCHEMES,
    View,
    chart_problems,
    chip_problems,
    panels,
    token_ids,
    window_token_ids,
)

from benchmarks import loadtest
from benchmarks.rerun_calls import counting


def _plans() -> Iterator[tuple[str, list[loadtest.Step]]]:
    yield "default-view", loadtest.make_plan(loadtest.DEFAULT_VIEW, 40, loadtest.DEFAULT_VIEW_MOVES)
    for index in range(6):
        start = loadtest.student_start(index, shared=index == 2)
        yield f"student{index}", loadtest.make_plan(start, 60, loadtest.STUDENT_MOVES, index)


PLANS = dict(_plans())


@pytest.mark.parametrize("name", sorted(PLANS))
def test_every_step_changes_the_expected_chart(name: str) -> None:
    steps = PLANS[name]
    for before, after in itertools.pairwise(steps):
        old, new = panels(before.view), panels(after.view)
        assert any(
            a.shape != b.shape or not np.array_equal(a.view(np.uint32), b.view(np.uint32))
            for a, b in zip(old, new, strict=True)
        ), f"{after.key}={after.value!r} leaves the chart of {before.view} unchanged"


def test_plans_reach_windows_strides_and_every_scheme() -> None:
    views = [step.view for name, steps in PLANS.items() if name != "default-view" for step in steps]
    assert {view.scheme for view in views} == set(SCHEMES)
    assert any(view.window > 0 for view in views)
    assert any(view.stride is not None and view.stride != view.context_length for view in views)
    assert any(view.window > 0 and view.stride is not None for view in views)
    assert {step.key for steps in PLANS.values() for step in steps[1:]} == set(
        loadtest.STUDENT_MOVES
    )


def test_window_starts_at_window_times_stride() -> None:
    view = View(text=loadtest.TEXTS[0], context_length=5, stride=3, window=4)
    assert window_token_ids(view) == token_ids(loadtest.TEXTS[0])[12:17]


def _figure(view: View) -> dict[str, object]:
    """A chart as the app sends it (tests/charts.py reads it so): three float32 heatmaps."""
    traces = [
        {"type": "heatmap", "z": np.ascontiguousarray(z, dtype=np.float32),
         "x": np.arange(view.emb_dim)}
        for z in panels(view)
    ]  # fmt: skip
    return {"data": traces}


def test_a_chart_from_the_previous_step_is_reported() -> None:
    steps = PLANS["student3"]
    for before, after in itertools.pairwise(steps[:12]):
        assert chart_problems(_figure(after.view), after.view) == []
        assert chart_problems(_figure(before.view), after.view) != []


def test_chips_are_checked_against_tiktoken_tokens() -> None:
    view = View(text="Hi <b>you</b>: a@b", context_length=16)
    ids = token_ids(view.text)
    assert ids[:2] == [17250, 1279]  # tiktoken's GPT-2: "Hi", " <"
    texts = ["Hi", "␣\\<", "b", "\\>", "you", "\\<\\/", "b", "\\>\\:\u2060", "␣a",
             "\u2060\\@", "b"]  # fmt: skip

    def chip(n: int, i: int, text: str) -> str:  # orange and "×N" for a repeated token
        times = ids.count(i)
        return (
            f":orange-badge[{n} · {text} · {i} · ×{times}]"
            if times > 1
            else (f":blue-badge[{n} · {text} · {i}]")
        )

    chips = " ".join(chip(n, i, text) for n, (i, text) in enumerate(zip(ids, texts, strict=True)))
    assert "· ×3]" in chips  # "b" occurs three times
    assert chip_problems([chips], view) == []
    assert chip_problems([chips.replace(" · ×3]", "]")], view) != [], "a count left out"
    assert chip_problems([chips.replace("×3", "×2")], view) != [], "a wrong count"
    assert chip_problems([chips.replace("you", "yoU")], view) != []
    assert chip_problems([chips.replace(f"· {ids[0]}]", "· 1]")], view) != []
    # Same text once un-escaped, but Markdown would read the bare ">" and ":".
    [problem] = chip_problems([chips.replace("\\>\\:", ">:")], view)
    assert problem.startswith("chips: unescaped '>' in ")


def test_every_scenario_is_a_function_of_the_context() -> None:
    for name in loadtest.SCENARIOS:
        assert callable(getattr(loadtest, name)), name


def test_cpu_of_the_main_thread_is_part_of_the_process_cpu() -> None:
    pid = os.getpid()
    main_thread = loadtest.cpu_seconds(pid, pid)  # /proc/<pid>/task/<pid>/stat
    assert 0 < main_thread <= loadtest.cpu_seconds(pid)


def test_explore_plans_are_big_views_that_change_every_step() -> None:
    """explore_plan raises if a step leaves the chart unchanged or the view invalid."""
    steps = loadtest.explore_plan(0)
    views = [step.view for step in steps]
    assert len(steps) == 12
    assert max(v.context_length for v in views) == 1024 and max(v.emb_dim for v in views) == 768
    assert {v.scheme for v in views} == set(SCHEMES)
    assert all(len(v.text) > 5_000 for v in views)


def test_the_word_order_pair_is_a_reordering_of_the_first_window() -> None:
    query, _ = loadtest.explore_word_order(0)
    first = token_ids(query["text"])[: int(query["context_length"])]
    second = token_ids(query["compare"])
    assert sorted(first) == sorted(second) and first != second
    assert len(query["text"]) > 24_000


ATTENTION_PLANS = {
    index: loadtest.attention_plan(index)
    for index in range(loadtest.ATTENTION_EVERY - 1, 60, loadtest.ATTENTION_EVERY)
}


def _attention_figure(view: View, attention: loadtest.Attention) -> dict[str, object]:
    """The Attention chart the page sends for ``view`` (posviz's own figure, as JSON)."""
    from posviz.config import Settings
    from posviz.plots.attention import attention_chart
    from posviz.scores import build_attention
    from posviz.view import build_view

    settings = Settings(
        text=view.text, context_length=view.context_length, emb_dim=view.emb_dim,
        seed=view.seed, stride=view.stride, window=view.window, scheme=view.scheme,
        heads=attention.heads, head=attention.head, shift=attention.shift,
    )  # fmt: skip
    spec = attention_chart(build_attention(build_view(settings))).spec
    return {"data": spec.data, "layout": spec.layout}


def test_a_quarter_of_the_class_is_on_the_attention_tab_every_scheme() -> None:
    """The class-hall scenario's attention students (issue 25): every scheme, each opens its
    link on the Attention tab and then moves the sentence (or, learned, shows another head)."""
    assert len(ATTENTION_PLANS) == 15  # a quarter of 60
    assert {plan[0].view.scheme for plan in ATTENTION_PLANS.values()} == set(
        loadtest.ATTENTION_SCHEMES
    )
    for plan in ATTENTION_PLANS.values():
        opened, moved = plan
        assert opened.key is None and opened.attention is not None and moved.attention
        assert loadtest.link(opened.view, opened.attention)["tab"] == "attention"
        assert moved.attention != opened.attention
        assert (moved.key == "head") == (opened.view.scheme == "learned")


@pytest.mark.parametrize("index", [3, 7, 11, 19])
def test_the_attention_check_takes_the_right_chart_and_refuses_another(index: int) -> None:
    opened, moved = ATTENTION_PLANS[index]
    for step in (opened, moved):
        assert step.attention is not None
        figure = _attention_figure(step.view, step.attention)
        assert loadtest.attention_problems(figure, step.view, step.attention) == []
    assert opened.attention is not None and moved.attention is not None
    wrong = _attention_figure(opened.view, opened.attention)
    assert loadtest.attention_problems(wrong, moved.view, moved.attention) != [], (
        "the chart before the move must not pass for the chart after it"
    )


@pytest.mark.parametrize("only", ["cold", "steady,explore", "flood"])
def test_the_floor_page_serves_only_the_default_views_scenarios(
    only: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        loadtest.main(["--only", only, "--floor-page", "--timeout", "1"])  # 1 s: never a run
    assert exited.value.code == 2
    assert "--floor-page serves the default view only" in capsys.readouterr().err


def test_the_floor_page_never_writes_the_apps_blocks(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[object] = []  # were the guard gone, the docs stay untouched all the same
    monkeypatch.setattr(loadtest, "write_docs", lambda *args, **kwargs: written.append(args))
    with pytest.raises(SystemExit) as exited:
        loadtest.main(["--only", "steady", "--floor-page", "--docs", "--timeout", "1"])
    assert exited.value.code == 2
    assert "--floor-page is a comparison, not the app: no --docs" in capsys.readouterr().err
    assert written == []


def test_the_floor_pages_charts_are_not_compared_and_say_so() -> None:
    report = loadtest.Report()
    report.correctness("steady", [], [], compared=False)
    report.correctness("capacity", [], [])
    rows = {(row.scenario, row.target): row for row in report.rows}
    chart = "every chart + chip row bitwise equal to the reference"
    assert rows["steady", chart].met is None
    assert rows["steady", chart].measured.startswith("not compared")
    assert rows["capacity", chart].met is False  # no runs at all: never met by default
    assert rows["steady", "errors = 0"].met is True


def test_the_floor_page_draws_what_the_default_view_draws() -> None:
    """benchmarks/floor_page.py stands for the page: the same messages a rerun, kind for kind,
    and the widgets the load test's students move, under the same keys and options."""
    from streamlit.testing.v1 import AppTest

    messages, pages = {}, {}
    for name, path in (("app", APP), ("floor", loadtest.FLOOR_PAGE)):
        at = AppTest.from_file(str(path), default_timeout=APP_TIMEOUT).run()
        with counting() as seen:
            at.run()
        assert not at.exception, (name, at.exception)
        messages[name] = {k: v for k, v in seen.items() if k.startswith("message ")}
        pages[name] = at
    assert messages["floor"] == messages["app"]
    assert sum(messages["app"].values()) >= 30  # the whole page, not an empty one
    app, floor = pages["app"], pages["floor"]
    assert floor.selectbox(key="scheme").options == app.selectbox(key="scheme").options
    assert floor.slider(key="emb_dim").value == app.slider(key="emb_dim").value
    [app_seed], [floor_seed] = app.sidebar.text_input, floor.sidebar.text_input
    assert floor_seed.key == app_seed.key and floor_seed.value == app_seed.value
