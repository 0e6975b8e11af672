"""Strings over real sockets: redis-benchmark's default string tests, and
the string commands' propagation replayed from the AOF after a crash."""

from __future__ import annotations

import pytest
import redis

from tests.support.benchmark import needs_redis_benchmark, run_redis_benchmark
from tests.support.processes import ProcessGroup, ServerProcess
from tests.support.redis_oracle import free_port


def start(processes: ProcessGroup, *extra: str) -> tuple[ServerProcess, int]:
    port = free_port()
    proc = processes.tidelog(["--port", str(port), "--bind", "127.0.0.1",
                              "--dir", str(processes.workdir / "data"), "--save", "", *extra],
                             port=port)
    return proc, port


@needs_redis_benchmark
def test_redis_benchmark_string_tests(processes):
    """SET, GET, INCR and MSET (10 keys) as redis-benchmark sends them."""
    proc, port = start(processes)
    assert run_redis_benchmark(port, "-t", "set,get,incr,mset", "-n", "300", "-c", "4") == \
        ["SET", "GET", "INCR", "MSET (10 keys)"]
    with redis.Redis(port=port, decode_responses=True) as r:
        assert int(r.get("counter:__rand_int__")) == 300
        assert r.get("key:__rand_int__") is not None
        assert r.dbsize() >= 2


def test_string_commands_survive_the_aof(processes):
    proc, port = start(processes, "--appendonly", "yes", "--appendfsync", "always")
    with redis.Redis(port=port, decode_responses=True) as r:
        r.set("f", "10.5")
        assert r.incrbyfloat("f", "0.1") == 10.6
        r.expire("f", 1000)
        assert r.incrbyfloat("f", "1e-3") == 10.601
        r.execute_command("SETEX", "sx", 1000, "v")
        r.psetex("px", 1000000, "v")
        r.set("g", "v")
        assert r.getex("g", ex=1000) == "v"
        r.set("p", "v", ex=1000)
        assert r.getex("p", persist=True) == "v"
        r.set("gone", "v")
        assert r.getex("gone", pxat=1) == "v"
        assert r.append("a", "hello") == 5
        assert r.append("a", " world") == 11
        assert r.setrange("r", 3, "xy") == 5
        r.mset({"m1": "1", "m2": "2"})
        assert r.msetnx({"m2": "x", "m3": "3"}) is False
        assert r.getset("m1", "one") == "1"
        r.set("d", "v")
        assert r.getdel("d") == "v"
        assert r.setnx("n", "first") is True
        before = {key: (r.get(key), r.ttl(key)) for key in r.keys()}
    proc.sigkill()
    proc, port = start(processes, "--appendonly", "yes")
    with redis.Redis(port=port, decode_responses=True) as r:
        after = {key: (r.get(key), r.ttl(key)) for key in r.keys()}
        assert after.keys() == before.keys() == {
            "f", "sx", "px", "g", "p", "a", "r", "m1", "m2", "n"}
        for key, (value, ttl) in before.items():
            assert after[key][0] == value, key
            assert (ttl == -1) == (after[key][1] == -1), key
        assert after["f"][0] == "10.601" and after["f"][1] > 900
        assert after["r"][0] == "\0\0\0xy"
        assert after["p"][1] == -1


def test_hyperloglogs_survive_the_aof(processes):
    """PFADD, PFMERGE, PFCOUNT's stored count and PFDEBUG TODENSE replayed
    from the AOF after kill -9: the same strings, byte for byte."""
    proc, port = start(processes, "--appendonly", "yes", "--appendfsync", "always",
                       "--hll-sparse-max-bytes", "200")
    with redis.Redis(port=port) as r:
        assert r.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "200"}
        assert r.pfadd("h", *[f"e{i}" for i in range(150)]) == 1
        assert r.execute_command("PFDEBUG", "ENCODING", "h") == b"dense"   # past 200 bytes
        assert r.pfadd("s", "a", "b") == 1
        assert r.pfcount("s") == 2                # the count stored in the header
        r.pfmerge("m", "s", "h")
        r.pfmerge("m2", "s")
        r.execute_command("PFDEBUG", "TODENSE", "m2")
        assert r.pfcount("m2", "h") == r.pfcount("m")
        before = {key: r.get(key) for key in (b"h", b"s", b"m", b"m2")}
    proc.sigkill()
    proc, port = start(processes, "--appendonly", "yes", "--hll-sparse-max-bytes", "200")
    with redis.Redis(port=port) as r:
        assert {key: r.get(key) for key in before} == before
        assert r.pfcount("s") == 2


@pytest.mark.filterwarnings("ignore:Call to experimental method")
@pytest.mark.filterwarnings("ignore:Call to .set. method with experimental usage")
def test_redis_84_string_commands_with_redis_py(processes):
    """SET's IF* conditions, DELEX, DIGEST and MSETEX through redis-py's own
    methods (https://redis.io/docs/latest/commands/set/, .../delex/,
    .../digest/, .../msetex/), and their effects replayed from the AOF."""
    from redis.commands.core import DataPersistOptions

    proc, port = start(processes, "--appendonly", "yes", "--appendfsync", "always")
    with redis.Redis(port=port, decode_responses=True) as r:
        assert r.set("k", "v", ifeq="v") is None
        assert r.set("k", "v", ifne="x") is True
        assert r.digest("k") == r.digest_local(b"v")
        assert r.set("k", "w", ifdeq=r.digest_local(b"v"), ex=1000) is True
        assert r.set("k", "z", ifdne=r.digest_local(b"w")) is None
        assert r.set("k", "x", ifeq="w", get=True) == "w"
        assert r.delex("k", ifne="x") == 0
        r.set("gone", "v")
        assert r.delex("gone", ifdeq=r.digest_local(b"v").upper()) == 1
        assert r.msetex({"m1": "1", "m2": "2"}, data_persist_option=DataPersistOptions.NX,
                        ex=1000) == 1
        assert r.msetex({"m1": "a", "m3": "b"}, data_persist_option=DataPersistOptions.XX) == 0
        before = {key: (r.get(key), r.ttl(key)) for key in r.keys()}
    proc.sigkill()
    proc, port = start(processes, "--appendonly", "yes")
    with redis.Redis(port=port, decode_responses=True) as r:
        after = {key: (r.get(key), r.ttl(key)) for key in r.keys()}
        assert before.keys() == after.keys() == {"k", "m1", "m2"}
        assert after["k"][0] == "x" and after["k"][1] == -1
        assert after["m1"] == ("1", after["m1"][1]) and after["m1"][1] > 900
