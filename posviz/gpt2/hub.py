"""Read single tensors of a ``.safetensors`` file on the Hugging Face Hub with HTTP Range
requests, through ``huggingface_hub``'s own HTTP layer.

The safetensors format: 8 bytes, a little-endian unsigned 64-bit header length ``N``; ``N``
bytes of JSON, ``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
{...}}``; then the data, with offsets counted from the end of the header (byte ``8 + N``).

The Hub: ``HEAD {endpoint}/{repo}/resolve/{revision}/{filename}`` answers a large (LFS or Xet)
file with a redirect to another host (a CDN, or the Xet bridge) and the headers
``X-Repo-Commit`` (the commit ``revision`` points to), ``X-Linked-Etag`` and ``X-Linked-Size``;
that host honours ``Range: bytes=a-b`` with ``206 Partial Content``.
``huggingface_hub.get_safetensors_metadata`` reads a header the same way: the first 100,000
bytes, and a second request only if the header is longer.

What ``huggingface_hub`` does here, and what posviz adds:

* :func:`huggingface_hub.get_hf_file_metadata` asks the Hub for the commit, size and etag (one
  ``HEAD``, with ``HF_TOKEN`` or the saved login as the library sends them; redirects are
  followed only while they stay on the Hub). Every later request is pinned to that commit:
  each tensor's download asks again for ``/resolve/{commit}/`` and refuses another commit,
  size or etag.
* The byte ranges are ``GET`` requests on the library's shared session
  (:func:`huggingface_hub.utils.get_session`: its offline switch, request ids, user agent). The
  token goes only to the Hub's own host (``HF_ENDPOINT``), never to the host the Hub redirects
  to, as ``hf_hub_download`` does; the session drops it on any redirect that leaves the host.
* Every answer is checked: status 206, the exact ``Content-Range`` asked for, and the number of
  bytes that arrived; a download cut mid-way resumes from the last byte received.
* Time: each request must bring its first byte within :data:`FIRST_BYTE_TIMEOUT` (10 s), and a
  source that sends nothing is given up after :data:`DEFAULT_TIMEOUT` (20 s) of silence in all,
  over every step of one attempt (asking where the file is, its header, each table) and every
  retry, as a :class:`Budget` measures it on the clock: a page that asks for GPT-2's tables
  shows its fallback within 30 s of the request, its own run included. 429 and 5xx answers
  are retried, waiting what ``Retry-After`` asks (else 1, 2, 4 s), at most
  :data:`MAX_ATTEMPTS` requests per step and never past the budget. The library's own backoff
  (``http_backoff``) is not used for this: it sleeps ``Retry-After`` + 1 s up to 5 times with
  no overall limit, minutes while a lecture waits.

Any surprise is a :class:`HubError` whose message says what happened; a network that cannot be
reached, ``HF_HUB_OFFLINE``, or a server that sends nothing in time is a :class:`HubOffline`.

>>> header = b'{"wpe.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}'
>>> parse_header(len(header).to_bytes(8, "little") + header)["wpe.weight"].shape
(2, 3)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Final, NoReturn, TypeVar
from urllib.parse import quote, urlsplit

import httpx2

# huggingface_hub's client parts are imported when first used: huggingface_hub.utils imports
# tqdm.auto, which in a notebook without ipywidgets warns "IProgress not found" on import.
from huggingface_hub import constants
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

if TYPE_CHECKING:
    from huggingface_hub import HfFileMetadata

DEFAULT_ENDPOINT: Final = "https://huggingface.co"
GPT2_REPO: Final = "openai-community/gpt2"
GPT2_FILE: Final = "model.safetensors"
# Seconds of silence a source gets in all, over every step and retry of one attempt: with the
# page's own run (about 3 s on a busy 2-core server) its fallback shows within 30 s.
DEFAULT_TIMEOUT: Final = 20.0
FIRST_BYTE_TIMEOUT: Final = 10.0  # seconds each request gets to connect and send a byte
HEADER_PREFIX: Final = 100_000  # bytes read first, as huggingface_hub does
MAX_HEADER_BYTES: Final = 25_000_000  # huggingface_hub's limit for a safetensors header
MAX_ATTEMPTS: Final = 5  # requests per step: retries after 429/5xx, timeouts and cuts
RETRY_STATUSES: Final = frozenset({429, 500, 502, 503, 504})  # what huggingface_hub retries
BACKOFF_SECONDS: Final = (1.0, 2.0, 4.0, 8.0)  # waits without Retry-After (its base and cap)
DTYPE_BYTES: Final = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "U8": 1}
_COMMIT: Final = re.compile(r"[0-9a-f]{40}")  # git sha1, as the Hub reports it
_CONTENT_RANGE: Final = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_T = TypeVar("_T")

Progress = Callable[[int, int], None]
"""Called with (bytes received, bytes expected) while a tensor downloads."""

_sleep: Callable[[float], None] = time.sleep  # waits between retries (tests record them)
_clock: Callable[[], float] = time.monotonic  # what a Budget measures silence with


class HubError(RuntimeError):
    """The Hub (or whatever ``HF_ENDPOINT`` points to) gave an answer posviz cannot use."""


class HubOffline(HubError):
    """The Hub cannot be reached: no network, refused, offline mode, or no answer in time."""


def env_is_true(value: str | None) -> bool:
    """An environment flag as ``huggingface_hub`` reads it: ``1``, ``ON``, ``YES``, ``TRUE``
    in any case are true, anything else (or unset) false.

    >>> env_is_true("yes"), env_is_true("on"), env_is_true("0"), env_is_true(None)
    (True, True, False, False)
    """
    return value is not None and value.upper() in constants.ENV_VARS_TRUE_VALUES


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
    timeout: float = DEFAULT_TIMEOUT  # seconds without a byte before giving up, in all
    first_byte_timeout: float = FIRST_BYTE_TIMEOUT  # seconds per request to start answering
    offline: bool = False  # HF_HUB_OFFLINE=1: never touch the network
    # None: HF_TOKEN or the saved login, as huggingface_hub finds it; False: never a token
    token: str | bool | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if urlsplit(self.endpoint).scheme not in ("http", "https"):
            raise ValueError(f"HF_ENDPOINT must be an http(s) URL, got {self.endpoint!r}")
        if not self.revision:
            raise ValueError("revision must be a branch, tag or commit, got ''")
        if not 0 < self.first_byte_timeout <= self.timeout <= 600:
            raise ValueError(
                "timeouts must satisfy 0 < first_byte_timeout <= timeout <= 600 s, got "
                f"{self.first_byte_timeout} and {self.timeout}"
            )

    @classmethod
    def from_env(cls, *, revision: str | None = None, timeout: float | None = None) -> HubFile:
        """GPT-2's ``model.safetensors``, from the environment as ``huggingface_hub`` reads
        it: ``HF_ENDPOINT`` (trailing ``/`` dropped; unset or blank: the public Hub),
        ``HF_HUB_OFFLINE`` (else ``TRANSFORMERS_OFFLINE``; see :func:`env_is_true`), and
        ``HF_TOKEN`` at each request; plus ``POSVIZ_GPT2_REVISION`` (default ``main``)."""
        endpoint = os.environ.get("HF_ENDPOINT", DEFAULT_ENDPOINT).strip().rstrip("/")
        offline = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
        timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        return cls(
            endpoint=endpoint or DEFAULT_ENDPOINT,
            revision=revision or os.environ.get("POSVIZ_GPT2_REVISION", "").strip() or "main",
            timeout=timeout,
            first_byte_timeout=min(FIRST_BYTE_TIMEOUT, timeout),
            offline=env_is_true(offline),
        )

    def url(self, revision: str) -> str:
        """The ``/resolve/`` URL of the file at ``revision``."""
        return (
            f"{self.endpoint.rstrip('/')}/{self.repo_id}/resolve/"
            f"{quote(revision, safe='')}/{quote(self.filename)}"
        )

    def is_hub_host(self, url: str) -> bool:
        """Whether ``url`` is on the Hub's own host (scheme, host and port of ``endpoint``):
        the only place posviz sends a token.

        >>> hub = HubFile(endpoint="https://huggingface.co")
        >>> hub.is_hub_host("https://huggingface.co:443/x"), hub.is_hub_host("https://cdn.example/x")
        (True, False)
        """
        return _origin(url) == _origin(self.endpoint)


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 0)
    return parts.scheme, (parts.hostname or "").lower(), port


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


# -- HTTP, through huggingface_hub ---------------------------------------------------------


class _Retry(Exception):
    """A request that may be tried again: why, and how long the server asked to wait."""

    def __init__(
        self, reason: str, *, wait: float | None = None, silent: bool = False, offline: bool = False
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait  # Retry-After (or the rate-limit reset), in seconds
        self.silent = silent  # the request timed out: its whole timeout passed in silence
        self.offline = offline  # giving up means the Hub cannot be reached (not a bad answer)


class Budget:
    """The seconds of silence one attempt may still spend: one budget for every step of it
    (asking where the file is, reading its header, downloading each table) and every retry.

    A request that failed in silence (a timeout) costs what the clock says passed since it
    began or since the source last sent a byte (:meth:`heard`), and at least its timeout;
    waits between retries cost what they wait. Time spent receiving costs nothing.

    >>> ticks = iter([0.0, 12.5])
    >>> budget = Budget(20.0, clock=lambda: next(ticks))
    >>> budget.spend_silence(since=budget.now(), timeout=10.0)  # 12.5 s passed, not 10
    12.5
    >>> budget.left
    7.5
    """

    def __init__(self, seconds: float, *, clock: Callable[[], float] | None = None) -> None:
        self.allowance = seconds
        self.left = seconds
        self.clock = clock or _clock
        self._heard = -math.inf  # when the source last sent a byte

    def now(self) -> float:
        """The budget's clock."""
        return self.clock()

    def heard(self) -> None:
        """The source sent something: silence counts from now."""
        self._heard = self.clock()

    def spend_silence(self, *, since: float, timeout: float) -> float:
        """A request begun at ``since`` failed in silence after ``timeout``: take what passed
        (at least ``timeout``) from the budget; return it."""
        silent = max(self.clock() - max(since, self._heard), timeout)
        self.left -= silent
        return silent

    def spend_wait(self, seconds: float) -> None:
        """A wait between retries (``Retry-After``, backoff)."""
        self.left -= seconds

    def silent_for(self) -> float:
        """The seconds of silence spent so far (the allowance, once it is used up)."""
        return self.allowance if self.left <= 0 else self.allowance - self.left


def _with_retries(source: HubFile, budget: Budget, attempt: Callable[[float], _T]) -> _T:
    """``attempt(timeout)`` until it returns. A :class:`_Retry` it raises is tried again
    after the wait the server asked for (else 1, 2, 4, 8 s), at most :data:`MAX_ATTEMPTS`
    requests, while the budget lasts; then a :class:`HubError` (or :class:`HubOffline`)."""
    last = _Retry(f"{_host(source.endpoint)} sent nothing", silent=True, offline=True)
    requests = 0
    while requests < MAX_ATTEMPTS and budget.left > 0:
        timeout = min(source.first_byte_timeout, budget.left)
        requests += 1
        began = budget.now()
        try:
            return attempt(timeout)
        except _Retry as retry:
            last = retry
        if last.silent:
            budget.spend_silence(since=began, timeout=timeout)
        if requests == MAX_ATTEMPTS or budget.left <= 0:
            break
        wait = last.wait
        if wait is None:
            wait = 0.0 if last.silent else BACKOFF_SECONDS[min(requests, len(BACKOFF_SECONDS)) - 1]
        if wait > budget.left:
            if last.wait is not None:
                raise (HubOffline if last.offline else HubError)(
                    f"{last.reason}; it asks to wait {wait:g} s, longer than posviz waits "
                    f"({budget.allowance:g} s in all). Try again later."
                )
            break
        budget.spend_wait(wait)
        if wait > 0:
            _sleep(wait)
    if last.silent:
        raise HubOffline(
            f"{last.reason}: nothing for {budget.silent_for():.3g} s in all "
            f"({requests} request(s), {source.first_byte_timeout:g} s each at most)"
        )
    raise (HubOffline if last.offline else HubError)(
        f"{last.reason} ({requests} request(s)). Try again later."
    )


@contextmanager
def _transport_errors(url: str, timeout: float) -> Iterator[None]:
    """Turn the HTTP client's exceptions into posviz's: retry what may pass, name the rest."""
    host = _host(url)
    try:
        yield
    except OfflineModeIsEnabled:
        raise HubOffline(
            "HF_HUB_OFFLINE was set when huggingface_hub started, so posviz does not contact "
            "the Hub"
        ) from None
    except httpx2.TimeoutException:
        raise _Retry(
            f"{host} sent nothing within {timeout:.3g} s", silent=True, offline=True
        ) from None
    except httpx2.ConnectError as error:
        raise HubOffline(f"cannot reach {host}: {error or type(error).__name__}") from None
    except httpx2.UnsupportedProtocol:
        raise HubError(f"the Hub redirected to a non-HTTP address {url[:80]!r}") from None
    except httpx2.TransportError:  # a cut connection, a protocol error
        raise _Retry(f"the connection to {host} was cut") from None


def _http_error(response: httpx2.Response, source: HubFile) -> NoReturn:
    """Raise for an HTTP error answer: :class:`_Retry` for 429 and 5xx, else :class:`HubError`
    quoting the server's ``X-Error-Message``."""
    code, url = response.status_code, str(response.url)
    detail = response.headers.get("X-Error-Message") or response.reason_phrase
    if code in RETRY_STATUSES:
        raise _Retry(f"{_host(url)} answered HTTP {code} ({detail})", wait=_retry_after(response))
    hint = ""
    if code in (401, 403) and source.is_hub_host(url):
        hint = ": a gated or private repository needs a token; set HF_TOKEN to one that can read it"
    raise HubError(f"the server answered HTTP {code} ({detail}) for {url[:120]}{hint}")


def get_session() -> httpx2.Client:
    """huggingface_hub's HTTP session (its offline switch, request ids, user agent)."""
    from huggingface_hub import get_session as hub_session  # see the imports

    return hub_session()


def _retry_after(response: httpx2.Response) -> float | None:
    """Seconds a 429 or 503 asks to wait, read as ``huggingface_hub`` reads them: the
    rate-limit reset when no request is left, else ``Retry-After`` in seconds (not a date)."""
    from huggingface_hub.utils import parse_ratelimit_headers  # see the imports

    if response.status_code == 429:
        limit = parse_ratelimit_headers(response.headers)
        if limit is not None and limit.remaining == 0:
            return float(limit.reset_in_seconds)
    value = response.headers.get("Retry-After", "").strip()
    return float(value) if value.isdigit() else None


def _resolve(source: HubFile, revision: str, budget: Budget) -> HfFileMetadata:
    """``HEAD /resolve/{revision}/``: commit, size, etag and where the bytes are."""
    if source.offline:
        raise HubOffline("HF_HUB_OFFLINE is set, so posviz does not contact the Hub")
    url = source.url(revision)
    from huggingface_hub import get_hf_file_metadata  # see the imports

    def attempt(timeout: float) -> HfFileMetadata:
        with _transport_errors(url, timeout):
            try:
                return get_hf_file_metadata(
                    url,
                    token=source.token,
                    timeout=timeout,
                    library_name="posviz",
                    endpoint=source.endpoint,
                )
            except HfHubHTTPError as error:
                _http_error(error.response, source)

    return _with_retries(source, budget, attempt)


@contextmanager
def _range_get(
    source: HubFile, location: str, first: int, last: int, timeout: float
) -> Iterator[httpx2.Response]:
    """``GET location`` for bytes ``first..last`` on huggingface_hub's session; the token only
    if ``location`` is on the Hub's own host. Errors inside the ``with`` block are mapped too."""
    if urlsplit(location).scheme not in ("http", "https"):
        raise HubError(f"the Hub redirected to a non-HTTP address {location[:80]!r}")
    from huggingface_hub.utils import build_hf_headers  # see the imports

    headers = build_hf_headers(
        token=source.token if source.is_hub_host(location) else False, library_name="posviz"
    )
    headers |= {"Range": f"bytes={first}-{last}", "Accept-Encoding": "identity"}
    with (
        _transport_errors(location, timeout),
        get_session().stream(
            "GET", location, headers=headers, timeout=timeout, follow_redirects=True
        ) as response,
    ):
        yield response


def _host(url: str) -> str:
    return urlsplit(url).netloc or url[:80]


def _check_partial(
    response: httpx2.Response,
    source: HubFile,
    first: int,
    last: int,
    *,
    may_end_early: bool = False,
) -> int:
    """Check a 206 answer covers ``first..last`` (or, with ``may_end_early``, ``first`` to
    the end of a shorter file); return the file's total size."""
    code = response.status_code
    if code == 416:  # Range Not Satisfiable: the file ends before `first`
        raise HubError(f"the file ends before byte {first:,} (HTTP 416): it is truncated")
    if code >= 400:
        _http_error(response, source)
    if code == 200:
        raise HubError(
            "the server ignored the Range request (HTTP 200): posviz reads only the two "
            "tables it needs and will not download the whole model"
        )
    if code != 206:
        raise HubError(f"expected HTTP 206 Partial Content, got {code}")
    match = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
    if match is None or match[3] == "*":
        raise HubError("the server's 206 answer has no usable Content-Range header")
    got, total = (int(match[1]), int(match[2])), int(match[3])
    want = (first, min(last, total - 1) if may_end_early else last)
    if got != want:
        raise HubError(
            f"asked for bytes {first:,}-{last:,}, the server sent {got[0]:,}-{got[1]:,} of "
            f"{total:,}: the file is shorter than its header says (truncated)"
        )
    return total


def _read_body(
    response: httpx2.Response, count: int, write: Callable[[bytes], object], budget: Budget
) -> int:
    """Pass up to ``count`` bytes of the body to ``write`` in chunks; return how many arrived
    before the body ended. Silence or a cut raises (see :func:`_transport_errors`)."""
    received = 0
    for chunk in response.iter_raw():  # as received: a cut loses nothing already here
        budget.heard()
        piece = chunk[: count - received]
        write(piece)
        received += len(piece)
        if received >= count:
            break
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

    def download(
        self,
        name: str,
        sink: IO[bytes],
        *,
        progress: Progress | None = None,
        budget: Budget | None = None,
    ) -> str:
        """Write tensor ``name``'s raw bytes to ``sink``; return their sha256 (hex).

        The Hub is asked again where the file is at :attr:`commit` (and must name the same
        commit, size and etag); only that tensor's bytes are requested. A connection cut
        mid-way resumes from the last byte received. ``budget``: the attempt's silence so far
        (:func:`open_safetensors`'s), else a new one of ``source.timeout``.
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
        budget = budget or Budget(self.source.timeout)
        location = self._location(budget)
        digest = hashlib.sha256()
        done = 0

        def write(chunk: bytes) -> None:
            nonlocal done
            digest.update(chunk)  # hash as it arrives: no second pass over the file
            sink.write(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, total)

        def attempt(timeout: float) -> None:
            start, last = first + done, first + total - 1
            try:
                with _range_get(self.source, location, start, last, timeout) as response:
                    _check_partial(response, self.source, start, last)
                    _read_body(response, total - done, write, budget)
            except _Retry as retry:
                raise _Retry(
                    f"{retry.reason} after {done:,} of {total:,} bytes of {name}",
                    wait=retry.wait,
                    silent=retry.silent,
                    offline=retry.offline,
                ) from None
            if done != total:
                raise _Retry(
                    f"the connection to {_host(location)} was cut after {done:,} of "
                    f"{total:,} bytes of {name}"
                )

        _with_retries(self.source, budget, attempt)
        return digest.hexdigest()

    def _location(self, budget: Budget) -> str:
        """Where the file's bytes are at :attr:`commit`, after checking it is the same file."""
        metadata = _resolve(self.source, self.commit, budget)
        if metadata.commit_hash != self.commit:
            raise HubError(
                f"asked for commit {self.commit}, the Hub answered for "
                f"{str(metadata.commit_hash)[:40]!r}"
            )
        if (metadata.size is not None and metadata.size != self.size) or (
            self.etag and metadata.etag and metadata.etag != self.etag
        ):
            raise HubError(
                f"the file at commit {self.commit[:12]} changed size or etag since its header "
                "was read"
            )
        return metadata.location


def open_safetensors(source: HubFile, *, budget: Budget | None = None) -> RemoteSafetensors:
    """Ask the Hub which commit ``source.revision`` is, then read the file's header (one
    request, two if the header exceeds 100,000 bytes). ``budget``: the silence the attempt
    may spend, shared with the downloads that follow (else one of ``source.timeout``)."""
    budget = budget or Budget(source.timeout)
    metadata = _resolve(source, source.revision, budget)
    commit = metadata.commit_hash
    if commit is None or _COMMIT.fullmatch(commit) is None:
        raise HubError(
            f"{_host(source.endpoint)} sent no valid X-Repo-Commit header "
            f"(got {str(commit)[:60]!r}): is HF_ENDPOINT a Hugging Face Hub?"
        )
    location = metadata.location
    chunks: list[bytes] = []

    def read_prefix(timeout: float) -> int:
        chunks.clear()
        with _range_get(source, location, 0, HEADER_PREFIX - 1, timeout) as response:
            size = _check_partial(response, source, 0, HEADER_PREFIX - 1, may_end_early=True)
            if _read_body(response, min(HEADER_PREFIX, size), chunks.append, budget) < min(
                HEADER_PREFIX, size
            ):
                raise _Retry("the connection was cut while reading the safetensors header")
        return size

    size = _with_retries(source, budget, read_prefix)
    prefix = b"".join(chunks)
    if metadata.size is not None and metadata.size != size:
        raise HubError(
            f"the Hub says the file has {metadata.size:,} bytes, the CDN {size:,}: "
            "the file is truncated or changed"
        )
    length = int.from_bytes(prefix[:8], "little") if len(prefix) >= 8 else 0
    if len(prefix) >= 8 and 8 + length > len(prefix) and length <= MAX_HEADER_BYTES:
        prefix += _fetch_bytes(source, location, budget, len(prefix), 8 + length - 1)
    tensors = parse_header(prefix)
    remote = RemoteSafetensors(
        source=source,
        commit=commit,
        size=size,
        etag=metadata.etag,
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


def _fetch_bytes(source: HubFile, location: str, budget: Budget, first: int, last: int) -> bytes:
    count = last - first + 1

    def attempt(timeout: float) -> bytes:
        chunks: list[bytes] = []
        with _range_get(source, location, first, last, timeout) as response:
            _check_partial(response, source, first, last)
            if _read_body(response, count, chunks.append, budget) != count:
                raise _Retry("the connection was cut while reading the safetensors header")
        return b"".join(chunks)

    return _with_retries(source, budget, attempt)
