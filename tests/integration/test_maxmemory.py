"""maxmemory with noeviction (Redis's default policy), against a running
server: past the limit, commands that grow the data set (XADD, XGROUP
CREATE, SET ...) get Redis's -OOM, and so does a transaction holding one,
while reads, XACK, XDEL, XTRIM and DEL still run; freeing memory lets
writes in again; nothing acknowledged is lost."""

from __future__ import annotations

import pytest
import redis

from tests.support.redis_oracle import free_port

OOM = "command not allowed when used memory > 'maxmemory'."


@pytest.fixture
def server(processes, tmp_path):
    port = free_port()
    return processes.tidelog(["--port", str(port), "--dir", str(tmp_path), "--save", ""],
                             port=port)


def test_noeviction_refuses_growth_and_keeps_what_it_acknowledged(server) -> None:
    c = server.client()
    c.xgroup_create("s", "g", id="0", mkstream=True)
    used = c.info("memory")["used_memory"]
    c.config_set("maxmemory", used + 4 * 1024 * 1024)
    assert c.info("memory")["maxmemory_policy"] == "noeviction"
    acked = []
    payload = "x" * 4000
    with pytest.raises(redis.exceptions.OutOfMemoryError, match=OOM):
        for i in range(20_000):  # about 80 MB if nothing stopped it
            acked.append(c.xadd("s", {"n": i, "p": payload}))
    assert 100 < len(acked) < 20_000
    at_limit = c.info("memory")["used_memory"]
    # Well past the limit now (at the limit the heap moves by a few kB either way).
    c.config_set("maxmemory", at_limit // 2)
    for argv in (("SET", "k", "v"), ("XGROUP", "CREATE", "s", "g2", "0"),
                 ("HSET", "h", "f", "v")):
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            c.execute_command(*argv)
    pipe = c.pipeline(transaction=True)
    pipe.get("k")
    pipe.set("k", "v")
    with pytest.raises(redis.exceptions.ResponseError):
        pipe.execute()
    # Reads and the commands that free memory still run.
    assert [eid for eid, _ in c.xrange("s")] == acked
    got = c.xreadgroup("g", "c", {"s": ">"}, count=10)
    ids = [eid for eid, _ in got[0][1]]
    assert c.xack("s", "g", *ids) == 10
    assert c.xdel("s", acked[-1]) == 1
    assert c.xtrim("s", maxlen=0) == len(acked) - 1
    assert c.delete("s") == 1
    # used_memory counts what is allocated: it drops with the stream (the
    # resident size would not).
    assert c.info("memory")["used_memory"] < at_limit - 2 * 1024 * 1024
    c.config_set("maxmemory", c.info("memory")["used_memory"] + 4 * 1024 * 1024)
    c.set("k", "v")  # room again
    c.config_set("maxmemory", 0)
    c.set("big", "y" * 8_000_000)
    assert c.strlen("big") == 8_000_000


def test_only_noeviction_is_there(server) -> None:
    c = server.client()
    with pytest.raises(redis.ResponseError, match="not supported yet"):
        c.config_set("maxmemory-policy", "allkeys-lru")
    with pytest.raises(redis.ResponseError, match="must be one of"):
        c.config_set("maxmemory-policy", "nonsense")
    c.config_set("maxmemory-policy", "NoEviction")
    assert c.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
