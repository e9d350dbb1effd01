"""A loopback stand-in for the Hugging Face Hub, serving made-up safetensors files.

Two servers on 127.0.0.1, as the real Hub has two hosts:

* the **Hub** (``endpoint``, what ``HF_ENDPOINT`` points at): ``HEAD`` or ``GET
  /{repo}/resolve/{revision}/{filename}`` answers 302 with ``X-Repo-Commit``, ``X-Linked-Etag``
  (the file's sha256, quoted) and ``X-Linked-Size``, Xet's headers (``X-Xet-Hash``,
  ``X-Xet-Refresh-Route``, a ``Link`` with ``rel="xet-auth"``) and a ``Location`` on the
  other port: a signed "Xet bridge" address. An unknown revision is a 404 with ``X-Error-Code:
  RevisionNotFound``. With ``require_token`` it answers 401 with ``X-Error-Message`` unless
  the request carries ``Authorization: Bearer <token>`` (a gated or private repo);
* the **CDN** (``cdn``, another port): honours ``Range: bytes=a-b`` with 206 and
  ``Content-Range`` (clipped at the end of the file, 416 past it). Like a signed S3 or
  CloudFront address it refuses a request that also carries an ``Authorization`` header (400):
  a token must never be sent there.

Knobs make it hostile (HTTP errors, 429 with ``Retry-After``, a silent CDN, a stall, a cut
connection, Range ignored, a wrong commit). Every request is logged (:class:`Logged`), so tests
can count what was downloaded and check which headers reached which host.

The files are written by the ``safetensors`` package itself (:func:`write_safetensors`), so a
test of posviz's reader does not share its assumptions about the format. The tables served
are random numbers, NOT GPT-2's: never show or describe them as GPT-2's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import NamedTuple

import numpy as np
import safetensors.numpy

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"
REPO = "openai-community/gpt2"
FILE = "model.safetensors"
XET_HASH = "a" * 64  # a Xet content hash as the Hub reports it (64 hex digits)
_RANGE = re.compile(r"bytes=(\d+)-(\d*)")
_NUMPY_DTYPES = {"F32": np.float32, "F16": np.float16}


def gpt2_layout(
    vocab: int = 50257, context: int = 1024, d: int = 768
) -> dict[str, tuple[int, ...]]:
    """Names and shapes of GPT-2 124M's ``model.safetensors`` (148 tensors, all F32)."""
    shapes: dict[str, tuple[int, ...]] = {}
    for layer in range(12):
        h = f"h.{layer}."
        shapes |= {
            h + "attn.bias": (1, 1, context, context),
            h + "attn.c_attn.bias": (3 * d,),
            h + "attn.c_attn.weight": (d, 3 * d),
            h + "attn.c_proj.bias": (d,),
            h + "attn.c_proj.weight": (d, d),
            h + "ln_1.bias": (d,),
            h + "ln_1.weight": (d,),
            h + "ln_2.bias": (d,),
            h + "ln_2.weight": (d,),
            h + "mlp.c_fc.bias": (4 * d,),
            h + "mlp.c_fc.weight": (d, 4 * d),
            h + "mlp.c_proj.bias": (d,),
            h + "mlp.c_proj.weight": (4 * d, d),
        }
    return shapes | {
        "ln_f.bias": (d,),
        "ln_f.weight": (d,),
        "wpe.weight": (context, d),
        "wte.weight": (vocab, d),
    }


@dataclass(frozen=True)
class Blob:
    """A safetensors file on disk and the arrays written into it (others are zeros)."""

    path: Path
    arrays: Mapping[str, np.ndarray]
    offsets: Mapping[str, tuple[int, int]]  # absolute byte ranges in the file


def write_safetensors(
    path: Path,
    shapes: Mapping[str, tuple[int, ...]],
    arrays: Mapping[str, np.ndarray],
    *,
    dtypes: Mapping[str, str] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Blob:
    """Write a safetensors file with ``safetensors.numpy.save_file``: the tensors in
    ``arrays`` get their values, the others zeros (``np.zeros`` pages that are only read stay
    the kernel's shared zero page, so GPT-2's 548 MB layout costs disk, not memory).

    The byte offsets in the returned :class:`Blob` are read back from the header the package
    wrote (8-byte length, JSON), not computed the way posviz's reader computes them.
    """
    tensors: dict[str, np.ndarray] = {}
    for name, shape in shapes.items():
        dtype = _NUMPY_DTYPES[(dtypes or {}).get(name, "F32")]
        given = arrays.get(name)
        tensors[name] = (
            np.zeros(shape, dtype=dtype)
            if given is None
            else np.ascontiguousarray(given, dtype=dtype).reshape(shape)
        )
    safetensors.numpy.save_file(tensors, path, metadata={"format": "pt", **(metadata or {})})
    with path.open("rb") as handle:
        length = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(length))
    offsets = {
        name: (8 + length + entry["data_offsets"][0], 8 + length + entry["data_offsets"][1])
        for name, entry in header.items()
        if name != "__metadata__"
    }
    return Blob(path, dict(arrays), offsets)


def made_up_tables(vocab: int, context: int, d: int, *, seed: int = 2026) -> dict[str, np.ndarray]:
    """Random float32 stand-ins for ``wte.weight`` and ``wpe.weight`` (NOT GPT-2's)."""
    rng = np.random.default_rng(seed)
    return {
        "wte.weight": rng.standard_normal((vocab, d), dtype=np.float32),
        "wpe.weight": rng.standard_normal((context, d), dtype=np.float32),
    }


class Logged(NamedTuple):
    """One request the stand-in received."""

    server: str  # "hub" (the resolve step) or "cdn" (the signed address it redirects to)
    method: str  # HEAD or GET
    path: str
    range: str | None  # the Range header
    authorization: str | None  # the Authorization header (a token must never reach the CDN)


@dataclass
class FakeHub:
    """Knobs and request log of one loopback Hub; ``endpoint`` is its ``HF_ENDPOINT``,
    ``cdn`` the base address of the second server its answers redirect to."""

    blob: Path
    endpoint: str = ""
    cdn: str = ""
    commits: dict[str, str] = field(default_factory=lambda: {"main": COMMIT, COMMIT: COMMIT})
    require_token: str | None = None  # the resolve step answers 401 without this token
    resolve_status: int | None = None  # e.g. 500: the /resolve/ step fails with it
    cdn_status: int | None = None  # e.g. 403: the CDN step fails with it
    rate_limited: int = 0  # this many answers (of `rate_limit_server`) are 429 or `busy_status`
    rate_limit_server: str = "hub"  # "hub" or "cdn"
    busy_status: int = 429  # what a rate-limited answer is (429, or 503 for a busy server)
    retry_after: str | None = "1"  # Retry-After of those answers (seconds), None: no header
    report_commit: str | None = None  # X-Repo-Commit to send instead of the real one
    linked_size: int | None = None  # X-Linked-Size to send instead of the real one
    ignore_range: bool = False  # the CDN answers 200 with the whole file
    cut_after: int | None = None  # the CDN closes the connection after this many body bytes
    cuts_left: int = 0  # how many responses are cut (then it serves whole answers)
    silent_cdn: bool = False  # the CDN accepts the request and never answers
    stall_after: int | None = None  # the CDN sends its headers and this many bytes, then stalls
    stalls_left: int = 1_000_000  # how many responses stall (then it serves whole answers)
    location: str | None = None  # where /resolve/ redirects to instead of the CDN
    requests: list[Logged] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def cdn_bytes(self) -> int:
        """Bytes the CDN was asked for, over all Range GETs."""
        total = 0
        size = self.blob.stat().st_size
        for logged in self.requests:
            if logged.server == "cdn" and logged.range and (m := _RANGE.fullmatch(logged.range)):
                last = min(int(m[2]) if m[2] else size - 1, size - 1)
                total += last - int(m[1]) + 1
        return total

    def on(self, server: str) -> list[Logged]:
        """The requests ``server`` ("hub" or "cdn") received, in order."""
        return [logged for logged in self.requests if logged.server == server]

    def _take(self, knob: str) -> bool:
        """Use up one of the answers counted by ``knob`` (e.g. ``cuts_left``), if any is left."""
        with self.lock:
            left = getattr(self, knob)
            if left <= 0:
                return False
            setattr(self, knob, left - 1)
            return True


class _Base(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub: FakeHub
    server_name = ""

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _log(self) -> None:
        logged = Logged(
            self.server_name,
            self.command,
            self.path,
            self.headers.get("Range"),
            self.headers.get("Authorization"),
        )
        with self.hub.lock:
            self.hub.requests.append(logged)

    def _status(self, code: int, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(code)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _rate_limited(self) -> bool:
        hub = self.hub
        if hub.rate_limit_server != self.server_name or not hub._take("rate_limited"):
            return False
        headers = {"X-Error-Message": "stand-in: too many requests"}
        if hub.retry_after is not None:
            headers["Retry-After"] = hub.retry_after
        self._status(hub.busy_status, headers)
        return True


class _HubHandler(_Base):
    server_name = "hub"

    def do_HEAD(self) -> None:
        self._answer()

    def do_GET(self) -> None:
        self._answer()

    def _answer(self) -> None:
        self._log()
        hub = self.hub
        prefix = f"/{REPO}/resolve/"
        if not self.path.startswith(prefix):
            self._status(404, {"X-Error-Code": "RepoNotFound"})
            return
        if hub.require_token is not None:
            given = self.headers.get("Authorization")
            if given is None:
                self._status(
                    401,
                    {
                        "X-Error-Code": "GatedRepo",
                        "X-Error-Message": f"Access to model {REPO} is restricted. You must "
                        "have access to it and be authenticated to access it. Please log in.",
                    },
                )
                return
            if given != f"Bearer {hub.require_token}":
                self._status(
                    401, {"X-Error-Message": "Invalid credentials in Authorization header"}
                )
                return
        if self._rate_limited():
            return
        revision, _, filename = self.path[len(prefix) :].partition("/")
        commit = hub.commits.get(revision)
        if commit is None or filename != FILE:
            self._status(
                404,
                {
                    "X-Error-Code": "RevisionNotFound",
                    "X-Error-Message": "Invalid rev id: " + revision,
                },
            )
            return
        if hub.resolve_status is not None:
            self._status(hub.resolve_status, {"X-Error-Message": "stand-in failure"})
            return
        size = hub.blob.stat().st_size
        refresh = f"/api/models/{REPO}/xet-read-token/{commit}"
        location = hub.location or (
            f"{hub.cdn}/xet-bridge-us/{XET_HASH}?X-Xet-Signed-Range=bytes%3D0-{size - 1}"
            "&Expires=4102444800&Signature=stand-in&Key-Pair-Id=stand-in"
        )
        self._status(
            302,
            {
                "Location": location,
                "X-Repo-Commit": hub.report_commit or commit,
                "X-Linked-Etag": '"' + hashlib.sha256(COMMIT.encode()).hexdigest() + '"',
                "X-Linked-Size": str(hub.linked_size if hub.linked_size is not None else size),
                "X-Xet-Hash": XET_HASH,
                "X-Xet-Refresh-Route": refresh,
                "Link": f'<{hub.endpoint}{refresh}>; rel="xet-auth", '
                f'<{hub.cdn}/v1/reconstructions/{XET_HASH}>; rel="xet-reconstruction-info"',
            },
        )


class _CdnHandler(_Base):
    server_name = "cdn"

    def do_GET(self) -> None:
        self._log()
        hub = self.hub
        if self.headers.get("Authorization") is not None:  # as S3 answers a signed URL + token
            self._status(400, {"X-Error-Message": "Only one auth mechanism allowed"})
            return
        if hub.silent_cdn:
            hub.release.wait(timeout=60)  # until the test ends; the client gives up first
            self.close_connection = True
            return
        if self._rate_limited():
            return
        if hub.cdn_status is not None:
            self._status(hub.cdn_status)
            return
        size = hub.blob.stat().st_size
        match = _RANGE.fullmatch(self.headers.get("Range") or "")
        if hub.ignore_range or match is None:
            first, last, code = 0, size - 1, 200
        else:
            first = int(match[1])
            last = min(int(match[2]) if match[2] else size - 1, size - 1)
            code = 206
            if first >= size:
                self._status(416, {"Content-Range": f"bytes */{size}"})
                return
        self.send_response(code)
        self.send_header("Content-Length", str(last - first + 1))
        if code == 206:
            self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.end_headers()
        limit = last - first + 1
        if hub.stall_after is not None and hub._take("stalls_left"):
            with hub.blob.open("rb") as handle:
                handle.seek(first)
                self.wfile.write(handle.read(min(limit, hub.stall_after)))
            self.wfile.flush()
            hub.release.wait(timeout=60)  # until the test ends; the client gives up first
            self.close_connection = True
            return
        if hub.cut_after is not None and hub._take("cuts_left"):
            limit = min(limit, hub.cut_after)
            self.close_connection = True
        with contextlib.suppress(OSError), hub.blob.open("rb") as handle:
            handle.seek(first)
            while limit > 0:
                chunk = handle.read(min(1 << 20, limit))
                if not chunk:
                    break
                self.wfile.write(chunk)
                limit -= len(chunk)


def _start(handler: type[_Base], hub: FakeHub, name: str) -> tuple[ThreadingHTTPServer, str]:
    bound = type(handler.__name__, (handler,), {"hub": hub})
    server = ThreadingHTTPServer(("127.0.0.1", 0), bound)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=name, daemon=True
    )
    thread.start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@contextlib.contextmanager
def serve(blob: Path, **knobs: object) -> Iterator[FakeHub]:
    """Run a :class:`FakeHub` for ``blob``: the Hub and its CDN on two free ports of 127.0.0.1,
    in threads; stopped and joined on exit."""
    hub = FakeHub(blob, **knobs)  # type: ignore[arg-type]
    servers = []
    try:
        for handler, name in ((_HubHandler, "fake-hub"), (_CdnHandler, "fake-cdn")):
            server, url = _start(handler, hub, name)
            servers.append(server)
            if name == "fake-hub":
                hub.endpoint = url
            else:
                hub.cdn = url
        yield hub
    finally:
        hub.release.set()
        for server in servers:
            server.shutdown()
            server.server_close()
