"""maxmemory against a running server.  With noeviction (Redis's default
policy), past the limit, commands that grow the data set (XADD, XGROUP
CREATE, SET ...) get Redis's -OOM, and so does a transaction holding one,
while reads, XACK, XDEL, XTRIM and DEL still run; freeing memory lets
writes in again; nothing acknowledged is lost.  With the evicting policies
the keys each one favours survive (read lately: LRU; read often: LFU;
written lately: LRM; no TTL: volatile-*), by margins that leave nothing to
chance in practice."""

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


def test_every_policy_of_redis_8_6(server) -> None:
    c = server.client()
    for policy in ("allkeys-lfu", "volatile-lfu", "allkeys-lrm", "volatile-lrm", "NoEviction"):
        c.config_set("maxmemory-policy", policy)
    assert c.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
    with pytest.raises(redis.ResponseError, match="must be one of"):
        c.config_set("maxmemory-policy", "nonsense")
    assert c.config_get("lfu-*") == {"lfu-log-factor": "10", "lfu-decay-time": "1"}


def fill(c, limit_mb: int, count: int, prefix: str, ttl: bool = False, hot=(),
         batch: int = 100, between=None) -> None:
    """Write ``count`` values of 4 kB, ``batch`` at a time; between batches
    call ``between(key)`` on each ``hot`` key (a read by default)."""
    value = "v" * 4000
    for first in range(0, count, batch):
        pipe = c.pipeline(transaction=False)
        for i in range(first, min(first + batch, count)):
            pipe.set(f"{prefix}{i}", value, ex=3600 if ttl else None)
        pipe.execute()
        for key in hot:
            (between or c.get)(key)


def test_allkeys_lru_evicts_the_idle_keys_and_never_refuses(server) -> None:
    c = server.client()
    hot = [f"hot{i}" for i in range(10)]
    for key in hot:
        c.set(key, "keep me")
    c.config_set("maxmemory-samples", 10)
    c.config_set("maxmemory-policy", "allkeys-lru")
    limit = c.info("memory")["used_memory"] + 4 * 1024 * 1024
    c.config_set("maxmemory", limit)
    fill(c, 4, 5000, "cold", hot=hot)  # about 20 MB asked for, no -OOM
    info = c.info("memory")
    assert info["used_memory"] <= limit + 256 * 1024
    evicted = c.info("stats")["evicted_keys"]
    assert evicted > 1000 and c.dbsize() < 5010
    assert all(c.get(key) == "keep me" for key in hot)


def test_allkeys_lfu_keeps_the_keys_read_often(server) -> None:
    """A new key's counter is 5 and its first read takes it to 6 for sure
    (the chance of an increment is 1 up to 5): the keys read between batches
    always count more than the ones written once, so only a sample made of
    hot keys alone (10 of about 1,000, 10 drawn) could evict one.  Nothing
    decays (lfu-decay-time 0): a minute turning mid-test changes nothing."""
    c = server.client()
    hot = [f"hot{i}" for i in range(10)]
    for key in hot:
        c.set(key, "keep me")
    c.config_set("maxmemory-samples", 10)
    c.config_set("lfu-decay-time", 0)
    c.config_set("maxmemory-policy", "allkeys-lfu")
    limit = c.info("memory")["used_memory"] + 4 * 1024 * 1024
    c.config_set("maxmemory", limit)
    fill(c, 4, 5000, "cold", hot=hot)
    assert c.info("stats")["evicted_keys"] > 1000
    assert all(c.object("freq", key) >= 6 for key in hot)
    assert all(c.get(key) == "keep me" for key in hot)
    assert c.object("freq", "cold4999") == 5


def test_allkeys_lrm_keeps_the_keys_written_recently(server) -> None:
    """Under LRM only writes count: keys rewritten every 50 writes survive,
    keys read just as often but written first go (a rewritten key is older
    than a sampled key only when that one came in the current batch of 50)."""
    c = server.client()
    read = [f"read{i}" for i in range(10)]
    written = [f"written{i}" for i in range(10)]
    for key in read + written:
        c.set(key, "keep me")
    c.config_set("maxmemory-samples", 10)
    c.config_set("maxmemory-policy", "allkeys-lrm")
    limit = c.info("memory")["used_memory"] + 4 * 1024 * 1024
    c.config_set("maxmemory", limit)
    fill(c, 4, 5000, "cold", hot=read + written, batch=50,
         between=lambda key: c.set(key, "keep me") if key in written else c.get(key))
    assert c.info("stats")["evicted_keys"] > 1000
    assert all(c.get(key) == "keep me" for key in written)
    assert not any(c.exists(key) for key in read)


def test_volatile_policies_evict_only_keys_with_a_ttl(server) -> None:
    c = server.client()
    c.config_set("maxmemory-policy", "volatile-ttl")
    c.set("forever", "x" * 1000)
    limit = c.info("memory")["used_memory"] + 2 * 1024 * 1024
    c.config_set("maxmemory", limit)
    fill(c, 2, 2000, "temp", ttl=True)
    assert c.get("forever") == "x" * 1000
    assert c.info("stats")["evicted_keys"] > 0
    # Nothing with a TTL to evict: writes get -OOM, and the other keys stay.
    c.config_set("maxmemory", 0)
    c.delete(*c.keys("temp*"))
    c.config_set("maxmemory", 1)
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        c.set("more", "y")
    assert c.get("forever") == "x" * 1000
