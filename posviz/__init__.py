"""posviz: see positional embeddings, as section 2.8 of *Build a Large Language Model
(From Scratch)* builds them: token embeddings + positional embeddings = input embeddings.

The public API is listed in ``__all__``; everything else is an implementation detail.

>>> from posviz import Settings, build_view
>>> view = build_view(Settings(text="Every effort moves you", context_length=4, emb_dim=256))
>>> view.batch.shape, view.embeddings.input_embeddings.shape
((1, 4), torch.Size([4, 256]))
"""

from posviz.batching import Batch, make_batch
from posviz.codegen import reproduction_script
from posviz.config import SCHEMES, Scheme, Settings, SettingsError, validate
from posviz.embeddings import SeededEmbeddings
from posviz.figures import embeddings_figure
from posviz.pipeline import EmbeddingTables, WindowEmbeddings, embed_window
from posviz.similarity import similarity_figure
from posviz.tokenizer import TokenizerDataError, decode, encode
from posviz.view import View, build_view

__all__ = [
    "SCHEMES",
    "Batch",
    "EmbeddingTables",
    "Scheme",
    "SeededEmbeddings",
    "Settings",
    "SettingsError",
    "TokenizerDataError",
    "View",
    "WindowEmbeddings",
    "build_view",
    "decode",
    "embed_window",
    "embeddings_figure",
    "encode",
    "make_batch",
    "reproduction_script",
    "similarity_figure",
    "validate",
]
