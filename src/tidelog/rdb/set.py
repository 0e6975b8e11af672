"""Sets in RDB files (public RDB format facts; nothing taken from Redis's code).

Written (both load in Redis 7.0 and later):

* type 11, an intset set: one RDB string holding the intset blob, all little
  endian -- ``<uint32 width: 2, 4 or 8> <uint32 count> <count signed ints of
  that width, ascending>``;
* type 2, any other set: ``<len count> <string member> ...``.

Read: those two and type 20 (Redis 7.2, RDB 11), a set listpack: one RDB
string holding a listpack of the members.  A loaded set takes the encoding
Redis gives it on load with the default limits (intset when every member is
an integer and there are at most 512, listpack when at most 128 short
members, else hashtable).  Cost: O(size) each way.
"""

from __future__ import annotations

import struct

from ..types import listpack
from ..types.set import DEFAULT_LIMITS, INTSET, LISTPACK, Set
from .format import Reader, length_bytes, string_bytes

TYPE_SET = 2
TYPE_SET_INTSET = 11
TYPE_SET_LISTPACK = 20

_HEADER = struct.Struct("<II")
_WIDTH_FORMAT = {2: "h", 4: "i", 8: "q"}


def intset_blob(values: list[int]) -> bytes:
    """The intset bytes of ascending ``values`` in the narrowest width."""
    low, high = (values[0], values[-1]) if values else (0, 0)
    width = 2
    if not (-(1 << 15) <= low and high < 1 << 15):
        width = 4 if -(1 << 31) <= low and high < 1 << 31 else 8
    return _HEADER.pack(width, len(values)) + struct.pack(
        f"<{len(values)}{_WIDTH_FORMAT[width]}", *values)


def write_set(value: Set, compress: bool) -> tuple[int, bytes]:
    if value.encoding is INTSET:
        return TYPE_SET_INTSET, string_bytes(intset_blob(value.ints()), compress)
    members = value.members()
    return TYPE_SET, length_bytes(len(members)) + b"".join(
        string_bytes(m, compress) for m in members)


def _loaded(members: list[bytes], r: Reader, at: int) -> Set:
    if not members:
        raise r.fail("empty set", at)
    s = Set()
    if len(members) > DEFAULT_LIMITS.intset_max:
        s.prepare(len(members), DEFAULT_LIMITS)
    if s.add_many(members) != len(members):
        raise r.fail("duplicate set member", at)
    return s


def read_set(r: Reader) -> Set:
    at = r.pos
    return _loaded([r.string() for _ in range(r.length())], r, at)


def read_intset(r: Reader) -> Set:
    at = r.pos
    blob = r.string()
    if len(blob) < 8:
        raise r.fail("intset blob too short", at)
    width, count = _HEADER.unpack_from(blob)
    if width not in _WIDTH_FORMAT or len(blob) != 8 + width * count:
        raise r.fail(f"bad intset header (width {width}, count {count})", at)
    values = struct.unpack_from(f"<{count}{_WIDTH_FORMAT[width]}", blob, 8)
    if any(values[i] >= values[i + 1] for i in range(count - 1)):
        raise r.fail("intset not in ascending order", at)
    return _loaded([b"%d" % v for v in values], r, at)


def read_set_listpack(r: Reader) -> Set:
    at = r.pos
    blob = r.string()
    try:
        values = listpack.unpack(blob, strict=False)
    except listpack.ListpackError as exc:
        raise r.fail(f"bad set listpack: {exc}", at) from None
    members = [v if isinstance(v, bytes) else b"%d" % v for v in values]
    if not members:
        raise r.fail("empty set", at)
    s = Set()
    s.encoding = LISTPACK
    s.prepare(len(members), DEFAULT_LIMITS)
    if s.add_many(members) != len(members):
        raise r.fail("duplicate set member", at)
    return s
