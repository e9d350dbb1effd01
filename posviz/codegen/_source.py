"""posviz's own code, copied into a script: the one way a generated script gets a formula.

:func:`sources` takes the functions and classes that computed a view and returns their source
(:func:`inspect.getsource`, dedented) after everything they use from posviz, each once and in
the order they need each other, with the constants they read written out beside them
(``SINUSOIDAL_BASE = 10000.0``) and the imports they need. Edit a function and the script
changes with it: the code shown is the code run. Names that appear only in annotations are not
needed (the scripts start with ``from __future__ import annotations``).

>>> from posviz.schemes import sinusoidal_encoding
>>> found = sources(sinusoidal_encoding)
>>> found.imports, found.constants
(('import torch',), ('SINUSOIDAL_BASE = 10000.0',))
>>> found.code.startswith("def sinusoidal_encoding(context_length: int, emb_dim: int)")
True
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args, get_origin

Item = Callable[..., object]  # a function or a class of posviz
_CONSTANT_TYPES = (bool, int, float, str)


def _is_constant(value: object) -> bool:
    """A value a script can write out: a number, a string, or a tuple of them."""
    if isinstance(value, tuple):
        return all(_is_constant(part) for part in value)
    return isinstance(value, _CONSTANT_TYPES)


@dataclass(frozen=True)
class Sources:
    """What a script needs to define ``items``: import lines, constants, definitions."""

    items: tuple[Item, ...]  # every definition, in the order they are written
    imports: tuple[str, ...]  # e.g. "import torch", "from torch import nn"
    constants: tuple[str, ...]  # e.g. "ROPE_BASE = 10000.0"
    code: str  # the definitions, two blank lines apart

    @property
    def text(self) -> str:
        """The constants, then the definitions: the block a script holds."""
        constants = "".join(f"{line}\n" for line in self.constants)
        return f"{constants}\n\n{self.code}" if constants else self.code


def source(item: Item) -> str:
    """``item``'s source as posviz has it, dedented (a method's or a class's alike)."""
    return textwrap.dedent(inspect.getsource(item))


def _used_names(tree: ast.AST) -> set[str]:
    """Names ``tree`` reads, except inside annotations (never evaluated in the scripts)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.arg):
            return  # a parameter: its annotation only
        if isinstance(node, ast.AnnAssign):  # a class field: its default only
            if node.value is not None:
                visit(node.value)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defaults = [*node.args.defaults, *node.args.kw_defaults]
            for part in [*defaults, *node.decorator_list, *node.body]:
                if part is not None:
                    visit(part)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _import_line(name: str, value: object) -> str | None:
    """The import that binds ``name`` to ``value`` in a script, if it is not posviz's."""
    if isinstance(value, types.ModuleType):
        module = value.__name__
        if module == name:
            return f"import {name}"
        parent, _, last = module.rpartition(".")
        return f"from {parent} import {name}" if last == name else f"import {module} as {name}"
    defined_in = getattr(value, "__module__", None)
    if not isinstance(defined_in, str) or defined_in.startswith("posviz") or not callable(value):
        return None
    parts = defined_in.split(".")
    for end in range(1, len(parts) + 1):  # the shortest module that exports it
        parent = ".".join(parts[:end])
        if getattr(sys.modules.get(parent), name, None) is value:
            return f"from {parent} import {name}"
    return f"from {defined_in} import {name}"


def import_block(lines: set[str]) -> str:
    """Import ``lines`` grouped as isort groups them: the standard library, then the rest;
    in each, ``import x`` before ``from x import y``.

    >>> print(import_block({"import torch", "from torch import nn", "import os"}), end="")
    import os
    <BLANKLINE>
    import torch
    from torch import nn
    """

    def key(line: str) -> tuple[bool, str, str]:
        return line.startswith("from "), line.split()[1], line

    def standard(line: str) -> bool:
        return line.split()[1].split(".")[0] in sys.stdlib_module_names

    groups = [
        sorted((line for line in lines if standard(line) is std), key=key) for std in (True, False)
    ]
    return "\n\n".join("\n".join(group) for group in groups if group) + "\n"


def sources(*items: Item) -> Sources:
    """Everything a script needs to define ``items`` (see the module docstring).

    A posviz name an item reads is either another posviz function or class (copied first), a
    constant (``bool``, ``int``, ``float``, ``str`` or a tuple of them: written out), or an
    import; anything else is a :class:`ValueError` naming it, so a function that cannot be
    copied says so.
    """
    ordered: list[Item] = []
    imports: set[str] = set()
    constants: dict[str, str] = {}

    def add(item: Item) -> None:
        if item in ordered:
            return
        module = sys.modules[item.__module__]
        for name in sorted(_used_names(ast.parse(source(item)))):
            if name not in vars(module) or name == item.__name__:
                continue  # a builtin, a local, or the item itself (recursion)
            value = vars(module)[name]
            line = _import_line(name, value)
            if get_origin(value) is Literal:  # a type of a few names: written out
                imports.add("from typing import Literal")
                written = f"{name} = Literal[{', '.join(map(repr, get_args(value)))}]"
                if constants.setdefault(name, written) != written:
                    raise ValueError(f"{name} is {value!r} and {constants[name]}: rename one")
            elif line is not None:
                imports.add(line)
            elif _is_constant(value):
                written = f"{name} = {value!r}"
                if constants.setdefault(name, written) != written:
                    raise ValueError(f"{name} is {value!r} and {constants[name]}: rename one")
            elif callable(value) and getattr(value, "__module__", "").startswith("posviz"):
                add(value)
            else:
                raise ValueError(
                    f"{item.__module__}.{item.__name__} reads {name} ({type(value).__name__}), "
                    "which a script cannot copy: pass it as an argument"
                )
        if item not in ordered:
            ordered.append(item)

    for item in items:
        add(item)
    return Sources(
        items=tuple(ordered),
        imports=tuple(sorted(imports)),
        constants=tuple(constants.values()),
        code="\n\n".join(source(item) for item in ordered),
    )
