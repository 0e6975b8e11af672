"""The primary's side of replication in one process: what PSYNC answers
(Redis's rules for a partial resync), what the stream carries, and WAIT
counting acknowledgements."""

from __future__ import annotations

from tests.support.engine_harness import Harness
from tidelog.engine import BLOCKED
from tidelog.persistence import rdb
from tidelog.replication.primary import Primary
from tidelog.resp.replies import RawReply


def cmd(*argv: bytes) -> bytes:
    return b"*%d\r\n" % len(argv) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in argv)


def replica(h: Harness, port: int = 6380):
    """A client that did a replica's handshake; its stream lands in .inbox."""
    c = h.new_client(addr=f"127.0.0.1:{40000 + port}")
    assert h.ok("REPLCONF", "listening-port", port, "capa", "eof", "capa", "psync2",
                client=c) is not None
    return c


def primary_of(h: Harness) -> Primary:
    p = h.engine.replication
    assert isinstance(p, Primary)
    return p


def test_a_first_psync_is_a_full_sync_with_a_new_history() -> None:
    h = Harness(layers=True)
    h.ok("SET", "k", "v")
    c = replica(h)
    reply = h.ok("PSYNC", "?", "-1", client=c)
    p = primary_of(h)
    assert isinstance(reply, RawReply)
    head, _, rest = bytes(reply).partition(b"\r\n")
    assert head == b"+FULLRESYNC %s 0" % p.replid.encode()
    size, _, payload = rest.partition(b"\r\n")
    assert int(size[1:]) == len(payload)
    snap = rdb.loads(payload)
    assert snap.version == 10 and snap.dbs[0] == [(b"k", b"v", None)]
    assert c.kind == "replica" and p.replid2 == "0" * 40
    assert h.engine.stats["sync_full"] == 1


def test_the_stream_carries_effects_with_selects() -> None:
    h = Harness(layers=True)
    c = replica(h)
    h.ok("PSYNC", "?", "-1", client=c)
    h.ok("XADD", "s", "5-1", "f", "v")
    h.ok("SELECT", "3")
    h.ok("SET", "a", "1")
    sent = b"".join(bytes(x) for x in c.inbox)
    assert sent == (cmd(b"SELECT", b"0") + cmd(b"XADD", b"s", b"5-1", b"f", b"v")
                    + cmd(b"SELECT", b"3") + cmd(b"SET", b"a", b"1"))
    assert primary_of(h).offset == len(sent)


def test_partial_resync_rules() -> None:
    h = Harness(layers=True)
    first = replica(h)
    h.ok("PSYNC", "?", "-1", client=first)
    h.ok("SET", "a", "1")
    p = primary_of(h)
    end = p.offset
    again = replica(h, 6381)
    reply = bytes(h.ok("PSYNC", p.replid, end + 1 - 5, client=again))
    stream = b"".join(bytes(x) for x in first.inbox)
    assert reply == b"+CONTINUE %s\r\n" % p.replid.encode() + stream[-5:]
    assert h.engine.stats["sync_partial_ok"] == 1
    # Beyond the end, before the backlog's first byte, a foreign ID, or no number.
    for replid, offset in ((p.replid, end + 2), (p.replid, 0), ("f" * 40, end + 1),
                           (p.replid, "x")):
        other = replica(h, 6390)
        assert bytes(h.ok("PSYNC", replid, offset, client=other)).startswith(b"+FULLRESYNC")
    assert h.engine.stats["sync_partial_err"] == 4


def test_the_previous_history_is_accepted_up_to_where_it_ended() -> None:
    h = Harness(layers=True)
    c = replica(h)
    h.ok("PSYNC", "?", "-1", client=c)
    h.ok("SET", "a", "1")
    p = primary_of(h)
    p.replid2, p.second_offset = "a" * 40, p.offset
    for offset, ok in ((p.offset, True), (p.offset + 1, False)):
        other = replica(h, 6391)
        reply = bytes(h.ok("PSYNC", "a" * 40, offset, client=other))
        assert reply.startswith(b"+CONTINUE") == ok


def test_wait_counts_acks_past_the_clients_own_write() -> None:
    h = Harness(layers=True)
    c = replica(h)
    h.ok("PSYNC", "?", "-1", client=c)
    writer = h.new_client()
    h.ok("SET", "k", "v", client=writer)
    woff = writer.woff
    assert woff == primary_of(h).offset > 0
    assert h("WAIT", "1", "0", client=writer) is BLOCKED
    h.ok("REPLCONF", "ACK", woff - 1, client=c)          # not far enough: still waits
    assert writer.inbox == []
    h("REPLCONF", "ACK", woff, client=c)
    assert writer.inbox == [1]
    # A client that wrote nothing waits for nothing.
    assert h("WAIT", "1", "0", client=h.new_client()) == 1
    assert h.ok("ROLE") == [b"master", primary_of(h).offset, [[b"127.0.0.1", b"6380", b"%d" % woff]]]


def test_getack_goes_through_the_stream_once_per_request() -> None:
    h = Harness(layers=True)
    c = replica(h)
    h.ok("PSYNC", "?", "-1", client=c)
    c.inbox.clear()
    writer = h.new_client()
    h.ok("SET", "k", "v", client=writer)
    c.inbox.clear()
    assert h("WAIT", "1", "0", client=writer) is BLOCKED   # no scheduler: sent at once
    assert b"".join(bytes(x) for x in c.inbox) == cmd(b"REPLCONF", b"GETACK", b"*")


def test_min_replicas_to_write_refuses_writes_without_good_replicas() -> None:
    h = Harness(layers=True)
    from tidelog.replication.primary import attach
    p = attach(h.engine)
    h.ok("CONFIG", "SET", "min-replicas-to-write", "1")
    assert h.err("SET", "k", "v") == b"NOREPLICAS Not enough good replicas to write."
    assert h.ok("GET", "k") is None                    # reads still run
    h.ok("MULTI")
    h("SET", "k", "v")
    assert h.err("EXEC").startswith(b"EXECABORT")
    c = replica(h)
    h.ok("PSYNC", "?", "-1", client=c)
    h.ok("SET", "k", "v")                               # one good replica
    h.clock.advance(11_000)                             # its ACK is 11 s old: lag > 10
    assert h.err("SET", "k", "w").startswith(b"NOREPLICAS")
    h("REPLCONF", "ACK", p.offset, client=c)
    h.ok("SET", "k", "w")
    h.ok("CONFIG", "SET", "min-replicas-to-write", "0")
    h.clock.advance(60_000)
    h.ok("SET", "k", "x")
