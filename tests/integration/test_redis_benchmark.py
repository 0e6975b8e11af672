"""The default redis-benchmark run, every test of it, against Tidelog.

redis-benchmark is what many first try against a Redis-compatible server;
its default run (PING, SET/GET/INCR, list pushes and pops, SADD/SPOP, HSET,
ZADD/ZPOPMIN, LRANGE of 100 to 600 elements, MSET) must run to the end with
no error reply.  Timing is not looked at."""

from __future__ import annotations

from tests.support.benchmark import needs_redis_benchmark, run_redis_benchmark

DEFAULT_TESTS = [
    "PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP", "SADD",
    "HSET", "SPOP", "ZADD", "ZPOPMIN", "LPUSH (needed to benchmark LRANGE)",
    "LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)",
    "LRANGE_500 (first 500 elements)", "LRANGE_600 (first 600 elements)", "MSET (10 keys)",
]


@needs_redis_benchmark
def test_the_default_run_goes_to_the_end(tidelog_srv):
    assert run_redis_benchmark(tidelog_srv.port, "-n", "300", "-c", "4") == DEFAULT_TESTS
    assert tidelog_srv.engine.internal_errors == 0
