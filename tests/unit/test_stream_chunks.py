"""A stream cut into chunks (rdb/stream_chunks.py) and staged back: the same
stream, seen through XINFO STREAM FULL, DUMP, XPENDING and the NACK order."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.engine_harness import GroupHarness, fill
from tidelog.rdb import stream_chunks
from tidelog.rdb.stream_chunks import (
    ChunkError,
    StreamChanged,
    StreamStager,
    chunkable,
    chunks,
)
from tidelog.resp.encoder import encode


def stage(stream, max_bytes=stream_chunks.MAX_BYTES, max_pending=stream_chunks.MAX_PENDING):
    stager = StreamStager()
    done = [stager.feed(chunk) for chunk in chunks(stream, max_bytes, max_pending)]
    assert done[-1] and not any(done[:-1])
    assert stager.stream is not None
    return stager.stream


def install(h, stream, key=b"t"):
    """Put a committed stream under ``key`` as RESTORE would."""
    h.engine.dbs[0].set(key, stream)


def views(h, key):
    """What clients can see of ``key``, as raw RESP2 and RESP3 bytes."""
    replies = [h.ok("XINFO", "STREAM", key, "FULL"),
               h.ok("XINFO", "STREAM", key, "FULL", "COUNT", "0"),
               h.ok("XRANGE", key, "-", "+"),
               h.ok("DUMP", key)]
    for group in h.ok("XINFO", "GROUPS", key):
        name = dict(group.items)[b"name"]
        replies.append(h.ok("XPENDING", key, name, "-", "+", "1000"))
        replies.append(h.ok("XINFO", "CONSUMERS", key, name))
    return [encode(r, 2) for r in replies] + [encode(r, 3) for r in replies]


def zone(group):
    """A group's unowned pending IDs in NACK-zone order."""
    return [id for _, id in group.nack_zone(-1, len(group.pel) + 1)]


def assert_moved(h, max_bytes=stream_chunks.MAX_BYTES, max_pending=stream_chunks.MAX_PENDING):
    source = h.stream("s")
    before = views(h, "s")
    moved = stage(source, max_bytes, max_pending)
    moved.check()
    for group in moved.groups.values():
        group.check()
    for name, group in source.groups.items():  # what no reply shows whole: NACK zone order
        assert zone(moved.groups[name]) == zone(group)
    install(h, moved)
    assert views(h, "t") == before
    assert views(h, "s") == before  # the source is left as it was
    return moved


def build(h):
    h.ok("XGROUP", "CREATE", "s", "g1", "$", "MKSTREAM")
    for i in range(1, 40):
        fields = ["a", i] if i % 3 else ["a", i, "b", "x" * i]
        h.ok("XADD", "s", f"{i}-{i % 2}", *fields)
    h.ok("XGROUP", "CREATE", "s", "g2", "0")
    h.ok("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "10", "STREAMS", "s", ">")
    h.clock.advance(7)
    h.ok("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", "s", ">")
    h.ok("XREADGROUP", "GROUP", "g2", "carol", "STREAMS", "s", ">")
    h.ok("XACK", "s", "g1", "3-1", "4-0")
    h.ok("XDEL", "s", "5-1", "20-0", "21-1")
    h.ok("XGROUP", "CREATECONSUMER", "s", "g2", "idle")
    h.ok("XCLAIM", "s", "g2", "idle", "0", "30-0", "31-1")


@pytest.mark.parametrize("node_entries", [1, 2, 4, 100])
@pytest.mark.parametrize("max_bytes,max_pending", [(1, 1), (100, 3), (1 << 20, 10_000)])
def test_groups_pel_deletions_survive_the_move(node_entries, max_bytes, max_pending):
    h = GroupHarness(node_entries=node_entries)
    build(h)
    assert_moved(h, max_bytes, max_pending)


def test_chunk_sizes_are_bounded():
    h = GroupHarness(node_entries=10)
    build(h)
    source = h.stream("s")
    sizes = [len(c) for c in chunks(source, max_bytes=1, max_pending=2)]
    kinds = [c[1] for c in chunks(source, max_bytes=1, max_pending=2)]
    # One node per NODES chunk at max_bytes=1, then per group a GROUP chunk and
    # PEL chunks of at most 2 entries, then COMMIT.
    assert kinds.count(stream_chunks.NODES) == source.node_count
    pending = sum(len(g.pel) for g in source.groups.values())
    assert kinds.count(stream_chunks.PEL) == sum(
        -(-len(g.pel) // 2) for g in source.groups.values())
    assert kinds.count(stream_chunks.GROUP) == 2 and kinds[-1] == stream_chunks.COMMIT
    assert pending > 2 and max(sizes) < 2000


def test_empty_stream_and_stream_without_groups():
    h = GroupHarness()
    h.ok("XADD", "s", "5-0", "f", "v")
    h.ok("XDEL", "s", "5-0")
    assert assert_moved(h).node_count == 0
    h.ok("XADD", "s", "6-0", "f", "v")
    h.ok("XADD", "s", "7-0", "f", "v")
    assert [c[1] for c in chunks(h.stream("s"))] == [stream_chunks.NODES, stream_chunks.COMMIT]
    assert_moved(h)


def test_minid_trim_leaves_an_empty_node_that_moves_too():
    h = GroupHarness(node_entries=4)
    for i in range(1, 11):
        h.ok("XADD", "s", f"{i}-0", "f", i)
    h.ok("XTRIM", "s", "MINID", "=", "5")
    h.ok("XTRIM", "s", "MINID", "=", "9")
    assert_moved(h, max_bytes=1)


def test_unowned_entries_keep_their_nack_order():
    h = GroupHarness()
    build(h)
    # NACK in an order other than ID order: the zone order is what XAUTOCLAIM follows.
    h.ok("XNACK", "s", "g1", "SILENT", "IDS", "1", "9-1")
    h.ok("XNACK", "s", "g1", "SILENT", "IDS", "2", "2-0", "7-1")
    moved = assert_moved(h, max_pending=1)
    assert zone(moved.groups[b"g1"]) == [(9, 1), (2, 0), (7, 1)]
    # XREADGROUP ... CLAIM takes unowned entries in zone order, on both copies.
    taken = []
    for key in ("s", "t"):
        reply = h.ok("XREADGROUP", "GROUP", "g1", "dave", "COUNT", "3", "CLAIM", "0",
                     "STREAMS", key, ">")
        taken.append(encode(reply, 3))
        assert [e[0] for e in reply[0][1]][:3] == [b"9-1", b"2-0", b"7-1"]
    assert taken[0] == taken[1].replace(b"$1\r\nt", b"$1\r\ns")


def test_large_pels_are_scanned_in_pages():
    """More pending and unowned entries than one scan page (_SCAN) takes."""
    h = GroupHarness()
    n = 3 * stream_chunks._SCAN + 5
    fill(h, n)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "a", "COUNT", n // 2, "STREAMS", "s", ">")
    h.ok("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
    nacked = [f"{i}-1" for i in range(n, 0, -3)]  # newest first: not ID order
    h.ok("XNACK", "s", "g", "SILENT", "IDS", len(nacked), *nacked)
    for max_pending in (7, stream_chunks.MAX_PENDING):
        moved = assert_moved(h, max_pending=max_pending)
        assert len(moved.groups[b"g"].pel) == n
        assert zone(moved.groups[b"g"]) == [(int(i[:-2]), 1) for i in nacked]
        assert len(nacked) > stream_chunks._SCAN


def test_idmp_state_is_refused():
    h = GroupHarness()
    h.ok("XADD", "s", "IDMP", "p", "i1", "*", "f", "v")
    assert not chunkable(h.stream("s"))
    with pytest.raises(ValueError):
        next(chunks(h.stream("s")))


def test_a_write_between_chunks_stops_the_sender():
    h = GroupHarness(node_entries=2)
    build(h)
    sender = chunks(h.stream("s"), max_bytes=1)
    next(sender)
    h.ok("XADD", "s", "100-0", "f", "v")
    with pytest.raises(StreamChanged):
        next(sender)
    sender = chunks(h.stream("s"), max_bytes=1, max_pending=1)
    for chunk in sender:
        if chunk[1] == stream_chunks.PEL:
            break
    h.ok("XACK", "s", "g1", "1-1")
    with pytest.raises(StreamChanged):
        next(sender)


def sent(h, **kw):
    return list(chunks(h.stream("s"), max_bytes=1, max_pending=2, **kw))


def refused(sequence, match):
    stager = StreamStager()
    with pytest.raises(ChunkError, match=match):
        for chunk in sequence:
            stager.feed(chunk)
    assert stager.stream is None
    with pytest.raises(ChunkError):  # unusable after a failure
        stager.feed(sequence[0])


@pytest.fixture
def built():
    h = GroupHarness(node_entries=4)
    build(h)
    return sent(h)


def test_a_lost_chunk_never_commits(built):
    refused(built[:3] + built[4:], "where chunk 3 was due")


def test_a_repeated_or_reordered_chunk_is_refused(built):
    refused(built[:3] + built[2:], "where chunk 3 was due")
    refused([built[1], built[0]], "where chunk 0 was due")


def test_a_corrupt_chunk_is_refused(built):
    bad = bytearray(built[2])
    bad[len(bad) // 2] ^= 1
    refused(built[:2] + [bytes(bad)], "checksum")
    refused([b"\x01\x01"], "too short")


def test_a_chunk_of_another_version_or_kind_is_refused(built):
    refused([reseal(b"\x02" + built[0][1:-8])], "version 2")
    refused([reseal(b"\x01\x09" + built[0][2:-8])], "kind 9")


def test_kinds_out_of_order_are_refused(built):
    kinds = [c[1] for c in built]
    first_group = kinds.index(stream_chunks.GROUP)
    pel = kinds.index(stream_chunks.PEL)
    # A NODES chunk after a GROUP chunk, renumbered so only its kind is wrong.
    node_late = reseal(built[0][:2] + bytes([first_group + 1]) + built[0][3:-8])
    refused(built[:first_group + 1] + [node_late], "out of order")
    # A PEL chunk before any GROUP chunk.
    assert built[pel][2] < 0x40 and first_group < 0x40
    pel_early = reseal(built[pel][:2] + bytes([first_group]) + built[pel][3:-8])
    refused(built[:first_group] + [pel_early], "out of order")


def test_nothing_is_fed_after_commit(built):
    stager = StreamStager()
    for chunk in built:
        stager.feed(chunk)
    with pytest.raises(ChunkError, match="committed"):
        stager.feed(built[-1])


def test_commit_checks_the_counters(built):
    commit = built[-1]
    # COMMIT's own count of chunks sent disagreeing with what arrived.
    wrong_count = reseal(commit[:3] + bytes([commit[3] + 1]) + commit[4:-8])
    refused(built[:-1] + [wrong_count], "COMMIT after")
    # A length that the nodes do not hold.
    wrong_length = reseal(commit[:4] + bytes([commit[4] + 1]) + commit[5:-8])
    refused(built[:-1] + [wrong_length], "live entries")


def test_trailing_bytes_are_refused(built):
    refused([reseal(built[0][:-8] + b"\x00")], "left over")


def reseal(data: bytes) -> bytes:
    from tidelog.rdb.format import _U64, crc64

    return data + _U64.pack(crc64(data))


# -- random streams ----------------------------------------------------------

OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(1, 3), st.integers(0, 40)),
    st.tuples(st.just("del"), st.integers(0, 60)),
    st.tuples(st.just("read"), st.sampled_from(["g1", "g2"]), st.sampled_from(["c1", "c2", "c3"]),
              st.integers(1, 5)),
    st.tuples(st.just("ack"), st.sampled_from(["g1", "g2"]), st.integers(0, 60)),
    st.tuples(st.just("claim"), st.sampled_from(["g1", "g2"]), st.sampled_from(["c1", "c4"]),
              st.integers(0, 60)),
    st.tuples(st.just("nack"), st.sampled_from(["g1", "g2"]), st.integers(0, 60)),
    st.tuples(st.just("trim"), st.integers(0, 60)),
    st.tuples(st.just("tick"), st.integers(1, 1000)),
    st.tuples(st.just("setid"), st.integers(1, 5), st.integers(0, 3)),
    st.tuples(st.just("gsetid"), st.sampled_from(["g1", "g2"]), st.integers(0, 60),
              st.sampled_from([None, 0, 5])),
), max_size=60)


def run(h, ops):
    h.ok("XADD", "s", "1-0", "f", "v")
    h.ok("XGROUP", "CREATE", "s", "g1", "0")
    h.ok("XGROUP", "CREATE", "s", "g2", "$")
    n = 1
    for op in ops:
        if op[0] == "add":
            n += op[1]
            fields = ["f", "v"] if op[2] % 2 else ["f", "v", "g", "w" * op[2]]
            h.ok("XADD", "s", f"{n}-0", *fields)
        elif op[0] == "del":
            h.ok("XDEL", "s", f"{op[1]}-0")
        elif op[0] == "read":
            h.ok("XREADGROUP", "GROUP", op[1], op[2], "COUNT", op[3], "STREAMS", "s", ">")
        elif op[0] == "ack":
            h.ok("XACK", "s", op[1], f"{op[2]}-0")
        elif op[0] == "claim":
            h("XCLAIM", "s", op[1], op[2], "0", f"{op[3]}-0")
        elif op[0] == "nack":
            h("XNACK", "s", op[1], "FAIL", "IDS", "1", f"{op[2]}-0")
        elif op[0] == "trim":
            h.ok("XTRIM", "s", "MINID", "=", f"{op[1]}-0")
        elif op[0] == "setid":  # raise the last ID and entries-added, maybe max-deleted
            n += op[1]
            added = h.stream("s").entries_added + op[2]
            h("XSETID", "s", f"{n}-0", "ENTRIESADDED", added, "MAXDELETEDID", f"{op[2]}-0")
        elif op[0] == "gsetid":  # entries-read explicit, or left to Redis's estimate
            extra = [] if op[3] is None else ["ENTRIESREAD", op[3]]
            h("XGROUP", "SETID", "s", op[1], f"{op[2]}-0", *extra)
        else:
            h.clock.advance(op[1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, node_entries=st.sampled_from([1, 2, 4, 100]),
       max_bytes=st.sampled_from([1, 40, 200, 1 << 20]), max_pending=st.integers(1, 5))
def test_random_streams_move_unchanged(ops, node_entries, max_bytes, max_pending):
    h = GroupHarness(node_entries=node_entries)
    run(h, ops)
    assert_moved(h, max_bytes, max_pending)
