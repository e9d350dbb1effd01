"""Debian's Chromium as every browser-driving script here launches it (tests, benchmarks, the
screenshot scripts): the path, and flags for a headless run that reaches no one but loopback.

Playwright drives it through ``executable_path``; never ``playwright install``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

CHROMIUM: Final = "/usr/bin/chromium"  # apt-get install -y chromium
CHROMIUM_ARGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
# Browser-context options of a phone (its User-Agent, touch). posviz lays the chart out for the
# width the chart measures, whatever the User-Agent says; the layout tests try both.
PHONE_CONTEXT: Final = MappingProxyType(
    {
        "user_agent": (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
            "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
        ),
        "is_mobile": True,
        "has_touch": True,
    }
)
