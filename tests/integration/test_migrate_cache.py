"""MIGRATE keeps its connection to a target for the next MIGRATE, as Redis
does (https://redis.io/docs/latest/commands/migrate/): the target, a real
redis-server, sees one client across several MIGRATEs (CLIENT LIST), SELECT
only when the destination database changes and AUTH every time it is given
(INFO commandstats); a target that closed the connection, or restarted,
between two MIGRATEs is reconnected to by the retry; the cron closes a
connection idle for more than 10 seconds; a silent target times out
without a retry; with ``tls-cluster yes`` the connection is TLS.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess

import pytest
import redis
import redis.asyncio

from tests.support.certs import OPENSSL, make_certs
from tests.support.processes import STARTED
from tests.support.redis_oracle import REDIS_SERVER, free_port, wait_for_port
from tests.support.waits import wait_until
from tidelog.commands.keys.migrate_sockets import CACHE_TTL_S
from tidelog.server.embed import EmbeddedServer

needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


@pytest.fixture
def target(processes):
    srv = processes.redis()
    client = redis.Redis(port=srv.port)
    yield srv, client
    client.close()


def calls(client: redis.Redis, name: str) -> int:
    return client.info("commandstats").get(f"cmdstat_{name}", {}).get("calls", 0)


def migrating_clients(client: redis.Redis) -> list[int]:
    """The ids of the target's clients other than the test's own."""
    me = client.client_id()
    return [int(c["id"]) for c in client.client_list() if int(c["id"]) != me]


def opened(srv: EmbeddedServer) -> int:
    return srv.call(lambda: srv.engine.migrate_sockets.opened)


@needs_redis
@pytest.mark.parametrize("protocol", [2, 3])
def test_one_connection_and_select_only_when_the_db_changes(tidelog, target, protocol):
    srv, dest = target
    r = redis.Redis(port=tidelog.port, protocol=protocol)
    try:
        before = opened(tidelog)
        r.mset({"a": "1", "b": "2", "c": "3", "d": "4"})
        assert r.migrate("127.0.0.1", srv.port, ["a"], 0, 5000) == b"OK"
        first = migrating_clients(dest)
        assert len(first) == 1
        assert r.migrate("127.0.0.1", srv.port, ["b"], 0, 5000) == b"OK"
        assert migrating_clients(dest) == first  # the same connection
        assert calls(dest, "select") == 1 and calls(dest, "restore") == 2
        assert r.migrate("127.0.0.1", srv.port, ["c"], 3, 5000) == b"OK"
        assert calls(dest, "select") == 2  # another database: SELECT again
        assert r.migrate("127.0.0.1", srv.port, ["d"], 3, 5000) == b"OK"
        assert calls(dest, "select") == 2
        assert migrating_clients(dest) == first
        assert opened(tidelog) == before + 1
        assert dest.get("a") == b"1" and dest.get("b") == b"2"
        dest.select(3)
        assert dest.mget("c", "d") == [b"3", b"4"]
    finally:
        r.close()


@needs_redis
def test_a_target_error_forgets_the_selected_db(tidelog, target):
    srv, dest = target
    r = redis.Redis(port=tidelog.port)
    try:
        r.mset({"a": "1", "b": "2"})
        dest.set("a", "there")
        assert r.migrate("127.0.0.1", srv.port, ["b"], 0, 5000) == b"OK"
        assert calls(dest, "select") == 1
        with pytest.raises(redis.ResponseError, match="Target instance replied with error: BUSYKEY"):
            r.migrate("127.0.0.1", srv.port, ["a"], 0, 5000)
        assert r.migrate("127.0.0.1", srv.port, ["a"], 0, 5000, replace=True) == b"OK"
        assert calls(dest, "select") == 2  # the error made the database unsure
        assert len(migrating_clients(dest)) == 1
    finally:
        r.close()


@needs_redis
def test_auth_is_sent_every_time(tidelog, processes):
    srv = processes.redis("--requirepass", "sesame")
    dest = redis.Redis(port=srv.port, password="sesame")
    r = redis.Redis(port=tidelog.port)
    try:
        r.mset({"a": "1", "b": "2"})
        auths = calls(dest, "auth")  # the test's own client's, if it sent one
        assert r.migrate("127.0.0.1", srv.port, ["a"], 0, 5000, auth="sesame") == b"OK"
        assert r.migrate("127.0.0.1", srv.port, ["b"], 0, 5000, auth="sesame") == b"OK"
        assert calls(dest, "auth") == auths + 2
        assert len(migrating_clients(dest)) == 1
        assert calls(dest, "select") == 1
    finally:
        r.close()
        dest.close()


@needs_redis
def test_a_connection_the_target_closed_is_replaced(tidelog, target):
    srv, dest = target
    r = redis.Redis(port=tidelog.port)
    try:
        before = opened(tidelog)
        r.mset({"a": "1", "b": "2"})
        assert r.migrate("127.0.0.1", srv.port, ["a"], 0, 5000) == b"OK"
        assert dest.client_kill_filter(_type="normal", skipme=True) == 1
        wait_until(lambda: migrating_clients(dest) == [])
        assert r.migrate("127.0.0.1", srv.port, ["b"], 0, 5000) == b"OK"
        assert dest.get("b") == b"2" and r.exists("b") == 0
        assert opened(tidelog) == before + 2
        assert calls(dest, "select") == 2  # a new connection selects again
    finally:
        r.close()


def start_redis_on(processes, port: int) -> None:
    proc = processes.popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1",
                            "--save", "", "--appendonly", "no"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
    except BaseException:
        proc.kill()
        raise


@needs_redis
def test_a_target_restarted_between_two_migrates(tidelog, processes):
    port = free_port()
    start_redis_on(processes, port)
    r = redis.Redis(port=tidelog.port)
    try:
        r.mset({"a": "1", "b": "2"})
        assert r.migrate("127.0.0.1", port, ["a"], 0, 5000) == b"OK"
        first = next(p for p in STARTED if p.args[:3] == [REDIS_SERVER, "--port", str(port)])
        first.terminate()
        first.wait(10)
        start_redis_on(processes, port)
        assert r.migrate("127.0.0.1", port, ["b"], 0, 5000) == b"OK"
        with redis.Redis(port=port) as dest:
            assert dest.get("b") == b"2" and dest.exists("a") == 0
        assert r.exists("a", "b") == 0
    finally:
        r.close()


@needs_redis
def test_the_cron_closes_an_idle_connection(tidelog, target):
    srv, dest = target
    r = redis.Redis(port=tidelog.port)
    try:
        cache = tidelog.engine.migrate_sockets
        tidelog.call(cache.close_all)  # earlier tests' targets
        r.set("a", "1")
        assert r.migrate("127.0.0.1", srv.port, ["a"], 0, 5000) == b"OK"
        key = (b"127.0.0.1", str(srv.port).encode())
        assert tidelog.call(lambda: key in cache.targets)
        assert r.info("stats")["migrate_cached_sockets"] == 1

        def age(seconds: float) -> None:
            cache.targets[key].last_use = tidelog.engine.clock.monotonic() - seconds
            tidelog.engine.cron()

        tidelog.call(lambda: age(CACHE_TTL_S - 1))  # not idle long enough: kept
        assert tidelog.call(lambda: key in cache.targets)
        tidelog.call(lambda: age(CACHE_TTL_S + 1))
        assert tidelog.call(lambda: key not in cache.targets)
        assert r.info("stats")["migrate_cached_sockets"] == 0
        wait_until(lambda: migrating_clients(dest) == [])
    finally:
        r.close()


def test_a_silent_target_times_out_without_a_retry(tidelog):
    # A listening socket nobody accepts on: the connection is made (the
    # backlog), the write goes through, no reply ever comes.
    with socket.create_server(("127.0.0.1", 0), backlog=8) as silent:
        port = silent.getsockname()[1]
        r = redis.Redis(port=tidelog.port)
        try:
            r.set("a", "1")
            before = opened(tidelog)
            with pytest.raises(redis.ResponseError,
                               match="IOERR error or timeout reading to target instance"):
                r.migrate("127.0.0.1", port, ["a"], 0, 200)
            assert opened(tidelog) == before + 1  # a timeout is not retried
            assert r.get("a") == b"1"
            key = (b"127.0.0.1", str(port).encode())
            assert tidelog.call(lambda: key not in tidelog.engine.migrate_sockets.targets)
        finally:
            r.close()


@needs_redis
def test_asyncio_resp3_reuses_the_connection(tidelog, target):
    srv, dest = target

    async def main() -> None:
        r = redis.asyncio.Redis(port=tidelog.port, protocol=3)
        try:
            await r.mset({"x": "1", "y": "2"})
            assert await r.migrate("127.0.0.1", srv.port, ["x"], 5, 5000) == b"OK"
            assert await r.migrate("127.0.0.1", srv.port, ["y"], 5, 5000) == b"OK"
        finally:
            await r.aclose()

    asyncio.run(main())
    assert len(migrating_clients(dest)) == 1
    assert calls(dest, "select") == 1


@pytest.mark.skipif(OPENSSL is None, reason="the openssl command is not installed")
def test_tls_cluster_migrates_over_tls(processes, tmp_path):
    certs = make_certs(tmp_path / "certs")
    port, tls_port = free_port(), free_port()
    data = tmp_path / "data"
    data.mkdir()
    processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "",
                       "--tls-port", str(tls_port), "--tls-cert-file", str(certs.server_cert),
                       "--tls-key-file", str(certs.server_key),
                       "--tls-ca-cert-file", str(certs.ca)], port=port)
    source = EmbeddedServer(port=0, tls_cluster="yes", tls_ca_cert_file=str(certs.ca),
                            tls_cert_file=str(certs.client_cert),
                            tls_key_file=str(certs.client_key)).start()
    r = redis.Redis(port=source.port)
    dest = redis.Redis(port=port)
    try:
        r.mset({"a": "1", "b": "2"})
        assert r.migrate("127.0.0.1", tls_port, ["a"], 0, 5000) == b"OK"
        assert r.migrate("127.0.0.1", tls_port, ["b"], 0, 5000) == b"OK"
        assert dest.mget("a", "b") == [b"1", b"2"]
        assert opened(source) == 1
        # the plain port does not speak TLS: the handshake fails
        r.set("c", "3")
        with pytest.raises(redis.ResponseError, match="IOERR"):
            r.migrate("127.0.0.1", port, ["c"], 0, 2000)
        assert r.get("c") == b"3"
    finally:
        r.close()
        dest.close()
        source.stop()
    assert source.engine.internal_errors == 0
