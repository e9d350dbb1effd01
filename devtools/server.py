"""Start and stop ``streamlit run app.py`` on a free loopback port.

One helper for everything that needs the real server: the browser tests (``tests/conftest.py``),
the fault tests, the load test and the browser timing (``benchmarks/``), and the replicas of the
scale-out launcher (``deploy/scaleout.py``)::

    from devtools.server import running_server

    with running_server(options={"runner.fastReruns": "false"}, log=Path("server.log")) as server:
        ...  # server.url == "http://127.0.0.1:<free port>", server.pid for /proc

The server listens on 127.0.0.1 only. :func:`start_server` returns once ``/_stcore/health``
answers 200; :meth:`Server.stop` ends it by its PID (SIGTERM, then SIGKILL if it lingers).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app.py"
LOOPBACK = "127.0.0.1"
START_TIMEOUT = 120.0  # seconds: a cold first start imports torch, on a busy 2-core machine
STOP_TIMEOUT = 10.0  # seconds between SIGTERM and SIGKILL
POLL_INTERVAL = 0.2  # seconds between health probes while the server starts


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def is_healthy(url: str, *, timeout: float = 2.0) -> bool:
    """True if ``{url}/_stcore/health`` answers 200 within ``timeout`` seconds."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    """Poll the health endpoint until it answers; raise if the process exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit (pid {process.pid}) exited with {process.returncode}")
        if is_healthy(url):
            return
        time.sleep(POLL_INTERVAL)  # polling a socket while the server imports torch
    raise RuntimeError(f"streamlit did not answer on {url}/_stcore/health within {timeout:g} s")


def stop_process(process: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """End ``process`` by its PID: SIGTERM, wait up to ``timeout`` s, then SIGKILL and reap it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)


@dataclass(frozen=True)
class Server:
    """A running ``streamlit run`` process and where it listens."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path | None = None  # stdout + stderr of the server, if asked for

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:8501``."""
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def pid(self) -> int:
        """Process id (for /proc/<pid>/stat and /proc/<pid>/status)."""
        return self.process.pid

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds."""
        stop_process(self.process, timeout)

    def kill(self) -> None:
        """SIGKILL now (a crashed replica) and reap the process."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=STOP_TIMEOUT)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leaving a ``with`` block stops the server, however the block ended."""
        self.stop()


def server_command(
    port: int, *, app: Path = APP, options: Mapping[str, object] | None = None
) -> list[str]:
    """The ``streamlit run`` command line: loopback, headless, no file watcher, then ``options``.

    ``options`` are Streamlit config options without the dashes, e.g.
    ``{"runner.fastReruns": "false"}``; they override the defaults here and
    ``.streamlit/config.toml``.
    """
    settings: dict[str, object] = {
        "server.address": LOOPBACK,
        "server.port": port,
        "server.headless": "true",
        "server.fileWatcherType": "none",
        **(options or {}),
    }
    command = [sys.executable, "-m", "streamlit", "run", str(app)]
    for name, value in settings.items():
        command += [f"--{name}", str(value).lower() if isinstance(value, bool) else str(value)]
    return command


def start_server(
    *,
    port: int | None = None,
    app: Path = APP,
    options: Mapping[str, object] | None = None,
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
    timeout: float = START_TIMEOUT,
    new_session: bool = False,
) -> Server:
    """Start ``streamlit run app`` on 127.0.0.1 and wait until it is healthy.

    The returned :class:`Server` is also a context manager (``with start_server() as
    server:``; :func:`running_server` is the same function): it stops when the block ends.

    ``port``: a free one if not given. ``options``: extra ``--section.option`` values.
    ``env``: added to this process's environment. ``log``: file for the server's output
    (discarded if not given). ``new_session``: its own process group, so a Ctrl-C in the
    terminal reaches only the caller, which stops it. On failure the process is stopped and the
    error names the log.
    """
    port = port or free_port()
    environment = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", **(env or {})}
    command = server_command(port, app=app, options=options)
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
    # The child keeps its own copy of the log's descriptor: ours closes once it has started.
    with log.open("ab") if log is not None else nullcontext(subprocess.DEVNULL) as sink:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=environment,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=new_session,
        )
    server = Server(process=process, port=port, log=log)
    try:
        wait_healthy(server.url, process, timeout)
    except BaseException as error:
        server.stop()
        if log is not None and isinstance(error, RuntimeError):
            raise RuntimeError(f"{error}; see {log}") from error
        raise
    return server


# ``with running_server(...) as server:`` reads as what it does; the Server stops on exit.
running_server = start_server
