"""posviz.schemes: each scheme against its formula in tests/reference.py, bit for bit.

* sinusoidal: Vaswani et al. (2017), ``PE[p, 2i] = sin(p / 10000^(2i/d))``,
  ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``, computed element by element with ``math``.
* rope: the functions of the book's Llama notebook (ch05/07_gpt_to_llama), and RoPE's
  defining property (dot products depend only on the position difference).
"""

from __future__ import annotations

import math

import pytest
import torch
from reference import compute_rope, precompute_rope_params, random_rows, sinusoidal

from posviz.schemes import apply_scheme, rope_angles, rope_rotate, sinusoidal_encoding

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
    with pytest.raises(ValueError, match="'alibi'"):
        apply_scheme("alibi", random_rows(2, 2), None)  # type: ignore[arg-type]


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal", "none", "rope"])
def test_shapes_and_dtype(scheme: str) -> None:
    x = random_rows(3, 4)
    positioned = apply_scheme(scheme, x, random_rows(4, 4))  # type: ignore[arg-type]
    assert positioned.scheme == scheme
    assert positioned.position_signal.shape == positioned.input_embeddings.shape == (3, 4)
    assert positioned.input_embeddings.dtype == torch.float32
