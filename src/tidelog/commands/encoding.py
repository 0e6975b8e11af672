"""What OBJECT ENCODING and OBJECT REFCOUNT report for a value: Redis's rules
for strings (with the marks APPEND, SETRANGE and INCRBYFLOAT leave), each
other type's own ``object_encoding()``; and OBJECT IDLETIME's seconds.
Shared by OBJECT, DEBUG OBJECT, MEMORY USAGE and the string families."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CommandError
from .args import parse_int

if TYPE_CHECKING:
    from .contract import Ctx


SHARED_INTEGERS = 10000          # Redis shares the integers 0..9999 ...
SHARED_REFCOUNT = 2147483647     # ... and reports them with this refcount


def _as_long(value: bytes) -> int | None:
    """The integer a string holds if Redis would store it as one (string2l)."""
    if len(value) > 20:
        return None
    try:
        return parse_int(value)
    except CommandError:
        return None


def string_encoding(value: bytes) -> bytes:
    """What OBJECT ENCODING says for a string: Redis's rules for SET values."""
    if _as_long(value) is not None:
        return b"int"
    return b"embstr" if len(value) <= 44 else b"raw"


# Strings whose Redis encoding is not the one SET gives their value: APPEND
# and SETRANGE leave a "raw" string, INCRBYFLOAT an "embstr" even for "3".
# Keyed by the identity of the bytes object stored (a later write stores
# another object, so the mark no longer applies; RENAME keeps it, as Redis
# keeps the encoding).  Only strings of 2 to 44 bytes need a mark (longer
# ones are "raw" anyway; CPython shares the objects of 0 and 1 byte, so those
# cannot carry one); the table holds at most STRING_MARKS_MAX, oldest dropped.
STRING_MARKS_MAX = 4096
_string_marks: dict[int, tuple[bytes, bytes]] = {}


def mark_string_encoding(value: bytes, encoding: bytes) -> None:
    """Record that the string object ``value`` (just stored) has Redis
    encoding ``encoding``.  O(1)."""
    if len(value) < 2 or len(value) > 44 or string_encoding(value) == encoding:
        return
    if len(_string_marks) >= STRING_MARKS_MAX:
        del _string_marks[next(iter(_string_marks))]
    _string_marks[id(value)] = (value, encoding)


def _marked_encoding(value: bytes) -> bytes | None:
    mark = _string_marks.get(id(value))
    return mark[1] if mark is not None and mark[0] is value else None


def object_encoding(value: Any) -> bytes:
    """OBJECT ENCODING: Redis's rules for strings; every other value type
    names its own encoding (``object_encoding()``)."""
    if type(value) is bytes:
        return _marked_encoding(value) or string_encoding(value)
    encoding: bytes = value.object_encoding()
    return encoding


def refcount(value: Any) -> int:
    if isinstance(value, bytes):
        if _marked_encoding(value) is not None:
            return 1  # a string object of its own, never a shared integer
        number = _as_long(value)
        if number is not None and 0 <= number < SHARED_INTEGERS:
            return SHARED_REFCOUNT
    return 1


def idle_seconds(ctx: Ctx, key: bytes) -> int:
    return ctx.db.idle_ms(key) // 1000
