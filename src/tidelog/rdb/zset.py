"""Sorted sets in RDB files (public RDB format facts; nothing taken from Redis's code).

Written: type 5 (ZSET_2, Redis 4.0+; loads in every Redis since): ``<len
count>`` then per member ``<string member> <8-byte little-endian double>``.

Read: type 5; type 3 (the old ZSET: each score a length byte and its decimal
text, or 253/254/255 for nan/+inf/-inf); type 12 (a ziplist blob, Redis
before 7.0) and type 17 (a listpack blob, Redis 7.0+), both alternating
member and score, a score held as decimal text or as an integer.  A loaded
sorted set takes the encoding Redis gives it on load with the default
limits: listpack when at most 128 members of at most 64 bytes, else
skiplist.  Cost: O(N log N) to load, O(N) to write.
"""

from __future__ import annotations

import math
import struct

from ..types import listpack
from ..types.zset import DEFAULT_LIMITS, ZSet
from .format import Reader, length_bytes, string_bytes, ziplist_entries

TYPE_ZSET = 3
TYPE_ZSET_2 = 5
TYPE_ZSET_ZIPLIST = 12
TYPE_ZSET_LISTPACK = 17

_DOUBLE = struct.Struct("<d")


def write_zset(value: ZSet, compress: bool) -> tuple[int, bytes]:
    out = [length_bytes(len(value))]
    for member, score in value.items():
        out.append(string_bytes(member, compress))
        out.append(_DOUBLE.pack(score))
    return TYPE_ZSET_2, b"".join(out)


def _loaded(pairs: list[tuple[bytes, float]], r: Reader, at: int) -> ZSet:
    if not pairs:
        raise r.fail("empty sorted set", at)
    if any(math.isnan(s) for _, s in pairs):
        raise r.fail("sorted set score is NaN", at)
    z = ZSet.built(pairs, DEFAULT_LIMITS)
    if len(z) != len(pairs):
        raise r.fail("duplicate sorted set member", at)
    return z


def read_zset_2(r: Reader) -> ZSet:
    at = r.pos
    pairs = []
    for _ in range(r.length()):
        member = r.string()
        pairs.append((member, _DOUBLE.unpack(r.raw(8))[0]))
    return _loaded(pairs, r, at)


def read_zset(r: Reader) -> ZSet:
    at = r.pos
    pairs = []
    for _ in range(r.length()):
        member = r.string()
        n = r.byte()
        if n == 253:
            score = math.nan
        elif n == 254:
            score = math.inf
        elif n == 255:
            score = -math.inf
        else:
            try:
                score = float(r.raw(n))
            except ValueError:
                raise r.fail("bad sorted set score", at) from None
        pairs.append((member, score))
    return _loaded(pairs, r, at)


def _alternating(values: list, r: Reader, at: int) -> ZSet:
    if len(values) % 2:
        raise r.fail("sorted set blob with an odd number of elements", at)
    pairs = []
    for member, score in zip(values[0::2], values[1::2]):
        member = member if isinstance(member, bytes) else b"%d" % member
        try:
            pairs.append((member, float(score)))
        except ValueError:
            raise r.fail("bad sorted set score", at) from None
    return _loaded(pairs, r, at)


def read_zset_listpack(r: Reader) -> ZSet:
    at = r.pos
    blob = r.string()
    try:
        values = listpack.unpack(blob, strict=False)
    except listpack.ListpackError as exc:
        raise r.fail(f"bad sorted set listpack: {exc}", at) from None
    return _alternating(values, r, at)


def read_zset_ziplist(r: Reader) -> ZSet:
    at = r.pos
    blob = r.string()
    try:
        values = ziplist_entries(blob)
    except (ValueError, struct.error) as exc:
        raise r.fail(f"bad sorted set ziplist: {exc}", at) from None
    return _alternating(values, r, at)


READERS = {
    TYPE_ZSET: read_zset,
    TYPE_ZSET_2: read_zset_2,
    TYPE_ZSET_ZIPLIST: read_zset_ziplist,
    TYPE_ZSET_LISTPACK: read_zset_listpack,
}
