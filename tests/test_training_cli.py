"""The Training view from the command line, ``posviz train``, and the training script of
*Show the code*, run in a fresh interpreter without posviz (issue 26)."""

from __future__ import annotations

import ast
import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import reference
import torch
from reproduce import offline_tiktoken_cache, run_beside_posviz

from posviz.cli import main
from posviz.lesson.training import sentences
from posviz.training.codegen import training_script
from posviz.training.command import progress_bar
from posviz.training.runs import load_named_run, load_run
from posviz.training.view import build_training

ROOT = Path(__file__).resolve().parent.parent


def test_the_view_writes_the_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decode_array: Callable[[object], np.ndarray]
) -> None:
    out = tmp_path / "fig.json"
    assert (
        main(["--view", "training", "--run", "small-init", "--step", "1500", "--out", str(out)])
        == 0
    )
    figure = json.loads(out.read_text(encoding="utf-8"))
    (table,) = [t for t in figure["data"] if t.get("name") == "positional table, step 1,500"]
    with np.load(ROOT / "posviz/data/runs/small-init.npz", allow_pickle=False) as archive:
        assert np.array_equal(decode_array(table["z"]), archive["pos_embeddings"][-1])
    assert "wrote" in capsys.readouterr().err
    assert "scatter3d" not in {t["type"] for t in figure["data"]}  # PC 1 against PC 2
    arguments = ["--view", "training", "--step", "1500", "--components", "3d", "--out", str(out)]
    assert main(arguments) == 0
    figure = json.loads(out.read_text(encoding="utf-8"))
    assert [t["type"] for t in figure["data"]].count("scatter3d") == 1


def test_the_view_prints_its_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--view", "training", "--run", "default-init", "--step", "600", "--lesson"]) == 0
    view = build_training(load_named_run("default-init"), 600)
    assert capsys.readouterr().out == "".join(f"{line}\n" for line in sentences(view))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--view", "training", "--run", "nothing", "--lesson"],
         "no training run named 'nothing': the runs are book-settings, default-init, small-init"),
        (["--view", "training", "--step", "601", "--lesson"],
         "no snapshot at step 601: it kept 0, 50, …, 1500 (31 steps)"),
        (["--run", "small-init", "--lesson"],
         "--run, --step and --components are for --view training"),
        (["--components", "3d", "--lesson"],
         "--run, --step and --components are for --view training"),
        (["--view", "training", "--csv", "m.csv"], "--view training draws a figure"),
    ],
    ids=["unknown-run", "step-not-kept", "run-without-view", "components-without-view", "csv"],
)  # fmt: skip
def test_bad_training_options_say_what_to_do(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(arguments)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_a_run_made_into_the_cache_is_found_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("POSVIZ_CACHE_DIR", str(tmp_path))
    (tmp_path / "runs").mkdir()
    shutil.copy(ROOT / "posviz/data/runs/book-settings.npz", tmp_path / "runs" / "mine.npz")
    assert main(["--view", "training", "--run", "mine", "--step", "50", "--lesson"]) == 0
    assert "After 50 steps" in capsys.readouterr().out


@pytest.mark.slow
def test_posviz_train_writes_the_shipped_runs_first_steps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs" / "two.npz"
    assert main(["train", "--init", "small", "--steps", "2", "--snapshot-every", "1",
                 "--out", str(out)]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "2/2 steps 100%" in err and "wall time:" in err and f"wrote {out}" in err
    run, shipped = load_run(out), load_named_run("small-init")
    assert run.steps == (0, 1, 2)
    torch.testing.assert_close(run.table(0), shipped.table(0), rtol=0, atol=0)
    torch.testing.assert_close(run.batch_loss, shipped.batch_loss[:2], rtol=0, atol=1e-5)
    with pytest.raises(SystemExit):
        main(["train", "--init", "small", "--out", str(tmp_path / "run.txt")])
    assert "--out must end in .npz" in capsys.readouterr().err


# --- Show the code ------------------------------------------------------------------------------

ALLOWED_IMPORTS = {"os", "urllib.request", "collections.abc", "dataclasses", "typing",
                   "importlib.util", "tiktoken", "tiktoken.load", "tiktoken_ext.openai_public",
                   "torch", "torch.utils.data", "__future__"}  # fmt: skip


def test_the_script_needs_only_torch_and_tiktoken() -> None:
    script = training_script(load_named_run("small-init").config, step=600, name="small-init")
    tree = ast.parse(script)
    imported = {
        alias.name if isinstance(node, ast.Import) else (node.module or "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported <= ALLOWED_IMPORTS
    assert "posviz." not in script and "import posviz" not in script  # prose names it only
    classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    assert {"GPTModel", "TransformerBlock", "MultiHeadAttention", "LayerNorm", "GELU",
            "FeedForward", "GPTDatasetV1"} <= classes  # fmt: skip
    assert "Apache License 2.0" in script and "steps = 600" in script
    with pytest.raises(ValueError, match="step must be a whole number from 0 to 1500"):
        training_script(load_named_run("small-init").config, step=1501)


RUNNER = textwrap.dedent(
    """
    import os, runpy, torch
    names = runpy.run_path("script.py", run_name="__main__")
    saved = {k: names[k] for k in ("pos_embeddings", "start_table", "batch_losses")}
    saved["losses"] = [names["train_loss"], names["val_loss"], *names["start_losses"]]
    torch.save(saved, os.path.join(os.environ["POSVIZ_OUT"], "saved.pt"))
    """
)


@pytest.mark.slow
def test_a_short_run_of_the_script_reproduces_the_run(tmp_path: Path) -> None:
    """The script for step 50, run in a fresh, offline interpreter without posviz: the run's
    snapshots and losses, and the numbers of the view's sentences."""
    run = load_named_run("small-init")
    (tmp_path / "script.py").write_text(training_script(run.config, step=50, name=run.name))
    shutil.copy(reference.VERDICT, tmp_path / "the-verdict.txt")
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(offline_tiktoken_cache(tmp_path / "tiktoken")),
        "POSVIZ_OUT": str(tmp_path),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "PYTHONPATH": "",
    }
    result = subprocess.run(
        [sys.executable, "-I", "-c", RUNNER], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    saved = torch.load(tmp_path / "saved.pt")
    torch.testing.assert_close(saved["start_table"], run.table(0), rtol=0, atol=0)
    torch.testing.assert_close(saved["pos_embeddings"], run.table(50), rtol=0, atol=1e-5)
    got = torch.tensor(saved["batch_losses"], dtype=torch.float32)
    torch.testing.assert_close(got, run.batch_loss[:50], rtol=0, atol=1e-5)
    train_loss, val_loss, start_train, start_val = saved["losses"]
    index = run.index(50)
    wanted = (run.train_loss[index], run.val_loss[index], run.train_loss[0], run.val_loss[0])
    for value, want in zip((train_loss, val_loss, start_train, start_val), wanted, strict=True):
        assert abs(value - float(want)) < 1e-5
    view = build_training(run, 50)
    printed = result.stdout.splitlines()
    assert printed[0] == sentences(view)[0]  # "After 50 steps neighbouring positions ..."
    assert f"validation loss {view.losses.val:.2f}" in printed[1]
    assert f"moved {view.movement.mean_moved:.3f} on average" in printed[2]


def test_the_progress_bar_estimates_from_the_steps_pace_not_the_start() -> None:
    """Issue 42: the first estimate said 18 minutes for a 77-second run, the time to the first
    step (building the model, the first evaluation) multiplied by every step left. Here the
    first step ends 30 s after the start and each later one takes 0.05 s: 1,500 steps take
    about 105 s. No line claims a time left until steps were timed; each later one is the
    steps' pace (0.05 s × steps left, to the second)."""
    now = [0.0]
    log = io.StringIO()  # not a terminal: a line every 10 %
    show = progress_bar(log, started=0.0, clock=lambda: now[0])
    now[0] = 30.0
    for done in range(1, 1501):
        show(done, 1500)
        now[0] += 0.05
    lines = log.getvalue().splitlines()
    assert len(lines) == 11  # 0 %, 10 %, ..., 100 %
    assert lines[0].endswith("30s elapsed, timing the first steps"), lines[0]
    for line in lines[1:]:
        done = int(line.split("] ")[1].split("/")[0].replace(",", ""))
        shown = re.fullmatch(r".* elapsed, (?:(\d+)m)?(\d+)s left", line)
        assert shown is not None, line
        seconds = int(shown[1] or 0) * 60 + int(shown[2])
        assert abs(seconds - 0.05 * (1500 - done)) <= 1, line


def test_the_script_reads_the_tokenizer_files_posviz_ships(tmp_path: Path) -> None:
    """Issue 42: the training script fetched GPT-2's tokenizer from the network although
    posviz ships its files. Where posviz can be found, the script for step 0 builds it from
    posviz/data with an empty tiktoken cache and no network, and never imports posviz."""
    run = load_named_run("small-init")
    (tmp_path / "script.py").write_text(training_script(run.config, step=0, name=run.name))
    shutil.copy(reference.VERDICT, tmp_path / "the-verdict.txt")
    runner = (
        "import runpy, sys; names = runpy.run_path('script.py');"
        "print(len(names['vocabulary'].gpt2_ids), 'posviz' in sys.modules)"
    )
    printed = run_beside_posviz(runner, tmp_path, timeout=600)
    text = reference.VERDICT.read_text(encoding="utf-8")
    split = int(run.config.train_ratio * len(text))  # the script's training and validation text
    vocabulary = {*reference.token_ids(text[:split]), *reference.token_ids(text[split:])}
    assert printed.splitlines()[-1] == f"{len(vocabulary)} False"
