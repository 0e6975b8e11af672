"""The CLUSTER subcommands of a tidelog-server started with ``cluster-enabled
yes``, from redis-py (sync and asyncio, RESP2 and RESP3), and against a
redis-server 7.0.15 node started the same way: the same replies once the node
ids, ports and times are blanked.  (These need cluster mode to start: they
skip, naming the missing modules, until it does.)"""

from __future__ import annotations

import asyncio
import re
import time

import pytest
import redis
import redis.asyncio

from tests.support.cluster import WAIT_S, ClusterNodes, require_cluster_mode
from tests.support.rawclient import RawClient


@pytest.fixture
def node(processes, tmp_path):
    require_cluster_mode()
    return ClusterNodes(processes, tmp_path).tidelog()


def _wait_ok(client) -> None:
    deadline = time.monotonic() + WAIT_S
    while "cluster_state:ok" not in str(client.execute_command("CLUSTER", "INFO")):
        assert time.monotonic() < deadline, "cluster_state never became ok"
        time.sleep(0.05)


@pytest.mark.parametrize("protocol", [2, 3])
def test_one_node_from_redis_py(node, protocol):
    c = redis.Redis(port=node.port, protocol=protocol, decode_responses=True)
    myid = c.execute_command("CLUSTER", "MYID")
    assert re.fullmatch(r"[0-9a-f]{40}", myid)
    assert c.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383") in (True, "OK")
    _wait_ok(c)
    info = c.cluster("info")
    assert info["cluster_state"] == "ok" and int(info["cluster_slots_assigned"]) == 16384
    nodes = c.cluster("nodes")
    assert any(n["node_id"] == myid for n in nodes.values())
    slots = c.execute_command("CLUSTER", "SLOTS")
    assert [s[:2] for s in slots] == [[0, 16383]] and slots[0][2][1] == node.port
    assert c.cluster("keyslot", "foo") == 12182
    c.set("foo", "1")
    assert c.cluster("countkeysinslot", 12182) == 1
    assert c.execute_command("CLUSTER", "GETKEYSINSLOT", 12182, 10) == ["foo"]
    shards = c.execute_command("CLUSTER", "SHARDS")
    assert len(shards) == 1
    with pytest.raises(redis.ResponseError, match="Slot 5 is already busy"):
        c.execute_command("CLUSTER", "ADDSLOTS", "5")
    c.close()


def test_one_node_from_asyncio(node):
    async def run() -> None:
        c = redis.asyncio.Redis(port=node.port, protocol=3)
        assert (await c.execute_command("CLUSTER", "MYID")) == \
            (node.workdir / "nodes.conf").read_text().split("myself")[0].split()[-2].encode()
        assert await c.execute_command("CLUSTER", "BUMPEPOCH") in (b"BUMPED 1", "BUMPED 1")
        assert await c.execute_command("CLUSTER", "SAVECONFIG")
        with pytest.raises(redis.ResponseError, match="Invalid or out of range slot"):
            await c.execute_command("CLUSTER", "DELSLOTS", "x")
        await c.aclose()

    asyncio.run(run())


# -- the same single node, Tidelog's and redis-server's ---------------------------------------
_IDS = re.compile(rb"[0-9a-f]{40}")
_PORTS = re.compile(rb":\d+@\d+")
_LENGTHS = re.compile(rb"^([$=])\d+\r\n", re.MULTILINE)


def _blank(reply: bytes, ports: tuple[int, ...]) -> bytes:
    """Ids, ports, times and string lengths blanked, and what the state
    machine decides on its own schedule (cluster_state, cluster_size)."""
    reply = re.sub(rb"cluster_(state|size):\w+", rb"cluster_\1:?", reply)
    reply = _IDS.sub(b"<id>", reply)
    reply = _PORTS.sub(b":<port>@<bus>", reply)
    reply = re.sub(rb"(create-time\r\n):\d+", rb"\1:<t>", reply)
    for port in ports:
        reply = reply.replace(b":%d\r\n" % port, b":<port>\r\n")
    return _LENGTHS.sub(rb"\1?\r\n", reply)


def test_the_same_as_a_redis_server_node(processes, tmp_path):
    require_cluster_mode()
    nodes = ClusterNodes(processes, tmp_path)
    ours_node, theirs_node = nodes.tidelog(), nodes.redis()
    ours, theirs = RawClient(ours_node.port), RawClient(theirs_node.port)
    ports = (ours_node.port, theirs_node.port)

    def check(*argv: str) -> None:
        a, b = ours.call(*argv), theirs.call(*argv)
        assert _blank(a, ports) == _blank(b, ports), (argv, a, b)

    for argv in (["CLUSTER", "INFO"], ["CLUSTER", "NODES"], ["CLUSTER", "SLOTS"],
                 ["CLUSTER", "SHARDS"], ["CLUSTER", "LINKS"], ["CLUSTER", "HELP"],
                 ["CLUSTER", "ADDSLOTSRANGE", "0", "16383"], ["CLUSTER", "SETSLOT", "1", "STABLE"],
                 ["CLUSTER", "SET-CONFIG-EPOCH", "1"], ["CLUSTER", "BUMPEPOCH"],
                 ["CLUSTER", "SLOTS"], ["CLUSTER", "NODES"], ["CLUSTER", "COUNTKEYSINSLOT", "1"],
                 ["CLUSTER", "MEET", "x", "1"], ["CLUSTER", "FORGET", "a" * 40]):
        check(*argv)
    ours.close()
    theirs.close()


def test_hello_says_cluster_mode_as_a_redis_server_node_does(processes, tmp_path):
    require_cluster_mode()
    nodes = ClusterNodes(processes, tmp_path)
    modes = []
    for node in (nodes.tidelog(), nodes.redis()):
        c = redis.Redis(port=node.port, protocol=3)
        modes.append(c.execute_command("HELLO", "3")[b"mode"])
        c.close()
    assert modes == [b"cluster", b"cluster"]
