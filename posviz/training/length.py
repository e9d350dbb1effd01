"""Train short, test long (issue 41): the book's GPT with one positional scheme, trained at a
context L on a text and read at L, 2L and 4L.

One run trains :class:`~posviz.training.positional.SchemeGPTModel` as chapter 5 does (AdamW,
shuffled windows every token, ``torch.manual_seed`` then the model, dropout 0.1, one torch
thread), on the first 90 % of the text, then reads it without dropout on two texts: the last
10 % (held out: what the model never saw) and the start of the training part (what it learned:
can it still read it when the input is longer?). Each text is cut into windows of ``k·L``
tokens (k = 1, 2, 4), each predicting its next tokens, and the run keeps the mean loss at every
position, and each window's mean over the second half of its positions (the band that Press
et al. 2022 compare: positions L/2 … L−1, L … 2L−1, 2L … 4L−1), whose spread gives the band's
standard error. A learned table ends at L: reading 2L raises torch's ``IndexError``, which the
run keeps as words. RoPE is read again with each context extension of the scheme registry
(:data:`EXTENSIONS`), applied to the trained model without retraining.

The text is *Tiny Shakespeare* (``posviz/data/tinyshakespeare.txt``, public domain, see
``tinyshakespeare-source.txt``, checked by sha256), or *The Verdict*. Its vocabulary is the
text's own GPT-2 tokens (:class:`~posviz.training.data.TextVocabulary`: 11,706 for
Shakespeare), as the Training view's runs do.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib.resources import files
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import torch

from posviz.schemes import SCHEMES, SchemeName, scheme
from posviz.schemes._spec import OptionValue
from posviz.training.config import MAX_THREADS
from posviz.training.data import TextVocabulary, TrainingDataError, split_text, the_verdict
from posviz.training.model import GPTConfig, PositionInit, init_positions
from posviz.training.positional import SchemeGPTModel

TextName = Literal["shakespeare", "verdict"]
TEXTS: Final[tuple[TextName, ...]] = ("shakespeare", "verdict")
SHAKESPEARE_FILE: Final = "tinyshakespeare.txt"
SHAKESPEARE_SHA256: Final = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
SHAKESPEARE_URL: Final = (  # where tinyshakespeare-source.txt says it comes from
    "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
)
MULTIPLES: Final = (1, 2, 4)  # the lengths read: L, 2L, 4L
READINGS: Final = ("held-out", "training")
# RoPE's context extensions read without retraining: (scaling, s); L₀ is the trained L.
EXTENSIONS: Final[tuple[tuple[str, float], ...]] = tuple(
    (scaling, factor)
    for scaling in ("ntk", "yarn", "linear", "llama3", "dynamic")
    for factor in (2.0, 4.0)
)
EVAL_TOKENS: Final = 512  # tokens per forward pass when reading (the numbers do not change)

Progress = Callable[[int, int], None]  # (steps done, steps in all)


def text_named(name: TextName) -> str:
    """The text a run trains on, checked by sha256."""
    if name == "verdict":
        return the_verdict()
    data = files("posviz").joinpath("data", SHAKESPEARE_FILE).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHAKESPEARE_SHA256:
        raise TrainingDataError(
            f"posviz/data/{SHAKESPEARE_FILE} has sha256 {digest}, expected "
            f"{SHAKESPEARE_SHA256}: restore it from posviz's repository"
        )
    return data.decode("utf-8")


@dataclass(frozen=True)
class LengthConfig:
    """One length run's settings (the Training view's model, issue 41's measured setup)."""

    scheme: SchemeName
    init: PositionInit = "small"  # the learned table's init (GPT-2's N(0, 0.02²))
    text: TextName = "shakespeare"
    steps: int = 3000
    seed: int = 123
    context_length: int = 64
    emb_dim: int = 128
    n_heads: int = 4
    n_layers: int = 4
    drop_rate: float = 0.1
    learning_rate: float = 1e-3
    weight_decay: float = 0.1
    batch_size: int = 8
    train_ratio: float = 0.9
    read_tokens: int = 33_000  # tokens of each text read at every length
    # torch.set_num_threads: two, as this machine has, in 0.65 of one thread's time; one and two
    # threads agree within 2e-6 after a few steps (the same bits on the AMD EPYC the shipped runs
    # were checked on; tests/test_training_length.py holds them to 1e-5 on any CPU)
    threads: int = 2

    def model(self, vocab_size: int) -> GPTConfig:
        """The model's config, with the vocabulary of the text."""
        return GPTConfig(
            vocab_size=vocab_size,
            context_length=self.context_length,
            emb_dim=self.emb_dim,
            n_heads=self.n_heads,
            n_layers=self.n_layers,
            drop_rate=self.drop_rate,
            qkv_bias=False,
        )

    def check(self) -> LengthConfig:
        """``self``, or ``ValueError`` naming a value out of range and its range."""
        if self.scheme not in {spec.name for spec in SCHEMES}:
            raise ValueError(f"scheme must be one of {', '.join(s.name for s in SCHEMES)}")
        if not 1 <= self.steps <= 100_000:
            raise ValueError(f"steps must be a whole number from 1 to 100000, got {self.steps}")
        if not 2 <= self.context_length <= 1024:
            raise ValueError(
                f"context_length must be a whole number from 2 to 1024, got {self.context_length}"
            )
        if not 1 <= self.threads <= MAX_THREADS:
            raise ValueError(
                f"threads must be a whole number from 1 to {MAX_THREADS}, got {self.threads}"
            )
        if self.read_tokens < 4 * self.context_length + 1:
            raise ValueError(
                f"read_tokens must be at least 4 × context_length + 1 = "
                f"{4 * self.context_length + 1}, got {self.read_tokens}"
            )
        return self


@dataclass(frozen=True)
class Reading:
    """One reading of the trained model: a text at one length ``k·L``, with one variant."""

    text: str  # "held-out" or "training"
    length: int  # tokens per window
    variant: str  # "" (as trained) or an extension "yarn-4"
    position_loss: torch.Tensor  # [length] float64: mean loss at each position
    band_loss: torch.Tensor  # [windows] float64: each window's mean over its second half
    error: str = ""  # what torch raised instead (the learned table past its rows)

    @cached_property
    def band_stats(self) -> tuple[float, float]:
        """:func:`band_mean_and_error` of :attr:`band_loss`, computed once (a shipped reading
        is kept for the process's life, and every sentence of the Length view quotes it)."""
        return band_mean_and_error(self.band_loss)

    @property
    def band_mean(self) -> float:
        """The band's mean loss (NaN if it could not be read)."""
        return self.band_stats[0]

    @property
    def band_error(self) -> float:
        """The standard error of :attr:`band_mean` over the windows."""
        return self.band_stats[1]


def band_mean_and_error(band_loss: torch.Tensor) -> tuple[float, float]:
    """The mean of each window's band loss ``[windows]`` and its standard error over the
    windows (NaN where there are too few)."""
    n = band_loss.numel()
    mean = float(band_loss.mean()) if n else math.nan
    error = float(band_loss.std(unbiased=True) / math.sqrt(n)) if n > 1 else math.nan
    return mean, error


@dataclass(frozen=True, eq=False)
class LengthRun:
    """A trained run and its readings."""

    config: LengthConfig
    vocab_size: int
    batch_loss: torch.Tensor  # [steps] float32: each step's batch loss, before its update
    readings: tuple[Reading, ...]

    def reading(self, text: str, multiple: int, variant: str = "") -> Reading:
        """The reading of ``text`` at ``multiple``·L with ``variant`` (``KeyError`` if none)."""
        length = multiple * self.config.context_length
        for found in self.readings:
            if (found.text, found.length, found.variant) == (text, length, variant):
                return found
        raise KeyError((text, length, variant))


def extension_options(scaling: str, factor: float, context_length: int) -> dict[str, OptionValue]:
    """RoPE's options for the extension ``scaling`` by ``factor`` of a model trained at
    ``context_length`` (L₀ = L)."""
    return {"rope_scaling": scaling, "rope_factor": factor, "rope_original": context_length}


def variant_name(scaling: str, factor: float) -> str:
    """``yarn-4``: an extension's name in a run."""
    return f"{scaling}-{factor:g}"


def token_tensors(config: LengthConfig) -> tuple[TextVocabulary, torch.Tensor, torch.Tensor]:
    """The vocabulary, the training part's and the held-out part's token ids (int64)."""
    train_text, held_out = split_text(text_named(config.text), train_ratio=config.train_ratio)
    vocabulary = TextVocabulary.from_texts((train_text, held_out))
    return (
        vocabulary,
        torch.tensor(vocabulary.encode(train_text)),
        torch.tensor(vocabulary.encode(held_out)),
    )


def training_batches(
    token_ids: torch.Tensor, *, context_length: int, batch_size: int, seed: int
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Chapter 2's windows every token (stride 1), shuffled by a generator of their own
    (``seed``), in batches of ``batch_size`` (the last incomplete one dropped), epoch after
    epoch: ``(inputs [B, L], targets [B, L])``. Windows are cut when drawn, not stored."""
    windows = len(token_ids) - context_length  # starts 0 … len − L − 1, as GPTDatasetV1
    generator = torch.Generator().manual_seed(seed)
    offsets = torch.arange(context_length + 1)
    while True:
        order = torch.randperm(windows, generator=generator)
        for first in range(0, windows - batch_size + 1, batch_size):
            rows = token_ids[order[first : first + batch_size, None] + offsets]  # [B, L + 1]
            yield rows[:, :-1], rows[:, 1:]


def read_model(
    model: SchemeGPTModel, token_ids: torch.Tensor, length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Every whole window of ``length`` tokens (and its next tokens) of ``token_ids``, read in
    ``model.eval()``: the mean loss at each position ``[length]`` and each window's mean over
    positions ``length/2 … length−1`` ``[windows]``, float64."""
    windows = (len(token_ids) - 1) // length
    rows = token_ids[: windows * length + 1]
    inputs = rows[:-1].view(windows, length)
    targets = rows[1:].view(windows, length)
    batch = max(1, EVAL_TOKENS // length)  # windows per forward pass
    losses = []
    model.eval()
    with torch.no_grad():
        for first in range(0, windows, batch):
            logits = model(inputs[first : first + batch])  # [b, length, V]
            log_probs = torch.log_softmax(logits, dim=-1)  # cross_entropy's, per token
            chosen = targets[first : first + batch, :, None]  # [b, length, 1]
            loss = -log_probs.gather(-1, chosen)[..., 0]  # [b, length]
            losses.append(loss.view(-1, length).double())
    per_window = torch.cat(losses)  # [windows, length]
    return per_window.mean(dim=0), per_window[:, length // 2 :].mean(dim=1)


def _readings(
    model: SchemeGPTModel,
    config: LengthConfig,
    texts: Sequence[tuple[str, torch.Tensor]],
    said: Callable[[str], None] | None,
) -> list[Reading]:
    found = []
    variants: list[tuple[str, dict[str, OptionValue]]] = [("", {})]
    if scheme(config.scheme).rotation is not None:
        variants += [
            (
                variant_name(scaling, factor),
                extension_options(scaling, factor, config.context_length),
            )
            for scaling, factor in EXTENSIONS
        ]
    plain = dict(model.options)
    for number, (variant, options) in enumerate(variants, start=1):
        if said is not None:
            said(f"reading {variant or 'as trained'} ({number} of {len(variants)})")
        model.use_options(**{**plain, **options})
        for text, token_ids in texts:
            for multiple in MULTIPLES:
                length = multiple * config.context_length
                try:
                    position_loss, band_loss = read_model(model, token_ids, length)
                except IndexError as error:  # the learned table past its last row
                    found.append(
                        Reading(text, length, variant, _empty(), _empty(), f"IndexError: {error}")
                    )
                    continue
                found.append(Reading(text, length, variant, position_loss, band_loss))
    model.use_options(**plain)
    return found


def train_length(
    config: LengthConfig,
    *,
    progress: Progress | None = None,
    said: Callable[[str], None] | None = None,
) -> LengthRun:
    """Train and read one length run (the caller's torch threads and global random state are
    as before when it returns). ``progress(done, total)`` after every step; ``said(words)``
    before each reading."""
    config.check()
    threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        with torch.random.fork_rng(devices=[]):
            return _train(config, progress, said)
    finally:
        torch.set_num_threads(threads)


def _train(
    config: LengthConfig, progress: Progress | None, said: Callable[[str], None] | None
) -> LengthRun:
    vocabulary, train_ids, held_out_ids = token_tensors(config)
    torch.manual_seed(config.seed)
    model = SchemeGPTModel(config.model(vocabulary.vocab_size), scheme(config.scheme))
    if scheme(config.scheme).learned:
        init_positions(model, config.init)
    batch_losses = train_steps(
        model,
        train_ids,
        steps=config.steps,
        context_length=config.context_length,
        batch_size=config.batch_size,
        seed=config.seed,
        learning_rate=config.learning_rate,
        weight_decay=config.weight_decay,
        progress=progress,
    )
    read = config.read_tokens + 1
    texts = (("held-out", held_out_ids[:read]), ("training", train_ids[:read]))
    return LengthRun(
        config=config,
        vocab_size=vocabulary.vocab_size,
        batch_loss=torch.tensor(batch_losses, dtype=torch.float32),
        readings=tuple(_readings(model, config, texts, said)),
    )


def train_steps(
    model: SchemeGPTModel,
    token_ids: torch.Tensor,
    *,
    steps: int,
    context_length: int,
    batch_size: int,
    seed: int,
    learning_rate: float,
    weight_decay: float,
    progress: Progress | None = None,
) -> list[float]:
    """Chapter 5's loop: AdamW on the parameters that learn, ``steps`` batches of
    :func:`training_batches` of ``token_ids``, each step's batch loss (before its update);
    ``progress(done, steps)`` after every step."""
    optimizer = torch.optim.AdamW(
        (p for p in model.parameters() if p.requires_grad),
        lr=learning_rate,
        weight_decay=weight_decay,
    )
    batches = training_batches(
        token_ids, context_length=context_length, batch_size=batch_size, seed=seed
    )
    batch_losses = []
    model.train()
    for step in range(1, steps + 1):
        inputs, targets = next(batches)
        logits = model(inputs)  # [B, L, V]
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        batch_losses.append(loss.item())
        if progress is not None:
            progress(step, steps)
    return batch_losses


def with_steps(config: LengthConfig, steps: int) -> LengthConfig:
    """``config`` trained for ``steps`` instead (the test retrains the first few hundred)."""
    return dataclasses.replace(config, steps=steps)


# --- the run file: a .npz of plain arrays and a JSON header, the same bytes for the same run --

FORMAT: Final = "posviz-length-run"
VERSION: Final = 1
_ZIP_DATE: Final = (1980, 1, 1, 0, 0, 0)


class LengthRunError(ValueError):
    """A length run file that cannot be read; the message names the file and what is wrong."""


def _key(reading: Reading, part: str) -> str:
    return f"{reading.text}/{reading.length}/{reading.variant or 'as-trained'}/{part}"


def run_bytes(run: LengthRun) -> bytes:
    """The run as ``.npz`` bytes: ``metadata`` (UTF-8 JSON: the config, the vocabulary size,
    each reading's place and error), ``batch_loss`` float32 ``[steps]``, and per reading its
    ``position`` ``[length]`` and ``band`` ``[windows]`` losses (float32)."""
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "config": dataclasses.asdict(run.config),
        "vocab_size": run.vocab_size,
        "torch": torch.__version__,
        "readings": [
            {"text": r.text, "length": r.length, "variant": r.variant, "error": r.error}
            for r in run.readings
        ],
    }
    arrays: dict[str, np.ndarray] = {
        "metadata": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8),
        "batch_loss": run.batch_loss.numpy().astype(np.float32),
    }
    for reading in run.readings:
        arrays[_key(reading, "position")] = reading.position_loss.numpy().astype(np.float32)
        arrays[_key(reading, "band")] = reading.band_loss.numpy().astype(np.float32)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            entry = io.BytesIO()
            np.save(entry, array, allow_pickle=False)
            archive.writestr(info, entry.getvalue())
    return buffer.getvalue()


def save_length_run(run: LengthRun, path: Path) -> int:
    """Write ``run`` to ``path``; the bytes written (``OSError`` as it comes)."""
    data = run_bytes(run)
    path.write_bytes(data)
    return len(data)


def load_length_run(path: Path) -> LengthRun:
    """Read the length run at ``path`` (:class:`LengthRunError` naming what is wrong)."""
    try:
        with np.load(io.BytesIO(path.read_bytes()), allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
        meta: dict[str, Any] = json.loads(arrays["metadata"].tobytes().decode())
        if meta.get("format") != FORMAT or meta.get("version") != VERSION:
            raise LengthRunError(f"{path}: not a {FORMAT} version {VERSION} file")
        config = LengthConfig(**meta["config"]).check()
        readings = []
        for entry in meta["readings"]:
            blank = Reading(entry["text"], entry["length"], entry["variant"], _empty(), _empty())
            readings.append(
                dataclasses.replace(
                    blank,
                    position_loss=torch.from_numpy(arrays[_key(blank, "position")]).double(),
                    band_loss=torch.from_numpy(arrays[_key(blank, "band")]).double(),
                    error=entry["error"],
                )
            )
        return LengthRun(
            config=config,
            vocab_size=int(meta["vocab_size"]),
            batch_loss=torch.from_numpy(arrays["batch_loss"]),
            readings=tuple(readings),
        )
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as error:
        if isinstance(error, LengthRunError):
            raise
        raise LengthRunError(f"{path} is not a posviz length run: {error}") from None


def _empty() -> torch.Tensor:
    return torch.empty(0, dtype=torch.float64)


def shipped_length_runs() -> dict[SchemeName, LengthRun]:
    """The shipped runs (``posviz/data/length/<scheme>.npz``), by scheme."""
    folder = files("posviz").joinpath("data", "length")
    found: dict[SchemeName, LengthRun] = {}
    for spec in SCHEMES:
        entry = folder.joinpath(f"{spec.name}.npz")
        if entry.is_file():
            found[spec.name] = load_length_run(Path(str(entry)))
    return found
