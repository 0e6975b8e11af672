"""Snapshots in Redis's RDB format: a writer and a loader.

The file layout (public RDB format facts; nothing here is taken from Redis's
code)::

    "REDIS" + 4-digit version          b"REDIS0010"
    0xFA aux-key aux-value ...         redis-ver, redis-bits, ctime, used-mem, aof-base
    0xFE <len db>                      SELECTDB, then
    0xFB <len keys> <len expires>      RESIZEDB (a sizing hint)
    [0xFC <int64 LE ms>]               EXPIRETIME_MS of the next key (0xFD: 4-byte seconds)
    <type byte> <string key> <value>   one per key
    ...
    0xFF                               EOF
    <8 bytes LE>                       CRC-64 (Jones polynomial, reflected, init 0) of
                                       everything before it; 0 = not computed

Lengths: the top two bits of the first byte say 6-bit, 14-bit (big-endian),
0x80 + 32-bit BE, 0x81 + 64-bit BE; 0b11 marks an encoded *string*: 0xC0/0xC1/
0xC2 an int8/int16/int32 (little-endian) written in decimal, 0xC3 an LZF
block (compressed length, plain length, data).

Value types read: 0 (string), streams 15 (RDB 9, Redis 5), 19 (RDB 10, Redis
7.0) and 21 (RDB 11, Redis 7.2).  Written: strings, and streams as type 19
in an RDB version 10 file (default: Debian's redis-server 7.0.15 refuses any
version above 10), or type 21 in a version 11 file with ``rdb-version 11``.
The trade-off: version 11 keeps each consumer's ``active-time``
(XINFO ``inactive``), which version 10 cannot hold -- loading a version 10
file sets it to the consumer's seen-time, as Redis 7.2 does -- but only Redis
7.2 and later read it.

A stream is (see ``types/stream.py`` for the node bytes, which are Redis
listpacks byte for byte, so they move as whole blobs and are never decoded
here)::

    <len nodes> { <string 16-byte master ID, BE ms + BE seq> <string listpack> }
    <len length> <len last.ms> <len last.seq>
    type >= 19: <len first.ms> <len first.seq> <len max_deleted.ms> <len .seq>
                <len entries_added>
    <len groups> per group (name order):
        <string name> <len last.ms> <len last.seq>
        type >= 19: <len entries_read>     (2**64 - 1: unknown)
        <len pending> { <16 raw bytes ID> <int64 LE delivery ms> <len delivery count> }
        <len consumers> per consumer (name order):
            <string name> <int64 LE seen-time ms>
            type >= 21: <int64 LE active-time ms>
            <len pending> { <16 raw bytes ID> }   (each in the group's list above)

What no Redis 7 encoding can hold, and so a snapshot leaves out (logged as a
warning when it happens): a stream's IDMP state (XADD IDMP, Redis 8.6) and
unowned pending entries (XNACK, Redis 8.8).  Redis 8.6/8.8 keep them in
stream types 26/27, whose byte layout is not verified here.  Until then the
AOF is what keeps them: run with ``appendonly yes`` when they matter.  A
group-PEL entry without a consumer met in a file (Redis 7 cannot produce one)
is loaded as unowned.

Keys whose expiry time has passed are skipped on load, as a Redis primary
does.  The CRC-64 and LZF use C implementations when the optional packages
``anycrc`` and ``python-lzf`` are installed (several GB/s), and pure Python
otherwise (correct, but about 100x slower on large files).  Compression on
write (``rdbcompression yes``) needs ``python-lzf``; without it strings are
written plain, which every reader accepts.
"""

from __future__ import annotations

import gc
import logging
import mmap
import os
import random
import resource
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import REDIS_VERSION
from ..errors import CommandError
from ..ids import MIN_ID, StreamID
from ..types.array import Array
from ..types.groups import ConsumerGroup, estimate_entries_read
from ..types.hash import Hash
from ..types.set import Set
from ..types.stream import CorruptStream, Stream
from ..types.zset import ZSet
from . import rdb_array, rdb_hash, rdb_list, rdb_set, rdb_zset
from .rdb_format import (  # noqa: F401 (crc64, lzf_* and RdbError are this module's API too)
    _I64,
    _ID,
    _M64,
    _U64,
    LzfError,
    RdbError,
    Reader,
    crc64,
    crc64_py,
    length_bytes,
    lzf_compress,
    lzf_decompress,
    lzf_decompress_py,
    string_bytes,
)

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("tidelog")

DEFAULT_VERSION = 10
_U16 = struct.Struct("<H")
WRITABLE_VERSIONS = (10, 11)
MAX_READ_VERSION = 15  # 12 (Redis 7.4): hashes with field TTLs (types 24, 25); 14: arrays; 15: 8.10
# A snapshot holding a hash with field TTLs is written as this version
# whatever rdb-version says (redis-server before 7.4 cannot load it).
FIELD_TTL_VERSION = 12

OP_FUNCTION2 = 0xF5
OP_FUNCTION_PRE_GA = 0xF6
OP_MODULE_AUX = 0xF7
OP_IDLE = 0xF8
OP_FREQ = 0xF9
OP_AUX = 0xFA
OP_RESIZEDB = 0xFB
OP_EXPIRETIME_MS = 0xFC
OP_EXPIRETIME = 0xFD
OP_SELECTDB = 0xFE
OP_EOF = 0xFF

TYPE_STRING = 0
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


def dumps(dbs: list[Any], *, version: int = DEFAULT_VERSION, compress: bool = True,
          checksum: bool = True, aof_base: bool = False, now_ms: int | None = None,
          stats: SaveStats | None = None, aux: dict[bytes, bytes] | None = None,
          functions: list[bytes] | None = None) -> bytes:
    """The whole snapshot of ``dbs`` (a list of :class:`~tidelog.keyspace.Database`),
    with the code of each library in ``functions`` (Redis's function opcode).
    ``aux``: more AUX fields (a replica's ``repl-id`` and ``repl-offset``).

    Cost: O(total bytes); stream nodes are copied as blobs, never decoded.
    """
    if version not in WRITABLE_VERSIONS:
        raise ValueError(f"cannot write RDB version {version}")
    stats = stats if stats is not None else SaveStats()
    stream_type = TYPE_STREAM_LISTPACKS_3 if version >= 11 else TYPE_STREAM_LISTPACKS_2
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    out: list[bytes] = [b"REDIS%04d" % version]
    used = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    for key, value in ((b"redis-ver", REDIS_VERSION.encode()), (b"redis-bits", b"64"),
                       (b"ctime", b"%d" % (now_ms // 1000)), (b"used-mem", b"%d" % used),
                       (b"aof-base", b"1" if aof_base else b"0"), *(aux or {}).items()):
        out.append(b"\xfa" + string_bytes(key, False) + string_bytes(value, False))
    for code in functions or ():
        out.append(bytes((OP_FUNCTION2,)) + string_bytes(code, compress))
    for db in dbs:
        data = db.data
        if not data:
            continue
        expires = db.expires
        out.append(b"\xfe" + length_bytes(db.index))
        out.append(b"\xfb" + length_bytes(len(data)) + length_bytes(len(expires)))
        for key, value in data.items():
            when = expires.get(key)
            if when is not None:
                out.append(b"\xfc" + _I64.pack(when))
            _write_value(out, key, value, stream_type, compress, stats)
            stats.keys += 1
    if stats.field_ttl_hashes and version < FIELD_TTL_VERSION:
        # Field TTLs exist only from RDB 12 on: say so rather than lose them.
        out[0] = b"REDIS%04d" % FIELD_TTL_VERSION
    if stats.arrays and version < rdb_array.ARRAY_VERSION:
        out[0] = b"REDIS%04d" % rdb_array.ARRAY_VERSION
    out.append(b"\xff")
    body = b"".join(out)
    return body + _U64.pack(crc64(body) if checksum else 0)


def _option(config: Any, name: str, default: Any) -> Any:
    try:
        return config[name]
    except KeyError:
        return default


def default_path(config: Any) -> str:
    return os.path.join(config["dir"], _option(config, "dbfilename", "dump.rdb"))


def write_file(engine: Engine, path: str | None = None, *, aof_base: bool = False) -> SaveStats:
    """Write a snapshot of every database to ``path`` (default ``<dir>/<dbfilename>``).

    Written to ``temp-<pid>.rdb`` beside it, fsynced, then renamed over it,
    so a crash leaves the old file or the new one, never half of one.
    Settings: ``rdb-version``, ``rdbcompression``, ``rdbchecksum``.
    ``aof_base``: the file is the base of an AOF (``aof-use-rdb-preamble``),
    said in its ``aof-base`` AUX field as Redis does.  Raises OSError when
    the file cannot be written.
    """
    config = engine.config
    path = default_path(config) if path is None else path
    stats = SaveStats()
    data = dumps(engine.dbs, version=_option(config, "rdb-version", DEFAULT_VERSION),
                 compress=_option(config, "rdbcompression", True),
                 checksum=_option(config, "rdbchecksum", True), aof_base=aof_base,
                 now_ms=engine.clock.now_ms(), stats=stats,
                 aux=engine.replication.snapshot_aux(),
                 functions=[lib.code for lib in engine.scripts.libraries.values()])
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f"temp-{os.getpid()}.rdb")
    try:
        os.makedirs(directory, exist_ok=True)  # an embedded server's ./data may not exist yet
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass
    if stats.field_ttl_hashes:
        log.warning("RDB snapshot written as RDB version %d: %d hashes have field TTLs "
                    "(type 24), which redis-server before 7.4 cannot load",
                    FIELD_TTL_VERSION, stats.field_ttl_hashes)
    if stats.dropped_unowned or stats.dropped_idmp:
        log.warning("RDB snapshot left out %d unowned (XNACK) pending entries and the IDMP "
                    "state of %d streams: RDB version %d has no encoding for them (the AOF "
                    "keeps them)", stats.dropped_unowned, stats.dropped_idmp,
                    _option(config, "rdb-version", DEFAULT_VERSION))
    return stats


# =====================================================================================
# Reading
# =====================================================================================
@dataclass
class Snapshot:
    """A parsed file: per database index, ``(key, value, expire_ms or None)``."""

    version: int = 0
    aux: dict[bytes, bytes] = field(default_factory=dict)
    dbs: dict[int, list[tuple[bytes, Any, int | None]]] = field(default_factory=dict)
    keys: int = 0
    expired_skipped: int = 0
    functions: list[bytes] = field(default_factory=list)  # the libraries' code
    end: int = 0  # offset just past the checksum: an AOF's commands follow an RDB preamble


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


def loads(data: bytes | mmap.mmap, *, now_ms: int | None = None, databases: int = 16,
          verify_checksum: bool = True) -> Snapshot:
    """Parse a whole RDB file.  Raises :class:`RdbError` naming the offset.

    The cyclic garbage collector is paused meanwhile: loading makes many
    objects and no garbage, and its passes would cost a third of the time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _loads(data, now_ms, databases, verify_checksum)
    finally:
        if enabled:
            gc.enable()


def _loads(data: bytes, now_ms: int | None, databases: int, verify_checksum: bool) -> Snapshot:
    r = Reader(data)
    snap = Snapshot()
    magic = r.raw(9) if len(data) >= 9 else b""
    if magic[:5] != b"REDIS" or not magic[5:].isdigit():
        raise RdbError("not an RDB file (no REDIS signature)", 0)
    version = int(magic[5:])
    if not 1 <= version <= MAX_READ_VERSION:
        raise RdbError(f"can't handle RDB format version {version}", 5)
    snap.version = version
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    db_index = 0
    items = snap.dbs.setdefault(0, [])
    expire: int | None = None
    while True:
        at = r.pos
        op = r.byte()
        if op == OP_EXPIRETIME_MS:
            expire = r.int64()
            continue
        if op == OP_EXPIRETIME:
            expire = int.from_bytes(r.raw(4), "little", signed=True) * 1000
            continue
        if op == OP_SELECTDB:
            db_index = r.length()
            if db_index >= databases:
                raise RdbError(f"database {db_index} is out of range (databases is "
                               f"{databases})", at)
            items = snap.dbs.setdefault(db_index, [])
            continue
        if op == OP_RESIZEDB:
            r.length()
            r.length()
            continue
        if op == OP_AUX:
            name = r.string()
            snap.aux[name] = r.string()
            continue
        if op == OP_IDLE:
            r.length()
            continue
        if op == OP_FREQ:
            r.byte()
            continue
        if op == OP_EOF:
            break
        if op == OP_FUNCTION2:
            snap.functions.append(r.string())
            continue
        if op in (OP_MODULE_AUX, OP_FUNCTION_PRE_GA):
            raise RdbError(f"unsupported RDB opcode 0x{op:02x} (modules and pre-GA functions "
                           "are not supported)", at)
        key_at = r.pos
        key = r.string()
        if op == TYPE_STRING:
            value: Any = r.string()
        elif op in _STREAM_TYPES:
            value = _read_stream(r, op, key, key_at)
        elif op in VALUE_READERS:
            value = VALUE_READERS[op](r)
        else:
            kind = _TYPE_NAMES.get(op)
            what = f"value type {op} ({kind})" if kind else f"value type or opcode {op}"
            raise RdbError(f"unsupported {what} for key {key!r}", at)
        emptied = False
        if type(value) is Hash and value.ttl:
            value.pop_expired(now_ms)  # fields already due are not loaded (as Redis)
            emptied = not len(value)
        if expire is not None and expire <= now_ms or emptied:
            snap.expired_skipped += 1
        else:
            items.append((key, value, expire))
            snap.keys += 1
        expire = None
    eof = r.pos
    if version >= 5:
        stored = _U64.unpack(r.raw(8))[0]
        if stored and verify_checksum:
            computed = crc64(memoryview(data)[:eof])
            if computed != stored:
                raise RdbError(f"wrong RDB checksum: expected {stored:016x}, computed "
                               f"{computed:016x}", eof)
    snap.end = r.pos
    return snap


@dataclass
class LoadInfo:
    keys: int
    expired_skipped: int
    seconds: float
    bytes: int
    version: int
    aux: dict[bytes, bytes]


def _key_load_delay(usec: int) -> None:
    """key-load-delay (a hidden option, for tests): sleep ``usec`` µs; a
    negative -n sleeps 1 µs once in n calls on average (Redis's debugDelay)."""
    if usec < 0:
        usec = 1 if random.randrange(-usec) == 0 else 0
    if usec:
        time.sleep(usec / 1_000_000)


def install(engine: Engine, snap: Snapshot, flush: bool = True, merge: bool = False) -> None:
    """Replace every database's contents (and the function libraries) with a
    parsed snapshot.  ``flush=False`` (DEBUG RELOAD NOFLUSH) keeps what is
    there and adds the snapshot's: a key or library already there is an
    RdbError (nothing changed) unless ``merge``, when the snapshot's wins."""
    if not flush and not merge:
        for index, items in snap.dbs.items():
            held = engine.dbs[index].data
            for key, _, _ in items:
                if key in held:
                    raise RdbError(f"duplicate key {key!r} in database {index}", 0)
    scripts = engine.scripts
    saved = dict(scripts.libraries), dict(scripts.functions)
    if flush:
        scripts.flush_functions()
    for code in snap.functions:
        try:
            scripts.load_library(code, flush or merge)
        except CommandError as exc:
            scripts.libraries, scripts.functions = saved
            raise RdbError(f"a function library does not load: {exc.message!r}", 0) from None
    for db in engine.dbs:
        if flush:
            db.flush()
    if flush:
        engine.tracking.flushed()  # clients that cache keys drop them all
    delay = engine.config["key-load-delay"]
    for index, items in snap.dbs.items():
        db = engine.dbs[index]
        for key, value, expire in items:
            if delay:
                _key_load_delay(delay)
            if type(value) is Array:
                value = rdb_array.with_settings(value, engine.config)
            db.set(key, value)
            if expire is not None:
                db.set_expire(key, expire)
    engine.rdb_last_load = (snap.keys, snap.expired_skipped)


def load_file(engine: Engine, path: str | None = None, flush: bool = True,
              merge: bool = False) -> LoadInfo:
    """Load ``path`` (default ``<dir>/<dbfilename>``) into the engine, replacing
    its data (``flush``, ``merge``: as :func:`install`).

    Nothing changes unless the whole file parses.  Raises OSError (missing
    or unreadable file) or :class:`RdbError`.  ``rdbchecksum no`` skips the
    checksum test, as in Redis.
    """
    config = engine.config
    path = default_path(config) if path is None else path
    start = time.perf_counter()
    # Mapped, not read: the parser takes every node blob as one slice of the
    # file anyway, so a copy of the whole file first would only cost time.
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        data: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    try:
        snap = loads(data, now_ms=engine.clock.now_ms(), databases=len(engine.dbs),
                     verify_checksum=_option(config, "rdbchecksum", True))
    finally:
        if size:
            data.close()
    install(engine, snap, flush, merge)
    return LoadInfo(snap.keys, snap.expired_skipped, time.perf_counter() - start, size,
                    snap.version, snap.aux)
