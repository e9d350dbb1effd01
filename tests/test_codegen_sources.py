"""The code shown is the code run: every function a generated script defines is either the
exact source of the posviz function of that name (``inspect.getsource``, so editing it
changes the script) or one of a few named pieces of glue, and no module that writes scripts
holds a formula of its own.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import TypeGuard

import pytest
from reproduce import ROOT, run_beside_posviz

import posviz
from posviz.codegen import embeddings
from posviz.codegen._source import sources
from posviz.codegen.length import length_script
from posviz.config import SCHEMES, Settings
from posviz.training.codegen import training_script
from posviz.training.config import TrainingConfig
from posviz.training.length import LengthConfig

# Functions and classes the script templates write themselves: reading files and the Hub,
# and the glue that calls posviz's functions. Nothing here computes a number posviz shows.
GLUE = {
    "gpt2_tokenizer",  # which GPT-2 files tiktoken reads
    "read_bytes",  # HTTP Range requests to the Hub
    "read_table",  # a safetensors tensor from its bytes
    "context_vectors",  # self_attention(...).context_vecs
    "shape_of",  # principal_components' results by name
    "head_scores",  # MultiHeadAttention.forward's steps up to the weights of one head
    "TextVocabulary",  # the training text's tokens (see REWRITTEN)
    "text_path",  # which file the length script reads its text from
    "progress",  # the length script's steps, on standard error
}
# Glue with a posviz namesake: posviz's TextVocabulary encodes through posviz.tokenizer (its
# vendored files, a process-wide encoding); the script's through tiktoken's.
REWRITTEN = {"TextVocabulary"}
# Fragments of formulas that only posviz's own functions may hold
FORMULA_FRAGMENTS = (
    "10000",
    "10_000",
    "inv_freq",
    "two_i",
    "get_slopes",
    "relative_position_bucket",
    "linalg.svd",
    "linalg.eigh",
    "normalize(",
    "kaiming",
    "math.log",
    "torch.sin(",
    "torch.cos(angles[",
)
CODEGEN_MODULES = [
    *sorted((ROOT / "posviz" / "codegen").glob("*.py")),
    ROOT / "posviz" / "training" / "codegen.py",
]


def _posviz_definitions() -> dict[str, list[object]]:
    """Every top-level function and class of the core (not the app), by name."""
    found: dict[str, list[object]] = {}
    for info in pkgutil.walk_packages(posviz.__path__, "posviz."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (inspect.isfunction(value) or inspect.isclass(value)) and (
                value.__module__ == module.__name__
            ):
                found.setdefault(name, []).append(value)
    return found


def _script_makers() -> dict[str, Callable[[], str]]:
    """Each script by name, written when asked (not while pytest collects, in every process
    of every CI stage: writing all 34 took 3 s)."""
    makers: dict[str, Callable[[], str]] = {}
    for scheme in SCHEMES:
        settings = Settings(scheme=scheme, compare_text="A rose is a rose is a rose.")
        for view in ("embeddings", "geometry", "distance", "attention"):
            makers[f"{scheme}-{view}"] = partial(
                embeddings.reproduction_script, settings, view=view
            )
    book = Settings(text="one two three four five six", context_length=2)
    makers["book-loader"] = partial(embeddings.reproduction_script, book)
    gpt2 = Settings(weights="gpt2", emb_dim=768)
    for view in ("geometry", "distance"):
        makers[f"gpt2-{view}"] = partial(embeddings.reproduction_script, gpt2, view=view)
    makers["training"] = partial(training_script, TrainingConfig(init="small"), step=10)
    for scheme in SCHEMES:
        makers[f"{scheme}-length"] = partial(length_script, LengthConfig(scheme=scheme, steps=10))
    return makers


MAKERS = _script_makers()


@cache
def written_script(name: str) -> str:
    return MAKERS[name]()


@pytest.mark.parametrize("name", MAKERS)
def test_every_function_a_script_defines_is_posvizs_source_or_named_glue(name: str) -> None:
    text = written_script(name)
    definitions = _posviz_definitions()
    tree = ast.parse(text)
    defined = [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)]
    assert len(defined) == len(set(defined)), "a function is defined twice"
    for function in defined:
        if function in GLUE:
            continue
        assert function in definitions, f"{function} is neither posviz's nor named glue"
        assert any(inspect.getsource(item) in text for item in definitions[function]), function


def test_every_function_the_scripts_may_copy_is_copied_somewhere() -> None:
    copied = {
        item for name in MAKERS for item in sources(*embeddings.called(written_script(name))).items
    }
    assert set(embeddings._LIBRARY) <= copied


def test_a_script_copies_what_its_functions_use_with_their_constants() -> None:
    t5 = written_script("t5-attention")
    # t5_per_distance calls t5_bias_table and t5_buckets: each copied before it
    order = [t5.index(f"\ndef {name}(") for name in ("t5_bias_table", "t5_buckets")]
    assert max(order) < t5.index("\ndef t5_per_distance(")
    assert "\nT5_NUM_BUCKETS = 32\n" in t5 and "\nT5_MAX_DISTANCE = 128\n" in t5
    sinusoidal = written_script("sinusoidal-embeddings")
    assert "\nSINUSOIDAL_BASE = 10000.0\n" in sinusoidal
    assert sinusoidal.count("def sinusoidal_encoding(") == 1


@pytest.mark.parametrize("path", CODEGEN_MODULES, ids=lambda path: path.name)
def test_no_module_that_writes_scripts_holds_a_formula(path: Path) -> None:
    """Its string constants (the script templates) define only glue and hold no formula."""
    definitions = _posviz_definitions()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree) if _has_docstring(node)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if id(node) in docstrings:
            continue  # posviz's own module, class or function docstring
        for written in re.findall(r"^(?:def|class) (\w+)", node.value, flags=re.MULTILINE):
            assert written in GLUE, f"{path.name} writes {written} itself"
            if written not in REWRITTEN:
                assert written not in definitions, f"{path.name} writes posviz's {written} again"
        for fragment in FORMULA_FRAGMENTS:
            assert fragment not in node.value, f"{path.name} writes {fragment!r} itself"


def _has_docstring(node: ast.AST) -> TypeGuard[ast.Module | ast.ClassDef | ast.FunctionDef]:
    return (
        isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and bool(node.body)
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    )


@pytest.mark.slow
def test_the_script_reads_the_tokenizer_files_posviz_ships(tmp_path: Path) -> None:
    """Where posviz can be found, the script builds GPT-2's tokenizer from posviz/data with an
    empty tiktoken cache and no network, and never imports posviz."""
    script = embeddings.reproduction_script(Settings(text="Every effort moves you"))
    (tmp_path / "script.py").write_text(script, encoding="utf-8")
    runner = (
        "import runpy, sys; names = runpy.run_path('script.py');"
        "print(names['inputs'].tolist(), 'posviz' in sys.modules)"
    )
    printed = run_beside_posviz(runner, tmp_path)
    assert printed.splitlines()[-1] == "[[6109, 3626, 6100, 345]] False"
