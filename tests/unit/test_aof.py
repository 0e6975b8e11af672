"""The append-only file without sockets: RESP writing, the manifest, replay,
rewrite, and what loading does with torn or corrupt files.

Each test runs an engine on a fake clock against a temporary directory; the
"server" state is compared through replies (XRANGE, XINFO STREAM FULL, GET,
PTTL), so any difference a client could see fails the test.
"""

from __future__ import annotations

import os
import re

import pytest

import tidelog.commands  # noqa: F401  (registers the commands)
from tidelog.clock import FakeClock
from tidelog.config import Config
from tidelog.engine import Engine
from tidelog.persistence import aof, aof_format, aof_loader, aof_manifest, aof_rewrite
from tidelog.persistence.durability import attach
from tidelog.resp.replies import ErrorReply

NOW = 1_700_000_000_000


def b(arg) -> bytes:
    return arg if isinstance(arg, bytes) else str(arg).encode()


def make_engine(tmp_path, now=NOW, **options) -> Engine:
    """An engine on ``tmp_path``; ``now``: its fake clock (replays compare at
    the original's time, as a restart right after the writes would)."""
    config = Config()
    config.set("dir", str(tmp_path))
    config.set("stream-node-max-entries", "4")
    for name, value in options.items():
        config.set(name.replace("_", "-"), value, at_startup=True)
    return Engine(config, clock=FakeClock(now))


def run(engine: Engine, client, *argv):
    reply = engine.execute(client, [b(a) for a in argv])
    assert not isinstance(reply, ErrorReply), (argv, reply)
    return reply


def snapshot(engine: Engine, rewritten: bool = False) -> dict:
    """Everything a client can see of the dataset.

    ``rewritten``: also leave out what an AOF rewrite does not keep, as in
    Redis -- the node layout (entries are re-packed), the lifetime IDMP
    counter ``iids-added``."""
    client = engine.new_client()
    out = {}
    try:
        for db in engine.dbs:
            if not db.data:
                continue
            run(engine, client, "SELECT", db.index)
            for key in sorted(db.data):
                kind = run(engine, client, "TYPE", key)
                pttl = run(engine, client, "PTTL", key)
                if kind.text == b"stream":
                    # Consumers' seen/active times are those of the replay
                    # (as in Redis: the AOF does not carry them).
                    full = repr(run(engine, client, "XINFO", "STREAM", key, "FULL"))
                    full = re.sub(r"(b'(seen|active)-time', )-?\d+", r"\1T", full)
                    if rewritten:
                        full = re.sub(r"(b'(radix-tree-nodes|iids-added)', )\d+", r"\1N", full)
                    value = (run(engine, client, "XRANGE", key, "-", "+"), full)
                else:
                    value = run(engine, client, "GET", key)
                out[(db.index, key)] = (kind.text, pttl, value)
    finally:
        engine.client_closed(client)
    return out


def assert_same(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for key in expected:
        assert got[key] == expected[key], key


def workload(engine: Engine) -> None:
    """Writes touching every kind of state the AOF must carry."""
    c = engine.new_client()
    clock = engine.clock
    for i in range(12):
        clock.advance(7)
        run(engine, c, "XADD", "s", "*", "f", i, "g", "x" * (i % 3))
    run(engine, c, "XADD", "s", "MAXLEN", "~", "6", "*", "f", "trim")
    run(engine, c, "XDEL", "s", run(engine, c, "XRANGE", "s", "-", "+")[1][0])
    run(engine, c, "XGROUP", "CREATE", "s", "g1", "0")
    run(engine, c, "XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "3")
    run(engine, c, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "s", ">")
    clock.advance(1000)
    run(engine, c, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "s", ">")
    run(engine, c, "XGROUP", "CREATECONSUMER", "s", "g1", "idle")
    first = run(engine, c, "XRANGE", "s", "-", "+")
    run(engine, c, "XACK", "s", "g1", first[0][0])
    clock.advance(5000)
    run(engine, c, "XCLAIM", "s", "g1", "bob", "10", first[1][0])
    run(engine, c, "XAUTOCLAIM", "s", "g1", "carol", "1", "0", "COUNT", "1")
    run(engine, c, "XNACK", "s", "g1", "FAIL", "IDS", "1", first[2][0])
    run(engine, c, "XADD", "s", "IDMP", "p1", "i1", "*", "f", "idmp")
    run(engine, c, "XCFGSET", "s", "IDMP-DURATION", "200", "IDMP-MAXSIZE", "50")
    run(engine, c, "XADD", "s", "IDMP", "p1", "i2", "*", "f", "idmp2")
    run(engine, c, "XADD", "empty", "1-1", "a", "b")
    run(engine, c, "XDEL", "empty", "1-1")
    run(engine, c, "SET", "str", "v")
    run(engine, c, "SET", "ttl", "v", "PX", "100000")
    run(engine, c, "MULTI")
    run(engine, c, "SELECT", "3")
    run(engine, c, "XADD", "other", "5-5", "k", "v")
    run(engine, c, "SET", "x", "y")
    run(engine, c, "EXEC")
    run(engine, c, "SELECT", "0")
    run(engine, c, "XTRIM", "s", "MINID", "~", "0-1")
    engine.client_closed(c)


def open_aof(engine: Engine) -> aof.Aof:
    aof_loader.load(engine)
    writer = aof.Aof(engine)
    writer.open()
    return writer


def incr_path(tmp_path) -> str:
    directory = tmp_path / "appendonlydir"
    return str(directory / "appendonly.aof.1.incr.aof")


# -- RESP and the manifest ---------------------------------------------------------
def test_encode_and_parse_commands():
    argv = [b"XADD", b"k", b"1-1", b"f", b"", b"bin\r\n\x00"]
    data = aof_format.encode_command(argv) + b"#TS:123\r\n" + aof_format.encode_command([b"PING"])
    assert aof_format.encode_command([b"SET", b"a", b"b"]) == b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n"
    assert [c for c, _, _ in aof_format.iter_commands(data)] == [argv, [b"PING"]]


def test_manifest_round_trip_and_redis_format():
    text = ("file appendonly.aof.2.base.rdb seq 2 type b\n"
            "file appendonly.aof.1.incr.aof seq 1 type h\n"
            "file appendonly.aof.3.incr.aof seq 3 type i\n"
            "file appendonly.aof.4.incr.aof seq 4 type i\n")
    manifest = aof_manifest.Manifest.parse(text)
    assert manifest.base == aof_manifest.AofFile("appendonly.aof.2.base.rdb", 2, "b")
    assert [i.seq for i in manifest.incrs] == [3, 4]
    assert [f.name for f in manifest.files()] == [
        "appendonly.aof.2.base.rdb", "appendonly.aof.3.incr.aof", "appendonly.aof.4.incr.aof"]
    assert aof_manifest.Manifest.parse(manifest.text()) == manifest
    for bad in ("file x seq 1\n", "file x seq one type i\n", "file x seq 1 type z\n",
                "file a seq 1 type b\nfile b seq 2 type b\n",
                "file a seq 2 type i\nfile b seq 1 type i\n"):
        with pytest.raises(aof_format.AofLoadError):
            aof_manifest.Manifest.parse(bad)


def test_effects_are_written_with_select_on_db_change(tmp_path):
    engine = make_engine(tmp_path)
    writer = open_aof(engine)
    c = engine.new_client()
    run(engine, c, "XADD", "s", "*", "f", "v")
    run(engine, c, "SELECT", "2")
    run(engine, c, "SET", "a", "b")
    run(engine, c, "GET", "a")
    writer.flush()
    with open(incr_path(tmp_path), "rb") as fh:
        commands = [argv for argv, _, _ in aof_format.iter_commands(fh.read())]
    assert commands == [
        [b"SELECT", b"0"], [b"XADD", b"s", b"%d-0" % NOW, b"f", b"v"],
        [b"SELECT", b"2"], [b"SET", b"a", b"b"]]
    writer.close()
    with open(tmp_path / "appendonlydir" / "appendonly.aof.manifest") as fh:
        assert fh.read() == ("file appendonly.aof.1.base.aof seq 1 type b\n"
                             "file appendonly.aof.1.incr.aof seq 1 type i\n")


# -- replay ------------------------------------------------------------------------
def test_replay_rebuilds_identical_state(tmp_path):
    engine = make_engine(tmp_path)
    writer = open_aof(engine)
    workload(engine)
    writer.close()
    expected = snapshot(engine)
    assert expected[(0, b"s")][2][0]  # the workload left entries
    restored = make_engine(tmp_path, now=engine.clock.now_ms())
    assert aof_loader.load(restored)
    assert_same(snapshot(restored), expected)
    for db in restored.dbs:
        for value in db.data.values():
            if hasattr(value, "check"):
                value.check()


def test_rewrite_replays_to_same_state(tmp_path):
    engine = make_engine(tmp_path)
    workload(engine)
    expected = snapshot(engine, rewritten=True)
    commands = list(aof_rewrite.dataset_commands(engine))
    assert [b"XADD", b"empty", b"MAXLEN", b"0", b"0-1", b"x", b"y"] in commands
    assert any(c[0] == b"XNACK" for c in commands)
    assert any(c[0] == b"XIDMPRECORD" for c in commands)
    assert any(c[:2] == [b"XGROUP", b"CREATECONSUMER"] for c in commands)
    restored = make_engine(tmp_path, now=engine.clock.now_ms())
    client = restored.new_client(kind="aof")
    for argv in commands:
        run(restored, client, *argv)
    assert_same(snapshot(restored, rewritten=True), expected)


def test_background_rewrite_installs_new_base(tmp_path):
    engine = make_engine(tmp_path, aof_use_rdb_preamble="no")
    writer = open_aof(engine)
    workload(engine)
    writer.start_rewrite()
    c = engine.new_client()
    run(engine, c, "XADD", "s", "*", "during", "rewrite")  # goes to the new incr file
    assert writer.wait_rewrite(30)
    writer.close()
    names = sorted(os.listdir(tmp_path / "appendonlydir"))
    assert names == ["appendonly.aof.2.base.aof", "appendonly.aof.2.incr.aof",
                     "appendonly.aof.manifest"]
    expected = snapshot(engine, rewritten=True)
    restored = make_engine(tmp_path, now=engine.clock.now_ms())
    assert aof_loader.load(restored)
    assert_same(snapshot(restored, rewritten=True), expected)
    assert "aof_last_bgrewrite_status:ok" in writer.info_lines()


def test_debug_loadaof(tmp_path):
    engine = make_engine(tmp_path)
    writer = open_aof(engine)
    attach(engine).aof = writer
    c = engine.new_client()
    run(engine, c, "XADD", "s", "1-1", "f", "v")
    engine.dbs[0].data.clear()  # only what the AOF holds comes back
    assert run(engine, c, "DEBUG", "LOADAOF").text == b"OK"
    assert run(engine, c, "XRANGE", "s", "-", "+") == [[b"1-1", [b"f", b"v"]]]
    writer.close()


# -- torn and corrupt files ----------------------------------------------------------
def _two_command_dir(tmp_path) -> tuple[str, int, int]:
    engine = make_engine(tmp_path)
    writer = open_aof(engine)
    c = engine.new_client()
    run(engine, c, "XADD", "s", "1-1", "f", "v")
    run(engine, c, "XADD", "s", "2-1", "field", "value")
    writer.close()
    path = incr_path(tmp_path)
    with open(path, "rb") as fh:
        data = fh.read()
    last_start = [start for _, start, _ in aof_format.iter_commands(data)][-1]
    return path, last_start, len(data)


def test_torn_tail_is_cut_at_every_offset(tmp_path):
    path, last_start, size = _two_command_dir(tmp_path)
    with open(path, "rb") as fh:
        whole = fh.read()
    for cut in range(last_start + 1, size):
        with open(path, "wb") as fh:
            fh.write(whole[:cut])
        strict = make_engine(tmp_path, aof_load_truncated="no")
        with pytest.raises(aof_format.AofLoadError, match=f"{path} at offset {last_start} "):
            aof_loader.load(strict)
        assert os.path.getsize(path) == cut  # refusing leaves the file alone
        lenient = make_engine(tmp_path, aof_load_truncated="yes")
        assert aof_loader.load(lenient)
        assert snapshot(lenient)[(0, b"s")][2][0] == [[b"1-1", [b"f", b"v"]]], cut
        assert os.path.getsize(path) == last_start, cut


def test_unfinished_multi_is_dropped(tmp_path):
    engine = make_engine(tmp_path)
    writer = open_aof(engine)
    c = engine.new_client()
    run(engine, c, "XADD", "s", "1-1", "f", "v")
    writer.close()
    path = incr_path(tmp_path)
    with open(path, "ab") as fh:
        fh.write(aof_format.encode_command([b"MULTI"])
                 + aof_format.encode_command([b"XADD", b"s", b"2-1", b"a", b"b"]))
    restored = make_engine(tmp_path)
    assert aof_loader.load(restored)
    assert snapshot(restored)[(0, b"s")][2][0] == [[b"1-1", [b"f", b"v"]]]
    with open(path, "rb") as fh:
        assert not fh.read().endswith(b"b\r\n")


@pytest.mark.parametrize("where,damage", [(-2, b"?"), (-2, b"*x"), (0, b"$"), (0, b"+"),
                                          (1, b"x"), (5, b"\n")])
def test_corruption_in_the_middle_is_refused(tmp_path, where, damage):
    path, last_start, size = _two_command_dir(tmp_path)
    with open(path, "rb") as fh:
        data = fh.read()
    middle = last_start + where  # the CRLF ending the first command, or the second's header
    with open(path, "wb") as fh:
        fh.write(data[:middle] + damage + data[middle + len(damage):])
    for truncated_ok in ("yes", "no"):
        with pytest.raises(aof_format.AofLoadError, match=r"Bad file format .*offset \d+.*redis-check-aof"):
            aof_loader.load(make_engine(tmp_path, aof_load_truncated=truncated_ok))
    assert os.path.getsize(path) == size


def test_truncation_in_a_file_that_is_not_the_last_is_refused(tmp_path):
    engine = make_engine(tmp_path, aof_use_rdb_preamble="no")
    writer = open_aof(engine)
    c = engine.new_client()
    run(engine, c, "XADD", "s", "1-1", "f", "v")
    writer.flush()
    # a second incremental file, as a rewrite in progress makes
    writer.manifest.incrs.append(aof_manifest.AofFile("appendonly.aof.2.incr.aof", 2, "i"))
    aof_manifest.write_atomically(writer.manifest_path, writer.manifest.text().encode())
    writer.close()
    first = incr_path(tmp_path)
    with open(first, "ab") as fh:
        fh.write(b"*3\r\n$4\r\nXADD")
    with pytest.raises(aof_format.AofLoadError, match="Unexpected end of file"):
        aof_loader.load(make_engine(tmp_path))


def test_automatic_rewrite_past_the_growth_threshold(tmp_path):
    engine = make_engine(tmp_path, aof_use_rdb_preamble="no",
                         auto_aof_rewrite_min_size="1kb", auto_aof_rewrite_percentage="100")
    writer = open_aof(engine)
    c = engine.new_client()
    writer._tick()  # small: nothing happens
    assert not writer.rewriting and writer.rewrites == 0
    for i in range(40):
        run(engine, c, "XADD", "s", f"{i + 1}-1", "field", "x" * 40)
    writer.flush()
    assert writer.current_size > 1024
    writer._tick()
    assert writer.rewriting
    assert writer.wait_rewrite(30)
    lines = dict(line.split(":", 1) for line in writer.info_lines())
    assert lines["aof_rewrites"] == "1" and lines["aof_last_bgrewrite_status"] == "ok"
    assert int(lines["aof_base_size"]) > 1024
    writer._tick()  # the base grew with it: no new rewrite
    assert not writer.rewriting
    writer.close()


def test_missing_listed_file_is_refused(tmp_path):
    directory = tmp_path / "appendonlydir"
    directory.mkdir()
    (directory / "appendonly.aof.manifest").write_text(
        "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n")
    with pytest.raises(aof_format.AofLoadError, match="appendonly.aof.1.base.aof .*doesn't exist"):
        aof_loader.load(make_engine(tmp_path))


def test_bgrewriteaof_waits_for_a_running_bgsave(tmp_path):
    engine = make_engine(tmp_path, aof_use_rdb_preamble="no")
    writer = open_aof(engine)
    attach(engine).aof = writer

    class BusySnapshots:
        in_progress = True

    attach(engine).snapshots = BusySnapshots()
    c = engine.new_client()
    assert run(engine, c, "BGREWRITEAOF").text == b"Background append only file rewriting scheduled"
    writer._tick()
    assert not writer.rewriting and "aof_rewrite_scheduled:1" in writer.info_lines()
    BusySnapshots.in_progress = False
    writer._tick()
    assert writer.rewriting
    again = engine.execute(c, [b"BGREWRITEAOF"])
    assert again.message == b"ERR Background append only file rewriting already in progress"
    assert writer.wait_rewrite(30)
    assert "aof_rewrite_scheduled:0" in writer.info_lines()
    writer.close()


def test_rdb_preamble_falls_back_to_commands_for_state_rdb_cannot_hold(tmp_path):
    engine = make_engine(tmp_path)  # aof-use-rdb-preamble yes (the default)
    writer = open_aof(engine)
    workload(engine)  # has XNACK'd entries and IDMP pairs
    assert not aof_rewrite.rdb_can_hold(engine)
    writer.start_rewrite()
    assert writer.wait_rewrite(30)
    writer.close()
    assert writer.manifest.base.name == "appendonly.aof.2.base.aof"
    restored = make_engine(tmp_path, now=engine.clock.now_ms())
    assert aof_loader.load(restored)
    assert_same(snapshot(restored, rewritten=True), snapshot(engine, rewritten=True))
    plain = make_engine(tmp_path / "plain")
    c = plain.new_client()
    run(plain, c, "XADD", "s", "1-1", "f", "v")
    assert aof_rewrite.rdb_can_hold(plain)


def test_rdb_preamble_base_round_trip(tmp_path):
    engine = make_engine(tmp_path)
    writer = open_aof(engine)
    c = engine.new_client()
    for i in range(20):
        run(engine, c, "XADD", "s", f"{i + 1}-1", "f", i)
    run(engine, c, "XGROUP", "CREATE", "s", "g", "0")
    run(engine, c, "XREADGROUP", "GROUP", "g", "alice", "COUNT", "5", "STREAMS", "s", ">")
    writer.start_rewrite()
    run(engine, c, "XACK", "s", "g", "2-1")  # into the new incremental file
    assert writer.wait_rewrite(30)
    writer.close()
    assert writer.manifest.base.name == "appendonly.aof.2.base.rdb"
    restored = make_engine(tmp_path, now=engine.clock.now_ms())
    assert aof_loader.load(restored)
    assert_same(snapshot(restored, rewritten=True), snapshot(engine, rewritten=True))


def _pending(engine: Engine) -> dict:
    """XPENDING - + of every group of every stream, consumer by consumer."""
    client = engine.new_client()
    out = {}
    try:
        for db in engine.dbs:
            run(engine, client, "SELECT", db.index)
            for key in sorted(db.data):
                if run(engine, client, "TYPE", key).text != b"stream":
                    continue
                for group in db.data[key].groups:
                    out[(db.index, key, group)] = (
                        run(engine, client, "XPENDING", key, group),
                        run(engine, client, "XPENDING", key, group, "-", "+", "1000"),
                    )
    finally:
        engine.client_closed(client)
    return out


def _replay(tmp_path, now, monkeypatch, mode: str, **options) -> tuple[Engine, int, tuple]:
    """Replay the AOF in ``tmp_path``: ``"batched"`` (the loader as it is),
    ``"batched-3"`` (batches of at most 3), ``"one-by-one"`` (the fast path
    without batches) or ``"engine"`` (every command through the engine).
    Returns the engine, how many XADDs skipped the engine, and the engine's
    counters right after the load (``dirty``, the command calls, the commands
    processed)."""
    skipped = []
    real_fast = aof_loader._Loader._fast_xadd
    real_batch = aof_loader._Loader._batch_run

    def batch(self, argvs, i):
        j = real_batch(self, argvs, i)
        skipped.extend(argvs[i:j])
        return j

    with monkeypatch.context() as m:
        m.setattr(aof_loader._Loader, "_fast_xadd",
                  (lambda self, argv: False) if mode == "engine"
                  else lambda self, argv: real_fast(self, argv) and not skipped.append(argv))
        m.setattr(aof_loader._Loader, "_batch_run",
                  (lambda self, argvs, i: i) if mode in ("engine", "one-by-one") else batch)
        if mode == "batched-3":
            m.setattr(aof_loader, "BATCH_MAX", 3)
        engine = make_engine(tmp_path, now=now, **options)
        assert aof_loader.load(engine)
    counters = (engine.dirty, dict(engine.command_calls), engine.total_commands_processed)
    return engine, len(skipped), counters


def _assert_same_replay(fast: Engine, plain: Engine) -> None:
    """Two replays of one AOF ended in the same state, node bytes included."""
    assert_same(snapshot(fast), snapshot(plain))
    assert _pending(fast) == _pending(plain)
    for restored in (fast, plain):
        for db in restored.dbs:
            for value in db.data.values():
                if hasattr(value, "check"):
                    value.check()
    for db_f, db_p in zip(fast.dbs, plain.dbs):
        assert db_f.data.keys() == db_p.data.keys()
        assert db_f.expires == db_p.expires
        for key, value in db_f.data.items():
            if hasattr(value, "nodes"):
                other = db_p.data[key]
                assert list(value.nodes()) == list(other.nodes())
                assert (value.length, value.last_id, value.first_id, value.entries_added,
                        value.max_deleted_entry_id) == (
                    other.length, other.last_id, other.first_id, other.entries_added,
                    other.max_deleted_entry_id)


@pytest.mark.parametrize("node_entries", ["1", "2", "4", "100"])
def test_fast_replay_equals_the_engine(tmp_path, monkeypatch, node_entries):
    engine = make_engine(tmp_path, stream_node_max_entries=node_entries)
    writer = open_aof(engine)
    c = engine.new_client()
    workload(engine)
    for i in range(60):
        engine.clock.advance(i % 3)
        run(engine, c, "XADD", "s", "*", "f", i, "g", "y" * (i % 5))
        run(engine, c, "XADD", "t%d" % (i % 3), "*", "a", i)
        if i % 7 == 0:
            run(engine, c, "XADD", "s", "*", "other", "fields", "n", -i)
        if i % 11 == 0:
            run(engine, c, "XREADGROUP", "GROUP", "g1", "dave", "COUNT", "2", "STREAMS", "s", ">")
            run(engine, c, "XDEL", "t0", run(engine, c, "XRANGE", "t0", "-", "+")[0][0])
    run(engine, c, "XADD", "s", "MAXLEN", "=", "40", "*", "f", "last")
    run(engine, c, "SELECT", "2")
    run(engine, c, "XADD", "s", "7-1", "in", "db2")
    run(engine, c, "SET", "str2", "v")
    engine.client_closed(c)
    writer.close()
    now = engine.clock.now_ms()

    fast, skipped, counters = _replay(tmp_path, now, monkeypatch, "batched",
                                      stream_node_max_entries=node_entries)
    assert skipped > 130  # the XADDs outside MULTI took the fast path
    plain, none, plain_counters = _replay(tmp_path, now, monkeypatch, "engine",
                                          stream_node_max_entries=node_entries)
    assert none == 0
    assert counters == plain_counters
    _assert_same_replay(fast, plain)
    assert snapshot(fast) == snapshot(engine)


@pytest.mark.parametrize(("node_entries", "node_bytes"), [
    ("1", "4096"), ("2", "4096"), ("4", "0"), ("100", "4096"), ("100", "90"), ("0", "300"),
    ("0", "0"),
])
def test_batched_replay_equals_one_by_one_and_the_engine(tmp_path, monkeypatch, node_entries,
                                                         node_bytes):
    options = {"stream_node_max_entries": node_entries, "stream_node_max_bytes": node_bytes}
    engine = make_engine(tmp_path, **options)
    writer = open_aof(engine)
    c = engine.new_client()
    workload(engine)
    for i in range(400):  # runs of XADDs to one key, as a fill writes them
        fields = ["f", i, "g", "y" * (i % 40)] if i % 9 else ["other", i]
        run(engine, c, "XADD", "run%d" % (i // 150), f"{1000 + i // 3}-{i % 3}", *fields)
    run(engine, c, "XADD", "run0", "2000-0", "big", "z" * 5000)  # over any byte limit
    run(engine, c, "XADD", "run0", "2000-1", "f", "after")
    run(engine, c, "XADD", "s", "MAXLEN", "=", "5", "*", "f", "opt")
    run(engine, c, "XADD", "run1", "MAXLEN", "=", "5", "3000-0", "f", "trimmed")
    run(engine, c, "XADD", "run1", "3000-1", "f", "after trim")
    run(engine, c, "PEXPIRE", "run2", 10**9)  # a key with a TTL: looked up every time
    for i in range(20):
        run(engine, c, "XADD", "run2", f"5000-{i}", "f", i)
    engine.client_closed(c)
    writer.close()
    now = engine.clock.now_ms()
    enc = aof_format.encode_command
    (incr,) = [os.path.join(tmp_path, "appendonlydir", name)
               for name in os.listdir(os.path.join(tmp_path, "appendonlydir"))
               if name.endswith(".incr.aof")]
    with open(incr, "ab") as fh:  # what the engine refuses or must judge, inside a run
        for argv in (
            [b"XADD", b"run0", b"9000-1", b"f", b"v"],
            [b"XADD", b"run0", b"9000-1", b"f", b"same ID"],
            [b"XADD", b"run0", b"8000-1", b"f", b"lower ID"],
            [b"XADD", b"run0", b"9000-2", b"f"],
            [b"XADD", b"run0", b"9000-3", b"f", b"v"],
            [b"XADD", b"run0", b"9001", b"f", b"no sequence"],
            [b"XADD", b"run0", b"9002-*", b"f", b"auto sequence"],
            [b"XADD", b"run0", b"*", b"f", b"auto"],
            [b"XADD", b"run0", b"NOMKSTREAM", b"99999999999999-0", b"f", b"option"],
            [b"XADD", b"run0", b"99999999999999-1", b"f", b"v"],
            [b"XADD", b"run1", b"99999999999999-0", b"f", b"other key"],
            [b"SELECT", b"3"],
            [b"XADD", b"run1", b"1-1", b"f", b"other db"],
            [b"XADD", b"run1", b"1-2", b"f", b"v"],
            [b"XADD", b"str", b"1-1", b"f", b"wrong type"],
            [b"SET", b"str", b"v"],
            [b"XADD", b"str", b"1-1", b"f", b"wrong type"],
            [b"XADD", b"run1", b"1-3", b"f", b"v"],
        ):
            fh.write(enc(argv))

    replays = {mode: _replay(tmp_path, now, monkeypatch, mode, **options)
               for mode in ("batched", "batched-3", "one-by-one", "engine")}
    assert replays["engine"][1] == 0
    assert replays["batched"][1] == replays["batched-3"][1] == replays["one-by-one"][1] > 400
    for mode in ("batched", "batched-3", "one-by-one"):
        assert replays[mode][2] == replays["engine"][2], mode
        _assert_same_replay(replays[mode][0], replays["engine"][0])


def _walk(fn, data: bytes) -> list:
    """Every item, then the error that ended the walk (its type and offset)."""
    out: list = []
    try:
        for item in fn(data):
            out.append(item)
    except (aof_format.Truncated, aof_format.Corrupt) as exc:
        out.append((type(exc).__name__, exc.offset))
    return out


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_fast_command_walk_equals_the_exact_one(monkeypatch, chunk):
    monkeypatch.setattr(aof_format, "FAST_CHUNK", chunk)
    enc = aof_format.encode_command
    cmds = [enc([b"XADD", b"k", b"%d-0" % i, b"f", b"v" * (i * 7 % 30), b"bin\r\n\x00"])
            for i in range(40)]
    good = b"".join(cmds)
    cases = [
        good,
        good + b"#TS:123\r\n" + enc([b"PING"]) + cmds[3],  # an annotation line
        good[:-5],  # a torn tail
        b"#TS:1\r\n" + good,
        good[:100] + b"*2\r\n$03\r\nGET\r\n$1\r\nk\r\n" + good[100:],  # a leading zero
        good + b"PING\r\n" + cmds[0],  # an inline command: corrupt
        good + b"*1\r\n$-1\r\n",
        good.replace(b"$4\r\nXADD", b"$4\r\nXADDX", 1),  # damage
        enc([b"SET", b"big", b"x" * 300]) + good,  # longer than a small chunk
    ]
    for data in cases:
        assert _walk(aof_format.iter_commands_fast, data) == _walk(aof_format.iter_commands, data)
