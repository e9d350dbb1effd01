"""posviz_app/runtime.py and the server settings, against the real `streamlit run app.py`.

* An unexpected error: the user sees the short message, the server log has the traceback.
* No connection ever leaves loopback once the app has run (a monitor in
  tests/server_hooks/sitecustomize.py records and refuses every attempt), also while the
  server refuses a foreign ``Origin``.
* A foreign ``Origin`` and an unknown ``Host`` (DNS rebinding) get no websocket.
* A client flooding rerun requests: its session gets one request per turn of the event loop,
  button clicks are kept, and the other sessions keep getting their views.
* No run of the page imports pandas or pyarrow (70 MB a server process would hold).

None of these tests is timed: they check what happened, not how fast.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import websocket  # websocket-client
from charts import COMPONENT
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from devtools.server import Server, running_server
from posviz_app import runtime as app_runtime

ROOT = Path(__file__).resolve().parent.parent
HOOKS = Path(__file__).resolve().parent / "server_hooks"
GENERIC = "posviz hit an unexpected problem"


# --- a server each test owns, and a websocket client ----------------------------------------


@contextmanager
def _serve(tmp_path: Path, env: dict[str, str]) -> Iterator[Server]:
    """`streamlit run app.py` on 127.0.0.1 with tests/server_hooks on its PYTHONPATH."""
    with running_server(env={"PYTHONPATH": str(HOOKS), **env}, log=tmp_path / "server.log") as s:
        yield s


def _log(server: Server) -> str:
    assert server.log is not None
    return server.log.read_text(encoding="utf-8", errors="replace")


@dataclass
class Run:
    """What one script run showed."""

    errors: list[str] = field(default_factory=list)  # st.error bodies
    exceptions: list[str] = field(default_factory=list)  # exception elements (tracebacks)
    charts: int = 0


class Client:
    """The browser's side of Streamlit's websocket protocol, for the default view."""

    def __init__(self, server: Server, *, origin: str | None = None, host: str | None = None):
        self.ws = websocket.create_connection(
            f"ws://127.0.0.1:{server.port}/_stcore/stream",
            subprotocols=["streamlit"],
            origin=origin or server.url,
            host=host,  # the Host header (default: 127.0.0.1:port)
            timeout=120,
        )

    def send_rerun(self, widgets: list[WidgetState] | None = None) -> None:
        message = BackMsg()
        message.rerun_script.query_string = ""
        message.rerun_script.widget_states.widgets.extend(widgets or [])
        self.ws.send_binary(message.SerializeToString())

    def run(self) -> Run:
        self.send_rerun()
        return self.receive_run()

    def receive_run(self) -> Run:
        shown = Run()
        while True:
            raw = self.ws.recv()
            if isinstance(raw, str):
                continue
            message = ForwardMsg()
            message.ParseFromString(raw)
            kind = message.WhichOneof("type")
            if kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                element = message.delta.new_element
                which = element.WhichOneof("type")
                if which == "alert" and element.alert.format == Alert.ERROR:
                    shown.errors.append(element.alert.body)
                elif which == "exception":
                    shown.exceptions.append(element.exception.message)
                elif which == "bidi_component" and element.bidi_component.component_name == (
                    COMPONENT
                ):
                    shown.charts += 1
            elif (
                kind == "script_finished"
                and message.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
            ):
                return shown

    def close(self) -> None:
        self.ws.close()


def _refused(server: Server, *, origin: str, host: str | None = None) -> bool:
    """True if the server refuses the websocket handshake (or closes it at once)."""
    try:
        client = Client(server, origin=origin, host=host)
    except (websocket.WebSocketException, OSError):
        return True
    try:
        client.send_rerun()
        client.ws.recv()
    except (websocket.WebSocketException, OSError):
        return True
    finally:
        client.close()
    return False


# --- operator view: the log has the traceback, the user a short message ---------------------


@pytest.fixture
def faulty_server(tmp_path: Path) -> Iterator[Server]:
    with _serve(tmp_path, {"POSVIZ_FAULT": "posviz.pipeline:embed_window"}) as server:
        yield server


@pytest.mark.slow
@pytest.mark.server
def test_unexpected_error_is_logged_with_traceback_and_user_sees_short_message(
    faulty_server: Server,
) -> None:
    client = Client(faulty_server)
    try:
        shown = client.run()
    finally:
        client.close()
    assert shown.exceptions == [], "a traceback reached the page"
    assert shown.charts == 0
    assert len(shown.errors) == 1 and shown.errors[0].startswith(GENERIC), shown.errors
    assert "injected fault" not in shown.errors[0]
    log = _log(faulty_server)
    assert "unexpected error in a script run" in log
    assert "Traceback (most recent call last)" in log
    assert "RuntimeError: injected fault in posviz.pipeline:embed_window" in log
    assert "build_view" in log  # the frame that called it: a full traceback


# --- no outbound traffic; foreign Origin and unknown Host refused ---------------------------


@pytest.fixture
def monitored_server(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    net_log = tmp_path / "outbound.log"
    net_log.touch()
    with _serve(tmp_path, {"POSVIZ_NET_LOG": str(net_log)}) as server:
        yield server, net_log


def test_the_monitor_records_and_refuses_outbound_attempts(tmp_path: Path) -> None:
    """The monitor itself can fail a test: a name lookup and a connect are caught."""
    net_log = tmp_path / "outbound.log"
    probe = (
        "import socket\n"
        "for attempt in (lambda: socket.getaddrinfo('checkip.amazonaws.com', 80),\n"
        "                lambda: socket.create_connection(('192.0.2.1', 80), timeout=1)):\n"
        "    try:\n"
        "        attempt()\n"
        "    except OSError:\n"
        "        pass\n"
        "# loopback stays allowed:\n"
        "server = socket.create_server(('127.0.0.1', 0))\n"
        "socket.create_connection(server.getsockname(), timeout=5).close()\n"
    )
    subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(HOOKS), "POSVIZ_NET_LOG": str(net_log)},
        check=True,
        timeout=60,
    )
    lines = net_log.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("getaddrinfo 'checkip.amazonaws.com'")
    assert lines[1].startswith("connect ('192.0.2.1', 80)")


# Every tab, then every lecture slide, in a fresh interpreter: what the page imports.
_PAGE_IMPORTS = """
import sys
from streamlit.testing.v1 import AppTest
from posviz.lesson.lecture import SLIDES
from posviz_app.views import TABS
at = AppTest.from_file("app.py", default_timeout=120).run()
for tab in TABS:
    at.session_state["view"] = tab.label
    at.run()
at.session_state["lecture"] = True
for step in range(len(SLIDES)):
    at.session_state["step"] = step
    at.run()
assert not at.exception, at.exception
print(" ".join(sorted(name for name in ("pandas", "pyarrow") if name in sys.modules)))
"""


@pytest.mark.slow
def test_no_view_or_slide_imports_pandas() -> None:
    """pandas and pyarrow hold about 70 MB in a server process (60 students opening the link:
    420 MB against 350 MB; issue 42). Streamlit imports them when a component's data is a dict
    with a value it must check for a dataframe (a list: the early loader's builds); posviz's
    components get bytes or dicts of plain values, and no view draws a dataframe."""
    found = subprocess.run(
        [sys.executable, "-c", _PAGE_IMPORTS],
        cwd=ROOT,
        env={**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert found.returncode == 0, found.stderr[-2000:]
    assert found.stdout.split() == [], f"the page imported {found.stdout.strip()}"


@pytest.mark.slow
@pytest.mark.server
def test_no_outbound_traffic_and_foreign_origin_and_host_are_refused(
    monitored_server: tuple[Server, Path],
) -> None:
    server, net_log = monitored_server
    student = Client(server)
    try:
        first = student.run()
        assert first.charts == 1 and not first.errors and not first.exceptions
        foreign = "https://attacker.example"
        assert _refused(server, origin=foreign)
        # DNS rebinding: attacker.example resolves to this server, so Host and Origin agree.
        rebinding = f"attacker.example:{server.port}"
        assert _refused(server, origin=f"http://{rebinding}", host=rebinding)
        assert _refused(server, origin=foreign)  # again: nothing cached a lookup
        # The page's own origin and the names in server.allowedHosts still work.
        assert not _refused(server, origin=server.url)
        assert not _refused(
            server, origin=f"http://localhost:{server.port}", host=f"localhost:{server.port}"
        )
        again = student.run()
        assert again.charts == 1 and not again.errors
    finally:
        student.close()
    log = _log(server)
    assert "origin=https://attacker.example, host=127.0.0.1" in log
    assert f"origin=http://{rebinding}, host={rebinding}" in log
    assert net_log.read_text(encoding="utf-8") == "", "the server tried to reach the network"


# --- rerun floods ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.server
def test_a_flooding_client_does_not_stop_other_sessions(tmp_path: Path) -> None:
    with _serve(tmp_path, {}) as server:
        other, flooder = Client(server), Client(server)
        try:
            assert other.run().charts == 1
            assert flooder.run().charts == 1
            for _ in range(3000):  # never reads a reply
                flooder.send_rerun()
            for _ in range(3):
                shown = other.run()
                assert shown.charts == 1 and not shown.errors and not shown.exceptions
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=60) as health:
                assert health.status == 200
        finally:
            flooder.close()
            other.close()
        assert "Traceback" not in _log(server)


class _Recorder:
    """Stands in for ``Runtime.handle_backmsg``: records what reaches the sessions."""

    def __init__(self) -> None:
        self.handed: list[tuple[str, BackMsg]] = []

    def __call__(self, runtime: Any, session_id: str, msg: BackMsg, *, client: Any = None):
        self.handed.append((session_id, msg))


def _rerun(text: str, *, click: str | None = None, fragment: str = "") -> BackMsg:
    message = BackMsg()
    message.rerun_script.fragment_id = fragment
    text_state = message.rerun_script.widget_states.widgets.add()
    text_state.id, text_state.string_value = "text", text
    if click:
        button = message.rerun_script.widget_states.widgets.add()
        button.id, button.trigger_value = click, True
    return message


def _run_loop(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """``asyncio.run(main())`` in a thread of its own (a Playwright test in this process may
    have left an event loop running in the main thread)."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(main())
        except BaseException as error:  # re-raised in the test's thread
            errors.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    if errors:
        raise errors[0]


def _deliver(
    messages: list[tuple[str, BackMsg]], monkeypatch: pytest.MonkeyPatch
) -> list[tuple[str, BackMsg]]:
    """Hand ``messages`` to the patched handler in one turn of an event loop, as a batch of
    websocket frames arrives; return what reached the sessions once the loop ran."""
    recorder = _Recorder()
    monkeypatch.setattr(app_runtime, "_original_handle_backmsg", recorder)
    monkeypatch.setattr(app_runtime, "_handed_at", {})  # no session has had a request yet

    async def batch() -> None:
        for session_id, message in messages:
            app_runtime._coalescing_handle_backmsg(None, session_id, message)  # type: ignore[arg-type]
        await asyncio.sleep(0)  # one turn of the loop: the hand-over callbacks run
        await asyncio.sleep(0)

    _run_loop(batch)
    assert not app_runtime._pending
    return recorder.handed


def _texts(handed: list[tuple[str, BackMsg]]) -> list[tuple[str, str]]:
    """(session, text widget value) of each rerun request that reached a session."""
    return [
        (session, m.rerun_script.widget_states.widgets[0].string_value) for session, m in handed
    ]


def test_a_burst_of_reruns_reaches_the_session_once_with_the_newest_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    burst = [("a", _rerun(f"text {n}")) for n in range(1000)] + [("b", _rerun("b's text"))]
    handed = _deliver(burst, monkeypatch)
    assert _texts(handed) == [("a", "text 999"), ("b", "b's text")]


def test_a_click_in_a_replaced_request_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    handed = _deliver([("a", _rerun("one", click="next")), ("a", _rerun("two"))], monkeypatch)
    assert len(handed) == 1
    states = {s.id: s for s in handed[0][1].rerun_script.widget_states.widgets}
    assert states["text"].string_value == "two"
    assert states["next"].trigger_value is True


def test_other_messages_and_fragment_reruns_keep_their_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heartbeat = BackMsg()
    heartbeat.app_heartbeat = True
    fragment = _rerun("fragment", fragment="f1")
    handed = _deliver(
        [("a", _rerun("first")), ("a", heartbeat), ("a", fragment), ("a", _rerun("last"))],
        monkeypatch,
    )
    kinds = [(m.WhichOneof("type"), m.rerun_script.fragment_id or None) for _, m in handed]
    assert kinds == [
        ("rerun_script", None),
        ("app_heartbeat", None),
        ("rerun_script", "f1"),
        ("rerun_script", None),
    ]
    assert handed[0][1].rerun_script.widget_states.widgets[0].string_value == "first"
    assert handed[3][1].rerun_script.widget_states.widgets[0].string_value == "last"


def test_a_session_that_keeps_sending_waits_for_the_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a hand-over, the session's next request waits (here: an hour) unless another
    kind of message makes it go first; other sessions are not held up."""
    recorder = _Recorder()
    monkeypatch.setattr(app_runtime, "_original_handle_backmsg", recorder)
    monkeypatch.setattr(app_runtime, "_handed_at", {})
    monkeypatch.setattr(app_runtime, "RERUN_INTERVAL", 3600.0)
    heartbeat = BackMsg()
    heartbeat.app_heartbeat = True
    seen = []

    async def turns() -> None:
        handle = app_runtime._coalescing_handle_backmsg
        handle(None, "a", _rerun("first"))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        seen.append(_texts(recorder.handed))
        handle(None, "a", _rerun("second"))  # type: ignore[arg-type]
        handle(None, "b", _rerun("b's first"))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        seen.append(_texts(recorder.handed))
        handle(None, "a", heartbeat)  # type: ignore[arg-type]
        seen.append([(s, m.WhichOneof("type")) for s, m in recorder.handed])

    _run_loop(turns)
    app_runtime._pending.clear()
    assert seen[0] == [("a", "first")]
    assert seen[1] == [("a", "first"), ("b", "b's first")]  # "second" waits
    assert seen[2][-2:] == [("a", "rerun_script"), ("a", "app_heartbeat")]
    assert recorder.handed[2][1].rerun_script.widget_states.widgets[0].string_value == "second"


# --- a session whose state was emptied ------------------------------------------------------


@pytest.mark.server
def test_a_cleared_session_reads_its_view_back_from_the_link(tmp_path: Path) -> None:
    """Streamlit's ``clear_cache`` message also empties the sender's session state; the widget
    callbacks of the next rerun used to raise KeyError ('preset') into the server log."""
    from devtools.client import StreamlitSession

    with _serve(tmp_path, {}) as server:
        session = StreamlitSession(server.url)
        try:
            first = session.open({"text": "Every effort moves you", "context_length": "4"})
            session.clear_cache()
            after = session.change("preset", "A rose")
        finally:
            session.close()
        log = _log(server)
    assert not first.errors and first.chart is not None
    assert not after.errors, after.errors
    assert after.chart is not None
    assert "Traceback" not in log and "KeyError" not in log, log[-2000:]


# --- lecture mode's fold ----------------------------------------------------------------------


@pytest.mark.server
def test_lecture_mode_folds_the_sidebar_once_and_then_leaves_it_to_the_user(
    tmp_path: Path,
) -> None:
    """A lecture link's first run folds the sidebar (``initial_sidebar_state`` collapsed); its
    later runs say nothing about it (unset), so no run can fold a sidebar the lecturer opened
    since (issue 42: the fold once came after the lecturer had opened it); turning lecture
    mode off unfolds it ("auto"). Read from the page config each run sends."""
    from streamlit.proto.PageConfig_pb2 import PageConfig

    from devtools.client import StreamlitSession

    told: list[list[int]] = []
    with _serve(tmp_path, {}) as server:
        session = StreamlitSession(server.url)
        try:
            session.query_string = "lecture=1"
            session.load_page()
            session.connect()
            assert session.ws is not None
            receive = session.ws.recv

            def recv() -> Any:  # every message also read here for its page config
                raw = receive()
                if isinstance(raw, bytes):
                    message = ForwardMsg()
                    message.ParseFromString(raw)
                    if message.WhichOneof("type") == "page_config_changed":
                        told[-1].append(message.page_config_changed.initial_sidebar_state)
                return raw

            session.ws.recv = recv  # type: ignore[method-assign]
            runs = []
            for off in (False, False, False, True):  # the link's run, two reruns, then off
                told.append([])
                runs.append(session.change("lecture", False) if off else session.rerun())
        finally:
            session.close()
    assert all(not run.errors for run in runs), [run.errors for run in runs]
    unset, collapsed, auto = (
        PageConfig.SIDEBAR_UNSET, PageConfig.COLLAPSED, PageConfig.AUTO
    )  # fmt: skip
    assert told == [[collapsed], [unset], [unset], [auto]], told
