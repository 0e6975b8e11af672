"""The server over real sockets: what every client sees, whatever commands exist.

PING and ECHO over RESP2 and RESP3 from redis-py (sync and asyncio) and raw
bytes; inline commands; long pipelines; protocol errors (the offender is
answered and dropped, everyone else carries on); random bytes; a client that
stops reading (back-pressure); ``maxclients``; ``timeout``; a unix socket.

Every loop here is bounded in count and time, and the only timed assertions
are generous upper bounds.
"""

from __future__ import annotations

import os
import select
import socket
import stat
import threading
import time

import pytest
import redis
import redis.asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.rawclient import RawClient, encode_command
from tidelog.server.embed import EmbeddedServer

PONG = b"+PONG\r\n"


def bulk(data: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(data), data)


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.01) -> bool:
    """Poll predicate() until it is true or the time is up; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def client_count(srv: EmbeddedServer) -> int:
    return srv.call(lambda: len(srv.engine.clients))


def is_closed(sock: socket.socket) -> bool:
    """True once the peer has closed (a pending EOF), without blocking."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1 << 16, socket.MSG_PEEK) == b""
    except ConnectionError:
        return True


# -- PING and ECHO, RESP2 and RESP3 ----------------------------------------------------

def test_ping_echo_resp2(r):
    assert r.ping() is True
    assert r.echo("hello") == b"hello"
    assert r.echo(b"") == b""
    assert r.echo(bytes(range(256))) == bytes(range(256))


def test_ping_echo_resp3(r3):
    assert r3.ping() is True
    assert r3.echo("hello") == b"hello"
    assert r3.echo(bytes(range(256))) == bytes(range(256))
    assert r3.get_connection_kwargs()["protocol"] == 3


def test_ping_echo_raw_resp3(raw):
    assert raw.call("HELLO", "3").startswith(b"%")
    assert raw.call("PING") == PONG
    assert raw.call("PING", "hi") == b"$2\r\nhi\r\n"
    assert raw.call("ECHO", "hello") == b"$5\r\nhello\r\n"


def test_ping_echo_raw_bytes(raw):
    assert raw.call("PING") == PONG
    assert raw.call("PING", "hi") == b"$2\r\nhi\r\n"
    assert raw.call("ECHO", "hello") == b"$5\r\nhello\r\n"
    assert raw.call("ECHO", "") == b"$0\r\n\r\n"
    assert raw.call("ping") == PONG  # command names are case-insensitive
    assert raw.call("EcHo", "x") == b"$1\r\nx\r\n"


async def test_asyncio_clients_resp2_and_resp3(tidelog):
    import asyncio

    for protocol in (2, 3):
        pool = redis.asyncio.BlockingConnectionPool(
            port=tidelog.port, protocol=protocol, max_connections=64, timeout=30)
        client = redis.asyncio.Redis.from_pool(pool)
        try:
            assert await client.ping() is True
            assert await client.echo(b"async") == b"async"
            # Many commands in flight at once over a pool of connections
            # (callers wait for a free one once all 64 are busy).
            replies = await asyncio.wait_for(
                asyncio.gather(*(client.echo(b"m%d" % i) for i in range(200))), 30)
            assert replies == [b"m%d" % i for i in range(200)]
        finally:
            await client.aclose()


async def test_asyncio_pipeline(tidelog):
    client = redis.asyncio.Redis(port=tidelog.port, protocol=3)
    try:
        async with client.pipeline(transaction=False) as pipe:
            for i in range(500):
                pipe.echo(b"p%d" % i)
            replies = await pipe.execute()
        assert replies == [b"p%d" % i for i in range(500)]
    finally:
        await client.aclose()


# -- inline commands -------------------------------------------------------------------

@pytest.mark.parametrize("line, reply", [
    (b"PING\r\n", PONG),
    (b"PING\n", PONG),                                   # LF alone ends a line too
    (b"  ping   \r\n", PONG),
    (b"PING hello\r\n", bulk(b"hello")),
    (b'ECHO "hello world"\r\n', bulk(b"hello world")),
    (b"ECHO 'single quoted'\r\n", bulk(b"single quoted")),
    (b'ECHO "tab\\there"\r\n', bulk(b"tab\there")),
    (b'ECHO "\\x41\\x42\\n"\r\n', bulk(b"AB\n")),          # hex escapes, as sdssplitargs
    (b"ECHO 'it\\'s'\r\n", bulk(b"it's")),
    (b'ECHO ""\r\n', bulk(b"")),
])
def test_inline_commands(raw, line, reply):
    raw.send_raw(line)
    assert raw.read_reply(timeout=10) == reply


def test_inline_empty_lines_are_skipped(raw):
    raw.send_raw(b"\r\n\n   \r\nPING\r\n")
    assert raw.read_reply(timeout=10) == PONG
    raw.send_raw(b"\r\n")
    raw.send_raw(b"PING\r\n")
    assert raw.read_reply(timeout=10) == PONG


def test_inline_and_multibulk_mixed_in_one_write(raw):
    raw.send_raw(b"PING\r\n" + encode_command(["ECHO", "a"]) + b"ECHO b\r\n" +
                 encode_command(["PING"]))
    assert [raw.read_reply(timeout=10) for _ in range(4)] == [PONG, bulk(b"a"), bulk(b"b"), PONG]


def test_unknown_command_keeps_the_connection_open(raw):
    reply = raw.call("NO-SUCH-COMMAND", "x")
    assert reply.startswith(b"-ERR unknown command 'NO-SUCH-COMMAND'")
    assert raw.call("PING") == PONG


# -- pipelines and partial reads -------------------------------------------------------

def _send_in_background(sock: socket.socket, data: bytes) -> threading.Thread:
    """sendall() on a thread, so a big write cannot deadlock with our reads."""
    def run() -> None:
        sock.sendall(data)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_pipeline_of_10000_commands_in_one_write(raw):
    n = 10_000
    commands = b"".join(
        encode_command(["ECHO", b"%d" % i]) if i % 2 else encode_command(["PING"])
        for i in range(n))
    sender = _send_in_background(raw.sock, commands)
    deadline = time.monotonic() + 60
    for i in range(n):
        expected = bulk(b"%d" % i) if i % 2 else PONG
        assert raw.read_reply(timeout=max(1, deadline - time.monotonic())) == expected, i
    sender.join(30)
    assert not sender.is_alive()
    assert raw.call("PING") == PONG


def test_hello_in_a_pipeline_switches_the_protocol_of_the_replies_after_it(raw):
    replies = raw.pipeline([["CONFIG", "GET", "maxclients"], ["HELLO", "3"],
                            ["CONFIG", "GET", "maxclients"], ["HELLO", "2"],
                            ["CONFIG", "GET", "maxclients"]])
    assert replies[0].startswith(b"*2\r\n") and replies[4] == replies[0]
    assert replies[1].startswith(b"%") and replies[3].startswith(b"*")
    assert replies[2].startswith(b"%1\r\n")


def test_pipeline_of_10000_inline_commands(raw):
    n = 10_000
    sender = _send_in_background(raw.sock, b"".join(b"ECHO %d\r\n" % i for i in range(n)))
    deadline = time.monotonic() + 60
    for i in range(n):
        assert raw.read_reply(timeout=max(1, deadline - time.monotonic())) == bulk(b"%d" % i)
    sender.join(30)


def test_redis_py_pipeline_of_10000(r):
    pipe = r.pipeline(transaction=False)
    for i in range(10_000):
        pipe.echo(b"%d" % i)
    assert pipe.execute() == [b"%d" % i for i in range(10_000)]


def test_all_replies_of_one_read_arrive(raw):
    """Several commands in one write: every reply comes, however the bytes
    are cut into packets (we read until we have them all)."""
    raw.send_raw(encode_command(["PING"]) + encode_command(["ECHO", "one"]) +
                 encode_command(["ECHO", "two"]))
    assert [raw.read_reply(timeout=10) for _ in range(3)] == [PONG, bulk(b"one"), bulk(b"two")]


def test_command_sent_one_byte_at_a_time(raw):
    raw.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    data = encode_command(["ECHO", "split"]) + b"PING\r\n"
    for i in range(len(data)):
        raw.send_raw(data[i:i + 1])
    assert raw.read_reply(timeout=10) == bulk(b"split")
    assert raw.read_reply(timeout=10) == PONG


def test_large_bulk_across_many_reads(raw):
    payload = os.urandom(1 << 20) * 4  # 4 MiB
    command = encode_command(["ECHO", payload])
    sender = threading.Thread(
        target=lambda: [raw.sock.sendall(command[i:i + 65_536])
                        for i in range(0, len(command), 65_536)], daemon=True)
    sender.start()
    assert raw.read_reply(timeout=60) == bulk(payload)
    sender.join(30)
    assert raw.call("PING") == PONG


def test_clients_on_threads_get_their_own_replies(tidelog):
    errors: list[str] = []

    def worker(k: int) -> None:
        try:
            with RawClient(tidelog.port) as client:
                for i in range(200):
                    tag = b"c%d-%d" % (k, i)
                    reply = client.call("ECHO", tag)
                    if reply != bulk(tag):
                        errors.append(f"client {k}: {reply!r} for {tag!r}")
                        return
        except Exception as exc:  # report, don't hang the test
            errors.append(f"client {k}: {exc!r}")

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


# -- protocol errors ---------------------------------------------------------------------

PROTOCOL_ERRORS = [
    pytest.param(b"*abc\r\n", b"invalid multibulk length", id="bad-multibulk-length"),
    pytest.param(b"*1\r\nfoo\r\n", b"expected '$', got 'f'", id="dollar-missing"),
    pytest.param(b"*2\r\n$4\r\nECHO\r\n:3\r\n", b"expected '$', got ':'", id="integer-not-bulk"),
    pytest.param(b"*1\r\n$abc\r\n", b"invalid bulk length", id="bad-bulk-length"),
    pytest.param(b"*1\r\n$-5\r\n", b"invalid bulk length", id="negative-bulk-length"),
    pytest.param(b"*1\r\n$536870913\r\n", b"invalid bulk length", id="bulk-over-default-max"),
    pytest.param(b'ECHO "unbalanced\r\n', b"unbalanced quotes in request", id="inline-quotes"),
    pytest.param(b"ECHO 'unbalanced\r\n", b"unbalanced quotes in request", id="inline-squotes"),
    pytest.param(b'ECHO "closed"x\r\n', b"unbalanced quotes in request", id="inline-after-quote"),
]


def assert_dropped_with(client: RawClient, message: bytes) -> None:
    """The connection gets exactly one protocol error, then is closed."""
    data = client.read_until_closed(timeout=10)
    assert data == b"-ERR Protocol error: " + message + b"\r\n"


@pytest.mark.parametrize("payload, message", PROTOCOL_ERRORS)
def test_protocol_error_closes_only_that_connection(tidelog, payload, message):
    with RawClient(tidelog.port) as bystander, RawClient(tidelog.port) as offender:
        assert bystander.call("PING") == PONG
        assert offender.call("PING") == PONG
        offender.send_raw(payload)
        assert_dropped_with(offender, message)
        # The other open connection, and new ones, still work.
        assert bystander.call("ECHO", "still here") == bulk(b"still here")
        with RawClient(tidelog.port) as newcomer:
            assert newcomer.call("PING") == PONG
    assert wait_until(lambda: client_count(tidelog) == 0)


def test_replies_before_a_protocol_error_are_sent(raw):
    raw.send_raw(encode_command(["ECHO", "first"]) + b"PING\r\n*x\r\n" + encode_command(["PING"]))
    data = raw.read_until_closed(timeout=10)
    assert data == bulk(b"first") + PONG + b"-ERR Protocol error: invalid multibulk length\r\n"


def test_bulk_length_over_proto_max_bulk_len(embedded):
    srv = embedded(proto_max_bulk_len=1_048_576)
    with RawClient(srv.port) as bystander:
        assert bystander.call("PING") == PONG
        with RawClient(srv.port) as client:
            exactly = b"x" * 1_048_576  # the limit itself is allowed
            assert client.call("ECHO", exactly) == bulk(exactly)
            client.send_raw(b"*2\r\n$4\r\nECHO\r\n$1048577\r\n")
            assert_dropped_with(client, b"invalid bulk length")
        assert bystander.call("PING") == PONG


def test_protocol_error_arriving_in_pieces(raw):
    for piece in (b"*", b"1\r\n", b"$", b"x", b"\r\n"):
        raw.send_raw(piece)
        time.sleep(0.01)
    assert_dropped_with(raw, b"invalid bulk length")


# -- garbage never crashes the server --------------------------------------------------

_COMMAND_NAMES = [b"PING", b"ECHO", b"GET", b"SET", b"DEL", b"EXISTS", b"TYPE", b"XADD",
                  b"XLEN", b"XRANGE", b"XREVRANGE", b"XDEL", b"XTRIM", b"XGROUP", b"XACK",
                  b"XPENDING", b"XCLAIM", b"XINFO", b"MULTI", b"EXEC", b"DISCARD", b"WATCH",
                  b"SELECT", b"HELLO", b"DBSIZE", b"EXPIRE", b"TTL", b"SCAN", b"KEYS"]

_argument = st.one_of(st.binary(max_size=12), st.sampled_from(
    [b"s", b"*", b"-", b"+", b"0", b"1", b"-1", b"0-1", b"$", b">", b"MAXLEN", b"~",
     b"COUNT", b"STREAMS", b"GROUP", b"CREATE", b"g", b"c", b"18446744073709551616"]))

_command = st.builds(lambda name, args: encode_command([name, *args]),
                     st.sampled_from(_COMMAND_NAMES), st.lists(_argument, max_size=6))

_chunk = st.one_of(
    _command,
    st.binary(max_size=64),
    st.sampled_from([b"\r\n", b"*", b"$", b"*1\r\n", b"$3\r\n", b"*-1\r\n", b"*0\r\n", b'"',
                     b"'", b"\\x", b"PING\r\n", b"*99999999999999999999\r\n", b"\n"]),
)


def _throw_at_server(port: int, data: bytes) -> bytes:
    """Send data, close our side, and read whatever comes back until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except ConnectionError:
            return b""  # the server already dropped us: fine
        received = b""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(1 << 16)
            except ConnectionError:
                break
            if not chunk:
                break
            received += chunk
        return received


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=512))
def test_random_bytes_never_crash_the_server(tidelog, data):
    _throw_at_server(tidelog.port, data)
    with RawClient(tidelog.port) as client:
        assert client.call("PING") == PONG


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(_chunk, max_size=12))
def test_mangled_commands_never_crash_the_server(tidelog, chunks):
    reply = _throw_at_server(tidelog.port, b"".join(chunks))
    # Whatever came back is whole RESP replies, at most one protocol error, last.
    if b"-ERR Protocol error: " in reply:
        assert reply.endswith(b"\r\n")
        assert reply.count(b"-ERR Protocol error: ") == 1
    with RawClient(tidelog.port) as client:
        assert client.call("PING") == PONG
    assert tidelog.call(lambda: tidelog.engine.internal_errors) == 0


# -- back-pressure -------------------------------------------------------------------------

def test_client_that_stops_reading_does_not_stall_others(tidelog):
    """A client pipelines far more than the socket buffers hold and reads
    nothing: the server stops reading from it (so its sends block) but keeps
    serving everyone else; once it reads, every reply arrives, in order."""
    payload_size = 64 * 1024
    total = 1500  # ~96 MiB each way: far beyond what the kernel and the server buffer
    slow = socket.socket()
    try:
        # Small fixed buffers on our side (before connecting: no autotuning).
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 128 * 1024)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 128 * 1024)
        slow.settimeout(60)
        slow.connect(("127.0.0.1", tidelog.port))
        filler = b"z" * (payload_size - 8)
        sent = [0]
        failure: list[BaseException] = []

        def send_all() -> None:
            try:
                for i in range(total):
                    slow.sendall(encode_command([b"ECHO", b"%08d" % i + filler]))
                    sent[0] = i + 1
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                failure.append(exc)

        sender = threading.Thread(target=send_all, daemon=True)
        sender.start()

        # Wait until the sender makes no progress for a while (it is blocked).
        deadline = time.monotonic() + 60
        last, last_change = -1, time.monotonic()
        while time.monotonic() < deadline and sender.is_alive():
            if sent[0] != last:
                last, last_change = sent[0], time.monotonic()
            elif time.monotonic() - last_change > 1.0:
                break
            time.sleep(0.05)
        assert sent[0] < total, "the server kept reading from a client that reads nothing"

        # Meanwhile everybody else is served promptly.
        with RawClient(tidelog.port, timeout=10) as other:
            started = time.monotonic()
            for i in range(50):
                assert other.call("ECHO", b"%d" % i) == bulk(b"%d" % i)
            assert time.monotonic() - started < 10

        # Now read: every reply arrives, in order, and the sender finishes.
        header = b"$%d\r\n" % payload_size
        reply_size = len(header) + payload_size + 2
        buf = bytearray()
        for i in range(total):
            while len(buf) < reply_size:
                chunk = slow.recv(1 << 20)
                assert chunk, f"connection closed after {i} replies"
                buf += chunk
            reply = bytes(buf[:reply_size])
            del buf[:reply_size]
            assert reply[:len(header)] == header
            assert reply[len(header):len(header) + 8] == b"%08d" % i
            assert reply.endswith(filler + b"\r\n")
        sender.join(30)
        assert not sender.is_alive() and failure == [] and sent[0] == total
    finally:
        slow.close()


def test_client_closing_with_unread_replies(tidelog):
    """A client that sends a lot and disconnects without reading leaves
    nothing behind."""
    for _ in range(5):
        sock = socket.create_connection(("127.0.0.1", tidelog.port), timeout=10)
        sock.sendall(encode_command(["ECHO", b"q" * 65_536]) * 64)
        sock.close()
    assert wait_until(lambda: client_count(tidelog) == 0, timeout=10)
    with RawClient(tidelog.port) as client:
        assert client.call("PING") == PONG


# -- maxclients, timeout, unix socket, shutdown ---------------------------------------------

def test_maxclients(embedded):
    srv = embedded(maxclients=2)
    first, second = RawClient(srv.port), RawClient(srv.port)
    try:
        assert first.call("PING") == PONG
        assert second.call("PING") == PONG
        with RawClient(srv.port) as third:
            assert third.read_until_closed(timeout=10) == b"-ERR max number of clients reached\r\n"
        assert first.call("PING") == PONG and second.call("PING") == PONG
        first.close()
        assert wait_until(lambda: client_count(srv) == 1)
        with RawClient(srv.port) as fourth:
            assert fourth.call("PING") == PONG
        assert srv.call(lambda: srv.engine.stats["rejected_connections"]) == 1
    finally:
        first.close()
        second.close()


def test_timeout_closes_idle_clients_only(embedded):
    srv = embedded(timeout=2, hz=50)
    idle = RawClient(srv.port)
    busy = RawClient(srv.port)
    try:
        assert idle.call("PING") == PONG
        assert busy.call("PING") == PONG
        # Keep one client talking while the other one idles out.
        deadline = time.monotonic() + 30
        closed = False
        while time.monotonic() < deadline:
            assert busy.call("PING") == PONG
            if is_closed(idle.sock):
                closed = True
                break
            time.sleep(0.1)
        assert closed, "an idle client was not closed within 30 s with timeout 2"
        assert busy.call("ECHO", "alive") == bulk(b"alive")
    finally:
        idle.close()
        busy.close()


def test_timeout_zero_never_closes(embedded):
    srv = embedded(timeout=0, hz=100)
    with RawClient(srv.port) as client:
        assert client.call("PING") == PONG
        time.sleep(0.5)
        assert not is_closed(client.sock)
        assert client.call("PING") == PONG


def test_unix_socket(embedded, tmp_path):
    path = str(tmp_path / "tidelog.sock")
    srv = embedded(unixsocket=path, port=0)
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    client = redis.Redis(unix_socket_path=path)
    try:
        assert client.ping() is True
        assert client.echo(b"over unix") == b"over unix"
    finally:
        client.close()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(path)
        sock.sendall(b"PING\r\n*abc\r\n")
        data = b""
        while chunk := sock.recv(4096):
            data += chunk
        assert data == PONG + b"-ERR Protocol error: invalid multibulk length\r\n"
    srv.stop()
    assert not os.path.exists(path)


def test_unix_socket_permissions(embedded, tmp_path):
    """``unixsocketperm`` is octal, as in redis.conf."""
    path = str(tmp_path / "perm.sock")
    embedded(unixsocket=path, unixsocketperm="700", port=0)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700


def test_stop_closes_connected_clients(embedded):
    srv = embedded()
    with RawClient(srv.port) as client:
        assert client.call("PING") == PONG
        started = time.monotonic()
        srv.stop()
        assert client.read_until_closed(timeout=10) == b""
        assert time.monotonic() - started < 30
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()
