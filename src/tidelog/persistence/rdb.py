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
import resource
import struct
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import REDIS_VERSION
from ..ids import MIN_ID, StreamID
from ..types.groups import ConsumerGroup, estimate_entries_read
from ..types.stream import CorruptStream, Stream

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("tidelog")

DEFAULT_VERSION = 10
WRITABLE_VERSIONS = (10, 11)
MAX_READ_VERSION = 12  # 12 (Redis 7.4) changed no encoding read here

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
_TYPE_NAMES = {
    1: "list", 2: "set", 3: "zset", 4: "hash", 5: "zset", 6: "module", 7: "module",
    9: "hash (zipmap)", 10: "list (ziplist)", 11: "set (intset)", 12: "zset (ziplist)",
    13: "hash (ziplist)", 14: "list (quicklist)", 16: "hash (listpack)",
    17: "zset (listpack)", 18: "list (quicklist)", 20: "set (listpack)",
}

_M64 = (1 << 64) - 1
_ID = struct.Struct(">QQ")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")


class RdbError(ValueError):
    """A file that is not a valid RDB snapshot; the text names the byte offset."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at byte offset {offset})")
        self.offset = offset


# =====================================================================================
# CRC-64 (Jones polynomial, reflected in and out, init 0, no final xor)
# =====================================================================================
_POLY_REFLECTED = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 bit-reversed


def _make_table() -> list[int]:
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY_REFLECTED if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _make_table()


def crc64_py(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """The CRC-64 in pure Python, continuing from ``crc``.  Slow: ~10 MB/s."""
    table = _TABLE
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


_CRC: Any = None  # the C CRC-64 (anycrc), made on first use; False when it is not installed


def crc64(data: bytes | bytearray | memoryview) -> int:
    """CRC-64 as Redis computes it (``crc64(b"123456789") == 0xe9c6d914c4b8d9ca``).

    With ``anycrc`` (optional, imported on the first call rather than at
    start-up) at several GB/s, reading a memoryview in place; else in pure
    Python."""
    global _CRC
    if _CRC is None:
        try:
            import anycrc
        except ImportError:  # pragma: no cover - depends on the environment
            _CRC = False
        else:
            _CRC = anycrc.CRC(width=64, poly=0xAD93D23594C935A9, init=0, refin=True,
                              refout=True, xorout=0)
    return _CRC.calc(data) if _CRC else crc64_py(data)


# =====================================================================================
# LZF
# =====================================================================================
class LzfError(ValueError):
    pass


def lzf_decompress_py(src: bytes, out_len: int) -> bytes:
    """Decompress an LZF block that must expand to exactly ``out_len`` bytes.

    The format: a control byte ``c``; ``c < 32`` copies the next ``c + 1``
    bytes; otherwise ``len = c >> 5`` (7 means "add the next byte"), plus 2,
    bytes are copied from ``((c & 31) << 8) + next byte + 1`` bytes back in
    the output (the copy may overlap what it writes).
    """
    out = bytearray()
    i = 0
    n = len(src)
    while i < n:
        ctrl = src[i]
        i += 1
        if ctrl < 32:
            run = ctrl + 1
            if i + run > n:
                raise LzfError("literal run past the end of the input")
            out += src[i:i + run]
            i += run
            continue
        run = ctrl >> 5
        if run == 7:
            if i >= n:
                raise LzfError("truncated back reference")
            run += src[i]
            i += 1
        if i >= n:
            raise LzfError("truncated back reference")
        ref = len(out) - ((ctrl & 0x1F) << 8) - src[i] - 1
        i += 1
        run += 2
        if ref < 0:
            raise LzfError("back reference before the start of the output")
        if ref + run <= len(out):
            out += out[ref:ref + run]
        else:  # overlapping: byte by byte
            for k in range(run):
                out.append(out[ref + k])
        if len(out) > out_len:
            raise LzfError("output longer than announced")
    if len(out) != out_len:
        raise LzfError(f"expanded to {len(out)} bytes, announced {out_len}")
    return bytes(out)


try:  # optional C implementation
    import lzf as _lzf

    def lzf_decompress(src: bytes, out_len: int) -> bytes:
        try:
            out = _lzf.decompress(src, out_len)
        except ValueError:
            out = None
        if out is None or len(out) != out_len:
            raise LzfError(f"LZF data does not expand to the announced {out_len} bytes")
        return out

    def lzf_compress(data: bytes) -> bytes | None:
        """Compressed bytes, or None when that would not save at least 4 bytes."""
        return _lzf.compress(data, len(data) - 4) if len(data) > 4 else None
except ImportError:  # pragma: no cover - depends on the environment
    lzf_decompress = lzf_decompress_py

    def lzf_compress(data: bytes) -> bytes | None:
        return None


# =====================================================================================
# Writing
# =====================================================================================
def _len(n: int) -> bytes:
    if n < 0x40:
        return bytes((n,))
    if n < 0x4000:
        return bytes((0x40 | (n >> 8), n & 0xFF))
    if n <= 0xFFFFFFFF:
        return b"\x80" + n.to_bytes(4, "big")
    return b"\x81" + (n & _M64).to_bytes(8, "big")


def _int_encoding(s: bytes) -> bytes | None:
    """The 0xC0/C1/C2 form of a canonical decimal fitting 32 bits, else None."""
    if not 0 < len(s) <= 11:
        return None
    digits = s[1:] if s[:1] == b"-" else s
    if not digits.isdigit() or (digits[:1] == b"0" and s != b"0") or s == b"-0":
        return None
    v = int(s)
    if -(1 << 7) <= v < (1 << 7):
        return b"\xc0" + v.to_bytes(1, "little", signed=True)
    if -(1 << 15) <= v < (1 << 15):
        return b"\xc1" + v.to_bytes(2, "little", signed=True)
    if -(1 << 31) <= v < (1 << 31):
        return b"\xc2" + v.to_bytes(4, "little", signed=True)
    return None


def _string(s: bytes, compress: bool) -> bytes:
    if len(s) <= 11:
        encoded = _int_encoding(s)
        if encoded is not None:
            return encoded
    if compress and len(s) > 20:
        packed = lzf_compress(s)
        if packed:
            return b"\xc3" + _len(len(packed)) + _len(len(s)) + packed
    return _len(len(s)) + s


@dataclass
class SaveStats:
    keys: int = 0
    dropped_unowned: int = 0   # XNACK'd pending entries (no Redis 7 encoding)
    dropped_idmp: int = 0      # streams whose IDMP state was left out


def _write_stream(out: list[bytes], stream: Stream, rdbtype: int, compress: bool,
                  stats: SaveStats) -> None:
    nodes = list(stream.nodes())
    out.append(_len(len(nodes)))
    pack_id = _ID.pack
    for key, lp in nodes:
        out.append(b"\x10" + pack_id(key[0], key[1]))
        out.append(_string(lp, compress) if compress else _len(len(lp)) + lp)
    last = stream.last_id
    out.append(_len(stream.length) + _len(last[0]) + _len(last[1]))
    if rdbtype >= TYPE_STREAM_LISTPACKS_2:
        first, deleted = stream.first_id, stream.max_deleted_entry_id
        out.append(_len(first[0]) + _len(first[1]) + _len(deleted[0]) + _len(deleted[1])
                   + _len(stream.entries_added))
    if stream.idmp is not None and stream.idmp.producers:
        stats.dropped_idmp += 1
    groups = sorted(stream.groups.items())
    out.append(_len(len(groups)))
    for name, group in groups:
        out.append(_string(name, False))
        out.append(_len(group.last_id[0]) + _len(group.last_id[1]))
        if rdbtype >= TYPE_STREAM_LISTPACKS_2:
            out.append(_len(group.entries_read & _M64))
        owned = [entry for entry in group.pel.values() if entry.consumer is not None]
        stats.dropped_unowned += len(group.pel) - len(owned)
        out.append(_len(len(owned)))
        out.extend(pack_id(*entry.id) + _I64.pack(entry.delivery_time)
                   + _len(entry.delivery_count) for entry in owned)
        out.append(_len(len(group.consumers)))
        for cname, consumer in group.consumers.items():
            out.append(_string(cname, False))
            out.append(_I64.pack(consumer.seen_time))
            if rdbtype >= TYPE_STREAM_LISTPACKS_3:
                out.append(_I64.pack(consumer.active_time))
            out.append(_len(len(consumer.pel)))
            out.extend(pack_id(*id) for id in consumer.pel)


def dumps(dbs: list[Any], *, version: int = DEFAULT_VERSION, compress: bool = True,
          checksum: bool = True, aof_base: bool = False, now_ms: int | None = None,
          stats: SaveStats | None = None) -> bytes:
    """The whole snapshot of ``dbs`` (a list of :class:`~tidelog.keyspace.Database`).

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
                       (b"aof-base", b"1" if aof_base else b"0")):
        out.append(b"\xfa" + _string(key, False) + _string(value, False))
    for db in dbs:
        data = db.data
        if not data:
            continue
        expires = db.expires
        out.append(b"\xfe" + _len(db.index))
        out.append(b"\xfb" + _len(len(data)) + _len(len(expires)))
        for key, value in data.items():
            when = expires.get(key)
            if when is not None:
                out.append(b"\xfc" + _I64.pack(when))
            if type(value) is Stream:
                out.append(bytes((stream_type,)) + _string(key, compress))
                _write_stream(out, value, stream_type, compress, stats)
            else:
                out.append(b"\x00" + _string(key, compress) + _string(value, compress))
            stats.keys += 1
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
                 now_ms=engine.clock.now_ms(), stats=stats)
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
    end: int = 0  # offset just past the checksum: an AOF's commands follow an RDB preamble


class _Reader:
    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.end = len(data)

    def fail(self, message: str, offset: int | None = None) -> RdbError:
        return RdbError(message, self.pos if offset is None else offset)

    def raw(self, n: int) -> bytes:
        p = self.pos
        if p + n > self.end:
            raise self.fail(f"unexpected end of file reading {n} bytes")
        self.pos = p + n
        return self.data[p:p + n]

    def byte(self) -> int:
        p = self.pos
        if p >= self.end:
            raise self.fail("unexpected end of file")
        self.pos = p + 1
        return self.data[p]

    def length(self) -> int:
        at = self.pos
        b = self.byte()
        kind = b >> 6
        if kind == 0:
            return b
        if kind == 1:
            return ((b & 0x3F) << 8) | self.byte()
        if b == 0x80:
            return int.from_bytes(self.raw(4), "big")
        if b == 0x81:
            return int.from_bytes(self.raw(8), "big")
        raise self.fail(f"bad length encoding 0x{b:02x}", at)

    def int64(self) -> int:
        return _I64.unpack(self.raw(8))[0]

    def string(self) -> bytes:
        at = self.pos
        b = self.byte()
        if b < 0xC0:
            self.pos = at
            return self.raw(self.length())
        enc = b & 0x3F
        if enc == 0:
            return b"%d" % int.from_bytes(self.raw(1), "little", signed=True)
        if enc == 1:
            return b"%d" % int.from_bytes(self.raw(2), "little", signed=True)
        if enc == 2:
            return b"%d" % int.from_bytes(self.raw(4), "little", signed=True)
        if enc == 3:
            clen = self.length()
            ulen = self.length()
            packed = self.raw(clen)
            try:
                return lzf_decompress(packed, ulen)
            except LzfError as exc:
                raise self.fail(f"bad LZF string: {exc}", at) from None
        raise self.fail(f"unknown string encoding 0x{b:02x}", at)

    def stream_id(self) -> StreamID:
        ms, seq = _ID.unpack(self.raw(16))
        return StreamID(ms, seq)


def _read_stream(r: _Reader, rdbtype: int, key: bytes, key_at: int) -> Stream:
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
    r = _Reader(data)
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
        if op in (OP_MODULE_AUX, OP_FUNCTION2, OP_FUNCTION_PRE_GA):
            raise RdbError(f"unsupported RDB opcode 0x{op:02x} (modules and functions are "
                           "not supported)", at)
        key_at = r.pos
        key = r.string()
        if op == TYPE_STRING:
            value: Any = r.string()
        elif op in _STREAM_TYPES:
            value = _read_stream(r, op, key, key_at)
        else:
            kind = _TYPE_NAMES.get(op)
            what = f"value type {op} ({kind})" if kind else f"value type or opcode {op}"
            raise RdbError(f"unsupported {what} for key {key!r}", at)
        if expire is not None and expire <= now_ms:
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


def install(engine: Engine, snap: Snapshot) -> None:
    """Replace every database's contents with a parsed snapshot."""
    for db in engine.dbs:
        db.flush()
    for index, items in snap.dbs.items():
        db = engine.dbs[index]
        for key, value, expire in items:
            db.set(key, value)
            if expire is not None:
                db.set_expire(key, expire)


def load_file(engine: Engine, path: str | None = None) -> LoadInfo:
    """Load ``path`` (default ``<dir>/<dbfilename>``) into the engine, replacing its data.

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
    install(engine, snap)
    return LoadInfo(snap.keys, snap.expired_skipped, time.perf_counter() - start, size,
                    snap.version)
