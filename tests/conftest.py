"""Shared fixtures: an AppTest factory, and a real `streamlit run` server with a Chromium page.

Browser tests are marked ``browser``; they skip (saying why) only where /usr/bin/chromium or
Playwright is missing. CI installs both and sets ``POSVIZ_REQUIRE_BROWSER=1``, which turns that
skip into a failure, so in CI they always run.
"""

from __future__ import annotations

import os

# OpenMP's idle threads sleep instead of spinning (libgomp reads this once, when torch loads, so
# it is set before any import of torch). Tests run beside other tests (pytest-xdist), servers and
# browsers on a machine's few cores: a spinning thread holds a core another process needs. Two
# copies of the RoPE retraining test at once took 263 s each with spinning threads, 65 s with
# sleeping ones (one alone: 42 s spinning, 38 s sleeping); the numbers are the same.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, NoReturn
from urllib.parse import urlsplit

import numpy as np
import pytest
import reference
import torch
from hypothesis import settings as hypothesis_settings
from hypothesis.configuration import set_hypothesis_home_dir
from streamlit.testing.v1 import AppTest

from devtools.chromium import CHROMIUM, CHROMIUM_ARGS, PHONE_CONTEXT
from devtools.fake_hub import Blob, FakeHub, gpt2_layout, made_up_tables, serve, write_safetensors
from devtools.server import running_server
from posviz_app import runtime

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app.py"
# GPT-2's trained tables: no test may reach the real Hugging Face Hub or read the user's cache.
# Everything (AppTest, the CLI, `streamlit run` servers started by tests) inherits these;
# tests that need tables use the `gpt2_hub` fixture, a loopback stand-in with made-up tables.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"  # nothing listens there
os.environ["POSVIZ_CACHE_DIR"] = tempfile.mkdtemp(prefix="posviz-test-empty-cache-")
# No token from the environment or a saved login (huggingface_hub reads HF_HOME/token): tests
# that need one set HF_TOKEN themselves, for the stand-in only.
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="posviz-test-hf-home-")
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"  # huggingface_hub's user-agent lookup: no request
for _variable in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "TRANSFORMERS_OFFLINE"):
    os.environ.pop(_variable, None)
# Hypothesis keeps no example database, and its other files (a cache of constants) go to the
# system temp folder: tests write nothing into the working tree. No deadline: a test never
# times the code (benchmarks/ does), and CI runs the unit tests beside other stages.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "posviz-hypothesis")
hypothesis_settings.register_profile("posviz", database=None, deadline=None)
hypothesis_settings.load_profile("posviz")

APP_TIMEOUT = 120  # seconds: the first run imports torch


@pytest.fixture(scope="session", autouse=True)
def glibc_malloc_as_it_was() -> Iterator[None]:
    """This test process keeps glibc's own malloc settings.

    AppTest runs the page in this process, and the page's first run tunes malloc for a server
    (``runtime.bound_malloc``: a fixed 128 kB mmap threshold, two arenas), for as long as the
    process lives. In a pytest-xdist worker, every torch test after the first AppTest test
    then mapped and unmapped its buffers at each step: 100 training steps took 22 s instead of
    13, 9 s of them in the kernel, and the unit stage spent 107 CPU-seconds in the kernel.
    Servers the tests start tune theirs as production does, and
    tests/test_runtime_memory.py checks the tuning in a process of its own.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "bound_malloc", lambda: False)
        yield


REQUIRE_BROWSER = os.environ.get("POSVIZ_REQUIRE_BROWSER", "") not in ("", "0")


@pytest.fixture
def decode_array() -> Callable[[object], np.ndarray]:
    """:func:`reference.decode_array`, for figure JSON (``z``, ``x``, ``customdata``)."""
    return reference.decode_array


def _no_browser(reason: str) -> NoReturn:
    """Skip, or fail in CI (``POSVIZ_REQUIRE_BROWSER=1``) where a skip would hide the test."""
    if REQUIRE_BROWSER:
        pytest.fail(f"POSVIZ_REQUIRE_BROWSER is set but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def app_test() -> Callable[..., AppTest]:
    """``app_test(query={"emb_dim": "8"})`` -> an AppTest of app.py that has run once."""

    def make(query: dict[str, str] | None = None) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=APP_TIMEOUT)
        for key, value in (query or {}).items():
            at.query_params[key] = value
        return at.run()

    return make


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """Base URL of a `streamlit run app.py` this test session owns."""
    with running_server() as server:
        yield server.url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """A headless Debian Chromium driven by Playwright (skips, saying why, if absent)."""
    if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        _no_browser(f"no Chromium at {CHROMIUM}: install it with `apt-get install -y chromium`")
    try:
        from playwright import sync_api
    except ImportError:
        _no_browser("Playwright is not installed (pip install -r requirements-dev.txt)")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        try:
            yield chromium
        finally:
            chromium.close()


WAIT_POLLING_MS: Final = 50


class DevicePages:
    """Fresh pages in this session's browser contexts, one context per kind of device (a
    desktop, or a phone: its User-Agent and touch).

    The contexts live for the session, each with a blank page always open, so a test's page
    reuses the renderer process, the compiled scripts and the HTTP cache of the pages before
    it: a page load of the app costs the browser about 3.2 CPU-seconds instead of 5.0 in a new
    context (measured on this project's 2-core machine), and the browser tests are CPU-bound.
    Nothing else is shared: every test gets its own page, hence its own Streamlit session, and
    :meth:`close` clears the storage and cookies of every origin the page visited (Streamlit
    keeps the sidebar's width and state in ``localStorage``). Tests about a cold cache or
    permissions make their own context.
    """

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.anchors: dict[bool, Any] = {}  # phone or not -> its context's blank page

    def open(self, width: int, height: int, *, phone: bool = False) -> Any:
        """A fresh page of that size (CSS px) that records console errors and dialogs."""
        viewport = {"width": width, "height": height}
        if phone not in self.anchors:
            options: dict[str, object] = {"viewport": viewport}
            if phone:
                options |= PHONE_CONTEXT
            context = self.browser.new_context(**options)
            self.anchors[phone] = context.new_page()  # about:blank, open until the end
        page = self.anchors[phone].context.new_page()
        page.set_viewport_size(viewport)
        page.origins = set()  # every http(s) origin it visits: close() clears them
        page.on("framenavigated", lambda frame: page.origins.add(_origin(frame.url)))
        page.console_errors = []
        page.dialogs = []
        page.on(
            "console",
            lambda message: (
                page.console_errors.append(message.text) if message.type == "error" else None
            ),
        )
        page.on("pageerror", lambda error: page.console_errors.append(str(error)))

        def on_dialog(dialog: Any) -> None:
            page.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        wait_for_function = page.wait_for_function

        def polled(expression: str, **options: Any) -> Any:
            options.setdefault("polling", WAIT_POLLING_MS)
            return wait_for_function(expression, **options)

        page.wait_for_function = polled
        return page

    def close(self, page: Any) -> None:
        """Close ``page`` and forget what it stored: the next test's page starts clean."""
        page.close()
        anchor = next(a for a in self.anchors.values() if a.context == page.context)
        cdp = anchor.context.new_cdp_session(anchor)
        for origin in sorted(page.origins - {""}):
            cdp.send(
                "Storage.clearDataForOrigin",
                {"origin": origin, "storageTypes": "cookies,local_storage,indexeddb"},
            )
        cdp.detach()

    def close_all(self) -> None:
        for anchor in self.anchors.values():
            anchor.context.close()


def _origin(url: str) -> str:
    """``http://127.0.0.1:8501`` of a page's URL ("" for about:blank and the like)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else ""


@pytest.fixture(scope="session")
def device_pages(browser: object) -> Iterator[DevicePages]:
    """The session's :class:`DevicePages` (its contexts closed at the end)."""
    pages = DevicePages(browser)
    try:
        yield pages
    finally:
        pages.close_all()


@pytest.fixture
def page(device_pages: DevicePages) -> Iterator[Any]:
    """A fresh page (1600 x 1000, projector-like) that records console errors and dialogs.

    ``page.console_errors`` and ``page.dialogs`` are lists the test can assert on.
    """
    new_page = device_pages.open(1600, 1000)
    try:
        yield new_page
    finally:
        device_pages.close(new_page)


@pytest.fixture
def sized(device_pages: DevicePages) -> Iterator[Callable[..., Any]]:
    """``sized(width, height, phone=False)`` -> a fresh page of that size (CSS px), recording
    console errors and dialogs as ``page`` does."""
    pages: list[Any] = []

    def make(width: int, height: int, *, phone: bool = False) -> Any:
        pages.append(device_pages.open(width, height, phone=phone))
        return pages[-1]

    try:
        yield make
    finally:
        for each in pages:
            device_pages.close(each)


@pytest.fixture
def other_torch_fill(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Simulate a torch whose ``normal_`` fills in other chunks than torch 2.13.0: every fill
    of posviz's tables is done in two halves, which moves the 16-element chunk boundaries.
    posviz's self-check must notice (its remembered pass is forgotten before and after)."""
    import posviz.embeddings

    def in_halves(buffer: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        half = buffer.numel() // 2
        buffer.view(-1)[:half].normal_(generator=generator)
        buffer.view(-1)[half:].normal_(generator=generator)
        return buffer

    monkeypatch.setattr(posviz.embeddings, "_fill_normal", in_halves)
    posviz.embeddings._torch_fill_matches.cache_clear()
    yield
    posviz.embeddings._torch_fill_matches.cache_clear()


@pytest.fixture(scope="session")
def gpt2_blob(tmp_path_factory: pytest.TempPathFactory) -> Blob:
    """A made-up safetensors file with GPT-2 124M's 148 tensor names, shapes and dtypes
    (548 MB, sparse): wte and wpe hold random numbers, NOT GPT-2's; the rest are zeros."""
    return write_safetensors(
        tmp_path_factory.mktemp("gpt2") / "model.safetensors",
        gpt2_layout(),
        made_up_tables(50257, 1024, 768),
    )


@pytest.fixture
def hub_online(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let huggingface_hub's session make requests (to the loopback stand-in): it read
    ``HF_HUB_OFFLINE=1`` (set above) when it was imported, and refuses every request while
    that holds. posviz's own ``HubFile.offline`` still decides per test."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


@pytest.fixture
def retry_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The seconds posviz.gpt2.hub waits between retries, recorded instead of slept."""
    import posviz.gpt2.hub

    waits: list[float] = []
    monkeypatch.setattr(posviz.gpt2.hub, "_sleep", waits.append)
    return waits


@pytest.fixture
def gpt2_hub(
    gpt2_blob: Blob, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub_online: None
) -> Iterator[FakeHub]:
    """The loopback Hub serving :func:`gpt2_blob`, with ``HF_ENDPOINT`` pointing at it and
    ``POSVIZ_CACHE_DIR`` at an empty folder; the app's cached store is dropped before and after
    (``st.cache_resource`` outlives an AppTest)."""
    import streamlit as st

    with serve(gpt2_blob.path) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        monkeypatch.setenv("POSVIZ_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.delenv("HF_HUB_OFFLINE")
        st.cache_resource.clear()
        try:
            yield hub
        finally:
            st.cache_resource.clear()
