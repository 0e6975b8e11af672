"""MIGRATE's chunked path: a big stream moved in pieces, the server serving
everybody between them.

The DUMP path (:mod:`.migrate`) serialises every key and waits for the
target's RESTOREs in one call, which blocks both nodes for as long as the
biggest value takes (seconds for a stream of millions of entries: cluster
peers then flag the nodes PFAIL).  When MIGRATE moves a stream of at least
``migrate-stream-chunk-threshold`` entries (Tidelog's own option, default
10000, 0: never) that :func:`~tidelog.rdb.stream_chunks.chunkable` says can
travel in chunks, the command may block (not inside MULTI/EXEC or a
script), the engine has a mover (the network layer's) and the target
answers ``TIDELOG.STAGE HELLO`` with the chunk format's version (asked once
per cached connection and remembered with it: :func:`stage_version`), the
handler does not talk to the target itself: it builds a
:class:`ChunkedMigrate` and parks the client (``Engine.park``).

The mover runs :meth:`ChunkedMigrate.requests` on a connection of its own:
a sans-IO dialogue, each request answered by one reply line.  ``AUTH`` (when
given), ``SELECT db``, then the keys in MIGRATE's order: a small key (or a
stream under the threshold) as ``RESTORE`` (``RESTORE-ASKING`` in cluster
mode) with the DUMP payload made when the command ran, a big stream as
``TIDELOG.STAGE BEGIN <token> <key> <ttl-ms> <idle-ms> [REPLACE]`` then one
``TIDELOG.STAGE APPEND <token> <chunk>`` per chunk of
:func:`~tidelog.rdb.stream_chunks.chunks` (the last one, COMMIT, installs
the key there).  Meanwhile the keys are in flight (engine/parking.py): a
write to one gets ``-TRYAGAIN``, reads are served, expiry waits.

Then :meth:`ChunkedMigrate.finish`, as the DUMP path ends: a key the target
took (``+OK`` to its RESTORE or to its COMMIT chunk) is deleted here
(propagated as ``DEL``; nothing with COPY); the first error the target
replied becomes ``ERR Target instance replied with error: ...`` (AUTH's or
SELECT's counts for every key: nothing is deleted then); else a connection
that failed answers Redis's IOERR texts; else ``+OK``.  A failure in the
middle of a stream (an error reply, the connection lost or silent for
MIGRATE's timeout, the stream changed: :class:`StreamChanged`) sends
``TIDELOG.STAGE ABORT <token>`` when the connection still works, and the
stream stays here untouched.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

from ... import errors
from ...config import NOTIFY_GENERIC
from ...errors import CommandError
from ...rdb import values as rdb
from ...rdb.stream_chunks import VERSION, StreamChanged, chunkable, chunks
from ...resp.replies import OK
from ...types.stream import Stream
from ..contract import Ctx, Reply

STAGE = b"TIDELOG.STAGE"
# A staged copy the target holds without an APPEND for this long is dropped
# there (never less than this, nor than twice MIGRATE's timeout).
STAGE_IDLE_MS = 60_000


def resp(args: list[bytes]) -> bytes:
    """``args`` as a RESP request. O(size)."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def stage_version(ctx: Ctx, host: bytes, port: bytes, timeout_s: float,
                  auth_cmd: bytes) -> int:
    """The chunk format version the target stages (``TIDELOG.STAGE
    HELLO``), asked on the cached connection (after AUTH when given) the
    first time and remembered with it; 0 when it cannot stage (Redis and
    Valkey answer ``-ERR unknown command``).  Nothing is remembered when the
    answer was a refusal of this user or the connection failed (0: the DUMP
    path then meets the same trouble and reports it).  O(1) once known."""
    cache = ctx.engine.migrate_sockets
    try:
        target = cache.get(host, port, timeout_s, ctx.engine.clock.monotonic(), ctx.config)
    except (CommandError, OSError):
        cache.close(host, port)
        return 0
    if target.stage is not None:
        return int(target.stage)
    try:
        target.send(auth_cmd + resp([STAGE, b"HELLO"]), timeout_s)
        auth_reply = target.read_line() if auth_cmd else b"+"
        reply = target.read_line()
    except OSError:
        cache.close(host, port)
        return 0
    if auth_reply[:1] == b"-" or reply[:7] in (b"-NOAUTH", b"-NOPERM"):
        return 0
    version = int(reply[1:]) if reply[:1] == b":" and reply[1:].isdigit() else 0
    target.stage = version
    return version


class Step:
    """One key to move: its TTL argument, and the DUMP payload (``payload``)
    or the stream to send in chunks (``stream``)."""

    __slots__ = ("key", "ttl", "payload", "stream")

    def __init__(self, key: bytes, ttl: bytes, payload: bytes | None,
                 stream: Stream | None) -> None:
        self.key = key
        self.ttl = ttl
        self.payload = payload
        self.stream = stream


def try_park(ctx: Ctx, argv: list[bytes], found: list[tuple[bytes, Any]], dbid: int,
             timeout_ms: int, auth: list[bytes] | None, copy: bool, replace: bool) -> Reply | None:
    """PARKED when this MIGRATE goes the chunked way (see the module's
    text), else None (the DUMP path).  O(size of the small keys' payloads),
    plus the probe's round trip the first time."""
    threshold = ctx.config["migrate-stream-chunk-threshold"]
    engine = ctx.engine
    if not threshold or not ctx.may_block or not engine.mover.available or \
            ctx.client.kind != "normal":
        return None
    if not any(type(value) is Stream and value.length >= threshold and chunkable(value)
               for _, value in found):
        return None
    timeout_s = timeout_ms / 1000
    auth_cmd = resp([b"AUTH", *auth]) if auth is not None else b""
    if stage_version(ctx, argv[1], argv[2], timeout_s, auth_cmd) != VERSION:
        return None
    try:
        version = int(ctx.config["rdb-version"])
    except KeyError:
        version = rdb.DEFAULT_VERSION
    compress = bool(ctx.config["rdbcompression"])
    steps = []
    for key, value in found:
        ttl = ctx.db.ttl_ms(key)
        ttl_arg = b"0" if ttl is None else b"%d" % max(ttl, 1)
        if type(value) is Stream and value.length >= threshold and chunkable(value):
            steps.append(Step(key, ttl_arg, None, value))
        else:
            steps.append(Step(key, ttl_arg, rdb.value_payload(value, version=version,
                                                             compress=compress), None))
    move = ChunkedMigrate(ctx, argv, steps, dbid, timeout_s, auth, copy, replace)
    return engine.park(ctx, move.keys, move)


class ChunkedMigrate:
    """One parked MIGRATE: what the mover needs (``host``, ``port``,
    ``timeout_s``, ``tls``, :meth:`requests`, :meth:`abort_request`) and
    its end (:meth:`finish`)."""

    def __init__(self, ctx: Ctx, argv: list[bytes], steps: list[Step], dbid: int,
                 timeout_s: float, auth: list[bytes] | None, copy: bool, replace: bool) -> None:
        self.engine = ctx.engine
        self.client = ctx.client
        self.spec = ctx.spec
        self.argv = argv
        self.db_index = ctx.db.index
        self.host = argv[1].decode("latin-1")
        self.port = argv[2]
        self.timeout_s = timeout_s
        self.tls = bool(ctx.config["tls-cluster"])
        self.cluster = bool(ctx.config["cluster-enabled"])
        self.max_bytes = int(ctx.config["migrate-stream-chunk-bytes"])
        self.steps = steps
        self.keys = [step.key for step in steps]
        self.dbid = dbid
        self.auth = auth
        self.copy = copy
        self.replace = replace
        self.moved: list[bytes] = []          # keys the target took, in order
        self.header_error: bytes | None = None  # AUTH's or SELECT's error line
        self.first_error: bytes | None = None   # the first key's error line
        self.failure: bytes | None = None       # StreamChanged: MIGRATE's IOERR
        self.token: bytes | None = None         # the stream being staged now
        self.chunks_sent = 0                    # APPENDs answered +OK (tests, INFO-like)
        self.finished = False

    def requests(self) -> Generator[bytes, bytes, None]:
        """The dialogue with the target: yields each request and is sent
        its reply line (without CRLF).  Ends when all keys were sent, or at
        AUTH's or SELECT's error, or when a stream changed under it.  Each
        resumption does one chunk's work: O(chunk)."""
        if self.auth is not None:
            line = yield resp([b"AUTH", *self.auth])
            if line[:1] == b"-":
                self.header_error = line
                return
        line = yield resp([b"SELECT", b"%d" % self.dbid])
        if line[:1] == b"-":
            self.header_error = line
            return
        restore = b"RESTORE-ASKING" if self.cluster else b"RESTORE"
        replace = [b"REPLACE"] if self.replace else []
        idle = b"%d" % max(STAGE_IDLE_MS, int(self.timeout_s * 2000))
        for step in self.steps:
            if step.stream is None:
                assert step.payload is not None
                line = yield resp([restore, step.key, step.ttl, step.payload, *replace])
                self._answered(step.key, line)
                continue
            token = os.urandom(20).hex().encode()
            line = yield resp([STAGE, b"BEGIN", token, step.key, step.ttl, idle, *replace])
            if line[:1] == b"-":
                self._answered(step.key, line)
                continue
            self.token = token
            try:
                for chunk in chunks(step.stream, self.max_bytes):
                    line = yield resp([STAGE, b"APPEND", token, chunk])
                    if line[:1] == b"-":
                        break
                    self.chunks_sent += 1
            except StreamChanged:
                self.failure = errors.MIGRATE_IOERR_WRITE
                yield resp([STAGE, b"ABORT", token])
                self.token = None
                return
            self.token = None
            if line[:1] == b"-":
                yield resp([STAGE, b"ABORT", token])  # (dropped there already, most likely)
            self._answered(step.key, line)

    def _answered(self, key: bytes, line: bytes) -> None:
        if line[:1] == b"-":
            if self.first_error is None:
                self.first_error = line
        else:
            self.moved.append(key)

    def abort_request(self) -> bytes | None:
        """The request that drops the stream staged now, if one is (sent
        after a failure when the connection still works)."""
        if self.token is None:
            return None
        return resp([STAGE, b"ABORT", self.token])

    def finish(self, io_error: bytes | None = None) -> None:
        """The move ended (``io_error``: MIGRATE's IOERR text when the
        connection failed): the keys leave flight, those the target took are
        deleted here (not with COPY, nor after AUTH's or SELECT's error),
        and the client is answered.  O(keys)."""
        if self.finished:
            return
        self.finished = True
        engine = self.engine
        engine.release(self.db_index, self.keys)
        ctx = Ctx.new(engine, self.client, self.argv, self.spec, False)
        ctx.db = engine.dbs[self.db_index]
        delete_moved(ctx, self.moved if self.header_error is None and not self.copy else [])
        first_error = self.header_error or self.first_error
        if first_error is not None:
            error: bytes | None = errors.MIGRATE_TARGET_ERROR + first_error[1:]
        else:
            error = self.failure or io_error
        engine.unpark(ctx, OK, error)


def delete_moved(ctx: Ctx, keys: list[bytes]) -> None:
    """The source's side of a move that the target acknowledged: each of
    ``keys`` still here is deleted (modified, woken, ``del`` notified) and
    one DEL of them all is propagated; nothing is propagated when none was.
    O(keys)."""
    deleted = []
    for key in keys:
        if ctx.db.delete(key):
            ctx.modified(key)
            ctx.ready(key)
            ctx.notify(NOTIFY_GENERIC, b"del", key)
            deleted.append(key)
    if deleted:
        ctx.effect([b"DEL", *deleted])
    else:
        ctx.no_propagation()
