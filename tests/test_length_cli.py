"""The Length view from the command line and the notebook: ``python -m posviz --view length
--out fig.json`` writes the figure, ``--lesson`` its sentences, ``posviz.show(view="length")``
the same figure; the numbers are the shipped runs', read here with numpy."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import posviz
from posviz.cli import main

RUNS = Path(__file__).resolve().parent.parent / "posviz" / "data" / "length"


def band(scheme: str, length: int, variant: str = "as-trained") -> float:
    with np.load(RUNS / f"{scheme}.npz", allow_pickle=False) as run:
        return float(np.mean(run[f"held-out/{length}/{variant}/band"].astype(np.float64)))


def test_python_dash_m_posviz_writes_the_figure(tmp_path: Path) -> None:
    out = tmp_path / "fig.json"
    done = subprocess.run(
        [sys.executable, "-m", "posviz", "--view", "length", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figure = json.loads(out.read_text())
    names = {trace.get("name") for trace in figure["data"]}
    assert {"Learned", "Sinusoidal", "None", "RoPE", "ALiBi", "T5 relative bias"} <= names
    assert any("IndexError" in a["text"] for a in figure["layout"]["annotations"])


def test_lesson_quotes_the_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["--view", "length", "--rope-scaling", "ntk", "--rope-factor", "4", "--lesson"]) == 0
    )
    said = capsys.readouterr().out
    assert f"ALiBi {band('alibi', 256):.2f}" in said
    assert "NTK-aware scaling (s\u00a0=\u00a04)" in said
    assert f"{band('rope', 256, 'ntk-4'):.2f} without retraining" in said


def test_length_takes_no_matrices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--view", "length", "--csv", "x.csv"])
    assert exit_info.value.code == 2
    assert "--view length draws a figure, its lesson or its code" in capsys.readouterr().err


def test_the_notebook_shows_the_same_figure() -> None:
    figure = posviz.show(view="length", rope_scaling="llama3", rope_factor=2.0)
    names = [trace.name for trace in figure.data]
    assert "RoPE + Llama 3 scaling (s\u00a0=\u00a02)" in names
    assert names.count("ALiBi") == 3


def test_the_notebook_draws_the_schemes_asked() -> None:
    figure = posviz.show(view="length", schemes=["alibi", "sinusoidal"])
    names = {trace.name for trace in figure.data if trace.legendgroup}
    assert {"ALiBi", "Sinusoidal"} <= names and "RoPE" not in names
    with pytest.raises(ValueError, match="schemes is for view='length'"):
        posviz.show(view="distance", schemes=["alibi"])
    with pytest.raises(ValueError, match="schemes must be a list"):
        posviz.show(view="length", schemes="alibi")


def test_print_code_writes_the_script_of_the_schemes_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--print-code`` prints the script that trains ``--scheme``'s shipped run (its settings
    are the command's defaults) and reads it with the extension shown besides the sentence's;
    the lesson goes to stderr, so the script can be piped."""
    from posviz.codegen import length_script
    from posviz.training.length import LengthConfig

    assert main(["--view", "length", "--scheme", "alibi", "--print-code", "--lesson"]) == 0
    printed = capsys.readouterr()
    assert printed.out == length_script(LengthConfig(scheme="alibi"))
    assert not re.search(r"^\s*(import|from)\s+posviz\b", printed.out, re.MULTILINE)
    assert f"ALiBi {band('alibi', 256):.2f}" in printed.err

    argv = ["--view", "length", "--scheme", "rope", "--rope-scaling", "llama3", "--rope-factor"]
    assert main([*argv, "2", "--print-code"]) == 0
    script = capsys.readouterr().out
    for variant in ("'ntk-4'", "'yarn-4'", "'linear-4'", "'llama3-2'"):
        assert variant in script, variant
