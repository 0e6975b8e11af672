"""The operator's commands from redis-py over real sockets: MONITOR,
SLOWLOG, CLIENT PAUSE (sync and asyncio)."""

from __future__ import annotations

import redis

from tests.support.rawclient import RawClient, encode_command


def test_monitor_with_redis_py(tidelog, r):
    worker = redis.Redis(port=tidelog.port, protocol=2)
    try:
        worker.ping()  # connected (its CLIENT SETINFO calls done) before monitoring
        with r.monitor() as m:
            worker.set("greeting", "hello world")
            pipe = worker.pipeline(transaction=False)
            for i in range(5):  # one pipelined run: each call is shown
                pipe.xadd("s", {"n": i}, id=f"{i + 1}-0")
            pipe.execute()
            worker.get("greeting")
            seen = [m.next_command() for _ in range(7)]
        commands = [s["command"] for s in seen]
        assert commands[0] == "SET greeting hello world"
        assert commands[1:6] == [f"XADD s {i + 1}-0 n {i}" for i in range(5)]
        assert commands[6] == "GET greeting"
        assert all(s["db"] == 0 and s["client_type"] == "tcp" for s in seen)
    finally:
        worker.close()


def test_monitor_sees_pipelined_runs_per_call(tidelog):
    """Engine.execute_run takes a pipelined burst as one; a monitor still
    sees one line per call, in order."""
    with RawClient(tidelog.port) as watcher, RawClient(tidelog.port) as worker:
        assert watcher.call("MONITOR") == b"+OK\r\n"
        burst = [["XADD", "s", "*", "f", str(i)] for i in range(50)]
        worker.send_raw(b"".join(encode_command(c) for c in burst))
        for _ in burst:
            assert worker.read_reply(timeout=5).startswith(b"$")
        lines = [watcher.read_reply(timeout=5) for _ in burst]
        assert [line.rsplit(b" ", 1)[1] for line in lines] == \
            [b'"%d"\r\n' % i for i in range(50)]
    assert tidelog.engine.monitors == []
