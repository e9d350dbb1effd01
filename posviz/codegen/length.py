"""The Length view's *Show the code*: a self-contained script that trains one length run
(issue 41) as ``posviz train --scheme`` does and prints the band means the view quotes.

The script holds posviz's own code, copied by :func:`inspect.getsource` with what it uses
(:func:`posviz.codegen._source.sources`): the book's ``GPTModel`` with the scheme inside
(:class:`~posviz.training.positional.SchemeGPTModel`), the scheme's functions as its
:class:`~posviz.schemes.SchemeSpec` names them, chapter 5's loop
(:func:`~posviz.training.length.train_steps`) over the shuffled windows
(:func:`~posviz.training.length.training_batches`), and the reading
(:func:`~posviz.training.length.read_model`: each window's mean loss over positions
``k·L/2 … k·L−1``). Around them it writes the run's settings, the text (checked by sha256),
its vocabulary, the seed, the lengths read and the extensions of RoPE, and prints, for the
held-out text and the training text, the mean loss of each band and its standard error. With
the run's torch and one thread it gives the run's bits; it needs torch and tiktoken, not posviz.

>>> from posviz.training.length import LengthConfig
>>> script = length_script(LengthConfig(scheme="rope", steps=20))
>>> "class SchemeGPTModel(GPTModel):" in script, "steps = 20" in script, "import posviz" in script
(True, True, False)
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import Final, cast

from posviz.codegen._source import Item, import_block, sources
from posviz.codegen._tokenizer import TEXT_VOCABULARY, TOKENIZER_IMPORTS, tokenizer_part
from posviz.schemes import Rotation, SchemeSpec, option, scheme
from posviz.schemes.rope_scaling import SCALING_SPECS, Scaling
from posviz.tokenizer import gpt2_encoding
from posviz.training.data import VERDICT_FILE, VERDICT_SHA256, VERDICT_URL, split_text
from posviz.training.length import (
    MULTIPLES,
    SHAKESPEARE_FILE,
    SHAKESPEARE_SHA256,
    SHAKESPEARE_URL,
    LengthConfig,
    band_mean_and_error,
    extension_options,
    read_model,
    train_steps,
    variant_name,
)
from posviz.training.model import GPTConfig, init_positions
from posviz.training.positional import SchemeGPTModel

BOOK_URL: Final = "https://github.com/rasbt/LLMs-from-scratch"
# The extensions the Length view's sentence quotes: NTK-aware, YaRN and PI, s = 4
SENTENCE_EXTENSIONS: Final[tuple[tuple[str, float], ...]] = (
    ("ntk", 4.0),
    ("yarn", 4.0),
    ("linear", 4.0),
)
_WIDTH: Final = 92  # the script's docstring lines

_HEADER: Final = '''\
"""{intro}

{settings}
The classes are the book's, as posviz runs them: Sebastian Raschka, Build a Large Language
Model (From Scratch), chapters 2-5; code under the Apache License 2.0,
{book}
Run it with: pip install torch tiktoken && python this_file.py [TEXT_FILE] [--digits N]
{where}
"""

from __future__ import annotations

{imports}
'''

_SETTINGS: Final = """
parser = argparse.ArgumentParser(description="Train short, test long: one length run.")
parser.add_argument("text_file", nargs="?", help="the text's file ({file})")
parser.add_argument("--digits", type=int, default=2, help="decimals printed (posviz: 2)")
args = parser.parse_args()

init = {config.init!r}  # the learned table's init: "small" N(0, 0.02²) (GPT-2), "default" N(0, 1)
steps = {config.steps}
seed = {config.seed}
learning_rate = {config.learning_rate!r}
weight_decay = {config.weight_decay!r}
batch_size = {config.batch_size}
train_ratio = {config.train_ratio!r}  # the first 90 % of the characters train, the rest is held out
read_tokens = {config.read_tokens}  # tokens of each text read at every length
multiples = {multiples!r}  # the lengths read: k·L
torch.set_num_threads({config.threads})  # the run's threads: other counts round differently

TEXT_FILE = {file!r}
TEXT_SHA256 = {sha256!r}
TEXT_URL = {url!r}


def text_path():
    \"\"\"The text's file: the first argument, else posviz's copy where posviz is installed
    (found without importing posviz), else TEXT_FILE beside this script (downloaded from
    TEXT_URL if it is not there).\"\"\"
    if args.text_file:
        return args.text_file
    posviz_spec = importlib.util.find_spec("posviz")
    if posviz_spec is not None and posviz_spec.submodule_search_locations:
        path = os.path.join(posviz_spec.submodule_search_locations[0], "data", TEXT_FILE)
        if os.path.isfile(path):
            return path
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), TEXT_FILE)
    if not os.path.isfile(path):
        with urllib.request.urlopen(TEXT_URL, timeout=60) as response:
            data = response.read()
        with open(path, "wb") as file:
            file.write(data)
    return path


path = text_path()
with open(path, "rb") as file:
    data = file.read()
digest = hashlib.sha256(data).hexdigest()
if digest != TEXT_SHA256:
    raise SystemExit(f"{{path}} has sha256 {{digest}}, not the run's text ({{TEXT_SHA256}})")
text_data = data.decode("utf-8")
"""

# After the copied definitions: GPT-2's tokenizer, the text's vocabulary, the token ids
_DATA: Final = """
{tokenizer}
{vocabulary_class}

train_text, held_out_text = split_text(text_data, train_ratio=train_ratio)
vocabulary = TextVocabulary([train_text, held_out_text])
train_ids = torch.tensor(vocabulary.encode(train_text, allowed_special={{"<|endoftext|>"}}))
held_out_ids = torch.tensor(vocabulary.encode(held_out_text, allowed_special={{"<|endoftext|>"}}))
"""

_SCHEME: Final = """
# {label}: it {acts}.
# The parts of its spec in posviz's registry (posviz.schemes.scheme({name!r})) that
# SchemeGPTModel reads: learned, a table of learned rows added to the input (the book's
# pos_emb); table, a formula's table added to the input; rotation, how queries and keys turn
# in every head (theta, the Distance view's, is not read); bias, what is added to the scaled
# scores.
spec = SimpleNamespace(
    learned={learned!r},
    table={table},
    rotation={rotation},
    bias={bias},
)
"""

_ROTATION: Final = "Rotation(angles={angles}, rotate={rotate}, theta=None, scale={scale})"
_BIAS: Final = "SimpleNamespace(per_distance={per_distance}, bucket={bucket}, table={table})"

_TRAIN: Final = """
GPT_CONFIG = GPTConfig(
    vocab_size=len(vocabulary.gpt2_ids),
    context_length={config.context_length},  # L
    emb_dim={config.emb_dim},
    n_heads={config.n_heads},
    n_layers={config.n_layers},
    drop_rate={config.drop_rate!r},
    qkv_bias=False,
)
context_length = GPT_CONFIG.context_length


def progress(done, total):
    \"\"\"Every 10 % of the steps: how far the training is (on standard error).\"\"\"
    if done % max(total // 10, 1) == 0 or done == total:
        print(f"step {{done:,}} of {{total:,}}", file=sys.stderr, flush=True)


torch.manual_seed(seed)
model = SchemeGPTModel(GPT_CONFIG, spec)
if spec.learned:
    init_positions(model, init)
batch_losses = train_steps(
    model,
    train_ids,
    steps=steps,
    context_length=context_length,
    batch_size=batch_size,
    seed=seed,
    learning_rate=learning_rate,
    weight_decay=weight_decay,
    progress=progress,
)

# Read without dropout: every whole window of k·L tokens of each text, each window's mean
# loss over positions k·L/2 ... k·L-1 (the band), then the bands' mean and standard error.
texts = (
    ("held-out", held_out_ids[: read_tokens + 1]),  # the last 10 %: never seen
    ("training", train_ids[: read_tokens + 1]),  # the start of the text it learned
)
# As trained; a rotating scheme again with each extension: other options, no retraining
variants = [("as trained", {{}})]
{variants}plain = dict(model.options)
band_means = {{}}  # (text, variant, length): the band's mean loss
rows = {{}}  # (text, variant): the bands' means and standard errors in words
digits = args.digits
for variant, options in variants:
    model.use_options(**{{**plain, **options}})
    for text_name, token_ids in texts:
        cells = []
        for multiple in multiples:
            length = multiple * context_length
            band = f"{{length // 2}}-{{length - 1}} of {{length}}"
            try:
                _, band_loss = read_model(model, token_ids, length)
            except IndexError as error:  # the learned table has no row past L - 1
                cells.append(f"{{band}}: cannot run (IndexError: {{error}})")
                continue
            mean, standard_error = band_mean_and_error(band_loss)
            band_means[text_name, variant, length] = mean
            cells.append(f"{{band}}: {{mean:.{{digits}}f}} ± {{standard_error:.{{digits}}f}}")
        rows[text_name, variant] = "   ".join(cells)
model.use_options(**plain)

scheme_label = {label!r}
print(f"{{scheme_label}}, trained {{steps:,}} steps at L = {{context_length}}: the mean loss of")
print("positions k·L/2 ... k·L-1 of each input of k·L tokens, ± its standard error")
for text_name, _ in texts:
    for variant, _ in variants:
        print(f"{{text_name:<9}} {{variant:<11}} {{rows[text_name, variant]}}")
"""

_VARIANT: Final = (
    "variants.append(({name!r}, extension_options({scaling!r}, {factor!r}, context_length)))\n"
)

# The definitions every script copies; the scheme's own functions are added per scheme
_COPIED: Final[tuple[Item, ...]] = (
    gpt2_encoding,
    split_text,
    GPTConfig,
    SchemeGPTModel,
    init_positions,
    train_steps,
    read_model,
    band_mean_and_error,
    extension_options,
)
_IMPORTS: Final = (
    *TOKENIZER_IMPORTS,
    "import argparse",
    "import hashlib",
    "import sys",
    "import urllib.request",
    "from types import SimpleNamespace",
    "import torch",
)


def _fill(words: str) -> str:
    """``words`` in lines of the script's docstring."""
    return textwrap.fill(words, width=_WIDTH, break_on_hyphens=False)


def _text_file(config: LengthConfig) -> tuple[str, str, str, str]:
    """The run's text: its title, file name, sha256 and where it is downloaded from."""
    if config.text == "verdict":
        return "The Verdict", VERDICT_FILE, VERDICT_SHA256, VERDICT_URL
    return "Tiny Shakespeare", SHAKESPEARE_FILE, SHAKESPEARE_SHA256, SHAKESPEARE_URL


def _scheme_part(spec: SchemeSpec) -> tuple[str, tuple[Item, ...]]:
    """The script's ``spec``: the scheme's functions by their names, read from its spec, and
    the functions to copy."""
    used: list[Item] = []

    def named(function: Callable[..., object] | None) -> str:
        if function is None:
            return "None"
        used.append(function)
        return function.__name__

    rotation = bias = "None"
    if spec.rotation is not None:
        used.append(Rotation)
        turning = spec.rotation
        rotation = _ROTATION.format(
            angles=named(turning.angles), rotate=named(turning.rotate), scale=named(turning.scale)
        )
    if spec.bias is not None:
        bias = _BIAS.format(
            per_distance=named(spec.bias.per_distance),
            bucket=named(spec.bias.bucket),
            table=named(spec.bias.table),
        )
    code = _SCHEME.format(
        label=spec.label,
        name=spec.name,
        acts=spec.acts.value,
        learned=spec.learned,
        table=named(spec.table),
        rotation=rotation,
        bias=bias,
    )
    return code, tuple(used)


def _check_extensions(extensions: Sequence[tuple[str, float]]) -> None:
    """``ValueError`` naming an extension RoPE's options do not allow, and the fix."""
    for scaling, factor in extensions:
        for name, value in (("rope_scaling", scaling), ("rope_factor", factor)):
            message = option(name).check(value)
            if message is not None:
                raise ValueError(f"extension {(scaling, factor)!r}: {message}")


def length_script(
    config: LengthConfig,
    *,
    extensions: Sequence[tuple[str, float]] = SENTENCE_EXTENSIONS,
) -> str:
    """A script that trains ``config``'s length run and prints each band's mean loss on the
    held-out text and the training text at every length read; a rotating scheme (RoPE) is
    read again with each of ``extensions`` ((scaling, s), L₀ = L) without retraining.

    >>> script = length_script(LengthConfig(scheme="learned", steps=5))
    >>> "init_positions(model, init)" in script, "extension_options('yarn'" in script
    (True, False)
    """
    config.check()
    _check_extensions(extensions)
    spec = scheme(config.scheme)
    scheme_code, scheme_items = _scheme_part(spec)
    copied = sources(*_COPIED, *scheme_items)
    title, file, sha256, url = _text_file(config)
    lengths = [multiple * config.context_length for multiple in MULTIPLES]
    settings = (
        f"Settings: scheme {spec.name}, seed {config.seed}, d {config.emb_dim}, "
        f"{config.n_layers} layers, {config.n_heads} heads, context L = {config.context_length}, "
        f"dropout {config.drop_rate}, AdamW lr {config.learning_rate} weight decay "
        f"{config.weight_decay}, batch {config.batch_size}, windows every token, "
        f"{config.threads} thread(s); {config.read_tokens:,} tokens read of each text."
    )
    if spec.rotation is not None and extensions:
        read_again = ", ".join(
            f"{SCALING_SPECS[cast(Scaling, scaling)].label} s = {factor:g}"
            for scaling, factor in extensions
        )
        settings += f" Read again with {read_again}, without retraining."
    intro = (
        f"Train short, test long, as posviz's Length view shows it: the book's GPT with "
        f"{spec.label} positions, trained at L = {config.context_length} tokens on {title} for "
        f"{config.steps:,} steps, then read at {', '.join(f'{n:,}' for n in lengths)} tokens on "
        "held-out text and on the training text; it prints the mean loss of the positions in "
        "each band (positions k·L/2 ... k·L-1 of an input of k·L) and its standard error."
    )
    where = (
        f"(the text: TEXT_FILE, else posviz's copy where posviz is installed, else {file} "
        "beside this script, downloaded if missing; tiktoken downloads GPT-2's vocabulary on "
        "its first run, unless posviz is installed)."
    )
    header = _HEADER.format(
        intro=_fill(intro),
        settings=_fill(settings),
        book=BOOK_URL,
        where=_fill(where),
        imports=import_block({*_IMPORTS, *copied.imports}),
    )
    body = _SETTINGS.format(config=config, multiples=MULTIPLES, file=file, sha256=sha256, url=url)
    data = _DATA.format(tokenizer=tokenizer_part("tokenizer"), vocabulary_class=TEXT_VOCABULARY)
    variants = ""
    if spec.rotation is not None:
        variants = "".join(
            _VARIANT.format(name=variant_name(scaling, factor), scaling=scaling, factor=factor)
            for scaling, factor in extensions
        )
    training = _TRAIN.format(config=config, label=spec.label, variants=variants)
    return f"{header}{body}\n\n{copied.text}\n{data}{scheme_code}{training}"


def shown_script(config: LengthConfig, extension: tuple[str, float]) -> str:
    """The script behind the Length view's numbers for ``config``'s run: the extensions the
    sentence quotes and ``extension``, the one the view shows (RoPE's run only).

    >>> script = shown_script(LengthConfig(scheme="rope", steps=5), ("llama3", 2.0))
    >>> "'llama3-2'" in script, "'yarn-4'" in script
    (True, True)
    """
    return length_script(config, extensions=tuple(dict.fromkeys((*SENTENCE_EXTENSIONS, extension))))
