"""ArgReader: a cursor over a command's arguments.

Handlers read their arguments in order and let the reader raise Redis's
errors::

    r = ArgReader(argv, start=1)
    key = r.next_bytes()
    while r.more():
        opt = r.next_upper()
        if opt == b"COUNT":
            count = r.next_int()
        else:
            raise CommandError(SYNTAX)

A missing argument is a syntax error; a bad number is Redis's "not an
integer" error.  Cost of every method: O(1) (plus the argument's length for
number parsing).
"""

from __future__ import annotations

from ..errors import NOT_INTEGER, SYNTAX, CommandError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def parse_int(arg: bytes, error: bytes = NOT_INTEGER) -> int:
    """A canonical signed 64-bit integer (Redis's string2ll), else CommandError."""
    if arg.isdigit():
        if len(arg) > 1 and arg[0] == 0x30:  # leading zero
            raise CommandError(error)
    elif not (len(arg) > 1 and arg[0] == 0x2D and arg[1:].isdigit() and arg[1] != 0x30):
        raise CommandError(error)
    value = int(arg)
    if not INT64_MIN <= value <= INT64_MAX:
        raise CommandError(error)
    return value


class ArgReader:
    __slots__ = ("argv", "argc", "pos")

    def __init__(self, argv: list[bytes], start: int = 1) -> None:
        self.argv = argv
        self.argc = len(argv)
        self.pos = start

    def more(self) -> bool:
        return self.pos < self.argc

    def remaining(self) -> int:
        return self.argc - self.pos

    def peek(self) -> bytes | None:
        """The next argument, not consumed; None when none is left."""
        return self.argv[self.pos] if self.pos < self.argc else None

    def next_bytes(self) -> bytes:
        pos = self.pos
        if pos >= self.argc:
            raise CommandError(SYNTAX)
        self.pos = pos + 1
        return self.argv[pos]

    def next_upper(self) -> bytes:
        return self.next_bytes().upper()

    def next_int(self, error: bytes = NOT_INTEGER) -> int:
        pos = self.pos
        if pos >= self.argc:
            raise CommandError(SYNTAX)
        self.pos = pos + 1
        return parse_int(self.argv[pos], error)

    def take(self, n: int) -> list[bytes]:
        """The next ``n`` arguments (the caller checked that many are left)."""
        out = self.argv[self.pos:self.pos + n]
        self.pos += n
        return out

    def finish(self) -> None:
        """Leftover arguments are a syntax error."""
        if self.pos < self.argc:
            raise CommandError(SYNTAX)
