"""The CLUSTER subcommands in cluster mode, byte for byte against
redis-server 7.0.15 nodes started with ``cluster-enabled yes``.

Tidelog's side is an engine in cluster mode with the CLUSTER commands'
Control attached, in process (tests/support/cluster_control.py), over a node
table that mirrors the oracle's: the same node id, address and ports (read
from the oracle), so CLUSTER NODES, SLOTS and SHARDS compare unmasked.  What
the state machine decides (cluster_state, cluster_size, ping and pong times,
whether a link is up) is not Control's: those values are copied from the
oracle or blanked.  Arguments errors of every subcommand, slot assignment and
open slot sequences, the reading commands in RESP2 and RESP3, KEYSLOT,
COUNTKEYSINSLOT and GETKEYSINSLOT."""

from __future__ import annotations

import re
import time

import pytest

from tests.support.cluster_control import ClusterHarness
from tests.support.rawclient import RawClient, encode_command
from tests.support.redis_oracle import REDIS_SERVER, free_port
from tidelog.cluster.actions import Link
from tidelog.cluster.messages import MASTER, MYSELF, TYPE_NAMES
from tidelog.cluster.nodes import Node
from tidelog.cluster.texts import load_nodes_conf
from tidelog.resp.encoder import encode
from tidelog.resp.replies import Replies

pytestmark = pytest.mark.differential
if REDIS_SERVER is None:
    pytest.skip("redis-server is not installed", allow_module_level=True)

WAIT_S = 20.0
ID_A, ID_B = "a" * 40, "b" * 40  # (ids no node has: the "unknown node" paths)


def _bulk(raw: bytes) -> bytes:
    """The text of a bulk (RESP2) or verbatim (RESP3) string reply."""
    head, _, rest = raw.partition(b"\r\n")
    body = rest[:-2]
    return body[4:] if raw.startswith(b"=") else body


class Pair:
    """An oracle node and Tidelog's engine, mirroring each other's node table."""

    def __init__(self, srv) -> None:
        self.srv = srv
        self.theirs = RawClient(srv.port)
        myid = _bulk(self.theirs.call("CLUSTER", "MYID"))
        line = [ln for ln in _bulk(self.theirs.call("CLUSTER", "NODES")).splitlines()
                if b"myself" in ln][0].split()
        cport = int(line[1].split(b"@")[1])
        self.me = Node(myid, MYSELF | MASTER, ip=b"", port=srv.port, cport=cport)
        self.h = ClusterHarness(self.me)
        self.protocol = 2
        self.masks: list[tuple[re.Pattern[bytes], bytes]] = []

    @property
    def topology(self):
        return self.h.topology

    def resp3(self) -> None:
        assert self.theirs.call("HELLO", "3").startswith(b"%")
        self.protocol = 3

    def mask(self, pattern: bytes, replacement: bytes) -> None:
        self.masks.append((re.compile(pattern), replacement))

    def _norm(self, raw: bytes) -> bytes:
        """The reply with the masks applied (a string reply's length written
        again for the masked text)."""
        if not self.masks:
            return raw
        text = _bulk(raw) if raw[:1] in (b"$", b"=") else raw
        for pattern, replacement in self.masks:
            text = pattern.sub(replacement, text)
        return text if raw[:1] not in (b"$", b"=") else raw[:1] + b"%d\r\n" % len(text) + text

    def ours(self, *argv: str) -> bytes:
        return encode(self.h(*argv), self.protocol)

    def check(self, *argv: str) -> bytes:
        if [a.upper() for a in argv] == ["CLUSTER", "INFO"]:
            # the bus's figures are copied first; a message may go out
            # between the copy and the oracle's reply: a few tries
            for _ in range(5):
                self.copy_state()
                ours, theirs = self.ours(*argv), self.theirs.call(*argv)
                if ours == theirs:
                    break
        ours = self.ours(*argv)
        theirs = self.theirs.call(*argv)
        assert self._norm(ours) == self._norm(theirs), (
            f"\ncommand: {argv!r}\ntidelog: {ours!r}\nredis:   {theirs!r}")
        return ours

    def copy_state(self) -> None:
        """The state machine's cluster_state, cluster_size and counts of bus
        messages, from the oracle."""
        info = _bulk(self.theirs.call("CLUSTER", "INFO")).decode()
        fields = dict(line.split(":", 1) for line in info.split("\r\n") if line)
        self.topology.state_ok = fields["cluster_state"] == "ok"
        self.topology.size = int(fields["cluster_size"])
        state = self.h.state
        for kind, name in enumerate(TYPE_NAMES):
            state.stats_sent[kind] = int(fields.get(f"cluster_stats_messages_{name}_sent", 0))
            state.stats_received[kind] = int(
                fields.get(f"cluster_stats_messages_{name}_received", 0))

    def wait_state_ok(self) -> None:
        deadline = time.monotonic() + WAIT_S
        while b"cluster_state:ok" not in self.theirs.call("CLUSTER", "INFO"):
            assert time.monotonic() < deadline, "the oracle's cluster state never became ok"
            time.sleep(0.05)
        self.copy_state()


def _oracle(processes):
    # the bus port given: port + 10000 may be past 65535 or taken
    return processes.redis("--cluster-enabled", "yes", "--cluster-port", str(free_port()))


@pytest.fixture
def pair(processes):
    p = Pair(_oracle(processes))
    yield p
    p.theirs.close()


# -- errors -----------------------------------------------------------------------------
ARGUMENT_ERRORS = [
    # slots
    ["CLUSTER", "ADDSLOTS", "x"], ["CLUSTER", "ADDSLOTS", "-1"], ["CLUSTER", "ADDSLOTS", "16384"],
    ["CLUSTER", "ADDSLOTS", "01"], ["CLUSTER", "ADDSLOTS", "1", "1"],
    ["CLUSTER", "ADDSLOTS", "1", "2", "x", "2"], ["CLUSTER", "DELSLOTS", "5"],
    ["CLUSTER", "DELSLOTS", "x"], ["CLUSTER", "ADDSLOTSRANGE", "1", "2", "3"],
    ["CLUSTER", "ADDSLOTSRANGE", "5", "3"], ["CLUSTER", "ADDSLOTSRANGE", "1", "x"],
    ["CLUSTER", "ADDSLOTSRANGE", "1", "5", "3", "7"], ["CLUSTER", "ADDSLOTSRANGE", "1", "5", "5", "1"],
    ["CLUSTER", "DELSLOTSRANGE", "1", "5"], ["CLUSTER", "DELSLOTSRANGE", "1", "5", "7"],
    ["CLUSTER", "ADDSLOTS"], ["CLUSTER", "ADDSLOTSRANGE", "1"],
    # SETSLOT
    ["CLUSTER", "SETSLOT", "x", "STABLE"], ["CLUSTER", "SETSLOT", "1", "foo"],
    ["CLUSTER", "SETSLOT", "1", "STABLE", "x"], ["CLUSTER", "SETSLOT", "1", "NODE"],
    ["CLUSTER", "SETSLOT", "1", "MIGRATING", ID_A], ["CLUSTER", "SETSLOT", "1", "IMPORTING", ID_A],
    ["CLUSTER", "SETSLOT", "1", "IMPORTING", "abc"], ["CLUSTER", "SETSLOT", "1", "NODE", ID_A],
    ["CLUSTER", "SETSLOT", "1", "NODE", ID_A, "x"], ["CLUSTER", "SETSLOT", "16384", "foo"],
    ["CLUSTER", "SETSLOT", "1"],
    # MEET
    ["CLUSTER", "MEET", "1.2.3.4", "x"], ["CLUSTER", "MEET", "1.2.3.4", "1", "x"],
    ["CLUSTER", "MEET", "x", "y"], ["CLUSTER", "MEET", "bad", "1"], ["CLUSTER", "MEET", "1.2.3.4", "0"],
    ["CLUSTER", "MEET", "1.2.3.4", "65536"], ["CLUSTER", "MEET", "1.2.3.4", "-5"],
    ["CLUSTER", "MEET", "1.2.3.4", "1", "65536"], ["CLUSTER", "MEET", "1.2.3.4", "1", "0"],
    ["CLUSTER", "MEET", "1.2.3.4", "1", "2", "3"], ["CLUSTER", "MEET", "127.1", "1"],
    ["CLUSTER", "MEET", "::1::", "1"], ["CLUSTER", "MEET", "1.2.3.4"],
    # nodes
    ["CLUSTER", "FORGET", "abc"], ["CLUSTER", "FORGET", ID_A], ["CLUSTER", "REPLICATE", ID_A],
    ["CLUSTER", "REPLICAS", ID_A], ["CLUSTER", "SLAVES", "abc"],
    ["CLUSTER", "COUNT-FAILURE-REPORTS", ID_A], ["CLUSTER", "FORGET"],
    # FAILOVER, RESET, SET-CONFIG-EPOCH
    ["CLUSTER", "FAILOVER", "foo"], ["CLUSTER", "FAILOVER", ""], ["CLUSTER", "FAILOVER"],
    ["CLUSTER", "FAILOVER", "force"],
    ["CLUSTER", "FAILOVER", "TAKEOVER"], ["CLUSTER", "FAILOVER", "force", "x"],
    ["CLUSTER", "RESET", "foo"], ["CLUSTER", "RESET", ""], ["CLUSTER", "RESET", "soft", "x"],
    ["CLUSTER", "SET-CONFIG-EPOCH", "-1"], ["CLUSTER", "SET-CONFIG-EPOCH", "x"],
    ["CLUSTER", "SET-CONFIG-EPOCH", "99999999999999999999"],
    # keys
    ["CLUSTER", "COUNTKEYSINSLOT", "x"], ["CLUSTER", "COUNTKEYSINSLOT", "-1"],
    ["CLUSTER", "COUNTKEYSINSLOT", "16384"], ["CLUSTER", "GETKEYSINSLOT", "1", "-1"],
    ["CLUSTER", "GETKEYSINSLOT", "x", "1"], ["CLUSTER", "GETKEYSINSLOT", "1", "x"],
    ["CLUSTER", "GETKEYSINSLOT", "16384", "1"], ["CLUSTER", "GETKEYSINSLOT", "-1", "x"],
    ["CLUSTER", "KEYSLOT"], ["CLUSTER", "KEYSLOT", "a", "b"],
    # the others' arity, unknown subcommands
    ["CLUSTER", "INFO", "x"], ["CLUSTER", "NODES", "x"], ["CLUSTER", "MYID", "x"],
    ["CLUSTER", "SLOTS", "x"], ["CLUSTER", "SHARDS", "x"], ["CLUSTER", "LINKS", "x"],
    ["CLUSTER", "HELP", "x"], ["CLUSTER", "BUMPEPOCH", "x"], ["CLUSTER", "SAVECONFIG", "x"],
    ["CLUSTER", "FLUSHSLOTS", "x"], ["CLUSTER", "NOPE"], ["CLUSTER"],
]


def test_argument_errors(pair):
    for argv in ARGUMENT_ERRORS:
        assert pair.check(*argv).startswith(b"-"), argv


def test_help(pair):
    pair.check("CLUSTER", "HELP")
    pair.check("cluster", "help")


def test_keyslot(pair):
    for key in ("foo", "", "{user1000}.following", "{}x", "a{b", "{a}{b}", "\xff"):
        pair.check("CLUSTER", "KEYSLOT", key)


# -- one node: slots, and what the reading commands show ---------------------------------
def _read_all(pair: Pair) -> None:
    for argv in (("CLUSTER", "NODES"), ("CLUSTER", "SLOTS"), ("CLUSTER", "SHARDS"),
                 ("CLUSTER", "INFO"), ("CLUSTER", "LINKS"), ("CLUSTER", "MYID")):
        pair.check(*argv)


@pytest.mark.parametrize("protocol", [2, 3])
def test_slot_assignment(pair, protocol):
    if protocol == 3:
        pair.resp3()
    _read_all(pair)
    steps = [
        ["CLUSTER", "ADDSLOTS", "5", "1", "3"],
        ["CLUSTER", "ADDSLOTS", "2", "3"],  # 3 is busy: nothing added
        ["CLUSTER", "ADDSLOTSRANGE", "10", "20", "100", "16383"],
        ["CLUSTER", "ADDSLOTSRANGE", "6", "8", "8", "9"],  # 8 twice
        ["CLUSTER", "DELSLOTS", "15", "16383"],
        ["CLUSTER", "DELSLOTS", "16", "16"],
        ["CLUSTER", "DELSLOTSRANGE", "100", "200", "300", "300"],
        ["CLUSTER", "DELSLOTSRANGE", "250", "260", "250", "250"],
        ["CLUSTER", "ADDSLOTS", "0"],
    ]
    for argv in steps:
        pair.check(*argv)
        _read_all(pair)
    pair.check("CLUSTER", "FLUSHSLOTS")
    _read_all(pair)


def test_open_slots_on_one_node(pair):
    pair.check("CLUSTER", "ADDSLOTSRANGE", "0", "99")
    me = pair.me.name.decode()
    for argv in (["CLUSTER", "SETSLOT", "5", "MIGRATING", me],
                 ["CLUSTER", "SETSLOT", "200", "IMPORTING", me],
                 ["CLUSTER", "SETSLOT", "5", "IMPORTING", me],  # the owner: refused
                 ["CLUSTER", "SETSLOT", "200", "MIGRATING", me],  # not the owner: refused
                 ["CLUSTER", "SETSLOT", "7", "MIGRATING", me],
                 ["CLUSTER", "SETSLOT", "7", "IMPORTING", me]):  # not printed: migrating wins
        pair.check(*argv)
    pair.check("CLUSTER", "NODES")
    pair.check("CLUSTER", "SETSLOT", "5", "STABLE")
    pair.check("CLUSTER", "SETSLOT", "300", "STABLE")
    pair.check("CLUSTER", "NODES")
    # NODE myself while importing: the slot is ours, the import over, the epoch bumped
    pair.check("CLUSTER", "SETSLOT", "200", "NODE", me)
    pair.check("CLUSTER", "NODES")
    pair.check("CLUSTER", "INFO")
    pair.check("CLUSTER", "ADDSLOTS", "7")  # busy; 7 stays migrating
    pair.check("CLUSTER", "DELSLOTS", "7")
    pair.check("CLUSTER", "NODES")


def test_epochs(pair):
    pair.check("CLUSTER", "SET-CONFIG-EPOCH", "5")
    pair.check("CLUSTER", "SET-CONFIG-EPOCH", "6")  # already non-zero
    _read_all(pair)
    pair.check("CLUSTER", "BUMPEPOCH")  # the greatest already: STILL
    pair.check("CLUSTER", "INFO")


def test_bumpepoch_from_zero(pair):
    assert pair.check("CLUSTER", "BUMPEPOCH") == b"+BUMPED 1\r\n"
    pair.check("CLUSTER", "BUMPEPOCH")
    pair.check("CLUSTER", "SET-CONFIG-EPOCH", "3")
    pair.check("CLUSTER", "NODES")


def test_keys_in_slots(pair):
    pair.check("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    pair.wait_state_ok()
    for key in ("a", "{a}1", "{a}2", "b", "{user}x"):
        pair.check("SET", key, "1")
    for slot in ("15495", "3300", "0", "16383"):  # a's slot, b's, empty ones
        pair.check("CLUSTER", "COUNTKEYSINSLOT", slot)
    pair.check("CLUSTER", "GETKEYSINSLOT", "3300", "10")  # b's: one key
    pair.check("CLUSTER", "GETKEYSINSLOT", "15495", "0")
    pair.check("CLUSTER", "GETKEYSINSLOT", "0", "10")
    # three keys in a's slot: 7.0.15 lists the newest first, Redis 8 in its
    # hash table's order; the same keys
    ours, theirs = pair.ours("CLUSTER", "GETKEYSINSLOT", "15495", "10"), \
        pair.theirs.call("CLUSTER", "GETKEYSINSLOT", "15495", "10")
    assert sorted(ours.split(b"\r\n")) == sorted(theirs.split(b"\r\n"))
    assert pair.ours("CLUSTER", "GETKEYSINSLOT", "15495", "2").startswith(b"*2\r\n")
    # refusals while keys are held
    pair.check("CLUSTER", "FLUSHSLOTS")
    pair.check("CLUSTER", "RESET")
    pair.check("CLUSTER", "RESET", "HARD")
    pair.check("DEL", "a", "{a}1", "{a}2", "b", "{user}x")
    pair.check("CLUSTER", "COUNTKEYSINSLOT", "15495")


# -- two nodes: the oracle knows a second node ---------------------------------------------
@pytest.fixture
def two(processes):
    a, b = _oracle(processes), _oracle(processes)
    ca, cb = RawClient(a.port), RawClient(b.port)
    assert ca.call("CLUSTER", "SET-CONFIG-EPOCH", "1") == b"+OK\r\n"
    assert cb.call("CLUSTER", "SET-CONFIG-EPOCH", "2") == b"+OK\r\n"
    assert cb.call("CLUSTER", "ADDSLOTSRANGE", "1000", "1999") == b"+OK\r\n"
    bus_b = int(_bulk(cb.call("CLUSTER", "NODES")).split()[1].split(b"@")[1])
    assert ca.call("CLUSTER", "MEET", "127.0.0.1", str(b.port), str(bus_b)) == b"+OK\r\n"
    deadline = time.monotonic() + WAIT_S
    while True:
        views = [_bulk(c.call("CLUSTER", "NODES")) for c in (ca, cb)]
        if all(v.count(b" connected") == 2 and b"handshake" not in v for v in views):
            break
        assert time.monotonic() < deadline, f"the two nodes did not meet: {views}"
        time.sleep(0.05)
    cb.close()
    p = Pair(a)
    # Tidelog's table: the oracle's, as its nodes.conf would hold it
    text = _bulk(ca.call("CLUSTER", "NODES")).decode()
    info = _bulk(ca.call("CLUSTER", "INFO")).decode()
    epoch = re.search(r"cluster_current_epoch:(\d+)", info).group(1)
    loaded = load_nodes_conf(text + f"vars currentEpoch {epoch} lastVoteEpoch 0\n")
    p.h.topology.myself.ip = loaded.myself.ip
    for node in loaded.nodes.values():
        if node is not loaded.myself:
            # linked both ways, as the oracle is (the links are the shell's)
            node.link = Link(inbound=False, ctime=1, node=node)
            node.inbound_link = Link(inbound=True, ctime=2, node=node)
            p.h.topology.add_node(node)
            for first, last in loaded.slot_ranges(node):
                for slot in range(first, last + 1):
                    p.h.topology.assign(slot, node)
    # in the oracle's order (its hash table's), which NODES and SHARDS follow
    order = [line.split()[0].encode() for line in text.splitlines()]
    p.h.topology.nodes = {name: p.h.topology.nodes[name] for name in order}
    p.h.topology.current_epoch = loaded.current_epoch
    p.h.topology.myself.config_epoch = loaded.myself.config_epoch
    p.other = loaded.nodes[[n for n in loaded.nodes if n != loaded.myself.name][0]].name.decode()
    # another node's ping and pong times are the bus's
    p.mask(rb"(master|slave|fail\??) (-|[0-9a-f]{40}) \d+ \d+ ", rb"\1 \2 0 0 ")
    # a link's times and buffer sizes are the shell's
    p.mask(rb"(create-time|send-buffer-allocated|send-buffer-used)\r\n:\d+", rb"\1\r\n:0")
    yield p
    ca.close()
    p.theirs.close()


def test_two_nodes_reading(two):
    _read_all(two)
    two.check("CLUSTER", "REPLICAS", two.other)
    two.check("CLUSTER", "SLAVES", two.me.name.decode())
    two.check("CLUSTER", "COUNT-FAILURE-REPORTS", two.other)


def test_two_nodes_errors(two):
    other, me = two.other, two.me.name.decode()
    for argv in (["CLUSTER", "SET-CONFIG-EPOCH", "7"],  # another node known
                 ["CLUSTER", "FORGET", me],
                 ["CLUSTER", "REPLICATE", me],
                 ["CLUSTER", "SETSLOT", "1000", "IMPORTING", other],
                 ["CLUSTER", "SETSLOT", "1000", "MIGRATING", other],  # not mine
                 ["CLUSTER", "ADDSLOTS", "1000"],  # busy: the other node's
                 ["CLUSTER", "DELSLOTS", "1"]):
        two.check(*argv)


def test_two_nodes_open_slots(two):
    other, me = two.other, two.me.name.decode()
    two.check("CLUSTER", "ADDSLOTSRANGE", "0", "99")
    two.check("CLUSTER", "SETSLOT", "5", "MIGRATING", other)
    two.check("CLUSTER", "SETSLOT", "1001", "IMPORTING", other)
    two.check("CLUSTER", "NODES")
    # the slot handed over (no keys): the migration ends with it
    two.check("CLUSTER", "SETSLOT", "5", "NODE", other)
    two.check("CLUSTER", "NODES")
    two.check("CLUSTER", "SLOTS")
    two.check("CLUSTER", "SHARDS")
    two.check("CLUSTER", "SETSLOT", "1001", "STABLE")
    # slots given back to this node by hand
    two.check("CLUSTER", "SETSLOT", "5", "NODE", me)
    two.check("CLUSTER", "NODES")


def test_two_nodes_keys_and_forget(two):
    other = two.other
    two.check("CLUSTER", "ADDSLOTSRANGE", "0", "999", "2000", "16383")
    two.wait_state_ok()
    two.check("SET", "a", "1")  # slot 15495
    two.check("CLUSTER", "SETSLOT", "15495", "NODE", other)  # keys left: refused
    two.check("CLUSTER", "REPLICATE", other)  # slots and keys: refused
    two.check("CLUSTER", "SETSLOT", "15495", "MIGRATING", other)
    two.check("CLUSTER", "NODES")
    two.check("DEL", "a")
    two.check("CLUSTER", "SETSLOT", "15495", "NODE", other)
    two.check("CLUSTER", "NODES")  # the migration ended with the slot
    two.check("CLUSTER", "SLOTS")
    two.check("CLUSTER", "COUNT-FAILURE-REPORTS", other)
    two.check("CLUSTER", "FORGET", other)
    two.check("CLUSTER", "FORGET", other)  # unknown now
    two.check("CLUSTER", "NODES")
    two.check("CLUSTER", "SHARDS")


def test_two_nodes_replicate(two):
    other, me = two.other, two.me.name.decode()
    two.check("CLUSTER", "REPLICATE", other)
    two.check("CLUSTER", "NODES")  # a replica prints its master's epoch
    two.check("CLUSTER", "INFO")  # cluster_my_epoch: the master's
    two.check("CLUSTER", "REPLICAS", other)
    two.check("CLUSTER", "REPLICAS", me)  # not a master
    two.check("CLUSTER", "SETSLOT", "x", "STABLE")  # masters only, before the slot is read
    two.check("CLUSTER", "FORGET", other)  # my master
    two.check("CLUSTER", "REPLICATE", other)  # a replica may switch: fine again
    two.check("CLUSTER", "ADDSLOTS", "5")
    two.check("CLUSTER", "NODES")


def test_deleted_slots_unsubscribe_shard_channels(pair):
    pair.check("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    pair.wait_state_ok()
    theirs_sub = RawClient(pair.srv.port)
    ours_sub = pair.h.new_client()
    try:
        for argv in (["SSUBSCRIBE", "a", "{a}x"], ["SSUBSCRIBE", "b"], ["SUBSCRIBE", "c"]):
            reply = pair.h(*argv, client=ours_sub)
            items = reply.items if isinstance(reply, Replies) else [reply]
            theirs_sub.send_raw(encode_command(argv))
            assert b"".join(encode(item, 2) for item in items) == \
                b"".join(theirs_sub.read_reply() for _ in items)
        pair.check("CLUSTER", "DELSLOTS", "15495")  # a's slot
        pair.check("CLUSTER", "SETSLOT", "3300", "NODE", pair.me.name.decode())  # b's: stays
        ours = b"".join(encode(push, 2) for push in ours_sub.inbox)
        theirs = b"".join(theirs_sub.read_reply() for _ in ours_sub.inbox)
        assert ours == theirs
        assert ours.count(b"sunsubscribe") == 3
    finally:
        theirs_sub.close()
