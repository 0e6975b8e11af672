"""Cluster mode's connection commands on a server without cluster support,
byte for byte against redis-server 7.0.15: ASKING, READONLY and READWRITE
are refused, RESTORE-ASKING is RESTORE, and COMMAND INFO describes them as
Redis's table does; then, in cluster mode, the engine's redirections and
refusals against a single-node redis-server 7.0.15 cluster."""

from __future__ import annotations

import time

import pytest

from tests.support.engine_harness import Harness
from tests.support.rawclient import RawClient
from tests.support.redis_oracle import free_port
from tidelog.cluster.messages import MASTER, MYSELF
from tidelog.cluster.nodes import Node, Topology
from tidelog.cluster.routing import Router
from tidelog.resp.encoder import encode


@pytest.mark.parametrize("name", ["ASKING", "READONLY", "READWRITE"])
def test_refused_without_cluster_support(differ, name):
    assert differ.check(name) == b"-ERR This instance has cluster support disabled\r\n"
    differ.check(name, "extra")  # arity first


@pytest.mark.parametrize("name", ["asking", "readonly", "readwrite", "restore-asking"])
def test_command_info(differ, name):
    differ.check("COMMAND", "INFO", name)


@pytest.mark.parametrize("name", ["asking", "readonly", "readwrite"])
def test_command_docs(differ, name):
    differ.check("COMMAND", "DOCS", name)


def test_command_getkeys_restore_asking(differ):
    assert differ.check("COMMAND", "GETKEYS", "RESTORE-ASKING", "k", "0", "x") == \
        b"*1\r\n$1\r\nk\r\n"


def test_restore_asking_is_restore(differ):
    differ.check("SET", "src", "hello")
    differ.check("EXPIRE", "src", "100")
    raw = differ.ours.call("DUMP", "src")
    assert raw == differ.theirs.call("DUMP", "src")
    payload = raw.split(b"\r\n", 1)[1][:-2]  # the bulk string's bytes
    assert differ.check("RESTORE-ASKING", "k", "0", payload) == b"+OK\r\n"
    assert differ.check("GET", "k") == b"$5\r\nhello\r\n"
    differ.check("RESTORE-ASKING", "k", "0", payload)  # BUSYKEY
    differ.check("RESTORE-ASKING", "k", "0", "bad payload")
    differ.check("RESTORE-ASKING", "k")
    differ.check("SELECT", "1")
    differ.check("SELECT", "0")


# -- in cluster mode: a single-node redis-server 7.0.15 cluster is the oracle,
# Tidelog's engine in cluster mode (a router over a one-node Topology; the
# server's cluster start-up is not part of this) answers the same bytes.




class ClusterPair:
    """The oracle cluster node and an engine in cluster mode, one node owning
    what the oracle owns."""

    def __init__(self, port: int) -> None:
        self.theirs = RawClient(port)
        self.h = Harness()
        self.h.engine.config.set("cluster-enabled", "yes", at_startup=True)
        self.me = Node(b"m" * 40, MYSELF | MASTER, ip=b"127.0.0.1", port=port)
        self.topology = Topology(self.me)
        self.h.engine.set_slot_router(Router(self.topology))

    def check(self, *argv: str) -> bytes:
        ours = encode(self.h(*argv), 2)
        theirs = self.theirs.call(*argv)
        assert ours == theirs, (argv, ours, theirs)
        return ours

    def serve_every_slot(self) -> None:
        assert self.theirs.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383") == b"+OK\r\n"
        deadline = time.monotonic() + 20
        while b"cluster_state:ok" not in self.theirs.call("CLUSTER", "INFO"):
            assert time.monotonic() < deadline, "the oracle's cluster state never became ok"
            time.sleep(0.05)
        for slot in range(16384):
            self.topology.assign(slot, self.me)
        self.topology.state_ok = True


@pytest.fixture
def cluster_pair(processes):
    # the bus port given: port + 10000 may be past 65535 or taken
    srv = processes.redis("--cluster-enabled", "yes", "--cluster-port", str(free_port()))
    pair = ClusterPair(srv.port)
    yield pair
    pair.theirs.close()


def test_cluster_mode_before_slots_are_served(cluster_pair):
    c = cluster_pair
    assert c.check("GET", "k") == b"-CLUSTERDOWN Hash slot not served\r\n"
    c.check("MGET", "a", "b")
    c.check("SET", "{a}x", "1")
    c.check("SPUBLISH", "ch", "m")
    c.check("EVAL", "return 1", "2", "a", "b")
    c.check("PING")
    for name in ("ASKING", "READONLY", "READWRITE"):
        c.check(name)
    c.check("SELECT", "0")
    assert c.check("SELECT", "1") == b"-ERR SELECT is not allowed in cluster mode\r\n"
    c.check("SELECT", "x")
    c.check("INFO", "cluster")


def test_cluster_mode_with_every_slot_served(cluster_pair):
    c = cluster_pair
    c.serve_every_slot()
    assert c.check("MGET", "a", "b") == \
        b"-CROSSSLOT Keys in request don't hash to the same slot\r\n"
    c.check("SET", "{a}x", "1")
    c.check("MSET", "{a}1", "x", "{a}2", "y")
    c.check("MGET", "{a}1", "{a}2", "{a}x")
    c.check("COPY", "{a}1", "{a}3")
    c.check("COPY", "{a}1", "{a}4", "DB", "1")
    c.check("MOVE", "{a}1", "1")
    c.check("SWAPDB", "0", "1")
    c.check("SELECT", "1")
    c.check("EVAL", "return 1", "2", "a", "b")
    c.check("EVAL", "#!lua\nreturn 1", "2", "a", "b")
    c.check("EVAL", "return redis.call('get', 'b')", "1", "a")
    c.check("SPUBLISH", "ch", "m")
    c.check("MULTI")
    c.check("SET", "a", "1")
    c.check("SET", "b", "1")
    c.check("EXEC")
