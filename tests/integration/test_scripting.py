"""Scripts over real sockets with redis-py: Script objects and EVAL/EVALSHA
(sync and asyncio), atomicity against clients hammering the same stream,
a runaway script stopped by SCRIPT KILL while others get -BUSY, and a
script's effects in the AOF replaying to the same state."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest
import redis
import redis.asyncio

from tests.support.redis_oracle import free_port

INCR = "return redis.call('INCR', KEYS[1])"


def test_register_script_and_eval(tidelog_srv):
    r = redis.Redis(port=tidelog_srv.port)
    incr = r.register_script(INCR)
    assert [incr(keys=["n"]) for _ in range(3)] == [1, 2, 3]
    r.script_flush()
    assert incr(keys=["n"]) == 4  # NOSCRIPT: redis-py loads it again
    assert r.eval("return {KEYS[1], ARGV[1], 7}", 1, "k", "a") == [b"k", b"a", 7]
    sha = r.script_load("return ARGV[1] .. ARGV[2]")
    assert r.evalsha(sha, 0, "x", "y") == b"xy"
    assert r.script_exists(sha, "0" * 40) == [True, False]
    assert r.eval_ro("return redis.call('GET', KEYS[1])", 1, "n") == b"4"
    with pytest.raises(redis.ResponseError, match="Write commands are not allowed"):
        r.eval_ro("return redis.call('SET', KEYS[1], 'x')", 1, "n")
    with pytest.raises(redis.exceptions.NoScriptError):
        r.evalsha("f" * 40, 0)


def test_asyncio_script(tidelog_srv):
    async def main():
        r = redis.asyncio.Redis(port=tidelog_srv.port)
        incr = r.register_script(INCR)
        results = await asyncio.gather(*(incr(keys=["a"]) for _ in range(20)))
        assert sorted(results) == list(range(1, 21))
        assert await r.eval("return redis.call('GET', KEYS[1])", 1, "a") == b"20"
        await r.aclose()

    asyncio.run(main())


SCRIPT_XADD_READ = """
local id = redis.call('XADD', KEYS[1], '*', 'by', 'script')
local read = redis.call('XREADGROUP', 'GROUP', 'g', ARGV[1], 'COUNT', 100000, 'STREAMS', KEYS[1], '>')
local entries = read[1][2]
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1][1]
return {id, entries[#entries][1], last}
"""


def test_scripts_are_atomic(tidelog_srv):
    port = tidelog_srv.port
    setup = redis.Redis(port=port)
    setup.xgroup_create("s", "g", id="$", mkstream=True)
    stop = threading.Event()
    errors: list[BaseException] = []

    def hammer(name: str) -> None:
        r = redis.Redis(port=port)
        try:
            for _ in range(400):
                if stop.is_set():
                    return
                r.xadd("s", {"by": name})
                r.xreadgroup("g", name, {"s": ">"}, count=5)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(f"c{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    r = redis.Redis(port=port)
    script = r.register_script(SCRIPT_XADD_READ)
    try:
        for _ in range(200):
            added, last_read, last_in_stream = script(keys=["s"], args=["script"])
            # Nothing came between the script's XADD and its reads.
            assert added == last_read == last_in_stream
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not errors


def test_busy_then_script_kill(tidelog_srv):
    port = tidelog_srv.port
    admin = redis.Redis(port=port)
    assert admin.config_set("busy-reply-threshold", 100)
    assert admin.config_get("lua-time-limit") == {"lua-time-limit": "100"}
    outcome: list[object] = []

    def runaway() -> None:
        try:
            outcome.append(redis.Redis(port=port).eval("while true do end", 0))
        except redis.ResponseError as exc:
            outcome.append(exc)

    with pytest.raises(redis.ResponseError, match="NOTBUSY"):
        admin.script_kill()
    t = threading.Thread(target=runaway)
    t.start()
    other = redis.Redis(port=port)
    busy = None
    for _ in range(200):  # the first call may wait out the threshold; then BUSY
        try:
            other.get("x")
        except redis.exceptions.BusyLoadingError as exc:
            busy = exc
            break
        except redis.ResponseError as exc:
            busy = exc
            break
    assert busy is not None and "busy running a script" in str(busy)
    # A connection opened while the script runs is served too (redis-cli SCRIPT KILL).
    late = redis.Redis(port=port)
    with pytest.raises(redis.ResponseError, match="BUSY"):
        late.set("x", 1)
    assert late.function_stats()[b"running_script"][b"command"] == [b"EVAL", b"while true do end",
                                                                    b"0"]
    assert late.script_kill()
    t.join(30)
    assert not t.is_alive()
    assert len(outcome) == 1 and "Script killed by user with SCRIPT KILL" in str(outcome[0])
    assert other.ping()
    assert other.eval("return 5", 0) == 5
    assert late.set("y", 2) and late.get("y") == b"2"  # the loop took the late connection over


def start(processes, *extra: str):
    port = free_port()
    proc = processes.tidelog(["--port", str(port), "--dir", str(processes.workdir / "data"),
                              "--save", "", *extra], port=port)
    return proc, port


def test_unkillable_then_shutdown_nosave(processes):
    proc, port = start(processes)
    admin = redis.Redis(port=port)
    admin.config_set("busy-reply-threshold", 50)
    outcome: list[object] = []

    def runaway() -> None:
        try:
            outcome.append(redis.Redis(port=port).eval(
                "redis.call('SET', 'w', 1) while true do end", 0))
        except redis.RedisError as exc:
            outcome.append(exc)

    t = threading.Thread(target=runaway)
    t.start()
    reply = None
    for _ in range(200):
        try:
            admin.script_kill()
        except redis.ResponseError as exc:
            reply = str(exc)
            if reply.startswith("UNKILLABLE"):
                break
    assert reply is not None and reply.startswith("UNKILLABLE Sorry the script already executed")
    with pytest.raises(redis.ResponseError, match="BUSY"):
        admin.get("w")
    admin.shutdown(nosave=True)  # redis-py takes the closed connection for success
    assert proc.wait(30) == 0
    t.join(30)
    assert isinstance(outcome[0], redis.ConnectionError)


def test_effects_replay_from_the_aof(processes):
    proc, port = start(processes, "--appendonly", "yes", "--appendfsync", "always")
    r = redis.Redis(port=port)
    body = """
    redis.call('SET', KEYS[1], ARGV[1])
    redis.call('INCRBY', KEYS[2], 5)
    redis.call('SELECT', 2)
    redis.call('RPUSH', KEYS[3], ARGV[1], 'x')
    redis.call('XADD', KEYS[4], '*', 'f', ARGV[1])
    return redis.call('TIME')[1] ~= nil
    """
    for i in range(5):
        r.eval(body, 4, "s", "n", "l", "st", f"v{i}")
    r.eval("return redis.call('GET', 'missing')", 0)
    before = (r.get("s"), r.get("n"))
    r2 = redis.Redis(port=port, db=2)
    before2 = (r2.lrange("l", 0, -1), r2.xrange("st"))
    assert before == (b"v4", b"25")
    aof_dir = processes.workdir / "data" / "appendonlydir"
    incr = b"".join((aof_dir / name).read_bytes() for name in sorted(os.listdir(aof_dir))
                    if name.endswith(".incr.aof"))
    assert b"EVAL" not in incr.upper().replace(b"EXEC", b"")
    assert b"MULTI" in incr
    proc.sigkill()
    proc, port = start(processes, "--appendonly", "yes")
    r = redis.Redis(port=port)
    assert (r.get("s"), r.get("n")) == before
    r2 = redis.Redis(port=port, db=2)
    assert (r2.lrange("l", 0, -1), r2.xrange("st")) == before2


LIBRARY = ("#!lua name=counters\n"
           "redis.register_function('bump', function(keys, args) "
           "return redis.call('INCRBY', keys[1], args[1]) end)\n"
           "redis.register_function{function_name='peek', callback=function(keys) "
           "return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='read it'}")


def test_functions_over_redis_py(tidelog_srv):
    r = redis.Redis(port=tidelog_srv.port)
    assert r.function_load(LIBRARY) == "counters" or r.function_load(LIBRARY, replace=True)
    assert r.fcall("bump", 1, "c", 5) == 5
    assert r.fcall_ro("peek", 1, "c") == b"5"
    with pytest.raises(redis.ResponseError, match="write flag"):
        r.fcall_ro("bump", 1, "c", 1)
    listed = r.function_list(library="count*", withcode=True)
    assert listed[0][1] == b"counters" and listed[0][-1] == LIBRARY.encode()
    payload = r.function_dump()
    r.function_flush()
    with pytest.raises(redis.ResponseError, match="Function not found"):
        r.fcall("bump", 1, "c", 1)
    assert r.function_restore(payload)
    assert r.fcall("bump", 1, "c", 1) == 6


def test_functions_survive_a_restart_rdb(processes):
    proc, port = start(processes)
    r = redis.Redis(port=port)
    r.function_load(LIBRARY)
    r.fcall("bump", 1, "c", 2)
    assert r.save()
    proc.terminate()
    proc, port = start(processes)
    r = redis.Redis(port=port)
    assert r.fcall("bump", 1, "c", 3) == 5
    assert r.function_stats()[b"engines"][b"LUA"][b"libraries_count"] == 1
    # redis-server 7.0.15 loads our snapshot, functions included.
    assert r.save()
    proc.terminate()
    srv = processes.redis("--dir", str(processes.workdir / "data"))
    theirs = redis.Redis(port=srv.port)
    assert theirs.fcall("bump", 1, "c", 1) == 6


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_functions_survive_a_restart_aof(processes, preamble):
    options = ("--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", preamble)
    proc, port = start(processes, *options)
    r = redis.Redis(port=port)
    r.function_load(LIBRARY)
    r.fcall("bump", 1, "c", 2)
    proc.sigkill()
    proc, port = start(processes, *options)
    r = redis.Redis(port=port)
    assert r.fcall("bump", 1, "c", 3) == 5
    r.bgrewriteaof()
    for _ in range(600):
        if not r.info("persistence")["aof_rewrite_in_progress"]:
            break
        threading.Event().wait(0.05)
    r.function_load(LIBRARY.replace("counters", "more").replace("'bump'", "'bump2'")
                    .replace("'peek'", "'peek2'"))
    proc.sigkill()
    proc, port = start(processes, *options)
    r = redis.Redis(port=port)
    assert r.fcall("bump", 1, "c", 1) == 6
    assert r.fcall("bump2", 1, "c", 1) == 7


def test_publish_from_a_script_reaches_subscribers(tidelog_srv):
    r = redis.Redis(port=tidelog_srv.port)
    p = r.pubsub()
    p.subscribe("ch")
    assert p.get_message(timeout=5)["type"] == "subscribe"
    assert r.eval("return redis.call('PUBLISH', 'ch', ARGV[1])", 0, "hello") == 1
    message = p.get_message(timeout=5)
    assert message is not None and message["data"] == b"hello"
    info = r.info("memory")
    assert info["number_of_cached_scripts"] == 1 and info["number_of_libraries"] == 0
    p.close()


def test_function_kill(tidelog_srv):
    port = tidelog_srv.port
    admin = redis.Redis(port=port)
    admin.config_set("busy-reply-threshold", 50)
    admin.function_load("#!lua name=spin\n"
                        "redis.register_function('spin', function() while true do end end)")
    outcome: list[object] = []

    def runaway() -> None:
        try:
            outcome.append(redis.Redis(port=port).fcall("spin", 0))
        except redis.ResponseError as exc:
            outcome.append(exc)

    t = threading.Thread(target=runaway)
    t.start()
    killed = False
    for _ in range(1000):
        try:
            killed = redis.Redis(port=port).function_kill()
            break
        except redis.ResponseError as exc:
            assert "NOTBUSY" in str(exc)  # not past the threshold yet
            threading.Event().wait(0.01)
    assert killed
    t.join(30)
    assert "Script killed by user" in str(outcome[0]) and "script: spin, on @user_function:2." \
        in str(outcome[0])
    assert admin.ping()
