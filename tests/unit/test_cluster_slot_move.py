"""A slot moved by hand (what ``redis-cli --cluster reshard`` does for one
slot) ends with one owner on every node, whatever the order in which the
messages of the move arrive.

The cluster is the one ``redis-cli --cluster create`` makes of three nodes
(config epochs 1, 2, 3) plus a replica of the first master, as an in-memory
network of real state machines (tests/support/cluster_net.py); each node
has an engine with the real CLUSTER commands over its node table.  The slot
goes from the third master to the first and back, as the steps of
``redis-cli``'s clusterManagerMoveSlot: target SETSLOT IMPORTING, source
SETSLOT MIGRATING, SETSLOT NODE on the target, on the source, on the other
master (no keys: the MIGRATE step has nothing to model).  Between the steps
and around them the nodes' timers run and the waiting messages are delivered
in an order the test chooses: a ping sent before a SETSLOT may arrive after
a later one on another node.  The move back starts as soon as every node
names the same owners (what the Spark test waits for), so possibly before
every node heard the first move's epoch.  Then every message is delivered,
the timers run, and every node must name the same owner for every slot.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.cluster_net import Net, NetNode
from tests.support.engine_harness import Harness
from tidelog.cluster.actions import outbound_link
from tidelog.cluster.control import Control
from tidelog.cluster.messages import PING
from tidelog.cluster.routing import Router
from tidelog.keyslot import SLOTS
from tidelog.resp.replies import ErrorReply

TIMEOUT = 5000
"""cluster-node-timeout of the Spark test's nodes: a schedule holding the
messages back for a few hundred ms fails nobody."""
SLOT = 13907
"""The slot of ``topic:{0}`` (the Spark test's moved key): the third master's."""


def cluster() -> tuple[Net, list[Harness]]:
    """Three masters with epochs 1, 2, 3 and the slots spread over them
    (``--cluster create``), then node 3 a replica of node 0 (``add-node
    --cluster-slave``); each node with an engine whose CLUSTER commands act
    on its node table.  Returned once every node agrees and is ok."""
    net = Net(4, node_timeout=TIMEOUT)
    for i, n in enumerate(net.nodes[:3]):
        n.me.config_epoch = n.topology.current_epoch = i + 1
    net.form(slots=False)
    net.spread_slots(net.nodes[:3])
    replica = net[3]
    net.call(replica.state.replicate, replica.view(net[0]), net.now)
    engines = []
    for n in net.nodes:
        h = Harness()
        h.engine.config.set("cluster-enabled", "yes", at_startup=True)
        h.engine.cluster = Control(n.topology, n.state)
        h.engine.set_slot_router(Router(n.topology))
        engines.append(h)
    net.run_until(lambda: agreed(net) and all(n.topology.state_ok for n in net.nodes), 20_000)
    return net, engines


def owners(n: NetNode) -> list[bytes | None]:
    return [None if o is None else o.name for o in n.topology.owners]


def agreed(net: Net) -> bool:
    first = owners(net[0])
    return all(owners(n) == first for n in net.nodes[1:])


def setslot(h: Harness, n: NetNode, *args: object) -> None:
    reply = h("CLUSTER", "SETSLOT", SLOT, *args)
    assert not isinstance(reply, ErrorReply), (n, args, reply)


def move_steps(net: Net, engines: list[Harness], source: int, target: int) -> list:
    """The SETSLOT commands of moving SLOT from ``source`` to ``target``,
    in redis-cli's order, each a function to call."""
    src, dst = net[source], net[target]

    def on(i: int, *args: object):
        return lambda: setslot(engines[i], net[i], *args)

    steps = [on(target, "IMPORTING", src.name), on(source, "MIGRATING", dst.name),
             on(target, "NODE", dst.name), on(source, "NODE", dst.name)]
    steps += [on(i, "NODE", dst.name) for i in range(3) if i not in (source, target)]
    return steps


def play(net: Net, steps: list, schedule: list[int]) -> None:
    """The commands ``steps`` with ``schedule`` saying what happens around
    them: 0 the next command, 1 a tick of every node's timer, k >= 2 the
    delivery of a waiting message (on the link of the (k - 2)-th modulo the
    number waiting; a tick when none waits).  Commands left when the
    schedule ends run one after the other; then every message is delivered."""
    steps = list(steps)
    for event in schedule:
        if event == 0:
            if steps:
                steps.pop(0)()
                net.flush()
        elif event == 1 or not net.queue:
            net.tick()
        else:
            net.deliver((event - 2) % len(net.queue))
    for step in steps:
        step()
        net.flush()
    net.pump()


def settle(net: Net, owner: NetNode) -> None:
    """Twenty seconds of timers and messages (simulated; each node pings
    each other at least every node_timeout / 2): then every node names the
    same owner for every slot, ``owner`` for SLOT, and no role changed."""
    net.run(20_000)
    assert agreed(net), [owners(n)[SLOT] for n in net.nodes]
    assert [n.me.is_master for n in net.nodes] == [True, True, True, False]
    for n in net.nodes:
        assert n.topology.owners[SLOT] is n.view(owner)
        assert not n.topology.importing_from and not n.topology.migrating_to
        assert sum(m.numslots for m in n.topology.nodes.values()) == SLOTS


def hold_ping(net: Net, sender: NetNode, to: NetNode) -> tuple:
    """A PING ``sender`` sends ``to`` now, taken off the wire (``release``
    delivers it later: a ping still in a socket buffer)."""
    sender.state.send_ping(outbound_link(sender.view(to)), PING, net.now)
    net.flush()
    return net.queue.pop()


def release(net: Net, held: tuple) -> None:
    net.queue.appendleft(held)
    net.deliver(0)


def test_a_ping_of_the_source_from_before_the_move_does_not_take_the_slot_back():
    """The move back starts before the new owner's epoch reached the other
    nodes.  The importing node's claim must still beat the old owner's last
    ping, which claims the slot with that epoch and arrives after SETSLOT
    NODE: so the epoch taken on importing is told to every node at once
    (Redis's PONG to all), and the next importer takes a greater one."""
    net, engines = cluster()
    a, b, c, _ = net.nodes
    for step in move_steps(net, engines, 2, 0):
        step()
        net.pump()
    assert a.me.config_epoch > c.me.config_epoch
    back = move_steps(net, engines, 0, 2)
    held = hold_ping(net, a, c)  # a serves the slot yet
    for step in back[:3]:  # IMPORTING, MIGRATING, NODE on c
        step()
        net.pump()
    release(net, held)
    assert c.topology.owners[SLOT] is c.me, "the importer gave the slot back to the source"
    for step in back[3:]:
        step()
        net.pump()
    settle(net, c)


EVENTS = st.lists(st.one_of(st.just(0), st.just(1), st.integers(2, 60)), max_size=80)


@settings(max_examples=30, deadline=None)
@given(EVENTS, EVENTS)
# The move back started before the importer heard the first move's epoch: it
# kept its own (no greater epoch known to it), the source's last ping took the
# slot back, and the nodes split two against two for good.
@example([20, 42, 22, 20, 59, 1, 51, 1, 1, 1, 49, 56], [2, 1, 1, 1])
def test_a_slot_moved_by_hand_and_back_has_one_owner_everywhere(there, back):
    """Each move is followed by what the Spark test's wait_agree waits for
    (every node naming the same owners), not more: the move back may start
    before every node heard the first move's epoch."""
    net, engines = cluster()
    play(net, move_steps(net, engines, 2, 0), there)
    net.run_until(lambda: agreed(net), 20_000)
    play(net, move_steps(net, engines, 0, 2), back)
    settle(net, net[2])
