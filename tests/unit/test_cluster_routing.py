"""cluster/routing.py: Redis's getNodeByQuery rules over a hand-built Topology.

Each case is one rule of the module's docstring (REFERENCE: 7.0.15's
getNodeByQuery and clusterRedirectClient texts; a migrating slot with some
of the keys here answers TRYAGAIN, none of them ASK: redis/redis#9526).
"""

from __future__ import annotations

import pytest

from tidelog.cluster.messages import MASTER, MYSELF, SLAVE
from tidelog.cluster.nodes import Node, Topology
from tidelog.cluster.routing import Refusal, Router
from tidelog.commands import table
from tidelog.commands.contract import ClientState
from tidelog.keyslot import key_slot

# b"a" is in slot 15495 (served by the other master), b"b" in 3300, b"c"
# in 7365 (both ours: slots 0-8191).
A, B, C = b"a", b"b", b"c"
SLOT_A, SLOT_B, SLOT_C = key_slot(A), key_slot(B), key_slot(C)


class Keys(dict):
    """A database as the router reads it: ``peek``."""

    def peek(self, key):
        return self.get(key)


def topology(myself_replica: bool = False):
    me = Node(b"m" * 40, MYSELF | (SLAVE if myself_replica else MASTER), ip=b"10.0.0.1",
              port=7000, hostname=b"me.example")
    other = Node(b"o" * 40, MASTER, ip=b"10.0.0.2", port=7001, hostname=b"other.example")
    third = Node(b"t" * 40, MASTER, ip=b"10.0.0.3", port=7002)
    t = Topology(me)
    t.add_node(other)
    t.add_node(third)
    owner_low = other if myself_replica else me
    if myself_replica:
        t.set_master(me, other)
    for slot in range(8192):
        t.assign(slot, owner_low)
    for slot in range(8192, 16384):
        t.assign(slot, other if not myself_replica else third)
    t.state_ok = True
    return t, me, other, third


def ask(router, *argv, client=None, db=None):
    argv = [x if isinstance(x, bytes) else x.encode() for x in argv]
    spec = table.lookup(argv)
    client = client or ClientState(id=1)
    return router.check(client, spec, argv, db if db is not None else Keys())


def test_keyless_commands_are_served_whatever_the_state():
    t, *_ = topology()
    t.state_ok = False
    router = Router(t)
    assert ask(router, "PING") is None
    assert ask(router, "DBSIZE") is None


def test_own_slot_served_other_slot_moved_with_ip():
    t, *_ = topology()
    router = Router(t)
    assert ask(router, "GET", B) is None
    assert ask(router, "GET", A) == b"MOVED %d 10.0.0.2:7001" % SLOT_A


@pytest.mark.parametrize("kind, endpoint", [
    ("ip", b"10.0.0.2"), ("hostname", b"other.example"), ("unknown-endpoint", b"")])
def test_moved_endpoint_follows_preferred_endpoint_type(kind, endpoint):
    t, *_ = topology()
    assert ask(Router(t, endpoint_type=kind), "GET", A) == \
        b"MOVED %d %s:7001" % (SLOT_A, endpoint)


def test_hostname_missing_gives_question_mark():
    t, _, other, _ = topology()
    other.hostname = b""
    assert ask(Router(t, endpoint_type="hostname"), "GET", A) == b"MOVED %d ?:7001" % SLOT_A


def test_crossslot_and_same_slot_by_hash_tag():
    t, *_ = topology()
    router = Router(t)
    assert ask(router, "MGET", B, C) == b"CROSSSLOT Keys in request don't hash to the same slot"
    assert ask(router, "MSET", b"{b}1", b"x", b"{b}2", b"y") is None


def test_unassigned_first_key_before_crossslot():
    t, *_ = topology()
    t.unassign(SLOT_B)
    router = Router(t)
    assert ask(router, "MGET", B, C) == b"CLUSTERDOWN Hash slot not served"
    # the first key's slot served: the second's (another slot) is CROSSSLOT
    assert ask(router, "MGET", C, B) == b"CROSSSLOT Keys in request don't hash to the same slot"


def test_cluster_down():
    t, *_ = topology()
    t.state_ok = False
    assert ask(Router(t), "GET", B) == b"CLUSTERDOWN The cluster is down"
    reads = Router(t, allow_reads_when_down=True)
    assert ask(reads, "GET", B) is None
    assert ask(reads, "SET", B, b"1") == \
        b"CLUSTERDOWN The cluster is down and only accepts read commands"
    # sharded pub/sub: cluster-allow-pubsubshard-when-down (yes by default)
    assert ask(Router(t), "SPUBLISH", B, b"m") is None
    assert ask(Router(t, allow_pubsubshard_when_down=False), "SPUBLISH", B, b"m") == \
        b"CLUSTERDOWN The cluster is down"


def test_migrating_slot():
    t, me, other, third = topology()
    t.migrating_to[SLOT_B] = third
    router = Router(t)
    db = Keys({B: b"1"})
    assert ask(router, "GET", B, db=db) is None  # the key is still here
    assert ask(router, "GET", B) == b"ASK %d 10.0.0.3:7002" % SLOT_B
    tagged = Keys({b"{b}1": b"1"})
    assert ask(router, "MGET", b"{b}1", b"{b}2", db=tagged) == \
        b"TRYAGAIN Multiple keys request during rehashing of slot"
    assert ask(router, "MGET", b"{b}1", b"{b}2") == b"ASK %d 10.0.0.3:7002" % SLOT_B
    # MIGRATE is always served locally in an open slot
    assert ask(router, "MIGRATE", b"h", b"1", B, b"0", b"10") is None


def test_importing_slot_needs_asking():
    t, me, other, third = topology()
    t.importing_from[SLOT_A] = other
    router = Router(t)
    client = ClientState(id=1)
    assert ask(router, "GET", A, client=client) == b"MOVED %d 10.0.0.2:7001" % SLOT_A
    client.cluster_asking = 1
    assert ask(router, "GET", A, client=client) is None
    assert ask(router, "MGET", b"{a}1", b"{a}2", client=client) == \
        b"TRYAGAIN Multiple keys request during rehashing of slot"
    assert ask(router, "MGET", b"{a}1", b"{a}2", client=client,
               db=Keys({b"{a}1": 1, b"{a}2": 2})) is None
    # RESTORE-ASKING is flagged asking: served without the client's flag
    assert ask(router, "RESTORE-ASKING", A, b"0", b"payload") is None


def test_readonly_replica_serves_reads_of_its_masters_slots():
    t, me, other, third = topology(myself_replica=True)
    router = Router(t)
    client = ClientState(id=1)
    assert ask(router, "GET", B, client=client) == b"MOVED %d 10.0.0.2:7001" % SLOT_B
    client.cluster_readonly = True
    assert ask(router, "GET", B, client=client) is None
    assert ask(router, "SET", B, b"1", client=client) == b"MOVED %d 10.0.0.2:7001" % SLOT_B
    # not its master's slot
    assert ask(router, "GET", A, client=client) == b"MOVED %d 10.0.0.3:7002" % SLOT_A
    # sharded pub/sub reads on a replica without READONLY
    assert ask(router, "SSUBSCRIBE", B) is None


def test_exec_routes_every_queued_command():
    t, *_ = topology()
    router = Router(t)
    client = ClientState(id=1)
    client.multi = [[b"SET", B, b"1"], [b"GET", b"{b}x"]]
    assert ask(router, "EXEC", client=client) is None
    client.multi.append([b"GET", C])
    assert ask(router, "EXEC", client=client) == \
        b"CROSSSLOT Keys in request don't hash to the same slot"
    client.multi = [[b"GET", A]]
    assert ask(router, "EXEC", client=client) == b"MOVED %d 10.0.0.2:7001" % SLOT_A
    client.multi = None
    assert ask(router, "EXEC", client=client) is None


def test_movable_keys_found_as_getkeys_finds_them():
    t, *_ = topology()
    router = Router(t)
    assert ask(router, "EVAL", b"return 1", b"2", B, C) == \
        b"CROSSSLOT Keys in request don't hash to the same slot"
    assert ask(router, "EVAL", b"return 1", b"1", A) == b"MOVED %d 10.0.0.2:7001" % SLOT_A
    assert ask(router, "EVAL", b"return 1", b"0") is None
    assert ask(router, "XREAD", b"STREAMS", B, C, b"0", b"0") == \
        b"CROSSSLOT Keys in request don't hash to the same slot"


def test_check_notes_the_slot_and_scripts_are_held_to_it():
    t, *_ = topology()
    router = Router(t)
    caller = ClientState(id=1)
    ask(router, "EVAL", b"#!lua\nreturn 1", b"1", B, client=caller)
    assert caller.cluster_slot == SLOT_B
    get = table.lookup([b"get"])
    assert router.check_script_call(caller, get, [b"GET", b"{b}z"], Keys(), False) is None
    assert router.check_script_call(caller, get, [b"GET", C], Keys(), False) == \
        b"ERR Script attempted to access keys that do not hash to the same slot"
    assert router.check_script_call(caller, get, [b"GET", C], Keys(), True) is None
    assert router.check_script_call(caller, get, [b"GET", A], Keys(), True) == \
        b"ERR Script attempted to access a non local key in a cluster node"
    t.state_ok = False
    assert router.check_script_call(caller, get, [b"GET", B], Keys(), True) == \
        b"ERR Script attempted to execute a command while the cluster is down"
    reads = Router(t, allow_reads_when_down=True)
    set_ = table.lookup([b"set"])
    assert reads.check_script_call(caller, set_, [b"SET", B, b"1"], Keys(), True) == \
        b"ERR Script attempted to execute a write command while the cluster is down and readonly"


def test_script_without_declared_keys_takes_its_first_keys_slot():
    t, *_ = topology()
    router = Router(t)
    caller = ClientState(id=1)
    ask(router, "EVAL", b"#!lua\nreturn 1", b"0", client=caller)
    assert caller.cluster_slot == -1
    get = table.lookup([b"get"])
    assert router.check_script_call(caller, get, [b"GET", C], Keys(), False) is None
    assert caller.cluster_slot == SLOT_C
    assert router.check_script_call(caller, get, [b"GET", B], Keys(), False) == \
        b"ERR Script attempted to access keys that do not hash to the same slot"


def test_blocked_refusal():
    t, me, other, third = topology()
    router = Router(t)
    client = ClientState(id=1)
    assert router.blocked_refusal(client, [B], Keys(), False) is None
    t.assign(SLOT_B, other)
    assert router.blocked_refusal(client, [B], Keys(), False) == \
        b"MOVED %d 10.0.0.2:7001" % SLOT_B
    t.importing_from[SLOT_B] = other
    assert router.blocked_refusal(client, [B], Keys(), False) is None
    t.unassign(SLOT_C)
    assert router.blocked_refusal(client, [C], Keys(), False) == b"CLUSTERDOWN Hash slot not served"
    t.state_ok = False
    assert router.blocked_refusal(client, [B], Keys(), False) == b"CLUSTERDOWN The cluster is down"
    # even with reads allowed: only a write could wake it (as Redis)
    assert Router(t, allow_reads_when_down=True).blocked_refusal(client, [B], Keys(), False) \
        == b"CLUSTERDOWN The cluster is down"


def test_refusal_codes():
    t, *_ = topology()
    refusal, slot = Router(t).query(ClientState(id=1), table.lookup([b"get"]), [b"GET", A], Keys())
    assert refusal is not None and refusal.code == Refusal.MOVED and slot == SLOT_A


def _every_spec():
    for spec in table.COMMANDS.values():
        yield spec
        yield from (spec.subcommands or {}).values()


@pytest.mark.parametrize("extra", [0, 1, 2, 5])
def test_cached_key_positions_are_getkeys_positions(extra):
    """The router's per-command positions find what COMMAND GETKEYS finds
    (shard channels included), for every command of the table."""
    from tidelog.cluster.routing import key_positions
    from tidelog.commands.key_specs import command_key_positions, fixed_key_ranges

    checked = 0
    for spec in _every_spec():
        if spec.handler is None:
            continue
        name = spec.name.split("|")
        argv = [n.encode() for n in name]
        argv += [b"k%d" % i for i in range(max(abs(spec.arity), len(argv)) - len(argv) + extra)]
        expected = [at for at, _ in command_key_positions(spec, argv)]
        assert key_positions(spec, argv, fixed_key_ranges(spec, not_keys=True)) == expected, spec.name
        checked += 1
    assert checked > 200


def test_redirections_give_a_plain_client_the_plain_port_under_tls_cluster():
    """7.0.15: under tls-cluster a node's port is its TLS port; a client of
    the plain port is sent to the node's pport (when it announced one)."""
    t, me, other, _ = topology()
    other.pport = 6001
    router = Router(t)
    plain, secure = ClientState(id=1), ClientState(id=2, tls=True)
    assert ask(router, "GET", A, client=plain) == b"MOVED %d 10.0.0.2:7001" % SLOT_A
    router.tls_cluster = True
    assert ask(router, "GET", A, client=plain) == b"MOVED %d 10.0.0.2:6001" % SLOT_A
    assert ask(router, "GET", A, client=secure) == b"MOVED %d 10.0.0.2:7001" % SLOT_A
    other.pport = 0
    assert ask(router, "GET", A, client=plain) == b"MOVED %d 10.0.0.2:7001" % SLOT_A
    other.pport = 6001
    blocked = router.blocked_refusal(plain, [A], Keys(), False)
    assert blocked == b"MOVED %d 10.0.0.2:6001" % SLOT_A
