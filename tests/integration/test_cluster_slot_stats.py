"""CLUSTER SLOT-STATS of a tidelog-server started with ``cluster-enabled yes``
(and ``cluster-slot-stats-enabled`` from its command line), from redis-py,
sync and asyncio, RESP2 and RESP3: the reply's shape as a client parses it
(RESP2: each slot's metrics a flat list; RESP3: a map), the option turned on
and off with CONFIG SET, CONFIG RESETSTAT."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
import redis.asyncio

from tests.support.cluster import WAIT_S, ClusterNodes, require_cluster_mode

K0, K1 = "k596", "k37999"  # slots 0 and 1
METRICS = ["key-count", "cpu-usec", "network-bytes-in", "network-bytes-out"]


@pytest.fixture
def node(processes, tmp_path):
    require_cluster_mode()
    n = ClusterNodes(processes, tmp_path).tidelog("--cluster-slot-stats-enabled", "yes")
    c = redis.Redis(port=n.port)
    assert c.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    deadline = time.monotonic() + WAIT_S
    while b"cluster_state:ok" not in c.execute_command("CLUSTER", "INFO"):
        assert time.monotonic() < deadline, "cluster_state never became ok"
        time.sleep(0.05)
    c.close()
    return n


def _metrics(protocol: int, row) -> dict:
    """A row's metrics as a dict, from RESP2's flat list or RESP3's map."""
    slot, metrics = row
    assert isinstance(slot, int)
    if protocol == 2:
        assert isinstance(metrics, list)
        return dict(zip(metrics[::2], metrics[1::2], strict=True))
    assert isinstance(metrics, dict)
    return metrics


@pytest.mark.parametrize("protocol", [2, 3])
def test_from_redis_py(node, protocol):
    c = redis.Redis(port=node.port, protocol=protocol, decode_responses=True)
    assert c.config_get("cluster-slot-stats-enabled") == {"cluster-slot-stats-enabled": "yes"}
    c.config_resetstat()
    c.set(K0, "hello")
    c.get(K0)
    c.set(f"{{{K1}}}a", "1")
    c.set(f"{{{K1}}}b", "1")
    rows = c.execute_command("CLUSTER", "SLOT-STATS", "SLOTSRANGE", 0, 2)
    assert [row[0] for row in rows] == [0, 1, 2]
    first = _metrics(protocol, rows[0])
    assert list(first) == METRICS
    assert first["key-count"] == 1
    assert first["network-bytes-in"] == 34 + 23  # SET k596 hello, GET k596: as sent
    assert first["network-bytes-out"] == len("+OK\r\n") + len("$5\r\nhello\r\n")
    assert _metrics(protocol, rows[2]) == dict.fromkeys(METRICS, 0)
    rows = c.execute_command("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "LIMIT", 3)
    assert [(row[0], _metrics(protocol, row)["key-count"]) for row in rows] == \
        [(1, 2), (0, 1), (2, 0)]
    c.config_set("cluster-slot-stats-enabled", "no")
    rows = c.execute_command("CLUSTER", "SLOT-STATS", "SLOTSRANGE", 0, 0)
    assert _metrics(protocol, rows[0]) == {"key-count": 1}
    with pytest.raises(redis.ResponseError, match="Unrecognized sort metric for ORDERBY"):
        c.execute_command("CLUSTER", "SLOT-STATS", "ORDERBY", "cpu-usec")
    c.config_set("cluster-slot-stats-enabled", "yes")
    c.config_resetstat()
    rows = c.execute_command("CLUSTER", "SLOT-STATS", "SLOTSRANGE", 0, 0)
    assert _metrics(protocol, rows[0]) == {**dict.fromkeys(METRICS, 0), "key-count": 1}
    with pytest.raises(redis.ResponseError, match="Start slot number 3 is greater than end"):
        c.execute_command("CLUSTER", "SLOT-STATS", "SLOTSRANGE", 3, 1)
    c.close()


def test_from_asyncio(node):
    async def run() -> None:
        c = redis.asyncio.Redis(port=node.port, protocol=3)
        try:
            await c.set(K1, "v")
            rows = await c.execute_command("CLUSTER", "SLOT-STATS", "ORDERBY",
                                           "network-bytes-in", "LIMIT", 1)
            assert rows[0][0] == 1 and rows[0][1][b"network-bytes-in"] == 32  # SET k37999 v
        finally:
            await c.aclose()

    asyncio.run(run())
