"""GPT-2 124M's trained embedding tables, downloaded once, checked, and memory-mapped.

GPT-2's ``model.safetensors`` on the Hugging Face Hub (``openai-community/gpt2``) holds, among
148 tensors (548 MB), the two tables section 2.8 is about::

    wte.weight  F32 [50257, 768]   token embeddings     (154 MB)
    wpe.weight  F32 [1024, 768]    positional embeddings  (3 MB)

:class:`Gpt2Store` fetches just those bytes (see :mod:`posviz.gpt2.hub`) into a cache folder, one
sub-folder per commit, and records each file's size and sha256 in ``manifest.json`` next to
it. Opening a table checks both, then memory-maps the file: looking up a window's rows reads
only those rows from disk, so the 154 MB token table does not become resident memory.

Offline first: :meth:`Gpt2Store.tables` uses the cache without touching the network when it
holds the revision asked for; :meth:`Gpt2Store.fetch` (``python -m posviz --fetch-gpt2``)
always asks the Hub which commit the revision points to and downloads what is missing.
Downloads hold a lock (threads of this process, and other processes through
``filelock``), so sessions that ask at the same time download once; those that wait see the
same progress, and if that attempt finds the Hub unreachable, its answer at once (a class
opening a lecture link while the Hub stalls waits for one attempt, not one each).

The cache folder is ``POSVIZ_CACHE_DIR``, else ``$XDG_CACHE_HOME/posviz``, else
``~/.cache/posviz``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import mmap
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import quote

import numpy as np
import torch
from filelock import FileLock

from posviz.gpt2.hub import (
    Budget,
    HubError,
    HubFile,
    HubOffline,
    Progress,
    RemoteSafetensors,
    open_safetensors,
)


@dataclass(frozen=True)
class TableSpec:
    """A table posviz reads from GPT-2's file: its tensor name, dtype and shape."""

    name: str
    shape: tuple[int, int]
    dtype: str = "F32"

    @property
    def nbytes(self) -> int:
        """Size of the table's float32 data."""
        return math.prod(self.shape) * 4

    @property
    def file_name(self) -> str:
        """Name of the table's raw float32 file in the cache."""
        return f"{self.name}.f32"


_Mapped = tuple[torch.Tensor, "mmap.mmap | None"]  # a table and the mapping behind it
_MADV_DONTNEED: Final = getattr(mmap, "MADV_DONTNEED", None)  # Linux, macOS
_MADV_RANDOM: Final = getattr(mmap, "MADV_RANDOM", None)

WTE: Final = TableSpec("wte.weight", (50257, 768))  # token embeddings, 154 MB
WPE: Final = TableSpec("wpe.weight", (1024, 768))  # positional embeddings, 3 MB
MANIFEST: Final = "manifest.json"
FETCH_COMMAND: Final = "python -m posviz --fetch-gpt2"  # the page shows it as code, unbroken
_FETCH_HINT: Final = f"Fetch them before a lecture, on a machine with network: {FETCH_COMMAND}"
HASH_CHUNK: Final = 1 << 22  # bytes per read while checking a cached file's sha256
ROWS_PER_READ: Final = 64  # token rows read between two unmaps: at most ~4 MB mapped at once
FAULT_AROUND: Final = 1 << 21  # bytes around a read fault the kernel may map (up to a 2 MiB
# huge page or large folio; fault_around_bytes alone is 64 kB): unmapped with the rows


class Gpt2Unavailable(HubError):
    """GPT-2's tables cannot be shown: not cached and not downloadable, or damaged."""


class Gpt2CacheError(Gpt2Unavailable):
    """A cached table file does not match the size or sha256 recorded at download."""


def default_cache_dir() -> Path:
    """``POSVIZ_CACHE_DIR``, else ``$XDG_CACHE_HOME/posviz``, else ``~/.cache/posviz``."""
    explicit = os.environ.get("POSVIZ_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "posviz"


@dataclass(frozen=True, eq=False)
class Gpt2Embeddings:
    """GPT-2's trained ``wte`` and ``wpe``, with the methods of
    :class:`~posviz.embeddings.SeededEmbeddings`.

    ``token_embeddings`` and ``pos_embeddings`` return copies: callers may change them
    without touching the shared, memory-mapped tables.
    """

    commit: str  # the Hub commit the tables were downloaded from
    wte: torch.Tensor = field(repr=False)  # [50257, 768], memory-mapped
    wpe: torch.Tensor = field(repr=False)  # [1024, 768], memory-mapped
    wte_map: mmap.mmap | None = field(default=None, repr=False)  # the mappings behind them
    wpe_map: mmap.mmap | None = field(default=None, repr=False)

    @property
    def emb_dim(self) -> int:
        """d: 768 for GPT-2 124M."""
        return int(self.wte.shape[1])

    @property
    def vocab_size(self) -> int:
        """Rows of the token table (50,257)."""
        return int(self.wte.shape[0])

    @property
    def max_context_length(self) -> int:
        """Rows of the positional table (1,024): the longest window GPT-2 takes."""
        return int(self.wpe.shape[0])

    def token_embeddings(self, token_ids: Sequence[int]) -> torch.Tensor:
        """Rows ``token_ids`` of ``wte.weight``: shape ``[n, 768]``, float32."""
        ids = torch.as_tensor(list(token_ids), dtype=torch.long)  # [n]
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.vocab_size):
            bad = int(ids[(ids < 0) | (ids >= self.vocab_size)][0])
            raise ValueError(f"token ids must be in 0..{self.vocab_size - 1}, got {bad}")
        token_embeddings = torch.empty(len(ids), self.emb_dim)  # [n, d]
        order = torch.argsort(ids)  # read the table front to back, ROWS_PER_READ at a time
        for start in range(0, len(ids), ROWS_PER_READ):
            where = order[start : start + ROWS_PER_READ]  # positions in the window
            rows = ids[where]  # ascending token ids
            token_embeddings[where] = self.wte.index_select(0, rows)  # copies of the rows
            _drop_pages(self.wte_map, self.wte, int(rows[0]), int(rows[-1]) + 1)
        return token_embeddings

    def pos_embeddings(self, context_length: int) -> torch.Tensor:
        """Rows ``0..context_length-1`` of ``wpe.weight``: shape ``[context_length, 768]``."""
        if not 1 <= context_length <= self.max_context_length:
            raise ValueError(
                f"GPT-2 has positions 0-{self.max_context_length - 1}: context_length must be "
                f"from 1 to {self.max_context_length}, got {context_length}"
            )
        pos_embeddings = self.wpe[:context_length].clone()  # [T, d]
        _drop_pages(self.wpe_map, self.wpe, 0, context_length)
        return pos_embeddings


def _drop_pages(mapped: mmap.mmap | None, table: torch.Tensor, first: int, end: int) -> None:
    """Unmap the pages around rows ``first..end-1`` of a mapped table after reading them.

    On a read fault the kernel maps cached file pages around the 3 kB row asked for
    ("fault-around", 64 kB; more with large folios), so without this resident memory would
    grow by 64 kB or more per distinct token, to the whole 154 MB table over a long session.
    The file stays in the page cache, so reading the rows again costs a minor fault; a
    concurrent lookup whose pages go maps them again from the file (never written, so the
    numbers cannot change).
    """
    if mapped is None or _MADV_DONTNEED is None:
        return
    row_bytes = table.shape[1] * table.element_size()
    begin = max(first * row_bytes - FAULT_AROUND, 0) // mmap.PAGESIZE * mmap.PAGESIZE
    stop = min(end * row_bytes + FAULT_AROUND, len(mapped))
    mapped.madvise(_MADV_DONTNEED, begin, stop - begin)


@dataclass
class _Shared:
    """Progress of the download in flight, for sessions that wait for it."""

    done: int = 0
    total: int = 0
    name: str = ""


class Gpt2Store:
    """GPT-2's tables in a cache folder: download (once), check, memory-map.

    One store per process is meant to be shared by all sessions (the app keeps it in
    ``st.cache_resource``); its lock makes concurrent requests download once.
    """

    def __init__(
        self,
        *,
        cache_dir: Path | None = None,
        source: HubFile | None = None,
        token_table: TableSpec = WTE,
        position_table: TableSpec = WPE,
    ) -> None:
        self.source = source or HubFile.from_env()
        root = cache_dir or default_cache_dir()
        self.root = root / "hub" / ("models--" + self.source.repo_id.replace("/", "--"))
        self.token_table = token_table  # tests use small stand-ins; the app GPT-2's shapes
        self.position_table = position_table
        self._lock = threading.Lock()  # held while downloading
        self._open_lock = threading.Lock()  # held while checking and mapping a cached file
        self._progress = _Shared()
        self._opened: dict[tuple[str, str], tuple[os.stat_result, _Mapped]] = {}
        # When the last attempt found the Hub unreachable, and what it said: sessions that
        # were waiting for that attempt get its answer instead of starting one more each.
        self._failed: tuple[float, Gpt2Unavailable] | None = None

    # -- what is cached -------------------------------------------------------------------

    def _ref_path(self, revision: str) -> Path:
        return self.root / "refs" / quote(revision, safe="")

    def cached_commit(self) -> str | None:
        """The commit cached for the store's revision, if any (no network)."""
        try:
            commit = self._ref_path(self.source.revision).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return commit if len(commit) == 40 and commit.isalnum() else None

    def _manifest(self, commit: str) -> dict[str, dict[str, object]]:
        try:
            data = json.loads((self.root / commit / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        tables = data.get("tables") if isinstance(data, dict) else None
        return tables if isinstance(tables, dict) else {}

    def has(self, *specs: TableSpec) -> bool:
        """Whether the cache lists ``specs`` for the store's revision (sizes not checked)."""
        commit = self.cached_commit()
        return commit is not None and all(s.name in self._manifest(commit) for s in specs)

    # -- reading --------------------------------------------------------------------------

    def tables(self, *, progress: Progress | None = None, download: bool = True) -> Gpt2Embeddings:
        """Both tables; from the cache if it has them, else downloaded (if ``download``)."""
        specs = (self.token_table, self.position_table)
        commit = self._ensure(specs, progress=progress, download=download)
        (wte, wte_map), (wpe, wpe_map) = (self._open(commit, spec) for spec in specs)
        return Gpt2Embeddings(commit, wte, wpe, wte_map, wpe_map)

    def positions(self, *, progress: Progress | None = None, download: bool = True) -> torch.Tensor:
        """Only ``wpe.weight`` ``[1024, 768]`` (3 MB, a copy): the positional table alone."""
        commit = self._ensure((self.position_table,), progress=progress, download=download)
        table, _ = self._open(commit, self.position_table)
        return table.clone()

    def fetch(self, *, positions_only: bool = False, progress: Progress | None = None) -> str:
        """Ask the Hub which commit the revision is, and download what the cache lacks or has
        damaged. Returns the commit. This is ``python -m posviz --fetch-gpt2``."""
        specs = [self.position_table] + ([] if positions_only else [self.token_table])
        with self._locked(progress):
            budget = Budget(self.source.timeout)  # one attempt: the file, then its tables
            remote = open_safetensors(self.source, budget=budget)
            for spec in specs:
                if not self._is_intact(remote.commit, spec):
                    self._download(remote, spec, progress, budget)
            self._write_ref(remote.commit)
            return remote.commit

    def _ensure(
        self, specs: Sequence[TableSpec], *, progress: Progress | None, download: bool
    ) -> str:
        commit = self.cached_commit()
        if commit is not None and all(s.name in self._manifest(commit) for s in specs):
            return commit
        if not download:
            raise Gpt2Unavailable(self._not_cached_message())
        asked = time.monotonic()
        try:
            with self._locked(progress):
                commit = self.cached_commit()  # another session may have finished meanwhile
                if commit is not None and all(s.name in self._manifest(commit) for s in specs):
                    return commit
                failed = self._failed
                if failed is not None and failed[0] >= asked:  # the attempt this one waited for
                    raise Gpt2Unavailable(str(failed[1]))
                try:
                    # One attempt, one budget of silence: a stalled Hub is given up on after
                    # source.timeout in all, whichever step it stalls in.
                    budget = Budget(self.source.timeout)
                    remote = open_safetensors(self.source, budget=budget)
                    for spec in specs:
                        if spec.name not in self._manifest(remote.commit):
                            self._download(remote, spec, progress, budget)
                    self._write_ref(remote.commit)
                    return remote.commit
                except HubOffline as error:
                    offline = Gpt2Unavailable(
                        "GPT-2's trained tables are not in the cache and the Hub cannot be "
                        f"reached ({error}; cache folder: {self.root}). {_FETCH_HINT}"
                    )
                    self._failed = (time.monotonic(), offline)  # before the lock is let go
                    raise offline from error
        except Gpt2Unavailable:
            raise
        except HubError as error:
            raise Gpt2Unavailable(
                f"GPT-2's trained tables could not be downloaded: {error}. {_FETCH_HINT}"
            ) from error

    def _not_cached_message(self) -> str:
        return f"GPT-2's trained tables are not in the cache ({self.root}). {_FETCH_HINT}"

    def _open(self, commit: str, spec: TableSpec) -> _Mapped:
        """The cached table, memory-mapped, after checking its size and sha256 once per file
        version (a changed file is checked again)."""
        path = self.root / commit / spec.file_name
        try:
            stat = path.stat()
        except OSError as error:
            raise Gpt2CacheError(
                f"the cached {spec.name} is missing ({path}): "
                "run python -m posviz --fetch-gpt2 to download it again"
            ) from error
        key = (commit, spec.name)
        with self._open_lock:
            known = self._opened.get(key)
            if known is not None and _same_file(known[0], stat):
                return known[1]
            self._verify(commit, spec, path)
            mapped = _memory_map(path, spec.shape)
            self._opened[key] = (stat, mapped)
            return mapped

    def _verify(self, commit: str, spec: TableSpec, path: Path) -> None:
        recorded = self._manifest(commit).get(spec.name, {})
        size, sha256 = path.stat().st_size, recorded.get("sha256")
        fix = "Run python -m posviz --fetch-gpt2 to download it again."
        if size != spec.nbytes or recorded.get("nbytes") != spec.nbytes:
            raise Gpt2CacheError(
                f"the cached {spec.name} has {size:,} bytes, expected {spec.nbytes:,} "
                f"({path}): it was altered or cut. {fix}"
            )
        actual = _sha256_of(path)
        if actual != sha256:
            raise Gpt2CacheError(
                f"the cached {spec.name} was altered: sha256 {actual[:16]}…, recorded at "
                f"download {str(sha256)[:16]}… ({path}). {fix}"
            )

    def _is_intact(self, commit: str, spec: TableSpec) -> bool:
        path = self.root / commit / spec.file_name
        try:
            self._verify(commit, spec, path)
        except (Gpt2CacheError, OSError):
            return False
        return True

    # -- writing --------------------------------------------------------------------------

    def _download(
        self,
        remote: RemoteSafetensors,
        spec: TableSpec,
        progress: Progress | None,
        budget: Budget,
    ) -> None:
        entry = remote.tensors.get(spec.name)
        if entry is None:
            raise HubError(f"{remote.source.filename} at {remote.commit[:12]} has no {spec.name}")
        if entry.dtype != spec.dtype or entry.shape != spec.shape:
            raise HubError(
                f"{spec.name} is {entry.dtype} {list(entry.shape)} in this file, GPT-2 124M's is "
                f"{spec.dtype} {list(spec.shape)}: not the model posviz expects"
            )
        folder = self.root / remote.commit
        part = folder / f"{spec.file_name}.part-{os.getpid()}-{threading.get_ident()}"

        reported = 0

        def report(done: int, total: int) -> None:  # at most every MiB, and at the end
            nonlocal reported
            self._progress.done, self._progress.total = done, total
            if progress is not None and (done - reported >= 1 << 20 or done == total):
                reported = done
                progress(done, total)

        self._progress = _Shared(0, spec.nbytes, spec.name)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with part.open("wb") as sink:
                sha256 = remote.download(spec.name, sink, progress=report, budget=budget)
            os.replace(part, folder / spec.file_name)
            self._record(remote, spec, sha256)
        except OSError as error:
            raise HubError(_cannot_write(folder, error)) from error
        finally:
            part.unlink(missing_ok=True)

    def _record(self, remote: RemoteSafetensors, spec: TableSpec, sha256: str) -> None:
        """Add ``spec`` to the commit's manifest (written whole, then renamed into place)."""
        path = self.root / remote.commit / MANIFEST
        tables = self._manifest(remote.commit)
        tables[spec.name] = {
            "dtype": spec.dtype,
            "shape": list(spec.shape),
            "nbytes": spec.nbytes,
            "sha256": sha256,
        }
        manifest = {
            "repo_id": remote.source.repo_id,
            "filename": remote.source.filename,
            "commit": remote.commit,
            "etag": remote.etag,
            "file_size": remote.size,
            "tables": tables,
        }
        _write_atomic(path, json.dumps(manifest, indent=2).encode())

    def _write_ref(self, commit: str) -> None:
        try:
            _write_atomic(self._ref_path(self.source.revision), commit.encode("ascii"))
        except OSError as error:
            raise HubError(_cannot_write(self.root, error)) from error

    @contextlib.contextmanager
    def _locked(self, progress: Progress | None) -> Iterator[None]:
        """Hold the store's lock (and the cache folder's file lock); while another session
        holds it, pass its download progress to ``progress``."""
        while not self._lock.acquire(timeout=0.25):
            shared = self._progress
            if progress is not None and shared.total:
                progress(shared.done, shared.total)
        try:
            with _file_lock(self.root / ".lock"):
                yield
        finally:
            self._progress = _Shared()
            self._lock.release()


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive ``filelock.FileLock`` on ``path`` (``flock`` on Linux and macOS,
    ``msvcrt`` on Windows, as ``huggingface_hub`` locks its cache): other processes (a CLI
    fetch, other app workers) wait instead of downloading the same bytes."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(path)
        lock.acquire()
    except OSError as error:
        raise HubError(_cannot_write(path.parent, error)) from error
    try:
        yield
    finally:
        lock.release()


def _cannot_write(folder: Path, error: OSError) -> str:
    return (
        f"cannot write the cache in {folder}: {error.strerror or error}. Set POSVIZ_CACHE_DIR "
        "to a writable folder"
    )


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_ino, a.st_size, a.st_mtime_ns) == (b.st_ino, b.st_size, b.st_mtime_ns)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _memory_map(path: Path, shape: tuple[int, int]) -> _Mapped:
    """The file as a float32 tensor, mapped copy-on-write (never written): pages load when
    rows are read. Returns the tensor and its mapping."""
    if sys.byteorder != "little":  # safetensors is little-endian: convert, in memory
        array = np.fromfile(path, dtype="<f4").astype("=f4").reshape(shape)
        return torch.from_numpy(array), None
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
    if _MADV_RANDOM is not None:
        mapped.madvise(_MADV_RANDOM)  # rows are read one by one: no read-ahead
    return torch.frombuffer(mapped, dtype=torch.float32).view(shape), mapped


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f"{path.name}.part-{os.getpid()}-{threading.get_ident()}")
    try:
        part.write_bytes(data)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)
