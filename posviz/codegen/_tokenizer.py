"""The part of every script that builds GPT-2's tokenizer (the section 2.8 scripts and the
training script): where posviz is installed, tiktoken's ``gpt2`` encoding from the copies of
GPT-2's files posviz ships (``posviz/data``, found without importing posviz, read by tiktoken's
own loader and checked against the hashes tiktoken publishes), so the script needs no network;
elsewhere ``tiktoken.get_encoding("gpt2")`` downloads them on its first run. The script copies
:func:`posviz.tokenizer.gpt2_encoding` (``posviz.codegen._source``) before it calls it.

>>> part = tokenizer_part("tokenizer")
>>> "def gpt2_tokenizer():" in part, part.rstrip().endswith("tokenizer = gpt2_tokenizer()")
(True, True)
"""

from __future__ import annotations

from typing import Final

from posviz.tokenizer import ENCODER_JSON_SHA256, VOCAB_BPE_SHA256

TOKENIZER_IMPORTS: Final = (
    "import importlib.util",
    "import os",
    "import tiktoken",
    "import tiktoken.load",
)
_TOKENIZER: Final = '''\
GPT2_FILES = ("vocab.bpe", "encoder.json")
GPT2_SHA256 = (  # the files' sha256, as tiktoken publishes them
    {vocab_bpe_sha256!r},
    {encoder_json_sha256!r},
)


def gpt2_tokenizer():
    """tiktoken's "gpt2" encoding. Where posviz is installed, from the copies of GPT-2's
    vocab.bpe and encoder.json it ships (posviz/data, found without importing posviz), read by
    tiktoken's own loader and checked against the hashes tiktoken publishes: no download.
    Elsewhere tiktoken downloads them on its first run and keeps them in its cache."""
    posviz_spec = importlib.util.find_spec("posviz")
    if posviz_spec is not None and posviz_spec.submodule_search_locations:
        folder = os.path.join(posviz_spec.submodule_search_locations[0], "data")
        vocab_bpe, encoder_json = (os.path.join(folder, name) for name in GPT2_FILES)
        if os.path.isfile(vocab_bpe) and os.path.isfile(encoder_json):
            ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
                vocab_bpe, encoder_json, *GPT2_SHA256
            )
            return gpt2_encoding(ranks)
    return tiktoken.get_encoding("gpt2")


{name} = gpt2_tokenizer()

'''


def tokenizer_part(name: str) -> str:
    """The code that sets ``name`` to GPT-2's tokenizer (after ``gpt2_encoding`` is defined)."""
    return _TOKENIZER.format(
        vocab_bpe_sha256=VOCAB_BPE_SHA256, encoder_json_sha256=ENCODER_JSON_SHA256, name=name
    )


# The text's own vocabulary, after the tokenizer part (posviz's is
# posviz.training.data.TextVocabulary, which encodes through posviz.tokenizer)
TEXT_VOCABULARY: Final = '''\
class TextVocabulary:
    """GPT-2's tokens of the text, numbered 0 … V-1 in the order of their GPT-2 ids: a table
    of the text's tokens, not GPT-2's 50,257 rows, makes every step several times faster."""

    def __init__(self, texts):
        found = set()
        for text in texts:
            found.update(tokenizer.encode(text))
        self.gpt2_ids = sorted(found)
        self.index = {token_id: i for i, token_id in enumerate(self.gpt2_ids)}

    def encode(self, text, allowed_special=frozenset()):
        token_ids = tokenizer.encode(text, allowed_special=allowed_special)
        return [self.index[token_id] for token_id in token_ids]
'''
