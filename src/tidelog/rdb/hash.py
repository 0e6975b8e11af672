"""Hashes in RDB files: the writer and the readers of every hash encoding.

Written as Redis 7.0 writes them: a listpack-encoded hash as type 16 (the
listpack blob, fields and values alternating), a hashtable-encoded one as
type 4 (a length, then field and value strings).  A hash with field TTLs
(Redis 7.4's HEXPIRE) has no such form: it is written as type 24, which
makes the whole file RDB 12 (see rdb.py).  Read: types 4, 16, 13 (a
ziplist blob, Redis before 7.0), 9 (a zipmap blob, Redis before 2.6), and
24 and 25 (Redis 7.4+, with field TTLs).

A loaded hash takes the encoding Redis gives it when it loads a snapshot
with the default thresholds (512 fields, 64 bytes): a listpack when it fits
them, a hashtable otherwise.  Costs: O(size of the value) both ways.
"""

from __future__ import annotations

import struct

from ..types import listpack
from ..types.hash import Hash
from .format import Reader, length_bytes, string_bytes, ziplist_entries

TYPE_HASH = 4
TYPE_HASH_ZIPMAP = 9
TYPE_HASH_ZIPLIST = 13
TYPE_HASH_LISTPACK = 16
TYPE_HASH_METADATA = 24     # Redis 7.4+, RDB 12: a hash with field TTLs
TYPE_HASH_LISTPACK_EX = 25  # Redis 7.4+, RDB 12: a small hash with field TTLs

# Redis's defaults: a loaded hash within them is a listpack.
LOAD_MAX_ENTRIES = 512
LOAD_MAX_VALUE = 64


def write_hash(h: Hash, compress: bool) -> tuple[int, bytes]:
    """(type byte, payload) of one hash.  A hash with field TTLs is type 24
    (:func:`write_hash_metadata`), which only RDB 12 (Redis 7.4+) has."""
    if h.ttl:
        return TYPE_HASH_METADATA, write_hash_metadata(h, compress)
    if not h.big:
        blob = listpack.pack(h.flat())
        return TYPE_HASH_LISTPACK, string_bytes(blob, compress)
    out = [length_bytes(len(h))]
    for field, value in h.map.items():
        out.append(string_bytes(field, compress))
        out.append(string_bytes(value, compress))
    return TYPE_HASH, b"".join(out)


def write_hash_metadata(h: Hash, compress: bool) -> bytes:
    """Type 24's payload, the layout Redis 7.4 writes: the earliest field
    deadline (8 bytes, little-endian Unix ms), the field count, then per
    field its TTL as a length (0: none, else deadline - earliest + 1), the
    field and the value.  O(N)."""
    earliest = min(h.ttl.values())
    out = [struct.pack("<q", earliest), length_bytes(len(h))]
    ttl = h.ttl
    for field, value in h.map.items():
        when = ttl.get(field)
        out.append(length_bytes(0 if when is None else when - earliest + 1))
        out.append(string_bytes(field, compress))
        out.append(string_bytes(value, compress))
    return b"".join(out)


def read_hash_metadata(r: Reader) -> Hash:
    """Type 24 (see :func:`write_hash_metadata`)."""
    earliest = r.int64()
    n = r.length()
    items: dict[bytes, bytes] = {}
    deadlines: dict[bytes, int] = {}
    for _ in range(n):
        ttl = r.length()
        field = r.string()
        items[field] = r.string()
        if ttl:
            deadlines[field] = earliest + ttl - 1
    if len(items) != n:
        raise r.fail("hash with a duplicate field")
    if not items:
        raise r.fail("empty hash")
    return _with_ttls(items, deadlines)


def read_hash_listpack_ex(r: Reader) -> Hash:
    """Type 25: the earliest deadline (8 bytes, unused here), then a
    listpack of (field, value, deadline) triplets, deadline 0 for none."""
    r.int64()
    at = r.pos
    blob = r.string()
    try:
        values = listpack.unpack(blob, strict=False)
    except listpack.ListpackError as exc:
        raise r.fail(f"bad hash listpack: {exc}", at) from None
    if len(values) % 3 or not values:
        raise r.fail("hash listpack-ex without whole triplets", at)
    items: dict[bytes, bytes] = {}
    deadlines: dict[bytes, int] = {}
    for i in range(0, len(values), 3):
        field, value, when = values[i:i + 3]
        field = field if type(field) is bytes else b"%d" % field
        items[field] = value if type(value) is bytes else b"%d" % value
        if type(when) is not int or when < 0:
            raise r.fail("bad field TTL in a hash listpack-ex", at)
        if when:
            deadlines[field] = when
    if len(items) != len(values) // 3:
        raise r.fail("hash blob with a duplicate field", at)
    return _with_ttls(items, deadlines)


def _with_ttls(items: dict[bytes, bytes], deadlines: dict[bytes, int]) -> Hash:
    h = Hash(items)
    h.big = not h.fits_listpack(LOAD_MAX_ENTRIES, LOAD_MAX_VALUE)
    h.ex = True
    for field, when in deadlines.items():
        h.set_ttl(field, when)
    return h


def _hash_of(flat: list[bytes], r: Reader) -> Hash:
    if len(flat) % 2:
        raise r.fail("hash blob with an odd number of elements")
    items = dict(zip(flat[0::2], flat[1::2]))
    if len(items) != len(flat) // 2:
        raise r.fail("hash blob with a duplicate field")
    if not items:
        raise r.fail("empty hash")
    h = Hash(items)
    h.big = not h.fits_listpack(LOAD_MAX_ENTRIES, LOAD_MAX_VALUE)
    return h


def read_hash(r: Reader) -> Hash:
    """Type 4: a length, then field and value strings."""
    n = r.length()
    flat = []
    for _ in range(2 * n):
        flat.append(r.string())
    return _hash_of(flat, r)


def read_hash_listpack(r: Reader) -> Hash:
    """Type 16: a listpack of fields and values."""
    at = r.pos
    blob = r.string()
    try:
        values = listpack.unpack(blob, strict=False)
    except listpack.ListpackError as exc:
        raise r.fail(f"bad hash listpack: {exc}", at) from None
    return _hash_of([v if type(v) is bytes else b"%d" % v for v in values], r)


def read_hash_ziplist(r: Reader) -> Hash:
    """Type 13: a ziplist of fields and values (Redis 2.6-6.2)."""
    at = r.pos
    blob = r.string()
    try:
        flat = ziplist_entries(blob)
    except (ValueError, IndexError, struct.error) as exc:
        raise r.fail(f"bad hash ziplist: {exc}", at) from None
    return _hash_of(flat, r)


def zipmap_values(blob: bytes) -> list[bytes]:
    """Fields and values of a zipmap (Redis before 2.6)."""
    p = 1  # the count byte (254: unknown)
    out: list[bytes] = []

    def length() -> int:
        nonlocal p
        b = blob[p]
        if b < 254:
            p += 1
            return b
        if b == 254:
            n = int.from_bytes(blob[p + 1:p + 5], "little")
            p += 5
            return n
        raise ValueError("zipmap ends inside an entry")

    while blob[p] != 0xFF:
        n = length()
        out.append(bytes(blob[p:p + n]))
        p += n
        n = length()
        free = blob[p]
        p += 1
        out.append(bytes(blob[p:p + n]))
        p += n + free
    return out


def read_hash_zipmap(r: Reader) -> Hash:
    """Type 9: a zipmap."""
    at = r.pos
    blob = r.string()
    try:
        flat = zipmap_values(blob)
    except (ValueError, IndexError) as exc:
        raise r.fail(f"bad hash zipmap: {exc}", at) from None
    return _hash_of(flat, r)


READERS = {
    TYPE_HASH: read_hash,
    TYPE_HASH_LISTPACK: read_hash_listpack,
    TYPE_HASH_ZIPLIST: read_hash_ziplist,
    TYPE_HASH_ZIPMAP: read_hash_zipmap,
    TYPE_HASH_METADATA: read_hash_metadata,
    TYPE_HASH_LISTPACK_EX: read_hash_listpack_ex,
}
