"""client-output-buffer-limit over real sockets.

A client that does not read what it is sent is closed once its pending
output passes its class's limit (pubsub while it has a subscription, normal
otherwise), logged as Redis logs it and counted in INFO stats
(``client_output_buffer_limit_disconnections``, Redis 7.4).  Everything is
bounded in count: publishing stops as soon as the subscriber is gone, and
at a fixed number of messages at most; waits are polls with deadlines.

The server runs in a subprocess so its resident memory (VmRSS) can be read
before and after: the subscriber's backlog is dropped with it.
"""

from __future__ import annotations

import socket
import time

import pytest
import redis

from tests.support.processes import ProcessGroup, ServerProcess
from tests.support.redis_oracle import free_port
from tests.support.waits import wait_until

MESSAGE = b"x" * (64 * 1024)
MAX_MESSAGES = 400  # 25 MiB at most: far above the limits set below


def start(processes: ProcessGroup) -> tuple[ServerProcess, redis.Redis]:
    port = free_port()
    proc = processes.tidelog(["--port", str(port), "--dir", str(processes.workdir),
                              "--save", ""], port=port)
    return proc, redis.Redis(port=port, socket_timeout=30)


def slow_reader(port: int, *command: bytes) -> socket.socket:
    """A raw connection with a small receive buffer that sends ``command``
    and reads only the first reply's first bytes."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"*%d\r\n" % len(command) + b"".join(
        b"$%d\r\n%s\r\n" % (len(arg), arg) for arg in command))
    return sock


def wait_closed(sock: socket.socket, timeout: float = 10.0) -> None:
    """Read (and drop) what the server sent until it closes the connection."""
    sock.settimeout(timeout)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not sock.recv(1 << 20):
                return
    except ConnectionResetError:
        return
    raise AssertionError("the server did not close the connection")


def disconnections(r: redis.Redis) -> int:
    return r.info("stats")["client_output_buffer_limit_disconnections"]


def test_slow_subscriber_is_closed_at_its_hard_limit(processes):
    proc, r = start(processes)
    assert r.config_set("client-output-buffer-limit", "pubsub 1mb 512kb 60")
    sub = slow_reader(r.connection_pool.connection_kwargs["port"], b"SUBSCRIBE", b"ch")
    deadline = time.monotonic() + 10
    while r.pubsub_numsub("ch") != [(b"ch", 1)]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    before = proc.rss_kib()
    sent = 0
    while sent < MAX_MESSAGES and r.pubsub_numsub("ch") == [(b"ch", 1)]:
        assert r.publish("ch", MESSAGE) in (0, 1)  # the publisher is never refused
        sent += 1
    after = proc.rss_kib()
    assert r.pubsub_numsub("ch") == [(b"ch", 0)], f"still subscribed after {sent} messages"
    assert sent * len(MESSAGE) < 16 * 1024 * 1024  # it went near 1 MiB, not at the end
    wait_closed(sub)
    sub.close()
    assert disconnections(r) == 1
    assert r.publish("ch", b"more") == 0 and r.ping()
    text = proc.stdout + proc.stderr
    assert "scheduled to be closed ASAP for overcoming of output buffer limits." in text
    assert " id=" in text or "Client id=" in text
    print(f"\nslow subscriber: {sent} x 64 KiB published, RSS {before} KiB -> {after} KiB")
    assert after - before < 16 * 1024  # the backlog did not stay in the server


def test_slow_subscriber_is_closed_after_its_soft_seconds(processes):
    proc, r = start(processes)
    assert r.config_set("client-output-buffer-limit", "pubsub 0 256kb 2")
    sub = slow_reader(r.connection_pool.connection_kwargs["port"], b"SUBSCRIBE", b"ch")
    deadline = time.monotonic() + 10
    while r.pubsub_numsub("ch") != [(b"ch", 1)]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    sent = 0
    started = time.monotonic()
    while sent < 64 and r.pubsub_numsub("ch") == [(b"ch", 1)]:
        r.publish("ch", MESSAGE)  # 4 MiB: above the soft limit, not for 2 s yet
        sent += 1
    if time.monotonic() - started < 2:  # (a machine too slow for this check skips it)
        assert r.pubsub_numsub("ch") == [(b"ch", 1)], "closed before its soft seconds"
    time.sleep(2.2)  # the soft limit's time runs out ...
    while sent < 128 and r.pubsub_numsub("ch") == [(b"ch", 1)]:
        r.publish("ch", MESSAGE)  # ... and the next write above it closes the client
        sent += 1
        time.sleep(0.05)
    assert r.pubsub_numsub("ch") == [(b"ch", 0)]
    wait_closed(sub)
    sub.close()
    assert disconnections(r) == 1


def test_normal_client_not_reading_a_large_reply(processes):
    proc, r = start(processes)
    value = b"v" * 1024
    pipe = r.pipeline(transaction=False)
    for i in range(12000):  # about 12 MiB of XRANGE reply: more than socket buffers take
        pipe.xadd("s", {"f": value}, id=f"{i + 1}-1")
    pipe.execute()
    port = r.connection_pool.connection_kwargs["port"]
    # Without a limit (the default, normal 0 0 0) the reply is sent whole.
    sock = slow_reader(port, b"XRANGE", b"s", b"-", b"+")
    time.sleep(0.2)
    assert disconnections(r) == 0
    sock.close()
    assert r.config_set("client-output-buffer-limit", "normal 1mb 0 0")
    sock = slow_reader(port, b"XRANGE", b"s", b"-", b"+")
    # It reads nothing until the server has closed it: a reader draining the
    # socket meanwhile could take the whole reply as fast as it is written.
    wait_until(lambda: disconnections(r) == 1)
    wait_closed(sock)
    sock.close()
    assert disconnections(r) == 1
    assert r.xlen("s") == 12000  # other clients are not affected
    r.config_resetstat()
    assert disconnections(r) == 0


def test_client_list_shows_pending_output(processes):
    proc, r = start(processes)
    assert r.config_set("client-output-buffer-limit", "pubsub 0 0 0")
    sub = slow_reader(r.connection_pool.connection_kwargs["port"], b"SUBSCRIBE", b"ch")
    deadline = time.monotonic() + 10
    while r.pubsub_numsub("ch") != [(b"ch", 1)]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    for _ in range(128):  # 8 MiB: more than the socket buffers hold (4 MiB at most)
        r.publish("ch", MESSAGE)
    subscriber = [c for c in r.client_list() if c["cmd"] == "subscribe"]
    assert len(subscriber) == 1
    omem = int(subscriber[0]["omem"])
    assert omem > 0 and int(subscriber[0]["tot-mem"]) >= omem
    assert disconnections(r) == 0
    sub.close()


@pytest.mark.parametrize("value, error", [
    ("normal 1mb", "Wrong number of arguments in buffer limit configuration."),
    ("foo 1 1 1", "Invalid client class specified in buffer limit configuration."),
])
def test_config_set_errors(processes, value, error):
    proc, r = start(processes)
    with pytest.raises(redis.ResponseError) as exc:
        r.config_set("client-output-buffer-limit", value)
    assert str(exc.value).endswith(error)
    assert r.config_get("client-output-buffer-limit") == {
        "client-output-buffer-limit":
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"}
