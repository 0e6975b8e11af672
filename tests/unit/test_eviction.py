"""The choice of the key maxmemory evicts (eviction.py): volatile policies
sample only keys with a TTL, LRU the longest idle, LRM the longest
unwritten, LFU the lowest counter, TTL the soonest deadline."""

from __future__ import annotations

import random

from tidelog import eviction
from tidelog.keyspace import Database
from tidelog.lfu import Lfu


def database(keys: int, ttl_every: int = 0) -> Database:
    now = [1_000]
    db = Database(0, lambda: now[0])
    for i in range(keys):
        now[0] = 1_000 + i                 # key i was last touched at 1000 + i
        db.set(b"k%d" % i, b"v")
        if ttl_every and i % ttl_every == 0:
            db.set_expire(b"k%d" % i, 10_000_000 - i)  # later keys expire sooner
    return db


def test_nothing_to_evict() -> None:
    assert eviction.choose([database(0)], "allkeys-lru", 5) is None
    assert eviction.choose([database(50)], "volatile-lru", 5) is None


def test_volatile_policies_pick_keys_with_a_ttl_only() -> None:
    random.seed(7)
    db = database(200, ttl_every=10)
    for policy in ("volatile-random", "volatile-lru", "volatile-ttl"):
        for _ in range(50):
            _, key = eviction.choose([db], policy, 5)
            assert key in db.expires
    rare = database(2000, ttl_every=1000)  # two keys with a TTL among 2,000
    for _ in range(20):
        _, key = eviction.choose([rare], "volatile-lru", 5)
        assert key in rare.expires


def test_lru_and_ttl_take_the_best_of_the_sample() -> None:
    db = database(64)
    # The same seed draws the same sample: the choice is its best key.
    for seed in range(20):
        random.seed(seed)
        sample = eviction.sample(db, 8, False)
        random.seed(seed)
        _, key = eviction.choose([db], "allkeys-lru", 8)
        assert key == min(sample, key=lambda k: db.access[k])
    db = database(64, ttl_every=1)
    for seed in range(20):
        random.seed(seed)
        sample = eviction.sample(db, 8, True)
        random.seed(seed)
        _, key = eviction.choose([db], "volatile-ttl", 8)
        assert key == min(sample, key=lambda k: db.expires[k])


def test_lfu_takes_the_least_counted_and_lrm_the_least_written() -> None:
    now = [1_000_000]
    db = Database(0, lambda: now[0])
    db.track(Lfu(log_factor=0, decay_time=0), lrm=False)
    for i in range(64):
        db.set(b"k%d" % i, b"v")
        for _ in range(i % 7):  # key i counted 5 + i % 7
            db.get(b"k%d" % i)
    for seed in range(20):
        random.seed(seed)
        sample = eviction.sample(db, 8, False)
        random.seed(seed)
        _, key = eviction.choose([db], "allkeys-lfu", 8)
        assert db.frequency(key) == min(db.frequency(k) for k in sample)
    db = Database(0, lambda: now[0])
    db.track(None, lrm=True)
    for i in range(64):
        now[0] = 1_000_000 + i * 1000          # key i written at second i ...
        db.set(b"k%d" % i, b"v")
    now[0] += 1000
    for i in range(64):
        db.get(b"k%d" % (63 - i))               # ... whatever was read since
    now[0] += 1000
    for seed in range(20):
        random.seed(seed)
        sample = eviction.sample(db, 8, False)
        random.seed(seed)
        _, key = eviction.choose([db], "allkeys-lrm", 8)
        assert key == min(sample, key=lambda k: int(k[1:]))
