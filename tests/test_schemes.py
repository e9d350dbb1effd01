"""posviz.schemes: each scheme against its formula in tests/reference.py, bit for bit.

* sinusoidal: Vaswani et al. (2017), ``PE[p, 2i] = sin(p / 10000^(2i/d))``,
  ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``, computed element by element with ``math``.
* rope: the functions of the book's Llama notebook (ch05/07_gpt_to_llama), and RoPE's
  defining property (dot products depend only on the position difference).
* alibi and t5: nothing added to the input; ALiBi's slopes against its reference get_slopes,
  T5's buckets against its _relative_position_bucket, T5's table against nn.Embedding.
"""

from __future__ import annotations

import math

import pytest
import torch
from reference import (
    compute_rope,
    get_slopes,
    precompute_rope_params,
    random_rows,
    relative_position_bucket,
    sinusoidal,
    t5_relative_attention_bias,
)

from posviz.schemes import (
    alibi_slopes,
    apply_scheme,
    rope_angles,
    rope_rotate,
    score_bias,
    sinusoidal_encoding,
    t5_bias_table,
    t5_buckets,
)

SIZES = [
    pytest.param(1, 2, id="T1-d2"),
    pytest.param(4, 3, id="T4-d3-odd"),
    pytest.param(4, 4, id="T4-d4"),
    pytest.param(7, 5, id="T7-d5-odd"),
    pytest.param(16, 64, id="T16-d64"),
    pytest.param(50, 255, id="T50-d255-odd"),
    pytest.param(64, 256, id="book-d256"),
    pytest.param(1024, 768, id="gpt2-T1024-d768"),
]


# --- sinusoidal ---------------------------------------------------------------------------


@pytest.mark.parametrize(("context_length", "emb_dim"), SIZES)
def test_sinusoidal_equals_the_formula(context_length: int, emb_dim: int) -> None:
    encoding = sinusoidal_encoding(context_length, emb_dim)
    assert encoding.shape == (context_length, emb_dim)
    assert encoding.dtype == torch.float32
    assert torch.equal(encoding, sinusoidal(context_length, emb_dim))


def test_sinusoidal_position_0_and_interleaving() -> None:
    encoding = sinusoidal_encoding(3, 6)
    assert encoding[0].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]  # sin 0, cos 0, ...
    # Dimensions 0 and 1 share the fastest frequency 1: sin(1), cos(1) at position 1.
    assert encoding[1, 0].item() == pytest.approx(math.sin(1), abs=1e-7)
    assert encoding[1, 1].item() == pytest.approx(math.cos(1), abs=1e-7)
    assert encoding[2, 2].item() == pytest.approx(math.sin(2 / 10000 ** (2 / 6)), abs=1e-7)
    assert encoding[2, 3].item() == pytest.approx(math.cos(2 / 10000 ** (2 / 6)), abs=1e-7)


def test_sinusoidal_odd_dimension_ends_with_a_sine() -> None:
    encoding = sinusoidal_encoding(5, 5)
    positions = torch.arange(5, dtype=torch.float64)
    last = torch.sin(positions / 10000 ** (4 / 5)).float()
    torch.testing.assert_close(encoding[:, 4], last, rtol=0, atol=1e-7)


# --- rope ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "d"), [(1, 2), (4, 4), (16, 64), (64, 256), (300, 768)])
def test_rope_equals_the_book_notebook(n: int, d: int) -> None:
    x = random_rows(n, d)
    positioned = apply_scheme("rope", x, None)
    cos, sin = precompute_rope_params(d, context_length=n)
    assert torch.equal(positioned.input_embeddings, compute_rope(x[None, None], cos, sin)[0, 0])
    assert torch.equal(positioned.position_signal, cos)


@pytest.mark.parametrize(("n", "d"), [(4, 3), (9, 5), (33, 129)])
def test_rope_odd_dimension_keeps_the_last_dimension(n: int, d: int) -> None:
    """The first d-1 dimensions are rotated as a (d-1)-dim RoPE; the last one is unchanged."""
    x = random_rows(n, d, seed=1)
    rotated = apply_scheme("rope", x, None).input_embeddings
    assert torch.equal(rotated[:, -1], x[:, -1])
    cos, sin = precompute_rope_params(d - 1, context_length=n)
    assert torch.equal(rotated[:, :-1], compute_rope(x[None, None, :, :-1], cos, sin)[0, 0])
    assert torch.equal(rope_angles(n, d)[:, -1], torch.zeros(n))


def test_rope_position_0_is_not_rotated() -> None:
    x = random_rows(3, 8)
    assert torch.equal(apply_scheme("rope", x, None).input_embeddings[0], x[0])


def test_rope_angles_formula() -> None:
    """``angle[p, j] = p * 10000^(-2j/d)`` for ``j < d/2``, repeated for the second half."""
    n, d = 6, 8
    angles = rope_angles(n, d)
    for p in range(n):
        for j in range(d // 2):
            expected = p * 10000 ** (-2 * j / d)
            assert angles[p, j].item() == pytest.approx(expected, rel=1e-6, abs=1e-7)
            assert angles[p, j + d // 2].item() == angles[p, j].item()


@pytest.mark.parametrize("d", [2, 3, 8, 65, 256])
def test_rope_dot_product_depends_only_on_the_offset(d: int) -> None:
    q, k = random_rows(1, d, seed=2)[0], random_rows(1, d, seed=3)[0]
    angles = rope_angles(200, d)
    queries = rope_rotate(q.expand(200, d), angles)  # q at every position
    keys = rope_rotate(k.expand(200, d), angles)
    for m in [0, 1, 3, 10, 50]:
        dots = torch.stack([queries[p] @ keys[p + m] for p in [0, 1, 5, 17, 60, 149]])
        torch.testing.assert_close(dots, dots[:1].expand_as(dots), rtol=1e-4, atol=1e-4)
    # ... and it does depend on the offset (otherwise the property above is empty).
    assert not torch.isclose(queries[0] @ keys[0], queries[0] @ keys[3], atol=1e-3)


@pytest.mark.parametrize("d", [2, 7, 64, 768])
def test_rope_preserves_norms(d: int) -> None:
    x = random_rows(100, d, seed=4)
    rotated = rope_rotate(x, rope_angles(100, d))
    torch.testing.assert_close(rotated.norm(dim=1), x.norm(dim=1), rtol=1e-5, atol=1e-5)
    assert not torch.allclose(rotated[1:], x[1:])


# --- none, learned, sinusoidal through apply_scheme ---------------------------------------


def test_none_input_is_the_token_embeddings() -> None:
    x = random_rows(5, 6)
    positioned = apply_scheme("none", x, None)
    assert torch.equal(positioned.input_embeddings, x)
    assert torch.equal(positioned.position_signal, torch.zeros(5, 6))
    assert positioned.input_embeddings.data_ptr() != x.data_ptr()  # a copy, not the same tensor


def test_learned_input_is_token_plus_pos() -> None:
    x = random_rows(5, 6)
    pos = random_rows(8, 6, seed=9)  # a T=8 table; the window has n=5 tokens
    positioned = apply_scheme("learned", x, pos)
    assert torch.equal(positioned.position_signal, pos[:5])
    assert torch.equal(positioned.input_embeddings, x + pos[:5])


def test_learned_needs_the_table() -> None:
    with pytest.raises(ValueError, match="learned"):
        apply_scheme("learned", random_rows(2, 2), None)


def test_sinusoidal_input_is_token_plus_formula() -> None:
    x = random_rows(5, 7)
    positioned = apply_scheme("sinusoidal", x, None)
    expected_signal = sinusoidal(5, 7)
    assert torch.equal(positioned.position_signal, expected_signal)
    assert torch.equal(positioned.input_embeddings, x + expected_signal)


def test_unknown_scheme_raises() -> None:
    with pytest.raises(ValueError, match="'xpos'"):
        apply_scheme("xpos", random_rows(2, 2), None)  # type: ignore[arg-type]


@pytest.mark.parametrize("scheme", ["none", "alibi", "t5"])
def test_score_schemes_add_nothing_to_the_input(scheme: str) -> None:
    x = random_rows(5, 6)
    positioned = apply_scheme(scheme, x, None)  # type: ignore[arg-type]
    assert torch.equal(positioned.position_signal, torch.zeros(5, 6))
    assert torch.equal(positioned.input_embeddings, x)


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal", "none", "rope", "alibi", "t5"])
def test_shapes_and_dtype(scheme: str) -> None:
    x = random_rows(3, 4)
    positioned = apply_scheme(scheme, x, random_rows(4, 4))  # type: ignore[arg-type]
    assert positioned.scheme == scheme
    assert positioned.position_signal.shape == positioned.input_embeddings.shape == (3, 4)
    assert positioned.input_embeddings.dtype == torch.float32


# --- ALiBi and T5: what they add to the attention scores -------------------------------------


@pytest.mark.parametrize("heads", range(1, 13), ids=lambda h: f"H{h}")
def test_alibi_slopes_are_the_references(heads: int) -> None:
    assert alibi_slopes(heads) == tuple(get_slopes(heads))  # floats, exactly


def test_alibi_slopes_for_non_powers_of_two() -> None:
    """The paper's rule written out: H = 6 takes the 4 slopes of H = 4, then slopes 1 and 3 of
    H = 8; H = 12 the 8 of H = 8, then slopes 1, 3, 5 and 7 of H = 16."""
    eight = [2 ** (-(k + 1)) for k in range(8)]  # H = 8: 1/2, 1/4, ... 1/256
    sixteen = [2 ** (-(k + 1) / 2) for k in range(16)]  # H = 16: 2^-0.5, 2^-1, ...
    assert alibi_slopes(4) == (0.25, 0.0625, 0.015625, 0.00390625)
    assert alibi_slopes(6) == pytest.approx([0.25, 0.0625, 0.015625, 0.00390625, *eight[0:4:2]])
    assert alibi_slopes(12) == pytest.approx([*eight, *sixteen[0:8:2]])


def test_t5_buckets_are_the_references_for_distances_0_to_300() -> None:
    distance = torch.arange(0, 2048)  # key k = 0 ... 2047 tokens back (300 and far beyond)
    relative = -distance  # j - i
    reference = relative_position_bucket(relative, bidirectional=False)
    assert torch.equal(t5_buckets(relative), reference)
    assert t5_buckets(relative)[:301].tolist() == reference[:301].tolist()
    # exact up to 15, one bucket for everything from 128 on
    assert t5_buckets(relative)[:16].tolist() == list(range(16))
    assert set(t5_buckets(relative)[128:].tolist()) == {31}
    assert t5_buckets(torch.arange(1, 40)).tolist() == [0] * 39  # keys ahead: bucket 0


@pytest.mark.parametrize(("seed", "heads"), [(123, 4), (7, 6), (0, 12)])
def test_t5_table_is_the_seeded_embedding(seed: int, heads: int) -> None:
    state = torch.random.get_rng_state()
    assert torch.equal(
        t5_bias_table(seed=seed, heads=heads), t5_relative_attention_bias(seed, heads)
    )
    assert torch.equal(torch.random.get_rng_state(), state)  # the global generator untouched


@pytest.mark.parametrize("heads", [4, 6, 12])
def test_score_bias_against_the_formulas(heads: int) -> None:
    queries, keys = torch.arange(5, 45), torch.arange(3, 50)  # any positions
    i, j = queries[:, None], keys[None, :]
    alibi = score_bias("alibi", queries, keys, heads=heads, seed=1)
    for head, slope in enumerate(get_slopes(heads)):
        assert torch.equal(alibi[head], -slope * (i - j).abs().double())
    t5 = score_bias("t5", queries, keys, heads=heads, seed=1)
    table = t5_relative_attention_bias(1, heads)
    buckets = relative_position_bucket(j - i, bidirectional=False)
    for head in range(heads):
        assert torch.equal(t5[head], table[buckets, head].double())
    with pytest.raises(ValueError, match="'rope'"):
        score_bias("rope", queries, keys, heads=heads, seed=1)
