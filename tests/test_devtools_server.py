"""devtools.server: a real `streamlit run` on a free loopback port, stopped by its PID."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from devtools.server import (
    LOOPBACK,
    free_port,
    is_healthy,
    running_server,
    server_command,
    start_server,
    stop_process,
)


def test_command_listens_on_loopback_and_takes_extra_options() -> None:
    command = server_command(8123, options={"runner.fastReruns": False, "logger.level": "info"})
    pairs = dict(zip(command[5::2], command[6::2], strict=True))
    assert command[1:4] == ["-m", "streamlit", "run"]
    assert pairs["--server.address"] == "127.0.0.1"
    assert pairs["--server.port"] == "8123"
    assert pairs["--runner.fastReruns"] == "false"
    assert pairs["--logger.level"] == "info"


def test_options_override_the_defaults() -> None:
    command = server_command(8123, options={"server.fileWatcherType": "poll"})
    assert command.count("--server.fileWatcherType") == 1
    assert command[command.index("--server.fileWatcherType") + 1] == "poll"


def test_free_port_can_be_bound() -> None:
    port = free_port()
    with socket.socket() as sock:
        sock.bind((LOOPBACK, port))


@pytest.mark.slow
@pytest.mark.server
def test_server_starts_healthy_logs_and_stops_by_pid(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with running_server(log=log, env={"POSVIZ_TEST_MARKER": "1"}) as server:
        assert server.url == f"http://127.0.0.1:{server.port}"
        assert is_healthy(server.url)
        environ = Path(f"/proc/{server.pid}/environ").read_bytes().split(b"\0")
        assert b"POSVIZ_TEST_MARKER=1" in environ
        assert b"STREAMLIT_BROWSER_GATHER_USAGE_STATS=false" in environ
    assert server.process.returncode is not None, "the server process is still running"
    assert not Path(f"/proc/{server.pid}").exists(), "the server process was not reaped"
    assert not is_healthy(server.url, timeout=1)
    assert log.exists()


@pytest.mark.slow
@pytest.mark.server
def test_server_without_a_log_stops_when_the_block_raises() -> None:
    with pytest.raises(KeyError, match="in the block"), start_server() as server:
        assert is_healthy(server.url)
        raise KeyError("in the block")
    assert server.process.returncode is not None, "the server process is still running"
    assert not is_healthy(server.url, timeout=1)


@pytest.mark.slow
@pytest.mark.server
def test_failed_start_raises_and_names_the_log(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with pytest.raises(RuntimeError, match=r"exited with .*see .*server\.log"):
        start_server(app=tmp_path / "missing_app.py", log=log, options={"bogus.option": 1})


def test_stop_process_kills_what_ignores_sigterm() -> None:
    stubborn = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(60)"
    )
    process = subprocess.Popen([sys.executable, "-c", stubborn], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    stop_process(process, timeout=0.5)
    assert process.returncode == -9
