"""posviz.lesson.schemes: every scheme has its words, and the repeat sentence quotes its numbers."""

from __future__ import annotations

import pytest

from posviz.config import SCHEMES
from posviz.lesson.schemes import (
    POSITION_PANEL_NOTES,
    SCHEME_LABELS,
    SCHEME_NOTES,
    repeat_sentence,
)
from posviz.similarity import RepeatedToken


def test_every_scheme_has_a_label_and_notes_in_menu_order() -> None:
    for words in (SCHEME_LABELS, SCHEME_NOTES, POSITION_PANEL_NOTES):
        assert tuple(words) == SCHEMES
        assert all(text.strip() for text in words.values())
    assert len(set(SCHEME_LABELS.values())) == len(SCHEMES)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_repeat_sentence_quotes_the_values(scheme: str) -> None:
    repeat = RepeatedToken(scheme, 8278, "␣rose", 1, 4, 1.0, 0.25, -0.123456)  # type: ignore[arg-type]
    sentence = repeat_sentence(repeat)
    assert sentence.startswith("Token '␣rose' (id 8278) appears at positions 1 and 4.")
    assert "similarity 1.000" in sentence and "shows -0.123" in sentence
    blind = "cannot tell the occurrences apart" in sentence
    assert blind == (scheme == "none")


def test_markdown_sentence_escapes_the_token() -> None:
    repeat = RepeatedToken("learned", 1174, "**[x](y)", 0, 2, 1.0, 0.1, 0.5)
    assert "“\\*\\*\\[x\\]\\(y\\)”" in repeat_sentence(repeat, markdown=True)
    assert "'**[x](y)'" in repeat_sentence(repeat)
