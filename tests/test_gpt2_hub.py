"""posviz.gpt2.hub against a loopback stand-in for the Hub (devtools/fake_hub.py), never the
real one.

The served file is made up (random tables with GPT-2's tensor names); expected values come
from the arrays the test wrote into it, not from the reader.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import numpy as np
import pytest

import posviz.gpt2.hub
from devtools.fake_hub import (
    COMMIT,
    OTHER_COMMIT,
    XET_HASH,
    Blob,
    FakeHub,
    Logged,
    serve,
    write_safetensors,
)
from posviz.gpt2.hub import (
    HEADER_PREFIX,
    MAX_ATTEMPTS,
    Budget,
    HubError,
    HubFile,
    HubOffline,
    open_safetensors,
    parse_header,
)

pytestmark = pytest.mark.usefixtures("hub_online")

SHAPES = {
    "h.0.mlp.c_fc.weight": (8, 32),  # a tensor posviz must never download
    "ln_f.bias": (8,),
    "wpe.weight": (16, 8),
    "wte.weight": (64, 8),
}
TIMEOUT = 30.0  # seconds: a working loopback server answers in milliseconds, even under load
QUICK = {"timeout": 0.75, "first_byte_timeout": 0.25}  # a silent server's test is short
TOKEN = "hf_standin_token"  # what the stand-in accepts; never a real token
BRIDGE_PATH = (  # where the stand-in's Hub redirects: its "Xet bridge" on the CDN port
    f"/xet-bridge-us/{XET_HASH}?X-Xet-Signed-Range=bytes%3D0-{{last}}&Expires=4102444800"
    "&Signature=stand-in&Key-Pair-Id=stand-in"
)


def small_blob(path: Path, **options: object) -> Blob:
    rng = np.random.default_rng(7)
    arrays = {
        "wte.weight": rng.standard_normal((64, 8), dtype=np.float32),
        "wpe.weight": rng.standard_normal((16, 8), dtype=np.float32),
    }
    return write_safetensors(path, SHAPES, arrays, **options)  # type: ignore[arg-type]


@pytest.fixture
def blob(tmp_path: Path) -> Blob:
    return small_blob(tmp_path / "model.safetensors")


@pytest.fixture
def hub(blob: Blob) -> Iterator[FakeHub]:
    with serve(blob.path) as hub:
        yield hub


def source(hub: FakeHub, **changes: object) -> HubFile:
    return HubFile(endpoint=hub.endpoint, **{"timeout": TIMEOUT, **changes})  # type: ignore[arg-type]


def bridge_path(blob: Blob) -> str:
    return BRIDGE_PATH.format(last=blob.path.stat().st_size - 1)


def served_bytes(blob: Blob, name: str) -> bytes:
    begin, end = blob.offsets[name]
    return blob.path.read_bytes()[begin:end]


# -- the format -------------------------------------------------------------------------


def test_header_names_shapes_dtypes_and_offsets(blob: Blob) -> None:
    tensors = parse_header(blob.path.read_bytes())
    assert sorted(tensors) == sorted(SHAPES)  # __metadata__ is not a tensor
    wte = tensors["wte.weight"]
    assert (wte.dtype, wte.shape, wte.nbytes) == ("F32", (64, 8), 64 * 8 * 4)


def _with_length(header: bytes) -> bytes:
    return len(header).to_bytes(8, "little") + header


@pytest.mark.parametrize(
    ("data", "words"),
    [
        pytest.param(b"\x01\x00", "too short", id="under-8-bytes"),
        pytest.param((10**9).to_bytes(8, "little") + b"{}", "truncated", id="huge-length"),
        pytest.param(_with_length(b"{not json"), "not valid JSON", id="bad-json"),
        pytest.param(_with_length(b"[1, 2]"), "not a JSON object", id="json-list"),
        pytest.param(
            _with_length(b'{"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}'),
            "malformed",
            id="offsets-backwards",
        ),
        pytest.param(
            _with_length(b'{"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}'),
            "malformed",
            id="negative-shape",
        ),
        pytest.param(
            _with_length(b'{"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}'),
            "needs 12 bytes",
            id="shape-and-offsets-disagree",
        ),
    ],
)
def test_bad_headers_are_named(data: bytes, words: str) -> None:
    with pytest.raises(HubError, match=words):
        parse_header(data)


# -- the Hub's HTTP behaviour -------------------------------------------------------------


def test_header_read_asks_the_hub_then_reads_the_cdn(hub: FakeHub, blob: Blob) -> None:
    remote = open_safetensors(source(hub))
    assert remote.commit == COMMIT  # only the Hub's answer carries X-Repo-Commit
    assert remote.size == blob.path.stat().st_size
    assert {name: e.shape for name, e in remote.tensors.items()} == SHAPES
    begin, _ = blob.offsets["wte.weight"]
    assert remote.data_start + remote.tensors["wte.weight"].begin == begin
    assert hub.requests == [
        Logged("hub", "HEAD", "/openai-community/gpt2/resolve/main/model.safetensors", None, None),
        Logged("cdn", "GET", bridge_path(blob), f"bytes=0-{HEADER_PREFIX - 1}", None),
    ]


def test_a_tensor_arrives_exactly_with_its_sha256_and_progress(hub: FakeHub, blob: Blob) -> None:
    remote = open_safetensors(source(hub))
    sink, seen = io.BytesIO(), []
    sha256 = remote.download("wte.weight", sink, progress=lambda done, total: seen.append(done))
    want = served_bytes(blob, "wte.weight")
    assert sink.getvalue() == want
    assert np.array_equal(
        np.frombuffer(sink.getvalue(), dtype="<f4").reshape(64, 8), blob.arrays["wte.weight"]
    )
    assert sha256 == hashlib.sha256(want).hexdigest()
    assert seen[-1] == len(want) and seen == sorted(seen)
    # The Hub is asked again for the pinned commit; the CDN for exactly the tensor's bytes.
    begin, end = blob.offsets["wte.weight"]
    pinned = f"/openai-community/gpt2/resolve/{COMMIT}/model.safetensors"
    assert hub.requests[-2:] == [
        Logged("hub", "HEAD", pinned, None, None),
        Logged("cdn", "GET", bridge_path(blob), f"bytes={begin}-{end - 1}", None),
    ]


def test_only_the_header_and_the_asked_tensor_are_downloaded(hub: FakeHub, blob: Blob) -> None:
    remote = open_safetensors(source(hub))
    remote.download("wpe.weight", io.BytesIO())
    begin, end = blob.offsets["wpe.weight"]
    header_request = min(HEADER_PREFIX, blob.path.stat().st_size)
    assert hub.cdn_bytes() == header_request + (end - begin)


def test_a_header_longer_than_the_first_read_takes_a_second_request(tmp_path: Path) -> None:
    blob = small_blob(tmp_path / "big.safetensors", metadata={"note": "x" * 150_000})
    with serve(blob.path) as hub:
        remote = open_safetensors(source(hub))
        sink = io.BytesIO()
        remote.download("wpe.weight", sink)
    assert sorted(remote.tensors) == sorted(SHAPES)
    assert sink.getvalue() == served_bytes(blob, "wpe.weight")
    assert hub.on("cdn")[1].range == f"bytes={HEADER_PREFIX}-{remote.data_start - 1}"


def test_a_revision_can_be_a_commit(hub: FakeHub) -> None:
    assert open_safetensors(source(hub, revision=COMMIT)).commit == COMMIT


def test_a_cut_connection_resumes_where_it_stopped(hub: FakeHub, blob: Blob) -> None:
    remote = open_safetensors(source(hub))
    hub.cut_after, hub.cuts_left = 1000, 1
    sink = io.BytesIO()
    remote.download("wte.weight", sink)
    begin, end = blob.offsets["wte.weight"]
    assert sink.getvalue() == served_bytes(blob, "wte.weight")
    assert hub.on("cdn")[-1].range == f"bytes={begin + 1000}-{end - 1}"


# -- the token: sent to the Hub's host only -------------------------------------------------


def test_a_token_reaches_the_hub_and_never_the_cdn(
    blob: Blob, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with serve(blob.path, require_token=TOKEN) as hub:
        remote = open_safetensors(source(hub))
        sink = io.BytesIO()
        remote.download("wpe.weight", sink)
    assert sink.getvalue() == served_bytes(blob, "wpe.weight")
    assert [r.authorization for r in hub.on("hub")] == [f"Bearer {TOKEN}"] * 2
    assert len(hub.on("cdn")) == 2
    assert all(r.authorization is None for r in hub.on("cdn"))  # another port: another host


def test_an_explicit_token_is_used_the_same_way(blob: Blob) -> None:
    with serve(blob.path, require_token=TOKEN) as hub:
        open_safetensors(source(hub, token=TOKEN))
    assert [r.authorization for r in hub.requests] == [f"Bearer {TOKEN}", None]


def test_a_gated_repo_without_a_token_says_to_set_hf_token(blob: Blob) -> None:
    with (
        serve(blob.path, require_token=TOKEN) as hub,
        pytest.raises(HubError, match=r"HTTP 401 \(Access to model .* is restricted.*HF_TOKEN"),
    ):
        open_safetensors(source(hub))
    assert hub.on("cdn") == []


def test_a_wrong_token_is_named(blob: Blob, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    with (
        serve(blob.path, require_token=TOKEN) as hub,
        pytest.raises(HubError, match=r"HTTP 401 \(Invalid credentials in Authorization header"),
    ):
        open_safetensors(source(hub))


# -- 429 and 5xx: retried, bounded ----------------------------------------------------------


@pytest.mark.parametrize("server", ["hub", "cdn"])
def test_429_is_retried_after_what_retry_after_asks(
    blob: Blob, retry_waits: list[float], server: str
) -> None:
    with serve(blob.path, rate_limited=2, rate_limit_server=server, retry_after="3") as hub:
        remote = open_safetensors(source(hub))
    assert remote.commit == COMMIT
    assert retry_waits == [3.0, 3.0]
    assert len(hub.on(server)) == 3  # two 429 answers, then the one that worked


def test_a_retry_after_longer_than_posviz_waits_gives_up_at_once(
    blob: Blob, retry_waits: list[float]
) -> None:
    with (
        serve(blob.path, rate_limited=10, retry_after="120") as hub,
        pytest.raises(HubError, match=r"HTTP 429 .*asks to wait 120 s, longer than posviz waits"),
    ):
        open_safetensors(source(hub))
    assert retry_waits == [] and len(hub.requests) == 1


def test_5xx_is_retried_with_backoff_and_bounded(blob: Blob, retry_waits: list[float]) -> None:
    with (
        serve(blob.path, rate_limited=100, busy_status=503, retry_after=None) as hub,
        pytest.raises(HubError, match=rf"HTTP 503 .*\({MAX_ATTEMPTS} request\(s\)\)"),
    ):
        open_safetensors(source(hub))
    assert retry_waits == [1.0, 2.0, 4.0, 8.0]  # 15 s: within the 30 s a source gets
    assert len(hub.requests) == MAX_ATTEMPTS


def test_a_busy_cdn_mid_download_is_retried(
    hub: FakeHub, blob: Blob, retry_waits: list[float]
) -> None:
    remote = open_safetensors(source(hub))
    hub.rate_limit_server, hub.busy_status, hub.rate_limited = "cdn", 503, 1
    sink = io.BytesIO()
    remote.download("wte.weight", sink)
    assert sink.getvalue() == served_bytes(blob, "wte.weight")
    assert retry_waits == [1.0]  # Retry-After: 1


# -- hostile sources: a clear message, never wrong numbers -------------------------------


def test_a_connection_cut_every_time_gives_up(hub: FakeHub, retry_waits: list[float]) -> None:
    remote = open_safetensors(source(hub))
    hub.cut_after, hub.cuts_left = 100, 10
    with pytest.raises(HubError, match=r"cut after 500 of 2,048 bytes of wte.weight \(5 request"):
        remote.download("wte.weight", io.BytesIO())


@pytest.mark.parametrize(
    ("knobs", "words"),
    [
        pytest.param({"resolve_status": 500}, "HTTP 500", id="hub-500"),
        pytest.param({"resolve_status": 401}, "HTTP 401", id="hub-401"),
        pytest.param({"cdn_status": 403}, "HTTP 403", id="cdn-403"),
        pytest.param({"ignore_range": True}, "ignored the Range request", id="range-ignored"),
        pytest.param({"report_commit": "../../etc"}, "no valid X-Repo-Commit", id="bad-commit"),
        pytest.param({"linked_size": 10**9}, "truncated or changed", id="sizes-disagree"),
        pytest.param({"location": "file:///etc/passwd"}, "non-HTTP address", id="to-file-url"),
    ],
)
def test_hostile_answers_are_named(
    blob: Blob, knobs: dict[str, object], words: str, retry_waits: list[float]
) -> None:
    with serve(blob.path, **knobs) as hub, pytest.raises(HubError, match=words):
        open_safetensors(source(hub))


def test_an_unknown_revision_quotes_the_hubs_message(hub: FakeHub) -> None:
    with pytest.raises(HubError, match=r"HTTP 404 \(Invalid rev id: nope\)"):
        open_safetensors(source(hub, revision="nope"))


def test_a_commit_that_moves_under_the_download_is_refused(hub: FakeHub) -> None:
    remote = open_safetensors(source(hub))
    hub.report_commit = OTHER_COMMIT
    with pytest.raises(HubError, match=f"asked for commit {COMMIT}"):
        remote.download("wte.weight", io.BytesIO())
    assert len(hub.on("cdn")) == 1  # the header only: no byte of another commit is read


def test_a_truncated_file_is_named_before_any_tensor_is_read(blob: Blob) -> None:
    begin, end = blob.offsets["wte.weight"]
    with blob.path.open("r+b") as handle:
        handle.truncate(begin + (end - begin) // 2)
    with serve(blob.path) as hub, pytest.raises(HubError, match="truncated"):
        open_safetensors(source(hub))


def test_a_file_cut_inside_its_header_is_named(blob: Blob) -> None:
    with blob.path.open("r+b") as handle:
        handle.truncate(40)
    with serve(blob.path) as hub, pytest.raises(HubError, match="truncated"):
        open_safetensors(source(hub))


def test_a_file_that_shrinks_after_its_header_was_read_is_named(hub: FakeHub, blob: Blob) -> None:
    remote = open_safetensors(source(hub))
    begin, _ = blob.offsets["wte.weight"]
    with blob.path.open("r+b") as handle:
        handle.truncate(begin + 100)
    hub.linked_size = begin + 100
    with pytest.raises(HubError, match="changed size or etag"):
        remote.download("wte.weight", io.BytesIO())


# -- silence: 10 s to the first byte per request, 20 s in all over the attempt ---------------


def test_a_silent_cdn_is_given_up_on_within_the_budget(blob: Blob) -> None:
    with (
        serve(blob.path, silent_cdn=True) as hub,
        pytest.raises(HubOffline, match=r"sent nothing within 0.25 s: nothing for 0.75 s in all"),
    ):
        open_safetensors(source(hub, **QUICK), budget=frozen(0.75))
    assert len(hub.on("cdn")) == 3  # 0.75 s in all, 0.25 s per request


def test_a_server_that_stalls_inside_the_header_is_given_up_on(blob: Blob) -> None:
    with (
        serve(blob.path, stall_after=4) as hub,
        pytest.raises(HubOffline, match=r"nothing for 0.75 s in all \(3 request"),
    ):
        open_safetensors(source(hub, **QUICK), budget=frozen(0.75))


def test_a_download_that_stalls_once_resumes(hub: FakeHub, blob: Blob) -> None:
    remote = open_safetensors(source(hub))
    remote = dataclasses.replace(remote, source=source(hub, **QUICK))
    hub.stall_after, hub.stalls_left = 100, 1
    sink = io.BytesIO()
    remote.download("wte.weight", sink)
    assert sink.getvalue() == served_bytes(blob, "wte.weight")
    begin, end = blob.offsets["wte.weight"]
    assert [r.range for r in hub.on("cdn")[1:]] == [
        f"bytes={begin}-{end - 1}",
        f"bytes={begin + 100}-{end - 1}",
    ]


def test_a_download_that_keeps_stalling_is_given_up_on(hub: FakeHub) -> None:
    remote = open_safetensors(source(hub))
    remote = dataclasses.replace(remote, source=source(hub, **QUICK))
    hub.stall_after = 100
    with pytest.raises(HubOffline, match=r"after 300 of 2,048 bytes of wte.weight: nothing for"):
        remote.download("wte.weight", io.BytesIO(), budget=frozen(0.75))


def frozen(seconds: float) -> Budget:
    """A budget whose clock stands still: each silent request costs exactly its timeout, so
    the number of requests does not depend on how busy the machine is (the loopback server's
    silences are real; the budget's clock is the test's)."""
    return Budget(seconds, clock=lambda: 0.0)


def _silent_session(
    monkeypatch: pytest.MonkeyPatch, clock: list[float] | None = None, *, takes: float = 0.0
) -> list[dict[str, float | None]]:
    """A CDN that never answers: a stand-in transport that raises at once what a silent
    socket raises after its timeout (so nothing waits), moving ``clock`` on by ``takes``
    seconds each time; the timeouts each request was given."""
    asked: list[dict[str, float | None]] = []

    def silent(request: httpx2.Request) -> httpx2.Response:
        asked.append(request.extensions["timeout"])
        if clock is not None:
            clock[0] += takes
        raise httpx2.ReadTimeout("timed out", request=request)

    client = httpx2.Client(transport=httpx2.MockTransport(silent))
    monkeypatch.setattr(posviz.gpt2.hub, "get_session", lambda: client)
    return asked


def test_by_default_each_request_gets_10_s_and_an_attempt_20_s_in_all(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20 s of silence, then the page's own run: its fallback shows within 30 s."""
    remote = open_safetensors(HubFile(endpoint=hub.endpoint))
    asked = _silent_session(monkeypatch)
    with pytest.raises(HubOffline, match=r"nothing for 20 s in all \(2 request\(s\), 10 s each"):
        remote.download("wte.weight", io.BytesIO())
    assert [t["read"] for t in asked] == [10.0, 10.0]
    assert [t["connect"] for t in asked] == [10.0, 10.0]
    assert (HubFile().timeout, HubFile().first_byte_timeout) == (20, 10)
    assert (HubFile.from_env().timeout, HubFile.from_env().first_byte_timeout) == (20, 10)


def test_silence_is_what_the_clock_says_passed_not_the_timeout_asked(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request that stays silent longer than its timeout (a slow connect, then the read's
    10 s) costs what passed: after 25 s of it no second request is made."""
    remote = open_safetensors(HubFile(endpoint=hub.endpoint))
    clock = [1000.0]
    asked = _silent_session(monkeypatch, clock, takes=25.0)
    budget = Budget(20.0, clock=lambda: clock[0])
    with pytest.raises(HubOffline, match=r"nothing for 20 s in all \(1 request\(s\)"):
        remote.download("wte.weight", io.BytesIO(), budget=budget)
    assert len(asked) == 1 and budget.left == -5.0


def test_one_attempt_spends_one_budget_over_its_steps(blob: Blob) -> None:
    """The silence of reading the header counts against the tables that follow: a CDN that
    stalls once in the header (0.25 s) and then in every answer leaves the download 0.5 s,
    two requests of 0.25 s (each step with a budget of its own would get three)."""
    with serve(blob.path, stall_after=4, stalls_left=1) as hub:
        budget = frozen(0.75)
        remote = open_safetensors(source(hub, **QUICK), budget=budget)
        assert budget.left == 0.5 and len(hub.on("cdn")) == 2
        hub.stalls_left = 1_000_000
        with pytest.raises(HubOffline, match=r"nothing for 0.75 s in all \(2 request"):
            remote.download("wpe.weight", io.BytesIO(), budget=budget)
    assert len(hub.on("cdn")) == 2 + 2


def test_a_closed_port_is_offline() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port any more: connecting is refused, and not retried.
    with pytest.raises(HubOffline, match=f"cannot reach 127.0.0.1:{port}"):
        open_safetensors(HubFile(endpoint=f"http://127.0.0.1:{port}", timeout=TIMEOUT))


# -- the environment, read as huggingface_hub reads it ---------------------------------------


def test_hf_hub_offline_sends_nothing(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubOffline, match="HF_HUB_OFFLINE"):
        open_safetensors(HubFile.from_env())
    assert hub.requests == []


def test_offline_when_huggingface_hub_started_offline(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(HubOffline, match="HF_HUB_OFFLINE was set when huggingface_hub started"):
        open_safetensors(source(hub))
    assert hub.requests == []


ENVIRONMENTS = [
    {},
    {"HF_ENDPOINT": "https://hf-mirror.example/"},
    {"HF_ENDPOINT": "http://127.0.0.1:8080//"},
    {"HF_HUB_OFFLINE": "1"},
    {"HF_HUB_OFFLINE": "yes"},
    {"HF_HUB_OFFLINE": "True"},
    {"HF_HUB_OFFLINE": "on"},
    {"HF_HUB_OFFLINE": "0"},
    {"HF_HUB_OFFLINE": "off"},
    {"HF_HUB_OFFLINE": "y"},
    {"HF_HUB_OFFLINE": " 1"},
    {"HF_HUB_OFFLINE": ""},
    {"TRANSFORMERS_OFFLINE": "1"},
    {"HF_HUB_OFFLINE": "", "TRANSFORMERS_OFFLINE": "TRUE"},
]


def test_the_environment_is_read_as_huggingface_hub_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each environment given to a fresh ``huggingface_hub.constants`` (in a child process,
    as a server reads it at start) and to ``HubFile.from_env``: the same endpoint and offline
    switch."""
    script = (
        "import importlib, json, os, sys\n"
        "from huggingface_hub import constants\n"
        "out = []\n"
        "for env in json.loads(sys.argv[1]):\n"
        "    for k in ('HF_ENDPOINT', 'HF_HUB_OFFLINE', 'TRANSFORMERS_OFFLINE'):\n"
        "        os.environ.pop(k, None)\n"
        "    os.environ.update(env)\n"
        "    importlib.reload(constants)\n"
        "    out.append([constants.ENDPOINT, constants.HF_HUB_OFFLINE])\n"
        "print(json.dumps(out))\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script, json.dumps(ENVIRONMENTS)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    theirs = json.loads(child.stdout)
    ours = []
    for env in ENVIRONMENTS:
        for key in ("HF_ENDPOINT", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
            monkeypatch.delenv(key, raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        found = HubFile.from_env()
        ours.append([found.endpoint, found.offline])
    assert ours == theirs


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("POSVIZ_GPT2_REVISION", "refs/pr/1")
    source = HubFile.from_env()
    assert source.url(source.revision) == (
        "https://huggingface.co/openai-community/gpt2/resolve/refs%2Fpr%2F1/model.safetensors"
    )
    assert not source.offline
    with pytest.raises(ValueError, match="HF_ENDPOINT must be an http"):
        HubFile(endpoint="file:///tmp")
    with pytest.raises(ValueError, match="first_byte_timeout <= timeout"):
        HubFile(timeout=5, first_byte_timeout=10)
