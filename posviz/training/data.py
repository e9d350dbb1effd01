"""The text the book trains on and its data loader (chapter 2), with a vocabulary reduced to
the text's own tokens.

*The Verdict* (Edith Wharton, 1908; public domain) ships with posviz as
``posviz/data/the-verdict.txt``, the book repository's ``the-verdict.txt`` (20,479
characters, 5,145 GPT-2 tokens; see ``posviz/data/the-verdict-source.txt``), checked by
sha256 when read.

``GPTDatasetV1`` and ``create_dataloader_v1`` are chapter 2's (after Sebastian Raschka's
*Build a Large Language Model (From Scratch)*, Apache License 2.0, see
:mod:`posviz.training.model`), with two keyword arguments the book does not have: the
``tokenizer`` (the book makes GPT-2's inside) and the loader's ``generator``. Without its
own generator a ``DataLoader`` draws a seed from torch's global generator, the one dropout
draws from, each time it is iterated (shuffled or not), so evaluating (the book's
``evaluate_model`` iterates its loaders) would change the training that follows.

A GPT-2 vocabulary of 50,257 rows for a text of 1,417 distinct tokens makes every step about
eight times slower; :class:`TextVocabulary` numbers the text's tokens 0 … V-1 (in the order
of their GPT-2 ids) and is the tokenizer the dataset uses.

>>> text = the_verdict()
>>> len(text), text[:29]
(20479, 'I HAD always thought Jack Gis')
>>> vocabulary = TextVocabulary.from_texts(split_text(text, train_ratio=0.9))
>>> vocabulary.vocab_size, vocabulary.decode(vocabulary.encode(" Jack Gisburn"))
(1417, ' Jack Gisburn')
>>> words = "one two three four five six"
>>> loader = create_dataloader_v1(words, batch_size=2, max_length=2, stride=2, shuffle=False,
...                               tokenizer=TextVocabulary.from_texts([words]))
>>> inputs, targets = next(iter(loader))
>>> inputs.tolist(), targets.tolist()
([[0, 1], [2, 3]], [[1, 2], [3, 4]])
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from importlib.resources import files
from typing import Final, Protocol

import torch
from torch.utils.data import DataLoader, Dataset

from posviz.tokenizer import decode, encode

VERDICT_FILE: Final = "the-verdict.txt"
VERDICT_SHA256: Final = "b41e41a68f0398a3154ae69e2e4c0e2694e17fe0d66730536837f1b01935b31f"
VERDICT_URL: Final = (  # where the book's code downloads it from
    "https://raw.githubusercontent.com/rasbt/LLMs-from-scratch/main/ch02/01_main-chapter-code/"
    "the-verdict.txt"
)


class TrainingDataError(ValueError):
    """The shipped text is missing or not the one posviz was made with."""


def the_verdict() -> str:
    """*The Verdict*, as the book's repository has it (checked by sha256)."""
    try:
        data = files("posviz").joinpath("data", VERDICT_FILE).read_bytes()
    except OSError as error:
        raise TrainingDataError(
            f"posviz/data/{VERDICT_FILE} cannot be read ({error}): reinstall posviz"
        ) from error
    digest = hashlib.sha256(data).hexdigest()
    if digest != VERDICT_SHA256:
        raise TrainingDataError(
            f"posviz/data/{VERDICT_FILE} has sha256 {digest}, expected {VERDICT_SHA256}: the "
            "file was changed; restore it from posviz's repository"
        )
    return data.decode("utf-8")


def split_text(text: str, *, train_ratio: float) -> tuple[str, str]:
    """The book's split (chapter 5): the first ``train_ratio`` of the characters for
    training, the rest for validation.

    >>> split_text("abcdefghij", train_ratio=0.9)
    ('abcdefghi', 'j')
    """
    split_idx = int(train_ratio * len(text))
    return text[:split_idx], text[split_idx:]


class Tokenizer(Protocol):
    """What ``GPTDatasetV1`` needs of a tokenizer: tiktoken's ``encode``."""

    def encode(self, text: str, *, allowed_special: AbstractSet[str]) -> list[int]:
        """Token ids of ``text``, the special tokens ``allowed_special`` allowed in it."""
        ...


@dataclass(frozen=True)
class TextVocabulary:
    """GPT-2's tokens of a text, numbered 0 … V-1 in the order of their GPT-2 ids."""

    gpt2_ids: tuple[int, ...]  # gpt2_ids[i]: the GPT-2 id of token i

    @classmethod
    def from_texts(cls, texts: Sequence[str]) -> TextVocabulary:
        """Every GPT-2 token of ``texts``, each tokenized on its own (as the loaders do)."""
        found: set[int] = set()
        for text in texts:
            found.update(encode(text))
        return cls(tuple(sorted(found)))

    @property
    def vocab_size(self) -> int:
        """V: rows of the model's token table and columns of its output head."""
        return len(self.gpt2_ids)

    def encode(self, text: str, *, allowed_special: AbstractSet[str] = frozenset()) -> list[int]:
        """``text``'s token ids in this vocabulary (:class:`TrainingDataError` for a GPT-2
        token it does not hold). ``<|endoftext|>`` is one token, as posviz reads every text;
        ``allowed_special`` is tiktoken's argument, which the book's ``GPTDatasetV1`` passes."""
        index = {gpt2_id: i for i, gpt2_id in enumerate(self.gpt2_ids)}
        ids = encode(text)
        missing = sorted(set(ids) - index.keys())
        if missing:
            raise TrainingDataError(
                f"GPT-2 tokens {missing[:5]} are not in this {self.vocab_size}-token "
                "vocabulary: build it from every text the loaders read"
            )
        return [index[token_id] for token_id in ids]

    def decode(self, token_ids: Sequence[int]) -> str:
        """The text of ``token_ids`` of this vocabulary."""
        return decode([self.gpt2_ids[i] for i in token_ids])


class GPTDatasetV1(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Chapter 2's dataset: windows of ``max_length`` token ids every ``stride`` tokens, each
    with its targets, the same ids one position later."""

    def __init__(self, txt: str, tokenizer: Tokenizer, max_length: int, stride: int) -> None:
        self.input_ids: list[torch.Tensor] = []
        self.target_ids: list[torch.Tensor] = []
        token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
        for i in range(0, len(token_ids) - max_length, stride):
            input_chunk = token_ids[i : i + max_length]
            target_chunk = token_ids[i + 1 : i + max_length + 1]
            self.input_ids.append(torch.tensor(input_chunk))  # [max_length]
            self.target_ids.append(torch.tensor(target_chunk))

    def __len__(self) -> int:
        return len(self.input_ids)

    def __getitem__(self, idx: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.input_ids[idx], self.target_ids[idx]


def create_dataloader_v1(
    txt: str,
    batch_size: int = 4,
    max_length: int = 256,
    stride: int = 128,
    shuffle: bool = True,
    drop_last: bool = True,
    num_workers: int = 0,
    *,
    tokenizer: Tokenizer,
    generator: torch.Generator | None = None,
) -> DataLoader[tuple[torch.Tensor, torch.Tensor]]:
    """Chapter 2's loader over ``txt``: batches ``(inputs [B, max_length], targets [B,
    max_length])``, shuffled (if ``shuffle``) with ``generator``. A loader without a
    generator of its own draws from torch's global one each time it is iterated."""
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        drop_last=drop_last,
        num_workers=num_workers,
        generator=generator,
    )
