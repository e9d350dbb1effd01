"""posviz.scores, the Attention view, against the book's own computation (tests/reference.py):
``MultiHeadAttention`` made after ``torch.manual_seed(789)``, its heads, the causal mask and
softmax; RoPE by llama3.py's ``compute_rope_params`` / ``apply_rope``; ALiBi's
``get_slopes``; T5's ``_relative_position_bucket`` and its seeded ``nn.Embedding(32, H)``.
Every scheme, two seeds, two d, H = 4, 6 and 12, at positions 0 and shifted."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from reference import (
    book_head_attention,
    embedding_error_past_the_end,
    get_slopes,
    relative_position_bucket,
    t5_relative_attention_bias,
)

from posviz.config import SCHEMES, Settings, SettingsError
from posviz.scores import (
    UNCHANGED,
    AttentionError,
    AttentionView,
    bias_distances,
    build_attention,
    masked,
    measured_bias,
)
from posviz.view import build_view

ROSE = "A rose is a rose is a rose."
VERDICT = (
    "I HAD always thought Jack Gisburn rather a cheap genius--though a good fellow enough--so "
    "it was no great surprise to me to hear that, in the height of his glory, he had dropped"
)
# (seed, d, H, K): two seeds, two d, the heads of the issue (4, 6 and 12), first and last heads
HEADS = [
    pytest.param(123, 48, 4, 3, id="seed123-d48-H4-K3"),
    pytest.param(7, 96, 6, 5, id="seed7-d96-H6-K5"),
    pytest.param(7, 48, 12, 0, id="seed7-d48-H12-K0"),
    pytest.param(123, 96, 12, 11, id="seed123-d96-H12-K11"),
]
TOLERANCE = 1e-12  # float64 products summed in another order (one head's columns vs all)


def attention_of(settings: Settings) -> AttentionView:
    return build_attention(build_view(settings))


def reference(
    settings: Settings, token_ids: tuple[int, ...], start: int
) -> tuple[torch.Tensor, ...]:
    return book_head_attention(
        settings.scheme,
        seed=settings.seed,
        emb_dim=settings.emb_dim,
        context_length=settings.context_length,
        token_ids=token_ids,
        num_heads=settings.heads,
        head=settings.head,
        start=start,
    )


def lower(n: int) -> torch.Tensor:
    return torch.ones(n, n, dtype=torch.bool).tril()


def assert_close_below(got: torch.Tensor, want: torch.Tensor) -> None:
    """Equal to ``TOLERANCE`` on the cells ``j <= i``, NaN on the others."""
    n = want.shape[0]
    assert got.shape == (n, n) and got.dtype == torch.float64
    keep = lower(n)
    torch.testing.assert_close(
        got[keep], want[keep], rtol=0, atol=TOLERANCE * max(1.0, float(want[keep].abs().max()))
    )
    assert bool(got[~keep].isnan().all())


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(("seed", "emb_dim", "heads", "head"), HEADS)
@pytest.mark.parametrize("shift", [0, 5], ids=["at-0", "shift-5"])
def test_scores_and_weights_are_the_books(
    scheme: str, seed: int, emb_dim: int, heads: int, head: int, shift: int
) -> None:
    settings = Settings(
        text=ROSE, context_length=16, emb_dim=emb_dim, seed=seed, scheme=scheme,  # type: ignore[arg-type]
        heads=heads, head=head, shift=shift,
    )  # fmt: skip
    view = attention_of(settings)
    n = len(view.token_ids)
    assert n == 9 and view.head_dim == emb_dim // heads
    scores, weights = reference(settings, view.token_ids, shift)
    shown = view.shown
    assert shown.start == shift and list(shown.positions) == list(range(shift, shift + n))
    assert_close_below(shown.scores, scores)
    assert_close_below(shown.weights, weights)
    # the content part: the same head, no position anywhere
    content, _ = reference(Settings(**{**vars(settings), "scheme": "none"}), view.token_ids, 0)
    assert_close_below(shown.content, content)
    assert_close_below(shown.position, scores - content)
    assert torch.allclose(shown.weights.nansum(dim=1), torch.ones(n, dtype=torch.float64))


@pytest.mark.parametrize("heads", [4, 6, 12])
def test_alibi_position_part_is_minus_m_times_the_distance(heads: int) -> None:
    view = attention_of(
        Settings(text=VERDICT, emb_dim=96, heads=heads, head=heads - 1, scheme="alibi")
    )
    slopes = get_slopes(heads)
    assert view.slopes == tuple(slopes)
    n = len(view.token_ids)
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    expected = -slopes[heads - 1] * (i - j).double()
    keep = lower(n)
    torch.testing.assert_close(view.shown.position[keep], expected[keep], rtol=0, atol=1e-12)
    # every head's line, to past the context length: -m_K * k
    bias = view.bias
    assert bias.formula and bias.heads == tuple(range(heads))
    k = torch.arange(bias_distances(16), dtype=torch.float64)
    for h, slope in enumerate(slopes):
        assert torch.equal(bias.mean[h], -slope * k)


def test_t5_position_part_is_the_seeded_bucket_table() -> None:
    settings = Settings(
        text=VERDICT, context_length=32, emb_dim=48, seed=9, heads=6, head=2, scheme="t5"
    )
    view = attention_of(settings)
    table = t5_relative_attention_bias(9, 6)
    assert view.t5_table is not None and torch.equal(view.t5_table, table)
    n = len(view.token_ids)
    relative = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    expected = table[relative_position_bucket(relative, bidirectional=False), 2].double()
    keep = lower(n)
    torch.testing.assert_close(view.shown.position[keep], expected[keep], rtol=0, atol=1e-12)
    # the staircase: exact to 15, flat from 128 on (bucket 31), for distances 0 ... D-1
    distances = bias_distances(32)
    assert view.bias.distances == distances == 256
    buckets = relative_position_bucket(-torch.arange(distances), bidirectional=False)
    for h in range(6):
        assert torch.equal(view.bias.mean[h], table[buckets, h].double())
        assert len(set(view.bias.mean[h, 128:].tolist())) == 1


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal", "rope", "none"])
def test_other_schemes_bias_is_the_position_part_by_distance(scheme: str) -> None:
    view = attention_of(Settings(text=VERDICT, context_length=40, scheme=scheme, head=1))  # type: ignore[arg-type]
    position = view.shown.position.numpy()
    n = position.shape[0]
    bias = view.bias
    assert not bias.formula and bias.heads == (1,) and bias.distances == n
    for k in range(n):
        cells = np.diagonal(position, -k)  # (i, i - k)
        assert bias.mean[0, k] == pytest.approx(cells.mean(), abs=1e-12)
        assert (float(bias.low[0, k]), float(bias.high[0, k])) == (cells.min(), cells.max())
    if scheme == "none":
        assert not bias.mean.any()


def test_measured_bias_reads_only_the_cells_below_the_diagonal() -> None:
    position = torch.tensor([[1.0, 99.0, 99.0], [2.0, 3.0, 99.0], [4.0, 5.0, 6.0]])
    bias = measured_bias(position, 0)
    assert bias.mean.tolist() == [[10 / 3, 3.5, 4.0]]
    assert bias.low.tolist() == [[1.0, 2.0, 4.0]] and bias.high.tolist() == [[6.0, 5.0, 4.0]]


# --- the shift test ---------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["rope", "alibi", "t5", "none"])
def test_a_relative_scheme_gives_the_same_scores_moved(scheme: str) -> None:
    settings = Settings(text=VERDICT, context_length=32, emb_dim=64, scheme=scheme, shift=8)  # type: ignore[arg-type]
    view = attention_of(settings)
    test = view.shift_test
    assert test.moved and test.shift == 8 and test.last_position == 8 + 31
    at_0, weights_0 = reference(settings, view.token_ids, 0)
    at_8, weights_8 = reference(settings, view.token_ids, 8)
    keep = lower(32)
    change = float((at_8 - at_0)[keep].abs().max())
    assert test.scores_change == pytest.approx(change, abs=1e-12)
    assert test.weights_change == pytest.approx(
        float((weights_8 - weights_0)[keep].abs().max()), abs=1e-12
    )
    assert test.unchanged
    if scheme == "rope":  # float32 angles: the book's rounding, far below a score
        assert 0 < test.scores_change < 1e-4
    else:
        assert test.scores_change == 0.0 and test.weights_change == 0.0


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal"])
def test_an_absolute_scheme_changes_the_scores_moved(scheme: str) -> None:
    settings = Settings(text=ROSE, context_length=32, emb_dim=64, scheme=scheme, shift=8)  # type: ignore[arg-type]
    view = attention_of(settings)
    at_0, weights_0 = reference(settings, view.token_ids, 0)
    at_8, weights_8 = reference(settings, view.token_ids, 8)
    keep = lower(9)
    assert view.shift_test.scores_change == pytest.approx(
        float((at_8 - at_0)[keep].abs().max()), abs=1e-12
    )
    assert view.shift_test.weights_change == pytest.approx(
        float((weights_8 - weights_0)[keep].abs().max()), abs=1e-12
    )
    assert view.shift_test.scores_change > 10 * UNCHANGED and not view.shift_test.unchanged


def test_learned_positions_past_the_table_raise_torchs_error() -> None:
    settings = Settings(text=ROSE, context_length=16, emb_dim=64, shift=8)  # 9 tokens: 8 ... 16
    view = attention_of(settings)
    test = view.shift_test
    assert not test.moved and test.scores_change is None and test.weights_change is None
    assert test.error == embedding_error_past_the_end(16, 64)
    with pytest.raises(IndexError) as raised:  # the book's own lookup raises the same
        reference(settings, view.token_ids, 8)
    assert test.error == f"IndexError: {raised.value}"
    assert (test.table_rows, test.last_position) == (16, 16)
    assert view.shown.start == 0  # the view shows the sentence where it is
    scores, _ = reference(settings, view.token_ids, 0)
    assert_close_below(view.shown.scores, scores)
    # 7 positions later it still fits (7 ... 15)
    assert attention_of(
        Settings(text=ROSE, context_length=16, emb_dim=64, shift=7)
    ).shift_test.moved


def test_formulas_continue_past_the_context_length() -> None:
    """Sinusoidal, RoPE, ALiBi and T5 positions past T come from their formulas."""
    for scheme in ("sinusoidal", "rope", "alibi", "t5"):
        settings = Settings(text=ROSE, context_length=16, emb_dim=32, scheme=scheme, shift=100)  # type: ignore[arg-type]
        view = attention_of(settings)
        assert view.shift_test.moved and view.shift_test.last_position == 108
        scores, weights = reference(settings, view.token_ids, 100)
        assert_close_below(view.shown.scores, scores)
        assert_close_below(view.shown.weights, weights)


def test_gpt2_tables_end_at_1024() -> None:
    """With GPT-2's tables the learned table has 1,024 rows, whatever T; past them, torch's
    error (a stand-in table: the shape is what matters)."""

    class Tables:
        def __init__(self) -> None:
            generator = torch.Generator().manual_seed(0)
            self.wpe = torch.randn(1024, 768, generator=generator)

        def token_embeddings(self, token_ids: object) -> torch.Tensor:
            return torch.ones(len(token_ids), 768)  # type: ignore[arg-type]

        def pos_embeddings(self, context_length: int) -> torch.Tensor:
            return self.wpe[:context_length].clone()

    tables = Tables()
    base = Settings(text=ROSE, weights="gpt2", emb_dim=768, heads=12, head=3)
    for shift, moved in ((1015, True), (1016, False)):
        settings = Settings(**{**vars(base), "shift": shift})
        view = build_attention(
            build_view(settings, tables=lambda _: tables), tables=lambda _: tables
        )
        assert view.shift_test.moved is moved
        if not moved:
            assert view.shift_test.table_rows == 1024
            assert view.shift_test.error == embedding_error_past_the_end(1024, 768)


# --- settings and inputs ----------------------------------------------------------------------


def test_heads_must_fit_d() -> None:
    with pytest.raises(SettingsError, match="heads must divide emb_dim 64"):
        attention_of(Settings(heads=6, head=5))
    with pytest.raises(SettingsError, match="RoPE rotates pairs"):
        attention_of(Settings(emb_dim=12, heads=4, scheme="rope"))


def test_a_blank_text_has_no_scores() -> None:
    with pytest.raises(AttentionError, match="the text is blank"):
        attention_of(Settings(text="   "))


def test_the_global_generator_is_untouched() -> None:
    state = torch.random.get_rng_state()
    attention_of(Settings(scheme="t5", shift=3))
    assert torch.equal(torch.random.get_rng_state(), state)


def test_masked_leaves_the_future_empty() -> None:
    rows, columns = torch.tensor([0, 4, 8]), torch.tensor([0, 4, 8])
    got = masked(torch.zeros(3, 3), rows, columns)
    assert got.isnan().tolist() == [[False, True, True], [False, False, True], [False] * 3]


def test_one_token_attends_to_itself() -> None:
    view = attention_of(Settings(text="Hello", scheme="alibi"))
    assert view.shown.weights.tolist() == [[1.0]]
