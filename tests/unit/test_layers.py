"""Imports point one way: the layers of DESIGN.md, checked on the source text.

    ids, errors, clock, config, kernels  <-  resp, types  <-  keyspace  <-  commands  <-  engine
        <-  persistence  <-  server            (A <- B: B may import A)

``resp`` and ``types`` never import each other, and ``spark`` (a client of the
server) imports nothing of Tidelog outside itself.  The handlers of SAVE, BGSAVE,
BGREWRITEAOF and friends (``commands/persistence.py``, ``commands/aof.py``) act
on files through the persistence layer and rank with it.  Imports under
``if TYPE_CHECKING:`` serve annotations only and are not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "tidelog"

RANK = {"ids": 0, "errors": 0, "clock": 0, "config": 0, "kernels": 0, "resp": 1, "types": 1,
        "keyspace": 2, "commands": 3, "engine": 4, "persistence": 5, "server": 6}


PERSISTENCE_COMMANDS = {"commands/persistence.py", "commands/aof.py"}


def layer_of(path: Path) -> str:
    if path.relative_to(SRC).as_posix() in PERSISTENCE_COMMANDS:
        return "persistence"
    part = path.relative_to(SRC).parts[0]
    return part[:-3] if part.endswith(".py") else part


def internal_imports(path: Path) -> set[str]:
    """The top-level tidelog modules ``path`` imports (absolute or relative)."""
    tree = ast.parse(path.read_text(), str(path))
    package = path.relative_to(SRC).parent.parts
    found = set()
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "tidelog" and len(parts) > 1:
                    found.add(parts[1])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                parts = base + (node.module.split(".") if node.module else [])
                if parts:
                    found.add(parts[0])
                else:  # "from .. import x": x may be a module or a name of the package
                    found.update(a.name for a in node.names if _is_module(a.name))
            elif node.module and node.module.split(".")[0] == "tidelog":
                parts = node.module.split(".")
                if len(parts) > 1:
                    found.add(parts[1])
                else:
                    found.update(a.name for a in node.names if _is_module(a.name))
    return found


def _is_module(name: str) -> bool:
    return (SRC / f"{name}.py").exists() or (SRC / name).is_dir()


def _runtime_nodes(tree: ast.AST):
    """Every node but those under ``if TYPE_CHECKING:`` (annotations only)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and getattr(child.test, "id", None) == "TYPE_CHECKING":
                stack.extend(child.orelse)
                continue
            stack.append(child)


MODULES = sorted(p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] != "__init__.py")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_point_down(path):
    layer = layer_of(path)
    own = path.relative_to(SRC).parts[0].removesuffix(".py")
    imported = internal_imports(path) - {layer, own, "__init__"}
    if layer == "spark":
        assert not imported, f"spark is a client: it imports {sorted(imported)}"
        return
    rank = RANK[layer]
    for other in imported:
        assert other in RANK, f"{layer} imports {other}, which has no layer"
        assert RANK[other] <= rank, f"{layer} imports {other}, a layer above it"
        assert {layer, other} != {"resp", "types"}, "resp and types never import each other"
