"""The notebook path: docs/section_2_8.ipynb runs top to bottom in a fresh Jupyter kernel
(nbclient + ipykernel, in this interpreter) and draws every figure it promises.

Cells tagged ``figure`` must display a Plotly figure (its ``application/vnd.plotly.v1+json``
output); the notebook's own ``assert`` lines check the book's shapes and the lesson's facts,
so any error, in any cell, fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "section_2_8.ipynb"
PLOTLY = "application/vnd.plotly.v1+json"


def test_the_notebook_runs_and_draws_every_figure(tmp_path: Path) -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(cell.get("outputs") for cell in notebook.cells), "commit it without outputs"
    # The kernel starts in the repository's root, as Jupyter started there would, so that
    # `import posviz` finds the working tree (an installed posviz is found from anywhere).
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    figures = [cell for cell in notebook.cells if "figure" in cell.metadata.get("tags", [])]
    assert len(figures) >= 6
    for cell in figures:
        shown = [output for output in cell.outputs if PLOTLY in output.get("data", {})]
        assert shown, f"no figure drawn by: {cell.source}"
        figure = shown[0]["data"][PLOTLY]
        if isinstance(figure, str):
            figure = json.loads(figure)
        assert figure["data"], f"an empty figure from: {cell.source}"
    printed = "".join(
        output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", [])
    )
    assert "inputs: (8, 4)" in printed
    assert "' rose' at positions [1, 4, 7]: token rows equal: True, input rows equal: False" in (
        printed
    )
