"""No import cycles anywhere in the repository, and a core that never imports Streamlit.

Every ``.py`` file tracked in the repository is read with :mod:`ast`; an edge ``a -> b`` is an
import of a repository module ``b`` anywhere in ``a`` (also inside functions, which is where
cycles like to hide). Tests import their helper modules (``reference``, ``reproduce``...) by
their bare names, as pytest puts ``tests/`` on the path.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> dict[str, Path]:
    """Module name -> file, for every Python file git tracks (or would add)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    modules = {}
    for name in listed:
        path = ROOT / name
        if not path.exists():
            continue
        parts = list(Path(name).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[0] == "tests":  # test helpers are imported by bare name
            parts = parts[1:]
        if parts:
            modules[".".join(parts)] = path
    return modules


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The repository modules ``path`` (module ``name``) imports."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, name, set(modules)) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_the_repository() -> None:
    graph = _graph()
    assert "posviz.pipeline" in graph["posviz.view"]
    assert "reference" in graph["test_view"]
    assert "posviz.view" in graph["posviz.cli"]


def test_no_import_cycles_anywhere() -> None:
    assert _cycles(_graph()) == []


@pytest.mark.parametrize("module", ["streamlit", "app"])
def test_the_core_never_imports_the_app_layer(module: str) -> None:
    paths = sorted((ROOT / "posviz").rglob("*.py"))  # subpackages too
    assert len(paths) > 20
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ] + [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        assert not any(n == module or n.startswith(f"{module}.") for n in names), str(
            path.relative_to(ROOT)
        )
