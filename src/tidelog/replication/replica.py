"""A replica's side of replication: the link to the primary (REPLICAOF).

One asyncio task per link, looping: connect, handshake, PSYNC, then apply
the primary's stream until the link breaks, then wait a second and start
again (with a PSYNC that continues where the stream stopped).

    PING                                   -> +PONG
    REPLCONF listening-port <our port>     -> +OK   (errors are not fatal)
    REPLCONF capa eof capa psync2 capa tidelog-stage -> +OK
    PSYNC <replid> <offset + 1> | ? -1     -> +CONTINUE [<new replid>]
      [FAILOVER] (a primary handing over) 
                                           |  +FULLRESYNC <replid> <offset>
                                              then "\\n" keep-alives, and the
                                              snapshot: $<len>\\r\\n<RDB> or
                                              $EOF:<40 chars>\\r\\n<RDB><same 40 chars>

After a snapshot sent with ``$EOF:`` the replica must send ``REPLCONF ACK``
at once: Redis primaries start the stream only after it.  The stream is
RESP commands, applied as the ``master`` client (no replies), except
``REPLCONF GETACK *``, answered with ``REPLCONF ACK <offset>`` counting every
byte before the GETACK.  The replica's offset counts every byte of the
stream applied; it ACKs once a second.  Every applied command's bytes are
also fed, unchanged, to the replica's own backlog and replicas (a chain), so
its offsets and replication ID are the primary's.

While linked, clients' writes get -READONLY (``replica-read-only``).
Keys are not expired by the replica's cron: the primary's DELs do that, as
in Redis (a read may still delete a key whose time has passed).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from .. import tls
from ..persistence import rdb
from ..persistence.aof_format import encode_command
from ..persistence.durability import attach as durability
from ..resp import ProtocolError, RequestParser
from ..resp.replies import ErrorReply

log = logging.getLogger("tidelog")

RECONNECT_DELAY = 1.0
PROGRESS_EVERY = 5.0  # seconds between progress lines of a long transfer
ACK_PERIOD = 1.0
EOF_MARK_LEN = 40


class SyncFailed(Exception):
    """The handshake or the transfer failed; the text says how."""


class Upstream:
    """The link to our primary, ``host:port``."""

    def __init__(self, primary: Any, host: str, port: int) -> None:
        """``primary``: the engine's :class:`~tidelog.replication.primary.Primary`
        (its backlog and replicas get the stream as it is applied)."""
        self.primary = primary
        self.engine = primary.engine
        self.host = host
        self.port = port
        self.state = "connect"       # connect, connecting, handshake, sync, connected
        self.master_client: Any = None
        self.writer: asyncio.StreamWriter | None = None
        clock = self.engine.clock
        self.down_since = clock.monotonic()
        self.last_io = clock.monotonic()
        self.sync_total = self.sync_read = 0
        self._stopped = False
        self._error_logged: set[bytes] = set()
        self._task: asyncio.Task[None] | None = None

    # -- life ---------------------------------------------------------------------------
    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self._run(), name=f"replica-of-{self.host}:{self.port}")

    def stop(self) -> None:
        """REPLICAOF NO ONE or another primary: drop the link for good."""
        self._stopped = True
        if self._task is not None:
            self._task.cancel()
        self._close()

    async def wait_stopped(self, timeout: float) -> bool:
        """After :meth:`stop`: wait, at most ``timeout`` seconds, for the
        link's task to end; whether it did."""
        if self._task is None:
            return True
        done, _ = await asyncio.wait({self._task}, timeout=timeout)
        return bool(done)

    @property
    def link_up(self) -> bool:
        return self.state == "connected"

    async def _run(self) -> None:
        task = asyncio.current_task()
        assert task is not None
        while not self._stopped:
            try:
                await self._session()
            except asyncio.CancelledError:
                raise
            except (OSError, EOFError, asyncio.IncompleteReadError, SyncFailed,
                    ProtocolError, rdb.RdbError, TimeoutError, tls.TlsError) as exc:
                if self.state == "connected":
                    log.warning("Connection with master lost: %s", exc or type(exc).__name__)
                else:
                    log.warning("Error condition on socket for SYNC: %s",
                                exc or type(exc).__name__)
            finally:
                self._close()
            # A cancellation that came while the awaited read or connect
            # ended (the primary closing as we shut down) is answered by
            # asyncio.wait_for with that end, not with CancelledError
            # (Python 3.11): the task still says it was asked to stop.
            if self._stopped or task.cancelling():
                return
            await asyncio.sleep(RECONNECT_DELAY)

    def _close(self) -> None:
        if self.state == "connected":
            self.down_since = self.engine.clock.monotonic()
        self.state = "connect"
        self.primary.refresh_write_guard()  # replica-serve-stale-data
        if self.master_client is not None:
            self.engine.client_closed(self.master_client)
            self.master_client = None
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    # -- one session ------------------------------------------------------------------
    async def _session(self) -> None:
        timeout = self.engine.config["repl-timeout"]
        self.state = "connecting"
        log.info("Connecting to MASTER %s:%d", self.host, self.port)
        context = tls.client_context(self.engine.config) \
            if self.engine.config["tls-replication"] else None
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(self.host, self.port, ssl=context), timeout)
        self.writer = writer
        if self._stopped:  # stop() came while connecting (and the cancel got lost)
            raise EOFError("the link was stopped")
        log.info("MASTER <-> REPLICA sync started")
        self.state = "handshake"
        writer.write(encode_command([b"PING"]))
        pong = await asyncio.wait_for(reader.readline(), timeout)
        if not pong:
            raise EOFError("connection closed by master")
        if pong.startswith(b"-") and not pong.startswith((b"-NOAUTH", b"-NOPERM")):
            raise SyncFailed(f"Error reply to PING from master: '{_text(pong)}'")
        log.info("Master replied to PING, replication can continue...")
        config = self.engine.config
        if config["masterauth"]:
            auth = [b"AUTH", config["masterauth"].encode("utf-8", "surrogateescape")]
            if config["masteruser"]:
                auth.insert(1, config["masteruser"].encode("utf-8", "surrogateescape"))
            writer.write(encode_command(auth))
            reply = await asyncio.wait_for(reader.readline(), timeout)
            if not reply.startswith(b"+"):
                raise SyncFailed(f"Unable to AUTH to MASTER: '{_text(reply)}'")
        port = self.engine.config["port"]
        writer.write(encode_command([b"REPLCONF", b"listening-port", b"%d" % port])
                     + encode_command([b"REPLCONF", b"capa", b"eof", b"capa", b"psync2",
                                       b"capa", b"tidelog-stage"]))
        for _ in range(2):  # errors here are not fatal, as for Redis
            await asyncio.wait_for(reader.readline(), timeout)
        primary = self.primary
        if primary.backlog is not None:
            replid, offset = primary.replid, primary.offset + 1
            log.info("Trying a partial resynchronization (request %s:%d).", replid, offset)
        else:
            replid, offset = "?", -1
            log.info("Partial resynchronization not possible (no cached master)")
        psync = [b"PSYNC", replid.encode(), b"%d" % offset]
        failing_over = primary.failing_over
        if failing_over:  # FAILOVER: the target stops following us and answers
            psync.append(b"FAILOVER")
        writer.write(encode_command(psync))
        self.state = "sync"
        line = await self._read_line(reader, timeout)
        if failing_over:
            if not line.startswith((b"+FULLRESYNC", b"+CONTINUE")):
                self._abort_failover()
                raise SyncFailed(f"Failover target rejected psync request: '{_text(line)}'")
            primary.failover_done()
        if line.startswith(b"+FULLRESYNC"):
            parts = line.split()
            if len(parts) != 3 or len(parts[1]) != 40:
                raise SyncFailed(f"Bad FULLRESYNC line from master: '{_text(line)}'")
            log.info("Full resync from master: %s:%s", _text(parts[1]), _text(parts[2]))
            await self._full_sync(reader, writer, parts[1].decode(), int(parts[2]), timeout)
        elif line.startswith(b"+CONTINUE"):
            parts = line.split()
            if len(parts) > 1 and parts[1].decode() != primary.replid:
                primary.new_history_from_primary(parts[1].decode())
            log.info("Successful partial resynchronization with master.")
        else:
            raise SyncFailed(f"Unexpected reply to PSYNC from master: '{_text(line)}'")
        self._link_established()
        writer.write(self._ack())
        await self._stream(reader, writer, timeout)

    def _abort_failover(self) -> None:
        """A primary again, from the loop (not from inside this link's task,
        which the abort stops)."""
        def abort() -> None:
            if self.primary.upstream is self:
                self.primary.abort_failover("Failover target rejected psync request")

        schedule = self.engine.schedule
        if schedule is None:
            abort()
        else:
            schedule(0, abort)

    async def _read_line(self, reader: asyncio.StreamReader, timeout: float) -> bytes:
        """The next line that is not a keep-alive newline."""
        while True:
            line = await asyncio.wait_for(reader.readline(), timeout)
            if not line:
                raise EOFError("connection closed by master")
            self.last_io = self.engine.clock.monotonic()
            self.engine.stats["net_repl_input_bytes"] += len(line)
            line = line.rstrip(b"\r\n")
            if line:
                return line

    async def _full_sync(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         replid: str, offset: int, timeout: float) -> None:
        head = await self._read_line(reader, timeout)
        if head.startswith(b"-"):
            raise SyncFailed(f"Error while reading the snapshot: '{_text(head)}'")
        if not head.startswith(b"$"):
            raise SyncFailed(f"Bad protocol from MASTER, the first byte is not '$': "
                             f"'{_text(head)}'")
        if head.startswith(b"$EOF:"):
            mark = head[5:]
            if len(mark) != EOF_MARK_LEN:
                raise SyncFailed("Bad EOF mark from master")
            log.info("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF")
            payload = await self._read_until_mark(reader, mark, timeout)
        else:
            size = int(head[1:])
            self.sync_total, self.sync_read = size, 0
            log.info("MASTER <-> REPLICA sync: receiving %d bytes from master", size)
            payload = await self._read_exactly(reader, size, timeout)
        log.info("MASTER <-> REPLICA sync: Flushing old data")
        engine = self.engine
        self.primary.drop_replicas()  # their history changed: they sync again
        log.info("MASTER <-> REPLICA sync: Loading DB in memory")
        started = time.perf_counter()
        snap = rdb.loads(payload, now_ms=0, databases=len(engine.dbs))
        rdb.install(engine, snap)
        engine.signal_all_waited()
        self.primary.new_history_from_snapshot(replid, offset)
        if engine.config["appendonly"]:
            # The AOF held the old data: start it again from the loaded data
            # (a rewrite; until it ends, the old files stay the AOF), as Redis
            # restarts its AOF after a sync.
            engine.persistence.set_appendonly(False)
            engine.persistence.set_appendonly(True)
        seconds = time.perf_counter() - started
        log.info("MASTER <-> REPLICA sync: Finished with success (%d keys, %d bytes, loaded "
                 "in %.3f s, %.1f MB/s)", snap.keys, len(payload), seconds,
                 len(payload) / max(seconds, 1e-6) / 1e6)
        if head.startswith(b"$EOF:"):
            writer.write(self._ack())  # the primary starts the stream on this ACK

    async def _read_exactly(self, reader: asyncio.StreamReader, size: int,
                            timeout: float) -> bytes:
        chunks = []
        left = size
        clock = self.engine.clock
        started = next_report = clock.monotonic()
        while left:
            chunk = await asyncio.wait_for(reader.read(min(left, 1 << 20)), timeout)
            if not chunk:
                raise EOFError("connection closed by master during the transfer")
            chunks.append(chunk)
            self.engine.stats["net_repl_input_bytes"] += len(chunk)
            left -= len(chunk)
            self.sync_read += len(chunk)
            self.last_io = now = clock.monotonic()
            if now - next_report >= PROGRESS_EVERY:
                next_report = now
                log.info("MASTER <-> REPLICA sync: %d of %d bytes received (%.1f MB/s)",
                         self.sync_read, size, self.sync_read / (now - started) / 1e6)
        return b"".join(chunks)

    async def _read_until_mark(self, reader: asyncio.StreamReader, mark: bytes,
                               timeout: float) -> bytes:
        buf = bytearray()
        while True:
            chunk = await asyncio.wait_for(reader.read(1 << 20), timeout)
            if not chunk:
                raise EOFError("connection closed by master during the transfer")
            searched = max(0, len(buf) - EOF_MARK_LEN)
            buf += chunk
            self.engine.stats["net_repl_input_bytes"] += len(chunk)
            self.sync_read = len(buf)
            self.last_io = self.engine.clock.monotonic()
            at = buf.find(mark, searched)
            if at >= 0:
                if at + EOF_MARK_LEN != len(buf):
                    raise SyncFailed("data after the EOF mark of the snapshot")
                return bytes(buf[:at])

    def _link_established(self) -> None:
        engine = self.engine
        self.master_client = engine.new_client(addr=f"{self.host}:{self.port}", kind="master")
        self.state = "connected"
        self.primary.refresh_write_guard()
        self.last_io = engine.clock.monotonic()

    def _ack(self) -> bytes:
        """REPLCONF ACK <offset>, with FACK <offset> (Redis 7.2) when our AOF
        is on: how far it is on disk, for the primary's WAITAOF."""
        argv = [b"REPLCONF", b"ACK", b"%d" % self.primary.offset]
        aof = durability(self.engine).aof
        if aof is not None:
            argv += [b"FACK", b"%d" % aof.fsynced_offset]
        return encode_command(argv)

    # -- the stream --------------------------------------------------------------------
    async def _stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      timeout: float) -> None:
        engine = self.engine
        parser = RequestParser(max_bulk_len=engine.config["proto-max-bulk-len"],
                               max_query_buffer=engine.config["client-query-buffer-limit"])
        loop = asyncio.get_running_loop()
        next_ack = loop.time() + ACK_PERIOD
        while True:
            wait = max(0.0, min(timeout, next_ack - loop.time()))
            try:
                data = await asyncio.wait_for(reader.read(1 << 16), wait)
            except TimeoutError:
                data = None
            now = loop.time()
            if data is not None:
                if not data:
                    raise EOFError("connection closed by master")
                self.last_io = engine.clock.monotonic()
                engine.stats["net_repl_input_bytes"] += len(data)
                parser.feed(data)
                self._apply(parser, writer)
            elif engine.clock.monotonic() - self.last_io > timeout:
                raise SyncFailed("MASTER timeout: no data nor PING received...")
            if now >= next_ack:
                writer.write(self._ack())
                next_ack = now + ACK_PERIOD

    def _apply(self, parser: RequestParser, writer: asyncio.StreamWriter) -> None:
        """Run every complete command received, as the master client."""
        engine = self.engine
        primary = self.primary
        client = self.master_client
        clock = engine.clock
        clock.begin_turn()
        try:
            while (argv := parser.next_command()) is not None:
                if not argv:
                    continue
                if argv[0].lower() == b"replconf" and len(argv) > 1 and \
                        argv[1].lower() == b"getack":
                    writer.write(self._ack())  # the offset before this GETACK
                else:
                    reply = engine.execute(client, argv)
                    if reply.__class__ is ErrorReply:
                        self._applied_with_error(argv, reply)
                primary.feed(encode_command(argv))
        finally:
            clock.end_turn()

    def _applied_with_error(self, argv: list[bytes], reply: ErrorReply) -> None:
        """A command of the stream failed here: the data may now differ from
        the primary's.  Logged once per command name (Redis logs each)."""
        name = argv[0].lower()
        if name not in self._error_logged:
            self._error_logged.add(name)
            log.warning("== CRITICAL == This replica could not apply '%s' from its master: "
                        "%s (logged once per command)", name.decode("latin-1"),
                        reply.message.decode("utf-8", "replace"))

    # -- what INFO says -------------------------------------------------------------------
    def info_lines(self) -> list[str]:
        now = self.engine.clock.monotonic()
        config = self.engine.config
        up = self.state == "connected"
        lines = [
            f"master_host:{self.host}",
            f"master_port:{self.port}",
            f"master_link_status:{'up' if up else 'down'}",
            f"master_last_io_seconds_ago:{int(now - self.last_io) if up else -1}",
            f"master_sync_in_progress:{int(self.state == 'sync')}",
            f"slave_read_repl_offset:{self.primary.offset}",
            f"slave_repl_offset:{self.primary.offset}",
        ]
        if self.state == "sync" and self.sync_total:
            left = self.sync_total - self.sync_read
            lines += [f"master_sync_total_bytes:{self.sync_total}",
                      f"master_sync_read_bytes:{self.sync_read}",
                      f"master_sync_left_bytes:{left}",
                      f"master_sync_perc:{100 * self.sync_read / self.sync_total:.2f}",
                      f"master_sync_last_io_seconds_ago:{int(now - self.last_io)}"]
        if not up:
            lines.append(f"master_link_down_since_seconds:{int(now - self.down_since)}")
        lines += [
            f"slave_priority:{config['replica-priority']}",
            f"slave_read_only:{int(config['replica-read-only'])}",
            f"replica_announced:{int(config['replica-announced'])}",
        ]
        return lines

    def role(self) -> list[Any]:
        state = {"connect": b"connect", "connecting": b"connecting", "handshake": b"handshake",
                 "sync": b"sync", "connected": b"connected"}[self.state]
        return [b"slave", self.host.encode(), self.port, state,
                self.primary.offset if self.state == "connected" else -1]


def _text(line: bytes) -> str:
    return line.decode("utf-8", "replace").strip()
