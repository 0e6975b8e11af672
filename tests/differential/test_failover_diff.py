"""FAILOVER's replies compared with redis-server 7.0.15 (it has had FAILOVER
since 6.2): every check that answers before a failover starts, without
replicas and with one replica attached to each server (a redis-server
replica of each).  Page: https://redis.io/commands/failover."""

from __future__ import annotations

import pytest
import redis

from tests.differential.conftest import Differ
from tests.integration.test_replication import start_tidelog_replica
from tests.support.rawclient import RawClient
from tests.support.redis_oracle import free_port
from tests.support.waits import wait_until

pytestmark = pytest.mark.differential

WITHOUT_REPLICAS = [
    ["FAILOVER"], ["FAILOVER", "ABORT"], ["failover", "abort"], ["FAILOVER", "ABORT", "ABORT"],
    ["FAILOVER", "TO", "127.0.0.1", "1"], ["FAILOVER", "FORCE"],
    ["FAILOVER", "TIMEOUT", "10", "FORCE"], ["FAILOVER", "TO", "127.0.0.1", "1", "FORCE"],
    ["FAILOVER", "TIMEOUT", "0"], ["FAILOVER", "TIMEOUT", "-1"], ["FAILOVER", "TIMEOUT", "x"],
    ["FAILOVER", "TIMEOUT", "10", "TIMEOUT", "0"], ["FAILOVER", "TIMEOUT"],
    ["FAILOVER", "TO", "x", "y"], ["FAILOVER", "TO", "127.0.0.1"], ["FAILOVER", "foo"],
    ["FAILOVER", "ABORT", "TIMEOUT", "5"], ["FAILOVER", "ABORT", "TO", "1", "2"],
    ["FAILOVER", "ABORT", "FORCE"], ["FAILOVER", "TIMEOUT", "5", "TIMEOUT", "6"],
    ["FAILOVER", "TO", "a", "1", "TO", "b", "2"], ["FAILOVER", "FORCE", "FORCE"],
    ["FAILOVER", "TO", "a", "1", "TIMEOUT", "99999999999999999999"],
    ["PSYNC", "not-my-id", "1", "FAILOVER"], ["COMMAND", "INFO", "failover"],
]

WITH_A_REPLICA = [
    ["FAILOVER", "FORCE"], ["FAILOVER", "TIMEOUT", "10", "FORCE"],
    ["FAILOVER", "TO", "127.0.0.1", "1", "FORCE"], ["FAILOVER", "TO", "127.0.0.1", "1"],
    ["FAILOVER", "TO", "10.0.0.1", "6379", "TIMEOUT", "10"], ["FAILOVER", "ABORT"],
    ["FAILOVER", "TIMEOUT", "0"],
]


def test_without_replicas(differ):
    differ.check_all(WITHOUT_REPLICAS)


def test_with_a_replica(processes, tmp_path):
    """A Tidelog replica of a Tidelog primary, a redis-server replica of a
    redis-server primary (both primaries private to this test, so the shared
    servers of the other tests keep no replication history); then the
    replicas themselves are compared too."""
    port = free_port()
    data = tmp_path / "primary"
    data.mkdir()
    processes.tidelog(["--port", str(port), "--dir", str(data), "--save", ""], port=port)
    oracle = processes.redis()
    ours = start_tidelog_replica(processes, tmp_path, port)[0]
    theirs = processes.redis("--replicaof", "127.0.0.1", str(oracle.port))
    client = redis.Redis(port=theirs.port, decode_responses=True, socket_timeout=30)
    wait_until(lambda: client.info("replication")["master_link_status"] == "up", timeout=30)
    primaries = Differ(port, oracle.port)
    try:
        primaries.check_all(WITH_A_REPLICA)
    finally:
        primaries.close()
    with RawClient(ours.port) as a, RawClient(theirs.port) as b:
        for argv in (["FAILOVER"], ["FAILOVER", "FORCE"], ["FAILOVER", "ABORT"],
                     ["PSYNC", "not-my-id", "1", "FAILOVER"]):
            assert a.call(*argv) == b.call(*argv), argv
