"""Cluster mode in the engine: admission asks the attached router (a
Router over a hand-built Topology), the cluster-mode commands and
refusals, scripts' checks, blocked clients redirected.  Texts as
redis-server 7.0.15 answers them in cluster mode."""

from __future__ import annotations

from tests.support.engine_harness import Harness
from tidelog.cluster.messages import MASTER, MYSELF
from tidelog.cluster.nodes import Node, Topology
from tidelog.cluster.routing import Router
from tidelog.keyslot import key_slot
from tidelog.resp.replies import NULL_ARRAY, OK, ErrorReply

A, B, C = b"a", b"b", b"c"  # slots 15495 (elsewhere), 3300 and 7365 (ours)
MOVED_A = b"MOVED %d 127.0.0.2:7001" % key_slot(A)
CROSSSLOT = b"CROSSSLOT Keys in request don't hash to the same slot"


def cluster_harness():
    h = Harness()
    h.engine.config.set("cluster-enabled", "yes", at_startup=True)
    me = Node(b"m" * 40, MYSELF | MASTER, ip=b"127.0.0.1", port=7000)
    other = Node(b"o" * 40, MASTER, ip=b"127.0.0.2", port=7001)
    t = Topology(me)
    t.add_node(other)
    for slot in range(16384):
        t.assign(slot, me if slot < 8192 else other)
    t.state_ok = True
    h.engine.set_slot_router(Router(t))
    return h, t, me, other


def test_redirections_seen_by_a_client():
    h, *_ = cluster_harness()
    h.ok("SET", B, "1")
    assert h.err("GET", A) == MOVED_A
    assert h.err("MGET", B, C) == CROSSSLOT
    assert h("PING").text == b"PONG"
    # refused commands count as rejected calls, as in Redis
    assert h.engine._entries["get"].rejected == 1


def test_fast_dispatch_never_skips_the_check():
    h, *_ = cluster_harness()
    for _ in range(3):  # a second call of a cached command would take the fast path
        assert h.err("GET", A) == MOVED_A
    assert b"get" not in h.engine._dispatch


def test_queued_command_redirected_fails_the_transaction():
    h, *_ = cluster_harness()
    h.ok("MULTI")
    assert h.err("SET", A, "1") == MOVED_A
    assert h.err("EXEC") == b"EXECABORT Transaction discarded because of previous errors."


def test_exec_of_commands_in_two_slots_answers_crossslot_itself():
    h, t, me, other = cluster_harness()
    h.ok("MULTI")
    assert h("SET", B, "1").text == b"QUEUED"
    assert h("SET", C, "1").text == b"QUEUED"
    # each queued command was fine alone; EXEC sees both slots: the error
    # itself (not EXECABORT), and the transaction is gone
    assert h.err("EXEC") == CROSSSLOT
    assert h.client.multi is None
    assert h.err("EXEC") == b"ERR EXEC without MULTI"


def test_asking_is_spent_by_the_next_command():
    h, t, me, other = cluster_harness()
    t.importing_from[key_slot(A)] = other
    assert h.err("GET", A) == MOVED_A
    h.ok("ASKING")
    assert h("GET", A) is None
    assert h.err("GET", A) == MOVED_A
    h.ok("ASKING")
    h.ok("PING")
    assert h.err("GET", A) == MOVED_A


def test_asking_lasts_while_its_command_runs():
    """A script's commands see the ASKING of the EVAL running them."""
    h, t, me, other = cluster_harness()
    t.importing_from[key_slot(A)] = other
    script = "return redis.call('get', KEYS[1])"
    assert h.err("EVAL", script, "1", A) == MOVED_A
    h.ok("ASKING")
    assert h("EVAL", script, "1", A) is None
    h.ok("ASKING")
    assert h("EVAL", "return redis.call('get', 'a')", "0") is None
    reply = h.err("EVAL", "return redis.call('get', 'a')", "0")
    assert reply.startswith(b"ERR Script attempted to access a non local key in a cluster node")


def test_asking_lasts_through_a_transaction():
    h, t, me, other = cluster_harness()
    t.importing_from[key_slot(A)] = other
    h.ok("ASKING")
    h.ok("MULTI")
    assert h("SET", A, "1").text == b"QUEUED"
    assert h("GET", A).text == b"QUEUED"
    assert h("EXEC") == [OK, b"1"]
    assert h.err("GET", A) == MOVED_A


def test_select_move_swapdb_copy_refused():
    h, *_ = cluster_harness()
    assert h.err("SELECT", "1") == b"ERR SELECT is not allowed in cluster mode"
    assert h.err("SELECT", "x") == b"ERR value is not an integer or out of range"
    h.ok("SELECT", "0")
    assert h.err("SWAPDB", "0", "1") == b"ERR SWAPDB is not allowed in cluster mode"
    assert h.err("MOVE", B, "1") == b"ERR MOVE is not allowed in cluster mode"
    assert h.err("COPY", B, "{b}x", "DB", "1") == \
        b"ERR Copying to another database is not allowed in cluster mode"
    assert h("COPY", B, "{b}x") == 0


def test_cluster_commands_outside_cluster_mode():
    h = Harness()
    for name in ("ASKING", "READONLY", "READWRITE"):
        assert h.err(name) == b"ERR This instance has cluster support disabled"
    h.ok("SELECT", "1")


def test_scripts_in_cluster_mode():
    h, *_ = cluster_harness()
    # EVAL's declared keys are routed as any command's
    assert h.err("EVAL", "return 1", "2", B, C) == CROSSSLOT
    assert h.err("EVAL", "return 1", "1", A) == MOVED_A
    # a key of another node inside a script
    reply = h.err("EVAL", "return redis.call('get', 'a')", "0")
    assert reply.startswith(b"ERR Script attempted to access a non local key in a cluster node")
    # no shebang: keys of several local slots are allowed
    assert h("EVAL", "redis.call('get', 'b'); return redis.call('get', 'c')", "0") is None
    # a shebang without allow-cross-slot-keys: held to one slot
    reply = h.err("EVAL", "#!lua\nredis.call('get', 'b'); return redis.call('get', 'c')", "0")
    assert reply.startswith(b"ERR Script attempted to access keys that do not hash to the same slot")
    assert h("EVAL", "#!lua flags=allow-cross-slot-keys\n"
             "redis.call('get', 'b'); return redis.call('get', 'c')", "0") is None


def test_script_while_the_cluster_is_down():
    h, t, *_ = cluster_harness()
    t.state_ok = False
    reply = h.err("EVAL", "return redis.call('get', 'b')", "0")
    assert reply.startswith(b"ERR Script attempted to execute a command while the cluster is down")


def test_a_shebang_says_whether_the_script_writes():
    """cluster-allow-reads-when-down: EVAL is no write by its flags, but a
    shebang without no-writes makes it one (Redis's getCommandFlags)."""
    h, t, *_ = cluster_harness()
    h.engine.slot_router.allow_reads_when_down = True
    t.state_ok = False
    assert h("EVAL", "return 1", "1", B) == 1
    assert h("EVAL", "#!lua flags=no-writes\nreturn 1", "1", B) == 1
    assert h.err("EVAL", "#!lua\nreturn 1", "1", B) == \
        b"CLUSTERDOWN The cluster is down and only accepts read commands"


def test_blocked_client_redirected_when_its_slot_leaves():
    h, t, me, other = cluster_harness()
    waiter = h.new_client()
    h("BLPOP", B, "0", client=waiter)
    assert waiter.blocked is not None
    assert h.engine.redirect_blocked() == 0
    t.assign(key_slot(B), other)
    assert h.engine.redirect_blocked() == 1
    assert waiter.blocked is None
    assert waiter.inbox == [ErrorReply(b"MOVED %d 127.0.0.2:7001" % key_slot(B))]


def test_blocked_client_gets_clusterdown():
    h, t, me, other = cluster_harness()
    waiter = h.new_client()
    h("XREAD", "BLOCK", "0", "STREAMS", B, "$", client=waiter)
    t.state_ok = False
    assert h.engine.redirect_blocked() == 1
    assert waiter.inbox == [ErrorReply(b"CLUSTERDOWN The cluster is down")]


def test_slot_index_kept_by_the_engine():
    h, *_ = cluster_harness()
    h.ok("SET", "{b}1", "x")
    h.ok("SET", "{b}2", "x")
    h.ok("RENAME", "{b}2", "{b}3")
    h.ok("SET", C, "x")
    index = h.engine.dbs[0].key_index
    assert index.count_in_slot(key_slot(B)) == 2
    assert sorted(index.keys_in_slot(key_slot(B), 10)) == [b"{b}1", b"{b}3"]
    assert index.keys_in_slot(key_slot(B), 1) == [b"{b}1"]
    h.ok("FLUSHALL")
    assert index.slots == {}


def test_migrate_sends_restore_asking_in_cluster_mode(processes):
    """The target (redis-server 7.0.15) runs RESTORE-ASKING: its command
    statistics show it, and the key arrives."""
    import redis

    srv = processes.redis("--save", "")
    target = redis.Redis(port=srv.port)
    try:
        h, *_ = cluster_harness()
        h.ok("SET", B, "v")
        assert h("MIGRATE", "127.0.0.1", str(srv.port), B, "0", "5000") == OK
        assert target.get(B) == b"v"
        assert "cmdstat_restore-asking" in target.info("commandstats")
        assert "cmdstat_restore" not in target.info("commandstats")
    finally:
        target.close()


def test_info_cluster_section():
    h, *_ = cluster_harness()
    assert h("INFO", "cluster").text == b"# Cluster\r\ncluster_enabled:1\r\n"
    assert Harness()("INFO", "cluster").text == b"# Cluster\r\ncluster_enabled:0\r\n"


def test_delete_slot_keys():
    h, *_ = cluster_harness()
    watcher = h.new_client()
    h.ok("SET", "{b}1", "x")
    h.ok("SET", "{b}2", "x")
    h.ok("SET", C, "x")
    h.ok("WATCH", "{b}1", client=watcher)
    h.ok("MULTI", client=watcher)
    h.take_effects()
    assert h.engine.delete_slot_keys(key_slot(B)) == 2
    assert h.take_effects() == [[b"DEL", b"{b}1"], [b"DEL", b"{b}2"]]
    assert h("EXISTS", "{b}1", "{b}2") == 0
    assert h("EXISTS", C) == 1
    assert h("EXEC", client=watcher) is NULL_ARRAY  # the watched key was deleted
    assert h.engine.delete_slot_keys(key_slot(B)) == 0
    assert Harness().engine.delete_slot_keys(0) == 0  # not in cluster mode


def test_aof_loader_and_primary_link_are_not_redirected():
    h, *_ = cluster_harness()
    for kind in ("aof", "master"):
        client = h.new_client(kind=kind)
        assert h("SET", A, "1", client=client) == OK
    assert h.err("GET", A) == MOVED_A


def test_readonly_client_reads_on_a_replica():
    h, t, me, other = cluster_harness()
    for slot in range(8192):
        t.assign(slot, other)
    t.set_master(me, other)
    moved_b = b"MOVED %d 127.0.0.2:7001" % key_slot(B)
    assert h.err("GET", B) == moved_b
    h.ok("READONLY")
    assert h("GET", B) is None
    h.ok("CLIENT", "NO-EVICT", "on")
    assert b" flags=re " in h("CLIENT", "INFO").text  # as redis-server 7.0.15 shows it
    assert h.err("SET", B, "1") == moved_b
    h.ok("READWRITE")
    assert h.err("GET", B) == moved_b
    h.ok("READONLY")
    h.ok("RESET")  # RESET ends READONLY (and ASKING), as Redis's clearClientConnectionState
    assert h.err("GET", B) == moved_b


def test_delete_slot_keys_expires_a_key_past_its_deadline():
    h, *_ = cluster_harness()
    h.ok("SET", "{b}1", "x", "PX", "10")
    h.ok("SET", "{b}2", "x")
    h.take_effects()
    h.clock.advance(20)
    assert h.engine.delete_slot_keys(key_slot(B)) == 1
    assert sorted(h.take_effects()) == [[b"DEL", b"{b}1"], [b"DEL", b"{b}2"]]
    assert h.engine.stats["expired_keys"] == 1
    assert h.engine.dbs[0].key_index.count_in_slot(key_slot(B)) == 0


def test_a_client_in_wait_is_not_redirected():
    """WAIT parks on a name of its own, no key: its slot is nobody's
    business (Redis redirects only clients blocked on keys), even when
    that name's slot is another node's or the cluster is down."""
    from tidelog.replication.primary import ACK_KEY, attach

    h, t, me, other = cluster_harness()
    attach(h.engine)  # a primary without replicas: WAIT 1 waits
    waiter = h.new_client()
    h("WAIT", "1", "0", client=waiter)
    assert waiter.blocked is not None
    t.assign(key_slot(ACK_KEY), other)
    assert h.engine.redirect_blocked() == 0
    t.state_ok = False
    assert h.engine.redirect_blocked() == 0
    assert waiter.blocked is not None and waiter.inbox == []


# -- the fast paths in cluster mode ------------------------------------------------------
def test_a_settled_clients_keyed_command_is_cached_and_still_slot_checked():
    h, *_ = cluster_harness()
    assert h.engine.admission_settled(h.client)
    h.ok("SET", B, "1")
    assert h.engine._dispatch.get(b"SET") is not None  # the fast dispatch holds it now
    for _ in range(2):  # found in the cache: the slot check runs there
        assert h("SET", A, "1") == ErrorReply(MOVED_A)
        assert h("GET", A) == ErrorReply(MOVED_A)
        assert h("MGET", B, C) == ErrorReply(CROSSSLOT)
    assert h("GET", B) == b"1"
    h("PING")
    replies = []
    i, last = h.engine.execute_many(h.client, [[b"PING"], [b"GET", B]], 0, replies)
    assert i == 1 and len(replies) == 1  # keyed: left to execute()'s slot check


def test_a_run_takes_the_slot_check_once_and_each_call_its_refusal():
    h, t, me, other = cluster_harness()
    h("XADD", B, "*", "f", "v")  # XADD resolved into the cache: it has a run handler
    assert b"XADD" in h.engine.runnable
    run = [[b"XADD", A, b"*", b"f", b"v"] for _ in range(3)]
    assert h.engine.run_key(run[0]) is not None
    assert h.engine.execute_run(h.client, run) == [ErrorReply(MOVED_A)] * 3
    assert h.engine._entries["xadd"].rejected == 3
    run = [[b"XADD", B, b"*", b"f", b"v"] for _ in range(3)]
    ids = h.engine.execute_run(h.client, run)
    assert len(set(ids)) == 3 and all(isinstance(i, bytes) for i in ids)
    t.state_ok = False  # the cluster down: every call refused, none run
    assert [r.message.split()[0] for r in h.engine.execute_run(h.client, run[:2])] == \
        [b"CLUSTERDOWN"] * 2
    t.state_ok = True
    assert h("XLEN", B) == 4


def test_slot_stats_keep_keyed_commands_on_the_checked_path_while_they_count():
    h, *_ = cluster_harness()
    h.ok("SET", B, "1")
    assert b"SET" in h.engine._dispatch
    h.ok("CONFIG", "SET", "cluster-slot-stats-enabled", "yes")
    h.ok("SET", B, "2")
    h("PING")
    assert b"SET" not in h.engine._dispatch and b"PING" in h.engine._dispatch
    h.ok("CONFIG", "SET", "cluster-slot-stats-enabled", "no")
    h.ok("SET", B, "3")
    assert b"SET" in h.engine._dispatch
