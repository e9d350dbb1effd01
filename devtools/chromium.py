"""Debian's Chromium as every browser-driving script here launches it (tests, benchmarks, the
screenshot scripts): the path, and flags for a headless run that reaches no one but loopback.

Playwright drives it through ``executable_path``; never ``playwright install``.
"""

from __future__ import annotations

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
