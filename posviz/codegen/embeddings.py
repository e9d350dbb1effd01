"""A short PyTorch + tiktoken script that recreates the batch and the matrices on screen.

:func:`reproduction_script` writes the book's section 2.8 code for the current settings:
tokenize with ``tiktoken.get_encoding("gpt2")``, seed torch, create ``token_embedding_layer``
and ``pos_embedding_layer`` (in that order, even when the scheme does not use the positional
table, so the random numbers are the same), cut the batch ``inputs [B, n]``, and combine the
tables by the scheme into ``token_embeddings [B, n, d]``, ``pos_embeddings [n, d]`` and
``input_embeddings [B, n, d]``, printing their shapes as the book does. Row ``window`` of the
batch is bit for bit the three matrices posviz shows. The batch is cut by the book's
``GPTDatasetV1`` and ``DataLoader`` whenever they give the page's windows (the *Book §2.8*
example: ``[8, 4]``); otherwise (the book's dataset needs one more token after each window, as
its target) by the same sliding window written out, with a comment saying why. The arithmetic
of the sinusoidal and RoPE schemes is written exactly as in :mod:`posviz.schemes`. In compare
mode the script adds the book's ``SelfAttention_v2`` and prints the comparison.

The user's text goes into the script as a Python string literal made by :func:`repr` (split
into short pieces that Python joins), so no text can end the literal or add code. Lone
surrogates are replaced by U+FFFD first, as :func:`posviz.tokenizer.encode` does.

>>> from posviz.config import Settings
>>> script = reproduction_script(Settings(text="Every effort moves you", context_length=4))
>>> "token_embedding_layer = torch.nn.Embedding(50257, emb_dim)" in script
True
"""

from __future__ import annotations

from typing import Final

from posviz.attention import ATTENTION_SEED
from posviz.batching import Batch
from posviz.codegen.attention import BIAS_FUNCTIONS, attention_part
from posviz.codegen.shapes import CodeView, shapes_part
from posviz.compare import match_permutation
from posviz.config import (
    GPT2_VOCAB_SIZE,
    SCORE_BIAS,
    Scheme,
    Settings,
    SettingsError,
    check_heads,
)
from posviz.schemes import ROPE_BASE, SINUSOIDAL_BASE
from posviz.tokenizer import encode, without_lone_surrogates
from posviz.view import batch_for

_PIECE_CHARS: Final = 60  # characters per piece of the text literal, for a readable script
BOOK_CH02_URL: Final = "https://github.com/rasbt/LLMs-from-scratch/tree/main/ch02"
# The chapter's notebook, whose section "2.8 Encoding word positions" posviz shows.
BOOK_CH02_NOTEBOOK_URL: Final = (
    f"{BOOK_CH02_URL.replace('/tree/', '/blob/')}/01_main-chapter-code/ch02.ipynb"
)
BOOK_CH03_URL: Final = "https://github.com/rasbt/LLMs-from-scratch/tree/main/ch03"

_HEADER: Final = '''\
"""Recreate posviz's view: token + position = input embeddings, as section 2.8 does.

Settings: {summary}
The book's chapter-2 code: {ch02}
Run it with: pip install torch tiktoken && python this_file.py
(the first run of tiktoken downloads GPT-2's vocabulary).
"""

import tiktoken
import torch

'''

_TABLES: Final = """\
tokenizer = tiktoken.get_encoding("gpt2")

torch.manual_seed(seed)
token_embedding_layer = torch.nn.Embedding({vocab_size}, emb_dim)
# Made right after the token table, before the data loader (the book makes it after):
# iterating a DataLoader draws a random number, which would change this table.
pos_embedding_layer = torch.nn.Embedding(context_length, emb_dim)  # made even if unused

"""

_GPT2_TABLES: Final = '''\
tokenizer = tiktoken.get_encoding("gpt2")

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

_GPT2_IMPORTS: Final = ("json", "os", "urllib.request")  # the standard library GPT-2 needs

_BOOK_LOADER: Final = """\
# The book's data loader (sections 2.6 and 2.8): windows of max_length tokens every stride
# tokens, each with its next-token targets. One batch holds all B windows the page shows.
class GPTDatasetV1(torch.utils.data.Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        self.input_ids = []
        self.target_ids = []
        token_ids = tokenizer.encode(txt, allowed_special={{"<|endoftext|>"}})
        for i in range(0, len(token_ids) - max_length, stride):
            input_chunk = token_ids[i : i + max_length]
            target_chunk = token_ids[i + 1 : i + max_length + 1]
            self.input_ids.append(torch.tensor(input_chunk))
            self.target_ids.append(torch.tensor(target_chunk))

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx], self.target_ids[idx]


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
{prelude}
with torch.no_grad():
    token_embeddings = token_embedding_layer(inputs)  # [B, n, emb_dim]
"""

_ROPE_PRELUDE: Final = '''
# RoPE's angles (as in the book's Llama notebook): dims j and j + d/2 of position p turn by
# p * theta_j, theta_j = base^(-2j/d); an odd d leaves its last dim unrotated.
half = emb_dim // 2
inv_freq = 1.0 / ({rope_base!r} ** (torch.arange(0, 2 * half, 2)[:half].float() / (2 * half)))
angles = torch.arange(n, dtype=torch.float32)[:, None] * inv_freq[None, :]  # [n, d/2]
pad = torch.zeros(n, emb_dim - 2 * half)  # odd d: the last dim is not rotated
angles = torch.cat([angles, angles, pad], dim=1)  # [n, emb_dim]


def rotate(x):
    """Rotate the rows of x [..., n, emb_dim] by their positions 0..n-1."""
    x1, x2, rest = x[..., :half], x[..., half : 2 * half], x[..., 2 * half :]
    rotated = torch.cat((-x2, x1, torch.zeros_like(rest)), dim=-1)
    return x * torch.cos(angles) + rotated * torch.sin(angles)

'''

_SCHEMES: Final[dict[Scheme, str]] = {
    "learned": """\
    # learned (GPT-2, the book): add row p of the positional table to position p
    pos_embeddings = pos_embedding_layer(torch.arange(n))  # [n, emb_dim]
    input_embeddings = token_embeddings + pos_embeddings  # [B, n, emb_dim]
""",
    "sinusoidal": """\
    # sinusoidal (Vaswani et al. 2017): PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...)
    positions = torch.arange(n, dtype=torch.float64)[:, None]  # [n, 1]
    two_i = torch.arange(0, emb_dim, 2, dtype=torch.float64)  # 2i for each pair
    angles = positions / {sinusoidal_base!r} ** (two_i / emb_dim)  # [n, ceil(d/2)]
    encoding = torch.empty(n, emb_dim, dtype=torch.float64)
    encoding[:, 0::2] = torch.sin(angles)
    encoding[:, 1::2] = torch.cos(angles[:, : emb_dim // 2])  # odd d: last dim is a sine
    pos_embeddings = encoding.to(torch.float32)  # [n, emb_dim]
    input_embeddings = token_embeddings + pos_embeddings  # [B, n, emb_dim]
""",
    "none": """\
    # none: no position signal; attention would be blind to word order
    pos_embeddings = torch.zeros(n, emb_dim)  # [n, emb_dim]
    input_embeddings = token_embeddings.clone()  # [B, n, emb_dim]
""",
    "alibi": """\
    # ALiBi: nothing is added to the input; it adds -m * (i - j) to the attention scores
    pos_embeddings = torch.zeros(n, emb_dim)  # [n, emb_dim]
    input_embeddings = token_embeddings.clone()  # [B, n, emb_dim]
""",
    "t5": """\
    # T5's relative bias: nothing is added to the input; it adds E[bucket(j - i)] to the scores
    pos_embeddings = torch.zeros(n, emb_dim)  # [n, emb_dim]
    input_embeddings = token_embeddings.clone()  # [B, n, emb_dim]
""",
    "rope": """\
    # RoPE (Llama): nothing is added; rotate() turns each pair of dims by its position.
    # Real models rotate queries and keys inside attention; here the token vectors.
    pos_embeddings = torch.cos(angles)  # [n, emb_dim]: what posviz shows in the middle panel
    input_embeddings = rotate(token_embeddings)  # [B, n, emb_dim]
""",
}

_FOOTER: Final = """
print("token_embeddings:", token_embeddings.shape)  # [B, n, emb_dim]
print("pos_embeddings:", pos_embeddings.shape)  # [n, emb_dim]
print("input_embeddings:", input_embeddings.shape)  # [B, n, emb_dim]
# The page shows window `window` of the batch: token_embeddings[window], pos_embeddings,
# input_embeddings[window], [n, emb_dim] each.
"""

_COMPARE: Final = '''
# Compare mode: the window on screen and a second text, the same tokens in another order,
# through the book's self-attention (chapter 3: {ch03}).
compare_text = {compare_literal}
causal = {causal}  # True: token i attends to tokens 0..i only, as GPT does
first_ids = inputs[window]  # [n]
second_ids = torch.tensor(
    tokenizer.encode(compare_text, allowed_special={{"<|endoftext|>"}})[:context_length]
)  # [n]


class SelfAttention_v2(torch.nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)


def context_vectors(sa, x, causal, rope, bias=None):
    """SelfAttention_v2.forward, with section 3.5's causal mask, RoPE and a bias added to the
    scaled scores (ALiBi, T5) as options."""
    keys = sa.W_key(x)
    queries = sa.W_query(x)
    values = sa.W_value(x)
    if rope:  # RoPE rotates queries and keys, not the input
        queries, keys = rotate(queries), rotate(keys)
    attn_scores = queries @ keys.T / keys.shape[-1] ** 0.5
    if bias is not None:  # ALiBi, T5: added to the scaled scores, before the softmax
        attn_scores = attn_scores + bias
    if causal:
        mask = torch.triu(torch.ones(len(x), len(x)), diagonal=1)
        attn_scores = attn_scores.masked_fill(mask.bool(), -torch.inf)
    attn_weights = torch.softmax(attn_scores, dim=-1)
    return attn_weights @ values
{bias_functions}

def cosine(a, b):
    return float(a @ b) / float(torch.linalg.vector_norm(a) * torch.linalg.vector_norm(b))


torch.manual_seed({attention_seed})  # the book's seed for SelfAttention_v2
sa_v2 = SelfAttention_v2(emb_dim, emb_dim).double()  # float64: a reordering stays exact
with torch.no_grad():
    first_tokens = token_embedding_layer(first_ids)  # [n, emb_dim]
    second_tokens = token_embedding_layer(second_ids)  # [n, emb_dim]
    context_first = context_vectors(sa_v2, first_tokens.double(), causal, rope=False)
    context_second = context_vectors(sa_v2, second_tokens.double(), causal, rope=False)
{positioned}
# The mean of the context vectors: a summary of the text that ignores order.
no_positions = cosine(context_first.mean(dim=0), context_second.mean(dim=0))
positions = cosine(positioned_first.mean(dim=0), positioned_second.mean(dim=0))
print(f"cosine of the mean context vectors: no positions {{no_positions:.6f}}")
print(f"cosine of the mean context vectors: with positions {{positions:.6f}}")
'''

_ADDED: Final = """\
    # {scheme}: positions added to the token embeddings
    positioned_first = context_vectors(
        sa_v2, (first_tokens + pos_embeddings).double(), causal, rope=False
    )
    positioned_second = context_vectors(
        sa_v2, (second_tokens + pos_embeddings).double(), causal, rope=False
    )"""
_COMPARE_POSITIONED: Final[dict[Scheme, str]] = {
    "learned": _ADDED.format(scheme="learned"),
    "sinusoidal": _ADDED.format(scheme="sinusoidal"),
    "none": """\
    # none: no position signal, the same computation again
    positioned_first = context_vectors(sa_v2, first_tokens.double(), causal, rope=False)
    positioned_second = context_vectors(sa_v2, second_tokens.double(), causal, rope=False)""",
    "rope": """\
    # RoPE: the input stays the token embeddings; queries and keys are rotated
    positioned_first = context_vectors(sa_v2, first_tokens.double(), causal, rope=True)
    positioned_second = context_vectors(sa_v2, second_tokens.double(), causal, rope=True)""",
    "alibi": """\
    # ALiBi: the input stays the token embeddings; -m * (i - j) is added to the scores, with
    # the slope of a one-head layer (SelfAttention_v2 is one head); without the causal mask
    # posviz makes it symmetric, -m * |i - j|
    positions = torch.arange(len(first_ids))
    distance = (positions[None, :] - positions[:, None]).abs()  # [n, n]: |i - j|
    bias = torch.tensor(get_slopes(1), dtype=torch.float64)[0] * (-distance).double()
    positioned_first = context_vectors(sa_v2, first_tokens.double(), causal, False, bias)
    positioned_second = context_vectors(sa_v2, second_tokens.double(), causal, False, bias)""",
    "t5": """\
    # T5: the input stays the token embeddings; E[bucket(j - i)] is added to the scores, E
    # T5's relative_attention_bias for one head, made after torch.manual_seed(seed): its
    # random init (T5 learns it)
    torch.manual_seed(seed)
    relative_attention_bias = torch.nn.Embedding(32, 1)  # E [32, H]
    positions = torch.arange(len(first_ids))
    buckets = relative_position_bucket(positions[None, :] - positions[:, None])  # [n, n]
    bias = relative_attention_bias.weight.double()[buckets][..., 0]  # [n, n], head 0
    positioned_first = context_vectors(sa_v2, first_tokens.double(), causal, False, bias)
    positioned_second = context_vectors(sa_v2, second_tokens.double(), causal, False, bias)""",
}


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
        positioned=_COMPARE_POSITIONED[settings.scheme],
        bias_functions=BIAS_FUNCTIONS if settings.scheme in SCORE_BIAS else "",
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
    ``MultiHeadAttention``, the scheme's RoPE, slopes or buckets written out, printing the
    scores and weights (:mod:`posviz.codegen.attention`).

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
        f"seed = {settings.seed}{'  # not used: trained tables' if gpt2 else ''}\n\n"
    )
    tables = (
        _GPT2_TABLES.format(commit=gpt2_revision)
        if gpt2
        else _TABLES.format(vocab_size=GPT2_VOCAB_SIZE)
    )
    prelude = _ROPE_PRELUDE.format(rope_base=ROPE_BASE) if settings.scheme == "rope" else ""
    header = _HEADER.format(summary=summary, ch02=BOOK_CH02_URL)
    if gpt2:
        header = header.replace(
            "(the first run of tiktoken downloads GPT-2's vocabulary).\n",
            "(the first run of tiktoken downloads GPT-2's vocabulary; every run reads GPT-2's\n"
            "two embedding tables, 157 MB, from the Hugging Face Hub).\n",
        )
    body = _compare(settings, batch) + shapes_part(settings, view=view, beyond=beyond)
    if view == "attention":
        check_heads(settings)  # raises SettingsError for heads that do not fit d
        body += attention_part(settings)
    imports = sorted({*(_GPT2_IMPORTS if gpt2 else ()), *(("math",) if "math." in body else ())})
    if imports:
        lines = "".join(f"import {name}\n" for name in imports)
        header = header.replace("import tiktoken\n", f"{lines}\nimport tiktoken\n", 1)
    return (
        header
        + values
        + tables
        + _loader(batch)
        + _EMBED.format(prelude=prelude)
        + _SCHEMES[settings.scheme].format(sinusoidal_base=SINUSOIDAL_BASE)
        + _FOOTER
        + body
    )
