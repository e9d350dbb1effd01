"""Read single tensors of a ``.safetensors`` file on the Hugging Face Hub with HTTP Range
requests, standard library only.

The safetensors format: 8 bytes, a little-endian unsigned 64-bit header length ``N``; ``N``
bytes of JSON, ``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
{...}}``; then the data, with offsets counted from the end of the header (byte ``8 + N``).

The Hub: ``GET {endpoint}/{repo}/resolve/{revision}/{filename}`` answers a large (LFS) file with
a 302 redirect to a CDN and the headers ``X-Repo-Commit`` (the commit ``revision`` points to),
``X-Linked-Etag`` and ``X-Linked-Size``; the CDN honours ``Range: bytes=a-b`` with ``206
Partial Content``. ``huggingface_hub.get_safetensors_metadata`` reads a header the same way:
the first 100,000 bytes, and a second request only if the header is longer.

posviz follows redirects itself (``urllib`` would hide the first hop's headers), pins every
later request to the commit the Hub reported, and checks every answer: status 206, the
``Content-Range`` it asked for, and the number of bytes that arrived. Any surprise is a
:class:`HubError` whose message says what happened; a network that cannot be reached, or a
server that sends nothing for ``timeout`` seconds, is a :class:`HubOffline`.

>>> header = b'{"wpe.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}'
>>> parse_header(len(header).to_bytes(8, "little") + header)["wpe.weight"].shape
(2, 3)
"""

from __future__ import annotations

import hashlib
import http.client
import json
import math
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO, Final
from urllib.parse import quote, urljoin, urlsplit

DEFAULT_ENDPOINT: Final = "https://huggingface.co"
GPT2_REPO: Final = "openai-community/gpt2"
GPT2_FILE: Final = "model.safetensors"
DEFAULT_TIMEOUT: Final = 30.0  # seconds without a byte from the server before giving up
HEADER_PREFIX: Final = 100_000  # bytes read first, as huggingface_hub does
MAX_HEADER_BYTES: Final = 25_000_000  # huggingface_hub's limit for a safetensors header
MAX_REDIRECTS: Final = 5
CHUNK_BYTES: Final = 1 << 20  # read and report progress every MiB
MAX_ATTEMPTS: Final = 3  # a download cut mid-way resumes from where it stopped, this often
DTYPE_BYTES: Final = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "U8": 1}
_COMMIT: Final = re.compile(r"[0-9a-f]{40}")  # git sha1, as the Hub reports it
_CONTENT_RANGE: Final = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_REDIRECTS: Final = (301, 302, 303, 307, 308)

Progress = Callable[[int, int], None]
"""Called with (bytes received, bytes expected) while a tensor downloads."""


class HubError(RuntimeError):
    """The Hub (or whatever ``HF_ENDPOINT`` points to) gave an answer posviz cannot use."""


class HubOffline(HubError):
    """The Hub cannot be reached: no network, refused, or no answer within the timeout."""


@dataclass(frozen=True)
class HubFile:
    """Where a file lives on the Hub: ``{endpoint}/{repo_id}/resolve/{revision}/{filename}``.

    >>> HubFile(endpoint="http://127.0.0.1:8000").url("main")
    'http://127.0.0.1:8000/openai-community/gpt2/resolve/main/model.safetensors'
    """

    endpoint: str = DEFAULT_ENDPOINT  # HF_ENDPOINT, the Hub's own variable, sets it
    repo_id: str = GPT2_REPO
    filename: str = GPT2_FILE
    revision: str = "main"  # a branch, tag or commit sha
    timeout: float = DEFAULT_TIMEOUT  # seconds of silence before giving up
    offline: bool = False  # HF_HUB_OFFLINE=1: never touch the network

    def __post_init__(self) -> None:
        if urlsplit(self.endpoint).scheme not in ("http", "https"):
            raise ValueError(f"HF_ENDPOINT must be an http(s) URL, got {self.endpoint!r}")
        if not self.revision or not 0 < self.timeout <= 600:
            raise ValueError(
                f"revision must be non-empty and timeout 0-600 s, got {self.revision!r}, "
                f"{self.timeout}"
            )

    @classmethod
    def from_env(cls, *, revision: str | None = None, timeout: float | None = None) -> HubFile:
        """GPT-2's ``model.safetensors``, from ``HF_ENDPOINT`` (default the public Hub),
        ``POSVIZ_GPT2_REVISION`` (default ``main``) and ``HF_HUB_OFFLINE``."""
        return cls(
            endpoint=os.environ.get("HF_ENDPOINT", "").strip() or DEFAULT_ENDPOINT,
            revision=revision or os.environ.get("POSVIZ_GPT2_REVISION", "").strip() or "main",
            timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
            offline=os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "on"},
        )

    def url(self, revision: str) -> str:
        """The ``/resolve/`` URL of the file at ``revision``."""
        return (
            f"{self.endpoint.rstrip('/')}/{self.repo_id}/resolve/"
            f"{quote(revision, safe='')}/{quote(self.filename)}"
        )


@dataclass(frozen=True)
class TensorEntry:
    """One tensor in a safetensors header; offsets count from the end of the header."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int

    @property
    def nbytes(self) -> int:
        """Size of the tensor's data in the file."""
        return self.end - self.begin


def parse_header(data: bytes) -> dict[str, TensorEntry]:
    """The tensors named in a safetensors header; ``data`` starts at byte 0 of the file and
    holds at least the whole header. Raises :class:`HubError` if it is not a valid header."""
    if len(data) < 8:
        raise HubError(f"the file is {len(data)} bytes long: too short for a safetensors file")
    size = int.from_bytes(data[:8], "little")
    if size > MAX_HEADER_BYTES or len(data) < 8 + size:
        raise HubError(
            f"the safetensors header claims {size:,} bytes but the file has {len(data) - 8:,} "
            "after the length: truncated or not a safetensors file"
        )
    try:
        header = json.loads(data[8 : 8 + size])
    except (UnicodeDecodeError, ValueError) as error:
        raise HubError(f"the safetensors header is not valid JSON ({error})") from None
    if not isinstance(header, dict):
        raise HubError("the safetensors header is not a JSON object")
    return {name: _entry(name, value) for name, value in header.items() if name != "__metadata__"}


def _entry(name: str, value: object) -> TensorEntry:
    bad = HubError(f"the safetensors header entry {name[:60]!r} is malformed")
    if not isinstance(value, dict):
        raise bad
    dtype, shape, offsets = value.get("dtype"), value.get("shape"), value.get("data_offsets")
    if not (
        isinstance(dtype, str)
        and isinstance(shape, list)
        and all(type(n) is int and n >= 0 for n in shape)
        and isinstance(offsets, list)
        and len(offsets) == 2
        and all(type(n) is int for n in offsets)
        and 0 <= offsets[0] <= offsets[1]
    ):
        raise bad
    entry = TensorEntry(name, dtype, tuple(shape), offsets[0], offsets[1])
    itemsize = DTYPE_BYTES.get(dtype)
    if itemsize is not None and entry.nbytes != math.prod(entry.shape) * itemsize:
        raise HubError(
            f"{name[:60]!r}: {dtype} {list(shape)} needs {math.prod(shape) * itemsize:,} bytes "
            f"but its data_offsets span {entry.nbytes:,}"
        )
    return entry


class _KeepRedirects(urllib.request.HTTPRedirectHandler):
    """Return a redirect as the response, so its headers (``X-Repo-Commit``) can be read."""

    def http_error_302(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
    ) -> IO[bytes]:
        """The 302 response itself, unfollowed (its headers name the commit)."""
        return fp

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


_OPENER: Final = urllib.request.build_opener(_KeepRedirects)


@dataclass(frozen=True)
class _Answer:
    response: http.client.HTTPResponse
    commit: str | None  # X-Repo-Commit of the first hop that had one
    linked_size: int | None  # X-Linked-Size
    etag: str | None  # X-Linked-Etag (the sha256 of an LFS file), else ETag


def _http_get(source: HubFile, url: str, first: int, last: int) -> _Answer:
    """``GET url`` with ``Range: bytes=first-last``, following redirects by hand; all hops
    together get ``source.timeout`` seconds to answer."""
    deadline = time.monotonic() + source.timeout
    if source.offline:
        raise HubOffline("HF_HUB_OFFLINE is set, so posviz does not contact the Hub")
    commit = linked_size = etag = None
    for _ in range(MAX_REDIRECTS + 1):
        if urlsplit(url).scheme not in ("http", "https"):
            raise HubError(f"the Hub redirected to a non-HTTP address {url[:80]!r}")
        request = urllib.request.Request(
            url,
            headers={
                "Range": f"bytes={first}-{last}",
                "Accept-Encoding": "identity",
                "User-Agent": "posviz (+https://github.com/rasbt/LLMs-from-scratch reader)",
            },
        )
        try:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            response = _OPENER.open(request, timeout=remaining)
        except urllib.error.HTTPError as error:
            detail = error.headers.get("X-Error-Message") or error.reason
            error.close()
            if error.code == 416:  # Range Not Satisfiable: the file ends before `first`
                raise HubError(
                    f"the file ends before byte {first:,} (HTTP 416): it is truncated"
                ) from None
            raise HubError(
                f"the Hub answered HTTP {error.code} ({detail}) for {url[:120]}"
            ) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            raise HubOffline(f"cannot reach {_host(url)}: {_reason(error, source)}") from None
        headers = response.headers
        commit = commit or headers.get("X-Repo-Commit")
        linked_size = linked_size or _int_or_none(headers.get("X-Linked-Size"))
        etag = etag or headers.get("X-Linked-Etag") or headers.get("ETag")
        if response.status not in _REDIRECTS:
            return _Answer(response, commit, linked_size, etag)
        location = headers.get("Location")
        response.close()
        if not location:
            raise HubError(f"HTTP {response.status} without a Location from {_host(url)}")
        url = urljoin(url, location)
    raise HubError(f"more than {MAX_REDIRECTS} redirects from {source.url(source.revision)}")


def _host(url: str) -> str:
    return urlsplit(url).netloc or url[:80]


def _reason(error: BaseException, source: HubFile) -> str:
    reason = getattr(error, "reason", error)
    if isinstance(reason, TimeoutError):
        return f"no answer within {source.timeout:g} s"
    return str(reason) or type(reason).__name__


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value is not None and value.strip().isdigit() else None


def _check_partial(answer: _Answer, first: int, last: int, *, may_end_early: bool = False) -> int:
    """Check a 206 answer covers ``first..last`` (or, with ``may_end_early``, ``first`` to
    the end of a shorter file); return the file's total size. Closes the answer if not."""
    response = answer.response
    problem = None
    if response.status == 200:
        problem = (
            "the server ignored the Range request (HTTP 200): posviz reads only the two "
            "tables it needs and will not download the whole model"
        )
    elif response.status != 206:
        problem = f"expected HTTP 206 Partial Content, got {response.status}"
    match = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
    if problem is None and (match is None or match[3] == "*"):
        problem = "the server's 206 answer has no usable Content-Range header"
    if problem is None and match is not None:
        got, total = (int(match[1]), int(match[2])), int(match[3])
        want = (first, min(last, total - 1) if may_end_early else last)
        if got != want:
            problem = (
                f"asked for bytes {first:,}-{last:,}, the server sent {got[0]:,}-{got[1]:,} of "
                f"{total:,}: the file is shorter than its header says (truncated)"
            )
        else:
            return total
    response.close()
    raise HubError(problem)


def _read_into(
    source: HubFile, answer: _Answer, count: int, write: Callable[[bytes], object]
) -> int:
    """Pass up to ``count`` bytes of the body to ``write`` in chunks; return how many arrived
    before the end or a cut connection. Silence for ``source.timeout`` raises :class:`HubOffline`
    (the response's socket timeout applies to every read)."""
    received = 0
    try:
        while received < count:
            chunk = answer.response.read1(min(CHUNK_BYTES, count - received))
            if not chunk:
                break
            write(chunk)
            received += len(chunk)
    except TimeoutError:
        raise HubOffline(
            f"{_host(source.endpoint)} sent nothing for {source.timeout:g} s "
            f"after {received:,} of {count:,} bytes"
        ) from None
    except (OSError, http.client.HTTPException):
        pass  # a cut connection: the caller resumes or reports the shortfall
    finally:
        answer.response.close()
    return received


@dataclass(frozen=True)
class RemoteSafetensors:
    """A safetensors file on the Hub whose header has been read, pinned to one commit."""

    source: HubFile
    commit: str  # 40 hex digits, what the revision pointed to when the header was read
    size: int  # bytes in the whole file
    etag: str | None
    data_start: int  # 8 + header length: where offsets count from
    tensors: Mapping[str, TensorEntry]

    def download(self, name: str, sink: IO[bytes], *, progress: Progress | None = None) -> str:
        """Write tensor ``name``'s raw bytes to ``sink``; return their sha256 (hex).

        Only that tensor's bytes are requested. A connection cut mid-way resumes from the
        last byte received (``MAX_ATTEMPTS`` requests at most).
        """
        entry = self.tensors.get(name)
        if entry is None:
            raise HubError(f"{self.source.filename} has no tensor {name!r}")
        first, total = self.data_start + entry.begin, entry.nbytes
        if first + total > self.size:
            raise HubError(
                f"{name} needs bytes up to {first + total:,} but the file has {self.size:,}: "
                "it is truncated"
            )
        digest = hashlib.sha256()
        done = 0

        def write(chunk: bytes) -> None:
            nonlocal done
            digest.update(chunk)  # hash as it arrives: no second pass over the file
            sink.write(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, total)

        for _ in range(MAX_ATTEMPTS):
            if done == total:
                break
            start, last = first + done, first + total - 1
            answer = _http_get(self.source, self.source.url(self.commit), start, last)
            self._check_commit(answer)
            _check_partial(answer, start, last)
            _read_into(self.source, answer, total - done, write)
        if done != total:
            raise HubError(
                f"the connection to {_host(self.source.endpoint)} was cut {MAX_ATTEMPTS} times; "
                f"{done:,} of {total:,} bytes of {name} arrived. Try again."
            )
        return digest.hexdigest()

    def _check_commit(self, answer: _Answer) -> None:
        if answer.commit is not None and answer.commit != self.commit:
            answer.response.close()
            raise HubError(
                f"asked for commit {self.commit}, the Hub answered for {answer.commit[:40]!r}"
            )


def open_safetensors(source: HubFile) -> RemoteSafetensors:
    """Read the header of ``source`` (one request, two if the header exceeds 100,000 bytes)
    and the commit its revision points to."""
    answer = _http_get(source, source.url(source.revision), 0, HEADER_PREFIX - 1)
    commit = answer.commit
    if commit is None or _COMMIT.fullmatch(commit) is None:
        answer.response.close()
        raise HubError(
            f"{_host(source.endpoint)} sent no valid X-Repo-Commit header "
            f"(got {str(commit)[:60]!r}): is HF_ENDPOINT a Hugging Face Hub?"
        )
    size = _check_partial(answer, 0, HEADER_PREFIX - 1, may_end_early=True)
    chunks: list[bytes] = []
    _read_into(source, answer, min(HEADER_PREFIX, size), chunks.append)
    prefix = b"".join(chunks)
    if answer.linked_size is not None and answer.linked_size != size:
        raise HubError(
            f"the Hub says the file has {answer.linked_size:,} bytes, the CDN {size:,}: "
            "the file is truncated or changed"
        )
    length = int.from_bytes(prefix[:8], "little") if len(prefix) >= 8 else 0
    if len(prefix) >= 8 and 8 + length > len(prefix) and length <= MAX_HEADER_BYTES:
        rest = _fetch_bytes(source, commit, len(prefix), 8 + length - 1)
        prefix += rest
    tensors = parse_header(prefix)
    remote = RemoteSafetensors(
        source=source,
        commit=commit,
        size=size,
        etag=answer.etag,
        data_start=8 + length,
        tensors=tensors,
    )
    for entry in tensors.values():
        if remote.data_start + entry.end > size:
            raise HubError(
                f"{entry.name[:60]} ends at byte {remote.data_start + entry.end:,} but the "
                f"file has {size:,}: it is truncated"
            )
    return remote


def _fetch_bytes(source: HubFile, commit: str, first: int, last: int) -> bytes:
    answer = _http_get(source, source.url(commit), first, last)
    _check_partial(answer, first, last)
    chunks: list[bytes] = []
    count = last - first + 1
    if _read_into(source, answer, count, chunks.append) != count:
        raise HubError("the connection was cut while reading the safetensors header")
    return b"".join(chunks)
