"""A positional scheme lives in one place: no module of ``posviz/`` or ``posviz_app/`` outside
the registry (``posviz/schemes/``) names one in a string literal or compares one by name; it
asks the spec (``scheme(name).rotates``, ``spec.words.note``...).

Docstrings are exempt: their doctests are examples for users, who name schemes as a link or
the command line does (``Settings(scheme="rope")``). Code is not: a string in code, a dict key,
a default, a comparison. Tests are users of the API too and may name schemes.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

from posviz.schemes import SCHEME_NAMES, SCHEMES

ROOT = Path(__file__).resolve().parent.parent
REGISTRY: Final = "posviz/schemes/"
# Modules not yet moved to the specs, each with why; remove an entry once its module asks the
# specs.
NOT_YET_MIGRATED: Final[tuple[str, ...]] = ()
# The same words used for something that is not a scheme: (module, word) -> what it means.
NOT_A_SCHEME: Final = {
    ("posviz/lesson/geometry.py", "none"): "'none' drawn: how many directions a picture shows",
}
SPEC_CONSTANTS: Final = frozenset(spec.name.upper() for spec in SCHEMES)  # LEARNED, ROPE...
SCHEME_ATTRIBUTES: Final = frozenset({"scheme"})  # what holds a scheme's name


def _modules() -> list[Path]:
    found = []
    for folder in ("posviz", "posviz_app"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if not relative.startswith(REGISTRY) and relative not in NOT_YET_MIGRATED:
                found.append(path)
    return found


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring constants of the module, its classes and functions."""
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _holds_a_scheme(node: ast.expr) -> bool:
    """``x.scheme`` or ``scheme``: what holds a scheme's name."""
    if isinstance(node, ast.Attribute):
        return node.attr in SCHEME_ATTRIBUTES
    return isinstance(node, ast.Name) and node.id in SCHEME_ATTRIBUTES


def _a_name(node: ast.expr) -> bool:
    """A string, or a spec's name (``ROPE.name``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "name"
        and isinstance(node.value, ast.Name)
        and node.value.id in SPEC_CONSTANTS
    )


def problems(source: str, relative: str) -> list[str]:
    """Each place in the module ``relative`` (its ``source``) that names a scheme in a string
    or compares a scheme's name."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in SCHEME_NAMES
            and id(node) not in docstrings
            and (relative, node.value) not in NOT_A_SCHEME
        ):
            found.append(f"{relative}:{node.lineno}: the string {node.value!r}")
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(map(_holds_a_scheme, sides)) and any(map(_a_name, sides)):
                found.append(f"{relative}:{node.lineno}: compares a scheme's name")
    return found


def test_no_module_names_a_scheme_outside_the_registry() -> None:
    found = [
        problem
        for path in _modules()
        for problem in problems(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    ]
    assert found == [], "ask the spec (posviz.schemes.scheme(name)) instead:\n" + "\n".join(found)


def test_the_exemptions_are_still_needed() -> None:
    """Each module not yet migrated exists and still names a scheme (else drop it from the
    list), and each word that is not a scheme is still there."""
    for relative in NOT_YET_MIGRATED:
        assert (ROOT / relative).exists(), f"{relative} is gone: remove it from NOT_YET_MIGRATED"
    for relative, word in NOT_A_SCHEME:
        text = (ROOT / relative).read_text(encoding="utf-8")
        assert f'"{word}"' in text, f"{relative} no longer says {word!r}: remove the entry"


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        pytest.param('x = "rope"', True, id="a-string"),
        pytest.param('TITLES = {"alibi": "..."}', True, id="a-dict-key"),
        pytest.param("same = settings.scheme == ROPE.name", True, id="a-spec-name-compared"),
        pytest.param("other = view.scheme != T5.name", True, id="a-spec-name-compared-too"),
        pytest.param('same = table.kind != "t5"', True, id="a-string-compared"),
        pytest.param('def f():\n    """Settings(scheme="rope")"""', False, id="a-docstring"),
        pytest.param("rotates = scheme(settings.scheme).rotates", False, id="asking-the-spec"),
        pytest.param('word = "sinusoidally"', False, id="another-word"),
    ],
)
def test_the_guard_catches_names_and_comparisons(source: str, caught: bool) -> None:
    assert bool(problems(source, "posviz/example.py")) is caught
