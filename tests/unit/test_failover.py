"""FAILOVER's checks and its waiting phase on one engine (no sockets): a
client that did the replica handshake (REPLCONF, PSYNC) stands for the
replica; its REPLCONF ACKs move the failover on.  The hand-over itself
(connecting to the target) is in tests/integration/test_failover.py.
Page: https://redis.io/commands/failover."""

from __future__ import annotations

import pytest

from tests.support.engine_harness import Harness
from tidelog.replication.primary import attach
from tidelog.resp.replies import OK


@pytest.fixture
def h():
    harness = Harness()
    attach(harness.engine)  # the replication layer, as the server attaches it
    return harness


def replica_of(h: Harness, port: int = 7777):
    client = h.new_client(addr="127.0.0.1:50000")
    h.ok("REPLCONF", "listening-port", port, client=client)
    h("PSYNC", "?", "-1", client=client)
    return client


def state(h: Harness) -> str:
    return attach(h.engine).failover.state if attach(h.engine).failover else "no-failover"


def test_checks_in_redis_order(h):
    assert h.err("FAILOVER") == b"ERR FAILOVER requires connected replicas."
    assert h.err("FAILOVER", "ABORT") == b"ERR No failover in progress."
    assert h.err("FAILOVER", "ABORT", "ABORT") == b"ERR syntax error"
    assert h.err("FAILOVER", "TIMEOUT", "0") == b"ERR FAILOVER timeout must be greater than 0"
    assert h.err("FAILOVER", "TIMEOUT", "x") == b"ERR value is not an integer or out of range"
    assert h.err("FAILOVER", "TO", "h", "p") == b"ERR value is not an integer or out of range"
    assert h.err("FAILOVER", "TO", "h") == b"ERR syntax error"
    assert h.err("FAILOVER", "FORCE", "FORCE") == b"ERR syntax error"
    assert h.err("FAILOVER", "FORCE") == b"ERR FAILOVER requires connected replicas."
    replica_of(h)
    assert h.err("FAILOVER", "FORCE") == (
        b"ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
    assert h.err("FAILOVER", "TO", "127.0.0.1", "7777", "FORCE") == (
        b"ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
    assert h.err("FAILOVER", "TO", "127.0.0.1", "7778") == (
        b"ERR FAILOVER target HOST and PORT is not a replica.")
    assert h.err("FAILOVER", "TO", "localhost", "7777") == (
        b"ERR FAILOVER target HOST and PORT is not a replica.")


def test_waiting_abort_and_timeout(h):
    replica = replica_of(h)
    h.ok("SET", "k", "v")  # the replica has not acknowledged it
    assert h.ok("FAILOVER", "TO", "127.0.0.1", "7777", "TIMEOUT", "1000") == OK
    assert state(h) == "waiting-for-sync"
    assert b"master_failover_state:waiting-for-sync" in h.ok("INFO", "replication").text
    assert h.err("FAILOVER") == b"ERR FAILOVER already in progress."
    assert h.err("REPLICAOF", "NO", "ONE") == b"ERR REPLICAOF not allowed while failing over."
    assert h.err("PSYNC", "?", "-1", client=h.new_client()) == (
        b"NOMASTERLINK Can't SYNC while failing over")
    assert h.engine.pause_mode == "write"  # writes are held back
    assert h.ok("FAILOVER", "ABORT") == OK
    assert state(h) == "no-failover" and h.engine.pause_mode is None

    assert h.ok("FAILOVER", "TIMEOUT", "500") == OK
    h("REPLCONF", "ACK", "1", client=replica)  # behind still
    assert state(h) == "waiting-for-sync"
    h.clock.advance(499)
    h.engine.replication.cron()
    assert state(h) == "waiting-for-sync"
    h.clock.advance(1)
    h.engine.replication.cron()
    assert state(h) == "no-failover" and h.engine.pause_mode is None
    assert attach(h.engine).upstream is None  # still a primary


def test_a_client_pause_from_before_goes_on_after(h):
    replica_of(h)
    h.ok("SET", "k", "v")
    h.ok("CLIENT", "PAUSE", "60000", "WRITE")
    assert h.ok("FAILOVER") == OK
    assert h.ok("FAILOVER", "ABORT") == OK
    assert h.engine.pause_mode == "write"  # the CLIENT PAUSE's, to its end
    h.clock.advance(60_001)
    h.engine.unpause()  # what its timer does (no event loop here)
    assert h.ok("FAILOVER") == OK
    assert h.ok("FAILOVER", "ABORT") == OK
    assert h.engine.pause_mode is None
