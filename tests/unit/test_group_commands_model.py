"""A hypothesis state machine over the consumer-group commands, against a plain model.

Random XADD / XREADGROUP / XACK / XCLAIM / XAUTOCLAIM / XDEL sequences run
through the engine (fake clock, no sockets).  The model says where every
message is: unread, pending with exactly one owner, acknowledged, or dropped
(its entry was deleted and a claim removed it from the PEL).  After every
step the group's PEL, as XPENDING and XINFO report it, must agree with the
model, and every message must be in exactly one of those states.  At the
end, the recorded effects are replayed into a fresh engine, which must hold
the same pending entries, owners, last-delivered IDs and entries-read (the
AOF and replicas depend on that).  As in Redis, two things are not
propagated and so not compared: re-reading one's history (XREADGROUP with an
ID) bumps delivery counts locally only, and a consumer that never got an
entry exists only where it was created.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import tidelog.commands  # noqa: F401  (registers the commands)
from tests.support.engine_harness import Harness
from tidelog.resp.replies import NULL_ARRAY, ErrorReply

CONSUMERS = ["alice", "bob", "carol"]
consumers = st.sampled_from(CONSUMERS)


def pending_view(h: Harness) -> dict[bytes, tuple[bytes, int]]:
    """id -> (owner, delivery count), from XPENDING's extended form."""
    rows = h.ok("XPENDING", "s", "g", "-", "+", "100000")
    return {row[0]: (row[1], row[3]) for row in rows}


def groups_view(h: Harness) -> list[dict]:
    out = []
    for group in h.ok("XINFO", "GROUPS", "s"):
        fields = dict(group.items)
        out.append({k: fields[k] for k in (b"name", b"pending", b"last-delivered-id",
                                            b"entries-read")})
    return out


class GroupModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(node_entries=4)
        self.h.ok("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
        self.next_ms = 1
        self.ids: list[bytes] = []          # every entry ever added, in order
        self.live: set[bytes] = set()       # entries still in the stream
        self.state: dict[bytes, object] = {}  # id -> "unread" | ("pending", owner) | "acked" | "dropped"
        self.deliveries: dict[bytes, int] = {}
        self.last_delivered = -1            # index into self.ids

    # -- rules -----------------------------------------------------------------
    @rule(n=st.integers(1, 4))
    def xadd(self, n):
        for _ in range(n):
            id = b"%d-1" % self.next_ms
            self.next_ms += 1
            assert self.h.ok("XADD", "s", id, "f", "v") == id
            self.ids.append(id)
            self.live.add(id)
            self.state[id] = "unread"

    @rule(consumer=consumers, count=st.integers(1, 5))
    def read_new(self, consumer, count):
        reply = self.h.ok("XREADGROUP", "GROUP", "g", consumer, "COUNT", count,
                          "STREAMS", "s", ">")
        expected = [id for id in self.ids[self.last_delivered + 1:] if id in self.live][:count]
        got = [] if reply is NULL_ARRAY else [entry[0] for entry in reply[0][1]]
        assert got == expected
        for id in got:
            self.state[id] = ("pending", consumer.encode())
            self.deliveries[id] = 1
        if got:
            self.last_delivered = self.ids.index(got[-1])

    @rule(consumer=consumers)
    def read_history(self, consumer):
        reply = self.h.ok("XREADGROUP", "GROUP", "g", consumer, "STREAMS", "s", "0")
        mine = sorted((id for id, s in self.state.items() if s == ("pending", consumer.encode())),
                      key=self.ids.index)
        got = [entry[0] for entry in reply[0][1]]
        assert got == mine
        for entry in reply[0][1]:
            assert (entry[1] is NULL_ARRAY) == (entry[0] not in self.live)
            if entry[0] in self.live:  # a deleted entry comes back as nil, uncounted
                self.deliveries[entry[0]] += 1

    @precondition(lambda self: self.ids)
    @rule(data=st.data())
    def xack(self, data):
        chosen = data.draw(st.lists(st.sampled_from(self.ids), min_size=1, max_size=4, unique=True))
        expected = sum(1 for id in chosen if isinstance(self.state[id], tuple))
        assert self.h.ok("XACK", "s", "g", *chosen) == expected
        for id in chosen:
            if isinstance(self.state[id], tuple):
                self.state[id] = "acked"

    @precondition(lambda self: self.ids)
    @rule(consumer=consumers, data=st.data(), justid=st.booleans())
    def xclaim(self, consumer, data, justid):
        chosen = data.draw(st.lists(st.sampled_from(self.ids), min_size=1, max_size=4, unique=True))
        argv = ["XCLAIM", "s", "g", consumer, "0", *chosen] + (["JUSTID"] if justid else [])
        reply = self.h.ok(*argv)
        got = [item if justid else item[0] for item in reply]
        expected = []
        for id in chosen:
            if not isinstance(self.state[id], tuple):
                continue
            if id not in self.live:
                self.state[id] = "dropped"  # Redis 7: claiming a deleted entry drops it
                continue
            self.state[id] = ("pending", consumer.encode())
            if not justid:
                self.deliveries[id] += 1
            expected.append(id)
        assert got == expected

    @rule(consumer=consumers, count=st.integers(1, 5))
    def xautoclaim(self, consumer, count):
        cursor, claimed, deleted = self.h.ok("XAUTOCLAIM", "s", "g", consumer, "0", "0-0",
                                             "COUNT", count)
        pending = sorted((id for id, s in self.state.items() if isinstance(s, tuple)),
                         key=self.ids.index)
        scanned = pending[:count]
        assert [e[0] for e in claimed] == [id for id in scanned if id in self.live]
        assert deleted == [id for id in scanned if id not in self.live]
        for id in scanned:
            if id in self.live:
                self.state[id] = ("pending", consumer.encode())
                self.deliveries[id] += 1
            else:
                self.state[id] = "dropped"
        assert cursor == (pending[count] if len(pending) > count else b"0-0")

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def xdel(self, data):
        id = data.draw(st.sampled_from(sorted(self.live)))
        assert self.h.ok("XDEL", "s", id) == 1
        self.live.discard(id)

    # -- invariants -------------------------------------------------------------
    @invariant()
    def pel_matches_model(self):
        pending = pending_view(self.h)
        expected = {id: s[1] for id, s in self.state.items() if isinstance(s, tuple)}
        assert {id: owner for id, (owner, _) in pending.items()} == expected
        assert {id: n for id, (_, n) in pending.items()} == \
            {id: self.deliveries[id] for id in expected}
        for _id, s in self.state.items():
            assert s in ("unread", "acked", "dropped") or (isinstance(s, tuple) and s[0] == "pending")
        summary = self.h.ok("XPENDING", "s", "g")
        assert summary[0] == len(expected)
        owners = {}
        for owner in expected.values():
            owners[owner] = owners.get(owner, 0) + 1
        rows = [] if summary[3] in (None, NULL_ARRAY) else summary[3]
        assert {row[0]: int(row[1]) for row in rows} == owners
        self.h.stream().groups[b"g"].check()

    def teardown(self):
        # Replaying the effects (as the AOF would) rebuilds the same group.
        replica = Harness(node_entries=4)
        replica.client.kind = "aof"
        for batch in self.h.effects:
            for _, argv in batch:
                reply = replica.engine.execute(replica.client, argv)
                assert not isinstance(reply, ErrorReply), (argv, reply)
        owners = {id: owner for id, (owner, _) in pending_view(self.h).items()}
        assert {id: owner for id, (owner, _) in pending_view(replica).items()} == owners
        assert groups_view(replica) == groups_view(self.h)


TestGroupModel = GroupModel.TestCase
TestGroupModel.settings = settings(max_examples=200, stateful_step_count=50, deadline=None)
