"""The training loop: chapter 5's ``train_model_simple`` over *The Verdict*, keeping the
positional table every few steps.

What the book does (chapter 5, after Sebastian Raschka's *Build a Large Language Model (From
Scratch)*, Apache License 2.0, see :mod:`posviz.training.model`): ``torch.manual_seed(123)``,
``GPTModel(cfg)``, ``torch.optim.AdamW(model.parameters(), lr, weight_decay)``, a shuffled
training loader and a validation loader over the text split 90/10, then for each batch
``optimizer.zero_grad()``, ``calc_loss_batch``, ``loss.backward()``, ``optimizer.step()``, and
now and then ``evaluate_model`` (``calc_loss_loader`` in ``model.eval()`` under
``torch.no_grad()``).

What posviz adds, so that a run is exactly reproducible and its pictures are fair:

* the vocabulary is the text's own 1,417 tokens (:class:`~posviz.training.data.TextVocabulary`);
* the ``small`` init scales the positional table to N(0, 0.02²)
  (:func:`~posviz.training.model.init_positions`), drawing nothing;
* every loader has its own generator (the training loader's seeded with the run's seed): a
  ``DataLoader`` without one draws a seed from torch's global generator, the one dropout
  draws from, each time it is iterated, shuffled or not;
* evaluation reads two loaders of its own that do not shuffle, over each text's windows cut
  ``context_length`` apart (every token predicted once; the book evaluates ``eval_iter``
  batches of the shuffled training loader), in ``model.eval()``: no dropout, no random number
  drawn, so evaluating never changes the training;
* ``torch.set_num_threads(config.threads)`` (one by default: the same sums in the same order on
  any machine) and the seed are recorded in the run; the caller's thread count and torch's
  global generator are restored afterwards (``torch.random.fork_rng``).

Two runs with the same settings on the same machine and torch give the same bits.

>>> config = TrainingConfig(init="small", steps=3, emb_dim=8, n_heads=2, n_layers=1,
...                         context_length=8, snapshot_every=2)
>>> run = train(config)
>>> run.steps, tuple(run.pos_embeddings.shape), run.batch_loss.shape
((0, 2, 3), (3, 8, 8), torch.Size([3]))
>>> torch.equal(train(config).pos_embeddings, run.pos_embeddings)
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.utils.data import DataLoader

from posviz.training.config import TrainingConfig, TrainingConfigError, validate_training
from posviz.training.data import TextVocabulary, create_dataloader_v1, split_text, the_verdict
from posviz.training.model import GPTModel, init_positions
from posviz.training.runs import DataSizes, TrainingRun, cpu_capability

Progress = Callable[[int, int], None]  # (steps done, steps in all)
Loader = DataLoader[tuple[torch.Tensor, torch.Tensor]]


def calc_loss_batch(
    input_batch: torch.Tensor, target_batch: torch.Tensor, model: GPTModel, device: torch.device
) -> torch.Tensor:
    """Chapter 5: the mean cross-entropy of the next-token logits of one batch ``[B, T]``."""
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)  # [B, T, V]
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())


def calc_loss_loader(
    data_loader: Loader, model: GPTModel, device: torch.device, num_batches: int | None = None
) -> float:
    """Chapter 5: the mean of :func:`calc_loss_batch` over the first ``num_batches`` batches
    (all by default) of ``data_loader``; NaN for an empty loader."""
    total_loss = 0.0
    if len(data_loader) == 0:
        return float("nan")
    if num_batches is None:  # noqa: SIM108 (the book's lines)
        num_batches = len(data_loader)
    else:
        num_batches = min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            total_loss += loss.item()
        else:
            break
    return total_loss / num_batches


def evaluate_model(
    model: GPTModel, train_loader: Loader, val_loader: Loader, device: torch.device
) -> tuple[float, float]:
    """Chapter 5: training and validation loss in ``model.eval()``, without gradients."""
    model.eval()
    with torch.no_grad():
        train_loss = calc_loss_loader(train_loader, model, device)
        val_loss = calc_loss_loader(val_loader, model, device)
    model.train()
    return train_loss, val_loss


def _loaders(
    config: TrainingConfig, vocabulary: TextVocabulary, train_text: str, val_text: str
) -> tuple[Loader, Loader, Loader]:
    """The shuffled training loader (its own generator) and the two evaluation loaders."""
    length, batch = config.context_length, config.batch_size
    generator = torch.Generator().manual_seed(config.seed)
    train_loader = create_dataloader_v1(
        train_text, batch_size=batch, max_length=length, stride=config.stride,
        shuffle=True, drop_last=True, tokenizer=vocabulary, generator=generator,
    )  # fmt: skip
    # A loader draws a seed from its generator each time it is iterated, shuffled or not:
    # the evaluation loaders get generators of their own too.
    train_eval_loader = create_dataloader_v1(
        train_text, batch_size=batch, max_length=length, stride=length, shuffle=False,
        drop_last=False, tokenizer=vocabulary, generator=torch.Generator().manual_seed(0),
    )  # fmt: skip
    val_loader = create_dataloader_v1(
        val_text, batch_size=batch, max_length=length, stride=length, shuffle=False,
        drop_last=False, tokenizer=vocabulary, generator=torch.Generator().manual_seed(0),
    )  # fmt: skip
    if len(train_loader) == 0 or len(val_loader) == 0:
        raise TrainingConfigError(
            f"context_length {length} and batch_size {batch} leave no full training batch or "
            "no validation window of the text: choose a shorter context or a smaller batch"
        )
    return train_loader, train_eval_loader, val_loader


def train(config: TrainingConfig, *, progress: Progress | None = None) -> TrainingRun:
    """Train the book's GPT on *The Verdict* with ``config``; the run it keeps (unnamed).

    ``progress(done, total)`` is called after every step. The caller's torch threads and
    global random state are as before when it returns.
    """
    validate_training(config)
    threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        with torch.random.fork_rng(devices=[]):
            return _train(config, progress)
    finally:
        torch.set_num_threads(threads)


def _train(config: TrainingConfig, progress: Progress | None) -> TrainingRun:
    device = torch.device("cpu")
    train_text, val_text = split_text(the_verdict(), train_ratio=config.train_ratio)
    vocabulary = TextVocabulary.from_texts((train_text, val_text))
    torch.manual_seed(config.seed)
    model = GPTModel(config.model(vocabulary.vocab_size))
    init_positions(model, config.init)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    train_loader, train_eval_loader, val_loader = _loaders(config, vocabulary, train_text, val_text)
    kept = set(config.snapshot_steps)
    tables: list[torch.Tensor] = []
    train_losses: list[float] = []
    val_losses: list[float] = []
    batch_losses: list[float] = []

    def snapshot() -> None:
        tables.append(model.pos_emb.weight.detach().clone())  # [T, d]
        train_loss, val_loss = evaluate_model(model, train_eval_loader, val_loader, device)
        train_losses.append(train_loss)
        val_losses.append(val_loss)

    snapshot()  # step 0: the init
    step = 0
    model.train()
    while step < config.steps:
        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
            step += 1
            batch_losses.append(loss.item())
            if step in kept:
                snapshot()
            if progress is not None:
                progress(step, config.steps)
            if step == config.steps:
                break
    return TrainingRun(
        name="",
        config=config,
        steps=config.snapshot_steps,
        pos_embeddings=torch.stack(tables),  # [S, T, d]
        train_loss=torch.tensor(train_losses, dtype=torch.float64),
        val_loss=torch.tensor(val_losses, dtype=torch.float64),
        batch_loss=torch.tensor(batch_losses, dtype=torch.float32),
        data=DataSizes(
            vocab_size=vocabulary.vocab_size,
            train_tokens=len(vocabulary.encode(train_text)),
            val_tokens=len(vocabulary.encode(val_text)),
            train_windows=len(train_loader.dataset),  # type: ignore[arg-type]
            train_eval_windows=len(train_eval_loader.dataset),  # type: ignore[arg-type]
            val_windows=len(val_loader.dataset),  # type: ignore[arg-type]
        ),
        torch_version=torch.__version__,
        cpu=cpu_capability(),
    )
