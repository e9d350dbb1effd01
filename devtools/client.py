"""A Streamlit browser session without the browser: the websocket protocol, from Python.

Used by the load test (``benchmarks/loadtest.py``) and the scale-out tests to drive
``streamlit run app.py`` as many students at once, directly or through a load balancer::

    from devtools.client import StreamlitSession

    session = StreamlitSession("http://127.0.0.1:8501", timeout=60)
    run = session.open({"seed": "7", "emb_dim": "8"})  # GET /, websocket, first script run
    run = session.change("window", 1)  # a widget moved, as the browser reports it
    run.chart  # the run's last figure (arrays as numpy), run.markdown, run.errors, run.latency
    session.close()

It speaks what the browser speaks: ``GET /`` (which is where a load balancer sets its sticky
cookie), then ``/_stcore/stream`` with the ``streamlit`` subprotocol, the page's ``Origin`` and
the cookies; ``BackMsg.rerun_script`` with the URL's query string and the widget states;
``ForwardMsg`` until ``script_finished``. Like the browser's widget manager it sends the state
of every widget on the page: the value the user set, else the value the app set
(``set_value``), else the widget's default for a widget it has not seen before (a widget whose
identity changed, e.g. a slider whose maximum moved, starts from its default, as in the
browser); states of widgets no longer shown are dropped. It keeps the URL the app writes
(``page_info_changed``). It declares no cached messages, so the server sends every element in
full (the browser's cache would make the traffic smaller, never larger).
"""

from __future__ import annotations

import contextlib
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlencode, urlsplit

import websocket  # websocket-client
from streamlit.elements.lib.utils import user_key_from_element_id
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from posviz_app.chart import COMPONENT_NAME as CHART_COMPONENT
from posviz_app.chart import decode_payload


class SessionLost(ConnectionError):
    """The websocket closed or failed (for example, the replica behind it died)."""


@dataclass
class Run:
    """What one script run showed, as the browser received it."""

    latency: float = 0.0  # seconds from the request to ``script_finished``
    # The last figure posviz's chart component was sent (posviz_app.chart.decode_payload):
    # {"data": [...], "layout": {...}}, its arrays as numpy arrays.
    chart: dict[str, Any] | None = None
    markdown: list[str] = field(default_factory=list)  # bodies of st.markdown elements
    warnings: list[str] = field(default_factory=list)  # st.warning bodies
    errors: list[str] = field(default_factory=list)  # exceptions, st.error, protocol trouble
    query_string: str = ""  # the URL's query string after the run
    fragment_id: str = ""  # the fragment that ran alone ("": the page's run)
    bytes_received: int = 0


@dataclass
class _Widget:
    kind: str  # the element type: slider, number_input, text_area, selectbox, multiselect, …
    element_id: str
    options: list[str] = field(default_factory=list)  # selectbox, multiselect: shown labels
    fragment_id: str = ""  # the fragment it is drawn in ("": the page's run)


class StreamlitSession:
    """One browser tab on ``base_url`` (``http://127.0.0.1:<port>``, a server or a balancer)."""

    def __init__(self, base_url: str, *, timeout: float = 60.0) -> None:
        parts = urlsplit(base_url)
        if parts.hostname != "127.0.0.1":
            raise ValueError(f"loopback only: {base_url!r} is not on 127.0.0.1")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.cookies: dict[str, str] = {}
        self.query_string = ""
        self.widgets: dict[str, _Widget] = {}  # user key -> widget seen in the last runs
        self.states: dict[str, WidgetState] = {}  # element id -> state the browser sends
        self.ws: websocket.WebSocket | None = None

    # --- connection ---------------------------------------------------------------------

    def _remember_cookies(self, headers: Any) -> None:
        values = headers.get_all("Set-Cookie") if hasattr(headers, "get_all") else None
        if values is None:  # websocket-client: a dict with lower-case names, values joined
            raw = headers.get("set-cookie")
            values = [raw] if raw else []
        for value in values:
            jar: SimpleCookie = SimpleCookie()
            jar.load(value)
            self.cookies.update({name: morsel.value for name, morsel in jar.items()})

    def _cookie_header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    def load_page(self) -> None:
        """``GET /`` as the browser's page load does (a load balancer sets its cookie here)."""
        request = urllib.request.Request(f"{self.base_url}/")
        if self.cookies:
            request.add_header("Cookie", self._cookie_header())
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                response.read()
                self._remember_cookies(response.headers)
        except OSError as error:  # HTTPError (a 502 from a balancer) and URLError included
            raise SessionLost(f"page load failed: {error}") from error

    def connect(self) -> None:
        """Open the websocket (a new server session: widget states start empty)."""
        self.close()
        self.states.clear()
        stream = "ws" + self.base_url.removeprefix("http") + "/_stcore/stream"
        try:
            self.ws = websocket.create_connection(
                stream,
                subprotocols=["streamlit"],
                origin=self.base_url,
                cookie=self._cookie_header() or None,
                timeout=self.timeout,
            )
        except (OSError, websocket.WebSocketException) as error:
            raise SessionLost(f"cannot open {stream}: {error}") from error
        self._remember_cookies(self.ws.getheaders() or {})

    def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(OSError, websocket.WebSocketException):  # already gone
                self.ws.close(timeout=1)
            self.ws = None

    # --- interactions -------------------------------------------------------------------

    def open(self, query: Mapping[str, str] | str = "", *, load_page: bool = True) -> Run:
        """Open the app at ``/?query`` (a link a student clicks) and wait for the first run."""
        self.query_string = query if isinstance(query, str) else urlencode(dict(query))
        started = time.perf_counter()
        if load_page:
            self.load_page()
        self.connect()
        return self._run(started)

    def reconnect(self, *, load_page: bool = True) -> Run:
        """A new websocket on the same URL, as the browser does when its server went away."""
        started = time.perf_counter()
        if load_page:
            self.load_page()
        self.connect()
        return self._run(started)

    def change(self, key: str, value: Any) -> Run:
        """Set the widget with user key ``key`` to ``value`` and wait for the rerun: the
        page's, or, for a widget drawn in a fragment, the fragment's alone (as the browser
        asks for it)."""
        started = time.perf_counter()
        self.set_widget(key, value)
        return self._run(started, fragment_id=self.widgets[self.widget_key(key)].fragment_id)

    def rerun(self) -> Run:
        """Rerun with the current widget states (the "R" key)."""
        return self._run(time.perf_counter())

    def widget_key(self, key: str) -> str:
        """The key of the widget ``key`` names: itself, or the one widget whose key is ``key``
        with the value it shows (``seed_box=123``: posviz_app.state.derived_key)."""
        if key in self.widgets:
            return key
        derived = [name for name in self.widgets if name.startswith(f"{key}=")]
        if len(derived) != 1:
            raise KeyError(f"no widget with key {key!r} on the page; seen: {sorted(self.widgets)}")
        return derived[0]

    def set_widget(self, key: str, value: Any) -> None:
        """Record a widget change without sending it (``key`` as :meth:`widget_key` reads it)."""
        key = self.widget_key(key)
        widget = self.widgets[key]
        state = WidgetState(id=widget.element_id)
        if widget.kind in ("text_area", "text_input"):
            state.string_value = str(value)
        elif widget.kind == "number_input":
            state.double_value = float(value)
        elif widget.kind == "slider":
            state.double_array_value.data.append(float(value))
        elif widget.kind == "checkbox":
            state.bool_value = bool(value)
        elif widget.kind == "selectbox":
            state.string_value = self.option_label(key, str(value))
        elif widget.kind == "multiselect":  # the options whose labels start with each value
            state.string_array_value.data.extend(self.option_label(key, str(v)) for v in value)
        else:
            raise ValueError(f"widget {key!r} is a {widget.kind}; this client cannot set it")
        self.states[widget.element_id] = state

    def option_label(self, key: str, prefix: str) -> str:
        """The option of ``key`` (a selectbox, a multiselect) whose label starts with
        ``prefix`` (any case)."""
        labels = [o for o in self.widgets[key].options if o.lower().startswith(prefix.lower())]
        if len(labels) != 1:
            raise ValueError(f"{key}: {prefix!r} matches {labels} of {self.widgets[key].options}")
        return labels[0]

    def send_rerun(self, fragment_id: str = "") -> int:
        """Send one rerun request (of the fragment ``fragment_id`` alone if given) without
        reading the answer; returns the bytes sent."""
        if self.ws is None:
            raise SessionLost("not connected")
        message = BackMsg()
        request = message.rerun_script
        request.query_string = self.query_string
        request.page_script_hash = ""
        request.fragment_id = fragment_id
        request.widget_states.widgets.extend(self.states.values())
        payload = message.SerializeToString()
        try:
            self.ws.send_binary(payload)
        except (OSError, websocket.WebSocketException) as error:
            raise SessionLost(f"send failed: {error}") from error
        return len(payload)

    def clear_cache(self) -> None:
        """The "Clear cache" menu item: empties the process-wide caches of every user."""
        if self.ws is None:
            raise SessionLost("not connected")
        message = BackMsg()
        message.clear_cache = True
        self.ws.send_binary(message.SerializeToString())

    # --- reading ------------------------------------------------------------------------

    def _run(self, started: float, *, fragment_id: str = "") -> Run:
        self.send_rerun(fragment_id)
        run = self.receive_run(fragment_id)
        run.latency = time.perf_counter() - started
        return run

    def receive_run(self, fragment_id: str = "") -> Run:
        """Read ForwardMsgs until a script run finishes (runs stopped for a rerun are skipped);
        ``fragment_id``: the run asked for is that fragment's alone, so the page's other
        widgets, not sent again, stay as they are."""
        if self.ws is None:
            raise SessionLost("not connected")
        run = Run()
        seen: set[str] = set()  # widget ids on the page in this run
        while True:
            try:
                raw = self.ws.recv()
            except (OSError, websocket.WebSocketException) as error:
                raise SessionLost(f"receive failed: {type(error).__name__}: {error}") from error
            if isinstance(raw, str):
                continue
            if not raw:
                raise SessionLost("the server closed the websocket")
            run.bytes_received += len(raw)
            message = ForwardMsg()
            message.ParseFromString(raw)
            kind = message.WhichOneof("type")
            if kind == "ref_hash":
                run.errors.append("a cached-message reference this client never asked for")
            elif kind == "new_session":
                run.chart, run.markdown, run.warnings = None, [], []
                seen.clear()
            elif kind == "page_info_changed":
                self.query_string = message.page_info_changed.query_string
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                self._read_element(message.delta.new_element, run, seen, message.delta.fragment_id)
            elif kind == "script_finished":
                status = message.script_finished
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    run = Run(bytes_received=run.bytes_received)  # a newer run follows
                    seen.clear()
                    continue
                if status == ForwardMsg.FINISHED_SUCCESSFULLY:  # the page as it is now
                    self.states = {i: w for i, w in self.states.items() if i in seen}
                    self.widgets = {k: w for k, w in self.widgets.items() if w.element_id in seen}
                elif status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:  # its part only
                    run.fragment_id = fragment_id
                    gone = {
                        w.element_id
                        for w in self.widgets.values()
                        if w.fragment_id == fragment_id and w.element_id not in seen
                    }
                    self.states = {i: w for i, w in self.states.items() if i not in gone}
                    self.widgets = {
                        k: w for k, w in self.widgets.items() if w.element_id not in gone
                    }
                else:
                    run.errors.append(f"script finished with status {status}")
                run.query_string = self.query_string
                return run

    def _read_element(self, element: Any, run: Run, seen: set[str], fragment_id: str) -> None:
        kind = element.WhichOneof("type")
        if kind is None:
            return
        proto = getattr(element, kind)
        element_id = getattr(proto, "id", "")
        key = user_key_from_element_id(element_id) if element_id else None
        if key and kind in _INPUT_KINDS:
            options = list(proto.options) if kind in ("selectbox", "multiselect") else []
            self.widgets[key] = _Widget(kind, element_id, options, fragment_id)
            seen.add(element_id)
            if proto.set_value:  # the app set this value (session state): the browser shows it
                self._remember(kind, element_id, proto, "value")
            elif element_id not in self.states:  # a widget new to the page: its default
                self._remember(kind, element_id, proto, "default")
        if kind == "bidi_component" and proto.component_name == CHART_COMPONENT:
            run.chart = decode_payload(proto.bytes).figure
        elif kind == "markdown":
            run.markdown.append(proto.body)
        elif kind == "exception":
            run.errors.append(f"exception element: {proto.message[:300]}")
        elif kind == "alert" and proto.format == Alert.ERROR:
            run.errors.append(f"st.error: {proto.body[:300]}")
        elif kind == "alert" and proto.format == Alert.WARNING:
            run.warnings.append(proto.body)

    def _remember(self, kind: str, element_id: str, proto: Any, source: str) -> None:
        """Store the widget state the browser would send: ``proto.value`` or ``proto.default``."""
        state = WidgetState(id=element_id)
        if kind == "slider":
            state.double_array_value.data.extend(getattr(proto, source))
        elif kind == "number_input":
            state.double_value = getattr(proto, source)
        elif kind in ("text_area", "text_input"):
            state.string_value = getattr(proto, source)
        elif kind == "checkbox":
            state.bool_value = getattr(proto, source)
        elif kind == "multiselect":
            chosen = (
                proto.raw_values if source == "value" else [proto.options[i] for i in proto.default]
            )
            state.string_array_value.data.extend(chosen)
        elif source == "value":  # selectbox
            state.string_value = proto.raw_value
        elif 0 <= proto.default < len(proto.options):
            state.string_value = proto.options[proto.default]
        else:
            return  # no option chosen: the browser sends nothing either
        self.states[element_id] = state


_INPUT_KINDS = frozenset(
    {"slider", "number_input", "text_area", "text_input", "checkbox", "selectbox", "multiselect"}
)
