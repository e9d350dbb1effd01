"""Watch a positional table learn: the book's GPT trained on *The Verdict* (issue 26).

* :mod:`posviz.training.model`: chapter 4's ``GPTModel`` and its parts (chapter 3's
  ``MultiHeadAttention``), and the positional table's two inits;
* :mod:`posviz.training.data`: the text, chapter 2's ``GPTDatasetV1`` and
  ``create_dataloader_v1``, the vocabulary of the text's own tokens;
* :mod:`posviz.training.config`: one run's settings, :func:`validate_training`;
* :mod:`posviz.training.train`: chapter 5's loop, keeping the positional table every few steps;
* :mod:`posviz.training.runs`: the run file (``.npz``, no pickle), the shipped runs and the
  cache's, found by name;
* :mod:`posviz.training.view`: the Training view's numbers at one step
  (:func:`build_training`);
* :mod:`posviz.training.codegen`: the script of *Show the code*;
* :mod:`posviz.training.command`: ``python -m posviz train``.

The figure is :func:`posviz.plots.training.training_chart`, the words
:mod:`posviz.lesson.training`. The app never trains: it reads runs.

>>> run = load_named_run("small-init")
>>> build_training(run, 1500).table.table.shape
torch.Size([64, 128])
"""

from posviz.training.codegen import training_script
from posviz.training.config import TrainingConfig, TrainingConfigError, validate_training
from posviz.training.runs import (
    RunError,
    TrainingRun,
    available_runs,
    find_run,
    load_named_run,
    load_run,
    save_run,
)
from posviz.training.train import train
from posviz.training.view import TrainingView, build_training

__all__ = [
    "RunError",
    "TrainingConfig",
    "TrainingConfigError",
    "TrainingRun",
    "TrainingView",
    "available_runs",
    "build_training",
    "find_run",
    "load_named_run",
    "load_run",
    "save_run",
    "train",
    "training_script",
    "validate_training",
]
