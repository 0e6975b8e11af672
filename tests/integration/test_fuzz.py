"""Raw bytes against a running server: random and mutated RESP frames,
truncated frames, huge counts and lengths, nested and RESP3 types sent as
requests, inline lines, interleaved with valid commands.  After every
example the server must be alive and answer PING on a fresh connection; at
the end no command may have failed inside (INFO's unexpected_error_replies)
and the server's memory must not have grown without bound.

A fixed budget runs in ``make test`` (FUZZ_EXAMPLES, default 500); set the
environment variable ``TIDELOG_FUZZ_EXAMPLES`` for a longer run.
"""

from __future__ import annotations

import os
import socket
import time

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.redis_oracle import free_port

FUZZ_EXAMPLES = int(os.environ.get("TIDELOG_FUZZ_EXAMPLES", "500"))
# Commands that would stop, pause or reconfigure the server under test.
DISABLED = ("SHUTDOWN", "DEBUG", "CONFIG", "SAVE", "BGSAVE", "BGREWRITEAOF", "REPLICAOF",
            "SLAVEOF", "CLIENT", "FLUSHALL", "MONITOR", "SYNC", "PSYNC")
VALID = [
    ["PING"], ["SET", "k", "v"], ["GET", "k"], ["INCR", "n"], ["DEL", "k"],
    ["XADD", "s", "*", "f", "v"], ["XADD", "s", "MAXLEN", "~", "10", "*", "a", "b"],
    ["XRANGE", "s", "-", "+", "COUNT", "3"], ["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"],
    ["XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"],
    ["XACK", "s", "g", "0-1"], ["XINFO", "STREAM", "s"], ["XPENDING", "s", "g"],
    ["HSET", "h", "f", "v"], ["LPUSH", "l", "a", "b"], ["ZADD", "z", "1", "m"],
    ["SADD", "t", "x"], ["MULTI"], ["EXEC"], ["SUBSCRIBE", "ch"], ["PUBLISH", "ch", "m"],
    ["HELLO", "3"], ["HELLO", "2"], ["BLPOP", "nolist", "0.01"], ["EXPIRE", "k", "100"],
]


def encode(argv: list[bytes]) -> bytes:
    return b"*%d\r\n" % len(argv) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in argv)


args = st.binary(max_size=20) | st.sampled_from([b"k", b"s", b"0", b"-1", b"*", b">", b"$"])
valid_frames = st.builds(lambda c, extra: encode([w.encode() for w in c] + extra),
                         st.sampled_from(VALID), st.lists(args, max_size=2))
odd_frames = st.sampled_from([
    b"*99999999999\r\n", b"*2147483648\r\n", b"$9999999999\r\n", b"*-5\r\n", b"*1\r\n$-2\r\n",
    b"*1\r\n$536870913\r\n", b"*2\r\n*1\r\n$1\r\na\r\n$1\r\nb\r\n", b"%1\r\n+a\r\n+b\r\n",
    b"~1\r\n+a\r\n", b">1\r\n+a\r\n", b"#t\r\n", b",1.5\r\n", b"(123\r\n", b"_\r\n",
    b"*1\r\n$3\r\nGET", b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n", b"PING \"unbalanced\r\n",
    b"\r\n\r\n", b"\x00\xff\xfe", b"*1\r\n$4\r\nPING\r\n" * 50, b"SET k " + b"v" * 70000 + b"\r\n",
])
inline = st.builds(lambda c, extra: b" ".join([w.encode() for w in c] + extra) + b"\r\n",
                   st.sampled_from(VALID), st.lists(st.binary(max_size=8).filter(
                       lambda b: b"\r" not in b and b"\n" not in b), max_size=2))


@st.composite
def mutated(draw) -> bytes:
    frame = bytearray(draw(valid_frames))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "cut", "dup"]))
        if not frame:
            break
        at = draw(st.integers(0, len(frame) - 1))
        if kind == "flip":
            frame[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            frame[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "cut":
            del frame[at:]
        else:
            frame[at:at] = frame[at:at + draw(st.integers(1, 16))]
    return bytes(frame)


pieces = st.lists(valid_frames | odd_frames | inline | mutated() | st.binary(max_size=64),
                  min_size=1, max_size=8)


def send_and_drain(port: int, data: bytes) -> None:
    """Send, close our side, read until the server closes (bounded in time)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and sock.recv(65536):
                pass
        except OSError:
            pass  # the server closed first (a protocol error closes the connection)


def ping(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"*1\r\n$4\r\nPING\r\n")
        return sock.recv(64)


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    from tests.support.processes import ProcessGroup
    work = tmp_path_factory.mktemp("fuzz")
    port = free_port()
    conf = work / "fuzz.conf"
    conf.write_text(f"port {port}\ndir {work}\nsave \"\"\nproto-max-bulk-len 1mb\n"
                    "client-query-buffer-limit 1mb\n"
                    + "".join(f'rename-command {c} ""\n' for c in DISABLED))
    group = ProcessGroup(work)
    try:
        yield group.tidelog([str(conf)], port=port)
    finally:
        group.stop_all()


def test_raw_bytes_never_hurt_the_server(fuzz_server) -> None:
    port = fuzz_server.port
    ping(port)
    rss_before = fuzz_server.rss_kib()
    seen = {"examples": 0}

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(pieces)
    def one(frames: list[bytes]) -> None:
        seen["examples"] += 1
        send_and_drain(port, b"".join(frames))
        assert fuzz_server.proc.poll() is None, fuzz_server.stderr
        assert ping(port) == b"+PONG\r\n"

    one()
    with redis.Redis(port=port, socket_timeout=10) as client:
        info = client.info("stats")
    assert seen["examples"] == FUZZ_EXAMPLES
    assert info["unexpected_error_replies"] == 0, info
    grown = fuzz_server.rss_kib() - rss_before
    assert grown < 100_000, f"RSS grew by {grown} kB over {seen['examples']} examples"
