"""CONFIG SET appendonly on a running tidelog-server, and EmbeddedServer's
start from an AOF directory.

* ``yes`` while off: a rewrite writes the base from the dataset and new
  writes go to an incremental file; after SIGKILL, a start with
  ``--appendonly yes`` has everything.
* ``no`` while on: the files are flushed and closed; what is written after
  is not in the AOF (the directory stays).
"""

from __future__ import annotations

import os
import time

import redis

from tests.support.processes import ProcessGroup, ServerProcess
from tests.support.redis_oracle import free_port
from tidelog.server.embed import EmbeddedServer


def start(processes: ProcessGroup, *extra: str) -> tuple[ServerProcess, int]:
    port = free_port()
    proc = processes.tidelog(["--port", str(port), "--dir", str(processes.workdir / "data"),
                              "--save", "", *extra], port=port)
    return proc, port


def wait_rewrite(r: redis.Redis) -> None:
    deadline = time.monotonic() + 30
    while r.info("persistence")["aof_rewrite_in_progress"]:
        assert time.monotonic() < deadline, "the AOF rewrite did not finish"
        time.sleep(0.05)


def ids(r: redis.Redis, key: str) -> list[str]:
    return [id for id, _ in r.xrange(key)]


def test_config_set_appendonly_yes_then_kill(processes, tmp_path):
    proc, port = start(processes, "--appendonly", "no")
    with redis.Redis(port=port, decode_responses=True) as r:
        assert r.info("persistence")["aof_enabled"] == 0
        before = [r.xadd("s", {"n": str(i)}) for i in range(200)]
        r.xgroup_create("s", "g", "0")
        r.xreadgroup("g", "c1", {"s": ">"}, count=5)
        r.set("plain", "v")
        assert r.config_set("appendonly", "yes")
        assert r.config_get("appendonly") == {"appendonly": "yes"}
        assert r.info("persistence")["aof_enabled"] == 1
        after = [r.xadd("s", {"n": str(i)}) for i in range(200, 300)]
        wait_rewrite(r)
        after += [r.xadd("s", {"n": str(i)}) for i in range(300, 310)]
        r.xadd("t", {"f": "v"}, id="5-1")
        pending = r.xpending("s", "g")["pending"]
        time.sleep(1.5)  # appendfsync everysec: the last writes reach the disk
    proc.sigkill()
    names = sorted(os.listdir(tmp_path / "data" / "appendonlydir"))
    assert names == ["appendonly.aof.1.base.aof", "appendonly.aof.1.incr.aof",
                     "appendonly.aof.manifest"] or names == [
                     "appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof",
                     "appendonly.aof.manifest"]
    proc, port = start(processes, "--appendonly", "yes")
    with redis.Redis(port=port, decode_responses=True) as r:
        assert ids(r, "s") == before + after
        assert r.xpending("s", "g")["pending"] == pending == 5
        assert r.get("plain") == "v"
        assert ids(r, "t") == ["5-1"]


def test_config_set_appendonly_no_closes_the_aof(processes, tmp_path):
    proc, port = start(processes, "--appendonly", "yes", "--appendfsync", "always")
    with redis.Redis(port=port, decode_responses=True) as r:
        kept = [r.xadd("s", {"n": str(i)}) for i in range(50)]
        assert r.config_set("appendonly", "no")
        info = r.info("persistence")
        assert info["aof_enabled"] == 0 and info["aof_rewrite_in_progress"] == 0
        for i in range(50, 80):
            r.xadd("s", {"n": str(i)})
        r.set("late", "x")
        assert r.xlen("s") == 80
    proc.sigkill()
    assert (tmp_path / "data" / "appendonlydir" / "appendonly.aof.manifest").exists()
    proc, port = start(processes, "--appendonly", "yes")
    with redis.Redis(port=port, decode_responses=True) as r:
        assert ids(r, "s") == kept
        assert r.get("late") is None


def test_bgrewriteaof_while_off_is_what_the_next_start_loads(processes, tmp_path):
    """As Redis 7: with the AOF off BGREWRITEAOF writes a new base and a
    manifest listing it alone (the incremental file of the earlier
    ``appendonly yes`` goes), which a start with ``--appendonly yes`` loads."""
    proc, port = start(processes, "--appendonly", "yes", "--appendfsync", "always",
                       "--aof-use-rdb-preamble", "no")
    with redis.Redis(port=port, decode_responses=True) as r:
        r.xadd("s", {"n": "0"}, id="1-0")
        assert r.config_set("appendonly", "no")
        r.xadd("s", {"n": "1"}, id="2-0")
        r.set("late", "x", px=600_000)
        assert r.bgrewriteaof()
        wait_rewrite(r)
        info = r.info("persistence")
        assert (info["aof_enabled"], info["aof_last_bgrewrite_status"]) == (0, "ok")
        assert info["aof_rewrites"] == 1
        assert "aof_current_size" not in info
        r.set("after", "y")  # in no file
    proc.sigkill()
    directory = tmp_path / "data" / "appendonlydir"
    assert sorted(os.listdir(directory)) == ["appendonly.aof.2.base.aof",
                                             "appendonly.aof.manifest"]
    assert (directory / "appendonly.aof.manifest").read_text() == (
        "file appendonly.aof.2.base.aof seq 2 type b\n")
    proc, port = start(processes, "--appendonly", "yes")
    with redis.Redis(port=port, decode_responses=True) as r:
        assert ids(r, "s") == ["1-0", "2-0"]
        assert r.get("late") == "x" and 0 < r.pttl("late") <= 600_000
        assert r.get("after") is None


def test_off_on_again_replaces_the_old_files(processes, tmp_path):
    proc, port = start(processes, "--appendonly", "yes", "--appendfsync", "always")
    with redis.Redis(port=port, decode_responses=True) as r:
        r.xadd("s", {"n": "0"}, id="1-0")
        assert r.config_set("appendonly", "no")
        r.xadd("s", {"n": "1"}, id="2-0")   # not in the old files
        assert r.config_set("appendonly", "yes")
        r.xadd("s", {"n": "2"}, id="3-0")
        wait_rewrite(r)
        assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
        assert r.config_set("appendonly", "no")  # flushes and fsyncs
    proc.sigkill()
    names = sorted(os.listdir(tmp_path / "data" / "appendonlydir"))
    assert [n for n in names if ".base." in n] in (
        ["appendonly.aof.2.base.aof"], ["appendonly.aof.2.base.rdb"])
    assert "appendonly.aof.1.incr.aof" not in names and not any(
        n.startswith("temp-") for n in names)
    proc, port = start(processes, "--appendonly", "yes")
    with redis.Redis(port=port, decode_responses=True) as r:
        assert ids(r, "s") == ["1-0", "2-0", "3-0"]


def test_embedded_server_loads_the_aof_dir(tmp_path):
    srv = EmbeddedServer(port=0, dir=str(tmp_path), appendonly="yes", appendfsync="always")
    srv.start()
    try:
        with redis.Redis(port=srv.port) as r:
            r.xadd("s", {"f": "v"}, id="1-0")
    finally:
        srv.stop()
    srv = EmbeddedServer(port=0, dir=str(tmp_path), appendonly="yes").start()
    try:
        with redis.Redis(port=srv.port, decode_responses=True) as r:
            assert ids(r, "s") == ["1-0"]
            assert r.info("persistence")["aof_enabled"] == 1
    finally:
        srv.stop()


def test_embedded_server_loads_dump_rdb_from_dir(tmp_path):
    srv = EmbeddedServer(port=0, dir=str(tmp_path), save="").start()
    try:
        with redis.Redis(port=srv.port) as r:
            r.xadd("s", {"f": "v"}, id="1-0")
            assert r.save()
    finally:
        srv.stop()
    srv = EmbeddedServer(port=0, dir=str(tmp_path), save="").start()
    try:
        with redis.Redis(port=srv.port, decode_responses=True) as r:
            assert ids(r, "s") == ["1-0"]
    finally:
        srv.stop()


def test_embedded_server_without_options_reads_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    srv = EmbeddedServer(port=0).start()
    try:
        with redis.Redis(port=srv.port) as r:
            assert r.dbsize() == 0
            r.xadd("s", {"f": "v"})
    finally:
        srv.stop()
    assert os.listdir(tmp_path) == []


def test_failed_first_rewrite_turns_the_aof_off(tmp_path, monkeypatch):
    from tidelog.persistence import aof

    def fail(engine, path):
        raise OSError("disk full (test)")

    monkeypatch.setattr(aof, "write_commands_file", fail)  # the forked child inherits it
    srv = EmbeddedServer(port=0, dir=str(tmp_path), save="", aof_use_rdb_preamble="no").start()
    try:
        with redis.Redis(port=srv.port, decode_responses=True) as r:
            r.xadd("s", {"f": "v"})
            assert r.config_set("appendonly", "yes")
            deadline = time.monotonic() + 30
            while r.info("persistence")["aof_enabled"]:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert r.config_get("appendonly") == {"appendonly": "no"}
            r.xadd("s", {"f": "v"})  # still served
        assert os.listdir(tmp_path / "appendonlydir") == []
    finally:
        srv.stop()
    assert srv.engine.internal_errors == 0
