"""App state has one owner: posviz_app/state.py. No other module of the app touches
``st.session_state`` or spells a session, widget, chart or container key; the keys are
state.py's constants, and state.py's readers return typed values (never ``Any``).

Read from the modules' code (ast), so a new module is checked without touching this file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from posviz.viewspec import NAMES
from posviz_app import state

APP = Path(__file__).resolve().parent.parent / "posviz_app"
STATE = APP / "state.py"
OTHERS = sorted(path for path in APP.rglob("*.py") if path != STATE)


def _strings(node: ast.AST) -> list[str]:
    """The string literals in ``node`` (the literal parts of an f-string too)."""
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _state_keys() -> set[str]:
    """Every key state.py names: its upper-case constants' strings (one, or a tuple of them)."""
    keys: set[str] = set()
    for node in ast.parse(STATE.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            literal = isinstance(node.value, ast.Constant | ast.Tuple)
            if isinstance(target, ast.Name) and target.id.lstrip("_").isupper() and literal:
                keys.update(_strings(node.value) if node.value else [])
    return keys - {""}


KEYS = _state_keys()


def test_the_keys_are_found() -> None:
    assert {
        state.TAB,
        state.TEXT,
        state.WORD_ORDER_CHART,
        state.LESSON,
        state.PLOTLY_LOADER,
    } <= KEYS
    assert "_posviz_canvases" in KEYS  # the chart's own state, once kept in chart.py


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(APP.parent)}:{getattr(node, 'lineno', '?')}"


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: str(p.relative_to(APP)))
def test_only_state_touches_the_session_state(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    touches = [
        _where(path, node)
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr == "session_state")
        or (isinstance(node, ast.Name) and node.id == "session_state")
        or (isinstance(node, ast.alias) and node.name.endswith("session_state"))
    ]
    assert not touches, f"st.session_state outside posviz_app/state.py: {touches}"


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: str(p.relative_to(APP)))
def test_no_other_module_spells_a_key(path: Path) -> None:
    """No ``key=`` written as a literal (or an f-string), and no string equal to a key of
    state.py. Words that are keys and more are left to the key= rule: a view's one name (the
    registry's word), a Settings field's name (the core's word; the settings widgets' keys are
    the fields' names) and a field of a JSON payload (a dict literal's key)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    spelled = [
        f"{_where(path, keyword.value)} key={ast.unparse(keyword.value)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "key"
        and (_strings(keyword.value) or isinstance(keyword.value, ast.JoinedStr))
    ]
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    payload_fields = {
        id(key) for node in ast.walk(tree) if isinstance(node, ast.Dict) for key in node.keys
    }
    spelled += [
        f"{_where(path, node)} {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in KEYS - set(NAMES) - set(state.SETTINGS_KEYS)
        and id(node) not in docstrings | payload_fields
    ]
    assert not spelled, f"keys spelled outside posviz_app/state.py: {spelled}"


def test_state_readers_are_typed() -> None:
    """No function of state.py returns ``Any`` (callers would cast)."""
    tree = ast.parse(STATE.read_text(encoding="utf-8"))
    untyped = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and (node.returns is None or "Any" in ast.unparse(node.returns))
    ]
    assert not untyped, f"state.py functions returning Any or untyped: {untyped}"
    assert "Any" not in {
        alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names
    }
