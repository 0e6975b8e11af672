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
    __slots__ = ("argv", "pos")

    def __init__(self, argv: list[bytes], start: int = 1) -> None:
        self.argv = argv
        self.pos = start

    def more(self) -> bool:
        return self.pos < len(self.argv)

    def remaining(self) -> int:
        return len(self.argv) - self.pos

    def peek_upper(self) -> bytes | None:
        return self.argv[self.pos].upper() if self.pos < len(self.argv) else None

    def next_bytes(self) -> bytes:
        if self.pos >= len(self.argv):
            raise CommandError(SYNTAX)
        arg = self.argv[self.pos]
        self.pos += 1
        return arg

    def next_upper(self) -> bytes:
        return self.next_bytes().upper()

    def next_int(self, error: bytes = NOT_INTEGER) -> int:
        return parse_int(self.next_bytes(), error)

    def take(self, n: int) -> list[bytes]:
        """The next ``n`` arguments (the caller checked that many are left)."""
        out = self.argv[self.pos:self.pos + n]
        self.pos += n
        return out

    def rest(self) -> list[bytes]:
        rest = self.argv[self.pos:]
        self.pos = len(self.argv)
        return rest

    def finish(self) -> None:
        """Leftover arguments are a syntax error."""
        if self.pos < len(self.argv):
            raise CommandError(SYNTAX)
