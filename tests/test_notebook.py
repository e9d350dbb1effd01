"""The notebook path: docs/section_2_8.ipynb runs top to bottom in a fresh Jupyter kernel
(nbclient + ipykernel, in this interpreter) and draws every figure it promises.

Cells tagged ``figure`` must display a Plotly figure (its ``application/vnd.plotly.v1+json``
output); the notebook's own ``assert`` lines check the book's shapes and the lesson's facts,
so any error, in any cell, fails the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
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


# A Jupyter kernel without ipywidgets, as tqdm.autonotebook recognises one (tqdm 4.x): the
# kernel's shell module is loaded and ipywidgets cannot be imported.
_KERNEL_WITHOUT_IPYWIDGETS = """
import sys, types, warnings
ipython = types.ModuleType("IPython")
ipython.get_ipython = lambda: types.SimpleNamespace()
sys.modules["IPython"] = ipython
sys.modules["ipykernel.zmqshell"] = types.ModuleType("ipykernel.zmqshell")
sys.modules["ipywidgets"] = None
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import posviz, posviz.notebook, posviz.gpt2.store
print([str(w.message) for w in caught])
print("tqdm.auto" in sys.modules)
"""


def test_importing_posviz_in_a_kernel_without_ipywidgets_warns_nothing() -> None:
    """Issue 42: ``import posviz`` in Jupyter printed "TqdmWarning: IProgress not found"
    (huggingface_hub.utils imports tqdm.auto); posviz imports that part when it downloads."""
    result = subprocess.run(
        [sys.executable, "-c", _KERNEL_WITHOUT_IPYWIDGETS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    warned, auto = result.stdout.splitlines()[-2:]
    assert "IProgress" not in warned, warned
    assert auto == "False"
