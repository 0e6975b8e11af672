"""Reply helpers several command families share: HELP texts and Redis's
quoting of a string (MONITOR lines, CONFIG REWRITE)."""

from __future__ import annotations

import re

from ..resp.replies import SimpleString


def help_reply(lines: list[str]) -> list[SimpleString]:
    """A HELP subcommand's reply: one status line per text line."""
    return [SimpleString(line.encode()) for line in lines]


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
