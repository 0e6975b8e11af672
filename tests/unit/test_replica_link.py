"""A replica's link against a scripted primary that sends every reply one
byte at a time: the handshake, keep-alives, a snapshot with an EOF mark, the
stream with GETACK, and the ACK offsets Redis's rules give."""

from __future__ import annotations

import asyncio
import os

import pytest

import tidelog.commands  # noqa: F401  (registers the commands)
from tidelog.config import Config
from tidelog.engine import Engine
from tidelog.persistence import rdb
from tidelog.persistence.aof_format import encode_command as cmd
from tidelog.replication.primary import attach

REPLID = b"a" * 40


class ScriptedPrimary:
    """A primary that answers each expected request with bytes dribbled out."""

    def __init__(self, snapshot: bytes, eof_mark: bool) -> None:
        self.snapshot = snapshot
        self.eof_mark = eof_mark
        self.received: list[bytes] = []
        self.acks: asyncio.Queue[bytes] = asyncio.Queue()
        self.stream_sent = 0
        self.task: asyncio.Task | None = None

    async def dribble(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        for i in range(len(data)):
            writer.write(data[i:i + 1])
            await writer.drain()
            await asyncio.sleep(0)

    async def expect(self, reader: asyncio.StreamReader, prefix: bytes) -> bytes:
        line = await reader.readuntil(b"\r\n")  # *N
        count = int(line[1:-2])
        argv = []
        for _ in range(count):
            size = int((await reader.readuntil(b"\r\n"))[1:-2])
            argv.append((await reader.readexactly(size + 2))[:-2])
        got = b" ".join(argv)
        self.received.append(got)
        assert got.startswith(prefix), got
        return got

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.task = asyncio.current_task()
        try:
            await self._serve(reader, writer)
        except (asyncio.CancelledError, asyncio.IncompleteReadError):
            pass  # the test is over, or the replica hung up
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self.expect(reader, b"PING")
        await self.dribble(writer, b"+PONG\r\n")
        await self.expect(reader, b"REPLCONF listening-port")
        await self.expect(reader, b"REPLCONF capa eof capa psync2")
        await self.dribble(writer, b"+OK\r\n+OK\r\n")
        await self.expect(reader, b"PSYNC ? -1")
        await self.dribble(writer, b"\n\n+FULLRESYNC " + REPLID + b" 100\r\n\n")
        if self.eof_mark:
            mark = os.urandom(20).hex().encode()
            await self.dribble(writer, b"$EOF:" + mark + b"\r\n" + self.snapshot + mark)
            assert await self.expect(reader, b"REPLCONF ACK") == b"REPLCONF ACK 100"
        else:
            await self.dribble(writer, b"$%d\r\n" % len(self.snapshot) + self.snapshot)
        stream = (cmd([b"SELECT", b"0"]) + cmd([b"XADD", b"s", b"5-1", b"f", b"v"])
                  + cmd([b"PING"]) + cmd([b"FROBNICATE", b"x"]))
        getack = cmd([b"REPLCONF", b"GETACK", b"*"])
        await self.dribble(writer, stream + getack + cmd([b"SET", b"k", b"v"]))
        self.stream_sent = len(stream)
        while True:
            got = await self.expect(reader, b"REPLCONF ACK")
            await self.acks.put(got)


@pytest.mark.parametrize("eof_mark", [False, True], ids=["length", "eof-mark"])
async def test_the_link_byte_at_a_time(eof_mark: bool, caplog) -> None:
    source = Engine(Config())
    source.execute(source.new_client(), [b"XADD", b"s", b"1-1", b"a", b"b"])
    snapshot = rdb.dumps(source.dbs)
    primary = ScriptedPrimary(snapshot, eof_mark)
    server = await asyncio.start_server(primary.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    engine = Engine(Config())
    engine.execute(engine.new_client(), [b"SET", b"old", b"gone after the full sync"])
    replica = attach(engine)
    try:
        replica.become_replica("127.0.0.1", port, "test")
        # The answer to GETACK counts the stream before the GETACK itself.
        while True:
            ack = await asyncio.wait_for(primary.acks.get(), 30)
            if ack != b"REPLCONF ACK 100":
                break
        assert ack == b"REPLCONF ACK %d" % (100 + primary.stream_sent)
        for _ in range(200):  # the SET after the GETACK arrives in the same dribble
            if engine.dbs[0].data.get(b"k") == b"v":
                break
            await asyncio.sleep(0.01)
        db = engine.dbs[0]
        assert b"old" not in db.data
        reply = engine.execute(engine.new_client(), [b"XRANGE", b"s", b"-", b"+"])
        assert [entry[0] for entry in reply] == [b"1-1", b"5-1"]
        assert db.data[b"k"] == b"v"
        getack = len(cmd([b"REPLCONF", b"GETACK", b"*"]))
        assert replica.offset == 100 + primary.stream_sent + getack + len(cmd([b"SET", b"k", b"v"]))
        assert replica.replid == REPLID.decode()
        # A command the replica cannot apply is skipped (and counted), and said.
        assert "could not apply 'frobnicate'" in caplog.text
        assert engine.execute(engine.new_client(), [b"SET", b"x", b"y"]).message.startswith(
            b"READONLY")
    finally:
        if replica.upstream is not None:
            replica.upstream.stop()
        server.close()
        if primary.task is not None:
            primary.task.cancel()
            await asyncio.gather(primary.task, return_exceptions=True)
        await server.wait_closed()


async def test_a_replica_without_its_primary_serves_stale_data_only_when_allowed() -> None:
    engine = Engine(Config())
    client = engine.new_client()
    engine.execute(client, [b"SET", b"k", b"v"])
    replica = attach(engine)
    engine.execute(client, [b"CONFIG", b"SET", b"replica-serve-stale-data", b"no"])
    try:
        replica.become_replica("127.0.0.1", 1, "test")  # nobody listens on port 1
        reply = engine.execute(client, [b"GET", b"k"])
        assert reply.message == (b"MASTERDOWN Link with MASTER is down and "
                                 b"replica-serve-stale-data is set to 'no'.")
        assert engine.execute(client, [b"PING"]) is not None           # flagged stale
        assert b"role:slave" in engine.execute(client, [b"INFO", b"replication"]).text
        engine.execute(client, [b"CONFIG", b"SET", b"replica-serve-stale-data", b"yes"])
        assert engine.execute(client, [b"GET", b"k"]) == b"v"
        engine.execute(client, [b"CONFIG", b"SET", b"replica-serve-stale-data", b"no"])
        assert engine.execute(client, [b"GET", b"k"]).message.startswith(b"MASTERDOWN")
        engine.execute(client, [b"REPLICAOF", b"NO", b"ONE"])
        assert engine.execute(client, [b"GET", b"k"]) == b"v"
    finally:
        if replica.upstream is not None:
            replica.upstream.stop()
