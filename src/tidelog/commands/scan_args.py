"""The SCAN family's arguments: the cursor as Redis reads it and the options
after it (MATCH, COUNT, TYPE, NOVALUES/NOSCORES), shared by SCAN, HSCAN,
SSCAN and ZSCAN."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import INVALID_CURSOR, SYNTAX, CommandError
from .args import ArgReader

_U64 = 1 << 64


def parse_cursor(arg: bytes) -> int:
    """A SCAN cursor as Redis reads it (strtoull): an unsigned 64-bit decimal,
    optionally signed ("-1" wraps to 2**64-1), "" reads as 0."""
    if arg[:1] in (b" ", b"\t", b"\n", b"\v", b"\f", b"\r"):
        raise CommandError(INVALID_CURSOR)
    digits = arg[1:] if arg[:1] in (b"+", b"-") else arg
    if not digits:
        if arg:
            raise CommandError(INVALID_CURSOR)
        return 0
    if not digits.isdigit():
        raise CommandError(INVALID_CURSOR)
    value = int(digits)
    if value >= _U64:
        raise CommandError(INVALID_CURSOR)
    return (-value) % _U64 if arg[:1] == b"-" else value


@dataclass(slots=True)
class ScanOptions:
    """SCAN's, HSCAN's, SSCAN's and ZSCAN's options after the cursor."""

    count: int = 10
    pattern: bytes | None = None      # MATCH; None: every element (also for MATCH *)
    type_filter: bytes | None = None  # SCAN ... TYPE, lower case
    keys_only: bool = False           # HSCAN NOVALUES (7.4), ZSCAN NOSCORES (8.0)


def parse_scan_options(argv: list[bytes], start: int, *, type_option: bool = False,
                       keys_only_word: bytes | None = None) -> ScanOptions:
    """The options from ``argv[start]`` on, in any order, each error Redis's
    ``syntax error`` (a COUNT below 1 too; a COUNT that is no integer: the
    integer error).  TYPE is SCAN's; ``keys_only_word`` the flag that leaves
    the values out (HSCAN's NOVALUES, ZSCAN's NOSCORES)."""
    opts = ScanOptions()
    r = ArgReader(argv, start)
    while r.more():
        option = r.next_upper()
        if option == keys_only_word:
            opts.keys_only = True
            continue
        if not r.more():
            raise CommandError(SYNTAX)
        if option == b"COUNT":
            opts.count = r.next_int()
            if opts.count < 1:
                raise CommandError(SYNTAX)
        elif option == b"MATCH":
            pattern = r.next_bytes()
            opts.pattern = None if pattern == b"*" else pattern
        elif type_option and option == b"TYPE":
            opts.type_filter = r.next_bytes().lower()
        else:
            raise CommandError(SYNTAX)
    return opts
