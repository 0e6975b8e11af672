"""Arrays in RDB files (Redis 8.8, type 28; RDB version 14 and later).

Public format facts (the layout readers of Redis 8.8 files document)::

    <len count> <len cursor-flag: 0 or 1> [<len insert_idx>]
    count times, ascending index:
        <len index> <len tag> <payload>

The tag says how Redis held the value in memory, and the payload follows
it: 1, an integer of at most 62 bits, as 8 little-endian bytes (int64);
2, a double Redis inlined (its two lowest bits zero, printing back as the
stored bytes), as 8 little-endian bytes; 3, a string of at most 7 bytes,
and 0, any other string, as an RDB string (integer-encoded or LZF
compressed like every RDB string).  :func:`~tidelog.types.array.value_tag`
decides the tag exactly as Redis's encoder does, so a DUMP of an array is
byte for byte Redis 8.10's.  The cursor is the last index ARINSERT / ARRING
wrote (flag 0: none).  Cost: O(N) each way.
"""

from __future__ import annotations

import struct
from typing import Any

from ..types.array import (
    INDEX_MAX,
    TAG_FLOAT,
    TAG_INT,
    TAG_SMALL,
    TAG_STRING,
    Array,
    float_text,
    value_tag,
)
from .format import Reader, length_bytes, string_bytes

TYPE_ARRAY = 28
# Arrays came with RDB 14 (Redis 8.8); Redis 8.10, the version Tidelog
# reports, writes RDB 15, so a DUMP of an array carries 15 as 8.10's does.
ARRAY_VERSION = 15

_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")


def write_array(value: Array, compress: bool) -> tuple[int, bytes]:
    out = [length_bytes(len(value))]
    cursor = value.insert_idx
    out.append(b"\x00" if cursor is None else b"\x01" + length_bytes(cursor))
    for idx, item in value.items():
        tag, number = value_tag(item)
        head = length_bytes(idx)
        if tag == TAG_INT:
            out.append(head + b"\x01" + _I64.pack(number))
        elif tag == TAG_FLOAT:
            out.append(head + b"\x02" + _F64.pack(number))
        else:
            out.append(head + bytes((tag,)) + string_bytes(item, compress))
    return TYPE_ARRAY, b"".join(out)


def read_array(r: Reader, slice_size: int = 4096) -> Array:
    at = r.pos
    count = r.length()
    flag = r.length()
    if flag not in (0, 1):
        raise r.fail("bad array cursor flag", at)
    cursor = r.length() if flag else None
    if cursor is not None and cursor > INDEX_MAX:
        raise r.fail("array cursor out of range", at)
    ar = Array(slice_size)
    last = -1
    for _ in range(count):
        at = r.pos
        idx = r.length()
        if idx > INDEX_MAX or idx <= last:
            raise r.fail("array index out of range or out of order", at)
        last = idx
        tag = r.length()
        if tag == TAG_INT:
            value = b"%d" % _I64.unpack(r.raw(8))[0]
        elif tag == TAG_FLOAT:
            value = float_text(_F64.unpack(r.raw(8))[0])
        elif tag in (TAG_SMALL, TAG_STRING):
            value = r.string()
        else:
            raise r.fail("unknown array value tag", at)
        ar.set(idx, value)
    if not count:
        raise r.fail("empty array", at)
    ar.insert_idx = cursor
    return ar


def with_settings(ar: Array, config: Any) -> Array:
    """The loaded array as the server's array settings shape it (Redis
    builds a loaded array under the settings in force): the same array
    when they are the defaults it was read with, else a rebuilt copy.
    O(1), or O(N) when rebuilt."""
    settings = (config["array-slice-size"], config["array-sparse-kmax"],
                config["array-sparse-kmin"])
    if settings == (ar.slice_size, ar.kmax, ar.kmin):
        return ar
    fresh = Array(*settings)
    for idx, item in ar.items():
        fresh.set(idx, item)
    fresh.insert_idx = ar.insert_idx
    return fresh


def register(writers: dict, readers: dict) -> None:
    writers[Array] = write_array
    readers[TYPE_ARRAY] = read_array
