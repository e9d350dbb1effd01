"""A short PyTorch + tiktoken script that recreates the batch and the matrices on screen.

:func:`reproduction_script` writes the book's section 2.8 code for the current settings:
tokenize with tiktoken's ``gpt2`` encoding, seed torch, create ``token_embedding_layer``
and ``pos_embedding_layer`` (in that order, even when the scheme does not use the positional
table, so the random numbers are the same), cut the batch ``inputs [B, n]``, and combine the
tables by the scheme into ``token_embeddings [B, n, d]``, ``pos_embeddings [n, d]`` and
``input_embeddings [B, n, d]``, printing their shapes as the book does. Row ``window`` of the
batch is bit for bit the three matrices posviz shows. The batch is cut by the book's
``GPTDatasetV1`` and ``DataLoader`` whenever they give the page's windows (the *Book §2.8*
example: ``[8, 4]``); otherwise (the book's dataset needs one more token after each window, as
its target) by the same sliding window written out, with a comment saying why. In compare
mode the script adds the book's ``SelfAttention_v2`` and prints the comparison.

Every formula is posviz's own function, copied by :func:`inspect.getsource` with the functions
and constants it uses (:mod:`posviz.codegen._source`): the script holds the source of each
function of :data:`_LIBRARY` it calls, the book's ``GPTDatasetV1`` as
:mod:`posviz.training.data` has it, ``sinusoidal_encoding``, ``rope_angles``... as
:mod:`posviz.schemes` computes them. What the script writes for each scheme is
:mod:`posviz.codegen._schemes`.

GPT-2's tokenizer: where posviz is installed the script builds tiktoken's ``gpt2`` encoding
from the copies of GPT-2's files posviz ships (``posviz/data``, found without importing
posviz, read by tiktoken's own loader and checked against tiktoken's hashes), so it needs no
network; elsewhere ``tiktoken.get_encoding("gpt2")`` downloads them on its first run.

The user's text goes into the script as a Python string literal made by :func:`repr` (split
into short pieces that Python joins), so no text can end the literal or add code. Lone
surrogates are replaced by U+FFFD first, as :func:`posviz.tokenizer.encode` does.

>>> from posviz.config import Settings
>>> script = reproduction_script(Settings(text="Every effort moves you", context_length=4))
>>> "token_embedding_layer = torch.nn.Embedding(50257, emb_dim)" in script
True
"""

from __future__ import annotations

import ast
from typing import Final

from posviz.attention import ATTENTION_SEED, book_attention_weights, self_attention
from posviz.batching import Batch
from posviz.codegen._schemes import scheme_code
from posviz.codegen._source import Item, import_block, sources
from posviz.codegen._tokenizer import TOKENIZER_IMPORTS, tokenizer_part
from posviz.codegen.attention import BOOK_CH03_URL, attention_part
from posviz.codegen.shapes import CodeView, shapes_part
from posviz.compare import cosine, match_permutation
from posviz.config import GPT2_VOCAB_SIZE, Settings, SettingsError, check_heads
from posviz.distance import cosine_by_distance, rope_score
from posviz.geometry import abs_cosines, directions_90, principal_components
from posviz.position_tables import cos_sin_table
from posviz.schemes import OPTIONS, SCHEMES, scheme
from posviz.tokenizer import encode, gpt2_encoding, without_lone_surrogates
from posviz.training.data import GPTDatasetV1
from posviz.training.model import MultiHeadAttention
from posviz.view import batch_for

_PIECE_CHARS: Final = 60  # characters per piece of the text literal, for a readable script
BOOK_CH02_URL: Final = "https://github.com/rasbt/LLMs-from-scratch/tree/main/ch02"
# The chapter's notebook, whose section "2.8 Encoding word positions" posviz shows.
BOOK_CH02_NOTEBOOK_URL: Final = (
    f"{BOOK_CH02_URL.replace('/tree/', '/blob/')}/01_main-chapter-code/ch02.ipynb"
)

_HEADER: Final = '''\
"""Recreate posviz's view: token + position = input embeddings, as section 2.8 does.

Settings: {summary}
The book's chapter-2 code: {ch02}
Run it with: pip install torch tiktoken && python this_file.py
({downloads}).
"""

from __future__ import annotations

{imports}

'''

# The imports of every script, besides those of the functions it copies
_IMPORTS: Final = (*TOKENIZER_IMPORTS, "import torch")

_TABLES: Final = """\
torch.manual_seed(seed)
token_embedding_layer = torch.nn.Embedding({vocab_size}, emb_dim)
# Made right after the token table, before the data loader (the book makes it after):
# iterating a DataLoader draws a random number, which would change this table.
pos_embedding_layer = torch.nn.Embedding(context_length, emb_dim)  # made even if unused

"""

_GPT2_TABLES: Final = '''\
# GPT-2 124M's trained tables instead of random ones (the seed is not used): wte.weight
# [50257, 768] and wpe.weight [1024, 768] of openai-community/gpt2's model.safetensors on
# the Hugging Face Hub. HTTP Range requests read the file's header and the two tables
# (157 MB), not the whole 548 MB. HF_ENDPOINT (the Hub's own variable) points at a mirror.
endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
commit = {commit!r}  # the revision posviz read the tables from
url = f"{{endpoint}}/openai-community/gpt2/resolve/{{commit}}/model.safetensors"


def read_bytes(first, last):
    """Bytes first..last of the file (urllib follows the Hub's redirect to its CDN)."""
    request = urllib.request.Request(url, headers={{"Range": f"bytes={{first}}-{{last}}"}})
    with urllib.request.urlopen(request, timeout=30) as response:
        data = response.read()
        if response.status != 206 or len(data) != last - first + 1:
            raise RuntimeError(f"asked for bytes {{first}}-{{last}}, got HTTP {{response.status}}")
    return data


# safetensors: an 8-byte little-endian header length, a JSON header, then the tensors
header_length = int.from_bytes(read_bytes(0, 7), "little")
header = json.loads(read_bytes(8, 8 + header_length - 1))


def read_table(name):
    """A float32 matrix of the file, e.g. "wte.weight" -> [50257, 768]."""
    info = header[name]  # {{"dtype": "F32", "shape": [rows, cols], "data_offsets": [a, b]}}
    begin, end = (8 + header_length + offset for offset in info["data_offsets"])
    data = bytearray(read_bytes(begin, end - 1))  # little-endian float32, as on x86 and ARM
    return torch.frombuffer(data, dtype=torch.float32).view(*info["shape"])


token_embedding_layer = torch.nn.Embedding.from_pretrained(read_table("wte.weight"))
pos_embedding_layer = torch.nn.Embedding.from_pretrained(read_table("wpe.weight"))

'''

# the standard library GPT-2 needs
_GPT2_IMPORTS: Final = ("import json", "import os", "import urllib.request")

_BOOK_LOADER: Final = """\
# The book's data loader (sections 2.6 and 2.8), GPTDatasetV1 above: windows of max_length
# tokens every stride tokens, each with its next-token targets. One batch holds all B windows
# the page shows.
dataset = GPTDatasetV1(text, tokenizer, max_length=context_length, stride=stride)
batch_size = {batch_size}  # B: every window in one batch, as the page shows them
dataloader = torch.utils.data.DataLoader(
    dataset, batch_size=batch_size, shuffle=False, drop_last=True, num_workers=0
)
inputs, targets = next(iter(dataloader))  # [B, T]
"""

_PLAIN_LOADER: Final = """\
# Windows of context_length tokens every stride tokens, as the page cuts them.
# {why}
token_ids = tokenizer.encode(text, allowed_special={{"<|endoftext|>"}})
n = min(len(token_ids), context_length)  # a text shorter than T gives one window of n tokens
starts = range(0, len(token_ids) - n + 1, stride)
inputs = torch.tensor([token_ids[start : start + n] for start in starts])  # [B, n]
"""

_EMBED: Final = """
print("inputs:", inputs.shape)  # [B, n]: the batch of token ids
n = inputs.shape[1]  # tokens per window

with torch.no_grad():
    token_embeddings = token_embedding_layer(inputs)  # [B, n, emb_dim]
"""

_FOOTER: Final = """
print("token_embeddings:", token_embeddings.shape)  # [B, n, emb_dim]
print("pos_embeddings:", pos_embeddings.shape)  # [n, emb_dim]
print("input_embeddings:", input_embeddings.shape)  # [B, n, emb_dim]
# The page shows window `window` of the batch: token_embeddings[window], pos_embeddings,
# input_embeddings[window], [n, emb_dim] each.
"""

_COMPARE: Final = '''
# Compare mode: the window on screen and a second text, the same tokens in another order,
# through the book's self-attention (chapter 3: {ch03}) as posviz runs it:
# SelfAttention_v2(d, d)'s weights after torch.manual_seed({attention_seed})
# (book_attention_weights) and its forward pass (self_attention), in float64, where a
# reordering stays exact.
compare_text = {compare_literal}
causal = {causal}  # True: token i attends to tokens 0..i only, as GPT does
first_ids = inputs[window]  # [n]
second_ids = torch.tensor(
    tokenizer.encode(compare_text, allowed_special={{"<|endoftext|>"}})[:context_length]
)  # [n]
weights = book_attention_weights(d_in=emb_dim, d_out=emb_dim)  # W_query, W_key, W_value


def context_vectors(x, **positions):
    """The context vectors [n, emb_dim] self_attention computes for the rows of x, with the
    scheme's positions if given (rope=True and its angles, or a bias)."""
    return self_attention(x, weights, causal=causal, **positions).context_vecs


with torch.no_grad():
    first_tokens = token_embedding_layer(first_ids)  # [n, emb_dim]
    second_tokens = token_embedding_layer(second_ids)  # [n, emb_dim]
context_first = context_vectors(first_tokens)  # without positions
context_second = context_vectors(second_tokens)
{positioned}
# The mean of the context vectors: a summary of the text that ignores order.
no_positions = cosine(context_first.mean(dim=0), context_second.mean(dim=0))
positions = cosine(positioned_first.mean(dim=0), positioned_second.mean(dim=0))
print(f"cosine of the mean context vectors: no positions {{no_positions:.6f}}")
print(f"cosine of the mean context vectors: with positions {{positions:.6f}}")
'''

_DEFINITIONS: Final = """\
# --- posviz's own functions, copied from its source: the code that computed the page -------
{definitions}

"""

# The functions of posviz a script may call; it holds the source of those it calls
# (posviz.codegen._source), and the functions and constants they use.
_LIBRARY: Final[tuple[Item, ...]] = (
    gpt2_encoding,
    GPTDatasetV1,
    book_attention_weights,
    self_attention,
    cosine,
    MultiHeadAttention,
    principal_components,
    directions_90,
    abs_cosines,
    cosine_by_distance,
    rope_score,
    cos_sin_table,
    # every scheme's functions: its formula's table, its rotation, its bias per distance
    *(spec.table for spec in SCHEMES if spec.table is not None),
    *(
        function
        for spec in SCHEMES
        if spec.rotation
        for function in (
            spec.rotation.angles,
            spec.rotation.rotate,
            spec.rotation.theta,
            spec.rotation.scale,
        )
    ),
    *(spec.bias.per_distance for spec in SCHEMES if spec.bias is not None),
)


def _names(script: str) -> set[str]:
    """The names ``script`` reads."""
    return {
        node.id
        for node in ast.walk(ast.parse(script))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def called(script: str) -> tuple[Item, ...]:
    """The functions and classes of :data:`_LIBRARY` that ``script`` calls by name.

    >>> [item.__name__ for item in called("c = cosine(sinusoidal_encoding(4, 8)[0], y)")]
    ['cosine', 'sinusoidal_encoding']
    """
    names = {
        node.func.id
        for node in ast.walk(ast.parse(script))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    return tuple(item for item in _LIBRARY if item.__name__ in names)


def text_literal(text: str, *, indent: str = "    ") -> str:
    """``text`` as a Python expression that evaluates to exactly ``text``.

    Short text is one :func:`repr` literal; longer text is split at line ends and every
    ``_PIECE_CHARS`` characters into literals that Python joins inside parentheses.

    >>> text_literal('say "hi"')
    '\\'say "hi"\\''
    >>> print(text_literal("line one\\nline two, which goes on" * 2))
    (
        'line one\\n'
        'line two, which goes online one\\n'
        'line two, which goes on'
    )
    """
    pieces = [
        line[start : start + _PIECE_CHARS]
        for line in text.splitlines(keepends=True)
        for start in range(0, len(line), _PIECE_CHARS)
    ]
    if len(pieces) <= 1:
        return repr(text)
    return "(\n" + "".join(f"{indent}{piece!r}\n" for piece in pieces) + ")"


def _loader(batch: Batch) -> str:
    """The data-loading part: the book's GPTDatasetV1 and DataLoader when they give exactly
    the page's windows, otherwise the same sliding window written out, saying why."""
    if batch.same_as_book:
        return _BOOK_LOADER.format(batch_size=batch.num_windows)
    why = (
        f"(The book's GPTDatasetV1 would give {batch.book_num_windows} window(s) here, not "
        f"{batch.num_windows}:\n# it needs one more token after each window, as the target.)"
    )
    return _PLAIN_LOADER.format(why=why)


def _option_names() -> str:
    """What the options are, for the script's comment: "RoPE base θ"."""
    return ", ".join(option.label for option in OPTIONS.values()) or "no options"


def _compare(settings: Settings, batch: Batch) -> str:
    """Compare mode's part of the script ("" when compare mode is off)."""
    if not settings.compare_text:
        return ""
    text = without_lone_surrogates(settings.compare_text)
    second = encode(text)[: settings.context_length]
    if match_permutation(batch.window_token_ids(settings.window), second) is None:
        return (
            "\n# Compare mode: the second text is not the window's tokens in another order,\n"
            "# so there is nothing to compare (the page says why).\n"
        )
    return _COMPARE.format(
        ch03=BOOK_CH03_URL,
        compare_literal=text_literal(text),
        causal=settings.causal,
        attention_seed=ATTENTION_SEED,
        positioned=scheme_code(scheme(settings.scheme)).compare,
    )


def reproduction_script(
    settings: Settings,
    *,
    gpt2_revision: str = "main",
    view: CodeView = "embeddings",
    beyond: int | None = None,
) -> str:
    """A self-contained Python script (torch and tiktoken only) that recreates exactly the
    batch and the token, position and input matrices posviz shows for ``settings``, prints
    their shapes as section 2.8 does and, in compare mode, the self-attention comparison.

    ``view="geometry"`` or ``"distance"`` adds the numbers of that tab (see
    :mod:`posviz.codegen.shapes`; ``beyond``: the Distance tab's positions past the context
    length, default its default); ``"attention"`` the Attention tab's head: the book's
    ``MultiHeadAttention`` with the scheme's positions, printing the scores and weights
    (:mod:`posviz.codegen.attention`).

    With ``weights="gpt2"`` the script reads GPT-2's trained tables from the Hub at
    ``gpt2_revision`` (pass the commit the page shows, so the script reads the same tensors)
    with the standard library, and makes the two layers with ``nn.Embedding.from_pretrained``.

    Raises :class:`~posviz.config.SettingsError` for settings posviz would not show: values
    out of range, a text without tokens, or a window the text does not have.
    """
    batch = batch_for(settings)
    text = without_lone_surrogates(settings.text)
    if batch.num_windows == 0:
        raise SettingsError("text has no tokens: type some text to get a script")
    batch.window_span(settings.window)  # raises SettingsError naming the allowed windows

    gpt2 = settings.weights == "gpt2"
    summary = (
        f"{'weights=gpt2 (trained), ' if gpt2 else ''}"
        f"scheme={settings.scheme}, seed={settings.seed}, emb_dim={settings.emb_dim}, "
        f"context_length={settings.context_length}, stride={settings.effective_stride}, "
        f"window={settings.window}"
    )
    if settings.compare_text:
        summary += f", compare mode (causal={settings.causal})"
    if view != "embeddings":
        summary += f", and the {view} view"
    values = (
        f"text = {text_literal(text)}\n"
        f"context_length = {settings.context_length}  # T, the book's max_length\n"
        f"emb_dim = {settings.emb_dim}  # d, the book's output_dim\n"
        f"stride = {settings.effective_stride}\n"
        f"window = {settings.window}  # which window of the batch [B, T] the page shows\n"
        f"seed = {settings.seed}{'  # not used: trained tables' if gpt2 else ''}\n"
    )
    tables = (
        _GPT2_TABLES.format(commit=gpt2_revision)
        if gpt2
        else _TABLES.format(vocab_size=GPT2_VOCAB_SIZE)
    )
    downloads = "tiktoken downloads GPT-2's vocabulary on its first run, unless posviz is installed"
    if gpt2:
        downloads += (
            ";\nevery run reads GPT-2's two embedding tables, 157 MB, from the Hugging Face Hub"
        )
    tokenizer = tokenizer_part("tokenizer")
    body = _compare(settings, batch) + shapes_part(settings, view=view, beyond=beyond)
    if view == "attention":
        check_heads(settings)  # raises SettingsError for heads that do not fit d
        body += attention_part(settings)
    code = (
        tokenizer
        + tables
        + _loader(batch)
        + _EMBED
        + scheme_code(scheme(settings.scheme)).embed
        + _FOOTER
        + body
    )
    if "options" in _names(code):  # the schemes' options, where a function reads them
        values += f"options = {settings.options()!r}  # the schemes' options: {_option_names()}\n"
    copied = sources(*called(code))
    imports = {*_IMPORTS, *(_GPT2_IMPORTS if gpt2 else ()), *copied.imports}
    header = _HEADER.format(
        summary=summary, ch02=BOOK_CH02_URL, downloads=downloads, imports=import_block(imports)
    )
    return header + values + "\n" + _DEFINITIONS.format(definitions=copied.text) + code
