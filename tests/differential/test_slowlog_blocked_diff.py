"""SLOWLOG and blocked commands against redis-server 7.0.15: a blocked
command goes into the slowlog when it is served, as the command the client
sent (Redis's slowlog.tcl "SLOWLOG - Rewritten commands are logged as their
original command": BLPOP served by an LPUSH inside MULTI is the newest entry,
after the SLOWLOG RESET the transaction ran)."""

from __future__ import annotations

import redis

from tests.support.waits import wait_until


def _entries(client: redis.Redis) -> list[list[bytes]]:
    return [entry["command"].split() for entry in client.slowlog_get(10)]


def _run(port: int) -> list[list[bytes]]:
    admin = redis.Redis(port=port)
    waiter = redis.Redis(port=port)
    admin.config_set("slowlog-log-slower-than", 0)
    conn = waiter.connection_pool.get_connection()
    conn.send_command("BLPOP", "l", "0")
    wait_until(lambda: admin.info("clients")["blocked_clients"] == 1)
    pipe = admin.pipeline(transaction=True)
    pipe.lpush("l", "foo")
    pipe.slowlog_reset()
    pipe.execute()
    assert conn.read_response() == [b"l", b"foo"]
    entries = _entries(admin)
    admin.config_set("slowlog-log-slower-than", 10000)
    admin.slowlog_reset()
    waiter.connection_pool.release(conn)
    waiter.close()
    admin.close()
    return entries


def test_a_served_blocked_command_is_logged_as_sent(differ):
    ours = _run(differ.ours.sock.getpeername()[1])
    theirs = _run(differ.theirs.sock.getpeername()[1])
    assert ours == theirs
    assert ours[0] == [b"BLPOP", b"l", b"0"]  # (as redis-py sent it)
