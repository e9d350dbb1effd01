"""Python start-up hook for the servers tests/test_app_runtime.py starts (on their PYTHONPATH).

``POSVIZ_NET_LOG=<path>``: a network monitor. Every attempt to reach an address that is not
loopback (``socket.getaddrinfo`` of a name other than localhost, ``connect``, ``connect_ex``,
``sendto``) is appended to ``<path>`` as one line and refused with ``OSError``, so nothing
leaves the machine even when the code under test tries.

``POSVIZ_FAULT=<module>:<function>``: that function raises ``RuntimeError`` with a marker text,
to see what the operator's log and the user's page show for an unexpected error.
"""

from __future__ import annotations

import importlib
import ipaddress
import os
import socket
import sys
import traceback
from pathlib import Path
from typing import Any

_LOCAL_NAMES = {None, "", "localhost", "0.0.0.0", "::"}


def _address(host: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an IP address, or None for a name."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    try:
        return ipaddress.ip_address(str(host).split("%")[0])
    except ValueError:
        return None


def _is_local(host: Any) -> bool:
    address = _address(host)
    if address is None:
        return host in _LOCAL_NAMES
    return address.is_loopback or address.is_unspecified


def _install_monitor(log_path: str) -> None:
    def record(what: str, target: Any) -> None:
        caller = traceback.extract_stack(limit=8)[:-2]
        where = " <- ".join(f"{frame.name}@{os.path.basename(frame.filename)}" for frame in caller)
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(f"{what} {target!r} from {where}\n")

    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if _address(host) is None and not _is_local(host):  # a name a DNS server would resolve
            record("getaddrinfo", host)
            raise socket.gaierror(socket.EAI_NONAME, "blocked by the posviz test monitor")
        return real_getaddrinfo(host, *args, **kwargs)

    def guard(name: str) -> None:
        real = getattr(socket.socket, name)

        def guarded(self: socket.socket, *args: Any) -> Any:
            address = args[-1] if name == "sendto" else args[0]
            if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
                record(name, address)
                raise OSError(f"blocked by the posviz test monitor: {name} {address!r}")
            return real(self, *args)

        setattr(socket.socket, name, guarded)

    socket.getaddrinfo = getaddrinfo
    for name in ("connect", "connect_ex", "sendto"):
        guard(name)


def _install_fault(target: str) -> None:
    module_name, function_name = target.split(":")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the posviz checkout
    module = importlib.import_module(module_name)

    original = getattr(module, function_name)

    def fault(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"injected fault in {target} (posviz test)")

    # Every loaded module that imported the function by name gets the fault too.
    for loaded in list(sys.modules.values()):
        if getattr(loaded, function_name, None) is original:
            setattr(loaded, function_name, fault)


if os.environ.get("POSVIZ_NET_LOG"):
    _install_monitor(os.environ["POSVIZ_NET_LOG"])
if os.environ.get("POSVIZ_FAULT"):
    _install_fault(os.environ["POSVIZ_FAULT"])
