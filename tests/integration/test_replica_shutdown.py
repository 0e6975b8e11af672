"""A Tidelog replica and its Tidelog primary stopped by SIGTERM at the same
moment: both must exit.  The replica's link used to catch the end of its
connection (the primary closing) in the same turn as its own cancellation,
lose the cancellation, and reconnect once a second for ever after the
server had said "bye bye", no longer listening and deaf to signals.

Real processes, twenty rounds in one test; every wait is bounded and the
``processes`` fixture kills whatever is left (``kill -9``) however the test
ends."""

from __future__ import annotations

import signal

import pytest
import redis

from tests.support.redis_oracle import free_port
from tests.support.waits import wait_until

ROUNDS = 20
EXIT_TIMEOUT = 20.0


@pytest.mark.slow
def test_primary_and_replica_stopped_together(processes, tmp_path) -> None:
    for round in range(ROUNDS):
        primary_port, replica_port = free_port(), free_port()
        dirs = [tmp_path / f"{round}-{name}" for name in ("primary", "replica")]
        for d in dirs:
            d.mkdir()
        # Both start at once (the replica retries its link until the primary listens).
        primary = processes.tidelog(["--port", str(primary_port), "--dir", str(dirs[0]),
                                     "--save", ""], port=primary_port, ready=False)
        replica = processes.tidelog(["--port", str(replica_port), "--dir", str(dirs[1]),
                                     "--save", "", "--replicaof", "127.0.0.1",
                                     str(primary_port)], port=replica_port, ready=False)
        primary.wait_ready()
        replica.wait_ready()
        with redis.Redis(port=primary_port, socket_timeout=10) as p, \
                redis.Redis(port=replica_port, socket_timeout=10, decode_responses=True) as r:
            p.xadd("s", {"round": round})
            wait_until(lambda: r.info("replication")["master_link_status"] == "up", 30)
            wait_until(lambda: r.xlen("s") == 1, 30)
        primary.proc.send_signal(signal.SIGTERM)
        replica.proc.send_signal(signal.SIGTERM)
        # wait() fails the test (after kill -9) when a process outlives the timeout.
        assert replica.wait(EXIT_TIMEOUT) == 0, f"round {round}:\n{replica.stdout}"
        assert primary.wait(EXIT_TIMEOUT) == 0, f"round {round}:\n{primary.stdout}"
        assert "bye bye" in replica.stdout
