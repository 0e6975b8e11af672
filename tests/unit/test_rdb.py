"""The RDB snapshot format (persistence/rdb.py): round trips through the
writer and the loader, the CRC-64 and LZF codecs, and clear errors on
damaged files.  The interop with a real redis-server is in
tests/integration/test_rdb_interop.py."""

from __future__ import annotations

import os
import random
import struct
import time

import pytest

from tidelog.clock import FakeClock
from tidelog.config import Config
from tidelog.engine import Engine
from tidelog.persistence import rdb
from tidelog.persistence.durability import attach
from tidelog.rdb import format as rdb_format
from tidelog.types.stream import Stream

NOW = 1_700_000_000_000


def make_engine(**options: str) -> Engine:
    config = Config()
    for name, value in options.items():
        config.set(name.replace("_", "-"), value, at_startup=True)
    engine = Engine(config, clock=FakeClock(NOW))
    attach(engine)  # the durability layer, as the server attaches it (SAVE, DEBUG RELOAD)
    return engine


def run(engine: Engine, *args: object) -> object:
    client = run.clients.setdefault(id(engine), engine.new_client())  # type: ignore[attr-defined]
    return engine.execute(client, [a if isinstance(a, bytes) else str(a).encode() for a in args])


run.clients = {}  # type: ignore[attr-defined]


def populate(engine: Engine, node_entries: int) -> None:
    """Streams with groups, PELs, consumers, deleted entries; strings with TTLs; 3 DBs."""
    engine.config.set("stream-node-max-entries", str(node_entries))
    for i in range(1, 301):
        fields = ["f", i, "g", "x" * (i % 7)] if i % 5 else ["other", i]
        run(engine, "XADD", "s", f"{i}-{i % 3}", *fields)
    run(engine, "XDEL", "s", "7-1", "8-2", "150-0")
    run(engine, "XGROUP", "CREATE", "s", "g1", "0")
    run(engine, "XGROUP", "CREATE", "s", "g2", "$")
    run(engine, "XGROUP", "CREATE", "s", "empty-group", "0", "ENTRIESREAD", "0")
    run(engine, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "10", "STREAMS", "s", ">")
    engine.clock.advance(1500)
    run(engine, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", "s", ">")
    run(engine, "XACK", "s", "g1", "2-2")
    run(engine, "XCLAIM", "s", "g1", "carol", "0", "3-0", "RETRYCOUNT", "7")
    run(engine, "XGROUP", "CREATECONSUMER", "s", "g1", "idle-one")
    run(engine, "XADD", "empty", "MAXLEN", "0", "5-5", "a", "b")  # empty stream, last id 5-5
    run(engine, "SET", "plain", "hello world, a longer value " * 4)
    run(engine, "SET", "number", "12345")
    run(engine, "SET", "negative", "-7")
    run(engine, "SET", "big", str(2**40))
    run(engine, "SET", "zero-padded", "007")
    run(engine, "SET", "ttl", "v", "PX", "60000")
    run(engine, "SELECT", "3")
    run(engine, "XADD", "s3", "1-1", "k", "v")
    run(engine, "SET", b"bin\x00\xff", b"\x00\x01\x02")
    run(engine, "SELECT", "15")
    run(engine, "SET", "last-db", "x", "EX", "100")
    run(engine, "SELECT", "0")


def observe(engine: Engine) -> dict:
    """What clients can see of every key (replies compared whole)."""
    seen = {}
    client = engine.new_client()
    for db in engine.dbs:
        for key in sorted(db.data):
            client.db = db.index
            value = db.data[key]
            if isinstance(value, Stream):
                value.check()
                for group in value.groups.values():
                    group.check()
                seen[(db.index, key)] = (
                    engine.execute(client, [b"XINFO", b"STREAM", key, b"FULL"]),
                    engine.execute(client, [b"XRANGE", key, b"-", b"+"]),
                    [engine.execute(client, [b"XPENDING", key, g, b"-", b"+", b"100"])
                     for g in sorted(value.groups)],
                    engine.execute(client, [b"PTTL", key]),
                    value.node_count,
                )
            else:
                seen[(db.index, key)] = (value, engine.execute(client, [b"PTTL", key]))
    return seen


@pytest.mark.parametrize("node_entries", [1, 100])
@pytest.mark.parametrize("compress", ["yes", "no"])
@pytest.mark.parametrize("version", [10, 11])
def test_round_trip(node_entries, compress, version):
    engine = make_engine(rdbcompression=compress)
    populate(engine, node_entries)
    data = rdb.dumps(engine.dbs, compress=compress == "yes", now_ms=NOW, version=version)
    assert data.startswith(b"REDIS%04d" % version)
    if version == 10:  # no active-time in version 10: loading takes the seen-time
        for group in engine.dbs[0].data[b"s"].groups.values():
            for consumer in group.consumers.values():
                consumer.active_time = consumer.seen_time
    assert rdb.crc64(data[:-8]) == struct.unpack("<Q", data[-8:])[0]
    other = make_engine()
    other.clock.set_ms(engine.clock.now_ms())
    snap = rdb.loads(data, now_ms=NOW)
    assert snap.version == version and snap.aux[b"redis-ver"] and snap.aux[b"aof-base"] == b"0"
    rdb.install(other, snap)
    assert observe(other) == observe(engine)
    assert sorted(snap.dbs) == [0, 3, 15]


def test_nodes_move_as_blobs():
    engine = make_engine()
    populate(engine, 100)
    data = rdb.dumps(engine.dbs, compress=False)
    for _key, blob in engine.dbs[0].data[b"s"].nodes():
        assert blob in data
    other = make_engine()
    rdb.install(other, rdb.loads(data))
    assert list(other.dbs[0].data[b"s"].nodes()) == list(engine.dbs[0].data[b"s"].nodes())


def test_version_11_keeps_active_time_and_10_uses_seen_time():
    engine = make_engine()
    run(engine, "XADD", "s", "1-1", "a", "b")
    run(engine, "XGROUP", "CREATE", "s", "g", "0")
    run(engine, "XGROUP", "CREATECONSUMER", "s", "g", "never-read")
    engine.clock.advance(100)
    run(engine, "XREADGROUP", "GROUP", "g", "reader", "STREAMS", "s", ">")
    group = engine.dbs[0].data[b"s"].groups[b"g"]
    assert group.consumers[b"never-read"].active_time == -1
    v11 = rdb.loads(rdb.dumps(engine.dbs, version=11))
    assert v11.version == 11
    g11 = v11.dbs[0][0][1].groups[b"g"]
    assert g11.consumers[b"never-read"].active_time == -1
    assert g11.consumers[b"reader"].active_time == NOW + 100
    g10 = rdb.loads(rdb.dumps(engine.dbs, version=10)).dbs[0][0][1].groups[b"g"]
    assert g10.consumers[b"never-read"].active_time == NOW  # seen-time
    with pytest.raises(ValueError):
        rdb.dumps(engine.dbs, version=12)


def test_expired_keys_are_skipped_on_load():
    engine = make_engine()
    run(engine, "SET", "soon", "x", "PX", "10")
    run(engine, "SET", "later", "y", "PX", "100000")
    data = rdb.dumps(engine.dbs)
    snap = rdb.loads(data, now_ms=NOW + 50)
    assert [k for k, _, _ in snap.dbs[0]] == [b"later"] and snap.expired_skipped == 1
    assert snap.dbs[0][0][2] == NOW + 100000


def test_unowned_entries_and_idmp_are_left_out():
    engine = make_engine()
    run(engine, "XADD", "s", "IDMP", "p", "i1", "*", "a", "b")
    run(engine, "XADD", "s", "IDMP", "p", "i2", "*", "a", "b")
    run(engine, "XGROUP", "CREATE", "s", "g", "0")
    run(engine, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    group = engine.dbs[0].data[b"s"].groups[b"g"]
    first, second = list(group.pel)
    group.release(first)
    stats = rdb.SaveStats()
    snap = rdb.loads(rdb.dumps(engine.dbs, stats=stats))
    assert stats.dropped_unowned == 1 and stats.dropped_idmp == 1
    loaded = snap.dbs[0][0][1]
    assert list(loaded.groups[b"g"].pel) == [second] and loaded.idmp is None


def test_write_file_and_load_file(tmp_path):
    engine = make_engine(dir=str(tmp_path))
    populate(engine, 100)
    for group in engine.dbs[0].data[b"s"].groups.values():  # version 10: see above
        for consumer in group.consumers.values():
            consumer.active_time = consumer.seen_time
    rdb.write_file(engine)
    assert os.listdir(tmp_path) == ["dump.rdb"]  # the temp file was renamed
    other = make_engine(dir=str(tmp_path))
    other.clock.set_ms(engine.clock.now_ms())
    run(other, "SET", "old", "gone after load")
    info = rdb.load_file(other)
    assert info.keys == sum(len(db.data) for db in engine.dbs)
    assert observe(other) == observe(engine)


def test_preamble_end_offset():
    """An AOF with an RDB preamble: the commands start where the snapshot ends."""
    engine = make_engine()
    run(engine, "SET", "k", "v")
    data = rdb.dumps(engine.dbs, aof_base=True)
    snap = rdb.loads(data + b"*1\r\n$4\r\nPING\r\n")
    assert snap.end == len(data) and snap.aux[b"aof-base"] == b"1"


def test_checksum_off_writes_zero_and_loads():
    engine = make_engine()
    run(engine, "SET", "k", "v")
    data = rdb.dumps(engine.dbs, checksum=False)
    assert data[-8:] == bytes(8)
    assert rdb.loads(data).keys == 1


# -- damaged files --------------------------------------------------------------------

def sample() -> bytes:
    engine = make_engine()
    populate(engine, 100)
    return rdb.dumps(engine.dbs, compress=False)


def test_bad_checksum_names_the_offset():
    data = bytearray(sample())
    data[-3] ^= 0x40
    with pytest.raises(rdb.RdbError, match=r"wrong RDB checksum.*offset %d" % (len(data) - 8)):
        rdb.loads(bytes(data))
    assert rdb.loads(bytes(data), verify_checksum=False).keys > 0


def test_flipped_payload_byte_is_caught():
    data = bytearray(sample())
    index = bytes(data).index(b"hello world")
    data[index] ^= 0x01
    with pytest.raises(rdb.RdbError, match="checksum"):
        rdb.loads(bytes(data))


def test_truncated_file_names_the_offset():
    data = sample()
    for cut in (5, 40, len(data) // 2, len(data) - 9):
        with pytest.raises(rdb.RdbError, match=r"at byte offset \d+"):
            rdb.loads(data[:cut])


def test_random_corruption_never_crashes_otherwise():
    data = sample()
    rng = random.Random(7)
    for _ in range(300):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            damaged[rng.randrange(9, len(damaged) - 9)] = rng.randrange(256)
        try:
            rdb.loads(bytes(damaged), verify_checksum=False)
        except rdb.RdbError as exc:
            assert "offset" in str(exc)


def test_bad_node_names_key_and_offset():
    engine = make_engine()
    run(engine, "XADD", "s", "1-1", "a", "b")
    data = bytearray(rdb.dumps(engine.dbs, compress=False, checksum=False))
    blob = next(engine.dbs[0].data[b"s"].nodes())[1]
    at = bytes(data).index(blob)
    data[at + 6] = 9  # the master "count" element
    with pytest.raises(rdb.RdbError, match=r"stream b's'.*offset"):
        rdb.loads(bytes(data))


def test_header_and_unsupported_types():
    with pytest.raises(rdb.RdbError, match="not an RDB file.*offset 0"):
        rdb.loads(b"NOTREDIS0010")
    with pytest.raises(rdb.RdbError, match="version 99"):
        rdb.loads(b"REDIS0099\xff" + bytes(8))
    module_key = b"REDIS0010\x07\x01k\x00\xff" + bytes(8)
    with pytest.raises(rdb.RdbError, match=r"value type 7 \(module.*offset 9"):
        rdb.loads(module_key)
    with pytest.raises(rdb.RdbError, match="database 20 is out of range"):
        rdb.loads(b"REDIS0010\xfe\x14\xff" + bytes(8), databases=16)


def test_old_opcodes_and_encodings():
    """EXPIRETIME (seconds), IDLE/FREQ, int-encoded and 32/64-bit lengths."""
    body = (b"REDIS0009" + b"\xfa\x09redis-ver\x055.0.0"
            + b"\xfe\x00\xfb\x02\x01"
            + b"\xfd" + struct.pack("<i", 2_000_000_000) + b"\xf8\x05\x00\xc0\x07\xc1\x39\x30"
            + b"\xf9\x03\x00\x80\x00\x00\x00\x01k\x81" + (1).to_bytes(8, "big") + b"v"
            + b"\xff")
    data = body + struct.pack("<Q", rdb.crc64(body))
    snap = rdb.loads(data, now_ms=NOW)
    assert snap.dbs[0] == [(b"7", b"12345", 2_000_000_000_000), (b"k", b"v", None)]


# -- codecs ---------------------------------------------------------------------------

def test_crc64_known_vectors():
    assert rdb.crc64(b"123456789") == 0xE9C6D914C4B8D9CA
    assert rdb.crc64_py(b"123456789") == 0xE9C6D914C4B8D9CA
    assert rdb.crc64(b"") == 0
    assert rdb.crc64_py(b"a") == rdb.crc64(b"a") != 0
    blob = random.Random(1).randbytes(5000)
    assert rdb.crc64(blob) == rdb.crc64_py(blob)


def test_lzf_decompress_by_hand():
    # literal "abc", then a back reference of 6 bytes at distance 3 (overlapping)
    assert rdb.lzf_decompress_py(b"\x02abc\x80\x02", 9) == b"abcabcabc"
    # a long back reference (length byte follows)
    assert rdb.lzf_decompress_py(b"\x00a\xe0\x03\x00", 13) == b"a" * 13
    for bad, size in [(b"\x05ab", 6), (b"\x00a\x80\x05", 7), (b"\x02abc\x80\x02", 10)]:
        with pytest.raises(rdb.LzfError):
            rdb.lzf_decompress_py(bad, size)


def test_lzf_strings_load_with_the_python_decoder(monkeypatch):
    payload = b"compressible " * 40
    packed = rdb.lzf_compress(payload)
    if packed is None:
        pytest.skip("python-lzf not installed: nothing compresses on write")
    monkeypatch.setattr(rdb_format, "lzf_decompress", rdb.lzf_decompress_py)
    engine = make_engine()
    run(engine, "SET", "k", payload)
    data = rdb.dumps(engine.dbs, compress=True)
    assert b"\xc3" in data and payload not in data
    assert rdb.loads(data).dbs[0] == [(b"k", payload, None)]


def test_string_encodings():
    for text, expect in [(b"0", b"\xc0\x00"), (b"-1", b"\xc0\xff"), (b"300", b"\xc1\x2c\x01"),
                         (b"-70000", b"\xc2" + (-70000).to_bytes(4, "little", signed=True)),
                         (b"007", b"\x03007"), (b"-0", b"\x02-0"), (b"+1", b"\x02+1"),
                         (b"4294967296", b"\x0a4294967296")]:
        assert rdb.string_bytes(text, False) == expect
    assert rdb.length_bytes(63) == b"\x3f" and rdb.length_bytes(64) == b"\x40\x40"
    assert rdb.length_bytes(16384) == b"\x80\x00\x00\x40\x00"
    assert rdb.length_bytes(2**32) == b"\x81" + (2**32).to_bytes(8, "big")


# -- the commands and the save points --------------------------------------------------

def text(reply: object) -> str:
    """A simple-string, verbatim or bulk reply as text."""
    value = getattr(reply, "text", reply)
    return value.decode() if isinstance(value, bytes) else str(value)


def info_fields(engine: Engine) -> dict[str, str]:
    return dict(line.split(":", 1) for line in text(run(engine, "INFO", "persistence")).splitlines()
                if ":" in line)


def wait_for_child(snap) -> None:
    for _ in range(500):
        snap.poll()
        if snap.child_pid is None:
            return
        time.sleep(0.01)
    raise AssertionError("the BGSAVE child did not finish")


def test_save_lastsave_info_and_debug_reload(tmp_path):
    engine = make_engine(dir=str(tmp_path))
    populate(engine, 100)
    for group in engine.dbs[0].data[b"s"].groups.values():  # version 10: no active-time
        for consumer in group.consumers.values():
            consumer.active_time = consumer.seen_time
    before = observe(engine)
    assert info_fields(engine)["rdb_changes_since_last_save"] != "0"
    assert text(run(engine, "SAVE")) == "OK"
    fields = info_fields(engine)
    assert fields["rdb_changes_since_last_save"] == "0" and int(fields["rdb_saves"]) >= 1
    assert run(engine, "LASTSAVE") == int(fields["rdb_last_save_time"])
    assert fields["rdb_bgsave_in_progress"] == "0" and fields["loading"] == "0"
    run(engine, "SET", "after-save", "1")
    assert text(run(engine, "DEBUG", "RELOAD")) == "OK"  # saves again, then loads
    assert (0, b"after-save") in observe(engine)
    run(engine, "SET", "not-saved", "1")
    assert text(run(engine, "DEBUG", "RELOAD", "NOSAVE")) == "OK"
    seen = observe(engine)
    assert (0, b"not-saved") not in seen and seen[(0, b"s")] == before[(0, b"s")]


def test_save_points_start_a_bgsave(tmp_path):
    from tidelog.persistence.durability import snapshotter

    engine = make_engine(dir=str(tmp_path), save="100 3")
    snap = snapshotter(engine)
    snap.autosave = True
    run(engine, "SET", "a", "1")
    run(engine, "SET", "b", "2")
    snap.last_save -= 200
    snap.cron()
    assert snap.child_pid is None  # 2 changes: not enough
    run(engine, "SET", "c", "3")
    snap.cron()
    assert snap.child_pid is not None
    assert info_fields(engine)["rdb_bgsave_in_progress"] in ("0", "1")
    run(engine, "SET", "d", "4")  # after the fork: not in the file, still counted
    wait_for_child(snap)
    assert snap.last_bgsave_ok and snap.saves == 1 and engine.dirty == 1
    assert info_fields(engine)["rdb_last_bgsave_status"] == "ok"
    other = make_engine(dir=str(tmp_path))
    rdb.load_file(other)
    assert sorted(other.dbs[0].data) == [b"a", b"b", b"c"]


def test_bgsave_in_multi_is_scheduled(tmp_path):
    from tidelog.persistence.durability import snapshotter

    engine = make_engine(dir=str(tmp_path))
    run(engine, "SET", "k", "v")
    run(engine, "MULTI")
    run(engine, "BGSAVE")
    replies = run(engine, "EXEC")
    assert [text(r) for r in replies] == ["Background saving scheduled"]
    snap = snapshotter(engine)
    assert snap.scheduled and snap.child_pid is None
    snap.cron()
    assert snap.child_pid is not None
    reply = run(engine, "BGSAVE")
    assert b"already in progress" in getattr(reply, "message", b"")
    wait_for_child(snap)
    assert (tmp_path / "dump.rdb").exists() and not snap.scheduled


def test_save_directives_add_up_as_in_redis():
    from tidelog.config import ConfigError, save_points
    from tidelog.server.main import parse_command_line

    assert parse_command_line([])["save"] == "3600 1 300 100 60 10000"
    config = parse_command_line(["--save", "900", "1", "--save", "300", "10"])
    assert save_points(config["save"]) == [(900, 1), (300, 10)]
    assert parse_command_line(["--save", ""])["save"] == ""
    assert parse_command_line(["--save", "9", "9", "--save", "", "--save", "5", "5"])["save"] == "5 5"
    config.set("save", "60 1")  # CONFIG SET replaces
    assert config["save"] == "60 1"
    for bad in ("1", "1 x", "-1 5"):
        with pytest.raises(ConfigError, match="Invalid save parameters"):
            config.set("save", bad)


def test_bgsave_waits_for_the_aof_rewrite_child(tmp_path):
    from types import SimpleNamespace

    from tidelog.persistence.durability import attach, snapshotter

    engine = make_engine(dir=str(tmp_path))
    run(engine, "SET", "k", "v")
    attach(engine).aof = SimpleNamespace(rewriting=True)  # what persistence/aof.py exposes
    reply = run(engine, "BGSAVE")
    assert getattr(reply, "message", b"").startswith(b"ERR Another child process is active")
    assert text(run(engine, "BGSAVE", "SCHEDULE")) == "Background saving scheduled"
    snap = snapshotter(engine)
    snap.cron()
    assert snap.scheduled and snap.child_pid is None
    attach(engine).aof.rewriting = False
    snap.cron()
    assert snap.child_pid is not None
    wait_for_child(snap)
    assert snap.last_bgsave_ok and (tmp_path / "dump.rdb").exists()
