"""A loopback stand-in for the Hugging Face Hub, serving made-up safetensors files.

It answers as the Hub documents: ``GET /{repo}/resolve/{revision}/{filename}`` gives a 302 to
a CDN path with ``X-Repo-Commit``, ``X-Linked-Etag`` and ``X-Linked-Size``; the CDN path
honours ``Range: bytes=a-b`` with 206 and ``Content-Range`` (clipped at the end of the file,
416 past it). An unknown revision is a 404 with ``X-Error-Code: RevisionNotFound``.

Knobs make it hostile (HTTP errors, a silent CDN, a cut connection, Range ignored, a wrong
commit). Every request is logged, so tests can count what was downloaded.

The tables served are random numbers, NOT GPT-2's: never show or describe them as GPT-2's.
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

import numpy as np

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"
REPO = "openai-community/gpt2"
FILE = "model.safetensors"
_RANGE = re.compile(r"bytes=(\d+)-(\d*)")


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
    """Write a safetensors file: tensors in name order, as ``safetensors`` orders equal dtypes;
    those in ``arrays`` get their values, the rest stay zero (a sparse file, no disk used)."""
    itemsize = {"F32": 4, "F16": 2}
    header: dict[str, object] = {"__metadata__": {"format": "pt", **(metadata or {})}}
    position, relative = 0, {}
    for name in sorted(shapes):
        dtype = (dtypes or {}).get(name, "F32")
        nbytes = int(np.prod(shapes[name])) * itemsize[dtype]
        header[name] = {
            "dtype": dtype,
            "shape": list(shapes[name]),
            "data_offsets": [position, position + nbytes],
        }
        relative[name] = (position, position + nbytes)
        position += nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # safetensors pads the header to 8 bytes
    start = 8 + len(text)
    with path.open("wb") as handle:
        handle.write(len(text).to_bytes(8, "little") + text)
        handle.truncate(start + position)
        for name, array in arrays.items():
            handle.seek(start + relative[name][0])
            handle.write(np.ascontiguousarray(array, dtype="<f4").tobytes())
    offsets = {name: (start + a, start + b) for name, (a, b) in relative.items()}
    return Blob(path, dict(arrays), offsets)


def made_up_tables(vocab: int, context: int, d: int, *, seed: int = 2026) -> dict[str, np.ndarray]:
    """Random float32 stand-ins for ``wte.weight`` and ``wpe.weight`` (NOT GPT-2's)."""
    rng = np.random.default_rng(seed)
    return {
        "wte.weight": rng.standard_normal((vocab, d), dtype=np.float32),
        "wpe.weight": rng.standard_normal((context, d), dtype=np.float32),
    }


@dataclass
class FakeHub:
    """Knobs and request log of one loopback Hub; ``endpoint`` is its ``HF_ENDPOINT``."""

    blob: Path
    endpoint: str = ""
    commits: dict[str, str] = field(default_factory=lambda: {"main": COMMIT, COMMIT: COMMIT})
    resolve_status: int | None = None  # e.g. 500: the /resolve/ step fails with it
    cdn_status: int | None = None  # e.g. 403: the CDN step fails with it
    report_commit: str | None = None  # X-Repo-Commit to send instead of the real one
    linked_size: int | None = None  # X-Linked-Size to send instead of the real one
    ignore_range: bool = False  # the CDN answers 200 with the whole file
    cut_after: int | None = None  # the CDN closes the connection after this many body bytes
    cuts_left: int = 0  # how many responses are cut (then it serves whole answers)
    silent_cdn: bool = False  # the CDN accepts the request and never answers
    stall_after: int | None = None  # the CDN sends its headers and this many bytes, then stalls
    location: str | None = None  # where /resolve/ redirects to instead of the CDN path
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def cdn_bytes(self) -> int:
        """Bytes the CDN was asked for, over all Range requests."""
        total = 0
        size = self.blob.stat().st_size
        for path, header in self.requests:
            if path.startswith("/cdn/") and header and (m := _RANGE.fullmatch(header)):
                last = min(int(m[2]) if m[2] else size - 1, size - 1)
                total += last - int(m[1]) + 1
        return total


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            with hub.lock:
                hub.requests.append((self.path, self.headers.get("Range")))
            prefix = f"/{REPO}/resolve/"
            if self.path.startswith(prefix):
                self._resolve(self.path[len(prefix) :])
            elif self.path.startswith("/cdn/"):
                self._cdn()
            else:
                self._status(404, {"X-Error-Code": "RepoNotFound"})

        def _status(self, code: int, headers: Mapping[str, str] | None = None) -> None:
            self.send_response(code)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _resolve(self, rest: str) -> None:
            revision, _, filename = rest.partition("/")
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
            self._status(
                302,
                {
                    "Location": hub.location or f"/cdn/{commit}/{FILE}?X-Amz-Signature=stand-in",
                    "X-Repo-Commit": hub.report_commit or commit,
                    "X-Linked-Etag": '"' + hashlib.sha256(COMMIT.encode()).hexdigest() + '"',
                    "X-Linked-Size": str(hub.linked_size if hub.linked_size is not None else size),
                },
            )

        def _cdn(self) -> None:
            if hub.silent_cdn:
                hub.release.wait(timeout=60)  # until the test ends; the client gives up first
                self.close_connection = True
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
            if hub.stall_after is not None:
                with hub.blob.open("rb") as handle:
                    handle.seek(first)
                    self.wfile.write(handle.read(min(limit, hub.stall_after)))
                self.wfile.flush()
                hub.release.wait(timeout=60)  # until the test ends; the client gives up first
                self.close_connection = True
                return
            with hub.lock:
                if hub.cut_after is not None and hub.cuts_left > 0:
                    hub.cuts_left -= 1
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

    return Handler


@contextlib.contextmanager
def serve(blob: Path, **knobs: object) -> Iterator[FakeHub]:
    """Run a :class:`FakeHub` for ``blob`` on 127.0.0.1 (a free port) in a thread; stopped
    and joined on exit."""
    hub = FakeHub(blob, **knobs)  # type: ignore[arg-type]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    hub.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-hub", daemon=True
    )
    thread.start()
    try:
        yield hub
    finally:
        hub.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
