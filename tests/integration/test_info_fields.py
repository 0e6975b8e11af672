"""INFO's Redis 7.2-8.x fields that clients and Redis's own test suite read:
present, with values that follow what the server does (bytes grow with
traffic, WATCH shows in watching_clients, a blocked XREADGROUP in
total_blocking_keys_on_nokey ...).  Field names and order: Redis 8.0's
server.c (genRedisInfoString) and redis.io's INFO page."""

from __future__ import annotations

import sys
import time

import redis

from tests.support.rawclient import RawClient, encode_command
from tests.support.waits import wait_blocked, wait_until

CLIENTS = ["connected_clients", "cluster_connections", "maxclients", "blocked_clients",
           "tracking_clients", "pubsub_clients", "watching_clients", "clients_in_timeout_table",
           "total_watched_keys", "total_blocking_keys", "total_blocking_keys_on_nokey"]
STATS = ["total_connections_received", "total_commands_processed", "instantaneous_ops_per_sec",
         "total_net_input_bytes", "total_net_output_bytes", "total_net_repl_input_bytes",
         "total_net_repl_output_bytes", "instantaneous_input_kbps", "instantaneous_output_kbps",
         "instantaneous_input_repl_kbps", "instantaneous_output_repl_kbps",
         "rejected_connections"]


def section_keys(port: int, section: str) -> list[str]:
    """The field names of one INFO section, in order."""
    with RawClient(port) as c:
        reply = c.call("INFO", section)
    text = reply.split(b"\r\n", 1)[1].decode()
    return [line.split(":", 1)[0] for line in text.splitlines()
            if line and not line.startswith("#")]


def test_the_fields_in_redis_order(tidelog_srv) -> None:
    with redis.Redis(port=tidelog_srv.port) as r:
        assert section_keys(tidelog_srv.port, "clients") == CLIENTS
        stats = section_keys(tidelog_srv.port, "stats")
        assert stats[:len(STATS)] == STATS
        # migrate_cached_sockets right after total_forks, as Redis orders them
        assert stats[stats.index("total_forks") + 1] == "migrate_cached_sockets"
        assert {"evicted_clients",
                "latest_fork_usec", "total_forks", "active_defrag_hits", "tracking_total_keys",
                "io_threaded_reads_processed", "io_threaded_writes_processed",
                "client_query_buffer_limit_disconnections"} <= set(stats)
        memory = section_keys(tidelog_srv.port, "memory")
        assert memory[-2:] == ["lazyfree_pending_objects", "lazyfreed_objects"]
        info = r.info("everything")
        for name in CLIENTS + STATS:
            assert info[name] >= 0, name
        assert info["lazyfree_pending_objects"] == info["lazyfreed_objects"] == 0
        assert info["migrate_cached_sockets"] == 0  # no MIGRATE has connected anywhere
        assert 0 < float(info["used_memory_peak_perc"].rstrip("%")) <= 100
        assert info["expire_cycle_cpu_milliseconds"] >= 0
        assert isinstance(info["instantaneous_input_kbps"], float)


def test_network_bytes_follow_the_traffic(tidelog_srv) -> None:
    with redis.Redis(port=tidelog_srv.port) as r:
        before = r.info("stats")
        value = b"x" * 20_000
        r.set("big", value)
        assert r.get("big") == value
        after = r.info("stats")
        # What INFO itself exchanged counts too: at least the value each way.
        assert after["total_net_input_bytes"] - before["total_net_input_bytes"] >= 20_000
        assert after["total_net_output_bytes"] - before["total_net_output_bytes"] >= 20_000
        assert after["total_net_repl_input_bytes"] == after["total_net_repl_output_bytes"] == 0
        r.config_resetstat()
        reset = r.info("stats")
        assert reset["total_net_input_bytes"] < 20_000


def test_instantaneous_rates_move(tidelog_srv) -> None:
    """Sampled every 100 ms over 16 samples: a busy second shows (bounded wait)."""
    with redis.Redis(port=tidelog_srv.port) as r:
        payload = "y" * 10_000

        def busy() -> bool:
            pipe = r.pipeline(transaction=False)
            for _ in range(50):
                pipe.set("k", payload)
            pipe.execute()
            info = r.info("stats")
            return info["instantaneous_ops_per_sec"] > 0 and info["instantaneous_input_kbps"] > 0 \
                and info["instantaneous_output_kbps"] > 0
        wait_until(busy, timeout=30)


def test_watching_clients_and_watched_keys(tidelog_srv) -> None:
    port = tidelog_srv.port
    with redis.Redis(port=port) as r, RawClient(port) as a, RawClient(port) as b:
        assert r.info("clients")["watching_clients"] == 0
        assert a.call("WATCH", "k1", "k2") == b"+OK\r\n"
        info = r.info("clients")
        assert (info["watching_clients"], info["total_watched_keys"]) == (1, 2)
        assert b.call("WATCH", "k1") == b"+OK\r\n"
        assert b.call("SELECT", "1") == b"+OK\r\n"
        assert b.call("WATCH", "k1") == b"+OK\r\n"  # another database: another key
        info = r.info("clients")
        assert (info["watching_clients"], info["total_watched_keys"]) == (2, 3)
        assert a.call("UNWATCH") == b"+OK\r\n"
        info = r.info("clients")
        assert (info["watching_clients"], info["total_watched_keys"]) == (1, 2)
        assert b.call("MULTI") == b"+OK\r\n"
        assert b.call("EXEC") == b"*0\r\n"  # EXEC unwatches
        info = r.info("clients")
        assert (info["watching_clients"], info["total_watched_keys"]) == (0, 0)


def test_pubsub_clients(tidelog_srv) -> None:
    port = tidelog_srv.port
    with redis.Redis(port=port) as r, RawClient(port) as sub:
        assert r.info("clients")["pubsub_clients"] == 0
        sub.call("SUBSCRIBE", "c")
        sub.call("PSUBSCRIBE", "p*")
        assert r.info("clients")["pubsub_clients"] == 1
        sub.call("UNSUBSCRIBE", "c")
        assert r.info("clients")["pubsub_clients"] == 1  # still a pattern
        sub.call("PUNSUBSCRIBE")
        assert r.info("clients")["pubsub_clients"] == 0


def test_blocking_keys(tidelog_srv) -> None:
    port = tidelog_srv.port
    with redis.Redis(port=port) as r, RawClient(port) as x, RawClient(port) as g, \
            RawClient(port) as t:
        r.xgroup_create("s3", "grp", "$", mkstream=True)
        x.send_raw(encode_command(["XREAD", "BLOCK", "0", "STREAMS", "s1", "s2", "$", "$"]))
        wait_blocked(tidelog_srv, 1)
        info = r.info("clients")
        assert (info["total_blocking_keys"], info["total_blocking_keys_on_nokey"]) == (2, 0)
        assert info["clients_in_timeout_table"] == 0
        r.xgroup_create("s4", "grp", "$", mkstream=True)
        g.send_raw(encode_command(["XREADGROUP", "GROUP", "grp", "c", "BLOCK", "0",
                                   "STREAMS", "s3", "s4", ">", ">"]))
        t.send_raw(encode_command(["BLPOP", "l", "100"]))
        wait_blocked(tidelog_srv, 3)
        info = r.info("clients")
        # s1, s2, s3, s4, l; XREADGROUP waits on s3 and s4.
        assert (info["total_blocking_keys"], info["total_blocking_keys_on_nokey"]) == (5, 2)
        assert info["blocked_clients"] == 3 and info["clients_in_timeout_table"] == 1
        r.rpush("l", "v")
        assert t.read_reply() == b"*2\r\n$1\r\nl\r\n$1\r\nv\r\n"
        r.delete("s3")  # the XREADGROUP is answered (NOGROUP / UNBLOCKED)
        assert g.read_reply().startswith(b"-")
        wait_blocked(tidelog_srv, 1)
        info = r.info("clients")
        assert (info["total_blocking_keys"], info["total_blocking_keys_on_nokey"]) == (2, 0)


def test_replication_bytes(embedded) -> None:
    primary = embedded(port=0, save="")
    replica = embedded(port=0, save="", replicaof=f"127.0.0.1 {primary.port}")
    with redis.Redis(port=primary.port) as p, redis.Redis(port=replica.port) as r:
        wait_until(lambda: r.info("replication")["master_link_status"] == "up", 30)
        p.set("k", "v" * 5_000)
        wait_until(lambda: r.get("k") is not None, 30)
        assert p.info("clients")["connected_clients"] == 1  # the replica is not a client here
        sent = p.info("stats")
        got = r.info("stats")
        assert sent["total_net_repl_output_bytes"] >= 5_000
        assert got["total_net_repl_input_bytes"] >= 5_000
        # The totals include the link's bytes, as Redis's do.
        assert sent["total_net_output_bytes"] >= sent["total_net_repl_output_bytes"]
        assert got["total_net_input_bytes"] >= got["total_net_repl_input_bytes"]
        before = got["total_net_repl_input_bytes"]
        p.set("k2", "w" * 5_000)
        wait_until(lambda: r.get("k2") is not None, 30)
        assert r.info("stats")["total_net_repl_input_bytes"] >= before + 5_000


def test_forks_counted(embedded) -> None:
    srv = embedded(port=0, save="", appendonly="yes")
    with redis.Redis(port=srv.port) as r:
        assert r.info("stats")["total_forks"] == 0
        r.xadd("s", {"f": "v"})
        r.bgsave()
        wait_until(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, 30)
        r.bgrewriteaof()
        wait_until(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0 and
                   r.info("persistence")["aof_rewrite_scheduled"] == 0, 30)
        stats = r.info("stats")
        assert stats["total_forks"] == 2
        assert stats["latest_fork_usec"] > 0


def test_query_buffer_limit_disconnections(tidelog_srv) -> None:
    with redis.Redis(port=tidelog_srv.port) as r:
        r.config_set("client-query-buffer-limit", "1mb")
        with RawClient(tidelog_srv.port) as big:
            try:
                big.send_raw(b"*2\r\n$4\r\nECHO\r\n$3000000\r\n" + b"x" * 1_500_000)
                big.read_until_closed()
            except ConnectionError:  # closed with bytes unread: a reset
                pass
        wait_until(lambda: r.info("stats")["client_query_buffer_limit_disconnections"] == 1)
        assert r.ping()


def server_lines(port: int) -> list[str]:
    with RawClient(port) as c:
        return c.call("INFO", "server").decode().split("\r\n")


def test_server_clock_poller_and_listeners(embedded, tmp_path) -> None:
    """monotonic_clock and multiplexing_api as redis-server 7.0.15 shows them on
    Linux; Redis 7.2's listener lines (connection.c, getListensInfoString)."""
    sock = tmp_path / "t.sock"
    srv = embedded(port=0, save="", unixsocket=str(sock))
    lines = server_lines(srv.port)
    assert "monotonic_clock:POSIX clock_gettime" in lines
    if sys.platform.startswith("linux"):
        assert "multiplexing_api:epoll" in lines
    with redis.Redis(port=srv.port, decode_responses=True) as r:
        binds = "".join(f",bind={b}" for b in r.config_get("bind")["bind"].split())
    listeners = [line for line in lines if line.startswith("listener")]
    assert listeners == [f"listener0:name=tcp{binds},port={srv.port}",
                         f"listener1:name=unix,bind={sock}"]
    assert lines.index(listeners[0]) == lines.index("io_threads_active:0") + 1


def test_last_load_keys(embedded, tmp_path) -> None:
    """Redis 7.0's rdb_last_load_keys_loaded / _expired, after DEBUG RELOAD."""
    srv = embedded(port=0, save="", dir=str(tmp_path))
    with redis.Redis(port=srv.port) as r:
        info = r.info("persistence")
        assert info["rdb_last_load_keys_loaded"] == info["rdb_last_load_keys_expired"] == 0
        r.mset({"a": 1, "b": 2})
        r.xadd("s", {"f": "v"})
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        due = time.time() + 0.05
        r.set("soon", "x", pxat=int(due * 1000))
        wait_until(lambda: time.time() > due + 0.01)  # due, and not touched: still stored
        assert r.execute_command("DEBUG", "RELOAD") == b"OK"
        info = r.info("persistence")
        # Saved (as Redis saves a key not yet reaped), skipped at load.
        assert (info["rdb_last_load_keys_loaded"], info["rdb_last_load_keys_expired"]) == (3, 1)
        assert r.exists("soon") == 0


def test_memory_not_counted_for_eviction(tidelog_srv) -> None:
    # Redis's suite weighs used_memory - mem_not_counted_for_evict against
    # maxmemory (the tracking eviction test); Redis shows the field between
    # maxmemory_policy and mem_allocator.  Tidelog counts everything: 0.
    memory = section_keys(tidelog_srv.port, "memory")
    at = memory.index("mem_not_counted_for_evict")
    assert memory.index("maxmemory_policy") < at < memory.index("mem_allocator")
    with redis.Redis(port=tidelog_srv.port) as r:
        assert r.info("memory")["mem_not_counted_for_evict"] == 0


def test_unlink_of_a_large_value_is_a_lazy_free(tidelog_srv) -> None:
    """UNLINK of a set past 64 elements: freed after the reply, counted in
    lazyfreed_objects (Redis's lazyfree.tcl); a small one is freed at once."""
    with redis.Redis(port=tidelog_srv.port) as r:
        r.config_resetstat()
        r.sadd("big", *range(1000))
        r.sadd("small", *range(10))
        assert r.unlink("big", "small") == 2
        wait_until(lambda: r.info("memory")["lazyfree_pending_objects"] == 0)
        assert r.info("memory")["lazyfreed_objects"] == 1
        assert r.exists("big", "small") == 0
