"""One path from settings to everything a view shows: the app, the command line, the tests
and the benchmarks all call :func:`build_view`.

Read top to bottom, :func:`build_view` is section 2.8: check the settings, tokenize the text,
cut it into windows of ``context_length`` tokens, pick the window, look its tokens and
positions up in the two tables and combine them by the positional scheme.

Where the tables come from is the caller's choice: ``tables`` is a function from the settings
to anything with the two lookups of :class:`~posviz.pipeline.EmbeddingTables`. The default
builds the book's seeded tables; the app passes its cached ones.

>>> view = build_view(Settings(text="Every effort moves you", context_length=4))
>>> view.batch.shape, view.window, view.token_texts
((1, 4), 0, ('Every', '␣effort', '␣moves', '␣you'))
>>> view.embeddings.input_embeddings.shape
torch.Size([4, 64])
>>> build_view(Settings(text="Every effort moves you", window=3)).notices
('Window 3 does not exist: this text gives 1 window(s). Showing window 0.',)

The Word-order view takes the window on screen further, the same way:

>>> pair = build_word_order(build_view(Settings(
...     text="The dog bites the man", compare_text="The man bites the dog")))
>>> pair.status, round(pair.without_positions.mean_cosine, 6)
('permutation', 1.0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from posviz.attention import AttentionWeights, book_attention_weights
from posviz.batching import Batch, make_batch
from posviz.compare import OrderComparison, compare_with_text
from posviz.config import Settings, validate
from posviz.embeddings import SeededEmbeddings
from posviz.pipeline import EmbeddingTables, WindowEmbeddings, embed_window
from posviz.tokenizer import encode, token_texts

TablesFor = Callable[[Settings], EmbeddingTables]
"""Gives the two tables for a view's settings (called only when a window is shown)."""
AttentionFor = Callable[[int], AttentionWeights]
"""Gives the book's self-attention weights for an ``emb_dim`` (the app caches them)."""


def book_attention(emb_dim: int) -> AttentionWeights:
    """The book's ``SelfAttention_v2(emb_dim, emb_dim)`` weights after
    ``torch.manual_seed(789)`` (built afresh; the app caches them)."""
    return book_attention_weights(d_in=emb_dim, d_out=emb_dim)


def seeded_tables(settings: Settings) -> SeededEmbeddings:
    """The book's tables: ``torch.manual_seed(seed)``, then ``nn.Embedding(50257, emb_dim)``
    and the positional table (built afresh; the app caches them)."""
    return SeededEmbeddings.create(seed=settings.seed, emb_dim=settings.emb_dim)


@dataclass(frozen=True)
class View:
    """Everything one view shows, computed from :attr:`settings`.

    ``settings`` are the settings shown, which can differ from the ones asked for: a window
    the text does not have falls back to window 0 (and ``notices`` says so). ``embeddings`` is
    ``None`` when the text is blank: there is nothing to show.
    """

    settings: Settings
    batch: Batch  # the text's token ids cut into windows, inputs [B, T]
    embeddings: WindowEmbeddings | None  # the shown window's ids, texts and [n, d] matrices
    notices: tuple[str, ...]  # what was changed from the settings asked for, and why

    @property
    def window(self) -> int:
        """Index of the shown window in the batch."""
        return self.settings.window

    @property
    def token_ids(self) -> tuple[int, ...]:
        """The shown window's token ids (empty for a blank text)."""
        return () if self.embeddings is None else self.embeddings.token_ids

    @property
    def token_texts(self) -> tuple[str, ...]:
        """The shown window's tokens as the page writes them, one per token id
        (:func:`posviz.tokenizer.token_texts`, read in the whole text)."""
        return () if self.embeddings is None else self.embeddings.token_texts


def batch_for(settings: Settings) -> Batch:
    """The windows of ``settings.text`` (after :func:`~posviz.config.validate`).

    Raises :class:`~posviz.config.SettingsError` or
    :class:`~posviz.tokenizer.TokenizerDataError` (see :func:`build_view`).
    """
    validate(settings)
    return make_batch(
        encode(settings.text),  # builds the tokenizer on first use
        context_length=settings.context_length,
        stride=settings.effective_stride,
    )


def build_view(
    settings: Settings, *, tables: TablesFor = seeded_tables, strict: bool = False
) -> View:
    """The view ``settings`` ask for.

    Raises :class:`~posviz.config.SettingsError` for values out of range and
    :class:`~posviz.tokenizer.TokenizerDataError` if GPT-2's vocabulary files are damaged
    (even for a blank text, so the problem shows at once). A window the text does not have
    falls back to window 0 with a notice, or with ``strict=True`` raises ``SettingsError``.
    """
    batch = batch_for(settings)
    if not settings.text.strip():
        return View(settings, batch, None, ())
    notices: list[str] = []
    if settings.window >= batch.num_windows:
        if strict:
            batch.window_span(settings.window)  # raises, naming the windows the text has
        notices.append(
            f"Window {settings.window} does not exist: this text gives "
            f"{batch.num_windows} window(s). Showing window 0."
        )
        settings = replace(settings, window=0)
    span = batch.window_span(settings.window)
    embeddings = embed_window(
        tables(settings),
        batch.window_token_ids(settings.window),
        context_length=settings.context_length,
        scheme=settings.scheme,
        options=settings.options(),
        token_texts=token_texts(batch.token_ids, span),  # read in the whole text
    )
    return View(settings, batch, embeddings, tuple(notices))


def build_word_order(
    view: View, *, tables: TablesFor = seeded_tables, attention: AttentionFor = book_attention
) -> OrderComparison:
    """Everything the Word-order view shows: the window on screen and the first window of
    ``view.settings.compare_text`` through the book's self-attention, without and with
    positions (see :mod:`posviz.compare`).

    ``tables`` and ``attention`` are the caller's, as for :func:`build_view`; the app passes
    its cached ones. A blank second text (or a blank first one) gives status ``"empty"``.
    """
    settings = view.settings
    return compare_with_text(
        tables(settings),
        view.token_ids,
        settings.compare_text,
        context_length=settings.context_length,
        scheme=settings.scheme,
        weights=attention(settings.emb_dim),
        causal=settings.causal,
        seed=settings.seed,
        options=settings.options(),
        window_token_texts=view.token_texts,
    )
