"""The Length tab through AppTest (issue 41, item 2): ``?tab=length`` opens with no exception,
its chart holds one line per scheme and input length, the sentence above it quotes numbers
recomputed here from the shipped runs with numpy, and the scheme menu changes the lines."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
from charts import sent_figures
from streamlit.testing.v1 import AppTest
from widgets import ok

AppFactory = Callable[..., AppTest]
RUNS = Path(__file__).resolve().parent.parent / "posviz" / "data" / "length"
SMOOTH = 8  # the figure's mean over 8 positions, as its note says


def position_loss(scheme: str, length: int, variant: str = "as-trained") -> np.ndarray:
    with np.load(RUNS / f"{scheme}.npz", allow_pickle=False) as run:
        return run[f"held-out/{length}/{variant}/position"].astype(np.float64)


def band(scheme: str, length: int, variant: str = "as-trained") -> float:
    with np.load(RUNS / f"{scheme}.npz", allow_pickle=False) as run:
        return float(np.mean(run[f"held-out/{length}/{variant}/band"].astype(np.float64)))


def lines(figure: dict[str, object]) -> dict[str, list[np.ndarray]]:
    found: dict[str, list[np.ndarray]] = {}
    for trace in figure["data"]:  # type: ignore[attr-defined]
        if trace.get("type") == "scatter" and trace.get("legendgroup"):
            found.setdefault(trace["name"], []).append(np.asarray(trace["y"]))
    return found


def test_the_tab_opens_from_its_link(app_test: AppFactory) -> None:
    at = ok(app_test({"tab": "length"}))
    figure = sent_figures(at)["length"]
    drawn = lines(figure)
    for name in ("Sinusoidal", "None", "RoPE", "ALiBi", "T5 relative bias"):
        assert len(drawn[name]) == 3, name  # inputs of 64, 128 and 256
    assert len(drawn["Learned"]) == 1  # its table ends at 64
    kernel = np.ones(SMOOTH) / SMOOTH
    want = np.convolve(position_loss("alibi", 256), kernel, mode="valid")
    np.testing.assert_allclose(drawn["ALiBi"][-1], want, rtol=1e-6)
    said = " ".join(str(m.value) for m in at.markdown)
    assert f"ALiBi {band('alibi', 256):.2f}, as within 64 ({band('alibi', 64):.2f})" in said
    assert "IndexError" in said


def test_the_scheme_menu_draws_the_chosen(app_test: AppFactory) -> None:
    at = ok(app_test({"tab": "length"}))
    at.multiselect(key="length_schemes").set_value(["alibi", "rope"])
    ok(at.run())
    drawn = lines(sent_figures(at)["length"])
    assert {"ALiBi", "RoPE"} <= set(drawn) and "Sinusoidal" not in drawn


def test_a_chosen_extension_is_drawn(app_test: AppFactory) -> None:
    at = ok(
        app_test({"tab": "length", "scheme": "rope", "rope_scaling": "ntk", "rope_factor": "2"})
    )
    drawn = lines(sent_figures(at)["length"])
    (name,) = [n for n in drawn if n.startswith("RoPE + ")]
    assert "NTK" in name and len(drawn[name]) == 3
    kernel = np.ones(SMOOTH) / SMOOTH
    want = np.convolve(position_loss("rope", 128, "ntk-2"), kernel, mode="valid")
    np.testing.assert_allclose(drawn[name][1], want, rtol=1e-6)


def test_the_lecture_slides_ask_then_answer(app_test: AppFactory) -> None:
    at = ok(app_test({"lecture": "1", "step": "23"}))
    text = "\n".join(str(m.value) for m in at.markdown)
    assert "**Your guess?** A model trained on 64 tokens reads 256." in text
    drawn = lines(sent_figures(at)["length"])
    assert all(len(values) == 1 for values in drawn.values())  # the input of 64 alone
    at = ok(app_test({"lecture": "1", "step": "24"}))
    text = "\n".join(str(m.value) for m in at.markdown)
    assert f"ALiBi keeps it ({band('alibi', 256):.2f} at positions 128–255" in text, text
    at = ok(app_test({"lecture": "1", "step": "26"}))
    text = "\n".join(str(m.value) for m in at.markdown)
    assert f"down from {band('rope', 256):.2f} to {band('rope', 256, 'yarn-4'):.2f}" in text
    assert set(lines(sent_figures(at)["length"])) == {"RoPE", "RoPE + YaRN (s\u00a0=\u00a04)"}


def test_the_code_behind_the_numbers_is_the_sidebar_schemes_run(app_test: AppFactory) -> None:
    """Opened, the tab's expander shows the script of the sidebar's scheme's run (T5's here):
    no posviz import, T5's bias in the model, the seed and steps of the shipped run."""
    at = ok(app_test({"tab": "length", "scheme": "t5"}))
    assert not at.code  # closed: no script is built
    at.session_state["length_code"] = True
    ok(at.run())
    (code,) = [c for c in at.code if "SchemeGPTModel" in str(c.value)]
    script = str(code.value)
    assert not re.search(r"^\s*(import|from)\s+posviz\b", script, re.MULTILINE)
    assert re.search(r"^seed = 123$", script, re.MULTILINE), "the run's seed"
    assert "bucket" in script  # T5's relative-position buckets
