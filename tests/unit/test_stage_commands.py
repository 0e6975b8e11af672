"""TIDELOG.STAGE on the engine: a stream staged in chunks, invisible until
its COMMIT chunk installs it exactly as the source was (XINFO STREAM FULL,
DUMP); RESTORE's key rules at commit; every way a staged copy is dropped;
and what the AOF and replicas are given (the same steps, replayed)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.engine_harness import NOW, GroupHarness, Harness
from tests.unit.test_stream_chunks import OPS, build, run, views
from tidelog.rdb import stream_chunks
from tidelog.rdb.stream_chunks import chunks
from tidelog.resp.replies import OK, ErrorReply

TOKEN = b"ab" * 20
STAGE = b"TIDELOG.STAGE"


def cut(h, key="s", max_bytes=200, max_pending=3) -> list[bytes]:
    return list(chunks(h.stream(key), max_bytes, max_pending))


def move(h, parts, key="t", token=TOKEN, ttl=0, replace=False, client=None):
    """BEGIN, then every chunk; the replies."""
    extra = ["REPLACE"] if replace else []
    replies = [h("TIDELOG.STAGE", "BEGIN", token, key, ttl, 10_000, *extra, client=client)]
    replies += [h("TIDELOG.STAGE", "APPEND", token, part, client=client) for part in parts]
    return replies


def ok(replies) -> bool:
    return all(not isinstance(r, ErrorReply) for r in replies)


def replay(effects, clock_ms=NOW) -> GroupHarness:
    """A fresh engine fed ``effects`` through an AOF client (as a reload or a replica)."""
    other = GroupHarness()
    other.clock.set_ms(clock_ms)
    aof = other.new_client(kind="aof")
    for argv in effects:
        reply = other(*argv, client=aof)
        assert not isinstance(reply, ErrorReply), (argv[:3], reply)
    return other


# -- the interface ---------------------------------------------------------------
def test_hello_answers_the_chunk_format_version():
    h = Harness()
    assert h.ok("TIDELOG.STAGE", "HELLO") == stream_chunks.VERSION


def test_argument_errors():
    h = Harness()
    begin = ("TIDELOG.STAGE", "BEGIN", TOKEN, "k")
    assert h.err(*begin, "x", "1") == b"ERR value is not an integer or out of range"
    assert h.err(*begin, "-1", "1") == b"ERR Invalid TTL value, must be >= 0"
    assert h.err(*begin, "0", "0") == b"ERR invalid idle time, must be > 0"
    assert h.err(*begin, "0", "1", "KEEP") == b"ERR syntax error"
    assert h.err(*begin, "0") == b"ERR wrong number of arguments for 'tidelog.stage|begin' command"
    assert h.err("TIDELOG.STAGE", "APPEND", TOKEN, "x") == b"ERR no such staged key"
    assert h.err("TIDELOG.STAGE", "APPEND", TOKEN, "x", "PXAT") == b"ERR syntax error"
    assert h.err("TIDELOG.STAGE", "APPEND", TOKEN, "x", "PXAT", "0") == \
        b"ERR invalid expire time in 'tidelog.stage' command"
    assert h.ok("TIDELOG.STAGE", "ABORT", TOKEN) == 0
    assert h.ok(*begin, "0", "1") == OK
    assert h.err(*begin, "0", "1") == b"ERR staged key token already open"
    assert h.ok("TIDELOG.STAGE", "ABORT", TOKEN) == 1
    assert h.ok("TIDELOG.STAGE", "ABORT", TOKEN) == 0


def test_command_docs_flags_it_syscmd():
    h = Harness()
    docs = dict(h.ok("COMMAND", "DOCS", "tidelog.stage").items)[b"tidelog.stage"]
    items = dict(docs.items)
    assert [s.text for s in items[b"doc_flags"].items] == [b"syscmd"]
    subs = dict(items[b"subcommands"].items)
    for name in (b"hello", b"begin", b"append", b"abort"):
        sub = dict(subs[b"tidelog.stage|" + name].items)
        assert [s.text for s in sub[b"doc_flags"].items] == [b"syscmd"]
    info = h.ok("COMMAND", "INFO", "tidelog.stage|begin")[0]
    flags = {f.text for f in info[2].items}
    assert {b"write", b"noscript", b"no_multi", b"asking", b"denyoom"} <= flags
    assert info[3:6] == [3, 3, 1]


def test_not_allowed_in_multi_or_scripts():
    h = Harness()
    h.ok("MULTI")
    assert h.err("TIDELOG.STAGE", "BEGIN", TOKEN, "k", "0", "1") == \
        b"ERR Command not allowed inside a transaction"
    h.ok("DISCARD")
    err = h.err("EVAL", "return redis.call('TIDELOG.STAGE', 'ABORT', 'x')", "0")
    assert b"This Redis command is not allowed from script" in err


# -- the move --------------------------------------------------------------------
def test_staged_copy_is_invisible_until_commit():
    h = GroupHarness(node_entries=4)
    build(h)
    parts = cut(h)
    assert len(parts) > 3
    assert ok(move(h, parts[:-1]))
    assert h.ok("EXISTS", "t") == 0
    assert h.ok("DBSIZE") == 1
    assert h.ok("KEYS", "*") == [b"s"]
    assert h.ok("SCAN", "0") == [b"0", [b"s"]]
    assert h.ok("TYPE", "t").text == b"none"
    assert h("XRANGE", "t", "-", "+") == []
    assert h.ok("TIDELOG.STAGE", "APPEND", TOKEN, parts[-1]) == OK
    assert h.ok("DBSIZE") == 2
    assert views(h, "t") == views(h, "s")
    assert h.engine.dbs[0].staged == {}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, node_entries=st.sampled_from([1, 4, 100]), seed=st.integers(0, 2**32))
def test_random_streams_commit_equal_to_the_source(ops, node_entries, seed):
    h = GroupHarness(node_entries=node_entries)
    run(h, ops)
    rng = random.Random(seed)
    parts = cut(h, max_bytes=rng.choice([1, 40, 300, 1 << 20]), max_pending=rng.randint(1, 5))
    h.take_effects()
    assert ok(move(h, parts))
    assert views(h, "t") == views(h, "s")
    assert h.ok("DUMP", "t") == h.ok("DUMP", "s")
    # what the AOF and the replicas got rebuilds the same stream
    effects = h.take_effects()
    assert [e[:2] for e in effects] == [[STAGE, b"BEGIN"]] + [[STAGE, b"APPEND"]] * len(parts)
    other = replay(effects, h.clock.now_ms())
    assert views(other, "t") == views(h, "t")


def test_busykey_at_commit_unless_replace():
    h = GroupHarness()
    build(h)
    parts = cut(h)
    h.ok("SET", "t", "old")
    replies = move(h, parts)
    assert ok(replies[:-1])  # the key is checked at commit only
    assert replies[-1] == ErrorReply(b"BUSYKEY Target key name already exists.")
    assert h.ok("GET", "t") == b"old"
    assert h.engine.dbs[0].staged == {}
    assert h.take_effects()[-1] == [STAGE, b"ABORT", TOKEN]
    assert ok(move(h, parts, replace=True))
    assert views(h, "t") == views(h, "s")


def test_ttl_is_applied_at_commit_and_propagated_as_an_absolute_deadline():
    h = GroupHarness()
    build(h)
    parts = cut(h)
    h.take_effects()
    assert ok(move(h, parts, ttl=5000))
    assert h.ok("PTTL", "t") == 5000
    effects = h.take_effects()
    # the COMMIT chunk goes out with the absolute deadline (one effect: no MULTI)
    assert effects[-1] == [STAGE, b"APPEND", TOKEN, parts[-1],
                           b"PXAT", b"%d" % (h.clock.now_ms() + 5000)]
    # replayed later, the key keeps the primary's deadline
    other = replay(effects, h.clock.now_ms() + 2000)
    assert other.ok("PTTL", "t") == 3000


def test_commit_wakes_blocked_readers_and_notifies_restore():
    h = GroupHarness()
    build(h)
    parts = cut(h)
    h.ok("CONFIG", "SET", "notify-keyspace-events", "KEg")
    sub = h.new_client()
    h.ok("SUBSCRIBE", "__keyevent@0__:restore", client=sub)
    reader = h.new_client()
    h("XREAD", "BLOCK", "0", "STREAMS", "t", "0", client=reader)
    assert ok(move(h, parts))
    assert reader.inbox and reader.inbox[0][0][0] == b"t"
    assert [m.items for m in sub.inbox] == [[b"message", b"__keyevent@0__:restore", b"t"]]


def test_bad_chunk_drops_the_copy():
    h = GroupHarness()
    build(h)
    parts = cut(h)
    h.take_effects()
    replies = move(h, [parts[0], parts[2]])
    assert isinstance(replies[-1], ErrorReply)
    assert replies[-1].message.startswith(b"ERR bad chunk: ")
    assert h.engine.dbs[0].staged == {}
    assert h.take_effects()[-1] == [STAGE, b"ABORT", TOKEN]
    corrupt = bytearray(parts[0])
    corrupt[5] ^= 1
    replies = move(h, [bytes(corrupt)])
    assert replies[-1] == ErrorReply(b"ERR bad chunk: chunk checksum mismatch")
    assert h.err("TIDELOG.STAGE", "APPEND", TOKEN, parts[0]) == b"ERR no such staged key"


# -- the drops ---------------------------------------------------------------------
def test_abort_drops_and_propagates():
    h = GroupHarness()
    build(h)
    parts = cut(h)
    move(h, parts[:2])
    h.take_effects()
    assert h.ok("TIDELOG.STAGE", "ABORT", TOKEN) == 1
    assert h.take_effects() == [[STAGE, b"ABORT", TOKEN]]
    assert h.err("TIDELOG.STAGE", "APPEND", TOKEN, parts[2]) == b"ERR no such staged key"


def test_idle_deadline_drops_in_the_cron_and_appends_renew_it():
    h = GroupHarness()
    build(h)
    parts = cut(h)
    h.ok("TIDELOG.STAGE", "BEGIN", TOKEN, "t", "0", "1000")
    h.take_effects()
    for part in parts[:3]:
        h.clock.advance(600)
        h.engine.cron()
        assert h.ok("TIDELOG.STAGE", "APPEND", TOKEN, part) == OK
    h.clock.advance(999)
    h.engine.cron()
    assert TOKEN in h.engine.dbs[0].staged
    h.clock.advance(2)
    h.engine.cron()
    assert h.engine.dbs[0].staged == {}
    assert h.take_effects()[-1] == [STAGE, b"ABORT", TOKEN]


def test_flushdb_and_flushall_drop_staged_copies():
    h = GroupHarness()
    build(h)
    parts = cut(h)
    for command, db in (("FLUSHDB", 0), ("FLUSHALL", 3)):
        h.ok("SELECT", db)
        move(h, parts[:1])
        h.ok("SELECT", 0)
        h.take_effects()
        h.ok(command)
        assert all(not d.staged for d in h.engine.dbs)
        batches = [batch for batch in h.effects]
        assert batches[0] == [(db, [STAGE, b"ABORT", TOKEN])]
        assert batches[-1][-1][1] == [command.encode()]
        h.take_effects()
        build(h)
        parts = cut(h)


def test_the_owning_connection_closing_drops_its_copies_only():
    h = GroupHarness()
    build(h)
    parts = cut(h)
    mover = h.new_client()
    other = h.new_client()
    move(h, parts[:1], client=mover)
    move(h, parts[:1], token=b"cd" * 20, client=other)
    h.ok("SELECT", "2", client=mover)
    move(h, parts[:1], token=b"ef" * 20, client=mover)
    h.take_effects()
    h.engine.client_closed(mover)
    assert set(h.engine.dbs[0].staged) == {b"cd" * 20} and not h.engine.dbs[2].staged
    assert sorted(h.effects) == sorted([[(0, [STAGE, b"ABORT", TOKEN])],
                                        [(2, [STAGE, b"ABORT", b"ef" * 20])]])


def test_copies_from_the_replication_stream_are_nobodys():
    h = GroupHarness()
    build(h)
    parts = cut(h)
    master = h.new_client(kind="master")
    move(h, parts[:1], client=master)
    h.engine.client_closed(master)
    assert TOKEN in h.engine.dbs[0].staged
    assert h.engine.dbs[0].staged[TOKEN].owner is None


# -- replication ---------------------------------------------------------------------
def replica(h, *capa):
    c = h.new_client(addr="127.0.0.1:46380")
    args = [x for name in ("eof", "psync2", *capa) for x in ("capa", name)]
    h.ok("REPLCONF", "listening-port", "6380", *args, client=c)
    return c


def test_hello_is_zero_while_a_replica_lacks_the_capability():
    h = GroupHarness(layers=True)
    build(h)
    capable = replica(h, "tidelog-stage")
    h.ok("PSYNC", "?", "-1", client=capable)
    assert h.ok("TIDELOG.STAGE", "HELLO") == stream_chunks.VERSION
    plain = replica(h)
    assert h.ok("TIDELOG.STAGE", "HELLO") == 0
    assert h.err("TIDELOG.STAGE", "BEGIN", TOKEN, "t", "0", "1000").startswith(
        b"ERR staging is not available")
    h.engine.client_closed(plain)
    assert h.ok("TIDELOG.STAGE", "HELLO") == stream_chunks.VERSION


def test_a_full_resync_drops_staged_copies_before_its_offset():
    h = GroupHarness(layers=True)
    build(h)
    parts = cut(h)
    first = replica(h, "tidelog-stage")
    h.ok("PSYNC", "?", "-1", client=first)
    move(h, parts[:2])
    second = replica(h, "tidelog-stage")
    reply = bytes(h.ok("PSYNC", "?", "-1", client=second))
    assert h.engine.dbs[0].staged == {}
    offset = int(reply.split(b"\r\n", 1)[0].split()[2])
    stream = b"".join(bytes(x) for x in first.inbox)
    abort = b"*3\r\n$13\r\nTIDELOG.STAGE\r\n$5\r\nABORT\r\n$40\r\n" + TOKEN + b"\r\n"
    assert stream.endswith(abort) and len(stream) == offset
    assert h.err("TIDELOG.STAGE", "APPEND", TOKEN, parts[2]) == b"ERR no such staged key"


def test_aof_rewrite_writes_open_copies_as_begin_and_appends():
    from tidelog.persistence.aof_rewrite import dataset_commands, rdb_can_hold

    h = GroupHarness()
    build(h)
    parts = cut(h)
    assert rdb_can_hold(h.engine)
    move(h, parts[:3], ttl=100)
    assert not rdb_can_hold(h.engine)
    rewritten = list(dataset_commands(h.engine))
    # a reload of the rewrite, then the rest of the move
    other = replay(rewritten, h.clock.now_ms())
    assert set(other.engine.dbs[0].staged) == {TOKEN}
    aof = other.new_client(kind="aof")
    for part in parts[3:]:
        assert other.ok("TIDELOG.STAGE", "APPEND", TOKEN, part, client=aof) == OK
    assert views(other, "t") == views(h, "s")


def test_a_begin_from_the_aof_or_a_primary_replaces_a_token_left_open():
    # a kill -9 mid-move leaves BEGIN and APPENDs with no ABORT in the AOF;
    # the sender's retry after the restart reuses nothing it cannot replace
    h = GroupHarness()
    build(h)
    parts = cut(h)
    for kind in ("aof", "master"):
        client = h.new_client(kind=kind)
        move(h, parts[:2], client=client)
        assert ok(move(h, parts, client=client))
        assert views(h, "t") == views(h, "s")
        h.ok("DEL", "t")
    move(h, parts[:1])
    assert h.err("TIDELOG.STAGE", "BEGIN", TOKEN, "t", "0", "10") == \
        b"ERR staged key token already open"


async def test_no_idle_drop_while_following_a_primary():
    # A replica's copies are its primary's (which may go on feeding them after
    # a partial resync): the cron leaves them; once promoted, it drops them.
    import asyncio

    from tidelog.replication.primary import stop_following

    h = GroupHarness(layers=True)
    build(h)
    parts = cut(h)
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        h.ok("REPLICAOF", "127.0.0.1", port)
        master = h.new_client(kind="master")
        move(h, parts[:2], client=master)
        h.clock.advance(60_000)
        h.engine.cron()
        assert TOKEN in h.engine.dbs[0].staged
        h.ok("REPLICAOF", "NO", "ONE")
        h.take_effects()
        h.engine.cron()
        assert h.engine.dbs[0].staged == {}
        assert h.take_effects() == [[STAGE, b"ABORT", TOKEN]]
    finally:
        await stop_following(h.engine)
        server.close()
        await server.wait_closed()
