"""posviz.tokenizer: the encoding is tiktoken's own ``gpt2``, built offline, checked.

The reference is tiktoken itself: ``tiktoken.get_encoding("gpt2")`` with its registry emptied
and ``TIKTOKEN_CACHE_DIR`` pointing at a temporary folder that holds copies of the vendored
files under the names tiktoken's cache uses (sha1 of the download URL). tiktoken's own loader
and sha256 check run; the network is blocked, so it cannot fetch anything else.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import socket
import tempfile
import threading
import types
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
import tiktoken
import tiktoken.load
import tiktoken.registry
import tiktoken_ext.openai_public
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import character_tokens

from posviz import tokenizer
from posviz.tokenizer import (
    ENCODER_JSON_SHA256,
    VOCAB_BPE_SHA256,
    TokenizerDataError,
    decode,
    encode,
    get_encoding,
    mergeable_ranks_from,
    read_checked,
    token_bytes,
    token_texts,
)

DATA = Path(tokenizer.__file__).resolve().parent / "data"
OPENAI_PUBLIC_SOURCE = Path(tiktoken_ext.openai_public.__file__).read_text(encoding="utf-8")
EOT = "<|endoftext|>"

# Known exact values (tiktoken's test_encoding.py and the book, sections 2.5 and 2.8).
BOOK_2_5_TEXT = "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace."
BOOK_2_5_IDS = [15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812,
                2114, 286, 617, 34680, 27271, 13]  # fmt: skip


def _gpt2_source() -> str:
    """The text of ``def gpt2():`` in tiktoken_ext/openai_public.py."""
    match = re.search(r"^def gpt2\(\):\n(?:[ \t]+.*\n|\n)+", OPENAI_PUBLIC_SOURCE, re.MULTILINE)
    if match is None:
        raise LookupError("def gpt2() not found in tiktoken_ext/openai_public.py")
    return match.group(0)


def _published(argument: str) -> str:
    """A keyword argument's string value in ``gpt2()`` as written in tiktoken's source."""
    match = re.search(rf'{argument}\s*=\s*"([^"]+)"', _gpt2_source())
    if match is None:
        raise LookupError(f"{argument} not found in gpt2()")
    return match.group(1)


class NetworkAttempt(AssertionError):
    """Raised by every patched network entry point."""


def _block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise NetworkAttempt(f"network access attempted: {args!r:.200}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(requests, "get", refuse)
    monkeypatch.setattr(requests.Session, "request", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file", refuse)  # tiktoken's downloader


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tiktoken.Encoding]:
    """``tiktoken.get_encoding("gpt2")`` built by tiktoken from a prepared offline cache."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    for name, argument in (("vocab.bpe", "vocab_bpe_file"), ("encoder.json", "encoder_json_file")):
        url = _published(argument)
        shutil.copyfile(DATA / name, cache / hashlib.sha1(url.encode()).hexdigest())
    before = sorted(p.name for p in cache.iterdir())
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})  # build anew, restore afterwards
        _block_network(monkeypatch)
        encoding = tiktoken.get_encoding("gpt2")
    assert sorted(p.name for p in cache.iterdir()) == before  # tiktoken found both, wrote none
    yield encoding


def test_reference_is_built_by_tiktokens_gpt2_loader(tmp_path: Path) -> None:
    """The offline cache trick goes through tiktoken's own hash check: a wrong file fails."""
    for name, argument in (("vocab.bpe", "vocab_bpe_file"), ("encoder.json", "encoder_json_file")):
        url = _published(argument)
        target = tmp_path / hashlib.sha1(url.encode()).hexdigest()
        target.write_bytes(
            DATA.joinpath(name).read_bytes() + (b"x" if name == "vocab.bpe" else b"")
        )
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
        _block_network(monkeypatch)
        # tiktoken drops the cached file whose hash is wrong and tries to download it.
        with pytest.raises(NetworkAttempt):
            tiktoken_ext.openai_public.gpt2()


# --- same encoding as tiktoken ------------------------------------------------------------


def test_mergeable_ranks_equal_tiktokens(reference: tiktoken.Encoding) -> None:
    ours = get_encoding()
    assert ours._mergeable_ranks == reference._mergeable_ranks
    assert len(ours._mergeable_ranks) == 50256


def test_pattern_special_tokens_and_vocab_size_equal_tiktokens(
    reference: tiktoken.Encoding,
) -> None:
    ours = get_encoding()
    assert ours._pat_str == reference._pat_str
    assert ours._special_tokens == reference._special_tokens == {EOT: 50256}
    assert ours.n_vocab == reference.n_vocab == 50257
    assert ours.eot_token == reference.eot_token == 50256
    assert ours.name == reference.name == "gpt2"


def test_every_token_has_tiktokens_bytes(reference: tiktoken.Encoding) -> None:
    every_id = list(range(50257))
    assert token_bytes(every_id) == reference.decode_tokens_bytes(every_id)


TEXTS = [
    pytest.param("hello world", id="hello-world"),
    pytest.param("", id="empty"),
    pytest.param(BOOK_2_5_TEXT, id="book-2.5"),
    pytest.param("Every effort moves you", id="every-effort"),
    pytest.param("I HAD always thought Jack Gisburn rather a cheap genius--though a good fellow "
                 "enough--so it was no great surprise to me to hear that,", id="verdict"),
    pytest.param("😀🦜 👨‍👩‍👧‍👦 🇩🇪 👍🏽", id="emoji-zwj-flags-skin-tone"),
    pytest.param("大型语言模型 を作る 한국어 텍스트", id="cjk"),
    pytest.param("   \n\n\t\t  x    y\r\n\u00a0\u3000 end   ", id="whitespace-runs"),
    pytest.param("trailing spaces   ", id="trailing-spaces"),
    pytest.param("\n\n\n", id="newlines-only"),
    pytest.param("it's they're we've I'm you'll he'd IT'S", id="contractions"),
    pytest.param("3.14159 1,000,000 2024-01-01 0x1F", id="numbers"),
    pytest.param(f"{EOT}", id="eot-alone"),
    pytest.param(f"{EOT}{EOT} a{EOT}b", id="eot-adjacent"),
    pytest.param("<|endoftext| <|endoftext|<|endoftext|>", id="eot-partial"),
    pytest.param("<script>alert('x')</script> **b** [x](javascript:alert(1))", id="markup"),
    pytest.param("Ünïcödé ñ ß ﬁ Ω ∑ ←→ ½", id="accents-symbols"),
    pytest.param("a\x00b\x01\x02\x1b[31m\x7f\x85", id="control-chars"),
    pytest.param("\u202eevil\u202c \u200b\u200d\ufeff", id="bidi-zero-width"),
    pytest.param("x" * 3000, id="long-run"),
]  # fmt: skip


@pytest.mark.parametrize("text", TEXTS)
def test_encode_equals_tiktoken(reference: tiktoken.Encoding, text: str) -> None:
    expected = reference.encode(text, allowed_special={EOT})
    assert encode(text) == expected
    assert token_bytes(expected) == [reference.decode_single_token_bytes(t) for t in expected]
    assert decode(expected) == reference.decode(expected, errors="replace") == text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(), st.just(EOT), st.just(" "), st.just("\n"))).map("".join))
def test_encode_equals_tiktoken_property(reference: tiktoken.Encoding, text: str) -> None:
    token_ids = encode(text)
    assert token_ids == reference.encode(text, allowed_special={EOT})
    assert decode(token_ids) == text


# --- known exact values -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "token_ids"),
    [
        pytest.param("hello world", [31373, 995], id="tiktoken-hello-world"),
        pytest.param(BOOK_2_5_TEXT, BOOK_2_5_IDS, id="book-2.5-sentence"),
        pytest.param("I HAD always", [40, 367, 2885, 1464], id="book-2.8-first-batch"),
        pytest.param(EOT, [50256], id="endoftext"),
    ],
)
def test_known_token_ids(text: str, token_ids: list[int]) -> None:
    assert encode(text) == token_ids


def test_sha256_constants_are_the_ones_tiktoken_publishes() -> None:
    assert _published("vocab_bpe_hash") == VOCAB_BPE_SHA256
    assert _published("encoder_json_hash") == ENCODER_JSON_SHA256


def test_vendored_files_match_published_hashes() -> None:
    """Computed here, not by the code under test."""
    vocab = DATA.joinpath("vocab.bpe").read_bytes()
    encoder = DATA.joinpath("encoder.json").read_bytes()
    assert hashlib.sha256(vocab).hexdigest() == _published("vocab_bpe_hash")
    assert hashlib.sha256(encoder).hexdigest() == _published("encoder_json_hash")
    assert read_checked("vocab.bpe") == vocab
    assert read_checked("encoder.json") == encoder


# --- offline, no cache ------------------------------------------------------------------


@pytest.fixture
def fresh_encoding() -> Iterator[None]:
    """Make posviz build its encoding again inside the test; leave a clean cache after."""
    get_encoding.cache_clear()
    yield
    get_encoding.cache_clear()


def test_builds_offline_without_writing_a_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_encoding: None
) -> None:
    cache = tmp_path / "tiktoken-cache"
    temp = tmp_path / "tempdir"
    cache.mkdir()
    temp.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(cache))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    _block_network(monkeypatch)

    def no_tiktoken_loader(*args: object, **kwargs: object) -> None:
        raise AssertionError("posviz must not go through tiktoken's cached loader/registry")

    monkeypatch.setattr(tiktoken.load, "read_file_cached", no_tiktoken_loader)
    monkeypatch.setattr(tiktoken, "get_encoding", no_tiktoken_loader)
    monkeypatch.setattr(tiktoken.registry, "get_encoding", no_tiktoken_loader)

    encoding = get_encoding()

    assert encoding.encode("hello world") == [31373, 995]
    assert encoding.n_vocab == 50257
    assert list(cache.iterdir()) == []
    assert list(temp.iterdir()) == []


def test_encoding_is_built_once(fresh_encoding: None) -> None:
    assert get_encoding() is get_encoding()


def test_concurrent_first_calls_build_the_encoding_once(
    monkeypatch: pytest.MonkeyPatch, fresh_encoding: None
) -> None:
    """A class opening the link together: 8 sessions ask before the first build finishes.

    Each build waits (at most 2 s) until all 8 callers are inside a build; a cache that lets
    concurrent first callers in builds 8 times, one that makes them wait builds once.
    """
    callers, builds, results = 8, [], []
    inside = threading.Condition()
    real_build = tokenizer._build_encoding

    def counting_build() -> tiktoken.Encoding:
        with inside:
            builds.append(threading.get_ident())
            inside.notify_all()
            inside.wait_for(lambda: len(builds) == callers, timeout=2)
        return real_build()

    monkeypatch.setattr(tokenizer, "_build_encoding", counting_build)
    start = threading.Barrier(callers)

    def session() -> None:
        start.wait(timeout=30)
        results.append(get_encoding())

    threads = [threading.Thread(target=session) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(builds) == 1
    assert len(results) == callers and all(r is results[0] for r in results)
    assert results[0].encode("hello world") == [31373, 995]


# --- broken data files ------------------------------------------------------------------


@pytest.fixture
def data_copy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_encoding: None) -> Path:
    """A copy of posviz/data that posviz.tokenizer reads instead of the real one."""
    package = tmp_path / "posviz"
    shutil.copytree(DATA, package / "data")

    def files(name: str) -> Path:
        assert name == "posviz"
        return package

    monkeypatch.setattr(tokenizer, "resources", types.SimpleNamespace(files=files))
    return package / "data"


def _flip_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


CORRUPTIONS: list[tuple[str, Callable[[Path], None]]] = [
    ("one-byte-flipped", _flip_one_byte),
    ("truncated", lambda path: path.write_bytes(path.read_bytes()[:-100])),
    ("empty", lambda path: path.write_bytes(b"")),
    ("extra-line", lambda path: path.write_bytes(path.read_bytes() + b"a b\n")),
]


@pytest.mark.parametrize("name", ["vocab.bpe", "encoder.json"])
@pytest.mark.parametrize("corrupt", [pytest.param(func, id=label) for label, func in CORRUPTIONS])
def test_corrupted_file_raises_clear_error(
    data_copy: Path, name: str, corrupt: Callable[[Path], None]
) -> None:
    corrupt(data_copy / name)
    expected_hash = _published("vocab_bpe_hash" if name == "vocab.bpe" else "encoder_json_hash")
    actual_hash = hashlib.sha256((data_copy / name).read_bytes()).hexdigest()
    with pytest.raises(TokenizerDataError) as error:
        get_encoding()
    message = str(error.value)
    assert f"posviz/data/{name}" in message
    assert "corrupted" in message
    assert expected_hash in message and actual_hash in message
    assert "git checkout -- posviz/data" in message


@pytest.mark.parametrize("name", ["vocab.bpe", "encoder.json"])
def test_missing_file_raises_clear_error(data_copy: Path, name: str) -> None:
    (data_copy / name).unlink()
    with pytest.raises(TokenizerDataError, match=rf"posviz/data/{re.escape(name)} is missing"):
        get_encoding()
    with pytest.raises(TokenizerDataError, match="git checkout -- posviz/data"):
        read_checked(name)


def test_data_copy_fixture_reads_the_copy(data_copy: Path) -> None:
    """Guard for the tests above: unchanged copies build the same encoding."""
    assert get_encoding().encode("hello world") == [31373, 995]


def test_files_that_disagree_are_rejected() -> None:
    vocab = DATA.joinpath("vocab.bpe").read_bytes()
    encoder = DATA.joinpath("encoder.json").read_bytes()
    ranks = json.loads(encoder)
    ranks["!"], ranks['"'] = ranks['"'], ranks["!"]  # two tokens trade ranks
    swapped = json.dumps(ranks).encode()
    with pytest.raises(TokenizerDataError, match="disagree"):
        mergeable_ranks_from(vocab, swapped)


def test_real_data_files_untouched_by_tests() -> None:
    assert hashlib.sha256((DATA / "vocab.bpe").read_bytes()).hexdigest() == VOCAB_BPE_SHA256
    assert hashlib.sha256((DATA / "encoder.json").read_bytes()).hexdigest() == ENCODER_JSON_SHA256


# --- any Python string encodes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "as_tiktoken_sees_it"),
    [
        pytest.param("a\ud800b", "a\ufffdb", id="lone-high-surrogate"),
        pytest.param("\udfff", "\ufffd", id="lone-low-surrogate"),
        pytest.param("x\udc80\ud83d y", "x\ufffd\ufffd y", id="reversed-pair"),
        pytest.param("\x00", "\x00", id="nul"),
        pytest.param("a\x00\x00b", "a\x00\x00b", id="nuls"),
        pytest.param("".join(map(chr, range(32))) + "\x7f", None, id="all-c0-controls-and-del"),
        pytest.param("\x80\x9f\u2028\u2029", None, id="c1-and-separators"),
    ],
)
def test_odd_strings_encode_without_error(
    reference: tiktoken.Encoding, text: str, as_tiktoken_sees_it: str | None
) -> None:
    expected_text = text if as_tiktoken_sees_it is None else as_tiktoken_sees_it
    token_ids = encode(text)
    assert token_ids == reference.encode(expected_text, allowed_special={EOT})
    assert all(0 <= t < 50257 for t in token_ids)
    assert decode(token_ids) == expected_text


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, categories=["Cs", "Cc", "Co", "Cn"])))
def test_surrogates_and_controls_property(text: str) -> None:
    token_ids = encode(text)
    expected = re.sub("[\ud800-\udfff]", "\ufffd", text)
    assert decode(token_ids) == expected


# --- token_texts: the one way a token is written, read in its whole text ---------------------

ISSUE_42_TEXTS = ("I love pizza 🍕🍕 and pizza loves me 😀", "東京は日本の首都です。東京")


@pytest.mark.parametrize("text", ISSUE_42_TEXTS)
def test_token_texts_of_every_span_read_as_in_the_whole_text(text: str) -> None:
    """Every window a text can be cut into: its tokens named as in the whole text
    (tests/reference.py: tiktoken and Python's decoder), a character cut by the window's
    edge included ("🍕 (3 of 3)", not "\\x95")."""
    ids, names = encode(text), character_tokens(text)
    assert token_texts(ids) == tuple(names)
    for start in range(len(ids)):
        for stop in range(start, len(ids) + 1):
            assert token_texts(ids, range(start, stop)) == tuple(names[start:stop])


def test_a_window_that_starts_inside_a_character_names_it() -> None:
    ids = encode("東京")
    assert token_texts(ids, range(1, 3)) == ("東 (2 of 2)", "京 (1 of 2)")
    assert token_texts(ids[1:3]) == ("\\xb1", "\\xe4\\xba")  # read alone: loose bytes


def test_token_texts_asks_for_a_contiguous_span() -> None:
    with pytest.raises(ValueError, match="step 1"):
        token_texts(encode("a b c"), range(0, 3, 2))


@settings(max_examples=120, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab 東京🍕é\n。"), min_size=1, max_size=24),
    st.data(),
)
def test_token_texts_of_a_span_is_the_whole_texts_slice(text: str, data: st.DataObject) -> None:
    ids, names = encode(text), character_tokens(text)
    start = data.draw(st.integers(0, len(ids)), label="start")
    stop = data.draw(st.integers(start, len(ids)), label="stop")
    assert token_texts(ids, range(start, stop)) == tuple(names[start:stop])
