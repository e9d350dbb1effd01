"""The words of the compare view: what the numbers of :mod:`posviz.compare` mean.

Every function returns Streamlit Markdown; token texts are escaped with
:func:`posviz.token_text.for_markdown`, so nothing a user typed is interpreted. Numbers are
quoted from the comparison, and the texts named are the ones it compared (each cut to one
window: the rows the figure draws), in the characters the chips use, so the sentences always
match the figure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final

from posviz.compare import MAX_COMPARE_TOKENS, OrderComparison, OrderSummary
from posviz.lesson.repeats import count
from posviz.plots.word_order import CompareDecisions
from posviz.schemes import scheme
from posviz.token_text import for_markdown, readable
from posviz.tokenizer import decode, token_bytes

HAVIV_2022: Final = "https://arxiv.org/abs/2203.16634"
ATTENTION_NOTE: Final = (
    "Self-attention here is the book's `SelfAttention_v2` (chapter 3): "
    "`torch.manual_seed(789)`, then `W_query`, `W_key`, `W_value` = "
    "`nn.Linear(d, d, bias=False)`; `attn_weights = softmax(queries @ keys.T / sqrt(d))`, "
    "`context_vecs = attn_weights @ values`. Untrained weights are enough: the symmetry is a "
    "property of the computation, not of what it learned. Computed in float64 (exact for the "
    "float32 inputs), so *the same* means equal to 1e-9; the differences positions make are "
    "the largest differences quoted above."
)

CAUSAL_NOTE: Final = (
    "**What the causal mask does and does not mean.** GPT masks future tokens: token *i* "
    "attends to tokens 0…*i* only. That alone breaks the symmetry: what a token sees now "
    "depends on where it stands, so a decoder trained with **no** positional embeddings can "
    "still infer some order, for example how many tokens came before it (from how widely its "
    "attention is spread). Haviv et al. (2022), "
    f"[*Transformer Language Models without Positional Encodings Still Learn Positional "
    f"Information*]({HAVIV_2022}), found such causal models nearly as good as ones with "
    "positions. It does **not** mean that positions are unnecessary or that the mask shows "
    "word order: each token still sees an unordered bag of the tokens before it (the same "
    "token after the same tokens in another order gets the same context vector), the order "
    "has to be learned indirectly, the paper reports it for causal language models (masked, "
    "bidirectional ones without positions did much worse), and GPT-2 and Llama use positions."
)


def _chips(texts: Sequence[str]) -> str:
    """The tokens ``texts`` (:func:`posviz.tokenizer.token_texts`) as chips, written as the
    page's token chips write them."""
    return " ".join(f":gray-badge[{for_markdown(text)}]" for text in texts)


def compared_text(token_ids: Sequence[int], *, markdown: bool = True) -> str:
    """The text of the tokens compared, on one line (italic Markdown, or quoted plain text).

    >>> from posviz.tokenizer import encode
    >>> compared_text(encode("The dog bites"), markdown=False), compared_text(encode("*a*"))
    ("'The dog bites'", '*\\\\*a\\\\**')
    """
    text = readable(decode(list(token_ids)))
    return f"*{for_markdown(text)}*" if markdown else f"'{text}'"


def compared_texts(comparison: OrderComparison, *, markdown: bool = True) -> tuple[str, str]:
    """The two texts :func:`~posviz.compare.compare_order` compared (each cut to one window:
    the token ids it holds, the rows the figure draws), as :func:`compared_text` writes
    them."""
    return (
        compared_text(comparison.token_ids_a, markdown=markdown),
        compared_text(comparison.token_ids_b, markdown=markdown),
    )


def texts_line(comparison: OrderComparison) -> str:
    """The two texts compared, for the top of the view (Markdown): ``*A*  ·  *B*``; the page
    shows this, not the texts typed, which may be longer than a window."""
    first, second = compared_texts(comparison)
    return f"{first}  ·  {second}"


def _normalised(token_ids: Sequence[int]) -> Counter[str]:
    return Counter(
        b.decode("utf-8", errors="replace").strip().lower() for b in token_bytes(list(token_ids))
    )


def status_message(comparison: OrderComparison) -> str | None:
    """Why there is nothing to compare (the view then shows this sentence and no chart);
    ``None`` for a permutation."""
    ids_a, ids_b = comparison.token_ids_a, comparison.token_ids_b
    if comparison.status == "empty":
        which = (
            "Both texts are"
            if not ids_a and not ids_b
            else ("The first text is" if not ids_a else "The second text is")
        )
        return (
            f"{which} empty. Type a second text with the **same words in another order** "
            "(for example *The dog bites the man* and *The man bites the dog*) to see what "
            "self-attention makes of them."
        )
    if comparison.status == "too_long":
        longest = max(len(ids_a), len(ids_b))
        return (
            f"Compare mode takes up to {MAX_COMPARE_TOKENS} tokens per text (a sentence or two "
            f"shows the point); this comparison has {longest}. Use a shorter text or a smaller "
            "context length."
        )
    first, second = compared_texts(comparison)
    if comparison.status == "identical":
        return (
            f"The two texts compared, {first} and {second}, are the same tokens in the same "
            "order: self-attention gives them the same numbers, with positions or without, so "
            "there is no order to compare and no chart. Reorder some words in the second text "
            "(keep the words)."
        )
    if comparison.status == "different_tokens" and comparison.difference is not None:
        difference = comparison.difference
        lines = [
            f"The texts compared, {first} ({count(len(ids_a), 'token')}) and {second} "
            f"({count(len(ids_b), 'token')}), are **not the same tokens in another order**, so "
            "there is no order to compare."
        ]
        if difference.only_in_a:
            lines.append(f"Only in the first: {_chips(difference.texts_a)}")
        if difference.only_in_b:
            lines.append(f"Only in the second: {_chips(difference.texts_b)}")
        if _normalised(difference.only_in_a) == _normalised(difference.only_in_b):
            lines.append(
                "The words are the same, the tokens are not: GPT-2's tokenizer gives a word "
                "after a space its own token (␣dog is not dog), and capitals are other tokens "
                "too. A word moved to the very start of a text loses its space. Keep the first "
                "word in place, as in *The dog bites the man* / *The man bites the dog*."
            )
        return "\n\n".join(lines)
    return None


def cut_note(comparison: OrderComparison) -> str | None:
    """Say that only the second text's first window is compared, if it is longer, naming the
    tokens compared."""
    if not comparison.second_text_cut:
        return None
    compared = compared_text(comparison.token_ids_b)
    return (
        f"The second text is longer than one window: its first "
        f"{count(len(comparison.token_ids_b), 'token')} ({compared}) are compared, "
        f"{comparison.second_text_cut} more are left out."
    )


def _difference(summary: OrderSummary) -> str:
    return f"{summary.max_difference:.1e}" if summary.permuted else f"{summary.max_difference:.3f}"


def findings(comparison: OrderComparison, decisions: CompareDecisions) -> list[str]:
    """One Markdown paragraph per step of the argument, with the numbers of ``comparison``,
    for the figure :func:`~posviz.plots.word_order.compare_chart` drew (``decisions``).

    The largest differences are over every dimension, and when the panels draw every k-th
    one the sentence says so: they summarise whole rows (a difference of 0 over all d is what
    "the same" means), which a sample of the cells could not show.
    """
    without, with_positions = comparison.without_positions, comparison.with_positions
    if comparison.order is None or without is None or with_positions is None:
        return []
    spec = scheme(comparison.scheme)
    identical = comparison.status == "identical"
    over = f" over all {decisions.emb_dim} dimensions" if decisions.sampled else ""
    tokens = "**Token embeddings:** the second text's rows are the first text's rows "
    tokens += (
        ("in the same order" if identical else "in another order") + ", bit for bit."
        if comparison.token_rows_equal
        else "(unexpectedly) not equal."
    )
    inputs_differ = comparison.input_max_difference
    if spec.positionless:
        inputs = (
            f"**Input embeddings:** the same rows{'' if identical else ' reordered'} too: this "
            "scheme adds nothing."
        )
    elif spec.bias is not None:
        inputs = f"**Input embeddings:** {spec.bias.inputs}"
    elif spec.rotates:
        inputs = (
            "**Input embeddings:** RoPE adds nothing to them; it rotates each query and key by "
            "its position inside attention, so the rotated queries differ."
        )
    elif inputs_differ == 0.0:
        inputs = (
            "**Input embeddings:** the same rows: each token stands at the same position in "
            "both texts, so it gets the same position vector."
        )
    else:
        inputs = (
            "**Input embeddings:** not the same rows: the same token at another position gets "
            f"another position vector (rows matched by token differ by up to "
            f"{inputs_differ:.3f}{over})."
        )
    if spec.rotates and identical:
        inputs = (
            "**Input embeddings:** RoPE adds nothing to them; it rotates each query and key by "
            "its position inside attention, the same positions in both texts."
        )
    attention = "Causal self-attention" if comparison.causal else "Self-attention"
    if without.permuted:
        blind = (
            f"**{attention} without positions:** the second text's context vectors are "
            f"the first's, {'in the same order' if identical else 'reordered'} (largest "
            f"difference {_difference(without)}{over}, float64 rounding). Any summary that "
            f"ignores order, like their mean, is the same: cosine "
            f"**{without.mean_cosine:.6f}**. To this layer both texts are the same bag of tokens."
        )
    else:
        same = without.same_position_rows
        seen = (
            f" Only position(s) {', '.join(map(str, same))} keep their context vector: there a "
            "token sees the same tokens in both texts."
            if same
            else ""
        )
        blind = (
            f"**{attention} without positions:** the context vectors are no longer a "
            f"reordering (largest difference {_difference(without)}{over}; cosine of the means "
            f"**{without.mean_cosine:.6f}**). The mask alone breaks the symmetry: token *i* sees "
            f"tokens 0…*i* only, so what it sees depends on where it stands.{seen}"
        )
    positioned = (
        f"**{attention} with {spec.words.positions}:** largest difference "
        f"{_difference(with_positions)}{over}, cosine of the means "
        f"**{with_positions.mean_cosine:.6f}**"
    )
    if spec.positionless:
        positioned += ": nothing changes, there is no position signal."
    elif identical:
        positioned += ": the same, as the two texts are."
    elif with_positions.permuted:
        positioned += ": still the same vectors reordered."
    else:
        positioned += ": now the layer sees two different sentences."
    return [tokens, inputs, blind, positioned]


def summary_lines(comparison: OrderComparison) -> list[str]:
    """The comparison as plain text, for the command line (no Markdown)."""
    ids_a, ids_b = comparison.token_ids_a, comparison.token_ids_b
    if comparison.status == "empty":
        return ["compare: a text is empty, nothing to compare"]
    if comparison.status == "too_long":
        longest = max(len(ids_a), len(ids_b))
        return [f"compare: at most {MAX_COMPARE_TOKENS} tokens per text, this has {longest}"]
    if comparison.difference is not None:
        only_a = list(comparison.difference.texts_a)
        only_b = list(comparison.difference.texts_b)
        return [
            f"compare: not the same tokens in another order ({len(ids_a)} and {len(ids_b)} "
            f"tokens; only in the first: {only_a}; only in the second: {only_b})"
        ]
    without, positioned = comparison.without_positions, comparison.with_positions
    if without is None or positioned is None:
        return []
    mask = "causal mask" if comparison.causal else "no mask"
    same = "identical texts" if comparison.status == "identical" else "the same tokens reordered"
    return [
        f"compare: {len(ids_a)} tokens, {same} (scheme {comparison.scheme}, {mask})",
        f"cosine of the mean context vectors: no positions {without.mean_cosine:.6f} "
        f"(largest difference {_difference(without)})",
        f"cosine of the mean context vectors: with positions {positioned.mean_cosine:.6f} "
        f"(largest difference {_difference(positioned)})",
    ]
