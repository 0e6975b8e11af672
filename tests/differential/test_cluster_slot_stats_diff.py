"""CLUSTER SLOT-STATS against valkey-server 9.1 (the command is Valkey 8.0's
and Redis 8.2's; redis-server 7.0.15 does not have it): a one-node cluster of
each, the same slots and keys, the same commands sent, the raw replies
compared byte for byte: argument errors, SLOTSRANGE and ORDERBY with
key-count in RESP2 and RESP3, and with cluster-slot-stats-enabled the bytes
in and out each slot was charged (cpu-usec, a measured time, is blanked),
for plain calls, errors, a blocked and served call, SPUBLISH to a subscriber,
a transaction's requests, a script, a refused call when the cluster is down,
and a slot changing owner."""

from __future__ import annotations

import re
import time

import pytest

from tests.support.cluster import WAIT_S, ClusterNodes, require_cluster_mode, valkey_server
from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential
if valkey_server() is None:
    pytest.skip("valkey-server is not installed", allow_module_level=True)

# Keys of slots 0, 1, 2 and 5.
K0, K1, K2, K5 = "k596", "k37999", "k2603", "k12912"

_CPU = re.compile(rb"(\$8\r\ncpu-usec\r\n):\d+\r\n")


def _blank_cpu(raw: bytes) -> bytes:
    return _CPU.sub(rb"\1:N\r\n", raw)


def _wait_state(client: RawClient, state: bytes) -> None:
    deadline = time.monotonic() + WAIT_S
    while b"cluster_state:" + state not in client.call("CLUSTER", "INFO"):
        assert time.monotonic() < deadline, f"cluster_state never became {state!r}"
        time.sleep(0.05)


class Pair:
    """A valkey-server node and a Tidelog node serving the same slots."""

    def __init__(self, theirs: int, ours: int) -> None:
        self.ports = (theirs, ours)
        self.clients = (RawClient(theirs), RawClient(ours))

    def both(self, *argv) -> tuple[bytes, bytes]:
        theirs, ours = (c.call(*argv) for c in self.clients)
        return theirs, ours

    def same(self, *argv) -> bytes:
        theirs, ours = self.both(*argv)
        assert _blank_cpu(ours) == _blank_cpu(theirs), argv
        return ours

    def extra(self) -> tuple[RawClient, RawClient]:
        return RawClient(self.ports[0]), RawClient(self.ports[1])

    def close(self) -> None:
        for c in self.clients:
            c.close()


@pytest.fixture
def pair(processes, tmp_path):
    require_cluster_mode()
    nodes = ClusterNodes(processes, tmp_path)
    valkey, tidelog = nodes.valkey(), nodes.tidelog()
    p = Pair(valkey.port, tidelog.port)
    for c in p.clients:
        assert c.call("CLUSTER", "ADDSLOTSRANGE", 0, 16383) == b"+OK\r\n"
    for c in p.clients:
        _wait_state(c, b"ok")
    yield p
    p.close()


ERRORS = [
    ["SLOTSRANGE"], ["ORDERBY"], ["SLOTSRANGE", 1], ["SLOTSRANGE", 1, 2, 3], ["FOO", 1, 2],
    ["slotsrange", 1], ["SLOTSRANGE", 5, 1], ["SLOTSRANGE", -1, 2], ["SLOTSRANGE", 0, 16384],
    ["SLOTSRANGE", "a", 2], ["SLOTSRANGE", 1, "x"], ["SLOTSRANGE", "x", 99999],
    ["ORDERBY", "foo"], ["ORDERBY", "cpu-usec"], ["ORDERBY", "network-bytes-in"],
    ["ORDERBY", "memory-bytes"], ["ORDERBY", "foo", "LIMIT", 0],
    ["ORDERBY", "key-count", "LIMIT"], ["ORDERBY", "key-count", "LIMIT", 0],
    ["ORDERBY", "key-count", "LIMIT", 16385], ["ORDERBY", "key-count", "LIMIT", -1],
    ["ORDERBY", "key-count", "LIMIT", "x"], ["ORDERBY", "key-count", "LIMIT", 1, "LIMIT", 0],
    ["ORDERBY", "key-count", "LIMIT", 0, "LIMIT", 1], ["ORDERBY", "key-count", "LIMIT", 2, "LIMIT", 3],
    ["ORDERBY", "key-count", "LIMIT", 1, "LIMIT"], ["ORDERBY", "key-count", "ASC", "DESC"],
    ["ORDERBY", "key-count", "asc", "asc"], ["ORDERBY", "key-count", "ASC", "LIMIT"],
    ["ORDERBY", "key-count", "foo"], ["ORDERBY", "key-count", "LIMIT", 2, "foo"],
    ["ORDERBY", "key-count", "LIMIT", 1, "ASC", "DESC"],
]

READS = [
    ["SLOTSRANGE", 0, 6], ["SLOTSRANGE", 2, 2], ["SLOTSRANGE", 16383, 16383],
    ["ORDERBY", "key-count", "LIMIT", 5], ["ORDERBY", "KEY-COUNT", "LIMIT", 5, "ASC"],
    ["ORDERBY", "key-count", "DESC", "LIMIT", 3], ["ORDERBY", "key-count", "LIMIT", 1],
]


def _keys(p: Pair) -> None:
    for key in (K0, f"{{{K1}}}a", f"{{{K1}}}b", f"{{{K2}}}a", f"{{{K2}}}b", f"{{{K2}}}c",
                f"{{{K5}}}x"):
        p.same("SET", key, "v")


def test_errors_and_key_count(pair):
    for args in ERRORS:
        reply = pair.same("CLUSTER", "SLOT-STATS", *args)
        assert reply.startswith(b"-"), args
    pair.same("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count")  # every slot: 16384 rows
    _keys(pair)
    for args in READS:
        pair.same("CLUSTER", "SLOT-STATS", *args)
    pair.same("COMMAND", "INFO", "CLUSTER|SLOT-STATS")  # (RESP2: RESP3's differs for all)
    for c in pair.clients:
        assert c.call("HELLO", 3).startswith(b"%")
    for args in READS:
        pair.same("CLUSTER", "SLOT-STATS", *args)


def _stats(p: Pair, first: int = 0, last: int = 5) -> bytes:
    return p.same("CLUSTER", "SLOT-STATS", "SLOTSRANGE", first, last)


def test_enabled_counts(pair):
    pair.same("CONFIG", "SET", "cluster-slot-stats-enabled", "yes")
    pair.same("CONFIG", "GET", "cluster-slot-stats-enabled")
    for args in ERRORS:
        pair.same("CLUSTER", "SLOT-STATS", *args)
    pair.same("CONFIG", "RESETSTAT")
    _stats(pair)
    commands = [
        ["SET", K0, "hello"], ["GET", K0], ["GET", K1], ["INCR", K0], ["LPUSH", K0, "x"],
        ["APPEND", K0, "x" * 300], ["STRLEN", K0], ["MSET", f"{{{K2}}}a", 1, f"{{{K2}}}b", 2],
        ["MGET", f"{{{K2}}}a", f"{{{K2}}}b", f"{{{K2}}}z"], ["HSET", K5, "f", "v", "g", "w"],
        ["HGETALL", K5], ["DEL", K1], ["EXPIRE", K0, 100], ["GET", K0, "extra"],
        ["MGET", K0, K1], ["PING"], ["ECHO", "x"], ["XADD", K1, "1-1", "f", "v"],
        ["XRANGE", K1, "-", "+"], ["ZADD", K2, 1, "a", 2, "b"], ["ZRANGE", K2, 0, -1, "WITHSCORES"],
    ]
    for argv in commands:
        pair.same(*argv)
    _stats(pair)
    for metric in ("network-bytes-in", "network-bytes-out"):
        for order in ("ASC", "DESC"):
            pair.same("CLUSTER", "SLOT-STATS", "ORDERBY", metric, "LIMIT", 6, order)
    for c in pair.clients:
        assert c.call("HELLO", 3).startswith(b"%")
    for argv in commands:
        pair.same(*argv)
    _stats(pair)
    # ORDERBY cpu-usec: the four slots with calls first, in both (their
    # times, and so their order, are each server's own)
    theirs, ours = pair.both("CLUSTER", "SLOT-STATS", "ORDERBY", "cpu-usec", "LIMIT", 4)
    for raw in (theirs, ours):
        assert sorted(int(s) for s in re.findall(rb"\*2\r\n:(\d+)\r\n%", raw)) == [0, 1, 2, 5]
    pair.same("CONFIG", "RESETSTAT")
    _stats(pair)


def test_blocked_pubsub_script_and_refused(pair):
    pair.same("CONFIG", "SET", "cluster-slot-stats-enabled", "yes")
    pair.same("SET", K0, "a")
    pair.same("CONFIG", "RESETSTAT")
    others = pair.extra()
    try:
        # BLPOP blocks: nothing counted until served
        for c in others:
            c.send_raw(b"*3\r\n$5\r\nBLPOP\r\n$6\r\nk37999\r\n$1\r\n0\r\n")
        time.sleep(0.2)
        _stats(pair, 1, 1)
        pair.same("RPUSH", K1, "v")
        served = [c.read_reply() for c in others]
        assert served[0] == served[1]
        _stats(pair, 1, 1)
        # a subscriber of a shard channel: SPUBLISH's message to it counts too
        assert others[0].call("SSUBSCRIBE", K0) == others[1].call("SSUBSCRIBE", K0)
        pair.same("SPUBLISH", K0, "hello")
        assert others[0].read_reply() == others[1].read_reply()
        _stats(pair, 0, 0)
    finally:
        for c in others:
            c.close()
    # a transaction's requests (its replies Valkey counts its own way: not compared)
    pair.same("CONFIG", "RESETSTAT")
    for argv in (["MULTI"], ["GET", K0], ["PING"], ["SET", K0, "b"], ["EXEC"], ["MULTI"],
                 ["GET", K0], ["DISCARD"]):
        pair.same(*argv)
    rows = [c.call("CLUSTER", "SLOT-STATS", "SLOTSRANGE", 0, 0) for c in pair.clients]
    bytes_in = [re.search(rb"network-bytes-in\r\n:(\d+)", r).group(1) for r in rows]
    assert bytes_in[0] == bytes_in[1] == b"%d" % (15 + 23 + 30 + 14 + 23)
    pair.same("CONFIG", "RESETSTAT")
    pair.same("EVAL", "return redis.call('get', KEYS[1])", 1, K0)
    _stats(pair, 0, 0)
    pair.same("CONFIG", "RESETSTAT")
    # the cluster down (slots 6-16383 given up): commands refused, their requests counted
    pair.same("CLUSTER", "DELSLOTSRANGE", 6, 16383)
    for c in pair.clients:
        _wait_state(c, b"fail")
    pair.same("GET", K0)
    pair.same("SET", K5, "x")
    _stats(pair, 0, 16383)
    pair.same("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count")
    pair.same("CLUSTER", "SLOT-STATS", "ORDERBY", "network-bytes-in", "ASC")
    # a slot changing owner starts again
    pair.same("CLUSTER", "DELSLOTS", 0)
    pair.same("CLUSTER", "SLOT-STATS", "SLOTSRANGE", 0, 0)
    pair.same("CLUSTER", "ADDSLOTS", 0)
    _stats(pair, 0, 5)


def _wait_replica_online(master: RawClient) -> None:
    deadline = time.monotonic() + WAIT_S
    while b"state=online" not in master.call("INFO", "replication"):
        assert time.monotonic() < deadline, "the replica never came online"
        time.sleep(0.05)


def _offset(client: RawClient, field: bytes) -> int:
    info = client.call("INFO", "replication")
    return int(re.search(field + rb":(\d+)", info).group(1))


def test_replication_bytes(processes, tmp_path):
    """A master with a replica: a write's bytes in the replication stream
    are the slot's network-bytes-out on the master, and the replica charges
    each command of the stream it applies (its request and time) to its
    slot."""
    require_cluster_mode()
    nodes = ClusterNodes(processes, tmp_path)
    masters, replicas = [], []
    for start in (nodes.valkey, nodes.tidelog):
        master, replica = start(), start()
        m, r = RawClient(master.port), RawClient(replica.port)
        assert m.call("CLUSTER", "ADDSLOTSRANGE", 0, 16383) == b"+OK\r\n"
        assert r.call("CLUSTER", "MEET", "127.0.0.1", master.port) == b"+OK\r\n"
        myid = m.call("CLUSTER", "MYID").split(b"\r\n")[1]
        deadline = time.monotonic() + WAIT_S
        while r.call("CLUSTER", "REPLICATE", myid) != b"+OK\r\n":
            assert time.monotonic() < deadline, "the replica never knew its master"
            time.sleep(0.1)
        _wait_state(m, b"ok")
        _wait_replica_online(m)
        r.close()
        m.close()
        masters.append(master.port)
        replicas.append(replica.port)
    p, q = Pair(*masters), Pair(*replicas)
    for x in (p, q):
        x.same("CONFIG", "SET", "cluster-slot-stats-enabled", "yes")
    p.same("SET", K0, "first")  # (the stream's SELECT goes with the first write)
    for x in (p, q):
        x.same("CONFIG", "RESETSTAT")
    for argv in (["SET", K0, "abc"], ["GET", K0], ["APPEND", K0, "x" * 40], ["DEL", K0],
                 ["HSET", K5, "f", "v"], ["INCR", K1], ["INCR", K1]):
        p.same(*argv)
    _stats(p)
    for m, r in zip(p.clients, q.clients, strict=True):
        deadline = time.monotonic() + WAIT_S
        while _offset(r, b"slave_repl_offset") < _offset(m, b"master_repl_offset"):
            assert time.monotonic() < deadline, "the replica never caught up"
            time.sleep(0.05)
    replica_rows = _stats(q)
    slot0_in = re.search(rb"network-bytes-in\r\n:(\d+)", replica_rows).group(1)  # (slot 0's)
    assert int(slot0_in) > 0
    p.close()
    q.close()
