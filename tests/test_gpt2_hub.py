"""posviz.gpt2.hub against a loopback stand-in for the Hub (devtools/fake_hub.py), never the
real one.

The served file is made up (random tables with GPT-2's tensor names); expected values come
from the arrays the test wrote into it, not from the reader.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from devtools.fake_hub import COMMIT, OTHER_COMMIT, Blob, FakeHub, serve, write_safetensors
from posviz.gpt2.hub import (
    HEADER_PREFIX,
    HubError,
    HubFile,
    HubOffline,
    open_safetensors,
    parse_header,
)

SHAPES = {
    "h.0.mlp.c_fc.weight": (8, 32),  # a tensor posviz must never download
    "ln_f.bias": (8,),
    "wpe.weight": (16, 8),
    "wte.weight": (64, 8),
}
TIMEOUT = 30.0  # seconds: a working loopback server answers in milliseconds, even under load
SILENCE = 1.0  # seconds: how long the tests let a silent server stay silent


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


def test_header_read_follows_the_redirect_and_keeps_the_first_hops_commit(
    hub: FakeHub, blob: Blob
) -> None:
    remote = open_safetensors(source(hub))
    assert remote.commit == COMMIT  # only the 302 carries X-Repo-Commit
    assert remote.size == blob.path.stat().st_size
    assert {name: e.shape for name, e in remote.tensors.items()} == SHAPES
    begin, _ = blob.offsets["wte.weight"]
    assert remote.data_start + remote.tensors["wte.weight"].begin == begin
    assert hub.requests == [
        ("/openai-community/gpt2/resolve/main/model.safetensors", f"bytes=0-{HEADER_PREFIX - 1}"),
        (
            f"/cdn/{COMMIT}/model.safetensors?X-Amz-Signature=stand-in",
            f"bytes=0-{HEADER_PREFIX - 1}",
        ),
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
    # Data requests are pinned to the commit, and ask for exactly the tensor's bytes.
    begin, end = blob.offsets["wte.weight"]
    assert hub.requests[-2] == (
        f"/openai-community/gpt2/resolve/{COMMIT}/model.safetensors",
        f"bytes={begin}-{end - 1}",
    )


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
    assert hub.requests[2][1] == f"bytes={HEADER_PREFIX}-{remote.data_start - 1}"


def test_a_revision_can_be_a_commit(hub: FakeHub) -> None:
    assert open_safetensors(source(hub, revision=COMMIT)).commit == COMMIT


def test_a_cut_connection_resumes_where_it_stopped(hub: FakeHub, blob: Blob) -> None:
    remote = open_safetensors(source(hub))
    hub.cut_after, hub.cuts_left = 1000, 1
    sink = io.BytesIO()
    remote.download("wte.weight", sink)
    begin, end = blob.offsets["wte.weight"]
    assert sink.getvalue() == served_bytes(blob, "wte.weight")
    assert hub.requests[-1][1] == f"bytes={begin + 1000}-{end - 1}"


# -- hostile sources: a clear message, never wrong numbers -------------------------------


def test_a_connection_cut_every_time_gives_up(hub: FakeHub) -> None:
    remote = open_safetensors(source(hub))
    hub.cut_after, hub.cuts_left = 100, 10
    with pytest.raises(HubError, match=r"cut 3 times; 300 of 2,048 bytes of wte.weight"):
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
def test_hostile_answers_are_named(blob: Blob, knobs: dict[str, object], words: str) -> None:
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
    with pytest.raises(HubError, match="truncated"):
        remote.download("wte.weight", io.BytesIO())


def test_a_silent_server_is_given_up_on_after_the_timeout(blob: Blob) -> None:
    with serve(blob.path, silent_cdn=True) as hub, pytest.raises(HubOffline, match=r"1 s"):
        open_safetensors(source(hub, timeout=SILENCE))


def test_a_server_that_stalls_inside_the_header_is_given_up_on(blob: Blob) -> None:
    with (
        serve(blob.path, stall_after=4) as hub,
        pytest.raises(HubOffline, match=r"sent nothing for 1 s after 4 of"),
    ):
        open_safetensors(source(hub, timeout=SILENCE))


def test_a_download_that_stalls_is_given_up_on_without_retrying(hub: FakeHub, blob: Blob) -> None:
    remote = open_safetensors(source(hub))
    remote = dataclasses.replace(remote, source=source(hub, timeout=SILENCE))
    hub.stall_after = 100
    with pytest.raises(HubOffline, match=r"sent nothing for 1 s after 100 of 2,048 bytes"):
        remote.download("wte.weight", io.BytesIO())
    begin = blob.offsets["wte.weight"][0]
    assert [r for p, r in hub.requests if p.startswith("/cdn/")][1:] == [
        f"bytes={begin}-{begin + 2047}"
    ]


def test_the_default_timeout_is_30_seconds() -> None:
    assert HubFile().timeout == 30


def test_a_closed_port_is_offline() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port any more: connecting is refused.
    with pytest.raises(HubOffline, match=f"cannot reach 127.0.0.1:{port}"):
        open_safetensors(HubFile(endpoint=f"http://127.0.0.1:{port}", timeout=TIMEOUT))


def test_hf_hub_offline_sends_nothing(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubOffline, match="HF_HUB_OFFLINE"):
        open_safetensors(HubFile.from_env())
    assert hub.requests == []


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
