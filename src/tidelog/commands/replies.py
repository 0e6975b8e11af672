"""Reply helpers several command families share: the HELP subcommand of
every container, and Redis's quoting of a string (MONITOR lines, CONFIG
REWRITE)."""

from __future__ import annotations

import re
import sys

from ..resp.replies import SimpleString
from .contract import Ctx
from .table import COMMANDS, CommandSpec, Handler, command


# =====================================================================================
# HELP: the container's spec holds the text, one handler answers it
# =====================================================================================
def help_handler(spec: CommandSpec) -> Handler:
    """The handler of ``spec``'s HELP: ``spec.help`` as one status line per
    string.  (DEBUG, which dispatches its own subcommands, takes it too.)"""

    def help_(ctx: Ctx, argv: list[bytes]) -> list[SimpleString]:
        return [SimpleString(line.encode()) for line in spec.help]

    help_.__doc__ = f"""{spec.name.upper()} HELP

    The help lines on {spec.name.upper()}'s spec, one status line each.
    Cost: O(1) (a fixed text)."""
    help_.__qualname__ = help_.__name__ = f"{spec.name}_help"
    return help_


def help_command(container: str, *, group: str, since: str, summary: str,
                 categories: tuple[str, ...] = ()) -> None:
    """Register ``<container>|help`` (arity 2, ``loading stale``, O(1), as
    every Redis container's HELP is), answered from the help lines on the
    container's spec; the container registers first, with ``help=(...)``."""
    spec = COMMANDS[container]
    if not spec.help:
        raise ValueError(f"{container} has no help lines on its spec")
    handler = help_handler(spec)
    # The handler belongs to the module that registers it (as namedtuple
    # sets its classes' __module__): the table's modules are the families'.
    handler.__module__ = sys._getframe(1).f_globals["__name__"]
    command(f"{container}|help", arity=2, flags="loading stale", group=group, since=since,
            complexity="O(1)", summary=summary, categories=categories)(handler)


# =====================================================================================
# Redis's quoted form of a string (sdscatrepr)
# =====================================================================================
_PLAIN_ARG = re.compile(rb'[ !#-\[\]-~]*')  # printable ASCII but '"' and '\\'
_REPR_TABLE = [bytes([c]) if 0x20 <= c <= 0x7E else b"\\x%02x" % c for c in range(256)]
for _c, _e in ((0x5C, b"\\\\"), (0x22, b'\\"'), (0x0A, b"\\n"), (0x0D, b"\\r"),
               (0x09, b"\\t"), (0x07, b"\\a"), (0x08, b"\\b")):
    _REPR_TABLE[_c] = _e
del _c, _e


def repr_arg(arg: bytes) -> bytes:
    """One argument as MONITOR shows it: quoted, with ``\\\\``, ``\\"``,
    ``\\n \\r \\t \\a \\b``, and ``\\xHH`` (lower-case hex) for every other
    byte outside printable ASCII (Redis's sdscatrepr)."""
    if _PLAIN_ARG.fullmatch(arg):
        return b'"' + arg + b'"'
    table = _REPR_TABLE
    return b'"' + b"".join([table[c] for c in arg]) + b'"'
