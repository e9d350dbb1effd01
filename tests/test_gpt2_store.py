"""posviz.gpt2.store: download once, check, memory-map; offline use; damaged caches; locks.

Small stand-in tables for most tests, one test with GPT-2's full shapes. All served by the
loopback stand-in in devtools/fake_hub.py: random numbers, NOT GPT-2's.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

import posviz.gpt2.hub
from devtools.fake_hub import (
    COMMIT,
    Blob,
    FakeHub,
    Logged,
    made_up_tables,
    serve,
    write_safetensors,
)
from posviz.gpt2.hub import HEADER_PREFIX, HubFile
from posviz.gpt2.store import (
    WPE,
    WTE,
    Gpt2CacheError,
    Gpt2Store,
    Gpt2Unavailable,
    TableSpec,
    default_cache_dir,
)

VOCAB, CONTEXT, D = 64, 16, 8
TOKENS = TableSpec("wte.weight", (VOCAB, D))
POSITIONS = TableSpec("wpe.weight", (CONTEXT, D))
SHAPES = {"h.0.mlp.c_fc.weight": (D, 4 * D), "wpe.weight": (CONTEXT, D), "wte.weight": (VOCAB, D)}
TIMEOUT = 30.0  # seconds: a working loopback server answers in milliseconds, even under load
QUICK = {"timeout": 0.75, "first_byte_timeout": 0.25}  # a silent server's test is short

pytestmark = pytest.mark.usefixtures("hub_online")


@pytest.fixture
def blob(tmp_path: Path) -> Blob:
    return write_safetensors(
        tmp_path / "model.safetensors", SHAPES, made_up_tables(VOCAB, CONTEXT, D)
    )


@pytest.fixture
def hub(blob: Blob) -> Iterator[FakeHub]:
    with serve(blob.path) as hub:
        yield hub


def store_for(
    hub: FakeHub | None,
    cache: Path,
    *,
    offline: bool = False,
    **source: object,
) -> Gpt2Store:
    endpoint = hub.endpoint if hub else "http://127.0.0.1:9"
    return Gpt2Store(
        cache_dir=cache,
        source=HubFile(endpoint=endpoint, offline=offline, **{"timeout": TIMEOUT, **source}),  # type: ignore[arg-type]
        token_table=TOKENS,
        position_table=POSITIONS,
    )


def tensor_downloads(hub: FakeHub, blob: Blob, name: str) -> int:
    """How many times the CDN was asked for bytes starting at tensor ``name``."""
    begin = blob.offsets[name][0]
    return sum(1 for r in hub.on("cdn") if r.range and r.range.startswith(f"bytes={begin}-"))


def test_tables_are_the_served_tensors_exactly(hub: FakeHub, blob: Blob, tmp_path: Path) -> None:
    tables = store_for(hub, tmp_path / "cache").tables()
    token_ids = [5, 0, 63, 5, 17]
    want_tokens = blob.arrays["wte.weight"][token_ids]
    assert torch.equal(tables.token_embeddings(token_ids), torch.from_numpy(want_tokens))
    assert torch.equal(tables.pos_embeddings(CONTEXT), torch.from_numpy(blob.arrays["wpe.weight"]))
    assert (tables.commit, tables.emb_dim, tables.vocab_size) == (COMMIT, D, VOCAB)


def test_the_cache_records_commit_sizes_and_sha256(
    hub: FakeHub, blob: Blob, tmp_path: Path
) -> None:
    store = store_for(hub, tmp_path / "cache")
    store.tables()
    manifest = json.loads((store.root / COMMIT / "manifest.json").read_text())
    assert manifest["commit"] == COMMIT
    for name in ("wte.weight", "wpe.weight"):
        begin, end = blob.offsets[name]
        served = blob.path.read_bytes()[begin:end]
        assert manifest["tables"][name]["sha256"] == hashlib.sha256(served).hexdigest()
        assert manifest["tables"][name]["nbytes"] == len(served)
    assert (store.root / "refs" / "main").read_text() == COMMIT


def test_cached_tables_need_no_network(hub: FakeHub, blob: Blob, tmp_path: Path) -> None:
    store_for(hub, tmp_path / "cache").tables()
    offline = store_for(None, tmp_path / "cache", offline=True).tables()
    assert torch.equal(offline.pos_embeddings(3), torch.from_numpy(blob.arrays["wpe.weight"][:3]))


def test_positions_come_on_their_own(hub: FakeHub, blob: Blob, tmp_path: Path) -> None:
    store = store_for(hub, tmp_path / "cache")
    positions = store.positions()
    assert torch.equal(positions, torch.from_numpy(blob.arrays["wpe.weight"]))
    begin, end = blob.offsets["wpe.weight"]
    assert hub.cdn_bytes() == min(HEADER_PREFIX, blob.path.stat().st_size) + end - begin
    assert store.has(POSITIONS) and not store.has(TOKENS)


def test_no_network_and_no_cache_says_so_once(tmp_path: Path) -> None:
    store = store_for(None, tmp_path / "cache", offline=True)
    with pytest.raises(Gpt2Unavailable) as caught:
        store.tables()
    message = str(caught.value)
    assert "not in the cache" in message
    assert "python -m posviz --fetch-gpt2" in message
    assert "cannot be reached" in message


def test_without_download_a_missing_cache_is_not_fetched(hub: FakeHub, tmp_path: Path) -> None:
    with pytest.raises(Gpt2Unavailable, match="not in the cache"):
        store_for(hub, tmp_path / "cache").tables(download=False)
    assert hub.requests == []


def test_other_shapes_are_refused(tmp_path: Path) -> None:
    shapes = {**SHAPES, "wte.weight": (VOCAB + 1, D)}
    blob = write_safetensors(tmp_path / "other.safetensors", shapes, {})
    with serve(blob.path) as hub, pytest.raises(Gpt2Unavailable) as caught:
        store_for(hub, tmp_path / "cache").tables()
    assert "wte.weight is F32 [65, 8] in this file, GPT-2 124M's is F32 [64, 8]" in str(
        caught.value
    )


def test_other_dtypes_are_refused(tmp_path: Path) -> None:
    blob = write_safetensors(tmp_path / "f16.safetensors", SHAPES, {}, dtypes={"wpe.weight": "F16"})
    with serve(blob.path) as hub, pytest.raises(Gpt2Unavailable, match=r"wpe.weight is F16"):
        store_for(hub, tmp_path / "cache").positions()


def test_http_errors_are_named_and_nothing_is_cached(
    blob: Blob, tmp_path: Path, retry_waits: list[float]
) -> None:
    with serve(blob.path, cdn_status=503) as hub:
        store = store_for(hub, tmp_path / "cache")
        with pytest.raises(Gpt2Unavailable, match=r"could not be downloaded: .*HTTP 503"):
            store.tables()
    assert not store.has(POSITIONS)


def test_a_silent_server_leaves_no_half_file(blob: Blob, tmp_path: Path) -> None:
    with serve(blob.path) as hub:
        store = store_for(hub, tmp_path / "cache")
        store.positions()
        hub.silent_cdn = True
        with pytest.raises(Gpt2Unavailable, match=r"cannot be reached .*nothing for 0.75 s in all"):
            store_for(hub, tmp_path / "cache", **QUICK).tables()
    assert sorted(p.name for p in (store.root / COMMIT).iterdir()) == [
        "manifest.json",
        "wpe.weight.f32",
    ]


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        pytest.param(lambda data: data[:-4], "has 2,044 bytes, expected 2,048", id="cut"),
        pytest.param(lambda data: data + b"\0", "has 2,049 bytes", id="grown"),
        pytest.param(
            lambda data: bytes([data[0] ^ 0xFF]) + data[1:], "was altered: sha256", id="one-byte"
        ),
    ],
)
def test_an_altered_cache_file_is_refused(
    hub: FakeHub, tmp_path: Path, damage: object, words: str
) -> None:
    store = store_for(hub, tmp_path / "cache")
    store.tables()
    path = store.root / COMMIT / "wte.weight.f32"
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    with pytest.raises(Gpt2CacheError, match=words):
        store_for(None, tmp_path / "cache", offline=True).tables()
    with pytest.raises(Gpt2CacheError, match=words):
        store.tables()  # a store that had opened the file checks it again once it changed


def test_fetch_repairs_an_altered_cache(hub: FakeHub, blob: Blob, tmp_path: Path) -> None:
    store = store_for(hub, tmp_path / "cache")
    assert store.fetch() == COMMIT
    path = store.root / COMMIT / "wpe.weight.f32"
    path.write_bytes(bytes(len(path.read_bytes())))
    assert store.fetch() == COMMIT
    assert tensor_downloads(hub, blob, "wpe.weight") == 2
    assert tensor_downloads(hub, blob, "wte.weight") == 1  # intact: not downloaded again
    assert torch.equal(store.tables().wpe, torch.from_numpy(blob.arrays["wpe.weight"]))


def test_concurrent_sessions_download_once(hub: FakeHub, blob: Blob, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    # Two stores stand for two processes (they share only the folder's flock), each with
    # three sessions (threads sharing the store's lock).
    stores = [store_for(hub, cache), store_for(hub, cache)]
    start = threading.Barrier(6, timeout=30)
    results: list[object] = []

    def session(store: Gpt2Store) -> None:
        start.wait()
        try:
            results.append(store.tables().token_embeddings([1, 2, 3]))
        except Exception as error:  # collected and reported below
            results.append(error)

    threads = [threading.Thread(target=session, args=(s,)) for s in stores * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    want = torch.from_numpy(blob.arrays["wte.weight"][[1, 2, 3]])
    assert len(results) == 6
    assert all(isinstance(r, torch.Tensor) and torch.equal(r, want) for r in results), results
    assert tensor_downloads(hub, blob, "wte.weight") == 1
    assert tensor_downloads(hub, blob, "wpe.weight") == 1


class _Announcing(list[Logged]):
    """The stand-in's request log, which sets ``event`` at the first request it logs."""

    def __init__(self, event: threading.Event) -> None:
        super().__init__()
        self.event = event

    def append(self, logged: Logged) -> None:
        super().append(logged)
        self.event.set()


def test_sessions_that_wait_for_an_attempt_the_hub_stalls_get_its_answer(
    blob: Blob, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A class opening a lecture link while the Hub stalls: the sessions that asked while the
    first one's attempt was under way get its answer when it ends, without an attempt (and its
    silence) each. The budget's clock stands still: each request costs its timeout."""
    monkeypatch.setattr(posviz.gpt2.hub, "_clock", lambda: 0.0)
    answers: list[str] = []

    def session(store: Gpt2Store) -> None:
        try:
            store.tables()
        except Gpt2Unavailable as error:
            answers.append(str(error))

    with serve(blob.path, silent_cdn=True) as hub:
        store = store_for(hub, tmp_path / "cache", **QUICK)
        asked = threading.Event()
        hub.requests = _Announcing(asked)
        first = threading.Thread(target=session, args=(store,))
        first.start()
        assert asked.wait(timeout=30), "the first attempt asks the Hub (holding the lock)"
        others = [threading.Thread(target=session, args=(store,)) for _ in range(3)]
        for thread in [*others]:
            thread.start()
        for thread in [first, *others]:
            thread.join(timeout=60)
        requests = len(hub.on("cdn"))
    assert len(answers) == 4 and len(set(answers)) == 1, answers
    assert "nothing for 0.75 s in all (3 request(s)" in answers[0]
    assert requests == 3, "one attempt's requests: 0.75 s in all, 0.25 s each"
    # A session that asks after that attempt ended tries again.
    with serve(blob.path, silent_cdn=True) as hub:
        store.source = HubFile(endpoint=hub.endpoint, **QUICK)  # type: ignore[arg-type]
        with pytest.raises(Gpt2Unavailable, match="cannot be reached"):
            store.tables()
        assert len(hub.on("cdn")) == 3


def test_waiting_sessions_see_the_download_progress(hub: FakeHub, tmp_path: Path) -> None:
    store = store_for(hub, tmp_path / "cache")
    downloading, waiter_saw = threading.Event(), []
    proceed = threading.Event()

    def slow_progress(done: int, total: int) -> None:
        downloading.set()
        proceed.wait(timeout=30)  # hold the download until the waiter has seen progress

    def waiter_progress(done: int, total: int) -> None:
        waiter_saw.append((done, total))
        proceed.set()

    first = threading.Thread(target=lambda: store.tables(progress=slow_progress))
    first.start()
    assert downloading.wait(timeout=30)
    store.tables(progress=waiter_progress)
    first.join(timeout=30)
    assert waiter_saw and all(total in (VOCAB * D * 4, CONTEXT * D * 4) for _, total in waiter_saw)


def test_lookups_are_copies_and_checked(hub: FakeHub, tmp_path: Path) -> None:
    tables = store_for(hub, tmp_path / "cache").tables()
    rows = tables.token_embeddings([3])
    rows += 1.0
    assert not torch.equal(tables.token_embeddings([3]), rows)
    positions = tables.pos_embeddings(2)
    positions.zero_()
    assert tables.pos_embeddings(2).abs().sum() > 0
    with pytest.raises(ValueError, match=r"token ids must be in 0..63, got 64"):
        tables.token_embeddings([1, 64])
    with pytest.raises(ValueError, match=r"context_length must be from 1 to 16, got 17"):
        tables.pos_embeddings(17)


def test_a_revision_is_cached_under_its_own_name(hub: FakeHub, tmp_path: Path) -> None:
    store = store_for(hub, tmp_path / "cache", revision=COMMIT)
    store.positions()
    assert (store.root / "refs" / COMMIT).read_text() == COMMIT
    assert not store_for(None, tmp_path / "cache", offline=True).has(POSITIONS)  # "main"


def test_the_cache_folder_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("POSVIZ_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("POSVIZ_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "posviz"


def test_an_unwritable_cache_is_named(hub: FakeHub, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(Gpt2Unavailable, match=r"cannot write the cache .*POSVIZ_CACHE_DIR"):
        store_for(hub, blocker).tables()


def mapped_rss_kb(path: Path) -> int:
    """Resident kB of this process's mapping of ``path`` (from /proc/self/smaps)."""
    maps = Path("/proc/self/smaps").read_text()
    assert str(path) in maps, f"{path} is not memory-mapped"
    block = maps[maps.index(str(path)) :].split("\n")
    return next(int(line.split()[1]) for line in block if line.startswith("Rss:"))


@pytest.mark.slow
def test_gpt2_shapes_full_size_memory_mapped(gpt2_blob: Blob, tmp_path: Path) -> None:
    """GPT-2's 148 names and shapes (548 MB, sparse): only wte and wpe are downloaded, and the
    token table is mapped from disk; lookups leave (almost) nothing of it resident."""
    assert gpt2_blob.path.stat().st_size > 548_000_000
    with serve(gpt2_blob.path) as hub:
        store = Gpt2Store(
            cache_dir=tmp_path / "cache", source=HubFile(endpoint=hub.endpoint, timeout=30)
        )
        tables = store.tables()
    assert (store.token_table, store.position_table) == (WTE, WPE)
    token_ids = [50256, 0, 464, 50256, 31373]
    wte, wpe = gpt2_blob.arrays["wte.weight"], gpt2_blob.arrays["wpe.weight"]
    assert torch.equal(tables.token_embeddings(token_ids), torch.from_numpy(wte[token_ids]))
    assert torch.equal(tables.pos_embeddings(1024), torch.from_numpy(wpe))
    assert hub.cdn_bytes() == HEADER_PREFIX + WTE.nbytes + WPE.nbytes  # never the other 390 MB
    # A window of 1,024 distinct tokens spread over the whole table, in a scrambled order.
    spread = [(row * 7919) % 50257 for row in range(0, 50257, 49)][:1024]
    assert torch.equal(tables.token_embeddings(spread), torch.from_numpy(wte[spread]))
    wte_file = store.root / COMMIT / "wte.weight.f32"
    assert mapped_rss_kb(wte_file) < 1_000  # without unmapping: ~64 kB per row read
