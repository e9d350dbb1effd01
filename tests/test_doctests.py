"""The examples in posviz's docstrings run and print what they say
(the same as ``python -m pytest --doctest-modules posviz posviz_app``): the core's and the
app's (its modules import without a running Streamlit; ``streamlit_app`` runs the page)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import posviz
import posviz_app

# Every module, in subpackages too; __main__ runs the command line when imported, and
# streamlit_app the page.
MODULES = sorted(
    info.name
    for package in (posviz, posviz_app)
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}.")
    if info.name.rpartition(".")[2] not in ("__main__", "streamlit_app")
)


def test_modules_found() -> None:
    for name in ("tokenizer", "embeddings", "batching", "config", "schemes", "pipeline"):
        assert f"posviz.{name}" in MODULES
    for name in ("page", "state", "chart", "views.embeddings", "views.word_order"):
        assert f"posviz_app.{name}" in MODULES


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name: str) -> None:
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"


def test_core_modules_have_examples() -> None:
    """The style guide asks for a short example; these modules promise one."""
    for name in ("tokenizer", "batching", "config", "schemes", "pipeline", "token_text", "query"):
        module = importlib.import_module(f"posviz.{name}")
        assert doctest.testmod(module, report=False).attempted > 0, name
