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
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import REDIS_VERSION
from ..errors import CommandError
from ..rdb import array as rdb_array
from ..rdb.format import (  # noqa: F401 (crc64, lzf_* and RdbError are this module's API too)
    _I64,
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
from ..rdb.values import (
    _STREAM_TYPES,
    _TYPE_NAMES,
    DEFAULT_VERSION,
    FIELD_TTL_VERSION,
    MAX_READ_VERSION,
    OP_FUNCTION2,
    TYPE_STREAM_LISTPACKS_2,
    TYPE_STREAM_LISTPACKS_3,
    TYPE_STRING,
    VALUE_READERS,
    WRITABLE_VERSIONS,
    SaveStats,
    _read_stream,
    _write_value,
)
from ..types.array import Array
from ..types.hash import Hash

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("tidelog")

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
