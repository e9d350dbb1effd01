"""deploy/: posviz as replicas behind HAProxy, sticky by cookie, surviving a dead replica.

The configuration tests read ``deploy/haproxy.cfg`` and ask HAProxy itself (``haproxy -c``).
The slow tests start two replicas and HAProxy on 127.0.0.1 (``deploy.scaleout``), drive them
with the websocket client the load test uses (``devtools.client``) and check every chart
against the book's computation (``tests/reference.py``: tiktoken and torch, not posviz). Which
replica holds a session is read from each replica's own ``/_stcore/metrics``, not from the
balancer. HAProxy is a Debian package: without it these tests skip, saying why, except in CI
(``POSVIZ_REQUIRE_HAPROXY=1``, set by .ci/run, which installs it).
"""

from __future__ import annotations

import os
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from reference import View, chart_problems, chip_problems

from deploy.scaleout import (
    CONFIG,
    HAPROXY,
    Cluster,
    check_config,
    main,
    render_config,
    running_cluster,
)
from devtools.client import SessionLost, StreamlitSession

pytestmark = pytest.mark.haproxy  # its own CI stage (.ci/run)
REQUIRE_HAPROXY = os.environ.get("POSVIZ_REQUIRE_HAPROXY", "") not in ("", "0")
TEXT = "Every effort moves you forward, and every effort moves the class with you."
VIEW = View(text=TEXT, context_length=6, emb_dim=8, seed=7, stride=4, window=2, scheme="learned")
QUERY = {"text": TEXT, "context_length": "6", "emb_dim": "8", "seed": "7", "stride": "4",
         "window": "2"}  # fmt: skip


@pytest.fixture(scope="module")
def haproxy() -> str:
    if not Path(HAPROXY).exists():
        reason = f"no HAProxy at {HAPROXY}: install it with `apt-get install -y haproxy`"
        if REQUIRE_HAPROXY:
            pytest.fail(f"POSVIZ_REQUIRE_HAPROXY is set but {reason}", pytrace=False)
        pytest.skip(reason)
    return HAPROXY


@pytest.fixture(scope="module")
def cluster(haproxy: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(replicas=2, log_dir=tmp_path_factory.mktemp("scaleout")) as running:
        yield running


def _metric(url: str, pattern: str) -> int:
    with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=30) as response:
        body = response.read().decode()
    match = re.search(pattern, body, re.MULTILINE)
    assert match, body[:500]
    return int(match.group(1))


def active_sessions(url: str) -> int:
    """The replica's own count of open sessions (Streamlit's ``/_stcore/metrics``)."""
    return _metric(url, r"^active_sessions (\d+)$")


def connections(url: str) -> int:
    """How many sessions ever connected to the replica (a counter: closing does not lower it)."""
    return _metric(url, r'^session_events_total\{type="connect"\} (\d+)$')


def open_session(cluster: Cluster, cookie: str | None = None) -> StreamlitSession:
    session = StreamlitSession(cluster.url, timeout=120)
    if cookie:
        session.cookies["SERVERID"] = cookie
    run = session.open(QUERY)
    assert not run.errors, run.errors
    assert run.chart is not None
    assert not chart_problems(run.chart, VIEW)
    return session


# --- configuration ------------------------------------------------------------------------


def test_checked_in_config_is_what_the_launcher_generates() -> None:
    assert CONFIG.read_text(encoding="utf-8") == render_config()


def test_config_is_sticky_passes_websockets_and_checks_health() -> None:
    text = render_config(port=9000, replica_ports=[9001, 9002, 9003])
    assert "cookie SERVERID insert indirect" in text
    assert re.search(r"^\s+timeout tunnel \d+h$", text, re.MULTILINE)  # open websockets stay
    assert "option httpchk GET /_stcore/health" in text
    assert "option redispatch" in text
    assert "bind 127.0.0.1:9000" in text
    servers = re.findall(r"^\s+server (\S+) (\S+) cookie (\S+)$", text, re.MULTILINE)
    assert servers == [
        ("replica1", "127.0.0.1:9001", "replica1"),
        ("replica2", "127.0.0.1:9002", "replica2"),
        ("replica3", "127.0.0.1:9003", "replica3"),
    ]


def test_haproxy_accepts_the_config(haproxy: str, tmp_path: Path) -> None:
    check_config(CONFIG)
    broken = tmp_path / "broken.cfg"
    broken.write_text(render_config().replace("balance leastconn", "balance sideways"))
    with pytest.raises(RuntimeError, match="not a valid HAProxy configuration"):
        check_config(broken)


def test_print_config_names_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--print-config", "--replicas", "3", "--port", "9000"]) == 0
    printed = capsys.readouterr().out
    assert printed == render_config(
        port=9000, replica_ports=[9001, 9002, 9003], args=" --replicas 3 --port 9000"
    )
    assert "--print-config --replicas 3 --port 9000" in printed


# --- a running cluster ----------------------------------------------------------------------


@pytest.mark.slow
def test_balancer_serves_the_app_with_the_books_numbers(cluster: Cluster) -> None:
    session = StreamlitSession(cluster.url, timeout=120)
    try:
        run = session.open(QUERY)
        assert not run.errors, run.errors
        assert session.cookies.get("SERVERID") in {"replica1", "replica2"}
        assert run.chart is not None
        assert chart_problems(run.chart, VIEW) == []
        assert chip_problems(run.markdown, VIEW) == []
        moved = session.change("seed_box", "8")  # a rerun over the same websocket
        assert not moved.errors, moved.errors
        assert moved.chart is not None
        assert chart_problems(moved.chart, View(**{**VIEW.__dict__, "seed": 8})) == []
        assert chart_problems(moved.chart, VIEW) != []  # the chart did change
    finally:
        session.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["replica1", "replica2"])
def test_same_cookie_lands_on_the_same_replica(cluster: Cluster, name: str) -> None:
    target = cluster.replica_named(name)
    others = [r for r in cluster.replicas if r is not target]
    before = {r.port: connections(r.url) for r in cluster.replicas}
    sessions = [open_session(cluster, cookie=name) for _ in range(3)]
    try:
        after = {r.port: connections(r.url) for r in cluster.replicas}
        assert after[target.port] == before[target.port] + 3
        assert all(after[r.port] == before[r.port] for r in others)
        assert all(s.cookies["SERVERID"] == name for s in sessions)
    finally:
        for session in sessions:
            session.close()


@pytest.mark.slow
def test_killed_replica_students_reconnect_to_the_other_with_the_same_numbers(
    cluster: Cluster,
) -> None:
    """Runs last in this module: it kills a replica (restarted afterwards)."""
    session = open_session(cluster)
    name = session.cookies["SERVERID"]
    doomed = cluster.replica_named(name)
    try:
        assert active_sessions(doomed.url) >= 1
        doomed.kill()  # SIGKILL: a crash, not a clean shutdown
        with pytest.raises(SessionLost):
            session.rerun()  # the socket was on the killed replica
        back = session.reconnect()  # as the browser does: same URL, same (stale) cookie
        assert not back.errors, back.errors
        assert session.cookies["SERVERID"] != name  # HAProxy moved the student
        assert back.chart is not None
        assert chart_problems(back.chart, VIEW) == []  # the view came back from the URL
        assert chip_problems(back.markdown, VIEW) == []
    finally:
        session.close()
        cluster.restart(cluster.replicas.index(doomed))
