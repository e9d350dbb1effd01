"""The "Show the code" script: safe to embed any text, and run on its own it gives exactly
posviz's numbers for every scheme.

The scripts run in one fresh interpreter (``sys.executable``) with tiktoken's cache pointed at
a temporary folder pre-filled with posviz's vendored GPT-2 files under the names tiktoken
gives its downloads, and with proxies pointing nowhere, so no test touches the network.
"""

from __future__ import annotations

import ast
import inspect
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch
from reference import BOOK_2_8_INPUTS, book_window
from reproduce import NAMES, run_scripts, run_scripts_saved
from shape_views import distance_of, geometry_of

from devtools.fake_hub import COMMIT, Blob, FakeHub
from posviz.attention import book_attention_weights
from posviz.batching import make_batch
from posviz.codegen import BOOK_CH02_URL, reproduction_script, text_literal
from posviz.compare import DEFAULT_COMPARE_TEXT, DEFAULT_TEXT, compare_order
from posviz.config import SCHEMES, Settings, SettingsError, for_weights, with_options
from posviz.embeddings import SeededEmbeddings
from posviz.geometry import principal_components
from posviz.gpt2.store import Gpt2Store
from posviz.pipeline import WindowEmbeddings
from posviz.presets import PRESETS, VERDICT_OPENING
from posviz.scores import build_attention
from posviz.tokenizer import encode
from posviz.training.data import GPTDatasetV1
from posviz.view import build_view

HOSTILE_TEXTS = [
    pytest.param("He said \"hi\" and 'bye'", id="quotes"),
    pytest.param('"""; import os; os.system("echo pwned")  #', id="triple-double-breakout"),
    pytest.param("'''; import os\n'''", id="triple-single-breakout"),
    pytest.param("C:\\new\\table \\ end\\", id="backslashes"),
    pytest.param("line one\nline two\r\nthree\rfour\x0b\x0c\x1c\u2028\u2029five", id="newlines"),
    pytest.param("nul\x00byte and bell\x07", id="control"),
    pytest.param("lone \ud800 and \udfff surrogates", id="lone-surrogates"),
    pytest.param("\u202eevil\u202c bidi \u200b zero width", id="bidi"),
    pytest.param("emoji 🙂 CJK 漢字 <script>alert(1)</script>", id="unicode-html"),
    pytest.param("{seed} {{braces}} %s %(x)d", id="format-syntax"),
    pytest.param("x" * 200 + "\n" + "y" * 61, id="long-pieces"),
]


def _text_assignment(script: str) -> ast.expr:
    """The value assigned to ``text`` in ``script`` (which must parse)."""
    tree = ast.parse(script)
    for node in tree.body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["text"]:
            return node.value
    raise AssertionError("the script assigns no text")


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_text_cannot_break_out_of_its_literal(text: str) -> None:
    script = reproduction_script(Settings(text=text, context_length=4))
    value = _text_assignment(script)
    # Only string constants (implicitly concatenated, so one Constant) may make up the text.
    assert isinstance(value, ast.Constant)
    expected = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)
    assert value.value == expected
    assert encode(value.value) == encode(text)
    # The rest of the script is the same whatever the text: nothing leaked out of the literal.
    # (a plain text that takes the same branch: the book's data loader, or the sliding window)
    book_loader = make_batch(encode(text), context_length=4).same_as_book
    plain_text = "one two three four five six" if book_loader else "plain"
    assert make_batch(encode(plain_text), context_length=4).same_as_book is book_loader
    plain = reproduction_script(Settings(text=plain_text, context_length=4))
    tree, plain_tree = ast.parse(script), ast.parse(plain)
    assert len(tree.body) == len(plain_tree.body)
    assert [ast.dump(n) for n in tree.body if not _assigns_text(n)] == [
        ast.dump(n) for n in plain_tree.body if not _assigns_text(n)
    ]
    # Invisible characters are written as escapes, never raw (no Trojan Source).
    assert not any(ch in script for ch in "\x00\u202e\u200b\u2028\ud800")


def _assigns_text(node: ast.stmt) -> bool:
    """``text = ...`` (and ``batch_size = B``, which depends on the text's length)."""
    return isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) in ("text", "batch_size")


def test_text_literal_pieces_join_to_the_text() -> None:
    text = "first line\n" + "abc " * 40 + "\nlast"
    literal = text_literal(text)
    assert literal.startswith("(\n")
    assert ast.literal_eval(literal) == text
    assert all(len(line) < 90 for line in literal.splitlines())
    assert text_literal("short") == "'short'"
    assert ast.literal_eval(text_literal("")) == ""


def test_script_uses_the_books_names_and_only_torch_and_tiktoken() -> None:
    script = reproduction_script(
        Settings(text="Every effort moves you", context_length=4, emb_dim=256, seed=7)
    )
    tree = ast.parse(script)
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    imported |= {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) if node.module
    }
    packages = {name.split(".")[0] for name in imported} - set(sys.stdlib_module_names)
    assert packages == {"torch", "tiktoken"}  # and the standard library
    assigned = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    book_names = {"token_ids", "context_length", "emb_dim", "token_embedding_layer"}
    book_names |= {"pos_embedding_layer", "token_embeddings", "pos_embeddings", "input_embeddings"}
    assert book_names <= assigned
    assert 'tiktoken.get_encoding("gpt2")' in script
    assert 'allowed_special={"<|endoftext|>"}' in script
    assert "torch.manual_seed(seed)" in script
    assert "seed = 7\n" in script
    assert "\nemb_dim = 256  # d, the book's output_dim\n" in script
    # token table first, positional table second, as in the book
    assert script.index("torch.nn.Embedding(50257, emb_dim)") < script.index(
        "torch.nn.Embedding(context_length, emb_dim)"
    )


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        pytest.param(Settings(text=""), "no tokens", id="empty"),
        pytest.param(Settings(text="a b c", window=1), "window must be from 0 to 0", id="window"),
        pytest.param(Settings(text="a", emb_dim=1), "emb_dim must be from 2", id="emb-dim"),
    ],
)
def test_settings_posviz_would_not_show_raise(settings: Settings, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        reproduction_script(settings)


# Settings whose scripts run in the fresh interpreter: every scheme, stride != T, window > 0,
# short text (n < T), odd emb_dim, <|endoftext|> and a lone surrogate.
RUN_CASES: list[Settings] = [
    Settings(text=VERDICT_OPENING, context_length=4, emb_dim=256, seed=123, stride=4, window=3),
    Settings(text=VERDICT_OPENING, context_length=5, emb_dim=7, seed=9, stride=3, window=2),
    Settings(text="Hello, do you like tea? <|endoftext|> In the sunlit", context_length=6),
    Settings(text="A rose is a rose\n\ud800 is a rose.", context_length=32, emb_dim=33, seed=0),
    Settings(text="Every effort moves you", context_length=2, emb_dim=2, seed=2**32 - 1, window=1),
    Settings(text=VERDICT_OPENING, context_length=8, emb_dim=9, stride=11, window=1, seed=5),
]
ALL_CASES = [
    Settings(**{**vars(case), "scheme": scheme})  # type: ignore[arg-type]
    for case in RUN_CASES
    for scheme in SCHEMES
]


def _posviz_window(settings: Settings) -> WindowEmbeddings:
    """What the app computes: posviz's one path from settings to the view."""
    window = build_view(settings, strict=True).embeddings
    assert window is not None
    return window


@pytest.fixture(scope="module")
def script_results(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, torch.Tensor]]:
    """Run every generated script in ONE fresh interpreter, offline; return its tensors."""
    scripts = [reproduction_script(settings) for settings in ALL_CASES]
    tensors, stdout = run_scripts(scripts, tmp_path_factory.mktemp("codegen"))
    assert stdout.count("input_embeddings: torch.Size([") == len(ALL_CASES)
    return [dict(zip(NAMES, three, strict=True)) for three in tensors]


@pytest.mark.slow
@pytest.mark.parametrize(
    "index",
    range(len(ALL_CASES)),
    ids=[
        f"{c.scheme}-T{c.context_length}-d{c.emb_dim}-s{c.effective_stride}-w{c.window}"
        for c in ALL_CASES
    ],
)
def test_script_reproduces_posviz_bit_for_bit(
    index: int, script_results: list[dict[str, torch.Tensor]]
) -> None:
    settings = ALL_CASES[index]
    ours = _posviz_window(settings)
    theirs = script_results[index]
    book = book_window(
        settings.scheme,
        seed=settings.seed,
        emb_dim=settings.emb_dim,
        context_length=settings.context_length,
        token_ids=ours.token_ids,
    )
    n = len(ours.token_ids)
    for name, expected in zip(NAMES, book, strict=True):
        tensor = theirs[name]
        assert tensor.shape == (n, settings.emb_dim), name
        assert tensor.dtype == torch.float32, name
        assert torch.equal(tensor, getattr(ours, name)), name
        assert torch.equal(tensor, expected), name  # and both are the book's numbers


# --- the batch, as section 2.8 builds it --------------------------------------------------------

BOOK_PRESET = next(preset for name, preset in PRESETS.items() if name.startswith("Book §2.8"))


def test_book_example_script_uses_the_books_data_loader() -> None:
    script = reproduction_script(BOOK_PRESET)
    assert inspect.getsource(GPTDatasetV1) in script  # the class posviz trains with
    assert "class GPTDatasetV1(Dataset[tuple[torch.Tensor, torch.Tensor]]):" in script
    assert 'token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})' in script
    assert "for i in range(0, len(token_ids) - max_length, stride):" in script
    assert "batch_size = 8  # B" in script
    assert "DataLoader(\n    dataset, batch_size=batch_size, shuffle=False" in script
    assert BOOK_CH02_URL in script
    # the positional table is made before the DataLoader draws its random number
    assert script.index("pos_embedding_layer = torch.nn.Embedding(") < script.index("iter(")


@pytest.mark.parametrize(
    ("settings", "book_windows"),
    [
        pytest.param(Settings(text="Every effort moves you", context_length=2), 1, id="no-target"),
        pytest.param(Settings(text="Every effort", context_length=4), 0, id="short"),
    ],
)
def test_script_says_why_it_does_not_use_the_books_loader(
    settings: Settings, book_windows: int
) -> None:
    script = reproduction_script(settings)
    assert "class GPTDatasetV1(" not in script
    assert f"GPTDatasetV1 would give {book_windows} window(s) here" in script


@pytest.mark.slow
def test_book_example_script_prints_the_books_shapes(tmp_path: Path) -> None:
    """Run in a fresh interpreter: the shapes and token ids section 2.8 prints, and every
    window of the batch equals posviz's window (the page shows one at a time)."""
    cases = [BOOK_PRESET, *[Settings(**{**vars(BOOK_PRESET), "scheme": s}) for s in SCHEMES[1:]]]
    saved, stdout = run_scripts_saved([reproduction_script(c) for c in cases], tmp_path)
    assert stdout.count("inputs: torch.Size([8, 4])\n") == len(cases)
    assert stdout.count("token_embeddings: torch.Size([8, 4, 256])\n") == len(cases)
    assert stdout.count("pos_embeddings: torch.Size([4, 256])\n") == len(cases)
    assert stdout.count("input_embeddings: torch.Size([8, 4, 256])\n") == len(cases)
    for settings, entry in zip(cases, saved, strict=True):
        assert entry["inputs"].tolist() == BOOK_2_8_INPUTS
        token_batch, pos, input_batch = entry["batch"]
        for window in range(8):
            ours = _posviz_window(Settings(**{**vars(settings), "window": window}))
            assert torch.equal(token_batch[window], ours.token_embeddings), window
            assert torch.equal(pos, ours.pos_embeddings), window
            assert torch.equal(input_batch[window], ours.input_embeddings), window


# --- compare mode -------------------------------------------------------------------------------

COMPARE_CASES = [
    Settings(
        text=DEFAULT_TEXT,
        compare_text=DEFAULT_COMPARE_TEXT,
        context_length=8,
        emb_dim=emb_dim,
        scheme=scheme,
        causal=causal,
    )
    for scheme in SCHEMES
    for causal, emb_dim in ((False, 16), (True, 7))
]


@pytest.mark.slow
def test_compare_script_reproduces_the_comparison_bit_for_bit(tmp_path: Path) -> None:
    saved, stdout = run_scripts_saved([reproduction_script(c) for c in COMPARE_CASES], tmp_path)
    lines = [line for line in stdout.splitlines() if line.startswith("cosine of the mean")]
    assert len(lines) == 2 * len(COMPARE_CASES)
    for index, (settings, entry) in enumerate(zip(COMPARE_CASES, saved, strict=True)):
        tables = SeededEmbeddings.create(seed=settings.seed, emb_dim=settings.emb_dim)
        ours = compare_order(
            tables,
            encode(settings.text),
            encode(settings.compare_text),
            context_length=settings.context_length,
            scheme=settings.scheme,
            weights=book_attention_weights(d_in=settings.emb_dim, d_out=settings.emb_dim),
            causal=settings.causal,
        )
        assert ours.without_positions is not None and ours.with_positions is not None
        assert torch.equal(entry["context_first"], ours.without_positions.context_a)
        assert torch.equal(entry["context_second"], ours.without_positions.context_b)
        assert torch.equal(entry["positioned_first"], ours.with_positions.context_a)
        assert torch.equal(entry["positioned_second"], ours.with_positions.context_b)
        no_positions, positions = lines[2 * index], lines[2 * index + 1]
        assert no_positions.endswith(f"no positions {ours.without_positions.mean_cosine:.6f}")
        assert positions.endswith(f"with positions {ours.with_positions.mean_cosine:.6f}")


def test_compare_script_for_texts_that_are_not_a_reordering_says_so() -> None:
    script = reproduction_script(Settings(text="The dog", compare_text="dog The"))
    assert "not the window's tokens in another order" in script
    assert "SelfAttention_v2" not in script
    assert "SelfAttention_v2" not in reproduction_script(Settings(text="The dog"))


# --- weights=gpt2: the script reads the same tensors from the (loopback) Hub ---------------


def test_gpt2_script_reads_the_same_tensors_bit_for_bit(
    gpt2_hub: FakeHub, gpt2_blob: Blob, tmp_path: Path
) -> None:
    """The Book §2.8 batch with GPT-2's tables (made-up ones, served from 127.0.0.1): the
    script run in a fresh interpreter gives the batch and the window posviz shows."""
    settings = for_weights(
        replace(PRESETS["Book §2.8: The Verdict, [8, 4, 256]"], window=1), "gpt2"
    )
    tables = Gpt2Store().tables()
    view = build_view(settings, tables=lambda s: tables)
    assert view.embeddings is not None
    gpt2_hub.requests.clear()
    script = reproduction_script(settings, gpt2_revision=tables.commit)
    (saved,), stdout = run_scripts_saved([script], tmp_path, no_proxy="127.0.0.1")
    shown = view.embeddings
    want = [shown.token_embeddings, shown.pos_embeddings, shown.input_embeddings]
    for name, got, expected in zip(NAMES, saved["window"], want, strict=True):
        assert torch.equal(got, expected), name
    # Independently of posviz: the rows of the served arrays.
    wte, wpe = gpt2_blob.arrays["wte.weight"], gpt2_blob.arrays["wpe.weight"]
    inputs = saved["inputs"]
    assert inputs.shape == (8, 4)
    assert torch.equal(saved["batch"][0], torch.from_numpy(wte[inputs.numpy()]))
    assert torch.equal(saved["batch"][1], torch.from_numpy(wpe[:4]))
    assert "token_embeddings: torch.Size([8, 4, 768])" in stdout
    # Pinned to the commit, and never the other 390 MB of the model.
    assert all(f"/resolve/{COMMIT}/" in r.path for r in gpt2_hub.on("hub"))
    header = gpt2_blob.offsets["h.0.attn.bias"][0]  # the first tensor starts after the header
    assert gpt2_hub.cdn_bytes() == header + (1024 + 50257) * 768 * 4


# --- the Geometry and Distance tabs: the script recomputes their numbers ----------------------

SHAPE_CASES = [
    Settings(text=VERDICT_OPENING, context_length=12, emb_dim=7, seed=9, scheme=scheme)
    for scheme in SCHEMES
] + [Settings(text="A rose is a rose is a rose.", context_length=5, emb_dim=16, seed=2)]


def _assert_geometry(theirs: dict[str, Any], settings: Settings) -> None:
    ours = geometry_of(settings)
    shown = {ours.main.table.kind: ours.main, ours.contrast.table.kind: ours.contrast}
    if settings.scheme == "none":
        shown.pop("none")  # all zeros: the script has nothing to project either
    assert set(theirs) == set(shown)
    for name, shape in shown.items():
        script = theirs[name]
        largest = float(script["singular_values"][0])
        assert torch.allclose(shape.singular_values, script["singular_values"], atol=1e-6 * largest)
        kept = shape.components
        assert torch.allclose(
            shape.points[:, :kept], script["points"][:, :kept], atol=1e-6 * largest
        )
        assert torch.allclose(shape.row_norms, script["row_norms"], atol=1e-12)
        assert shape.directions_90 == script["directions_90"]


def _assert_distance(
    theirs: dict[str, Any], past_the_end: str, settings: Settings, beyond: int
) -> None:
    ours = distance_of(settings, beyond=beyond)
    assert list(theirs) == [c.kind for c in ours.curves]
    for curve in ours.curves:
        mean, smallest, largest = theirs[curve.kind]
        assert torch.allclose(curve.mean, mean, atol=2e-6), curve.kind
        assert torch.allclose(curve.low, smallest, atol=2e-6), curve.kind
        assert torch.allclose(curve.high, largest, atol=2e-6), curve.kind
    assert past_the_end == ours.ends[0].error == "IndexError: index out of range in self"


@pytest.mark.slow
def test_geometry_and_distance_scripts_reproduce_posviz(tmp_path: Path) -> None:
    scripts = [reproduction_script(s, view="geometry") for s in SHAPE_CASES]
    scripts += [reproduction_script(s, view="distance", beyond=3) for s in SHAPE_CASES]
    saved, stdout = run_scripts_saved(scripts, tmp_path)
    assert stdout.count("geometry: learned: 90 % of the variance in") == len(SHAPE_CASES)
    assert stdout.count("of the learned table: IndexError: index out of range in self") == len(
        SHAPE_CASES
    )
    for settings, entry in zip(SHAPE_CASES, saved[: len(SHAPE_CASES)], strict=True):
        assert "distance" not in entry
        _assert_geometry(entry["geometry"], settings)
    for settings, entry in zip(SHAPE_CASES, saved[len(SHAPE_CASES) :], strict=True):
        assert "geometry" not in entry
        _assert_distance(entry["distance"], entry["past_the_end"], settings, beyond=3)


def test_the_embeddings_script_has_no_view_part() -> None:
    script = reproduction_script(Settings())
    assert "principal_components" not in script and "cosine_by_distance" not in script
    geometry = reproduction_script(Settings(), view="geometry")
    assert inspect.getsource(principal_components) in geometry
    distance = reproduction_script(Settings(context_length=20), view="distance")
    assert "beyond = 5  #" in distance  # the tab's default: a quarter of T


@pytest.mark.slow
def test_gpt2_geometry_and_distance_scripts_read_the_same_tensors(
    gpt2_hub: FakeHub, gpt2_blob: Blob, tmp_path: Path
) -> None:
    settings = for_weights(
        Settings(text="A rose is a rose is a rose.", context_length=1020, seed=3), "gpt2"
    )
    tables = Gpt2Store().tables()
    scripts = [
        reproduction_script(settings, gpt2_revision=tables.commit, view="geometry"),
        reproduction_script(settings, gpt2_revision=tables.commit, view="distance", beyond=8),
    ]
    (geometry, distance), stdout = run_scripts_saved(scripts, tmp_path, no_proxy="127.0.0.1")
    ours = geometry_of(settings, tables=lambda _: tables)
    assert set(geometry["geometry"]) == {"gpt2", "learned"}
    for name, shape in (("gpt2", ours.main), ("learned", ours.contrast)):
        script = geometry["geometry"][name]
        largest = float(script["singular_values"][0])
        assert torch.allclose(shape.singular_values, script["singular_values"], atol=1e-6 * largest)
        assert torch.allclose(shape.points, script["points"], atol=1e-6 * largest)
    by = {(c.positions, c.tokens): c.max_abs for c in ours.cosines}
    for name, label in (("gpt2", ours.main.table.label), ("learned", ours.contrast.table.label)):
        window, sample = geometry["cosines"][name]
        assert window == pytest.approx(by[(label, "window")], abs=1e-6)
        assert sample == pytest.approx(by[(label, "sample")], abs=1e-6)
    curves = distance_of(settings, beyond=8, tables=lambda _: tables).curves
    assert list(distance["distance"]) == ["learned", "sinusoidal", "rope", "gpt2"]
    mean, smallest, largest = distance["distance"]["gpt2"]
    assert len(mean) == 1024  # T + 8 would pass GPT-2's 1,024 positions
    assert torch.allclose(curves[3].mean, mean, atol=2e-6)
    assert torch.allclose(curves[3].low, smallest, atol=2e-6)
    assert distance["gpt2_past_the_end"] == "IndexError: index out of range in self"
    assert "position 1024 of GPT-2's wpe: IndexError" in stdout


@pytest.mark.slow
def test_scripts_use_the_schemes_options(tmp_path: Path) -> None:
    """RoPE with base 500,000: the script's matrices, Distance curve and attention scores are
    posviz's for that base, not for the default one."""
    settings = with_options(
        Settings(text=VERDICT_OPENING, scheme="rope", context_length=8, emb_dim=16, heads=2),
        rope_base=500_000.0,
    )
    assert "options = {'rope_base': 500000.0, 'rope_scaling': 'default'" in reproduction_script(
        settings
    )
    scripts = [
        reproduction_script(settings),
        reproduction_script(settings, view="distance", beyond=2),
        reproduction_script(settings, view="attention"),
    ]
    (embedded, distance, attention), _ = run_scripts_saved(scripts, tmp_path)
    ours = _posviz_window(settings)
    for name, tensor in zip(NAMES, embedded["window"], strict=True):
        assert torch.equal(tensor, getattr(ours, name)), name
    default = _posviz_window(replace(settings, scheme_options=()))
    assert not torch.equal(embedded["window"][2], default.input_embeddings)
    rope = distance_of(settings, beyond=2).curves[2]
    assert torch.allclose(distance["distance"]["rope"][0], rope.mean, atol=2e-6)
    shown = build_attention(build_view(settings)).shown
    keep = ~shown.scores.isnan()
    torch.testing.assert_close(attention["attn_scores"][keep], shown.scores[keep])


def test_the_code_tab_runs_ropes_context_extension(tmp_path: Path) -> None:
    """YaRN with s = 4 past L₀ = 4: the script copies the scaling's functions, and its attention
    scores are the ones posviz drew under YaRN, not under plain RoPE."""
    settings = with_options(
        Settings(text=VERDICT_OPENING, scheme="rope", context_length=8, emb_dim=16, heads=2),
        rope_scaling="yarn",
        rope_original=4,
    )
    script = reproduction_script(settings, view="attention")
    assert "'rope_scaling': 'yarn'" in script
    assert "def _yarn(" in script
    (attention,), _ = run_scripts_saved([script], tmp_path)
    shown = build_attention(build_view(settings)).shown
    keep = ~shown.scores.isnan()
    torch.testing.assert_close(attention["attn_scores"][keep], shown.scores[keep])
    plain = build_attention(build_view(replace(settings, scheme_options=()))).shown
    assert not torch.allclose(attention["attn_scores"][keep], plain.scores[keep])
