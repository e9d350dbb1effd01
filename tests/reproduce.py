"""Run reproduction scripts the way a reader would: a fresh interpreter, no posviz, offline.

tiktoken downloads GPT-2's files on first use; here a TIKTOKEN_CACHE_DIR holds posviz's vendored
copies under the names tiktoken's cache uses (sha1 of the download URL), and proxies point at a
closed port, so any download attempt fails at once.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
# tiktoken_ext/openai_public.py, gpt2(): the files tiktoken downloads.
GPT2_URLS = {
    "vocab.bpe": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
    "encoder.json": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
}
NAMES = ("token_embeddings", "pos_embeddings", "input_embeddings")
# Compare mode's tensors, and the Geometry and Distance parts' results, saved when a script
# defines them.
COMPARE_NAMES = ("context_first", "context_second", "positioned_first", "positioned_second")
SHAPE_NAMES = ("geometry", "cosines", "distance", "past_the_end", "gpt2_past_the_end")
# The Attention part's results (posviz.codegen.attention).
ATTENTION_NAMES = (
    "content_scores", "attn_scores", "attn_weights", "position_part", "scores_change",
    "weights_change", "shift_error",
)  # fmt: skip
RUNNER = textwrap.dedent(
    """
    import os, runpy, sys, torch
    for index, path in enumerate(sys.argv[1:]):
        names = runpy.run_path(path, run_name="__main__")
        batch = [names[k] for k in ("token_embeddings", "pos_embeddings", "input_embeddings")]
        window = names["window"]
        saved = {
            "inputs": names["inputs"],
            "batch": batch,
            "window": [batch[0][window], batch[1], batch[2][window]],
        }
        for name in (
            "context_first", "context_second", "positioned_first", "positioned_second",
            "geometry", "cosines", "distance", "past_the_end", "gpt2_past_the_end",
            "content_scores", "attn_scores", "attn_weights", "position_part",
            "scores_change", "weights_change", "shift_error",
        ):
            if name in names:
                saved[name] = names[name]
        torch.save(saved, os.path.join(os.environ["POSVIZ_OUT"], f"{index}.pt"))
    """
)


def offline_tiktoken_cache(folder: Path) -> Path:
    """A TIKTOKEN_CACHE_DIR holding posviz's vendored GPT-2 files under tiktoken's names."""
    folder.mkdir(parents=True)
    for name, url in GPT2_URLS.items():
        data = (ROOT / "posviz" / "data" / name).read_bytes()
        (folder / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
    return folder


def offline_env(workdir: Path, *, no_proxy: str = "") -> dict[str, str]:
    """The environment of a reader's interpreter: GPT-2's files in an offline tiktoken cache
    (made in ``workdir``), no network but ``no_proxy``'s hosts, no posviz on the path."""
    return {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(offline_tiktoken_cache(workdir / "tiktoken-cache")),
        "HTTPS_PROXY": "http://127.0.0.1:9",  # any download attempt fails at once
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": no_proxy,
        "PYTHONPATH": "",  # the scripts must not need posviz
    }


def run_beside_posviz(code: str, workdir: Path, *, timeout: float = 300) -> str:
    """Run ``code`` in a fresh interpreter in ``workdir`` where posviz can be found (as where
    it is installed), with an empty tiktoken cache and no network (proxies at a closed port:
    any download fails at once); its stdout (``AssertionError`` with stderr if it fails)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TIKTOKEN_CACHE_DIR": str(workdir / "empty-cache"),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "",
    }
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=workdir, env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def run_scripts(
    scripts: Sequence[str], workdir: Path, *, no_proxy: str = ""
) -> tuple[list[list[torch.Tensor]], str]:
    """Run each script in ONE fresh interpreter; return the three matrices of the window on
    screen (``[n, d]`` each) per script, and stdout. ``no_proxy``: hosts the scripts may
    reach (``127.0.0.1`` for a loopback Hub stand-in); everything else fails at once."""
    saved, stdout = run_scripts_saved(scripts, workdir, no_proxy=no_proxy)
    return [entry["window"] for entry in saved], stdout


def run_scripts_saved(
    scripts: Sequence[str], workdir: Path, *, no_proxy: str = ""
) -> tuple[list[dict[str, Any]], str]:
    """Run each script in ONE fresh interpreter; return what it computed, per script: the
    ``inputs`` batch, the ``batch`` tensors ``[token [B, n, d], pos [n, d], input [B, n, d]]``,
    the ``window`` matrices, compare mode's context vectors and the Geometry and Distance
    parts' results (:data:`SHAPE_NAMES`) if any; and stdout."""
    paths = []
    for index, script in enumerate(scripts):
        path = workdir / f"script_{index}.py"
        path.write_text(script, encoding="utf-8")
        paths.append(str(path))
    out = workdir / "out"
    out.mkdir()
    env = {**offline_env(workdir, no_proxy=no_proxy), "POSVIZ_OUT": str(out)}
    result = subprocess.run(
        [sys.executable, "-I", "-c", RUNNER, *paths],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    tensors = [torch.load(out / f"{index}.pt") for index in range(len(paths))]
    return tensors, result.stdout
