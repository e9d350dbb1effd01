"""A short PyTorch + tiktoken script that recreates the three matrices on screen.

:func:`reproduction_script` writes the book's section 2.8 code for the current settings:
tokenize with ``tiktoken.get_encoding("gpt2")``, cut the windows with the stride, seed torch,
create ``token_embedding_layer`` and ``pos_embedding_layer`` (in that order, even when the
scheme does not use the positional table, so the random numbers are the same), and combine them
by the scheme. It ends with ``token_embeddings``, ``pos_embeddings`` and ``input_embeddings``
(``[n, emb_dim]`` each), bit for bit the tensors posviz shows. The arithmetic of the sinusoidal
and RoPE schemes is written exactly as in :mod:`posviz.schemes`.

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

from posviz.config import GPT2_VOCAB_SIZE, Scheme, Settings, SettingsError
from posviz.schemes import ROPE_BASE, SINUSOIDAL_BASE
from posviz.tokenizer import without_lone_surrogates
from posviz.view import batch_for

_PIECE_CHARS: Final = 60  # characters per piece of the text literal, for a readable script

_HEADER: Final = '''\
"""Recreate posviz's three matrices: token + position = input embeddings.

Settings: {summary}
Run it with: pip install torch tiktoken && python this_file.py
(the first run of tiktoken downloads GPT-2's vocabulary).
"""

import tiktoken
import torch

'''

_PIPELINE: Final = """\
tokenizer = tiktoken.get_encoding("gpt2")
token_ids = tokenizer.encode(text, allowed_special={{"<|endoftext|>"}})

# Windows of context_length tokens, one every stride tokens (section 2.8's data loader);
# a text shorter than context_length gives one window of all its tokens.
starts = range(0, max(len(token_ids) - context_length, 0) + 1, stride)
inputs = torch.tensor(token_ids[starts[window] : starts[window] + context_length])  # [n]
n = len(inputs)

torch.manual_seed(seed)
token_embedding_layer = torch.nn.Embedding({vocab_size}, emb_dim)
pos_embedding_layer = torch.nn.Embedding(context_length, emb_dim)  # made even if unused

with torch.no_grad():
    token_embeddings = token_embedding_layer(inputs)  # [n, emb_dim]
"""

_SCHEMES: Final[dict[Scheme, str]] = {
    "learned": """\
    # learned (GPT-2, the book): add row p of the positional table to position p
    pos_embeddings = pos_embedding_layer(torch.arange(n))  # [n, emb_dim]
    input_embeddings = token_embeddings + pos_embeddings  # [n, emb_dim]
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
    input_embeddings = token_embeddings + pos_embeddings  # [n, emb_dim]
""",
    "none": """\
    # none: no position signal; attention would be blind to word order
    pos_embeddings = torch.zeros_like(token_embeddings)  # [n, emb_dim]
    input_embeddings = token_embeddings.clone()  # [n, emb_dim]
""",
    "rope": """\
    # RoPE (Llama): rotate dims (j, j + d/2) of position p by p * theta_j, nothing is added.
    # Real models rotate queries and keys inside attention; here the token vectors.
    half = emb_dim // 2
    inv_freq = 1.0 / ({rope_base!r} ** (torch.arange(0, 2 * half, 2)[:half].float() / (2 * half)))
    angles = torch.arange(n, dtype=torch.float32)[:, None] * inv_freq[None, :]  # [n, d/2]
    pad = torch.zeros(n, emb_dim - 2 * half)  # odd d: the last dim is not rotated
    angles = torch.cat([angles, angles, pad], dim=1)  # [n, emb_dim]
    x1, x2 = token_embeddings[:, :half], token_embeddings[:, half : 2 * half]
    rest = token_embeddings[:, 2 * half :]
    rotated = torch.cat((-x2, x1, torch.zeros_like(rest)), dim=1)
    pos_embeddings = torch.cos(angles)  # what posviz shows in the middle panel
    input_embeddings = token_embeddings * torch.cos(angles) + rotated * torch.sin(angles)
""",
}

_FOOTER: Final = """
print("inputs:", inputs.shape)  # [n]: window {window} of the batch, n <= context_length
print("token_embeddings:", token_embeddings.shape)  # [n, emb_dim]
print("pos_embeddings:", pos_embeddings.shape)  # [n, emb_dim]
print("input_embeddings:", input_embeddings.shape)  # [n, emb_dim]
"""


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


def reproduction_script(settings: Settings) -> str:
    """A self-contained Python script (torch and tiktoken only) that recreates exactly the
    token, position and input matrices posviz shows for ``settings``.

    Raises :class:`~posviz.config.SettingsError` for settings posviz would not show: values
    out of range, a text without tokens, or a window the text does not have.
    """
    batch = batch_for(settings)
    text = without_lone_surrogates(settings.text)
    if batch.num_windows == 0:
        raise SettingsError("text has no tokens: type some text to get a script")
    batch.window_span(settings.window)  # raises SettingsError naming the allowed windows

    summary = (
        f"scheme={settings.scheme}, seed={settings.seed}, emb_dim={settings.emb_dim}, "
        f"context_length={settings.context_length}, stride={settings.effective_stride}, "
        f"window={settings.window}"
    )
    values = (
        f"text = {text_literal(text)}\n"
        f"context_length = {settings.context_length}  # T, rows of the positional table\n"
        f"emb_dim = {settings.emb_dim}\n"
        f"stride = {settings.effective_stride}\n"
        f"window = {settings.window}  # which window of the batch [B, T] to show\n"
        f"seed = {settings.seed}\n\n"
    )
    pipeline = _PIPELINE.format(vocab_size=GPT2_VOCAB_SIZE)
    scheme = _SCHEMES[settings.scheme].format(sinusoidal_base=SINUSOIDAL_BASE, rope_base=ROPE_BASE)
    return (
        _HEADER.format(summary=summary)
        + values
        + pipeline
        + scheme
        + _FOOTER.format(window=settings.window)
    )
