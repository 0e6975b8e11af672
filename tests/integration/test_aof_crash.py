"""The AOF of a real tidelog-server process: crashes, rewrites, and Redis 7.0.

* ``appendfsync always``: a client writes (XADD on several keys, XREADGROUP,
  XACK, XCLAIM, XGROUP CREATECONSUMER/DELCONSUMER) while the server is
  killed with SIGKILL at random moments; after each restart on the same
  directory every write whose reply the client got must be there (a model of
  acknowledged writes), nothing else may differ but the one write in flight,
  and redis-check-aof must accept the files.
* ``appendfsync everysec``: what is missing after SIGKILL was acknowledged
  less than ~1 s before the kill.
* BGREWRITEAOF under a write load loses nothing.
* Interop with redis-server 7.0.15 both ways (skipped when it is missing).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.support.crash_model import Model, check, load_until_killed, setup_keys
from tests.support.processes import ProcessGroup, ServerProcess
from tests.support.redis_oracle import REDIS_SERVER, free_port, wait_for_port

REDIS_CHECK_AOF = shutil.which("redis-check-aof")


def start(processes: ProcessGroup, port: int, *extra: str) -> ServerProcess:
    return processes.tidelog(["--port", str(port), "--dir", str(processes.workdir / "data"),
                              "--appendonly", "yes", *extra], port=port)


def check_aof_files(tmp_path: Path) -> None:
    if REDIS_CHECK_AOF is None:
        return
    manifest = tmp_path / "data" / "appendonlydir" / "appendonly.aof.manifest"
    out = subprocess.run([REDIS_CHECK_AOF, str(manifest)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "are valid" in out.stdout, out.stdout + out.stderr


def test_sigkill_loses_no_acknowledged_write_with_fsync_always(processes, tmp_path):
    port = free_port()
    model = Model()
    proc = start(processes, port, "--appendfsync", "always")
    with redis.Redis(port=port, decode_responses=True) as r:
        setup_keys(r, model)
    rng = random.Random(1234)
    for round_ in range(5):
        stop = threading.Event()
        loader = threading.Thread(target=load_until_killed, args=(port, model, round_, stop))
        loader.start()
        time.sleep(rng.uniform(0.3, 0.9))
        proc.sigkill()
        loader.join(30)
        assert not loader.is_alive()
        total = sum(len(state.entries) for state in model.keys.values())
        check_aof_files(tmp_path)
        proc = start(processes, port, "--appendfsync", "always")
        with redis.Redis(port=port, decode_responses=True) as r:
            check(r, model)
    assert total > 100  # the load did write something
    proc.terminate()


def test_sigkill_with_everysec_loses_at_most_the_last_second(processes, tmp_path):
    port = free_port()
    model = Model()
    proc = start(processes, port, "--appendfsync", "everysec")
    with redis.Redis(port=port, decode_responses=True) as r:
        setup_keys(r, model)
    stop = threading.Event()
    loader = threading.Thread(target=load_until_killed, args=(port, model, 99, stop))
    loader.start()
    time.sleep(1.5)
    killed_at = time.monotonic()
    proc.sigkill()
    loader.join(30)
    proc = start(processes, port, "--appendfsync", "everysec")
    with redis.Redis(port=port, decode_responses=True) as r:
        present = {(k, id) for k in model.keys for id, _ in r.xrange(k)}
        lost = {(k, id) for t, k, id in model.acked_at if (k, id) not in present}
        recent = {(k, id) for t, k, id in model.acked_at if t > killed_at - 1.2}
        assert lost <= recent
        check(r, model, lost_ok=lost, strict=False)
    proc.terminate()


def test_bgrewriteaof_under_load_loses_nothing(processes, tmp_path):
    port = free_port()
    model = Model()
    proc = start(processes, port, "--appendfsync", "always", "--aof-use-rdb-preamble", "no")
    with redis.Redis(port=port, decode_responses=True) as r:
        setup_keys(r, model)
        stop = threading.Event()
        loader = threading.Thread(target=load_until_killed, args=(port, model, 7, stop))
        loader.start()
        for n in range(1, 4):
            time.sleep(0.3)
            assert r.bgrewriteaof()
            deadline = time.monotonic() + 30
            while r.info("persistence")["aof_rewrites"] < n:
                assert time.monotonic() < deadline
                time.sleep(0.02)
            assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
        stop.set()
        loader.join(30)
    proc.sigkill()
    names = sorted(os.listdir(tmp_path / "data" / "appendonlydir"))
    assert names == ["appendonly.aof.4.base.aof", "appendonly.aof.4.incr.aof",
                     "appendonly.aof.manifest"]
    check_aof_files(tmp_path)
    proc = start(processes, port, "--appendfsync", "always")
    with redis.Redis(port=port, decode_responses=True) as r:
        check(r, model)
    proc.terminate()


# -- redis-server 7.0 -------------------------------------------------------------
needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


def comparable(r: redis.Redis, key: str) -> tuple:
    """XRANGE and XINFO STREAM FULL without times and Redis-8-only fields."""
    info = r.xinfo_stream(key, full=True)
    groups = []
    for g in info["groups"]:
        consumers = [(c["name"], c["pel-count"], [(p[0], p[2]) for p in c["pending"]])
                     for c in g["consumers"]]
        groups.append((g["name"], g["last-delivered-id"], g["entries-read"], g["lag"],
                       g["pel-count"], [(p[0], p[1], p[2], p[3]) for p in g["pending"]],
                       consumers))
    return (r.xrange(key), info["length"], info["last-generated-id"], info["entries-added"],
            info["max-deleted-entry-id"], info["recorded-first-entry-id"], groups)


def fill_for_interop(r: redis.Redis) -> None:
    for i in range(30):
        r.xadd("s1", {"i": str(i)}, id=f"{i + 1}-1")
        r.xadd("s2", {"a": "b", "i": str(i)})
    r.xdel("s1", "3-1")
    r.xgroup_create("s1", "g", "0")
    r.xgroup_create("s1", "h", "5-1")
    r.xreadgroup("g", "alice", {"s1": ">"}, count=5)
    r.xreadgroup("g", "bob", {"s1": ">"}, count=3)
    r.xack("s1", "g", "1-1")
    r.xclaim("s1", "g", "carol", 0, ["2-1"])
    r.xgroup_createconsumer("s1", "h", "idle")
    r.xadd("empty", {"x": "y"}, id="7-7")
    r.xdel("empty", "7-7")
    r.xtrim("s2", maxlen=10)
    r.set("plain", "value")


@needs_redis
def test_redis_server_loads_tidelog_aof(processes, tmp_path):
    port = free_port()
    proc = start(processes, port, "--aof-use-rdb-preamble", "no")
    with redis.Redis(port=port, decode_responses=True) as r:
        fill_for_interop(r)
        assert r.bgrewriteaof()
        while r.info("persistence")["aof_rewrites"] < 1:
            time.sleep(0.02)
        r.xadd("s1", {"after": "rewrite"}, id="100-1")
        r.xreadgroup("g", "alice", {"s1": ">"}, count=1)
        expected = {k: comparable(r, k) for k in ("s1", "s2", "empty")}
    proc.terminate()
    check_aof_files(tmp_path)
    redis_port = free_port()
    processes.popen(
        [REDIS_SERVER, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "yes", "--dir", str(tmp_path / "data")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(redis_port)
    with redis.Redis(port=redis_port, decode_responses=True) as r:
        deadline = time.monotonic() + 20
        while r.info("persistence")["loading"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert {k: comparable(r, k) for k in expected} == expected
        assert r.get("plain") == "value"


@needs_redis
@pytest.mark.parametrize("preamble", ["no", "yes"])
def test_tidelog_loads_redis_server_aof(processes, tmp_path, preamble):
    """Redis's base as commands, or (preamble yes) as RDB, read by the snapshot loader."""
    data = tmp_path / "data"
    data.mkdir()
    redis_port = free_port()
    redis_proc = processes.popen(
        [REDIS_SERVER, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "yes", "--aof-use-rdb-preamble", preamble, "--appendfsync", "always",
         "--dir", str(data)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(redis_port)
    with redis.Redis(port=redis_port, decode_responses=True) as r:
        fill_for_interop(r)
        expected = {k: comparable(r, k) for k in ("s1", "s2", "empty")}
        # a rewrite (base as commands), then more writes in a new incr file
        assert r.bgrewriteaof()
        while r.info("persistence")["aof_rewrite_in_progress"] or \
                r.info("persistence")["aof_rewrites"] < 1:
            time.sleep(0.02)
        r.xadd("s1", {"after": "rewrite"}, id="100-1")
        r.xreadgroup("g", "bob", {"s1": ">"}, count=1)
        r.select(2)
        r.set("db2", "x")
        r.select(0)
        expected = {k: comparable(r, k) for k in ("s1", "s2", "empty")}
    redis_proc.terminate()   # a clean shutdown: everything on disk
    redis_proc.wait(10)
    bases = [n for n in os.listdir(data / "appendonlydir") if ".base." in n]
    assert bases == [f"appendonly.aof.2.base.{'rdb' if preamble == 'yes' else 'aof'}"]
    port = free_port()
    proc = start(processes, port)
    with redis.Redis(port=port, decode_responses=True) as r:
        assert {k: comparable(r, k) for k in expected} == expected
        assert r.get("plain") == "value"
        r.select(2)
        assert r.get("db2") == "x"
    proc.terminate()


def test_start_refused_on_torn_aof_with_load_truncated_no(processes, tmp_path):
    port = free_port()
    proc = start(processes, port, "--appendfsync", "always")
    with redis.Redis(port=port, decode_responses=True) as r:
        r.xadd("s", {"f": "v"}, id="1-1")
    proc.terminate()
    incr = tmp_path / "data" / "appendonlydir" / "appendonly.aof.1.incr.aof"
    with open(incr, "ab") as fh:
        fh.write(b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$3\r\n2-1")
    size = incr.stat().st_size
    refused = processes.tidelog(["--port", str(port), "--dir", str(tmp_path / "data"),
                                 "--appendonly", "yes", "--aof-load-truncated", "no"], ready=False)
    assert refused.wait(30) == 1
    assert "Unexpected end of file" in refused.stdout and str(incr) in refused.stdout
    assert "aof-load-truncated yes" in refused.stdout
    assert incr.stat().st_size == size
    proc = start(processes, port)  # aof-load-truncated yes: cut, with a warning
    with redis.Redis(port=port, decode_responses=True) as r:
        assert r.xrange("s") == [("1-1", {"f": "v"})]
    assert "truncated" in proc.stdout
    proc.terminate()
    assert incr.stat().st_size < size


def test_shutdown_flushes_the_aof_and_info_reports_it(processes, tmp_path):
    port = free_port()
    proc = start(processes, port, "--appendfsync", "no")
    with redis.Redis(port=port, decode_responses=True, retry=Retry(NoBackoff(), 0)) as r:
        info = r.info("persistence")
        assert info["aof_enabled"] == 1 and info["aof_last_write_status"] == "ok"
        pipe = r.pipeline(transaction=False)
        for i in range(200):
            pipe.xadd("s", {"i": str(i)}, id=f"{i + 1}-1")
        pipe.execute()
        assert r.info("persistence")["aof_current_size"] > 200 * 20
        try:
            r.shutdown(nosave=True)
        except redis.ConnectionError:
            pass
    assert proc.wait(30) == 0
    assert "Calling fsync() on the AOF file" in proc.stdout
    proc = start(processes, port)
    with redis.Redis(port=port, decode_responses=True) as r:
        assert r.xlen("s") == 200
    proc.terminate()
