"""Imports point one way: the layers of DESIGN.md, enforced by import-linter.

The contracts are in ``pyproject.toml`` (``[tool.importlinter]``): one
``layers`` contract over every module of each package (indirect imports and
imports under ``if TYPE_CHECKING:`` count too), ``resp`` and ``types``
independent of each other, the command families independent of each
other and above the shared helpers, the handlers' contract below them,
and ``spark`` (a client of the server) importing nothing else of Tidelog.
The second and third tests show the contracts can fail: on a copy of the
package where one command module imports the persistence layer, and one
where a command family imports another.

Layers allow two modules of one layer to import each other; no module may
take part in an import circle, even one made only of imports for type
annotations (a circle is a seam drawn in the wrong place).  That is checked
on import-linter's graph (grimp), and shown to fail on a copy with one
annotation-only import added.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "tidelog"


def lint_imports(cwd: Path, src: Path) -> subprocess.CompletedProcess[str]:
    """Run import-linter on the package under ``src`` with ``cwd``'s pyproject.toml."""
    env = dict(os.environ, PYTHONPATH=str(src))
    return subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                               "sys.exit(lint_imports_command())", "--no-cache"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


FIND_CYCLES = """
import grimp
graph = grimp.build_graph("tidelog", cache_dir=None)
for module in sorted(graph.modules):
    for imported in sorted(graph.find_modules_directly_imported_by(module)):
        if graph.chain_exists(importer=imported, imported=module):
            print(module, "->", " -> ".join(graph.find_shortest_chain(importer=imported, imported=module)))
"""


def import_cycles(src: Path) -> list[str]:
    """Every import circle in the package under ``src``, one line per module in one."""
    env = dict(os.environ, PYTHONPATH=str(src))
    result = subprocess.run([sys.executable, "-c", FIND_CYCLES], env=env, capture_output=True,
                            text=True, timeout=120, check=True)
    return result.stdout.splitlines()


def test_the_layer_contracts_hold():
    result = lint_imports(ROOT, ROOT / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_command_module_importing_persistence_breaks_the_layers(tmp_path):
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    copy = tmp_path / "src" / "tidelog"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    streams = copy / "commands" / "stream" / "streams.py"
    streams.write_text(streams.read_text() + "\nfrom ...persistence import snapshot  # noqa\n")

    result = lint_imports(tmp_path, tmp_path / "src")
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout
    assert "tidelog.commands.stream.streams -> tidelog.persistence.snapshot" in result.stdout


def test_a_command_family_importing_another_breaks_their_independence(tmp_path):
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    copy = tmp_path / "src" / "tidelog"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    streams = copy / "commands" / "stream" / "streams.py"
    streams.write_text(streams.read_text() + "\nfrom ..zset import zsets  # noqa\n")

    result = lint_imports(tmp_path, tmp_path / "src")
    assert result.returncode != 0, result.stdout
    assert "The command families (Redis's t_*.c grouping) import nothing of each other BROKEN" \
        in result.stdout.replace("\n", " ")
    assert "tidelog.commands.stream.streams -> tidelog.commands.zset.zsets" in result.stdout


def test_no_module_is_part_of_an_import_circle():
    assert import_cycles(ROOT / "src") == []


def test_an_annotation_only_import_circle_is_found(tmp_path):
    copy = tmp_path / "src" / "tidelog"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
    args = copy / "commands" / "args.py"
    args.write_text(args.read_text() + "\nfrom typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n    from .stream.streams import xadd  # noqa\n")

    cycles = import_cycles(tmp_path / "src")
    assert any(line.startswith("tidelog.commands.args -> ") for line in cycles), cycles
