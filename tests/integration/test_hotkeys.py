"""HOTKEYS (Redis 8.6) from redis-py over real sockets, sync and asyncio,
RESP2 and RESP3: a session's life (START, GET while it records and after
STOP, RESET), GET's reply on the wire (one array holding the map; null
without a session), the errors, DURATION's stop, and the keys each metric
ranks.  Pages: https://redis.io/docs/latest/commands/hotkeys/,
https://redis.io/docs/latest/commands/hotkeys-start/,
https://redis.io/docs/latest/commands/hotkeys-stop/,
https://redis.io/docs/latest/commands/hotkeys-get/,
https://redis.io/docs/latest/commands/hotkeys-reset/,
https://redis.io/docs/latest/commands/hotkeys-help/.

Two points follow Redis 8.6's server rather than the pages: STOP without a
recording session answers a null reply (the page says an error; Redis's
hotkeysCommand replies null, and clients such as redis-rs read STOP as a
boolean for that reason), and GET wraps its map in a one-element array
(redis-py reads a list of dicts, redis-rs unwraps it).

A null GET is read with execute_command: redis-py's RESP2 reader of
hotkeys_get() iterates its reply and fails on null.
"""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
import redis
import redis.asyncio
from redis.commands.core import HotkeysMetricsTypes

CPU, NET = HotkeysMetricsTypes.CPU, HotkeysMetricsTypes.NET


@pytest.fixture
def srv(tidelog):
    """The module's server, with no HOTKEYS session before or after the test."""
    def clear() -> None:
        session = tidelog.engine.hotkeys
        if session is not None and session.active:
            session.stop(tidelog.engine.clock.now_ms())
        tidelog.engine.hotkeys = None
        tidelog.engine.hotkeys_changed()
    tidelog.call(clear)
    yield tidelog
    tidelog.call(clear)
    assert tidelog.engine.internal_errors == 0


def as_dict(reply):
    """GET's one-element list of maps (redis-py makes dicts of both protocols)."""
    assert isinstance(reply, list) and len(reply) == 1
    return reply[0]


def pairs(flat):
    return dict(zip(flat[::2], flat[1::2]))


def request(*argv: bytes) -> int:
    return len(b"*%d\r\n" % len(argv)) + sum(len(b"$%d\r\n" % len(a)) + len(a) + 2 for a in argv)


@pytest.mark.parametrize("protocol", [2, 3])
def test_a_session_from_start_to_reset(srv, protocol):
    with redis.Redis(port=srv.port, protocol=protocol) as c:
        assert c.execute_command("HOTKEYS", "GET") is None
        assert c.hotkeys_start(metrics=[CPU, NET], count=2) == b"OK"
        for _ in range(10):
            c.set("hot", "v" * 10)
        c.set("warm", "v")
        c.set("warm", "v")
        c.get("cold")
        c.ping()  # no key: not counted
        got = as_dict(c.hotkeys_get())
        assert got[b"tracking-active"] == 1
        assert got[b"sample-ratio"] == 1
        assert got[b"selected-slots"] == [[0, 16383]]
        hot = request(b"SET", b"hot", b"v" * 10) + 5
        warm = request(b"SET", b"warm", b"v") + 5
        cold = request(b"GET", b"cold") + (5 if protocol == 2 else 3)  # $-1 / _
        assert pairs(got[b"by-net-bytes"]) == {b"hot": 10 * hot, b"warm": 2 * warm}  # COUNT 2
        assert got[b"by-net-bytes"][0] == b"hot"
        assert got[b"total-net-bytes"] == got[b"net-bytes-all-commands-all-slots"] == \
            10 * hot + 2 * warm + cold
        assert set(pairs(got[b"by-cpu-time-us"])) <= {b"hot", b"warm", b"cold"}
        assert len(got[b"by-cpu-time-us"]) == 4
        assert got[b"all-commands-all-slots-us"] >= sum(pairs(got[b"by-cpu-time-us"]).values())
        for field in (b"collection-start-time-unix-ms", b"collection-duration-ms",
                      b"total-cpu-time-user-ms", b"total-cpu-time-sys-ms"):
            assert isinstance(got[field], int) and got[field] >= 0
        assert c.hotkeys_stop() == b"OK"
        stopped = as_dict(c.hotkeys_get())
        assert stopped[b"tracking-active"] == 0
        c.set("hot", "again")  # not counted any more
        assert as_dict(c.hotkeys_get())[b"by-net-bytes"] == stopped[b"by-net-bytes"]
        assert c.hotkeys_stop() is None  # nothing records
        assert c.hotkeys_reset() == b"OK"
        assert c.execute_command("HOTKEYS", "GET") is None


def test_info_has_a_hotkeys_section_while_a_session_exists(srv):
    """INFO's `# Hotkeys` section: absent before START, `hotkeys-tracking-active:1`
    while recording, `:0` once stopped, absent again after RESET (the Redis 8.6
    behaviour Jedis's and Lettuce's tests check); INFO HOTKEYS asks for it alone."""
    def info(*section: str) -> str:
        return raw.execute_command("INFO", *section).decode()

    with redis.Redis(port=srv.port) as c, \
            redis.Redis(port=srv.port, protocol=2) as raw:
        raw.set_response_callback("INFO", lambda r, **kw: r)
        assert "# Hotkeys" not in info()
        assert info("hotkeys") == ""
        c.hotkeys_start(metrics=[CPU], count=1)
        assert info("hotkeys") == "# Hotkeys\r\nhotkeys-tracking-active:1\r\n"
        assert "\r\n# Hotkeys\r\nhotkeys-tracking-active:1\r\n" in info()
        c.hotkeys_stop()
        assert c.info("hotkeys") == {"hotkeys-tracking-active": 0}
        assert "hotkeys-tracking-active:0" in info("everything")
        c.hotkeys_reset()
        assert "# Hotkeys" not in info("all")


@pytest.mark.parametrize("protocol", [2, 3])
def test_the_fields_of_one_metric_only(srv, protocol):
    with redis.Redis(port=srv.port, protocol=protocol, decode_responses=True) as c:
        c.hotkeys_start(metrics=[NET], sample_ratio=5)
        c.set("k", "v")
        got = as_dict(c.hotkeys_get())
        assert list(got) == [
            "tracking-active", "sample-ratio", "selected-slots", "all-commands-all-slots-us",
            "net-bytes-all-commands-all-slots", "collection-start-time-unix-ms",
            "collection-duration-ms", "total-net-bytes", "by-net-bytes"]
        assert got["sample-ratio"] == 5
        c.hotkeys_stop()
        c.hotkeys_reset()
        c.hotkeys_start(metrics=[CPU])
        got = as_dict(c.hotkeys_get())
        assert list(got)[-3:] == ["total-cpu-time-user-ms", "total-cpu-time-sys-ms",
                                  "by-cpu-time-us"]
        assert "by-net-bytes" not in got and "total-net-bytes" not in got


def _raw(port: int, payload: bytes, end: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(payload)
        got = b""
        while not got.endswith(end):
            got += s.recv(65536)  # the socket's timeout fails the test if the end never comes
        return got


@pytest.mark.parametrize("protocol, null, hello", [(2, b"$-1\r\n", b""),
                                                   (3, b"_\r\n", b"HELLO 3\r\n")])
def test_the_replies_on_the_wire(srv, protocol, null, hello):
    got = _raw(srv.port, hello + b"HOTKEYS GET\r\nHOTKEYS STOP\r\nPING\r\n", b"+PONG\r\n")
    assert got.endswith(null + null + b"+PONG\r\n")
    got = _raw(srv.port, hello + b"HOTKEYS START METRICS 1 NET\r\nSET k v\r\nHOTKEYS GET\r\n"
               b"HOTKEYS STOP\r\nPING\r\n", b"+PONG\r\n")
    head = b"*1\r\n*18\r\n" if protocol == 2 else b"*1\r\n%9\r\n"
    start = got.index(b"+OK\r\n+OK\r\n") + 10
    assert got[start:].startswith(head + b"$15\r\ntracking-active\r\n:1\r\n")
    assert b"$14\r\nselected-slots\r\n*1\r\n*2\r\n:0\r\n:16383\r\n" in got
    assert b"$12\r\nby-net-bytes\r\n*2\r\n$1\r\nk\r\n:" in got
    assert got.endswith(b"+OK\r\n+PONG\r\n")


@pytest.mark.parametrize("args, error", [
    ((), "METRICS parameter is required"),
    (("METRICS", 0), "METRICS count must be > 0 and <= 2"),
    (("METRICS", 3, "CPU", "NET"), "METRICS count must be > 0 and <= 2"),
    (("METRICS", 2, "CPU"), "METRICS count does not match number of metric types provided"),
    (("METRICS", 1, "CPU", "NET"), "syntax error"),
    (("METRICS", 1, "GPU"), "METRICS no valid metrics passed. Supported: CPU|NET"),
    (("METRICS", 2, "CPU", "CPU"), "METRICS CPU defined more than once!"),
    (("METRICS", 2, "NET", "NET"), "METRICS NET defined more than once!"),
    (("METRICS", 1, "CPU", "COUNT", 0), "COUNT must be between 1 and 64"),
    (("METRICS", 1, "CPU", "COUNT", 100), "COUNT must be between 1 and 64"),
    (("METRICS", 1, "CPU", "DURATION", 0), "DURATION must be between 1 and 1000000"),
    (("METRICS", 1, "CPU", "SAMPLE", 0), "SAMPLE ratio must be positive"),
    (("METRICS", 1, "CPU", "SLOTS", 2, 0, 5), "SLOTS parameter cannot be used in non-cluster mode"),
])
@pytest.mark.parametrize("protocol", [2, 3])
def test_start_errors(srv, protocol, args, error):
    with redis.Redis(port=srv.port, protocol=protocol) as c:
        with pytest.raises(redis.ResponseError, match=f"^{error}$".replace("|", "\\|")):
            c.execute_command("HOTKEYS", "START", *args)
        assert c.execute_command("HOTKEYS", "GET") is None  # nothing started


@pytest.mark.parametrize("protocol", [2, 3])
def test_session_state_errors(srv, protocol):
    with redis.Redis(port=srv.port, protocol=protocol) as c:
        assert c.hotkeys_start(metrics=[CPU]) == b"OK"
        with pytest.raises(redis.ResponseError,
                           match="^hotkey tracking session already in progress$"):
            c.hotkeys_start(metrics=[NET])
        with pytest.raises(redis.ResponseError,
                           match="^hotkey tracking session in progress, stop tracking first$"):
            c.hotkeys_reset()
        with pytest.raises(redis.ResponseError,
                           match="^wrong number of arguments for 'hotkeys\\|get' command$"):
            c.execute_command("HOTKEYS", "GET", "x")
        with pytest.raises(redis.ResponseError,
                           match="^unknown subcommand 'NOPE'. Try HOTKEYS HELP.$"):
            c.execute_command("HOTKEYS", "NOPE")
        with pytest.raises(redis.ResponseError, match="not allowed from script"):
            c.eval("return redis.call('hotkeys', 'get')", 0)
        assert c.hotkeys_stop() == b"OK"
        # A stopped session's results give way to a new session.
        assert c.hotkeys_start(metrics=[NET]) == b"OK"
        assert b"by-net-bytes" in as_dict(c.hotkeys_get())


@pytest.mark.parametrize("protocol", [2, 3])
def test_help(srv, protocol):
    with redis.Redis(port=srv.port, protocol=protocol) as c:
        lines = c.execute_command("HOTKEYS", "HELP")
        assert lines[0] == b"HOTKEYS <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
        assert lines[1].startswith(b"START <METRICS count [CPU] [NET]> [COUNT k]")
        assert {b"STOP", b"GET", b"RESET", b"HELP"} <= set(lines)
        assert lines[-1] == b"    Prints this help."


def test_duration_stops_the_session_by_itself(srv):
    with redis.Redis(port=srv.port) as c:
        assert c.hotkeys_start(metrics=[CPU], duration=1) == b"OK"
        c.set("k", "v")
        deadline = time.monotonic() + 30
        got = as_dict(c.hotkeys_get())
        while got[b"tracking-active"] == 1:  # polled, bounded; no timing asserted
            assert time.monotonic() < deadline, "the session did not stop"
            time.sleep(0.05)
            got = as_dict(c.hotkeys_get())
        assert got[b"collection-duration-ms"] == 1000
        assert c.hotkeys_stop() is None
        assert c.hotkeys_reset() == b"OK"


def test_commands_of_a_transaction_and_a_script(srv):
    with redis.Redis(port=srv.port, protocol=3) as c:
        c.hotkeys_start(metrics=[NET])
        with c.pipeline(transaction=True) as p:
            p.set("a", "1").incr("b").execute()
        c.eval("redis.call('set', 'inner', 1)", 1, "declared")
        got = pairs(as_dict(c.hotkeys_get())[b"by-net-bytes"])
        assert set(got) == {b"a", b"b", b"declared"}
        assert got[b"a"] == request(b"SET", b"a", b"1") + 5


@pytest.mark.parametrize("protocol", [2, 3])
def test_asyncio(srv, protocol):
    async def run() -> None:
        c = redis.asyncio.Redis(port=srv.port, protocol=protocol)
        try:
            assert await c.execute_command("HOTKEYS", "GET") is None
            assert await c.hotkeys_start(metrics=[CPU, NET], count=1) == b"OK"
            for _ in range(3):
                await c.set("hot", "x")
            await c.set("cold", "x")
            got = as_dict(await c.hotkeys_get())
            assert got[b"by-net-bytes"] == [b"hot", 3 * (request(b"SET", b"hot", b"x") + 5)]
            assert len(got[b"by-cpu-time-us"]) == 2
            with pytest.raises(redis.ResponseError, match="already in progress"):
                await c.hotkeys_start(metrics=[NET])
            assert await c.hotkeys_stop() == b"OK"
            assert as_dict(await c.hotkeys_get())[b"tracking-active"] == 0
            assert await c.hotkeys_reset() == b"OK"
            assert await c.execute_command("HOTKEYS", "GET") is None
        finally:
            await c.aclose()

    asyncio.run(run())


def test_no_session_leaves_the_fast_dispatch_alone(srv):
    with redis.Redis(port=srv.port) as c:
        c.set("k", "v")
        assert srv.call(lambda: bool(srv.engine._dispatch))
        c.hotkeys_start(metrics=[NET])
        c.set("k", "v")
        assert srv.call(lambda: srv.engine.ops.bypass and not srv.engine._dispatch)
        c.hotkeys_stop()
        c.set("k", "v")
        assert srv.call(lambda: not srv.engine.ops.bypass and bool(srv.engine._dispatch))


def test_acl_categories(srv):
    """HOTKEYS' subcommands are @admin @slow @dangerous, HELP only @slow
    (the hotkeys-* pages' ACL categories)."""
    with redis.Redis(port=srv.port) as admin, redis.Redis(port=srv.port) as c:
        admin.acl_setuser("hk", enabled=True, nopass=True, commands=["+@all", "-@dangerous"],
                          keys=["*"])
        try:
            c.execute_command("AUTH", "hk", "any")
            with pytest.raises(redis.exceptions.NoPermissionError,
                               match="no permissions to run the 'hotkeys\\|start' command"):
                c.hotkeys_start(metrics=[CPU])
            assert c.execute_command("HOTKEYS", "HELP")[0].startswith(b"HOTKEYS <subcommand>")
            assert b"no permissions" in admin.acl_dryrun("hk", "HOTKEYS", "GET")
        finally:
            admin.acl_deluser("hk")
        info = admin.execute_command("COMMAND", "INFO", "HOTKEYS")["hotkeys"]
        assert info["acl_categories"] == ["@slow"]
        subs = {sub[0]: set(sub[6]) for sub in info["subcommands"]}
        assert subs[b"hotkeys|start"] == {b"@admin", b"@slow", b"@dangerous"}
        assert subs[b"hotkeys|get"] == {b"@admin", b"@slow", b"@dangerous"}
        assert subs[b"hotkeys|help"] == {b"@slow"}
