"""What every browser-driving script does on posviz's page (tests, benchmarks, the screenshot
script): open a tab by its button, and find the open tab's panel."""

from __future__ import annotations

from typing import Any, Final

# The tab buttons (st.segmented_control, key "view"): each a radio named by its tab's label.
TAB_BUTTONS: Final = '.st-key-view [role="radio"]'
TAB_PANEL: Final = ".st-key-tab_panel"  # the open tab's container (posviz_app.page.TAB_PANEL)


def open_tab(page: Any, label: str) -> None:
    """Click the button of the tab ``label`` (its whole label: "Similarity", "Download")."""
    page.locator(".st-key-view").get_by_role("radio", name=label, exact=True).click()
