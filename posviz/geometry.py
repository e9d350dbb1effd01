"""The shape of a positional table: its rows, centred, on their first three principal
components, its singular values, and the length of each position vector.

:func:`analyse_table` does the linear algebra for one table; :func:`build_geometry` is the
Geometry view for a view's settings: the scheme's table (GPT-2's trained ``wpe`` with
``weights="gpt2"``) beside a contrasting one (the book's random init next to GPT-2's; the
sinusoidal table next to the random init; the random init next to the other schemes), and
with GPT-2's tables the largest ``|cosine|`` between position rows and token rows. ALiBi and
T5 have no positional table (their bias acts on the attention scores): for them the view
shows the learned and the sinusoidal tables, as for ``learned``, and its words say why.

The principal components come from the centred table ``X - mean(X)`` in float64. Its
singular values are the square roots of the eigenvalues of the smaller Gram matrix
(``XᵀX`` ``[d, d]`` or ``XXᵀ`` ``[T, T]``, ``torch.linalg.eigh``): at T = 1024, d = 768 that
costs a fraction of a full SVD, and equals numpy's SVD to about 1e-8 of the largest value (the
tests allow 1e-6). A component's sign is arbitrary; posviz makes the coordinate of largest
magnitude positive (scikit-learn's ``svd_flip`` convention), so the picture never flips.

>>> from posviz.position_tables import sinusoidal_table
>>> shape = analyse_table(sinusoidal_table(rows=64, emb_dim=16))
>>> shape.points.shape, shape.directions_90, shape.components
(torch.Size([64, 3]), 6, 3)
>>> round(float(shape.row_norms.min()), 6), round(float(shape.row_norms.max()), 6)
(2.828427, 2.828427)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, TypeVar

import torch

from posviz.config import Settings
from posviz.pipeline import EmbeddingTables
from posviz.position_tables import (
    PositionalTable,
    distinct,
    formula_table,
    gpt2_table,
    learned_table,
    sinusoidal_table,
)
from posviz.schemes import scheme
from posviz.similarity import unit_rows
from posviz.tokenizer import token_texts as texts_of
from posviz.view import TablesFor, View, seeded_tables

VARIANCE_SHARE: Final = 0.9  # "how many directions hold 90 % of the variance"
COMPONENT_FLOOR: Final = 1e-6  # a component below this share of the largest is noise: not shown
# The fixed sample of GPT-2's vocabulary: every 50th token id, 0, 50, ..., 50250 (1,006 tokens,
# the frequent early merges and the rare late ones alike), whatever the text.
VOCAB_SAMPLE: Final = tuple(range(0, 50257, 50))

R = TypeVar("R")


class Memo(Protocol):
    """``memo(key, compute)``: ``compute()``, or the value an earlier call with an equal
    ``key`` returned (the app keeps them in ``st.cache_resource``; :func:`no_memo` keeps
    nothing). Keys start with the name of what is computed, then the table's ``key``."""

    def __call__(self, key: tuple[object, ...], compute: Callable[[], R]) -> R:
        """The value for ``key``."""
        ...


def no_memo(key: tuple[object, ...], compute: Callable[[], R]) -> R:
    """Compute every time (the core keeps no state)."""
    return compute()


@dataclass(frozen=True, eq=False)
class TableGeometry:
    """The principal components of one positional table, float64.

    ``points[p]`` is position ``p``'s centred row on components 1-3 (a component the table
    does not have, e.g. with fewer than 4 rows, is a column of zeros and not counted in
    ``components``).
    """

    table: PositionalTable
    points: torch.Tensor  # [T, 3] float64
    singular_values: torch.Tensor  # [min(T, d)] float64, largest first
    row_norms: torch.Tensor  # [T] float64: |row p| of the table (not centred)
    components: int  # 0-3: components with a singular value above COMPONENT_FLOOR

    @property
    def nbytes(self) -> int:
        """Memory this result holds, its table's rows included (3 MB at T = 1024, d = 768)."""
        tensors = (self.table.table, self.points, self.singular_values, self.row_norms)
        return sum(t.numel() * t.element_size() for t in tensors)

    @property
    def variance_shares(self) -> torch.Tensor:
        """Each direction's share of the centred table's variance (sums to 1; zeros if none)."""
        return variance_shares(self.singular_values)

    @property
    def directions_90(self) -> int:
        """How many directions hold 90 % of the variance (0 for a table without any)."""
        return directions_90(self.singular_values)

    @property
    def shown_share(self) -> float:
        """Share of the variance the three components of the picture hold."""
        return float(self.variance_shares[:3].sum())

    @property
    def step_ratio(self) -> float | None:
        """RMS distance between neighbouring positions over RMS distance between any two:
        about 1 for a cloud (neighbours no closer than strangers), small for a curve.
        ``None`` below 3 rows or for a table without variance."""
        x = self.table.table.double()  # [T, d]
        rows = x.shape[0]
        total = float(self.singular_values.square().sum())  # |X - mean|_F^2
        if rows < 3 or total <= 0:
            return None
        steps = float((x[1:] - x[:-1]).square().sum(dim=1).mean())  # mean |x_{p+1} - x_p|^2
        pairs = 2 * total / (rows - 1)  # mean |x_i - x_j|^2 over the pairs i != j
        return math.sqrt(steps / pairs)


def variance_shares(singular_values: torch.Tensor) -> torch.Tensor:
    """Each direction's share of the variance, from the centred table's singular values
    (sums to 1; zeros for a table without variance).

    >>> variance_shares(torch.tensor([3.0, 1.0])).tolist()
    [0.8999999761581421, 0.10000000149011612]
    """
    power = singular_values.square()  # [K]
    total = float(power.sum())
    return power / total if total > 0 else power


def directions_90(singular_values: torch.Tensor) -> int:
    """How many directions hold :data:`VARIANCE_SHARE` (90 %) of the variance, from the
    centred table's singular values (0 for a table without any).

    >>> directions_90(torch.tensor([3.0, 1.0], dtype=torch.float64))
    1
    """
    shares = variance_shares(singular_values)
    if not float(shares.sum()):
        return 0
    reached = torch.cumsum(shares, dim=0) >= VARIANCE_SHARE - 1e-12
    return int(torch.nonzero(reached)[0]) + 1


def principal_components(
    table: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """The rows of ``table`` ``[T, d]``, centred in float64, on their first three principal
    components (see the module docstring): ``points`` ``[T, 3]``, the singular values
    ``[min(T, d)]`` (largest first), each row's length ``[T]`` (not centred), and how many
    components (0-3) have a singular value above :data:`COMPONENT_FLOOR` of the largest (the
    other columns of ``points`` are zeros).

    >>> points, singular, norms, components = principal_components(torch.eye(2))
    >>> points.shape, components, norms.tolist()
    (torch.Size([2, 3]), 1, [1.0, 1.0])
    """
    x = table.double()  # [T, d]
    rows, emb_dim = x.shape
    centred = x - x.mean(dim=0, keepdim=True)  # [T, d]
    if rows <= emb_dim:  # the [T, T] Gram matrix: eigenvectors are the left singular vectors
        values, vectors = torch.linalg.eigh(centred @ centred.T)  # ascending
        values, vectors = values.flip(0), vectors.flip(1)
        singular = values.clamp(min=0).sqrt()  # [T]
        points = vectors[:, :3] * singular[:3]  # [T, <=3]: U S
    else:  # the [d, d] Gram matrix: eigenvectors are the right singular vectors
        values, vectors = torch.linalg.eigh(centred.T @ centred)
        values, vectors = values.flip(0), vectors.flip(1)
        singular = values.clamp(min=0).sqrt()  # [d]
        points = centred @ vectors[:, :3]  # [T, 3]: X V
    largest = float(singular[0]) if singular.numel() else 0.0
    components = int((singular[:3] > COMPONENT_FLOOR * largest).sum()) if largest > 0 else 0
    shown = torch.zeros(rows, 3, dtype=torch.float64)
    shown[:, :components] = points[:, :components]
    # sign: the coordinate of largest magnitude is positive (sklearn's svd_flip, u-based)
    biggest = shown.abs().argmax(dim=0)  # [3]
    signs = torch.sign(shown[biggest, torch.arange(3)])
    shown *= torch.where(signs == 0, 1.0, signs)
    return shown, singular, torch.linalg.vector_norm(x, dim=1), components


def analyse_table(positional: PositionalTable) -> TableGeometry:
    """Centre ``positional.table`` ``[T, d]`` in float64 and project it on its first three
    principal components (:func:`principal_components`)."""
    points, singular, row_norms, components = principal_components(positional.table)
    return TableGeometry(
        table=positional,
        points=points,
        singular_values=singular,
        row_norms=row_norms,
        components=components,
    )


@dataclass(frozen=True)
class TokenCosines:
    """The largest ``|cosine|`` between the rows of a positional table and a set of token
    rows, where it is, and the mean ``|cosine|`` over all pairs."""

    positions: str  # the positional table's label
    tokens: str  # "window" (the window's distinct tokens) or "sample" (VOCAB_SAMPLE)
    count: int  # token rows compared
    max_abs: float
    mean_abs: float
    position: int  # the pair with the largest |cosine|
    token_id: int
    token_text: str  # that token as the chips write it (tokenizer.token_texts), not escaped


def abs_cosines(positions: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """``|cos|`` between every row of ``positions`` ``[T, d]`` and every row of ``tokens``
    ``[m, d]``: ``[T, m]``, float32 products of rows normalised in float64.

    >>> abs_cosines(torch.tensor([[1.0, 0.0]]), torch.tensor([[-2.0, 0.0], [0.0, 1.0]]))
    tensor([[1., 0.]])
    """
    unit_positions = unit_rows(positions).float()  # [T, d]
    return (unit_positions @ unit_rows(tokens).float().T).abs()  # [T, m]


def token_cosines(
    positional: PositionalTable,
    token_embeddings: torch.Tensor,
    token_ids: tuple[int, ...],
    *,
    tokens: str,
    token_texts: Sequence[str] | None = None,
) -> TokenCosines:
    """``|cos|`` between every row of ``positional`` and every row of ``token_embeddings``
    ``[m, d]`` (the rows of ``token_ids``, written ``token_texts``; default: each read
    alone); float32 products of float64-normalised rows."""
    cosines = abs_cosines(positional.table, token_embeddings)  # [T, m]
    flat = int(cosines.argmax())
    position, column = divmod(flat, cosines.shape[1])
    return TokenCosines(
        positions=positional.label,
        tokens=tokens,
        count=len(token_ids),
        max_abs=float(cosines.max()),
        mean_abs=float(cosines.double().mean()),
        position=position,
        token_id=token_ids[column],
        token_text=texts_of([token_ids[column]])[0] if token_texts is None else token_texts[column],
    )


@dataclass(frozen=True, eq=False)
class GeometryView:
    """Everything the Geometry tab shows for :attr:`settings`.

    ``cosines`` (GPT-2's tables only): GPT-2's positional rows and, as a baseline, the random
    init's, each against the window's distinct tokens and against :data:`VOCAB_SAMPLE`.
    """

    settings: Settings  # as shown (see View.settings)
    main: TableGeometry  # the scheme's table (GPT-2's trained wpe with weights="gpt2")
    contrast: TableGeometry
    cosines: tuple[TokenCosines, ...] = ()


def scheme_table(settings: Settings, tables: EmbeddingTables) -> PositionalTable:
    """The positional table of ``settings``' scheme: ``[context_length, emb_dim]`` (ALiBi and
    T5 have none: the book's learned one)."""
    rows, emb_dim = settings.context_length, settings.emb_dim
    if settings.weights == "gpt2":
        return gpt2_table(tables, rows=rows)
    spec = scheme(settings.scheme)
    if spec.learned or spec.biases_scores:  # ALiBi and T5 have no positional table:
        # the tab shows the learned one beside the sinusoidal one, and says so
        return learned_table(tables, seed=settings.seed, context_length=rows, emb_dim=emb_dim)
    return formula_table(spec, rows=rows, emb_dim=emb_dim, options=settings.options())


def contrast_table(settings: Settings, init_tables: TablesFor) -> PositionalTable:
    """The table shown beside the scheme's: the sinusoidal one beside the book's random
    init, the random init beside every other table (GPT-2's trained one included)."""
    rows, emb_dim = settings.context_length, settings.emb_dim
    spec = scheme(settings.scheme)
    if settings.weights == "init" and (spec.learned or spec.biases_scores):
        return sinusoidal_table(rows=rows, emb_dim=emb_dim)
    init = init_tables(settings)
    return learned_table(init, seed=settings.seed, context_length=rows, emb_dim=emb_dim)


def tables_of(
    settings: Settings, tables: TablesFor, init_tables: TablesFor
) -> tuple[EmbeddingTables, TablesFor]:
    """The view's tables, and where the book's seeded ones come from (the view's own with
    ``weights="init"``, so each is asked for once)."""
    view_tables = tables(settings)

    def book_tables(shown: Settings) -> EmbeddingTables:
        return view_tables if shown.weights == "init" else init_tables(shown)

    return view_tables, book_tables


def per_table(
    memo: Memo, name: str, positional: PositionalTable, compute: Callable[[PositionalTable], R]
) -> R:
    """``compute(positional)``, kept with ``memo`` under ``(name, *positional.key)`` when the
    table has a key."""
    if positional.key is None:
        return compute(positional)
    return memo((name, *positional.key), lambda: compute(positional))


def build_geometry(
    view: View,
    *,
    tables: TablesFor = seeded_tables,
    init_tables: TablesFor = seeded_tables,
    memo: Memo = no_memo,
) -> GeometryView:
    """Everything the Geometry view shows for ``view`` (from :func:`~posviz.view.build_view`).

    ``tables`` gives the view's tables (GPT-2's with ``weights="gpt2"``), as for
    ``build_view``; ``init_tables`` the book's seeded ones for the random-init contrast;
    ``memo`` may keep results per table (the app keeps them for every session).

    >>> from posviz.view import build_view
    >>> geometry = build_geometry(build_view(Settings(context_length=8, emb_dim=4)))
    >>> geometry.main.table.label, geometry.contrast.table.label
    ('learned, random init (seed 123)', 'sinusoidal (formula)')
    """
    settings = view.settings
    view_tables, book_tables = tables_of(settings, tables, init_tables)
    main = scheme_table(settings, view_tables)
    contrast = contrast_table(settings, book_tables)
    cosines: tuple[TokenCosines, ...] = ()
    if settings.weights == "gpt2" and view.embeddings is not None:
        cosines = gpt2_cosines(main, contrast, view, view_tables, memo)
    return GeometryView(
        settings,
        per_table(memo, "geometry", main, analyse_table),
        per_table(memo, "geometry", contrast, analyse_table),
        cosines,
    )


def gpt2_cosines(
    main: PositionalTable,
    baseline: PositionalTable,
    view: View,
    tables: EmbeddingTables,
    memo: Memo = no_memo,
) -> tuple[TokenCosines, ...]:
    """GPT-2's positional rows (``main``) and a ``baseline`` table's, each against the rows
    of the window's distinct tokens and of :data:`VOCAB_SAMPLE` in ``tables`` (the
    sample's results are kept with ``memo`` when both tables have keys)."""
    pairs = zip(view.token_ids, view.token_texts, strict=True)
    first = dict(reversed(tuple(pairs)))  # each token's text at its first position
    window_ids = tuple(distinct(view.token_ids))
    window_texts = [first[token_id] for token_id in window_ids]
    window_rows = tables.token_embeddings(window_ids)  # [m, 768]
    found = []
    for positional in (main, baseline):
        found.append(
            token_cosines(
                positional, window_rows, window_ids, tokens="window", token_texts=window_texts
            )
        )

        def sample(positional: PositionalTable = positional) -> TokenCosines:
            rows = tables.token_embeddings(VOCAB_SAMPLE)  # [1006, 768]
            return token_cosines(positional, rows, VOCAB_SAMPLE, tokens="sample")

        if main.key is None or positional.key is None:
            found.append(sample())
        else:
            found.append(memo(("cosines", *main.key, *positional.key), sample))
    return tuple(found)
