"""MIGRATE of a big stream between two Tidelog servers, in chunks, over real
sockets: the stream arrives identical (XINFO STREAM FULL and DUMP byte for
byte), other clients are served during the move, a write to the stream in
flight gets TRYAGAIN, a target killed mid-move leaves the stream on the
source, and towards redis-server 7.0.15 the DUMP path is kept.

To look at the move while it runs without any timing, the target holds the
move's writes with ``CLIENT PAUSE ... WRITE`` (TIDELOG.STAGE is a write
command): the move is then parked at its first staging request until the
test unpauses (or kills) the target.  MIGRATE's probe (``TIDELOG.STAGE
HELLO``) is answered once per cached connection, so a first small chunked
MIGRATE warms it before the pause.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
import redis
import redis.asyncio

from tests.support.certs import make_certs
from tests.support.redis_oracle import free_port
from tests.support.waits import wait_until
from tidelog.server.embed import EmbeddedServer

THRESHOLD = 1000


def start(processes, *extra: str):
    port = free_port()
    data = processes.workdir / f"data-{port}"
    data.mkdir()
    return processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "",
                              *extra], port=port)


def fill(r: redis.Redis, key: str, n: int) -> None:
    """``n`` entries, then two groups with pending entries of three consumers."""
    for first in range(0, n, 2000):
        pipe = r.pipeline(transaction=False)
        for i in range(first, min(n, first + 2000)):
            pipe.xadd(key, {"f": str(i), "g": "x" * (i % 7)}, id=f"{i + 1}-1")
        pipe.execute()
    r.xgroup_create(key, "g1", "0")
    r.xgroup_create(key, "g2", "0")
    r.xreadgroup("g1", "alice", {key: ">"}, count=n // 10)
    r.xreadgroup("g1", "bob", {key: ">"}, count=n // 20)
    got = r.xreadgroup("g2", "carol", {key: ">"}, count=n // 5)
    r.xack(key, "g2", *[id for id, _ in got[0][1][::3]])


def snapshot(r: redis.Redis, key: str) -> tuple:
    return r.execute_command("XINFO", "STREAM", key, "FULL"), r.dump(key)


@pytest.fixture
def pair(processes):
    source = start(processes, "--migrate-stream-chunk-threshold", str(THRESHOLD),
                   "--migrate-stream-chunk-bytes", "1")  # one node a chunk: many chunks
    target = start(processes)
    src = redis.Redis(port=source.port, socket_timeout=120)
    dst = redis.Redis(port=target.port, socket_timeout=120)
    # warm the cached connection's probe: a small stream, chunked
    fill(src, "warm", THRESHOLD)
    before = snapshot(src, "warm")
    assert src.migrate("127.0.0.1", target.port, "warm", 0, 60000) == b"OK"
    assert snapshot(dst, "warm") == before and src.exists("warm") == 0
    yield source, target, src, dst
    src.close()
    dst.close()


class Migrate(threading.Thread):
    """MIGRATE on a connection of its own; its reply (or error) kept."""

    def __init__(self, port: int, target_port: int, key: str) -> None:
        super().__init__(daemon=True)
        self.port, self.target_port, self.key = port, target_port, key
        self.reply: object = None

    def run(self) -> None:
        with redis.Redis(port=self.port, socket_timeout=120) as r:
            try:
                self.reply = r.migrate("127.0.0.1", self.target_port, self.key, 0, 60000)
            except redis.ResponseError as exc:
                self.reply = exc


def in_flight(r: redis.Redis, key: str) -> bool:
    """A write to ``key`` is refused with TRYAGAIN (it is being moved)."""
    try:
        r.execute_command("XADD", key, "NOMKSTREAM", "0-1", "f", "v")
    except redis.exceptions.TryAgainError:  # (redis-py drops the TRYAGAIN word)
        return True
    except redis.ResponseError:
        return False
    raise AssertionError("XADD with an ID too small was accepted")


def test_a_50000_entry_stream_moves_in_chunks_while_others_are_served(pair):
    source, target, src, dst = pair
    fill(src, "s", 50_000)
    before = snapshot(src, "s")
    dst.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
    move = Migrate(source.port, target.port, "s")
    move.start()
    wait_until(lambda: in_flight(src, "s"), timeout=60)
    # the move is parked on the target's pause: the source serves everybody
    assert src.ping() is True
    assert src.xadd("other", {"f": "v"})
    assert src.xlen("s") == 50_000
    assert len(src.xrange("s", count=10)) == 10
    with pytest.raises(redis.exceptions.TryAgainError,
                       match="^Multiple keys request during rehashing of slot$"):
        src.xadd("s", {"f": "v"})
    with pytest.raises(redis.exceptions.TryAgainError):
        src.delete("s")
    assert move.reply is None and move.is_alive()
    dst.execute_command("CLIENT", "UNPAUSE")
    move.join(120)
    assert move.reply == b"OK"
    assert src.exists("s") == 0
    assert snapshot(dst, "s") == before
    assert src.xadd("s", {"f": "v"})  # no longer in flight: a new stream


def test_a_target_killed_mid_move_leaves_the_stream_on_the_source(pair):
    source, target, src, dst = pair
    fill(src, "s", 20_000)
    before = snapshot(src, "s")
    dst.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
    move = Migrate(source.port, target.port, "s")
    move.start()
    wait_until(lambda: in_flight(src, "s"), timeout=60)
    target.sigkill()
    move.join(120)
    assert isinstance(move.reply, redis.ResponseError)
    assert str(move.reply).startswith("IOERR error or timeout reading to target instance")
    assert snapshot(src, "s") == before
    wait_until(lambda: not in_flight(src, "s"), timeout=10)


def test_towards_redis_the_dump_path_is_kept(processes):
    source = start(processes, "--migrate-stream-chunk-threshold", str(THRESHOLD))
    oracle = processes.redis()
    src = redis.Redis(port=source.port, socket_timeout=60)
    dst = redis.Redis(port=oracle.port, socket_timeout=60)
    try:
        fill(src, "s", 5000)
        assert src.migrate("127.0.0.1", oracle.port, "s", 0, 60000) == b"OK"
        assert src.exists("s") == 0 and dst.xlen("s") == 5000
        info = dst.xinfo_groups("s")
        assert sorted(g["name"] for g in info) == [b"g1", b"g2"]
        # the second one goes the same way, the probe's answer remembered
        fill(src, "t", 2000)
        assert src.migrate("127.0.0.1", oracle.port, "t", 0, 60000) == b"OK"
        assert dst.xlen("t") == 2000
    finally:
        src.close()
        dst.close()


def test_a_silent_target_times_out_and_the_staged_copy_is_dropped(pair):
    source, target, src, dst = pair
    fill(src, "s", 5000)
    before = snapshot(src, "s")
    dst.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
    with pytest.raises(redis.ResponseError, match="^IOERR error or timeout reading"):
        src.migrate("127.0.0.1", target.port, "s", 0, 300)  # each round trip: 300 ms
    dst.execute_command("CLIENT", "UNPAUSE")
    assert snapshot(src, "s") == before
    assert dst.exists("s") == 0
    assert src.xadd("s", {"f": "v"})  # no longer in flight


def test_asyncio_resp3_clients_see_the_same(pair):
    source, target, src, dst = pair
    fill(src, "s", 3000)
    before = snapshot(src, "s")

    async def main() -> None:
        r = redis.asyncio.Redis(port=source.port, protocol=3)
        other = redis.asyncio.Redis(port=source.port, protocol=3)
        try:
            moving = asyncio.ensure_future(r.migrate("127.0.0.1", target.port, "s", 0, 60000))
            assert await other.ping() is True
            assert await moving == b"OK"
            assert await other.exists("s") == 0
        finally:
            await r.aclose()
            await other.aclose()

    asyncio.run(main())
    assert snapshot(dst, "s") == before


def test_tls_cluster_moves_the_chunks_over_tls(processes, tmp_path):
    certs = make_certs(tmp_path / "certs")
    port, tls_port = free_port(), free_port()
    data = tmp_path / "tls-data"
    data.mkdir()
    processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "",
                       "--tls-port", str(tls_port), "--tls-cert-file", str(certs.server_cert),
                       "--tls-key-file", str(certs.server_key),
                       "--tls-ca-cert-file", str(certs.ca)], port=port)
    source = EmbeddedServer(port=0, tls_cluster="yes", tls_ca_cert_file=str(certs.ca),
                            tls_cert_file=str(certs.client_cert),
                            tls_key_file=str(certs.client_key),
                            migrate_stream_chunk_threshold=str(THRESHOLD)).start()
    r = redis.Redis(port=source.port)
    dest = redis.Redis(port=port)
    try:
        fill(r, "s", 3000)
        before = snapshot(r, "s")
        assert r.migrate("127.0.0.1", tls_port, "s", 0, 60000) == b"OK"
        assert snapshot(dest, "s") == before and r.exists("s") == 0
        assert dest.info("commandstats")["cmdstat_tidelog.stage|append"]["calls"] >= 1
    finally:
        r.close()
        dest.close()
        source.stop()
    assert source.engine.internal_errors == 0
