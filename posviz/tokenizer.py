"""GPT-2's BPE tokenizer, offline: tiktoken's ``gpt2`` encoding built from vendored files.

``tiktoken.get_encoding("gpt2")`` downloads ``vocab.bpe`` and ``encoder.json`` and caches them
in a temporary folder. posviz ships byte-identical copies in ``posviz/data`` (OpenAI's files,
modified MIT licence, see the README), checks their sha256 against the hashes tiktoken publishes
in ``tiktoken_ext/openai_public.py``, and builds the same :class:`tiktoken.Encoding` without
network access and without writing any cache.

>>> encode("hello world")
[31373, 995]
>>> encode("tea? <|endoftext|> In")
[660, 64, 30, 220, 50256, 554]
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Sequence
from importlib import resources
from typing import Final

import tiktoken
from tiktoken_ext.openai_public import ENDOFTEXT, r50k_pat_str

from posviz.config import GPT2_VOCAB_SIZE
from posviz.token_text import character_labels

END_OF_TEXT: Final = ENDOFTEXT
END_OF_TEXT_ID: Final = 50256

# sha256 of OpenAI's files, as published in tiktoken_ext/openai_public.py (function gpt2).
VOCAB_BPE_SHA256: Final = "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"
ENCODER_JSON_SHA256: Final = "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_CHARACTER_REACH: Final = 3  # tokens a split character can reach past a span
_DATA_FILES: Final = {"vocab.bpe": VOCAB_BPE_SHA256, "encoder.json": ENCODER_JSON_SHA256}


class TokenizerDataError(RuntimeError):
    """The vendored GPT-2 files are missing or not the published ones."""


def read_checked(name: str) -> bytes:
    """Read the vendored file ``name`` and check its sha256 against tiktoken's published hash."""
    expected = _DATA_FILES[name]
    try:
        data = resources.files("posviz").joinpath("data").joinpath(name).read_bytes()
    except OSError as error:
        raise TokenizerDataError(
            f"GPT-2 tokenizer file posviz/data/{name} is missing ({error.strerror}). "
            "Restore it from the repository (git checkout -- posviz/data)."
        ) from error
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise TokenizerDataError(
            f"GPT-2 tokenizer file posviz/data/{name} is corrupted: sha256 {actual}, "
            f"expected {expected}. Restore it from the repository (git checkout -- posviz/data)."
        )
    return data


def _data_gym_byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-ins for raw bytes (the "data gym" alphabet), mapped back."""
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    decoder = {chr(b): b for b in printable}
    others = [b for b in range(256) if b not in decoder.values()]
    decoder.update({chr(256 + n): b for n, b in enumerate(others)})
    return decoder


def mergeable_ranks_from(vocab_bpe: bytes, encoder_json: bytes) -> dict[bytes, int]:
    """The BPE ranks tiktoken derives from GPT-2's two files (same rule as
    ``tiktoken.load.data_gym_to_mergeable_bpe_ranks``, which can only read from paths and
    would write a cache), cross-checked against ``encoder.json`` as tiktoken does."""
    byte_of = _data_gym_byte_decoder()
    as_latin1 = str.maketrans({ch: chr(b) for ch, b in byte_of.items()})

    def to_bytes(symbol: str) -> bytes:  # str.translate: 3x faster than a per-char loop
        return symbol.translate(as_latin1).encode("latin-1")

    ranks = {bytes([b]): rank for rank, b in enumerate(sorted(byte_of.values(), key=_rank_key))}
    merges = vocab_bpe.decode("utf-8").split("\n")[1:-1]  # first line is a version header
    for first, second in (merge.split() for merge in merges):
        ranks[to_bytes(first) + to_bytes(second)] = len(ranks)

    encoder = {to_bytes(k): v for k, v in json.loads(encoder_json).items() if k != END_OF_TEXT}
    if ranks != encoder:
        raise TokenizerDataError("vocab.bpe and encoder.json disagree: not GPT-2's files")
    return ranks


def _rank_key(byte: int) -> tuple[int, int]:
    # Printable bytes take the first ranks in byte order, the rest follow in byte order.
    printable = chr(byte).isprintable() and chr(byte) != " "
    return (0 if printable else 1, byte)


def gpt2_encoding(mergeable_ranks: dict[bytes, int]) -> tiktoken.Encoding:
    """tiktoken's ``gpt2`` encoding made from GPT-2's BPE ranks (as
    ``tiktoken_ext.openai_public.gpt2`` makes it): its pattern, ``<|endoftext|>`` = 50256."""
    return tiktoken.Encoding(
        name="gpt2",
        pat_str=r50k_pat_str,
        mergeable_ranks=mergeable_ranks,
        special_tokens={END_OF_TEXT: END_OF_TEXT_ID},
        explicit_n_vocab=GPT2_VOCAB_SIZE,
    )


def _build_encoding() -> tiktoken.Encoding:
    return gpt2_encoding(
        mergeable_ranks_from(read_checked("vocab.bpe"), read_checked("encoder.json"))
    )


class _EncodingOnce:
    """tiktoken's ``gpt2`` encoding, built once per process from the checked vendored files.

    ``functools.lru_cache`` would not do: it lets every caller that arrives before the first
    build finishes run its own build (a class of 30 opening the app together built it 30
    times, about 30 MB and 0.4 s of CPU each). Here concurrent first callers wait for one
    build. ``cache_clear()`` forgets it (tests that damage the data files).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._encoding: tiktoken.Encoding | None = None

    def __call__(self) -> tiktoken.Encoding:
        encoding = self._encoding
        if encoding is None:
            with self._lock:
                if self._encoding is None:
                    self._encoding = _build_encoding()
                encoding = self._encoding
        return encoding

    def cache_clear(self) -> None:
        """Forget the built encoding (tests build it again from other files)."""
        with self._lock:
            self._encoding = None


get_encoding: Final = _EncodingOnce()


def encode(text: str) -> list[int]:
    """Token ids of ``text``; ``<|endoftext|>`` becomes 50256, as the book allows it.

    Lone surrogates (which Python strings can hold but UTF-8 cannot) become U+FFFD first,
    so any ``str`` encodes.
    """
    return get_encoding().encode(without_lone_surrogates(text), allowed_special={END_OF_TEXT})


def without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (valid in a Python ``str``, not in UTF-8) replaced
    by U+FFFD, as a browser would send it."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def token_bytes(token_ids: list[int]) -> list[bytes]:
    """The raw bytes of each token (a token can hold part of a multi-byte character)."""
    encoding = get_encoding()
    return [encoding.decode_single_token_bytes(token_id) for token_id in token_ids]


def token_texts(token_ids: Sequence[int], span: range | None = None) -> tuple[str, ...]:
    """The tokens ``token_ids[span]`` (default: all) as posviz writes them everywhere: chips,
    tick and row labels, hovers, sentences (:func:`posviz.token_text.character_labels`).

    Whitespace is made visible, and a character whose bytes are split over several tokens is
    decoded across them and named in each, ``東 (1 of 2)``. The tokens are read in the
    context of the whole of ``token_ids``, so a character split across the edge of ``span``
    (a window) is still named, never shown as loose bytes.

    >>> token_texts([32, 8278, 198])
    ('A', '␣rose', '↵')
    >>> token_texts([30266, 109, 8278])
    ('東 (1 of 2)', '東 (2 of 2)', '␣rose')
    >>> token_texts([30266, 109, 8278], range(1, 3))
    ('東 (2 of 2)', '␣rose')

    Only the downloads keep each token's exact bytes (:func:`token_bytes`).
    """
    ids = list(token_ids)
    shown = range(len(ids)) if span is None else span
    if shown.step != 1:
        raise ValueError(f"span must be a range of step 1, got {shown!r}")
    # A UTF-8 character has at most 4 bytes and every GPT-2 token at least 1, so a character
    # that crosses into the span starts at most 3 tokens before it and ends at most 3 after;
    # decoding from there names it as the whole text would (UTF-8 resynchronises at once).
    start = max(shown.start - _CHARACTER_REACH, 0)
    stop = min(shown.stop + _CHARACTER_REACH, len(ids))
    labels = character_labels(token_bytes(ids[start:stop]))
    return labels[shown.start - start : shown.stop - start]


def decode(token_ids: list[int]) -> str:
    """The text of ``token_ids`` (invalid UTF-8 at the edges shown as U+FFFD)."""
    return get_encoding().decode(token_ids, errors="replace")
