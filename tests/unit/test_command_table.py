"""The command table is built in one place: ``tidelog/commands/__init__.py``
imports every module that registers commands, and nothing else adds to the
table of the command layer.  Run in fresh interpreters, so that what an
earlier test imported cannot fill the table for them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMANDS_DIR = ROOT / "src" / "tidelog" / "commands"

# The table and the modules that filled it, after importing the command layer
# alone (and, with --all, every module of it first, in file order).
REPORT = """
import importlib, pkgutil, sys
if "--all" in sys.argv:
    import tidelog.commands as package
    for info in sorted(pkgutil.walk_packages(package.__path__, "tidelog.commands."),
                       key=lambda info: info.name, reverse=True):
        importlib.import_module(info.name)
import tidelog.commands
from tidelog.commands.table import COMMANDS
specs = [s for spec in COMMANDS.values() for s in (spec, *spec.subcommands.values())]
print("listed", " ".join(m.__name__ for m in tidelog.commands.MODULES))
print("filled", " ".join(sorted({s.handler.__module__ for s in specs if s.handler is not None})))
print("names", " ".join(s.name for s in specs))
"""


def report(*flags: str) -> dict[str, list[str]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    result = subprocess.run([sys.executable, "-c", REPORT, *flags], env=env, capture_output=True,
                            text=True, timeout=120, check=True)
    return {line.split(" ", 1)[0]: line.split(" ")[1:] for line in result.stdout.splitlines()}


def test_the_listed_modules_are_the_ones_that_fill_the_table():
    table = report()
    assert sorted(table["listed"]) == table["filled"]
    assert len(set(table["listed"])) == len(table["listed"])


def test_every_module_with_a_command_is_listed():
    listed = set(report()["listed"])
    registering = set()
    for path in COMMANDS_DIR.rglob("*.py"):
        if "\n@command(" in path.read_text():
            parts = path.relative_to(COMMANDS_DIR.parent.parent).with_suffix("").parts
            registering.add(".".join(parts))
    assert registering == listed


def test_the_table_does_not_depend_on_what_else_was_imported():
    alone, everything = report(), report("--all")
    assert everything["names"] == alone["names"]  # the same commands, in the same order
    assert len(alone["names"]) > 200


def test_a_command_with_movable_keys_says_where_they_are():
    # The key spec derived from the flags covers fixed positions only: a
    # command whose keys move (numkeys, a keyword, SORT's STORE) must give its
    # key specs, or a key finder, where it is registered.
    import tidelog.commands  # noqa: F401  (fills the table)
    from tidelog.commands.table import COMMANDS

    specs = [s for spec in COMMANDS.values() for s in (spec, *spec.subcommands.values())]
    movable = [s for s in specs if "movablekeys" in s.flags]
    assert len(movable) > 10
    assert [s.name for s in movable if s.key_specs is None and s.key_finder is None] == []


def test_the_metadata_is_on_the_spec():
    import tidelog.commands  # noqa: F401  (fills the table)
    from tidelog.commands.key_specs import ND, command_key_positions
    from tidelog.commands.table import COMMANDS

    xadd, migrate = COMMANDS["xadd"], COMMANDS["migrate"]
    assert xadd.tips == (ND,)
    assert xadd.key_specs is not None and xadd.key_specs[0].flags == ("RW", "update")
    assert migrate.key_finder is not None
    argv = [b"MIGRATE", b"h", b"1", b"", b"0", b"0", b"KEYS", b"a", b"b"]
    assert [i for i, _ in command_key_positions(migrate, argv)] == [7, 8]
    assert COMMANDS["get"].key_specs is None  # derived from the flags
