"""The Training view's *Show the code*: a self-contained script that trains the run on screen
up to the step on screen and prints the numbers the view's sentences quote.

The script holds the book's classes as posviz runs them: the source of
:mod:`posviz.training.model`'s ``GPTConfig``, ``MultiHeadAttention``, ``LayerNorm``, ``GELU``,
``FeedForward``, ``TransformerBlock`` and ``GPTModel``, :mod:`posviz.training.data`'s
``GPTDatasetV1`` and ``create_dataloader_v1``, and :mod:`posviz.training.train`'s
``calc_loss_batch``, ``calc_loss_loader`` and ``evaluate_model``, copied by
:func:`inspect.getsource` with what they use (:func:`posviz.codegen._source.sources`), so the
code shown is the code that made the run. Around them it
writes the run's settings, the text (``the-verdict.txt`` beside the script, else downloaded
from the book's repository), the vocabulary of the text's tokens, the same seeds and
generators as :func:`posviz.training.train.train`, chapter 5's loop, and the numbers. It needs
torch and tiktoken, not posviz; with the run's torch and threads it gives the run's bits.

>>> from posviz.training.config import TrainingConfig
>>> script = training_script(TrainingConfig(init="small"), step=600, name="small-init")
>>> "class GPTModel(nn.Module):" in script, "steps = 600" in script
(True, True)
"""

from __future__ import annotations

import textwrap
from typing import Final

from posviz.codegen._source import import_block, sources
from posviz.codegen._tokenizer import TEXT_VOCABULARY, TOKENIZER_IMPORTS, tokenizer_part
from posviz.distance import cosine_by_distance
from posviz.lesson.training import two
from posviz.tokenizer import gpt2_encoding
from posviz.training.config import TrainingConfig
from posviz.training.data import VERDICT_URL, GPTDatasetV1, create_dataloader_v1
from posviz.training.model import (
    GELU,
    SMALL_INIT_STD,
    FeedForward,
    GPTConfig,
    GPTModel,
    LayerNorm,
    MultiHeadAttention,
    TransformerBlock,
)
from posviz.training.train import calc_loss_batch, calc_loss_loader, evaluate_model
from posviz.training.view import FAR, movement

BOOK_URL: Final = "https://github.com/rasbt/LLMs-from-scratch"
_WIDTH: Final = 92  # the script's docstring lines

_HEADER: Final = '''\
"""Train the book's GPT on The Verdict, as posviz's Training view shows it: run {name},
{steps} steps, and print the numbers the view quotes.

{settings}
The classes are the book's, as posviz runs them: Sebastian Raschka, Build a Large Language
Model (From Scratch), chapters 2-5; code under the Apache License 2.0,
{book}
Run it with: pip install torch tiktoken && python this_file.py
(it reads the-verdict.txt beside it, else downloads it from the book's repository; tiktoken
downloads GPT-2's vocabulary on its first run, unless posviz is installed).
"""

from __future__ import annotations

{imports}
'''

_SETTINGS: Final = """
init = {init!r}  # the positional table: "small" N(0, 0.02²) (GPT-2), "default" N(0, 1)
steps = {steps}  # train up to the step on screen
seed = {seed}
learning_rate = {learning_rate!r}
weight_decay = {weight_decay!r}
batch_size = {batch_size}
stride = {stride}  # tokens between training windows
train_ratio = {train_ratio!r}
torch.set_num_threads({threads})  # the run's threads: other counts round differently
device = torch.device("cpu")

file_path = "the-verdict.txt"
if not os.path.exists(file_path):
    url = {url!r}
    with urllib.request.urlopen(url) as response:
        text_data = response.read().decode("utf-8")
    with open(file_path, "w", encoding="utf-8", newline="") as file:
        file.write(text_data)
else:
    with open(file_path, encoding="utf-8", newline="") as file:
        text_data = file.read()

split_idx = int(train_ratio * len(text_data))
train_data, val_data = text_data[:split_idx], text_data[split_idx:]
"""

# After the copied definitions: GPT-2's tokenizer (posviz's files where posviz is installed)
# and the text's vocabulary
_VOCABULARY: Final = """
{tokenizer}
{vocabulary_class}

vocabulary = TextVocabulary([train_data, val_data])
"""

_TRAIN: Final = """
GPT_CONFIG = GPTConfig(
    vocab_size=len(vocabulary.gpt2_ids),
    context_length={context_length},
    emb_dim={emb_dim},
    n_heads={n_heads},
    n_layers={n_layers},
    drop_rate={drop_rate!r},
    qkv_bias={qkv_bias!r},
)

torch.manual_seed(seed)
model = GPTModel(GPT_CONFIG)
if init == "small":  # the same draw, scaled: every other weight as with init "default"
    with torch.no_grad():
        model.pos_emb.weight.mul_({small_std!r})
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=weight_decay)

# Every loader has its own generator: without one a DataLoader draws a seed from torch's
# global generator (the one dropout uses) each time it is iterated, shuffled or not.
context_length = GPT_CONFIG.context_length
train_loader = create_dataloader_v1(
    train_data, batch_size=batch_size, max_length=context_length, stride=stride,
    shuffle=True, drop_last=True, tokenizer=vocabulary,
    generator=torch.Generator().manual_seed(seed),
)
# Evaluation: each text's windows cut context_length apart, every token predicted once.
train_eval_loader = create_dataloader_v1(
    train_data, batch_size=batch_size, max_length=context_length, stride=context_length,
    shuffle=False, drop_last=False, tokenizer=vocabulary,
    generator=torch.Generator().manual_seed(0),
)
val_loader = create_dataloader_v1(
    val_data, batch_size=batch_size, max_length=context_length, stride=context_length,
    shuffle=False, drop_last=False, tokenizer=vocabulary,
    generator=torch.Generator().manual_seed(0),
)

start_table = model.pos_emb.weight.detach().clone()  # [T, d]: the table at step 0
start_losses = evaluate_model(model, train_eval_loader, val_loader, device)
batch_losses = []
step = 0
model.train()
while step < steps:  # chapter 5's train_model_simple, without its printing
    for input_batch, target_batch in train_loader:
        optimizer.zero_grad()
        loss = calc_loss_batch(input_batch, target_batch, model, device)
        loss.backward()
        optimizer.step()
        step += 1
        batch_losses.append(loss.item())
        if step == steps:
            break

pos_embeddings = model.pos_emb.weight.detach().clone()  # [T, d]: the table on screen
train_loss, val_loss = evaluate_model(model, train_eval_loader, val_loader, device)


# posviz's functions above: the view's curve, how far the rows moved, two decimals
now = cosine_by_distance(pos_embeddings)[0].tolist()  # mean cosine of rows i and i + k, per k
before = cosine_by_distance(start_table)[0].tolist()
moved = movement(start_table, pos_embeddings)
print(f"After {{steps:,}} steps neighbouring positions have cosine {{two(now[1])}} "
      f"(distance {far}: {{two(now[{far}])}}); at step 0 they had {{two(before[1])}} "
      f"({{two(before[{far}])}}).")
print(f"Training loss {{train_loss:.2f}} (step 0: {{start_losses[0]:.2f}}), validation loss "
      f"{{val_loss:.2f}} (step 0: {{start_losses[1]:.2f}}).")
print(f"The rows moved {{moved.mean_moved:.3f}} on average; at step 0 they were "
      f"{{moved.mean_start_norm:.3f}} long.")
"""

_CLASSES: Final = (
    gpt2_encoding,
    GPTConfig,
    MultiHeadAttention,
    LayerNorm,
    GELU,
    FeedForward,
    TransformerBlock,
    GPTModel,
    GPTDatasetV1,
    create_dataloader_v1,
    calc_loss_batch,
    calc_loss_loader,
    evaluate_model,
    cosine_by_distance,
    movement,
    two,
)


# The script's own imports, besides those of the classes and functions it copies
_IMPORTS: Final = (*TOKENIZER_IMPORTS, "import urllib.request", "import torch")


def training_script(config: TrainingConfig, *, step: int, name: str = "") -> str:
    """A script that trains ``config``'s run (called ``name``) for ``step`` steps and prints
    what the Training view says at that step; ``step`` from 0 (the init) to ``config.steps``.

    >>> script = training_script(TrainingConfig(init="default", stride=64), step=50)
    >>> "stride = 64" in script, "init = 'default'" in script
    (True, True)
    """
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= config.steps:
        raise ValueError(
            f"step must be a whole number from 0 to {config.steps} (the run's steps), got "
            f"{step!r}: pick a step the run has"
        )
    settings = (
        f"Settings: init {config.init}, seed {config.seed}, d {config.emb_dim}, {config.n_layers} "
        f"layers, {config.n_heads} heads, context {config.context_length}, dropout "
        f"{config.drop_rate}, AdamW lr {config.learning_rate} weight decay "
        f"{config.weight_decay}, batch {config.batch_size}, stride {config.stride}, "
        f"{config.threads} thread(s). The run was made by: "
        f"{' '.join(('posviz', 'train', *config.arguments()))}"
    )
    copied = sources(*_CLASSES)
    header = _HEADER.format(
        imports=import_block({*_IMPORTS, *copied.imports}),
        name=name or f"{config.init}-init",
        steps=f"{step:,}",
        settings=textwrap.fill(settings, width=_WIDTH, break_on_hyphens=False),
        book=BOOK_URL,
    )
    body = _SETTINGS.format(
        init=config.init,
        steps=step,
        seed=config.seed,
        learning_rate=config.learning_rate,
        weight_decay=config.weight_decay,
        batch_size=config.batch_size,
        stride=config.stride,
        train_ratio=config.train_ratio,
        threads=config.threads,
        url=VERDICT_URL,
    )
    training = _TRAIN.format(
        context_length=config.context_length,
        emb_dim=config.emb_dim,
        n_heads=config.n_heads,
        n_layers=config.n_layers,
        drop_rate=config.drop_rate,
        qkv_bias=config.qkv_bias,
        small_std=SMALL_INIT_STD,
        far=min(FAR, config.context_length - 1),
    )
    vocabulary = _VOCABULARY.format(
        tokenizer=tokenizer_part("tokenizer"), vocabulary_class=TEXT_VOCABULARY
    )
    return f"{header}{body}\n\n{copied.text}\n{vocabulary}{training}"
