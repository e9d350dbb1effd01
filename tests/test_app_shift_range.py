"""The shift slider offers what can be shown (issue 42, item 3): a learned table up to T − n,
with a switch to go past its end on purpose (torch's IndexError then explained); the formulas
far enough for the sentence to pass T, and T5's past its max_distance 128."""

from __future__ import annotations

from collections.abc import Callable

from streamlit.testing.v1 import AppTest


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_a_learned_table_offers_its_rows_and_a_way_past_its_end(
    app_test: Callable[..., AppTest],
) -> None:
    at = app_test({"tab": "attention", "scheme": "learned"})  # the rose: 9 tokens, T = 16
    _ok(at)
    assert at.slider(key="shift").max == 16 - 9
    assert at.toggle(key="shift_past_end").value is False
    at.toggle(key="shift_past_end").set_value(True).run()
    _ok(at)
    assert at.slider(key="shift").max == 16
    at.slider(key="shift").set_value(10).run()
    _ok(at)
    said = "\n".join(str(m.value) for m in at.markdown)
    assert "IndexError" in said and "position 16" in said


def test_a_links_shift_past_the_end_turns_the_switch_on(app_test: Callable[..., AppTest]) -> None:
    at = app_test({"tab": "attention", "scheme": "learned", "shift": "12"})
    _ok(at)
    assert at.toggle(key="shift_past_end").value is True
    assert at.slider(key="shift").value == 12


def test_formulas_reach_past_t_and_t5_past_128(app_test: Callable[..., AppTest]) -> None:
    at = app_test({"tab": "attention", "scheme": "rope"})
    _ok(at)
    assert at.slider(key="shift").max == 16 + 9  # the sentence entirely past T
    assert [t for t in at.toggle if t.key == "shift_past_end"] == []
    at = app_test({"tab": "attention", "scheme": "t5"})
    _ok(at)
    assert at.slider(key="shift").max == 129 + 9
