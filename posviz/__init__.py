"""posviz: see positional embeddings, as section 2.8 of *Build a Large Language Model
(From Scratch)* builds them: token embeddings + positional embeddings = input embeddings.

The public API is listed in ``__all__``; everything else is an implementation detail. In a
notebook, ``posviz.show("A rose is a rose", context_length=8)`` draws a view in one call.

>>> from posviz import Settings, build_view
>>> view = build_view(Settings(text="Every effort moves you", context_length=4, emb_dim=256))
>>> view.batch.shape, view.embeddings.input_embeddings.shape
((1, 4), torch.Size([4, 256]))

Word order (compare mode): the same tokens in another order through the book's
self-attention. Without positions the mean context vectors are the same; with them, not.

>>> from posviz import book_attention_weights, compare_with_text
>>> pair = compare_with_text(
...     SeededEmbeddings.create(seed=123, emb_dim=256),
...     encode("The dog bites the man"), "The man bites the dog", context_length=5,
...     scheme="learned", weights=book_attention_weights(d_in=256, d_out=256))
>>> round(pair.without_positions.mean_cosine, 6), pair.with_positions.mean_cosine < 0.999
(1.0, True)

What training and distance do to positions: the positional table's principal components
(beside a contrasting table), and the cosine of positions i and i + k per scheme.

>>> shown = build_view(Settings(context_length=64, emb_dim=16, scheme="sinusoidal"))
>>> build_geometry(shown).main.directions_90, build_distance(shown).curves[1].spread < 1e-5
(6, True)
"""

from posviz.attention import book_attention_weights, self_attention
from posviz.batching import Batch, make_batch
from posviz.codegen import reproduction_script
from posviz.compare import OrderComparison, compare_order, compare_with_text
from posviz.config import SCHEMES, Scheme, Settings, SettingsError, validate, with_options
from posviz.distance import DistanceView, build_distance
from posviz.embeddings import SeededEmbeddings
from posviz.geometry import GeometryView, build_geometry
from posviz.notebook import show
from posviz.pipeline import EmbeddingTables, WindowEmbeddings, embed_window
from posviz.plots.distance import distance_figure
from posviz.plots.geometry import geometry_figure
from posviz.plots.heatmaps import embeddings_figure, similarity_figure
from posviz.plots.word_order import compare_figure
from posviz.schemes import SchemeSpec, scheme
from posviz.tokenizer import TokenizerDataError, decode, encode
from posviz.view import View, build_view, build_word_order

__all__ = [
    "SCHEMES",
    "Batch",
    "DistanceView",
    "EmbeddingTables",
    "GeometryView",
    "OrderComparison",
    "Scheme",
    "SchemeSpec",
    "SeededEmbeddings",
    "Settings",
    "SettingsError",
    "TokenizerDataError",
    "View",
    "WindowEmbeddings",
    "book_attention_weights",
    "build_distance",
    "build_geometry",
    "build_view",
    "build_word_order",
    "compare_figure",
    "compare_order",
    "compare_with_text",
    "decode",
    "distance_figure",
    "embed_window",
    "embeddings_figure",
    "encode",
    "geometry_figure",
    "make_batch",
    "reproduction_script",
    "scheme",
    "self_attention",
    "show",
    "similarity_figure",
    "validate",
    "with_options",
]
