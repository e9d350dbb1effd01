"""posviz: see positional embeddings, as section 2.8 of *Build a Large Language Model
(From Scratch)* builds them: token embeddings + positional embeddings = input embeddings.

The public API is listed in ``__all__``; everything else is an implementation detail.

>>> from posviz import SeededEmbeddings, embed_window, encode, make_batch
>>> batch = make_batch(encode("Every effort moves you"), context_length=4)
>>> tables = SeededEmbeddings.create(seed=123, emb_dim=256)
>>> embed_window(tables, batch.window_token_ids(0), context_length=4).input_embeddings.shape
torch.Size([4, 256])
"""

from posviz.batching import Batch, make_batch
from posviz.codegen import reproduction_script
from posviz.config import SCHEMES, Scheme, Settings, SettingsError, validate
from posviz.embeddings import SeededEmbeddings
from posviz.figures import embeddings_figure
from posviz.pipeline import WindowEmbeddings, embed_window
from posviz.similarity import similarity_figure
from posviz.tokenizer import TokenizerDataError, decode, encode

__all__ = [
    "SCHEMES",
    "Batch",
    "Scheme",
    "SeededEmbeddings",
    "Settings",
    "SettingsError",
    "TokenizerDataError",
    "WindowEmbeddings",
    "decode",
    "embed_window",
    "embeddings_figure",
    "encode",
    "make_batch",
    "reproduction_script",
    "similarity_figure",
    "validate",
]
