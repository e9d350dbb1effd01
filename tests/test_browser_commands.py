"""Issue 42, in a real browser (Debian's Chromium, Playwright, `streamlit run` on 127.0.0.1,
offline, GPT-2's tables not cached): the fallback warning's command is one unbroken line a
learner can copy, even on a phone, where the warning wraps: Chromium broke it after the hyphen
("python -" / "m posviz --fetch-gpt2"). Read from the line boxes Chromium laid the command's
characters out in (``Range.getClientRects``); its code element holds the command alone.

Waits are for page conditions, never for time; nothing is timed.
"""

from __future__ import annotations

from typing import Any

import pytest
from pages import wait_for_text

pytestmark = pytest.mark.browser

COMMAND = "python -m posviz --fetch-gpt2"
# The tops of the lines each code element holding the command in a warning is laid out on,
# and its text.
LINES = """(command) => {
    const alerts = document.querySelectorAll('[data-testid="stAlertContentWarning"]');
    return Array.from(alerts).flatMap((alert) =>
        Array.from(alert.querySelectorAll('code'))
            .filter((code) => code.textContent.includes(command))
            .map((code) => {
                const range = document.createRange();
                range.selectNodeContents(code);
                const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0);
                const tops = new Set(rects.map((r) => Math.round(r.top)));
                return {tops: [...tops], text: code.textContent.trim()};
            }));
}"""


@pytest.mark.parametrize(("width", "height", "phone"), [(390, 844, True), (1280, 800, False)])
def test_the_fetch_command_never_breaks_over_two_lines(
    sized: Any, server_url: str, width: int, height: int, phone: bool
) -> None:
    page = sized(width, height, phone=phone)
    page.goto(f"{server_url}/?weights=gpt2")
    wait_for_text(page, "Showing the book's random init instead")
    # Streamlit draws a code block after its first paint (a placeholder until then)
    page.wait_for_function(f"(command) => ({LINES})(command).length > 0", arg=COMMAND)
    found = page.evaluate(LINES, COMMAND)
    assert len(found) == 1, found  # one warning, the command as code
    assert len(found[0]["tops"]) == 1, found  # on one line
    assert found[0]["text"] == COMMAND, found  # alone in its block: copied as it is
    assert page.console_errors == []
