"""Faults: broken tokenizer data, cache eviction, a server restart; and the security posture.

* Missing or corrupted GPT-2 files give :class:`TokenizerDataError` at start, and the app shows
  that message instead of any tokenization.
* Evicting Streamlit's caches (by hand, or by cycling past ``max_entries``) mid-session keeps
  the chart equal to torch's reference.
* A server restarted on the same port: the open page reconnects and shows the same view, taken
  from its URL (browser test).
* ``.streamlit/config.toml`` keeps the security options; no user text can reach an HTML sink.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import numpy as np
import pytest
import streamlit as st
import streamlit.config
from charts import sent_figures
from reference import book_window, decode_array
from streamlit.testing.v1 import AppTest
from widgets import seed_box

import posviz.tokenizer
from devtools.server import free_port, start_server
from posviz.tokenizer import TokenizerDataError, encode, get_encoding

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "posviz" / "data"


def reference(
    seed: int, emb_dim: int, context_length: int, token_ids: list[int]
) -> list[np.ndarray]:
    """The book's token, positional and input rows of window 0 of ``token_ids``."""
    ids = token_ids[:context_length]
    window = book_window(
        "learned", seed=seed, emb_dim=emb_dim, context_length=context_length, token_ids=ids
    )
    return [matrix.numpy() for matrix in window]


def assert_chart_matches(at: AppTest, seed: int, emb_dim: int, context_length: int) -> None:
    assert not at.exception
    figures = list(sent_figures(at).values())
    assert len(figures) == 1
    spec = figures[0]
    token_ids = encode(at.session_state["text"])
    for trace, want in zip(
        spec["data"], reference(seed, emb_dim, context_length, token_ids), strict=True
    ):
        assert np.array_equal(decode_array(trace["z"]), want)


# --- tokenizer data missing or corrupted ----------------------------------------------------


class _FakeResources:
    """Stands in for ``importlib.resources``: ``files("posviz")`` is a folder we control."""

    def __init__(self, package_dir: Path) -> None:
        self.package_dir = package_dir

    def files(self, package: str) -> Path:
        assert package == "posviz"
        return self.package_dir


@pytest.fixture
def broken_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of posviz/data the test may damage; encoding and Streamlit caches are fresh."""
    (tmp_path / "data").mkdir()
    for name in ("vocab.bpe", "encoder.json"):
        (tmp_path / "data" / name).write_bytes((DATA / name).read_bytes())
    monkeypatch.setattr(posviz.tokenizer, "resources", _FakeResources(tmp_path))
    get_encoding.cache_clear()
    st.cache_resource.clear()
    st.cache_data.clear()
    try:
        yield tmp_path / "data"
    finally:
        monkeypatch.undo()
        get_encoding.cache_clear()
        st.cache_resource.clear()
        st.cache_data.clear()


def _flip_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle] = ord("x") if data[middle] != ord("x") else ord("y")
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["vocab.bpe", "encoder.json"])
def test_missing_file_is_a_clear_error(broken_data: Path, name: str) -> None:
    (broken_data / name).unlink()
    with pytest.raises(TokenizerDataError, match=rf"posviz/data/{re.escape(name)} is missing"):
        get_encoding()
    with pytest.raises(TokenizerDataError):
        encode("hello world")  # never a wrong tokenization


@pytest.mark.parametrize("name", ["vocab.bpe", "encoder.json"])
def test_corrupted_file_is_a_clear_error(broken_data: Path, name: str) -> None:
    _flip_one_byte(broken_data / name)
    with pytest.raises(TokenizerDataError, match=rf"{re.escape(name)} is corrupted: sha256"):
        get_encoding()


def test_intact_copy_still_works(broken_data: Path) -> None:
    """The fixture itself does not break anything: an untouched copy encodes as GPT-2 does."""
    assert encode("hello world") == [31373, 995]


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        pytest.param(lambda d: (d / "vocab.bpe").unlink(), "is missing", id="missing"),
        pytest.param(lambda d: _flip_one_byte(d / "encoder.json"), "is corrupted", id="corrupted"),
        pytest.param(lambda d: (d / "encoder.json").write_bytes(b""), "is corrupted", id="empty"),
    ],
)
def test_app_shows_the_tokenizer_error_instead_of_tokens(
    broken_data: Path,
    app_test: Callable[..., AppTest],
    damage: Callable[[Path], None],
    expected: str,
) -> None:
    damage(broken_data)
    at = app_test()
    assert not at.exception
    errors = [str(e.value) for e in at.error]
    assert any("GPT-2 tokenizer file" in e and expected in e for e in errors), errors
    assert not sent_figures(at), "a chart from a broken tokenizer would be wrong"
    assert not any("-badge[" in str(m.value) for m in at.markdown), "token chips were shown"


# --- cache eviction -----------------------------------------------------------------------


def test_cache_clear_mid_session_keeps_numbers_right(app_test: Callable[..., AppTest]) -> None:
    at = app_test(query={"seed": "5", "emb_dim": "16", "context_length": "8"})
    assert_chart_matches(at, 5, 16, 8)
    st.cache_resource.clear()
    st.cache_data.clear()
    seed_box(at).set_value("6").run()
    assert_chart_matches(at, 6, 16, 8)
    st.cache_resource.clear()
    st.cache_data.clear()
    seed_box(at).set_value("5").run()
    assert_chart_matches(at, 5, 16, 8)
    at.text_area(key="text").set_value("Every effort moves you, every effort.").run()
    assert_chart_matches(at, 5, 16, 8)


def test_lru_eviction_past_max_entries_keeps_numbers_right(
    app_test: Callable[..., AppTest],
) -> None:
    """seeded_tables keeps 8 tables: visit 10 (seed, emb_dim) pairs, then the first again."""
    at = app_test(query={"seed": "1000", "emb_dim": "8", "context_length": "4"})
    assert_chart_matches(at, 1000, 8, 4)
    for offset in range(1, 10):
        seed_box(at).set_value(str(1000 + offset)).run()
        at.slider(key="emb_dim").set_value(8 + 2 * (offset % 3)).run()
        assert_chart_matches(at, 1000 + offset, 8 + 2 * (offset % 3), 4)
    seed_box(at).set_value("1000").run()
    at.slider(key="emb_dim").set_value(8).run()
    assert_chart_matches(at, 1000, 8, 4)


# --- security posture ---------------------------------------------------------------------

CONFIG = ROOT / ".streamlit" / "config.toml"


def test_config_keeps_the_security_options() -> None:
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert config["browser"]["gatherUsageStats"] is False
    assert config["server"]["enableXsrfProtection"] is True
    assert config["server"]["enableCORS"] is True
    assert config["server"]["headless"] is True
    assert config["server"]["maxUploadSize"] <= 5
    assert config["client"]["showErrorDetails"] == "none"
    assert config["client"]["toolbarMode"] in {"minimal", "viewer"}
    assert config["server"].get("enableStaticServing", False) is False


def test_config_options_exist_in_this_streamlit() -> None:
    """A misspelt option is silently ignored by Streamlit: check every name is real."""
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    known = set(streamlit.config._config_options_template)
    names = {
        f"{section}.{option}"
        for section, options in config.items()
        for option, value in options.items()
        if not isinstance(value, dict)
    }
    assert names and names <= known, sorted(names - known)


HTML_SINKS = re.compile(
    r"unsafe_allow_html\s*=\s*True|st\.html\s*\(|components\.html\s*\(|components\.v1"
    r"|components\.v2|unsafe_allow_javascript|(?<!\.)\beval\s*\(|\bexec\s*\(|pickle\.loads?"
)  # Python's eval(), not a method of that name (torch's model.eval() turns dropout off)


# The page's one static style block (posviz_app/page.css, drawn by page.py with st.html of its
# path, which wraps a .css file in <style> tags): the only HTML sink allowed.
STYLE_SINK = "st.html(PAGE_CSS)"
PAGE = ROOT / "posviz_app" / "page.py"
PAGE_CSS = ROOT / "posviz_app" / "page.css"
# Lecture mode's navigation component (posviz_app/lecture.py): its JavaScript and CSS are the
# packaged nav.js and nav.css; its data is the slide's number and title.
LECTURE = ROOT / "posviz_app" / "lecture.py"
LECTURE_SINK = (
    "_nav = st.components.v2.component(NAV_NAME, js=NAV_JS, css=NAV_CSS, isolate_styles=False)"
)
# The chart component (posviz_app/chart.py): its JavaScript is the packaged chart.js (for the
# charts and for the early loader of plotly.js, hidden by one static style block), and the
# first component API (posviz_app/_streamlit.py) only registers plotly.js's folders for
# Streamlit's file route. These lines are allowed as written here;
# test_the_chart_component_holds_only_static_code checks what they are given.
CHART = ROOT / "posviz_app" / "chart.py"
CHART_SINKS = (
    "_component = st.components.v2.component(COMPONENT_NAME, js=CHART_JS, isolate_styles=False)",
    "_loader = st.components.v2.component(LOADER_NAME, js=CHART_JS, isolate_styles=False)",
    "st.html(_HIDE_LOADER)",
)
INTERNALS = ROOT / "posviz_app" / "_streamlit.py"
INTERNALS_SINKS = ("from streamlit.components.v1 import declare_component",)
# What chart.js must never do with the figure's text: write HTML or run strings as code.
JS_SINKS = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\s*\(|new Function"
    r"|createContextualFragment|setTimeout\(\s*[\"'`]"
)
# What a style block must never hold: scripts, links out, imports, HTML outside <style>.
UNSAFE_IN_STYLE = re.compile(r"<(?!/?style>)|javascript:|@import|url\(|expression\(", re.I)


def test_no_html_sink_in_app_or_core() -> None:
    sources = [ROOT / "app.py", *sorted(ROOT.glob("posviz*/**/*.py"))]  # subpackages too
    assert len(sources) > 5
    hits = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sources
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if HTML_SINKS.search(line)
        and not (path == PAGE and line.strip() == STYLE_SINK)
        and not (path == CHART and line.strip() in CHART_SINKS)
        and not (path == INTERNALS and line.strip() in INTERNALS_SINKS)
        and not (path == LECTURE and line.strip() == LECTURE_SINK)
    ]
    assert not hits, "HTML/JS sinks (user text could reach them):\n" + "\n".join(hits)


def test_the_chart_component_holds_only_static_code() -> None:
    """The component's code is chart.js, read once from the package; declare_component serves
    plotly's own folder and the vendored one; the loader's style block is a literal that only
    hides it; chart.js hands the figure to Plotly and writes no HTML."""
    source = CHART.read_text(encoding="utf-8")
    assert all(source.count(line) == 1 for line in CHART_SINKS)
    tree = ast.parse(source)
    values = {
        node.target.id: node.value
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value
    }
    chart_js = ast.unparse(values["CHART_JS"])
    assert (
        chart_js == "resources.files('posviz_app').joinpath('chart.js').read_text(encoding='utf-8')"
    )
    assert (
        ast.unparse(values["PLOTLY_DIR"])
        == "str(resources.files('plotly').joinpath('package_data'))"
    )
    assert (
        ast.unparse(values["VENDORED_DIR"])
        == "str(resources.files('posviz_app').joinpath('plotly_js'))"
    )
    hide = ast.unparse(values["_HIDE_LOADER"])
    # the loader's key is named once, in posviz_app/state.py (a static string there)
    assert hide == "f'<style>.st-key-{LOADER_NAME} {{ display: none; }}</style>'", hide
    assert ast.unparse(values["LOADER_NAME"]) == "state.PLOTLY_LOADER"
    state_source = (Path(__file__).parent.parent / "posviz_app" / "state.py").read_text()
    assert 'PLOTLY_LOADER: Final = "posviz_plotly"' in state_source
    builds = {  # PlotlyBuild(name, folder name, folder, ...): the folders are the two above
        ast.unparse(node.args[2])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "PlotlyBuild"
    }
    assert builds == {"VENDORED_DIR", "PLOTLY_DIR"}, builds
    internals = ast.parse(INTERNALS.read_text(encoding="utf-8"))
    calls = [
        node for node in ast.walk(internals)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "declare_component"
    ]  # fmt: skip
    assert [ast.unparse(call) for call in calls] == ["declare_component(name, path=folder)"]
    script = (ROOT / "posviz_app" / "chart.js").read_text(encoding="utf-8")
    assert JS_SINKS.search(script) is None, JS_SINKS.search(script)
    assert "textContent" in script  # its one message is text, never markup


def test_the_one_style_block_is_a_static_file() -> None:
    """``st.html(PAGE_CSS)`` appears once, and PAGE_CSS is the packaged page.css, assigned once
    at module level; the file holds only CSS: no markup, scripts, links out or imports."""
    source = PAGE.read_text(encoding="utf-8")
    assert source.count("st.html(") == 1 and source.count(STYLE_SINK) == 1
    tree = ast.parse(source)
    (assign,) = [
        node
        for node in tree.body
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == "PAGE_CSS"
    ]
    assert assign.value is not None
    assert (
        ast.unparse(assign.value) == "Path(str(resources.files('posviz_app').joinpath('page.css')))"
    )
    assert UNSAFE_IN_STYLE.search(PAGE_CSS.read_text(encoding="utf-8")) is None


def test_the_lecture_navigation_holds_only_static_code() -> None:
    """The navigation component's code is the packaged nav.js and nav.css; nav.js writes its
    title as text and runs nothing it is given."""
    source = LECTURE.read_text(encoding="utf-8")
    assert source.count(LECTURE_SINK) == 1
    tree = ast.parse(source)
    values = {
        node.target.id: ast.unparse(node.value)
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value
    }
    for name, file in (("NAV_JS", "nav.js"), ("NAV_CSS", "nav.css")):
        assert values[name] == (
            f"resources.files('posviz_app').joinpath('{file}').read_text(encoding='utf-8')"
        )
    script = (ROOT / "posviz_app" / "nav.js").read_text(encoding="utf-8")
    assert JS_SINKS.search(script) is None, JS_SINKS.search(script)
    assert "title.textContent = title" in script
    assert UNSAFE_IN_STYLE.search((ROOT / "posviz_app" / "nav.css").read_text()) is None


# --- a server restart mid-session ---------------------------------------------------------


def _browser_z(page: Any) -> list[np.ndarray]:
    """The z arrays plotly.js decoded from the chart's typed-array JSON (``_fullData``)."""
    rows = page.evaluate(
        """() => {
            const plot = document.querySelector('.js-plotly-plot');
            return plot._fullData.map(trace => Array.from(trace.z, row => Array.from(row)));
        }"""
    )
    return [np.asarray(z, dtype=np.float32) for z in rows]


@pytest.mark.browser
def test_server_restart_reconnects_to_the_same_view(page: Any) -> None:
    port = free_port()
    seed, emb_dim, context_length, text = 77, 6, 5, "Every effort moves you, it moves."
    query = urlencode(
        {"seed": seed, "emb_dim": emb_dim, "context_length": context_length, "text": text},
        quote_via=quote,
    )
    want = reference(seed, emb_dim, context_length, encode(text))
    server = start_server(port=port)
    try:
        page.goto(f"{server.url}/?{query}")
        page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=60_000)
        for got, expected in zip(_browser_z(page), want, strict=True):
            assert np.array_equal(got, expected)
        url_before = page.url

        server.stop()
        # The page notices the lost connection ("Connection error" dialog) ...
        page.get_by_test_id("stDialog").wait_for(timeout=60_000)
        with page.expect_websocket(timeout=90_000) as new_socket:
            server = start_server(port=port)
        socket_ = new_socket.value
        # ... reconnects, and the new server session sends a fresh chart for the URL's view.
        socket_.expect_event(
            "framereceived",
            predicate=lambda payload: isinstance(payload, bytes) and b"heatmap" in payload,
            timeout=90_000,
        )
        page.get_by_test_id("stDialog").wait_for(state="detached", timeout=60_000)
        page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=60_000)
        for got, expected in zip(_browser_z(page), want, strict=True):
            assert np.array_equal(got, expected)
        assert f"seed={seed}" in page.url and f"emb_dim={emb_dim}" in url_before
        assert not page.dialogs
    finally:
        server.stop()


# --- a stalled Hub: the page's fallback after one budget of silence --------------------------


@pytest.mark.server
@pytest.mark.slow
def test_a_stalled_hub_gives_the_page_its_fallback_after_one_budget(tmp_path: Path) -> None:
    """``?weights=gpt2`` while the Hub's CDN takes every request and never answers: the page's
    run gives up after the attempt's 20 s of silence in all (two requests of 10 s, as the
    clock measures them) and shows the fallback, so with its own run the message is on screen
    within 30 s of the request. The stall is the test's only wait; the server is stopped by
    its PID, the stand-in's threads when the block ends."""
    from devtools.client import StreamlitSession
    from devtools.fake_hub import made_up_tables, serve, write_safetensors

    blob = write_safetensors(
        tmp_path / "model.safetensors",
        {"wpe.weight": (16, 8), "wte.weight": (64, 8)},
        made_up_tables(64, 16, 8),
    )
    env = {"HF_HUB_OFFLINE": "0", "POSVIZ_CACHE_DIR": str(tmp_path / "cache")}
    with serve(blob.path, silent_cdn=True) as hub:
        env["HF_ENDPOINT"] = hub.endpoint
        with start_server(env=env, log=tmp_path / "server.log") as server:
            session = StreamlitSession(server.url, timeout=120)
            try:
                run = session.open({"weights": "gpt2"})
            finally:
                session.close()
        cdn, resolved = len(hub.on("cdn")), len(hub.on("hub"))
    shown = [re.sub(r"\\(.)", r"\1", w).replace("\u2060", "") for w in run.warnings]  # Markdown
    fallback = [w for w in shown if "the Hub cannot be reached" in w]
    assert len(fallback) == 1, shown
    assert "nothing for 20 s in all (2 request(s), 10 s each at most)" in fallback[0], fallback
    assert (resolved, cdn) == (1, 2), "one attempt: where the file is, then two silent reads"
    assert not run.errors and run.chart is not None, "the random init is drawn instead"
