"""MIGRATE's chunked path in the engine, without a network: the client
parked (PARKED), writes to the key in flight refused with TRYAGAIN (in
MULTI and scripts too), reads served, expiry held, and the move's end.

The target's end of MIGRATE's cached connection is one end of a socketpair
(the probe's ``TIDELOG.STAGE HELLO`` is answered there); the engine's mover
is :class:`HeldMover`, which keeps each move until the test runs its
dialogue (``move.requests()``) and ends it (``move.finish``): the network
layer's part (tests/integration/test_migrate_chunked.py runs the real one).
"""

from __future__ import annotations

import socket

import pytest

from tidelog.cluster.messages import MASTER, MYSELF
from tidelog.cluster.nodes import Node, Topology
from tidelog.cluster.routing import Router
from tidelog.commands.keys.migrate_sockets import MigrateSockets
from tidelog.engine import PARKED
from tidelog.errors import MIGRATE_IOERR_READ, MIGRATE_IOERR_WRITE, TRYAGAIN
from tidelog.ids import StreamID
from tidelog.keyslot import key_slot
from tidelog.rdb.stream_chunks import VERSION, StreamStager
from tidelog.resp import RequestParser, encode_into
from tidelog.resp.replies import OK, ErrorReply

from ..support.engine_harness import Harness, fill


class HeldMover:
    """A mover that keeps the moves it is given (the test drives them)."""

    available = True

    def __init__(self) -> None:
        self.moves: list = []

    def start(self, move) -> None:
        self.moves.append(move)


class Target:
    """The far end of MIGRATE's cached connection (a socketpair)."""

    def __init__(self) -> None:
        self.far: socket.socket | None = None

    def __call__(self, address, timeout):
        near, self.far = socket.socketpair()
        near.settimeout(timeout)
        return near

    def answer(self, data: bytes) -> None:
        assert self.far is not None
        self.far.sendall(data)

    def received(self) -> bytes:
        assert self.far is not None
        self.far.setblocking(False)
        try:
            return self.far.recv(1 << 20)
        except BlockingIOError:
            return b""


@pytest.fixture
def h():
    harness = Harness()
    harness.target = Target()
    harness.engine.migrate_sockets = MigrateSockets(connect=harness.target)
    harness.mover = harness.engine.mover = HeldMover()
    harness.ok("CONFIG", "SET", "migrate-stream-chunk-threshold", "50")
    harness.ok("CONFIG", "SET", "migrate-stream-chunk-bytes", "1")  # a node a chunk
    harness.owner = harness.new_client()
    # the cached connection to the target, made now (its far end answers)
    harness.engine.migrate_sockets.get(b"127.0.0.1", b"7000", 5.0,
                                       harness.clock.monotonic(), harness.engine.config)
    yield harness
    if harness.target.far is not None:
        harness.target.far.close()


def park(h, key="s", *options, answer: bytes = b"") -> object:
    """MIGRATE ``key`` as ``h.owner``, the probe answered (after ``answer``,
    AUTH's): the move."""
    h.target.answer(answer + b":%d\r\n" % VERSION)
    reply = h("MIGRATE", "127.0.0.1", "7000", key, "0", "5000", *options, client=h.owner)
    assert reply is PARKED
    assert h.owner.parked is h.mover.moves[-1]
    return h.mover.moves[-1]


def run(move, answer) -> list[list[bytes]]:
    """Run the move's dialogue, each request answered by ``answer(argv)``;
    the requests as argv lists."""
    parser = RequestParser()
    sent = []
    dialogue = move.requests()
    try:
        request = next(dialogue)
        while True:
            parser.feed(request)
            (argv,) = parser.next_commands()
            sent.append(argv)
            request = dialogue.send(answer(argv))
    except StopIteration:
        pass
    return sent


class Staging:
    """Answers as a Tidelog target would: chunks fed to a StreamStager."""

    def __init__(self, fail_at: int = -1) -> None:
        self.stager = StreamStager()
        self.appends = 0
        self.fail_at = fail_at

    def __call__(self, argv: list[bytes]) -> bytes:
        if argv[:2] == [b"TIDELOG.STAGE", b"APPEND"]:
            if self.appends == self.fail_at:
                return b"-ERR chunk refused"
            self.appends += 1
            self.stager.feed(argv[3])
        if argv[:2] == [b"TIDELOG.STAGE", b"ABORT"]:
            return b":1"
        return b"+OK"


class TargetEngine:
    """A second engine as the target: each request run there, its reply
    encoded as the line the mover would read."""

    def __init__(self) -> None:
        self.h = Harness()

    def __call__(self, argv: list[bytes]) -> bytes:
        out = bytearray()
        encode_into(out, self.h.engine.execute(self.h.client, argv), 2)
        assert out.endswith(b"\r\n") and out.count(b"\r\n") == 1
        return bytes(out[:-2])


def test_a_big_stream_parks_and_is_moved_in_chunks(h):
    fill(h, 300)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "alice", "COUNT", "120", "STREAMS", "s", ">")
    h.ok("SET", "small", "v")
    h.take_effects()
    move = park(h, "", "KEYS", "small", "s")
    assert h.target.received() == b"*2\r\n$13\r\nTIDELOG.STAGE\r\n$5\r\nHELLO\r\n"
    staging = Staging()
    sent = run(move, staging)
    assert [argv[:2] for argv in sent[:3]] == [[b"SELECT", b"0"], [b"RESTORE", b"small"],
                                             [b"TIDELOG.STAGE", b"BEGIN"]]
    assert sent[2][3:] == [b"s", b"0", b"60000"]
    assert staging.appends == len(sent) - 3 > 3  # one node a chunk: several chunks
    source = h.stream()
    assert staging.stager.stream is not None and staging.stager.stream.length == 300
    assert h.owner.inbox == []
    move.finish()
    assert h.owner.inbox == [OK] and h.owner.parked is None
    assert h("EXISTS", "s", "small") == 0 and source.length == 300
    assert h.take_effects() == [[b"DEL", b"small", b"s"]]
    assert not h.engine.moving and not h.engine.dbs[0].moving


def test_writes_to_a_key_in_flight_get_tryagain_reads_are_served(h):
    fill(h, 100)
    fill(h, 3, key="other")
    move = park(h)
    other = h.new_client()
    assert h.err("XADD", "s", "*", "f", "v", client=other) == TRYAGAIN
    assert h.err("DEL", "s", client=other) == TRYAGAIN
    assert h.err("EXPIRE", "s", "100", client=other) == TRYAGAIN
    assert h.err("MIGRATE", "127.0.0.1", "7000", "s", "0", "5000", client=other) == TRYAGAIN
    assert h(b"XLEN", "s", client=other) == 100
    assert len(h(b"XRANGE", "s", "-", "+", "COUNT", "2", client=other)) == 2
    assert h.ok("XADD", "other", "*", "f", "v", client=other)
    assert h("PING", client=other) is not None
    # a transaction that writes it is refused; a script's write too
    assert h("MULTI", client=other) == OK
    assert isinstance(h("XADD", "s", "*", "f", "v", client=other), ErrorReply)
    assert b"EXECABORT" in h.err("EXEC", client=other)
    reply = h("EVAL", "return redis.pcall('XADD', KEYS[1], '*', 'f', 'v')", "1", "s",
              client=other)
    assert isinstance(reply, ErrorReply) and reply.message.startswith(b"TRYAGAIN")
    assert h.stream().length == 100
    move.finish(MIGRATE_IOERR_READ)  # the connection failed: the key stays
    assert h.owner.inbox[-1] == ErrorReply(MIGRATE_IOERR_READ)
    assert h.ok("XADD", "s", "*", "f", "v", client=other)
    assert h(b"XLEN", "s") == 101


def test_a_failed_chunk_aborts_and_the_source_keeps_the_stream(h):
    fill(h, 200)
    h.take_effects()
    move = park(h)
    sent = run(move, Staging(fail_at=1))
    assert sent[-1][:2] == [b"TIDELOG.STAGE", b"ABORT"] and sent[-1][2] == sent[1][2]
    move.finish()
    assert h.owner.inbox == [ErrorReply(b"ERR Target instance replied with error: "
                                        b"ERR chunk refused")]
    assert h(b"XLEN", "s") == 200 and h.take_effects() == []


def test_an_auth_error_counts_for_every_key(h):
    fill(h, 60)
    move = park(h, "s", "AUTH", "pw", answer=b"+OK\r\n")
    h.target.received()
    sent = run(move, lambda argv: b"-WRONGPASS bad" if argv[0] == b"AUTH" else b"+OK")
    assert sent == [[b"AUTH", b"pw"]]
    move.finish()
    assert h.owner.inbox == [ErrorReply(b"ERR Target instance replied with error: "
                                        b"WRONGPASS bad")]
    assert h(b"XLEN", "s") == 60


def test_a_stream_that_changed_is_aborted(h):
    fill(h, 100)
    move = park(h)
    dialogue = move.requests()
    assert b"SELECT" in next(dialogue)
    assert b"BEGIN" in dialogue.send(b"+OK")
    assert b"APPEND" in dialogue.send(b"+OK")
    h.stream().delete(StreamID(1, 1))           # a write path the admission missed
    abort = dialogue.send(b"+OK")               # the next chunk sees it
    assert b"ABORT" in abort
    with pytest.raises(StopIteration):
        dialogue.send(b":1")
    move.finish()
    assert h.owner.inbox == [ErrorReply(MIGRATE_IOERR_WRITE)]
    assert h(b"XLEN", "s") == 99


def test_a_key_in_flight_does_not_expire_until_the_move_ends(h):
    fill(h, 100)
    h.ok("PEXPIRE", "s", "100")
    move = park(h)
    h.clock.advance(1000)
    h.engine.cron()
    db = h.engine.dbs[0]
    assert b"s" in db.data                     # neither the cron ...
    assert h(b"XLEN", "s") == 0 and b"s" in db.data  # ... nor a lookup deletes it
    move.finish(MIGRATE_IOERR_READ)
    h.engine.cron()
    assert b"s" not in db.data                 # expired once the move ended
    assert [b"DEL", b"s"] in h.take_effects()


def test_the_dump_path_below_the_threshold_in_multi_and_when_disabled(h):
    fill(h, 49)
    h.target.answer(b"+OK\r\n+OK\r\n")
    assert h("MIGRATE", "127.0.0.1", "7000", "s", "0", "5000") == OK  # 49 < 50
    sent = h.target.received()
    assert b"RESTORE" in sent and b"TIDELOG" not in sent
    fill(h, 60, key="t")
    h.target.answer(b"+OK\r\n")
    assert h("MULTI") == OK and h("MIGRATE", "127.0.0.1", "7000", "t", "0", "5000") is not None
    assert h("EXEC") == [OK]                   # inside EXEC: no parking
    assert b"TIDELOG" not in h.target.received() and not h.mover.moves
    fill(h, 60, key="u")
    h.ok("CONFIG", "SET", "migrate-stream-chunk-threshold", "0")
    h.target.answer(b"+OK\r\n")
    assert h("MIGRATE", "127.0.0.1", "7000", "u", "0", "5000") == OK
    assert b"TIDELOG" not in h.target.received() and not h.mover.moves


def test_a_target_that_cannot_stage_is_remembered(h):
    fill(h, 60)
    h.target.answer(b"-ERR unknown command 'TIDELOG.STAGE', with args beginning with: 'HELLO' \r\n"
                    b"+OK\r\n+OK\r\n")
    assert h("MIGRATE", "127.0.0.1", "7000", "s", "0", "5000") == OK
    fill(h, 60)
    h.target.received()
    h.target.answer(b"+OK\r\n")
    assert h("MIGRATE", "127.0.0.1", "7000", "s", "0", "5000") == OK
    assert b"HELLO" not in h.target.received()  # asked once per connection
    assert not h.mover.moves


def test_the_bare_engine_keeps_to_dump():
    h = Harness()
    assert h.engine.mover.available is False
    target = Target()
    h.engine.migrate_sockets = MigrateSockets(connect=target)
    h.ok("CONFIG", "SET", "migrate-stream-chunk-threshold", "50")
    fill(h, 60)
    h.engine.migrate_sockets.get(b"127.0.0.1", b"7000", 5.0, h.clock.monotonic(),
                                 h.engine.config)
    target.answer(b"+OK\r\n+OK\r\n")
    assert h("MIGRATE", "127.0.0.1", "7000", "s", "0", "5000") == OK
    sent = target.received()
    assert b"RESTORE" in sent and b"TIDELOG" not in sent
    assert target.far is not None
    target.far.close()


def test_a_client_gone_while_parked_gets_nothing_the_move_still_ends(h):
    fill(h, 100)
    h.take_effects()
    move = park(h)
    h.engine.client_closed(h.owner)
    run(move, Staging())
    move.finish()
    assert h.owner.inbox == []                  # the reply goes nowhere
    assert h("EXISTS", "s") == 0 and h.take_effects() == [[b"DEL", b"s"]]
    assert not h.engine.moving


def test_copy_keeps_the_stream_and_propagates_nothing(h):
    fill(h, 100)
    h.take_effects()
    move = park(h, "s", "COPY")
    staging = Staging()
    run(move, staging)
    move.finish()
    assert h.owner.inbox == [OK] and staging.stager.stream is not None
    assert h(b"XLEN", "s") == 100 and h.take_effects() == []


def test_the_moved_stream_is_identical_on_a_target_engine(h):
    fill(h, 500)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "alice", "COUNT", "200", "STREAMS", "s", ">")
    h.ok("XREADGROUP", "GROUP", "g", "bob", "COUNT", "100", "STREAMS", "s", ">")
    h.ok("XACK", "s", "g", "3-1", "150-1")
    before = h.ok("XINFO", "STREAM", "s", "FULL"), h.ok("DUMP", "s")
    h.ok("PEXPIRE", "s", "100000")
    move = park(h)
    target = TargetEngine()
    target.h.clock.set_ms(h.clock.now_ms())
    run(move, target)
    move.finish()
    assert h.owner.inbox == [OK]
    t = target.h
    assert (t.ok("XINFO", "STREAM", "s", "FULL"), t.ok("DUMP", "s")) == before
    assert 0 < t("PTTL", "s") <= 100000


def test_in_cluster_mode_a_write_to_the_key_in_flight_gets_tryagain(h):
    h.engine.config.set("cluster-enabled", "yes", at_startup=True)
    me = Node(b"m" * 40, MYSELF | MASTER, ip=b"127.0.0.1", port=7000)
    other = Node(b"o" * 40, MASTER, ip=b"127.0.0.1", port=7001)
    topology = Topology(me)
    topology.add_node(other)
    for slot in range(16384):
        topology.assign(slot, me)
    topology.state_ok = True
    h.engine.set_slot_router(Router(topology))
    key = b"s{7}"
    fill(h, 100, key=key)
    topology.migrating_to[key_slot(key)] = other
    move = park(h, key)
    assert h.err("XADD", key, "*", "f", "v") == TRYAGAIN
    assert h(b"XLEN", key) == 100
    dialogue = run(move, Staging())
    assert dialogue[1][0] == b"TIDELOG.STAGE" and dialogue[1][3] == key
    move.finish()
    assert h.owner.inbox == [OK]
    # gone from here, the slot still migrating: a write is asked elsewhere
    assert h.err("XADD", key, "*", "f", "v").startswith(b"ASK ")
