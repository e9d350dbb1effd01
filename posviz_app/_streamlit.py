"""Every Streamlit name posviz uses that is not Streamlit's public API, in one module, with the
check that they are still there and still of the shape posviz needs (Streamlit 1.67).

Everything else in ``posviz_app`` uses public APIs only: ``st.*`` (components of version 2,
``st.session_state``, ``st.query_params``). What is here, and who needs it:

=================================================  =========================================
Streamlit's name                                   posviz's use
=================================================  =========================================
``Runtime.handle_backmsg`` (replaced on the class)  rerun coalescing (:mod:`posviz_app.runtime`)
``script_requests._coalesce_widget_states``        ... keeps a replaced request's clicks
``BackMsg``, ``ClientState``, ``WidgetState``      ... reads the requests (protobuf fields)
``SessionClient``                                  ... (a type only)
``net_util.get_internal_ip``, ``get_external_ip``  no IP look-ups (:mod:`posviz_app.runtime`)
``streamlit.logger.get_logger``                    the server's log, in Streamlit's format
``declare_component(name, path)``'s file route     plotly.js's URL (:mod:`posviz_app.chart`)
=================================================  =========================================

``declare_component`` is public, but posviz uses it for a side effect only: it registers a
folder with the running server's file route for custom components,
``component/<module>.<name>/<file>``, and the component it returns is never mounted (see
:func:`serve_folder`).

:func:`check` runs when this module is first imported (the server's first script run, since
the page imports :mod:`posviz_app.runtime`), and raises :class:`StreamlitChanged` naming what
changed and who needs it, for example::

    Streamlit 1.68.0 changed Runtime.handle_backmsg's parameters to (self, msg): posviz's rerun
    coalescing (posviz_app/runtime.py) needs (self, session_id, msg, *, client). posviz is built
    for Streamlit 1.67: install it (pip install 'streamlit==1.67.*') or port
    posviz_app/_streamlit.py to the new version.

tests/test_streamlit_internals.py changes each name in turn and reads the message.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any, Final

import streamlit
from streamlit import net_util
from streamlit.components.v1 import declare_component

try:  # types only; a module that moved is named here
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
    from streamlit.runtime import Runtime
    from streamlit.runtime.session_manager import SessionClient
except ImportError as missing:
    raise ImportError(
        f"Streamlit {streamlit.__version__} has no module {missing.name}: posviz_app/_streamlit.py "
        "reads Streamlit's messages and runtime from it. posviz is built for Streamlit 1.67: "
        "install it (pip install 'streamlit==1.67.*') or port posviz_app/_streamlit.py."
    ) from missing

__all__ = [
    "BUILT_FOR",
    "CSS_TEST_IDS",
    "TRIGGERS",
    "BackMsg",
    "BackMsgHandler",
    "ClientState",
    "Runtime",
    "SessionClient",
    "StreamlitChanged",
    "WidgetStates",
    "check",
    "coalesce_widget_states",
    "disable_ip_lookups",
    "folder_route",
    "get_logger",
    "install_backmsg_handler",
    "original_handle_backmsg",
    "serve_folder",
]

BUILT_FOR: Final = "1.67"
"""The Streamlit release posviz is built and tested for."""

CSS_TEST_IDS: Final = (
    "stMainBlockContainer",  # the main area's padding: lecture mode's stage starts near the top
    "stHeader",  # the top bar: see-through in lecture mode
    "stToolbar",  # ... its rows let clicks through to Back and Next
    "stMain",  # the main area: the top bar is found through it, the title sized in it
    "stCaptionContainer",  # captions, larger from 1600 px
    "stMetricLabel",  # the shape labels, larger from 1600 px
)
"""The ``data-testid`` names posviz_app/page.css selects: Streamlit's DOM, not an API (no
option sets what those rules do). The server cannot check them; tests/test_browser_page.py
fails, naming the one that is gone, when a Streamlit release renames one."""

TRIGGERS: Final = frozenset(
    {"trigger_value", "string_trigger_value", "chat_input_value", "json_trigger_value"}
)
"""``WidgetState`` values that are triggers (a click: true for one run only)."""

BackMsgHandler = Callable[..., None]
"""``Runtime.handle_backmsg``: ``(runtime, session_id, msg, *, client=None) -> None``."""


class StreamlitChanged(ValueError):
    """The installed Streamlit lacks a name posviz uses, or has it in another shape.

    The value out of range is Streamlit's version: the message names what changed, what of
    posviz needs it, the release posviz is built for and the fix.
    """

    def __init__(self, what: str, *, needed_by: str, needs: str) -> None:
        super().__init__(
            f"Streamlit {streamlit.__version__} {what}: {needed_by} needs {needs}. posviz is "
            f"built for Streamlit {BUILT_FOR}: install it (pip install "
            f"'streamlit=={BUILT_FOR}.*') or port posviz_app/_streamlit.py to the new version."
        )


# --- the names, and what posviz needs of each ---------------------------------------------

_COALESCING: Final = "posviz's rerun coalescing (posviz_app/runtime.py)"
_NO_LOOKUPS: Final = "posviz's no-IP-lookup rule (posviz_app/runtime.py)"
_FILE_ROUTE: Final = "posviz's plotly.js route (posviz_app/chart.py)"
_SCRIPT_REQUESTS: Final = "streamlit.runtime.scriptrunner_utils.script_requests"
_SERVER_UTIL: Final = "streamlit.web.server.server_util"


_PREFIXES: Final[dict[inspect._ParameterKind, str]] = {
    inspect.Parameter.VAR_POSITIONAL: "*",
    inspect.Parameter.VAR_KEYWORD: "**",
}


def _parameters(function: Callable[..., object]) -> list[str]:
    """``function``'s parameters as written in a signature: ``*, `` before keyword-only ones.

    >>> def handle(self, session_id, msg, *, client=None): ...
    >>> _parameters(handle)
    ['self', 'session_id', 'msg', '*', 'client']
    """
    out: list[str] = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and "*" not in out:
            out.append("*")
        out.append(_PREFIXES.get(parameter.kind, "") + parameter.name)
    return out


def _check_signature(
    function: object, name: str, needed: Sequence[str], *, needed_by: str, at_least: bool = False
) -> None:
    """``function`` takes the parameters ``needed`` (with ``at_least``: among others)."""
    written = f"({', '.join(needed)})"
    if not callable(function):
        raise StreamlitChanged(f"has no function {name}", needed_by=needed_by, needs=written)
    try:
        found = _parameters(function)
    except (TypeError, ValueError):  # a builtin without a signature
        found = ["?"]
    fits = set(needed) <= set(found) if at_least else found == list(needed)
    if not fits:
        raise StreamlitChanged(
            f"changed {name}'s parameters to ({', '.join(found)})",
            needed_by=needed_by,
            needs=written,
        )


def _attribute(module_name: str, name: str, *, needed_by: str, needs: str) -> Any:
    """``module_name.name``, or :class:`StreamlitChanged` naming it."""
    try:
        module = importlib.import_module(module_name)
    except ImportError as missing:
        raise StreamlitChanged(
            f"has no module {module_name}", needed_by=needed_by, needs=needs
        ) from missing
    if not hasattr(module, name):
        raise StreamlitChanged(f"has no {module_name}.{name}", needed_by=needed_by, needs=needs)
    return getattr(module, name)


def _check_fields(message: Any, name: str, fields: Sequence[str], *, oneof: str = "") -> None:
    """Protobuf ``message`` has ``fields`` (in its oneof ``oneof``)."""
    descriptor = message.DESCRIPTOR
    group = descriptor.oneofs_by_name.get(oneof) if oneof else descriptor
    present = {field.name for field in group.fields} if group is not None else set()
    missing = [field for field in fields if field not in present]
    if missing:
        where = f"{name}'s oneof {oneof}" if oneof else name
        raise StreamlitChanged(
            f"has no field {', '.join(missing)} in {where}",
            needed_by=_COALESCING,
            needs=f"{where} with {', '.join(fields)}",
        )


_handler: BackMsgHandler | None = None  # what install_backmsg_handler installed


def check() -> None:
    """Raise :class:`StreamlitChanged` if a name posviz uses is missing or changed shape.

    >>> check()  # the installed Streamlit is the one posviz is built for
    """
    handle = getattr(Runtime, "handle_backmsg", None)
    # Streamlit's own, or missing (posviz's own handler, once installed, says nothing of it)
    if handle is None or handle is not _handler:
        _check_signature(
            handle,
            "Runtime.handle_backmsg",
            ["self", "session_id", "msg", "*", "client"],
            needed_by=_COALESCING,
        )
    coalesce = _attribute(
        _SCRIPT_REQUESTS,
        "_coalesce_widget_states",
        needed_by=_COALESCING,
        needs="_coalesce_widget_states(old_states, new_states) to keep the clicks of a request",
    )
    _check_signature(
        coalesce,
        f"{_SCRIPT_REQUESTS}._coalesce_widget_states",
        ["old_states", "new_states"],
        needed_by=_COALESCING,
    )
    _check_fields(BackMsg, "BackMsg", ["rerun_script", "app_heartbeat"], oneof="type")
    _check_fields(
        ClientState,
        "ClientState",
        ["widget_states", "fragment_id", "page_script_hash", "page_name"],
    )
    _check_fields(WidgetState, "WidgetState", sorted(TRIGGERS), oneof="value")
    for name in ("get_internal_ip", "get_external_ip"):
        _check_signature(
            getattr(net_util, name, None),
            f"net_util.{name}",
            [],
            needed_by=_NO_LOOKUPS,
        )
    # The origin check calls them through the module, so replacing them there takes effect.
    server_util = importlib.import_module(_SERVER_UTIL)
    if getattr(server_util, "net_util", None) is not net_util or hasattr(
        server_util, "get_internal_ip"
    ):
        raise StreamlitChanged(
            f"changed how {_SERVER_UTIL} looks up this machine's IP addresses",
            needed_by=_NO_LOOKUPS,
            needs="it to call net_util.get_internal_ip and get_external_ip through net_util",
        )
    logger = _attribute(
        "streamlit.logger", "get_logger", needed_by="posviz's log", needs="get_logger(name)"
    )
    _check_signature(logger, "streamlit.logger.get_logger", ["name"], needed_by="posviz's log")
    _check_signature(
        declare_component,
        "declare_component",
        ["name", "path"],
        needed_by=_FILE_ROUTE,
        at_least=True,
    )


# --- what posviz does with them ------------------------------------------------------------


def install_backmsg_handler(handler: BackMsgHandler) -> BackMsgHandler:
    """Make ``handler`` the server's ``Runtime.handle_backmsg`` (every message of every
    session's websocket goes through it); return Streamlit's own
    (:data:`original_handle_backmsg`), for ``handler`` to call.

    ``handler(runtime, session_id, msg, *, client=None)``, on the event loop's thread.
    """
    global _handler
    _handler = handler
    Runtime.handle_backmsg = handler  # type: ignore[method-assign]
    return original_handle_backmsg


def coalesce_widget_states(older: WidgetStates, newer: WidgetStates) -> WidgetStates | None:
    """``newer`` with ``older``'s still-active triggers merged in: the rule Streamlit applies
    when it folds queued reruns (``script_requests._coalesce_widget_states``)."""
    coalesce = importlib.import_module(_SCRIPT_REQUESTS)._coalesce_widget_states
    merged: WidgetStates | None = coalesce(older, newer)
    return merged


def disable_ip_lookups(stand_in: Callable[[], str | None]) -> None:
    """Answer Streamlit's look-ups of this machine's internal and external IP with
    ``stand_in`` (see :func:`posviz_app.runtime._no_ip_lookup`)."""
    net_util.get_internal_ip = stand_in
    net_util.get_external_ip = stand_in


def get_logger(name: str) -> logging.Logger:
    """A logger that writes to the server's log in Streamlit's format, at its level."""
    from streamlit.logger import get_logger as streamlit_logger

    return streamlit_logger(name)


def folder_route(name: str) -> str:
    """The URL path, relative to the page, that :func:`serve_folder` serves ``name`` at.

    >>> folder_route("plotly_js")
    'component/posviz_app._streamlit.plotly_js'
    """
    return f"component/{__name__}.{name}"


def serve_folder(name: str, folder: str) -> str:
    """Serve the files of ``folder`` from the running server; their URL path, relative to the
    page (which Streamlit serves at the root of its routes, also behind a path prefix).

    ``declare_component(name, path=folder)``, called in a script run, registers ``folder``
    with the runtime's registry of custom components under ``<this module>.<name>``, and the
    server's file route for them (``component/<that name>/<file>``, gzip-compressed,
    ``Cache-Control: public``) serves its files. The component itself is never mounted. Call
    it in each session (the registry is the runtime's; registering again is harmless and costs
    about 1 ms); outside a script run it registers nothing.

    >>> serve_folder("plotly", "/nowhere")  # no script run here: nothing registered
    'component/posviz_app._streamlit.plotly'
    """
    route = f"component/{declare_component(name, path=folder).name}"
    if route != folder_route(name):
        raise StreamlitChanged(
            f"registered the folder {folder} as {route}",
            needed_by=_FILE_ROUTE,
            needs=f"declare_component to name it after its caller's module: {folder_route(name)}",
        )
    return route


check()  # first: what follows reads names the check has found, in the shape posviz needs

original_handle_backmsg: Final[BackMsgHandler] = Runtime.handle_backmsg
"""Streamlit's own ``Runtime.handle_backmsg``, as imported (read once :func:`check` passed, so a
Streamlit without it stops with the check's message, not an ``AttributeError``)."""
