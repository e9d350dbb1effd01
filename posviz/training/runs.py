"""The run file: what one training run kept, written and read without pickle.

A run is a ``.npz`` file (a zip of ``.npy`` arrays, read with ``allow_pickle=False``)::

    metadata        uint8 [m]       UTF-8 JSON: format, version, config, data sizes, torch, CPU
    steps           int64 [S]       the snapshot steps: 0, every snapshot_every, the last
    pos_embeddings  float32 [S, T, d]  the positional table (pos_emb.weight) at each of them
    train_loss      float64 [S]     mean loss over the training text's windows cut T apart
    val_loss        float64 [S]     the same over the validation text (model.eval())
    batch_loss      float32 [N]     the loss of step n's batch, before its update (n = 1 … N)

Only the positional table is kept (the token table and the blocks are not needed to show
it): three shipped runs of 1,500 steps with a table every 50 are about 1 MB each, and every
number the Training view shows is computed from these arrays. The zip's entries carry a fixed
date, so the same run gives the same bytes: the shipped files are exactly what
``python -m posviz train`` writes for their settings.

Runs are found by name (the file's stem): the shipped ones in ``posviz/data/runs/``, then
those in the cache folder's ``runs/`` (``POSVIZ_CACHE_DIR``, see
:func:`~posviz.gpt2.store.default_cache_dir`), where ``python -m posviz train --out`` may
write them; a cache run with a shipped run's name is not listed. Names come from links, so
they are only ever looked up among the files there, never joined into a path.

>>> run = load_named_run("small-init")
>>> run.name, run.steps[:3], run.steps[-1], tuple(run.pos_embeddings.shape)
('small-init', (0, 50, 100), 1500, (31, 64, 128))
>>> sorted(available_runs(cache_dir=None))
['book-settings', 'default-init', 'small-init']
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import platform
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

import numpy as np
import torch

from posviz.gpt2.store import default_cache_dir
from posviz.training.config import TrainingConfig, TrainingConfigError, validate_training

FORMAT: Final = "posviz-training-run"
VERSION: Final = 1
RUN_SUFFIX: Final = ".npz"
MAX_RUN_BYTES: Final = 256 * 1024 * 1024  # a run file larger than this is not read
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_ZIP_DATE: Final = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest date: the same bytes
ARRAYS: Final = ("metadata", "steps", "pos_embeddings", "train_loss", "val_loss", "batch_loss")


class RunError(ValueError):
    """A run that cannot be found or read; the message names the file or the runs there are."""


@dataclass(frozen=True)
class DataSizes:
    """What the run's loaders held: tokens and windows of the two texts, and the vocabulary."""

    vocab_size: int  # V: the text's distinct GPT-2 tokens
    train_tokens: int
    val_tokens: int
    train_windows: int  # windows the training loader cuts (every `stride` tokens)
    train_eval_windows: int  # windows cut context_length apart: what train_loss averages
    val_windows: int  # ... and val_loss


@dataclass(frozen=True, eq=False)
class TrainingRun:
    """One run: its settings, the steps it kept, the positional tables and the losses."""

    name: str  # the file's stem ("" for a run not saved yet)
    config: TrainingConfig
    steps: tuple[int, ...]  # [S] snapshot steps, increasing, from 0
    pos_embeddings: torch.Tensor = field(repr=False)  # [S, T, d] float32
    train_loss: torch.Tensor = field(repr=False)  # [S] float64
    val_loss: torch.Tensor = field(repr=False)  # [S] float64
    batch_loss: torch.Tensor = field(repr=False)  # [N] float32: step n's batch at n - 1
    data: DataSizes
    torch_version: str  # the torch that trained it
    cpu: str  # cpu_capability() there (kernels and vendor): same torch, CPU, threads: same bits

    @property
    def same_machine(self) -> bool:
        """Whether this process has the torch and CPU kind that trained the run: training it
        again with its settings gives the same bits."""
        return (self.torch_version, self.cpu) == (torch.__version__, cpu_capability())

    @cached_property
    def digest(self) -> str:
        """sha256 of the run's file bytes: what every number computed from it depends on
        (the key of what a caller keeps per run)."""
        return hashlib.sha256(run_bytes(self)).hexdigest()

    def index(self, step: int) -> int:
        """The snapshot index of ``step`` (:class:`RunError` for a step the run did not
        keep, naming those it did)."""
        try:
            return self.steps.index(step)
        except ValueError:
            raise RunError(
                f"run {self.name or '(unsaved)'} has no snapshot at step {step!r}: it kept "
                f"{_listing(self.steps)}"
            ) from None

    def nearest_step(self, step: int) -> int:
        """The kept step closest to ``step`` (the earlier one on a tie), for a link's value.

        >>> run = load_named_run("small-init")
        >>> run.nearest_step(620), run.nearest_step(-5), run.nearest_step(10**6)
        (600, 0, 1500)
        """
        return min(self.steps, key=lambda kept: (abs(kept - step), kept))

    def table(self, step: int) -> torch.Tensor:
        """The positional table ``[T, d]`` at ``step`` (a kept step)."""
        return self.pos_embeddings[self.index(step)]


def cpu_capability() -> str:
    """The CPU kernels torch picks here (``"AVX2"``, ``"AVX512"``, ``"DEFAULT"``...) and the
    CPU's vendor (``"AVX512 GenuineIntel"``): the same kernels on an Intel and an AMD CPU take
    other paths through the maths library and round differently (seen, both ``AVX512``: the
    tables 8e-8 apart after 50 steps)."""
    return f"{torch.backends.cpu.get_cpu_capability()} {_cpu_vendor()}"


def _cpu_vendor() -> str:
    """``vendor_id`` of ``/proc/cpuinfo`` (``GenuineIntel``, ``AuthenticAMD``), else the
    machine's architecture (``arm64``...) where there is no such line."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() == "vendor_id" and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.machine() or "unknown"


def _listing(steps: tuple[int, ...]) -> str:
    """``0, 50, …, 1500`` (every step when there are few)."""
    if len(steps) <= 6:
        return ", ".join(str(s) for s in steps)
    return f"{steps[0]}, {steps[1]}, …, {steps[-1]} ({len(steps)} steps)"


def _metadata(run: TrainingRun) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "config": dataclasses.asdict(run.config),
        "data": dataclasses.asdict(run.data),
        "torch": run.torch_version,
        "cpu": run.cpu,
        "command": ["posviz", "train", *run.config.arguments()],
    }


def run_bytes(run: TrainingRun) -> bytes:
    """The run file's bytes: the same run, the same bytes (fixed dates, sorted JSON)."""
    meta = json.dumps(_metadata(run), sort_keys=True, separators=(",", ":")).encode("utf-8")
    arrays: dict[str, np.ndarray] = {
        "metadata": np.frombuffer(meta, dtype=np.uint8),
        "steps": np.asarray(run.steps, dtype=np.int64),
        "pos_embeddings": run.pos_embeddings.numpy().astype(np.float32, copy=False),
        "train_loss": run.train_loss.numpy().astype(np.float64, copy=False),
        "val_loss": run.val_loss.numpy().astype(np.float64, copy=False),
        "batch_loss": run.batch_loss.numpy().astype(np.float32, copy=False),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in ARRAYS:
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w") as entry:
                np.lib.format.write_array(entry, arrays[name], allow_pickle=False)
    return buffer.getvalue()


def save_run(run: TrainingRun, path: Path) -> int:
    """Write ``run`` to ``path`` (a ``.npz``); the bytes written. ``OSError`` as it comes."""
    if path.suffix != RUN_SUFFIX:
        raise RunError(f"a run file ends in {RUN_SUFFIX}, got {str(path)!r}: name it NAME.npz")
    data = run_bytes(run)
    path.write_bytes(data)
    return len(data)


def load_run(path: Path, *, name: str | None = None) -> TrainingRun:
    """Read and check the run file at ``path`` (named ``name``, default its stem)."""
    try:
        size = path.stat().st_size
        if size > MAX_RUN_BYTES:
            raise RunError(f"{path} is {size:,} bytes, more than a run file can be")
        data = path.read_bytes()
    except OSError as error:
        raise RunError(f"cannot read the run file {path}: {error.strerror or error}") from error
    try:
        return _parse(data, path.stem if name is None else name)
    except RunError as error:
        raise RunError(f"{path} is not a posviz training run: {error}") from None


def _parse(data: bytes, name: str) -> TrainingRun:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            if sorted(archive.files) != sorted(ARRAYS):
                raise RunError(f"it holds {sorted(archive.files)}, expected {sorted(ARRAYS)}")
            arrays = {key: archive[key] for key in ARRAYS}
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        if isinstance(error, RunError):
            raise
        raise RunError(f"cannot read its arrays ({error})") from None
    meta = _read_metadata(arrays["metadata"])
    config = _read_config(meta.get("config"))
    steps = tuple(int(s) for s in _checked(arrays["steps"], np.int64, 1))
    if steps != config.snapshot_steps:
        raise RunError(f"its steps {_listing(steps)} are not its config's snapshot steps")
    count, rows, emb_dim = len(steps), config.context_length, config.emb_dim
    tables = _checked(arrays["pos_embeddings"], np.float32, 3, (count, rows, emb_dim))
    train_loss = _checked(arrays["train_loss"], np.float64, 1, (count,))
    val_loss = _checked(arrays["val_loss"], np.float64, 1, (count,))
    batch_loss = _checked(arrays["batch_loss"], np.float32, 1, (config.steps,))
    return TrainingRun(
        name=name,
        config=config,
        steps=steps,
        pos_embeddings=torch.from_numpy(tables),
        train_loss=torch.from_numpy(train_loss),
        val_loss=torch.from_numpy(val_loss),
        batch_loss=torch.from_numpy(batch_loss),
        data=_read_sizes(meta.get("data")),
        torch_version=str(meta.get("torch", "")),
        cpu=str(meta.get("cpu", "")),
    )


def _read_metadata(raw: np.ndarray) -> dict[str, Any]:
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise RunError("its metadata is not UTF-8 JSON bytes")
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RunError(f"its metadata is not JSON ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise RunError(f"its metadata does not say format {FORMAT!r}")
    if meta.get("version") != VERSION:
        raise RunError(
            f"it is version {meta.get('version')!r} of the format; this posviz reads version "
            f"{VERSION}: train it again with this posviz"
        )
    return meta


def _read_config(raw: object) -> TrainingConfig:
    names = {f.name for f in dataclasses.fields(TrainingConfig)}
    if not isinstance(raw, dict) or set(raw) != names:
        raise RunError(f"its config does not have the settings {sorted(names)}")
    try:
        return validate_training(TrainingConfig(**raw))
    except TrainingConfigError as error:
        raise RunError(f"its config is out of range: {error}") from None


def _read_sizes(raw: object) -> DataSizes:
    names = [f.name for f in dataclasses.fields(DataSizes)]
    if not isinstance(raw, dict) or set(raw) != set(names):
        raise RunError(f"its data sizes are not {names}")
    values = [raw[n] for n in names]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise RunError(f"its data sizes {raw} are not whole numbers")
    return DataSizes(*values)


def _checked(
    array: np.ndarray, dtype: type, ndim: int, shape: tuple[int, ...] | None = None
) -> np.ndarray:
    """``array`` if it has ``dtype``, ``ndim`` dimensions, ``shape`` and finite values."""
    if array.dtype != dtype or array.ndim != ndim or (shape is not None and array.shape != shape):
        want = f"{np.dtype(dtype).name} {list(shape) if shape else f'{ndim}-D'}"
        raise RunError(f"an array is {array.dtype.name} {list(array.shape)}, expected {want}")
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise RunError("an array holds values that are not finite")
    return array


def shipped_runs_dir() -> Path:
    """``posviz/data/runs``: the runs that ship with posviz."""
    return Path(str(files("posviz").joinpath("data", "runs")))


def cache_runs_dir() -> Path:
    """``runs/`` in posviz's cache folder: where ``posviz train --out`` may put a run."""
    return default_cache_dir() / "runs"


def valid_name(name: str) -> bool:
    """Whether ``name`` can be a run's name: letters, digits, ``.``, ``_``, ``-``, at most 64.

    >>> valid_name("small-init"), valid_name("../etc/passwd"), valid_name("")
    (True, False, False)
    """
    return _NAME.fullmatch(name) is not None


def _runs_in(folder: Path) -> dict[str, Path]:
    try:
        found = sorted(folder.glob(f"*{RUN_SUFFIX}"))
    except OSError:
        return {}
    return {path.stem: path for path in found if valid_name(path.stem) and path.is_file()}


def available_runs(*, cache_dir: Path | bool | None = True) -> dict[str, Path]:
    """Run name -> file: the shipped runs, then the cache's (``cache_dir``: the folder to
    read, ``True`` for :func:`cache_runs_dir`, ``None`` for none). A cache run with a shipped
    run's name is left out."""
    runs = _runs_in(shipped_runs_dir())
    folder = cache_runs_dir() if cache_dir is True else cache_dir
    if isinstance(folder, Path):
        for name, path in _runs_in(folder).items():
            runs.setdefault(name, path)
    return runs


def find_run(name: str, runs: Mapping[str, Path] | None = None) -> Path:
    """The file of the run called ``name`` among ``runs`` (default :func:`available_runs`);
    :class:`RunError` naming the runs there are."""
    listed = available_runs() if runs is None else runs
    path = listed.get(name) if isinstance(name, str) else None
    if path is None:
        shown = repr(name) if isinstance(name, str) and valid_name(name) else "like that"
        raise RunError(
            f"no training run named {shown}: the runs are {', '.join(sorted(listed))} "
            f"(shipped, and any in {cache_runs_dir()}); make one with `python -m posviz train "
            f"--init small --out {cache_runs_dir() / 'NAME.npz'}`"
        )
    return path


def load_named_run(name: str, runs: Mapping[str, Path] | None = None) -> TrainingRun:
    """:func:`load_run` of :func:`find_run`."""
    return load_run(find_run(name, runs), name=name)
