"""A small asyncio RESP2 client for the consumer-group benchmarks.

The redis-benchmark workloads need no Python client; the consumer-group
benchmarks do (redis-benchmark cannot read a reply and act on it), and there
the client must be cheap enough not to be what is measured.  So this client
is a bare ``asyncio.Protocol``: one write per call (or per pipelined batch),
replies matched to futures in order, nothing else per call.

Replies are parsed by hiredis's C reader when the ``hiredis`` package is
importable (it is in the project's virtualenv), else by ``resp.parse``; the
event loop is uvloop's when importable.  Both choices are reported with the
results (``client_stack()``), and the same code drives every server.
"""

from __future__ import annotations

import asyncio
import collections
import os
import signal
from collections.abc import Coroutine, Sequence

import resp

try:  # optional: the C reply parser
    import hiredis
except ImportError:  # pragma: no cover - depends on the environment
    hiredis = None

try:  # optional: the faster event loop
    import uvloop
except ImportError:  # pragma: no cover - depends on the environment
    uvloop = None

encode = resp.encode
RespError = resp.RespError


def client_stack() -> str:
    loop = f"uvloop {uvloop.__version__}" if uvloop else "asyncio"
    parser = f"hiredis {hiredis.__version__}" if hiredis else "pure-Python parser"
    return f"{loop}, {parser}"


class _PyReader:
    """hiredis.Reader's interface over resp.parse (gets() is False when incomplete)."""

    def __init__(self) -> None:
        self.buf = b""
        self.pos = 0

    def feed(self, data: bytes) -> None:
        if self.pos:
            self.buf = self.buf[self.pos:]
            self.pos = 0
        self.buf += data

    def gets(self):
        try:
            value, self.pos = resp.parse(self.buf, self.pos)
        except resp.Incomplete:
            return False
        return value


def make_reader():
    if hiredis is not None:
        return hiredis.Reader(replyError=RespError)
    return _PyReader()


class Connection(asyncio.Protocol):
    """One connection; ``send`` writes commands, replies complete futures in order."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.reader = make_reader()
        self.waiters: collections.deque = collections.deque()
        self.lost: BaseException | None = None

    # -- protocol callbacks -------------------------------------------------
    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        waiters = self.waiters
        while True:
            reply = self.reader.gets()
            if reply is False:
                return
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(reply)

    def connection_lost(self, exc) -> None:
        self.lost = exc or ConnectionError("server closed the connection")
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_exception(ConnectionError(str(self.lost)))

    # -- sending ------------------------------------------------------------
    def _check(self) -> None:
        if self.lost is not None:
            raise ConnectionError(str(self.lost))

    def send_raw(self, payload: bytes, replies: int) -> list[asyncio.Future]:
        """Write pre-encoded commands; one future per expected reply."""
        self._check()
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in range(replies)]
        self.waiters.extend(futures)
        self.transport.write(payload)
        return futures

    def send(self, *commands: Sequence[resp.Arg]) -> list[asyncio.Future]:
        return self.send_raw(b"".join(encode(c) for c in commands), len(commands))

    @property
    def outstanding(self) -> int:
        return len(self.waiters)

    async def call(self, *argv: resp.Arg):
        reply = await self.send(argv)[0]
        if isinstance(reply, RespError):
            raise reply
        return reply

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def connect(port: int, host: str = "127.0.0.1") -> Connection:
    loop = asyncio.get_running_loop()
    _, conn = await loop.create_connection(Connection, host, port)
    return conn


def run(main: Coroutine):
    """Run a coroutine on a fresh event loop (uvloop's when available)."""
    if uvloop is not None:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(main)
    return asyncio.run(main)


def child_setup() -> None:
    """In a forked client process: default signal handling, and die with the parent."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent is already gone
            os._exit(1)
    except (OSError, AttributeError):
        pass
