"""posviz_app/_streamlit.py: the Streamlit names posviz uses beyond the public API, each in one
place, and the check that fails with a message naming what changed when an upgrade changes one
(each change simulated here with monkeypatch on the installed Streamlit 1.67)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import streamlit
from streamlit import net_util
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner_utils import script_requests
from streamlit.web.server import server_util

from posviz_app import _streamlit
from posviz_app._streamlit import StreamlitChanged, check

APP = Path(__file__).resolve().parent.parent / "posviz_app"
FIX = "install it (pip install 'streamlit==1.67.*') or port posviz_app/_streamlit.py"


def _message(monkeypatch: pytest.MonkeyPatch, target: object, name: str, value: object) -> str:
    """What :func:`check` says once ``target.name`` is ``value`` (deleted if ``None``)."""
    if value is None:
        monkeypatch.delattr(target, name)
    else:
        monkeypatch.setattr(target, name, value, raising=False)
    with pytest.raises(StreamlitChanged) as raised:
        check()
    message = str(raised.value)
    assert message.startswith(f"Streamlit {streamlit.__version__} "), message
    assert message.endswith(f"{FIX} to the new version."), message
    assert isinstance(raised.value, ValueError)
    return message


def test_the_installed_streamlit_has_everything_posviz_uses() -> None:
    assert streamlit.__version__.startswith(_streamlit.BUILT_FOR + ".")
    check()


def test_a_changed_handle_backmsg_is_named_with_the_signature_posviz_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def handle_backmsg(self: object, msg: object) -> None: ...

    message = _message(monkeypatch, Runtime, "handle_backmsg", handle_backmsg)
    assert "changed Runtime.handle_backmsg's parameters to (self, msg): posviz's rerun " in message
    assert "coalescing (posviz_app/runtime.py) needs (self, session_id, msg, *, client)" in message


def test_importing_without_handle_backmsg_says_what_changed() -> None:
    """The module reads ``Runtime.handle_backmsg`` only once its start-up check has passed: a
    Streamlit without it stops the import with the check's message, not an AttributeError."""
    script = (
        "from streamlit.runtime import Runtime\n"
        "del Runtime.handle_backmsg\n"
        "import posviz_app._streamlit\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("posviz_app._streamlit.StreamlitChanged: Streamlit "), result.stderr
    assert "has no function Runtime.handle_backmsg: posviz's rerun coalescing" in last
    assert last.endswith(f"{FIX} to the new version."), last
    assert "AttributeError" not in result.stderr


def test_a_client_that_became_positional_is_a_change_too(monkeypatch: pytest.MonkeyPatch) -> None:
    def handle_backmsg(self: object, session_id: str, msg: object, client: object) -> None: ...

    message = _message(monkeypatch, Runtime, "handle_backmsg", handle_backmsg)
    assert "parameters to (self, session_id, msg, client)" in message


def test_posvizs_own_handler_once_installed_is_not_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def ours(runtime: object, session_id: str, msg: object, *, client: object = None) -> None: ...

    monkeypatch.setattr(_streamlit, "_handler", None)
    monkeypatch.setattr(Runtime, "handle_backmsg", Runtime.handle_backmsg)  # restored after
    original = _streamlit.install_backmsg_handler(ours)
    assert Runtime.handle_backmsg is ours and original is _streamlit.original_handle_backmsg
    check()


def test_a_missing_coalesce_widget_states_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    message = _message(monkeypatch, script_requests, "_coalesce_widget_states", None)
    assert (
        "has no streamlit.runtime.scriptrunner_utils.script_requests._coalesce_widget_states: "
        "posviz's rerun coalescing (posviz_app/runtime.py) needs _coalesce_widget_states"
    ) in message


def test_a_changed_coalesce_widget_states_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def _coalesce_widget_states(states: object) -> None: ...

    message = _message(
        monkeypatch, script_requests, "_coalesce_widget_states", _coalesce_widget_states
    )
    assert "_coalesce_widget_states's parameters to (states)" in message
    assert "needs (old_states, new_states)" in message


@pytest.mark.parametrize("name", ["get_internal_ip", "get_external_ip"])
def test_a_missing_ip_lookup_is_named(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    message = _message(monkeypatch, net_util, name, None)
    assert f"has no function net_util.{name}: posviz's no-IP-lookup rule" in message


def test_an_origin_check_that_imports_the_lookup_itself_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Replacing net_util's functions would then miss the call: the check says so."""
    message = _message(monkeypatch, server_util, "get_internal_ip", net_util.get_internal_ip)
    assert "changed how streamlit.web.server.server_util looks up this machine's IP" in message


def test_a_missing_protobuf_field_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    fields = [SimpleNamespace(name=n) for n in ("widget_states", "fragment_id", "page_name")]
    message = _message(
        monkeypatch,
        _streamlit,
        "ClientState",
        SimpleNamespace(DESCRIPTOR=SimpleNamespace(fields=fields, oneofs_by_name={})),
    )
    assert "has no field page_script_hash in ClientState" in message


def test_a_missing_trigger_kind_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    value = SimpleNamespace(fields=[SimpleNamespace(name="trigger_value")])
    fake = SimpleNamespace(DESCRIPTOR=SimpleNamespace(fields=[], oneofs_by_name={"value": value}))
    message = _message(monkeypatch, _streamlit, "WidgetState", fake)
    assert "has no field chat_input_value, json_trigger_value, string_trigger_value" in message
    assert "in WidgetState's oneof value" in message


def test_a_declare_component_without_a_path_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def declare_component(name: str, *, url: str) -> None: ...

    message = _message(monkeypatch, _streamlit, "declare_component", declare_component)
    assert "changed declare_component's parameters to (name, *, url)" in message
    assert "posviz's plotly.js route (posviz_app/chart.py) needs (name, path)" in message


def test_the_file_route_is_named_for_this_module() -> None:
    assert _streamlit.serve_folder("plotly", str(APP)) == "component/posviz_app._streamlit.plotly"


# Public: `import streamlit as st` and what it exposes; components; the container type.
_PUBLIC = {"streamlit", "streamlit.components.v1", "streamlit.components.v2"}
_PUBLIC_NAMES = {("streamlit.delta_generator", "DeltaGenerator")}  # st.container()'s type


def _streamlit_uses(path: Path) -> list[str]:
    """The non-public Streamlit names ``path`` imports or reads (``st._x``, ``st.runtime``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streamlit"):
            module = node.module or ""
            for alias in node.names:
                public = module in _PUBLIC and not alias.name.startswith("_")
                public = public and (module != "streamlit" or alias.name in {"components"})
                if not public and (module, alias.name) not in _PUBLIC_NAMES:
                    found.append(f"{module}.{alias.name}")
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("streamlit.")]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "st"
            and re.match(r"_|runtime$|web$|proto$", node.attr)
        ):
            found.append(f"st.{node.attr}")
    return found


def test_no_other_module_of_the_page_uses_streamlits_internals() -> None:
    modules = sorted(APP.rglob("*.py"))
    assert APP / "chart.py" in modules and APP / "runtime.py" in modules
    uses = {
        str(m.relative_to(APP)): _streamlit_uses(m) for m in modules if m.name != "_streamlit.py"
    }
    assert {name: found for name, found in uses.items() if found} == {}
    assert _streamlit_uses(APP / "_streamlit.py"), "the scan finds the internals where they are"
