"""One value in Redis's RDB encoding: the part of the format a snapshot, an
AOF's RDB preamble and DUMP/RESTORE share.

A value is ``<type byte>`` then its bytes (strings and streams here; the
other types in a module each: :mod:`.hash`, :mod:`.list`, :mod:`.set`,
:mod:`.zset`, :mod:`.array`, plugged in through :data:`VALUE_WRITERS` and
:data:`VALUE_READERS`).  The stream layout is described in
:mod:`tidelog.persistence.rdb`, with the file around it.

DUMP's payload is ``<type byte><the value as a snapshot writes it>
<2-byte little-endian RDB version><8-byte little-endian CRC-64 of everything
before it>`` (:func:`value_payload`, :func:`value_from_payload`).

Nothing here knows a file, a database or the engine: the format is a leaf
below the command layer, as the wire format (:mod:`tidelog.resp`) is.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ids import MIN_ID, StreamID
from ..types.groups import ConsumerGroup, estimate_entries_read
from ..types.hash import Hash
from ..types.set import Set
from ..types.stream import CorruptStream, Stream
from ..types.zset import ZSet
from . import array as rdb_array
from . import hash as rdb_hash
from . import list as rdb_list
from . import set as rdb_set
from . import zset as rdb_zset
from .format import _I64, _ID, _M64, _U64, RdbError, Reader, crc64, length_bytes, string_bytes

DEFAULT_VERSION = 10
_U16 = struct.Struct("<H")
WRITABLE_VERSIONS = (10, 11)
MAX_READ_VERSION = 15  # 12 (Redis 7.4): hashes with field TTLs (types 24, 25); 14: arrays; 15: 8.10
# A snapshot holding a hash with field TTLs is written as this version
# whatever rdb-version says (redis-server before 7.4 cannot load it).
FIELD_TTL_VERSION = 12

TYPE_STRING = 0
# A function library's code (a snapshot's opcode, and FUNCTION DUMP's payload).
OP_FUNCTION2 = 0xF5
TYPE_STREAM_LISTPACKS = 15
TYPE_STREAM_LISTPACKS_2 = 19
TYPE_STREAM_LISTPACKS_3 = 21
_STREAM_TYPES = (TYPE_STREAM_LISTPACKS, TYPE_STREAM_LISTPACKS_2, TYPE_STREAM_LISTPACKS_3)
# The value types beyond strings and streams, each encoded by a module of its
# own: Python class -> writer(value, compress) -> (RDB type byte, the value's
# bytes), and RDB type byte -> reader(reader) -> value (one reader per
# encoding Redis writes for the type).
VALUE_WRITERS: dict[type, Callable[[Any, bool], tuple[int, bytes]]] = {}
VALUE_READERS: dict[int, Callable[[Reader], Any]] = {}
VALUE_WRITERS[Hash] = rdb_hash.write_hash
VALUE_READERS.update(rdb_hash.READERS)

# Sets (rdb_set.py): written as type 11 (intset) or 2; read as 2, 11 and 20.
VALUE_WRITERS[Set] = rdb_set.write_set
VALUE_READERS[rdb_set.TYPE_SET] = rdb_set.read_set
VALUE_READERS[rdb_set.TYPE_SET_INTSET] = rdb_set.read_intset
VALUE_READERS[rdb_set.TYPE_SET_LISTPACK] = rdb_set.read_set_listpack
rdb_list.register(VALUE_WRITERS, VALUE_READERS)

# Sorted sets (rdb_zset.py): written as type 5; read as 3, 5, 12 and 17.
VALUE_WRITERS[ZSet] = rdb_zset.write_zset
VALUE_READERS.update(rdb_zset.READERS)

# Arrays (rdb_array.py, Redis 8.8): type 28, only in RDB 14 and later.
rdb_array.register(VALUE_WRITERS, VALUE_READERS)

_TYPE_NAMES = {
    1: "list", 2: "set", 3: "zset", 4: "hash", 5: "zset", 6: "module", 7: "module",
    9: "hash (zipmap)", 10: "list (ziplist)", 11: "set (intset)", 12: "zset (ziplist)",
    13: "hash (ziplist)", 14: "list (quicklist)", 16: "hash (listpack)",
    22: "hash with field TTLs (7.4 RC)", 23: "hash listpack-ex (7.4 RC)",
    17: "zset (listpack)", 18: "list (quicklist)", 20: "set (listpack)",
}



@dataclass
class SaveStats:
    keys: int = 0
    dropped_unowned: int = 0   # XNACK'd pending entries (no Redis 7 encoding)
    dropped_idmp: int = 0      # streams whose IDMP state was left out
    field_ttl_hashes: int = 0  # hashes with field TTLs, written as type 24 (RDB 12)
    arrays: int = 0            # arrays, written as type 28 (RDB 15, as Redis 8.10)


def _write_stream(out: list[bytes], stream: Stream, rdbtype: int, compress: bool,
                  stats: SaveStats) -> None:
    nodes = list(stream.nodes())
    out.append(length_bytes(len(nodes)))
    pack_id = _ID.pack
    for key, lp in nodes:
        out.append(b"\x10" + pack_id(key[0], key[1]))
        out.append(string_bytes(lp, compress) if compress else length_bytes(len(lp)) + lp)
    last = stream.last_id
    out.append(length_bytes(stream.length) + length_bytes(last[0]) + length_bytes(last[1]))
    if rdbtype >= TYPE_STREAM_LISTPACKS_2:
        first, deleted = stream.first_id, stream.max_deleted_entry_id
        out.append(length_bytes(first[0]) + length_bytes(first[1])
                   + length_bytes(deleted[0]) + length_bytes(deleted[1])
                   + length_bytes(stream.entries_added))
    if stream.idmp is not None and stream.idmp.producers:
        stats.dropped_idmp += 1
    groups = sorted(stream.groups.items())
    out.append(length_bytes(len(groups)))
    for name, group in groups:
        out.append(string_bytes(name, False))
        out.append(length_bytes(group.last_id[0]) + length_bytes(group.last_id[1]))
        if rdbtype >= TYPE_STREAM_LISTPACKS_2:
            out.append(length_bytes(group.entries_read & _M64))
        owned = [entry for entry in group.pel.values() if entry.consumer is not None]
        stats.dropped_unowned += len(group.pel) - len(owned)
        out.append(length_bytes(len(owned)))
        out.extend(pack_id(*entry.id) + _I64.pack(entry.delivery_time)
                   + length_bytes(entry.delivery_count) for entry in owned)
        out.append(length_bytes(len(group.consumers)))
        for cname, consumer in group.consumers.items():
            out.append(string_bytes(cname, False))
            out.append(_I64.pack(consumer.seen_time))
            if rdbtype >= TYPE_STREAM_LISTPACKS_3:
                out.append(_I64.pack(consumer.active_time))
            out.append(length_bytes(len(consumer.pel)))
            out.extend(pack_id(*id) for id in consumer.pel)


def _write_value(out: list[bytes], key: bytes | None, value: Any, stream_type: int,
                 compress: bool, stats: SaveStats) -> None:
    """One value: its type byte, the key (unless None: a DUMP payload has
    none) and the value's bytes, appended to ``out``."""
    keyed = b"" if key is None else string_bytes(key, compress)
    if type(value) is Stream:
        out.append(bytes((stream_type,)) + keyed)
        _write_stream(out, value, stream_type, compress, stats)
    elif type(value) is bytes:
        out.append(b"\x00" + keyed + string_bytes(value, compress))
    else:
        rdbtype, payload = VALUE_WRITERS[type(value)](value, compress)
        out.append(bytes((rdbtype,)) + keyed + payload)
        if rdbtype == rdb_hash.TYPE_HASH_METADATA:
            stats.field_ttl_hashes += 1
        elif rdbtype == rdb_array.TYPE_ARRAY:
            stats.arrays += 1


def value_payload(value: Any, *, version: int = DEFAULT_VERSION, compress: bool = True) -> bytes:
    """DUMP's serialisation of one value: ``<type byte><value in RDB encoding>
    <2-byte LE RDB version><8-byte LE CRC-64 of everything before it>``, the
    value written exactly as a snapshot of ``version`` writes it.  O(size)."""
    if version not in WRITABLE_VERSIONS:
        raise ValueError(f"cannot write RDB version {version}")
    stream_type = TYPE_STREAM_LISTPACKS_3 if version >= 11 else TYPE_STREAM_LISTPACKS_2
    out: list[bytes] = []
    stats = SaveStats()
    _write_value(out, None, value, stream_type, compress, stats)
    if stats.field_ttl_hashes:  # a hash with field TTLs exists only from RDB 12 on
        version = FIELD_TTL_VERSION
    if stats.arrays:  # an array exists only from RDB 14 on; written as Redis 8.10 (15)
        version = rdb_array.ARRAY_VERSION
    out.append(_U16.pack(version))
    body = b"".join(out)
    return body + _U64.pack(crc64(body))


class PayloadError(ValueError):
    """A DUMP payload that cannot be restored: ``version_or_checksum`` says
    which of RESTORE's two errors applies (the footer, or the value's bytes)."""

    def __init__(self, message: str, version_or_checksum: bool) -> None:
        super().__init__(message)
        self.version_or_checksum = version_or_checksum


def payload_version(payload: bytes) -> int:
    """The RDB version in a DUMP payload's footer (-1 when it is too short)."""
    return _U16.unpack_from(payload, len(payload) - 10)[0] if len(payload) >= 10 else -1


def value_from_payload(payload: bytes, *, verify_checksum: bool = True) -> Any:
    """The value of a DUMP payload (:func:`value_payload`'s inverse, and the
    reader of any payload Redis 7.0-7.4 writes for the types read here).

    Raises :class:`PayloadError`: a payload under 10 bytes, of an RDB
    version above the newest read, or whose CRC-64 does not match (unless
    ``verify_checksum`` is false) is refused as a whole; one whose value
    bytes do not parse is bad data.  O(size)."""
    version = payload_version(payload)
    if version < 0 or version > MAX_READ_VERSION:
        raise PayloadError(f"RDB version {version} not readable", True)
    body = memoryview(payload)[:len(payload) - 8]
    if verify_checksum and crc64(body) != _U64.unpack_from(payload, len(payload) - 8)[0]:
        raise PayloadError("checksum mismatch", True)
    r = Reader(bytes(payload[:len(payload) - 10]))
    try:
        op = r.byte()
        if op == TYPE_STRING:
            value: Any = r.string()
        elif op in _STREAM_TYPES:
            value = _read_stream(r, op, b"", 0)
        elif op in VALUE_READERS:
            value = VALUE_READERS[op](r)
        else:
            raise RdbError(f"unsupported value type {op}", 0)
    except (RdbError, ValueError, IndexError) as exc:
        raise PayloadError(str(exc), False) from None
    return value  # bytes left after the value are ignored, as redis-server 7.0.15 does



def _read_stream(r: Reader, rdbtype: int, key: bytes, key_at: int) -> Stream:
    count = r.length()
    nodes = []
    data = r.data
    end = r.end
    unpack_id = _ID.unpack_from
    new_id = tuple.__new__  # StreamID from unpack_from's tuple, without NamedTuple's __new__
    for _ in range(count):
        at = p = r.pos
        # Fast path: the node key as a plain 16-byte string, the listpack's
        # length in 1, 2 or 5 bytes, no compression.
        if p + 19 < end and data[p] == 0x10 and data[p + 17] < 0xC0:
            master_id = new_id(StreamID, unpack_id(data, p + 1))
            p += 17
            b = data[p]
            if b < 0x40:
                n, p = b, p + 1
            elif b < 0x80:
                n, p = ((b & 0x3F) << 8) | data[p + 1], p + 2
            elif b == 0x80 and p + 5 <= end:
                n, p = int.from_bytes(data[p + 1:p + 5], "big"), p + 5
            else:
                n = -1
            if 0 <= n and p + n <= end:
                r.pos = p + n
                nodes.append((master_id, data[p:p + n]))
                continue
        master = r.string()
        if len(master) != 16:
            raise r.fail(f"stream {key!r}: node key is {len(master)} bytes, not 16", at)
        blob = r.string()
        ms, seq = _ID.unpack(master)
        nodes.append((StreamID(ms, seq), blob))
    length = r.length()
    last = StreamID(r.length(), r.length())
    first: StreamID | None = None
    deleted = MIN_ID
    added: int | None = None
    if rdbtype >= TYPE_STREAM_LISTPACKS_2:
        first = StreamID(r.length(), r.length())
        deleted = StreamID(r.length(), r.length())
        added = r.length()
    try:
        stream = Stream.from_nodes(nodes, length, last, first, deleted, added)
    except CorruptStream as exc:
        raise RdbError(f"stream {key!r}: {exc}", key_at) from None
    for _ in range(r.length()):
        at = r.pos
        name = r.string()
        if name in stream.groups:
            raise r.fail(f"stream {key!r}: duplicate group {name!r}", at)
        group_last = StreamID(r.length(), r.length())
        if rdbtype >= TYPE_STREAM_LISTPACKS_2:
            entries_read = r.length()
            if entries_read > (1 << 63) - 1:
                entries_read = -1
        else:
            entries_read = estimate_entries_read(stream, group_last)
        group = ConsumerGroup(name, group_last, entries_read)
        pel: dict[StreamID, tuple[int, int]] = {}
        for _ in range(r.length()):
            at = r.pos
            id = r.stream_id()
            if id in pel:
                raise r.fail(f"stream {key!r} group {name!r}: duplicate pending ID {id}", at)
            when = r.int64()
            pel[id] = (when, r.length())
        for _ in range(r.length()):
            at = r.pos
            cname = r.string()
            if cname in group.consumers:
                raise r.fail(f"stream {key!r} group {name!r}: duplicate consumer {cname!r}", at)
            seen = r.int64()
            active = r.int64() if rdbtype >= TYPE_STREAM_LISTPACKS_3 else seen
            consumer, _ = group.create_consumer(cname, seen)
            consumer.active_time = active
            for _ in range(r.length()):
                at = r.pos
                id = r.stream_id()
                found = pel.pop(id, None)
                if found is None:
                    raise r.fail(f"stream {key!r} group {name!r}: consumer {cname!r} entry "
                                 f"{id} not found in the group's pending list", at)
                group.claim(id, consumer, found[0], found[1])
        for id, (when, deliveries) in pel.items():  # no owner: Redis 7 cannot write this
            group.add_unowned(id, deliveries, when)
        stream.groups[name] = group
    return stream




def libraries_payload(codes: list[bytes], version: int, compress: bool) -> bytes:
    """FUNCTION DUMP's payload: per library the function opcode and its code
    as an RDB string, then the 2-byte LE RDB version and the 8-byte LE CRC-64
    of everything before it (what redis-server 7.0 writes).  O(total size)."""
    body = b"".join(bytes((OP_FUNCTION2,)) + string_bytes(code, compress) for code in codes)
    body += _U16.pack(version)
    return body + _U64.pack(crc64(body))


def libraries_from_payload(payload: bytes) -> list[bytes]:
    """The library codes of a FUNCTION DUMP payload.  Raises
    :class:`PayloadError`: ``version_or_checksum`` for a short payload, a
    version above the newest read or a wrong CRC-64; else for bytes that are
    not function opcodes and strings.  O(size)."""
    if len(payload) < 10:
        raise PayloadError("payload too short", True)
    version = payload_version(payload)
    body = memoryview(payload)[:len(payload) - 8]
    if version > MAX_READ_VERSION or crc64(body) != _U64.unpack_from(payload, len(payload) - 8)[0]:
        raise PayloadError("version or checksum", True)
    r = Reader(bytes(payload[:len(payload) - 10]))
    codes = []
    try:
        while r.pos < len(r.data):
            if r.byte() != OP_FUNCTION2:
                raise PayloadError("not a function library", False)
            codes.append(r.string())
    except (RdbError, ValueError, IndexError):
        raise PayloadError("bad library data", False) from None
    return codes
