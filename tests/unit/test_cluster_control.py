"""The CLUSTER subcommands through the engine, over a hand-built node table
(tidelog.cluster.control.Control, the handlers of commands/server/cluster.py):
the paths the differential tests cannot reach with one or two redis-server
nodes (failed masters, failure reports, endpoint types, a replica's RESET,
SAVECONFIG's error), what Control asks of the state machine, and the bare
engine's refusal of every subcommand."""

from __future__ import annotations

import pytest

from tests.support.cluster_control import ClusterHarness, StandInState, make_myself
from tests.support.engine_harness import NOW, Harness
from tidelog.cluster.actions import Link
from tidelog.cluster.control import Control
from tidelog.cluster.messages import FAIL_FLAG, MASTER, PFAIL, SLAVE
from tidelog.cluster.nodes import Node, Topology
from tidelog.cluster.texts import nodes_conf
from tidelog.commands.table import COMMANDS
from tidelog.keyspace import SlotKeyIndex
from tidelog.resp.encoder import encode
from tidelog.resp.replies import OK, ErrorReply, Map, Push, SimpleString, Verbatim
from tidelog.server.cluster_bus import ClusterShell

B, C, D = (c.encode() * 40 for c in "bcd")
DISABLED = ErrorReply(b"ERR This instance has cluster support disabled")


def err(text: str) -> ErrorReply:
    return ErrorReply(text.encode())


def three() -> ClusterHarness:
    """Myself (master of 0-99), b (master of 100-16383, a replica c), d a
    replica of myself."""
    h = ClusterHarness()
    t = h.topology
    b = Node(B, MASTER, ip=b"10.0.0.2", port=7001, cport=17001, config_epoch=5,
             hostname=b"b.example", link=Link(inbound=False, ctime=1))
    c = Node(C, SLAVE, ip=b"10.0.0.3", port=7002, cport=17002, repl_offset=100)
    d = Node(D, SLAVE, ip=b"10.0.0.4", port=7003, cport=17003)
    for n in (b, c, d):
        t.add_node(n)
    t.set_master(c, b)
    t.set_master(d, h.me)
    for slot in range(100):
        t.assign(slot, h.me)
    for slot in range(100, 16384):
        t.assign(slot, b)
    h.me.config_epoch = 3
    t.current_epoch = 5
    return h


# -- outside cluster mode ------------------------------------------------------------------
ONE_VALID_CALL = {
    "addslots": ["1"], "addslotsrange": ["1", "2"], "bumpepoch": [],
    "count-failure-reports": ["x"], "countkeysinslot": ["x"], "delslots": ["x"],
    "delslotsrange": ["1", "2"], "failover": ["x", "y"], "flushslots": [], "forget": ["x"],
    "getkeysinslot": ["x", "y"], "help": [], "info": [], "keyslot": ["k"], "links": [],
    "meet": ["x", "y", "z", "w"], "myid": [], "myshardid": [], "nodes": [], "replicas": ["x"],
    "replicate": ["x"], "reset": ["x"], "saveconfig": [], "set-config-epoch": ["x"],
    "setslot": ["x", "y"], "shards": [], "slaves": ["x"], "slot-stats": ["a", "b"], "slots": [],
}


def test_every_subcommand_is_refused_outside_cluster_mode():
    h = Harness()
    assert set(ONE_VALID_CALL) == set(COMMANDS["cluster"].subcommands)
    for sub, args in ONE_VALID_CALL.items():
        # bad arguments too: the refusal comes first, as in Redis
        assert h("CLUSTER", sub, *args) == DISABLED, sub


def test_the_handlers_say_their_syntax_and_cost():
    for sub, spec in COMMANDS["cluster"].subcommands.items():
        doc = spec.handler.__doc__ or ""
        assert doc.splitlines()[0].startswith(f"CLUSTER {sub.upper()}"), sub
        assert "Cost: O(" in doc, sub


# -- reading ----------------------------------------------------------------------------
def test_help_in_cluster_mode():
    h = ClusterHarness()
    lines = h("CLUSTER", "HELP")
    assert lines[0] == SimpleString(b"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
    assert lines[-1] == SimpleString(b"    Prints this help.")
    assert len(lines) == 56


def test_nodes_and_info_are_verbatim_text():
    h = three()
    nodes = h("CLUSTER", "NODES")
    assert isinstance(nodes, Verbatim) and nodes.text.count(b"\n") == 4
    assert encode(nodes, 3).startswith(b"=%d\r\ntxt:" % (len(nodes.text) + 4))
    h.state.stats_sent[0], h.state.stats_sent[4] = 7, 2  # ping, publish
    h.state.stats_received[1] = 3
    h.control.links_buffer_limit_exceeded = 1
    info = h("CLUSTER", "INFO").text.decode().split("\r\n")
    assert info[:9] == ["cluster_state:fail", "cluster_slots_assigned:16384",
                        "cluster_slots_ok:16384", "cluster_slots_pfail:0", "cluster_slots_fail:0",
                        "cluster_known_nodes:4", "cluster_size:0", "cluster_current_epoch:5",
                        "cluster_my_epoch:3"]
    assert info[9:] == ["cluster_stats_messages_ping_sent:7",
                        "cluster_stats_messages_publish_sent:2", "cluster_stats_messages_sent:9",
                        "cluster_stats_messages_pong_received:3",
                        "cluster_stats_messages_received:3",
                        "total_cluster_links_buffer_limit_exceeded:1", ""]


def test_info_counts_failing_slots_and_a_replicas_epoch():
    h = three()
    b = h.topology.nodes[B]
    b.flags |= PFAIL
    h.topology.assign(50, Node(D[:39] + b"e", MASTER | FAIL_FLAG))
    info = h("CLUSTER", "INFO").text
    assert b"cluster_slots_ok:99\r\ncluster_slots_pfail:16284\r\ncluster_slots_fail:1\r\n" in info
    h.topology.set_master(h.me, b)
    assert b"cluster_my_epoch:5\r\n" in h("CLUSTER", "INFO").text


def test_slots_merges_ranges_and_leaves_out_unavailable_replicas():
    h = three()
    h.topology.assign(200, h.me)
    reply = h("CLUSTER", "SLOTS")
    me = [b"127.0.0.1", 7000, h.me.name, Map([])]
    b = [b"10.0.0.2", 7001, B, Map([(b"hostname", b"b.example")])]
    c = [b"10.0.0.3", 7002, C, Map([])]
    # d (offset 0, nothing replicated yet) is left out; c is listed
    assert reply == [[0, 99, me], [100, 199, b, c], [200, 200, me], [201, 16383, b, c]]
    h.topology.nodes[C].flags |= FAIL_FLAG
    assert h("CLUSTER", "SLOTS")[1] == [100, 199, b]


@pytest.mark.parametrize("endpoint_type, me, b", [
    ("hostname", [b"?", 7000, None, Map([(b"ip", b"127.0.0.1")])],
     [b"b.example", 7001, B, Map([(b"ip", b"10.0.0.2")])]),
    ("unknown-endpoint", [None, 7000, None, Map([(b"ip", b"127.0.0.1")])],
     [None, 7001, B, Map([(b"ip", b"10.0.0.2"), (b"hostname", b"b.example")])]),
])
def test_slots_endpoint_types(endpoint_type, me, b):
    h = three()
    me[2] = h.me.name
    h.engine.config.set("cluster-preferred-endpoint-type", endpoint_type)
    reply = h("CLUSTER", "SLOTS")
    assert reply[0][2] == me and reply[1][2] == b
    shard_b = dict(h("CLUSTER", "SHARDS")[1].items[1][1][0].items)
    assert shard_b[b"endpoint"] == (b"b.example" if endpoint_type == "hostname" else b"")


def test_shards():
    h = three()
    h.topology.nodes[C].flags |= FAIL_FLAG
    h.engine.replication.offset = 0
    shards = h("CLUSTER", "SHARDS")
    assert [dict(s.items)[b"slots"] for s in shards] == [[0, 99], [100, 16383]]
    mine = [dict(n.items) for n in dict(shards[0].items)[b"nodes"]]
    assert [n[b"id"] for n in mine] == [h.me.name, D]
    assert mine[0] == {b"id": h.me.name, b"port": 7000, b"ip": b"127.0.0.1",
                       b"endpoint": b"127.0.0.1", b"role": b"master",
                       b"replication-offset": 0, b"health": b"online"}
    assert mine[1][b"role"] == b"replica" and mine[1][b"health"] == b"loading"
    theirs = [dict(n.items) for n in dict(shards[1].items)[b"nodes"]]
    assert theirs[0][b"hostname"] == b"b.example"
    assert list(theirs[0])[:5] == [b"id", b"port", b"ip", b"endpoint", b"hostname"]
    assert theirs[1][b"health"] == b"fail" and theirs[1][b"replication-offset"] == 100


def test_links():
    h = three()
    b = h.topology.nodes[B]
    b.link = Link(inbound=False, ctime=11, node=b, send_buffer_bytes=40, events="rw")
    b.inbound_link = Link(inbound=True, ctime=12, node=b)
    h.topology.nodes[C].inbound_link = Link(inbound=True, ctime=13)  # not yet named: not shown
    assert h("CLUSTER", "LINKS") == [
        Map([(b"direction", b"to"), (b"node", B), (b"create-time", 11), (b"events", b"rw"),
             (b"send-buffer-allocated", 40), (b"send-buffer-used", 40)]),
        Map([(b"direction", b"from"), (b"node", B), (b"create-time", 12), (b"events", b"r"),
             (b"send-buffer-allocated", 0), (b"send-buffer-used", 0)])]


def test_myid_and_myshardid():
    h = three()
    assert h("CLUSTER", "MYID") == h.me.name
    assert h("CLUSTER", "MYSHARDID") == h.me.shard_id
    b = h.topology.nodes[B]
    assert not b.shard_id  # (a node loaded from a 7.0 nodes.conf has none)
    h.topology.set_master(h.me, b)
    shard = h("CLUSTER", "MYSHARDID")
    assert len(shard) == 40 and shard == b.shard_id == h("CLUSTER", "MYSHARDID")


def test_replicas_lines():
    h = three()
    assert h("CLUSTER", "REPLICAS", B.decode()) == [
        b"%s 10.0.0.3:7002@17002 slave %s 0 0 5 disconnected" % (C, B)]
    assert h("CLUSTER", "SLAVES", C.decode()) == err("ERR The specified node is not a master")


def test_count_failure_reports_drops_the_stale_ones():
    h = three()
    b = h.topology.nodes[B]
    h.state.settings.node_timeout = 1000
    b.fail_reports = {C: NOW - 2000, D: NOW - 2001, h.me.name: NOW}
    assert h("CLUSTER", "COUNT-FAILURE-REPORTS", B.decode()) == 2
    assert set(b.fail_reports) == {C, h.me.name}


def test_keys_in_slots_without_the_slot_index():
    """The keys of a slot are read by scanning the database when it keeps no
    per-slot index (an engine never given a router)."""
    h = ClusterHarness()
    h = ClusterHarness.__new__(ClusterHarness)
    Harness.__init__(h)  # no router: the plain index
    h.me = make_myself()
    h.topology = Topology(h.me)
    h.engine.cluster = Control(h.topology, StandInState(h.topology))
    for key in (b"{x}1", b"{x}2", b"y"):
        h("SET", key, "v")
    assert not isinstance(h.engine.dbs[0].key_index, SlotKeyIndex)
    slot = h("CLUSTER", "KEYSLOT", "x")
    assert h("CLUSTER", "COUNTKEYSINSLOT", slot) == 2
    assert h("CLUSTER", "GETKEYSINSLOT", slot, 1) == [b"{x}1"]


# -- changing the table ------------------------------------------------------------------------
def test_slot_changes_tell_the_state_machine_and_kick_the_shell():
    h = ClusterHarness()
    kicks = []
    h.control.kick = lambda: kicks.append(1)
    assert h("CLUSTER", "ADDSLOTSRANGE", "0", "9") == OK
    assert h("CLUSTER", "DELSLOTS", "3") == OK
    assert h("CLUSTER", "ADDSLOTS", "3", "3") == err("ERR Slot 3 specified multiple times")
    assert h.state.calls == [("claim_slots_changed",)] * 2 and len(kicks) == 2
    assert h.topology.slot_ranges(h.me) == [(0, 2), (4, 9)]


def test_addslots_ends_an_import():
    h = three()
    h.topology.importing_from[200] = h.topology.nodes[B]
    h.topology.unassign(200)
    assert h("CLUSTER", "ADDSLOTS", "200") == OK
    assert 200 not in h.topology.importing_from and h.topology.owners[200] is h.me


def test_setslot_node_myself_while_importing_bumps_the_epoch():
    h = three()
    b = h.topology.nodes[B]
    assert h("CLUSTER", "SETSLOT", "500", "IMPORTING", B.decode()) == OK
    assert h("CLUSTER", "SETSLOT", "500", "NODE", h.me.name.decode()) == OK
    assert ("bump_epoch", True) in h.state.calls
    assert h.state.calls[-2:] == [("broadcast_pong", False), ("claim_slots_changed",)]
    assert h.me.config_epoch == 6 and h.topology.owners[500] is h.me
    assert 500 not in h.topology.importing_from and b.numslots == 16284 - 1


def test_setslot_target_must_be_a_master():
    h = three()
    for action in ("MIGRATING", "IMPORTING", "NODE"):
        slot = "5" if action == "MIGRATING" else "500"
        assert h("CLUSTER", "SETSLOT", slot, action, C.decode()) == \
            err("ERR Target node is not a master")


def test_setslot_giving_away_the_last_slot_follows_its_new_owner():
    h = ClusterHarness()
    b = Node(B, MASTER, ip=b"10.0.0.2", port=7001, cport=17001)
    h.topology.add_node(b)
    h("CLUSTER", "ADDSLOTS", "7")
    h.engine.config.set("cluster-allow-replica-migration", "no")
    assert h("CLUSTER", "SETSLOT", "7", "NODE", B.decode()) == OK
    assert h.me.is_master  # not allowed to migrate
    h.topology.assign(7, h.me)
    h.engine.config.set("cluster-allow-replica-migration", "yes")
    assert h("CLUSTER", "SETSLOT", "7", "NODE", B.decode()) == OK
    assert ("replicate", B) in h.state.calls and h.me.master is b


def test_meet_normalises_the_address():
    h = ClusterHarness()
    assert h("CLUSTER", "MEET", "0:0::1", "7001") == OK
    assert h("CLUSTER", "MEET", "10.0.0.2", "7002", "7100") == OK
    assert h("CLUSTER", "MEET", "10.0.0.2\x00", "7002") == \
        ErrorReply(b"ERR Invalid node address specified: 10.0.0.2\x00:7002")
    assert h("CLUSTER", "MEET", "\xff", "1") == \
        ErrorReply(b"ERR Invalid node address specified: \xc3\xbf:1")
    assert h.state.calls == [("meet", b"::1", 7001, 17001), ("meet", b"10.0.0.2", 7002, 7100)]


def test_forget_and_replicate():
    h = three()
    assert h("CLUSTER", "FORGET", D.decode()) == OK
    assert h.state.calls == [("forget", D)] and D not in h.topology.nodes
    assert h("CLUSTER", "REPLICATE", C.decode()) == \
        err("ERR I can only replicate a master, not a replica.")
    assert h("CLUSTER", "REPLICATE", B.decode()) == \
        err("ERR To set a master the node must be empty and without assigned slots.")
    h("CLUSTER", "FLUSHSLOTS")
    h.engine.dbs[0].set(b"k", b"v")  # (the router would refuse a SET: the cluster is down)
    assert h("CLUSTER", "REPLICATE", B.decode()) == \
        err("ERR To set a master the node must be empty and without assigned slots.")
    h.engine.dbs[0].flush()
    assert h("CLUSTER", "REPLICATE", B.decode()) == OK
    assert h("CLUSTER", "FORGET", B.decode()) == err("ERR Can't forget my master!")


def test_failover_preconditions():
    h = three()
    assert h("CLUSTER", "FAILOVER") == err("ERR You should send CLUSTER FAILOVER to a replica")
    h.topology.set_master(h.me, None)
    h.me.flags = (h.me.flags & ~MASTER) | SLAVE  # a replica whose master is unknown
    assert h("CLUSTER", "FAILOVER", "TAKEOVER") == \
        err("ERR I'm a replica but my master is unknown to me")
    b = h.topology.nodes[B]
    h.topology.set_master(h.me, b)
    assert h("CLUSTER", "FAILOVER") == OK
    b.flags |= FAIL_FLAG
    down = err("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
    assert h("CLUSTER", "FAILOVER") == down
    b.flags &= ~FAIL_FLAG
    b.link = None
    assert h("CLUSTER", "FAILOVER") == down
    assert h("CLUSTER", "failover", "Force") == OK
    assert h("CLUSTER", "FAILOVER", "takeover") == OK
    assert [c for c in h.state.calls if c[0] == "failover"] == \
        [("failover", ""), ("failover", "force"), ("failover", "takeover")]


def test_set_config_epoch():
    h = ClusterHarness()
    assert h("CLUSTER", "SET-CONFIG-EPOCH", "0") == OK  # allowed, and it stays 0
    assert h("CLUSTER", "SET-CONFIG-EPOCH", "7") == OK
    assert (h.me.config_epoch, h.topology.current_epoch) == (7, 7)
    assert h.state.calls[-2:] == [("update_state",), ("save_config", False)]
    assert h("CLUSTER", "SET-CONFIG-EPOCH", "8") == err("ERR Node config epoch is already non-zero")
    assert h("CLUSTER", "BUMPEPOCH") == SimpleString(b"STILL 7")


def test_reset():
    h = three()
    h.engine.dbs[0].set(b"k", b"v")
    assert h("CLUSTER", "RESET") == \
        err("ERR CLUSTER RESET can't be called with master nodes containing keys")
    # a replica drops its data
    h.topology.set_master(h.me, h.topology.nodes[B])
    assert h("CLUSTER", "RESET", "hard") == OK
    assert len(h.engine.dbs[0]) == 0 and h.state.calls[-1] == ("reset", True)
    assert h("CLUSTER", "RESET", "SOFT") == OK and h.state.calls[-1] == ("reset", False)


def test_saveconfig():
    h = ClusterHarness()
    assert h("CLUSTER", "SAVECONFIG") == OK
    assert h.state.calls == [("save_config", True)]
    saved = []
    h.control.save_now = lambda: saved.append(1)
    assert h("CLUSTER", "SAVECONFIG") == OK and saved == [1]

    def fail() -> None:
        raise PermissionError(13, "Permission denied")

    h.control.save_now = fail
    assert h("CLUSTER", "SAVECONFIG") == \
        err("ERR error saving the cluster node config: Permission denied")


def test_cluster_commands_in_a_transaction():
    """redis-cli --cluster fix wraps DELSLOTS/ADDSLOTS/SETSLOT/BUMPEPOCH in MULTI."""
    h = ClusterHarness(make_myself())
    h("MULTI")
    for argv in (["CLUSTER", "ADDSLOTS", "1"], ["CLUSTER", "SETSLOT", "1", "STABLE"],
                 ["CLUSTER", "BUMPEPOCH"], ["CLUSTER", "DELSLOTS", "1", "2"]):
        assert h(*argv) == SimpleString(b"QUEUED")
    assert h("EXEC") == [OK, OK, SimpleString(b"BUMPED 1"), err("ERR Slot 2 is already unassigned")]


def test_unassigned_slots_unsubscribe_their_shard_channels():
    h = ClusterHarness()
    h("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    h.topology.state_ok = True
    sub = h.new_client()
    slot_a, slot_b = h("CLUSTER", "KEYSLOT", "a"), h("CLUSTER", "KEYSLOT", "b")
    h("SSUBSCRIBE", "a", "{a}x", client=sub)
    h("SSUBSCRIBE", "b", client=sub)
    h("SUBSCRIBE", "plain", client=sub)
    sub.inbox.clear()
    assert h("CLUSTER", "DELSLOTS", slot_a) == OK
    assert sub.inbox == [Push([b"sunsubscribe", b"a", 2]), Push([b"sunsubscribe", b"{a}x", 1])]
    assert h("CLUSTER", "DELSLOTS", slot_a - 1) == OK  # no channel there
    assert len(sub.inbox) == 2
    assert h("CLUSTER", "SETSLOT", slot_b, "NODE", h.me.name.decode()) == OK  # stays ours
    assert sub.inbox[2:] == [Push([b"sunsubscribe", b"b", 0])]
    assert sub.pubsub is not None and list(sub.pubsub.kinds[0]) == [b"plain"]
    h("SSUBSCRIBE", "b", client=sub)
    sub.inbox.clear()
    assert h("CLUSTER", "FLUSHSLOTS") == OK
    assert sub.inbox == [Push([b"sunsubscribe", b"b", 0])]


def test_saveconfig_through_the_shell(tmp_path):
    """The shell's immediate save is SAVECONFIG's: the file written, or the
    error of the write in the reply."""
    h = three()
    path = tmp_path / "nodes.conf"
    shell = ClusterShell(h.engine, h.state, str(path), None, lambda: nodes_conf(h.topology))
    h.control.save_now = shell.save_config_now
    assert h("CLUSTER", "SAVECONFIG") == OK
    assert path.read_text() == nodes_conf(h.topology)
    shell.config_path = str(tmp_path / "missing" / "nodes.conf")
    assert h("CLUSTER", "SAVECONFIG") == \
        err("ERR error saving the cluster node config: No such file or directory")
