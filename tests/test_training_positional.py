"""The book's GPT with every positional scheme inside (issue 41, item 1): posviz's
``SchemeGPTModel`` against tests/reference.py's ``scheme_gpt_logits``, written from the
originals (the book's chapter 4 forward pass, llama3.py's RoPE, ALiBi's ``get_slopes``, T5's
``_relative_position_bucket``, transformers' RoPE scalings), never from posviz.

Both in float64 (to 1e-7: the book's GELU writes √(2/π) as a float32 scalar, F.gelu does not).
Each model is seeded and made as the book makes ``GPTModel``; it is compared at its context
length L, then at 3L (a longer input than it was made for), before and after a few training
steps (so that every weight, T5's learned bias table among them, has moved).
"""

from __future__ import annotations

import pytest
import reference
import torch

from posviz.schemes import SCHEMES, SchemeSpec, scheme
from posviz.training.model import GPTConfig, GPTModel
from posviz.training.positional import BIAS_SEED, SchemeGPTModel

CONFIG = GPTConfig(
    vocab_size=40, context_length=8, emb_dim=32, n_heads=4, n_layers=2, drop_rate=0.0
)
NAMES = [spec.name for spec in SCHEMES]


def _model(spec: SchemeSpec, seed: int = 123) -> SchemeGPTModel:
    torch.manual_seed(seed)
    return SchemeGPTModel(CONFIG, spec).double().eval()


def _state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: value.detach() for name, value in model.state_dict().items()}


def _train(model: SchemeGPTModel, steps: int = 3) -> None:
    """A few AdamW steps on random windows, so that every weight moves."""
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(5)
    for _ in range(steps):
        ids = torch.randint(
            0, CONFIG.vocab_size, (2, CONFIG.context_length + 1), generator=generator
        )
        logits = model(ids[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()


def _compare(model: SchemeGPTModel, length: int, **rope: object) -> None:
    ids = torch.randint(
        0, CONFIG.vocab_size, (2, length), generator=torch.Generator().manual_seed(9)
    )
    with torch.no_grad():
        got = model(ids)
    config = None
    if rope:
        config = reference.hf_rope_config(  # type: ignore[arg-type]
            rope["scaling"],
            head_dim=CONFIG.emb_dim // CONFIG.n_heads,
            base=10_000.0,
            factor=rope["factor"],
            original_length=rope["original"],
        )
    want = reference.scheme_gpt_logits(
        _state(model), ids, n_heads=CONFIG.n_heads, scheme=model.spec.name, rope=config
    )
    assert torch.allclose(got, want, rtol=0, atol=1e-7), float((got - want).abs().max())


@pytest.mark.parametrize("name", NAMES)
def test_every_scheme_is_the_references_at_its_length_and_past_it(name: str) -> None:
    model = _model(scheme(name))
    for trained in (False, True):
        if trained:
            _train(model)
        _compare(model, CONFIG.context_length)
        if scheme(name).learned:
            ids = torch.zeros(1, 3 * CONFIG.context_length, dtype=torch.long)
            with pytest.raises(IndexError, match="index out of range"):
                model(ids)  # past the learned table's last row, as GPT-2 past 1,024
        else:
            _compare(model, 3 * CONFIG.context_length)


def test_the_learned_scheme_is_the_books_gpt_bit_for_bit() -> None:
    torch.manual_seed(123)
    book = GPTModel(CONFIG).eval()
    model = _model(scheme("learned")).float()
    ids = torch.randint(0, CONFIG.vocab_size, (2, CONFIG.context_length))
    assert torch.equal(model(ids), book(ids))


def test_every_scheme_starts_from_the_books_weights() -> None:
    """Only where the position goes differs between runs: every weight the book's GPTModel
    makes is the same, whatever the scheme (reference.book_gpt_init makes them by name)."""
    book = reference.book_gpt_init(
        vocab_size=CONFIG.vocab_size,
        context_length=CONFIG.context_length,
        emb_dim=CONFIG.emb_dim,
        n_layers=CONFIG.n_layers,
        seed=123,
    )
    for name in NAMES:
        torch.manual_seed(123)
        state = _state(SchemeGPTModel(CONFIG, scheme(name)))
        for key, value in book.items():
            assert torch.equal(state[key], value), (name, key)
    t5 = _state(SchemeGPTModel(CONFIG, scheme("t5")))["bias_table"]
    assert torch.equal(t5, reference.t5_relative_attention_bias(BIAS_SEED, CONFIG.n_heads))


@pytest.mark.parametrize("scaling", ["linear", "ntk", "dynamic", "yarn", "llama3"])
def test_ropes_extensions_without_retraining_are_transformers(scaling: str) -> None:
    model = _model(scheme("rope"))
    _train(model)
    model.use_options(rope_scaling=scaling, rope_factor=4.0, rope_original=CONFIG.context_length)
    for length in (CONFIG.context_length, 4 * CONFIG.context_length):
        _compare(model, length, scaling=scaling, factor=4.0, original=CONFIG.context_length)


def test_only_a_table_that_is_looked_up_learns() -> None:
    """The book's ``pos_emb`` is made for every scheme (the same random numbers), but only the
    learned scheme reads it, so only there does it take gradients (and weight decay)."""
    for name in NAMES:
        model = _model(scheme(name))
        assert model.pos_emb.weight.requires_grad is scheme(name).learned, name
