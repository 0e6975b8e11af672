"""CLUSTER SLOT-STATS without sockets: the counters (tidelog.slotstats), the
argument errors and orderings of the handler over an engine in cluster mode
(tests/support/cluster_control.py), and what a call charges to its slot with
cluster-slot-stats-enabled.  The texts and numbers are Valkey 9.1's (measured
on valkey-server 9.1.2; tests/differential/test_cluster_slot_stats_diff.py
compares them byte for byte)."""

from __future__ import annotations

import pytest

from tests.support.cluster_control import ClusterHarness
from tests.support.rawclient import encode_command
from tidelog.cluster.messages import SLAVE
from tidelog.cluster.nodes import Node
from tidelog.engine.slots import count_slot_call, shard_message_bytes
from tidelog.keyslot import key_slot
from tidelog.resp.encoder import encode
from tidelog.resp.replies import ErrorReply, Map, Push, Replies
from tidelog.slotstats import SlotStats, order_slots, request_bytes

LIMIT_ERR = b"ERR Limit has to lie in between 1 and 16384 (maximum number of slots)."
METRIC_ERR = b"ERR Unrecognized sort metric for ORDERBY."
REPEATED_ERR = b"ERR Multiple filters of the same type are disallowed."
SLOT_ERR = b"ERR Invalid or out of range slot"

# Keys of slots 0, 1 and 2.
K0, K1, K2 = b"k596", b"k37999", b"k2603"


# -- the counters -------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [[b"get", b"k"], [b"set", b"k" * 10, b"v" * 100],
                                  [b"x"] * 12, [b""], [b"a" * 1000, b""]])
def test_request_bytes_is_the_multibulk_size(argv):
    assert request_bytes(argv) == len(encode_command(argv))


@pytest.mark.parametrize("channel,message", [(b"k596", b"hello"), (b"c" * 20, b""),
                                             (b"x", b"m" * 300)])
def test_shard_message_bytes_is_the_push_size(channel, message):
    push = Push([b"smessage", channel, message])
    assert shard_message_bytes(channel, message) == len(encode(push, 2)) == len(encode(push, 3))


@pytest.mark.parametrize("reply", [b"", b"v", b"x" * 10, b"y" * 12345, 0, -17, 10**18, None,
                                   [b"a", 1, [b"b"]], Map([(b"k", 1)]), Replies([b"a", 2]),
                                   ErrorReply(b"ERR x"), True])
@pytest.mark.parametrize("protocol", [2, 3])
def test_reply_bytes_are_the_encoded_size(reply, protocol):
    stats = SlotStats()
    count_slot_call(stats, 9, None, reply, protocol)
    items = reply.items if isinstance(reply, Replies) else [reply]
    assert stats.net_out[9] == sum(len(encode(item, protocol)) for item in items)
    assert stats.net_in[9] == 0


def test_order_slots_ties_by_ascending_slot():
    slots = [0, 1, 2, 3, 10]
    values = [5, 7, 5, 0, 7]
    assert order_slots(slots, values, 16384, True) == [1, 10, 0, 2, 3]
    assert order_slots(slots, values, 16384, False) == [3, 0, 2, 1, 10]
    assert order_slots(slots, values, 2, True) == [1, 10]
    assert order_slots(slots, values, 1, False) == [3]
    assert order_slots([], [], 5, True) == []


def test_reset_and_reset_slot():
    stats = SlotStats(enabled=True)
    for counter in (stats.cpu_ns, stats.net_in, stats.net_out):
        counter[7] = counter[8] = 3
    stats.reset_slot(7)
    assert (stats.cpu_ns[7], stats.net_in[7], stats.net_out[7]) == (0, 0, 0)
    assert (stats.cpu_ns[8], stats.net_in[8], stats.net_out[8]) == (3, 3, 3)
    stats.reset()
    assert not any(stats.cpu_ns) and not any(stats.net_in) and not any(stats.net_out)
    assert len(stats.net_in) == 16384


def test_metrics_follow_the_option():
    stats = SlotStats()
    assert stats.metrics() == (b"key-count",)
    stats.enabled = True
    assert stats.metrics() == (b"key-count", b"cpu-usec", b"network-bytes-in",
                               b"network-bytes-out")
    stats.cpu_ns[3] = 2999
    assert stats.value(b"cpu-usec", 3, lambda slot: 0) == 2  # microseconds, truncated
    assert stats.row(3, lambda slot: 9)[0] == (b"key-count", 9)


# -- the command --------------------------------------------------------------------------
def node(slots) -> ClusterHarness:
    """A master serving ``slots``, its cluster state ok."""
    h = ClusterHarness()
    for slot in slots:
        h.topology.assign(slot, h.me)
    h.topology.state_ok = True
    return h


@pytest.fixture
def h() -> ClusterHarness:
    return node([*range(0, 6), *range(10, 13)])


def stats(h, *args):
    return h.ok("CLUSTER", "SLOT-STATS", *args)


def row(slot, **metrics):
    return [slot, Map([(name.replace("_", "-").encode(), value)
                       for name, value in metrics.items()])]


def test_slotsrange_gives_the_owned_slots_of_the_range(h):
    assert stats(h, "SLOTSRANGE", 0, 16383) == [row(s, key_count=0) for s in
                                               (0, 1, 2, 3, 4, 5, 10, 11, 12)]
    assert stats(h, "slotsrange", 4, 11) == [row(s, key_count=0) for s in (4, 5, 10, 11)]
    assert stats(h, "SLOTSRANGE", 7, 8) == []
    assert stats(h, "SLOTSRANGE", 12, 12) == [row(12, key_count=0)]


def test_key_count_and_orderby(h):
    for key in (b"{%s}a" % K1, b"{%s}b" % K1, b"{%s}a" % K2, b"{%s}b" % K2, b"{%s}c" % K2, K0):
        h.ok("SET", key, "v")
    assert stats(h, "SLOTSRANGE", 0, 3) == [row(0, key_count=1), row(1, key_count=2),
                                            row(2, key_count=3), row(3, key_count=0)]
    # DESC unless ASC; ties by ascending slot; LIMIT
    assert [r[0] for r in stats(h, "ORDERBY", "key-count")] == [2, 1, 0, 3, 4, 5, 10, 11, 12]
    assert [r[0] for r in stats(h, "ORDERBY", "KEY-COUNT", "LIMIT", 4)] == [2, 1, 0, 3]
    assert [r[0] for r in stats(h, "ORDERBY", "key-count", "asc", "limit", 4)] == [3, 4, 5, 10]
    assert [r[0] for r in stats(h, "ORDERBY", "key-count", "DESC", "LIMIT", 16384)] == \
        [2, 1, 0, 3, 4, 5, 10, 11, 12]


@pytest.mark.parametrize("args,error", [
    (["SLOTSRANGE", 1], b"ERR unknown subcommand or wrong number of arguments for "
                        b"'SLOT-STATS'. Try CLUSTER HELP."),
    (["SLOTSRANGE", 1, 2, 3], b"ERR unknown subcommand or wrong number of arguments for "
                              b"'SLOT-STATS'. Try CLUSTER HELP."),
    (["FOO", 1, 2], b"ERR unknown subcommand or wrong number of arguments for "
                    b"'SLOT-STATS'. Try CLUSTER HELP."),
    (["SLOTSRANGE", 5, 1], b"ERR Start slot number 5 is greater than end slot number 1"),
    (["SLOTSRANGE", -1, 2], SLOT_ERR),
    (["SLOTSRANGE", 0, 16384], SLOT_ERR),
    (["SLOTSRANGE", "a", 2], SLOT_ERR),
    (["SLOTSRANGE", 1, "x"], SLOT_ERR),
    (["ORDERBY", "foo"], METRIC_ERR),
    (["ORDERBY", "cpu-usec"], METRIC_ERR),  # only while cluster-slot-stats-enabled
    (["ORDERBY", "memory-bytes"], METRIC_ERR),
    (["ORDERBY", "foo", "LIMIT", 0], METRIC_ERR),
    (["ORDERBY", "key-count", "LIMIT"], b"ERR syntax error"),
    (["ORDERBY", "key-count", "LIMIT", 0], LIMIT_ERR),
    (["ORDERBY", "key-count", "LIMIT", 16385], LIMIT_ERR),
    (["ORDERBY", "key-count", "LIMIT", -1], LIMIT_ERR),
    (["ORDERBY", "key-count", "LIMIT", "x"], LIMIT_ERR),
    (["ORDERBY", "key-count", "LIMIT", 1, "LIMIT", 0], LIMIT_ERR),
    (["ORDERBY", "key-count", "LIMIT", 2, "LIMIT", 3], REPEATED_ERR),
    (["ORDERBY", "key-count", "LIMIT", 1, "LIMIT"], b"ERR syntax error"),
    (["ORDERBY", "key-count", "ASC", "DESC"], REPEATED_ERR),
    (["ORDERBY", "key-count", "ASC", "ASC"], REPEATED_ERR),
    (["ORDERBY", "key-count", "ASC", "LIMIT"], b"ERR syntax error"),
    (["ORDERBY", "key-count", "foo"], b"ERR syntax error"),
    (["ORDERBY", "key-count", "LIMIT", 2, "foo"], b"ERR syntax error"),
])
def test_errors(h, args, error):
    assert h.err("CLUSTER", "SLOT-STATS", *args) == error


def test_arity_and_cluster_mode(h):
    assert h.err("CLUSTER", "SLOT-STATS", "ORDERBY") == \
        b"ERR wrong number of arguments for 'cluster|slot-stats' command"
    from tests.support.engine_harness import Harness
    plain = Harness()
    assert plain.err("CLUSTER", "SLOT-STATS", "SLOTSRANGE", 0, 1) == \
        b"ERR This instance has cluster support disabled"


def test_a_replica_reports_its_masters_slots():
    h = ClusterHarness()
    master = Node(b"m" * 40, 0, ip=b"10.0.0.9", port=7009, cport=17009)
    h.topology.add_node(master)
    h.topology.set_master(master, None)
    h.topology.set_master(h.me, master)
    h.me.flags = (h.me.flags & ~1) | SLAVE  # (not a master any more)
    for slot in (3, 4):
        h.topology.assign(slot, master)
    assert [r[0] for r in stats(h, "SLOTSRANGE", 0, 100)] == [3, 4]
    assert [r[0] for r in stats(h, "ORDERBY", "key-count")] == [3, 4]


# -- what is counted ----------------------------------------------------------------------
def enabled(h) -> ClusterHarness:
    h.ok("CONFIG", "SET", "cluster-slot-stats-enabled", "yes")
    return h


def counts(h, slot) -> tuple[int, int]:
    """(network-bytes-in, network-bytes-out) of ``slot``."""
    (_, metrics), = stats(h, "SLOTSRANGE", slot, slot)
    values = dict(metrics.items)
    return values[b"network-bytes-in"], values[b"network-bytes-out"]


def test_requests_and_replies_are_charged_to_their_slot(h):
    enabled(h)
    assert [name for name, _ in stats(h, "SLOTSRANGE", 0, 0)[0][1].items] == \
        [b"key-count", b"cpu-usec", b"network-bytes-in", b"network-bytes-out"]
    h.ok("SET", K0, "hello")  # the numbers valkey-server 9.1 gives
    assert counts(h, 0) == (34, 5)
    h.ok("GET", K0)
    assert counts(h, 0) == (57, 16)
    h.ok("GET", K1)
    assert counts(h, 1) == (25, 5)
    h.err("INCR", K0)
    h.err("LPUSH", K0, "x")
    assert counts(h, 0) == (113, 130)
    assert counts(h, 2) == (0, 0)
    h.ok("PING")  # no key: no slot
    h.err("MGET", K0, K1)  # CROSSSLOT: no slot
    assert counts(h, 0) == (113, 130) and counts(h, 1) == (25, 5)


def test_resp3_replies_are_counted_as_sent(h):
    enabled(h)
    h.client.protocol = 3
    h.ok("HSET", K0, "f", "v")
    h.ok("HGETALL", K0)
    assert counts(h, 0)[1] == len(b":1\r\n") + len(b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n")


def test_a_refused_command_counts_its_request_only():
    h = node(range(6))  # not every slot: the cluster is down
    h.topology.state_ok = False
    enabled(h)
    assert h.err("SET", K0, "hello") == b"CLUSTERDOWN The cluster is down"
    assert counts(h, 0) == (34, 0)


def test_nothing_is_counted_while_the_option_is_off(h):
    h.ok("SET", K0, "hello")
    enabled(h)
    assert counts(h, 0) == (0, 0)
    h.ok("GET", K0)
    h.ok("CONFIG", "SET", "cluster-slot-stats-enabled", "no")
    h.ok("GET", K0)
    enabled(h)
    assert counts(h, 0) == (23, 11)


def test_resetstat_and_a_slot_changing_owner_reset_the_counters(h):
    enabled(h)
    h.ok("GET", K0)
    h.ok("GET", K1)
    h.ok("CONFIG", "RESETSTAT")
    assert counts(h, 0) == counts(h, 1) == (0, 0)
    h.ok("GET", K0)
    h.ok("GET", K1)
    h.topology.unassign(1)
    h.topology.assign(1, h.me)
    assert counts(h, 1) == (0, 0)
    assert counts(h, 0) == (23, 5)


def test_a_blocked_command_counts_when_served(h):
    enabled(h)
    other = h.new_client()
    from tidelog.engine import BLOCKED
    assert h("BLPOP", K1, 0, client=other) is BLOCKED
    assert counts(h, 1) == (0, 0)
    h.ok("RPUSH", K1, "v")
    assert other.inbox == [[K1, b"v"]]
    # BLPOP's request (34) and reply (23), RPUSH's (34 and 4)
    assert counts(h, 1) == (34 + 34, 23 + 4)


def test_spublish_counts_the_messages_to_its_subscribers(h):
    enabled(h)
    subscriber = h.new_client()
    h.ok("SSUBSCRIBE", K0, client=subscriber)
    subscribed = counts(h, 0)
    assert subscribed == (31, 35)
    assert h.ok("SPUBLISH", K0, "hello") == 1
    assert counts(h, 0) == (31 + 39, 35 + 4 + 39)


def test_a_script_counts_its_reply_only(h):
    enabled(h)
    h.ok("SET", K0, "a")
    h.ok("CONFIG", "RESETSTAT")
    assert h.ok("EVAL", "return redis.call('get', KEYS[1])", 1, K0) == b"a"
    (_, metrics), = stats(h, "SLOTSRANGE", 0, 0)
    assert dict(metrics.items) == {b"key-count": 1, b"cpu-usec": 0, b"network-bytes-in": 0,
                                   b"network-bytes-out": 7}


def test_a_transaction_charges_multi_with_its_exec(h):
    enabled(h)
    h.ok("MULTI")
    h.ok("GET", K0)
    h.ok("PING")  # no key: nothing
    assert len(h.ok("EXEC")) == 2
    assert counts(h, 0)[0] == 15 + 23 + 14  # MULTI, GET k596, EXEC (Valkey's 52)
    h.ok("CONFIG", "RESETSTAT")
    h.ok("MULTI")
    h.ok("GET", K0)
    h.ok("DISCARD")
    assert counts(h, 0) == (23, 0)  # the queued GET only


def test_cpu_usec_grows_with_calls(h):
    enabled(h)
    for _ in range(200):
        h.ok("SET", K2, "x" * 1000)
    (_, metrics), = stats(h, "SLOTSRANGE", 2, 2)
    assert dict(metrics.items)[b"cpu-usec"] > 0
    assert [r[0] for r in stats(h, "ORDERBY", "cpu-usec", "LIMIT", 1)] == [2]
    assert [r[0] for r in stats(h, "ORDERBY", "network-bytes-in", "LIMIT", 1)] == [2]
    assert [r[0] for r in stats(h, "ORDERBY", "network-bytes-out", "ASC", "LIMIT", 1)] == [0]


def test_the_keys_hash_to_slots_0_1_2():
    assert key_slot(K0) == 0 and key_slot(K1) == 1 and key_slot(K2) == 2
