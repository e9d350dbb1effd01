"""The "Show the code" script: safe to embed any text, and run on its own it gives exactly
posviz's numbers for every scheme.

The scripts run in one fresh interpreter (``sys.executable``) with tiktoken's cache pointed at
a temporary folder pre-filled with posviz's vendored GPT-2 files under the names tiktoken
gives its downloads, and with proxies pointing nowhere, so no test touches the network.
"""

from __future__ import annotations

import ast

import pytest
import torch
from reference import book_window
from reproduce import NAMES, run_scripts

from posviz.codegen import reproduction_script, text_literal
from posviz.config import SCHEMES, Settings, SettingsError
from posviz.pipeline import WindowEmbeddings
from posviz.presets import VERDICT_OPENING
from posviz.tokenizer import encode
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
    plain = reproduction_script(Settings(text="plain", context_length=4))
    tree, plain_tree = ast.parse(script), ast.parse(plain)
    assert len(tree.body) == len(plain_tree.body)
    assert [ast.dump(n) for n in tree.body if not _assigns_text(n)] == [
        ast.dump(n) for n in plain_tree.body if not _assigns_text(n)
    ]
    # Invisible characters are written as escapes, never raw (no Trojan Source).
    assert not any(ch in script for ch in "\x00\u202e\u200b\u2028\ud800")


def _assigns_text(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "text"


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
    assert imported == {"torch", "tiktoken"}
    assert not any(isinstance(node, ast.ImportFrom) for node in ast.walk(tree))
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
    assert "emb_dim = 256\n" in script
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
