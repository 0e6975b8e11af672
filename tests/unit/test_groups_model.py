"""Random operations on a ConsumerGroup, checked against a plain dict model.

The model is ``pending: {id: [owner name or None, delivery_time, count]}``
plus the set of consumer names and the fate of every ID ever delivered
(pending, acked, or dropped with its consumer).  After every step the
machine runs ``ConsumerGroup.check()`` and asserts that each delivered ID is
either pending with exactly the owner the model says (and in that owner's
PEL only) or gone from every PEL; that XPENDING's summary, the ID ranges and
the idle-first scan show what the model predicts.  The scans' batch sizes
are drawn small too, so re-seeking between batches is exercised.
"""

from __future__ import annotations

from itertools import islice

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from tidelog.ids import MAX_ID, MIN_ID, StreamID
from tidelog.types import groups as groups_module
from tidelog.types.groups import ConsumerGroup

NAMES = st.sampled_from([b"", b"a", b"b", b"bb", b"c\x00", b"\xff"])
TIMES = st.integers(min_value=-5, max_value=3000)
COUNTS = st.integers(min_value=0, max_value=5)


class GroupMachine(RuleBasedStateMachine):
    @initialize(
        batch=st.sampled_from([(1, 1), (1, 2), (2, 3), (16, 1024)]),
        start=st.integers(min_value=0, max_value=10_000),
    )
    def setup(self, batch: tuple[int, int], start: int) -> None:
        self.saved_batch = (groups_module._FIRST_BATCH, groups_module._MAX_BATCH)
        groups_module._FIRST_BATCH, groups_module._MAX_BATCH = batch
        self.g = ConsumerGroup(b"g", MIN_ID)
        self.now = start
        self.next_ms = 1
        self.consumers: set[bytes] = set()
        self.pending: dict[StreamID, list] = {}  # id -> [owner | None, time, count]
        self.fate: dict[StreamID, str] = {}  # every ID ever delivered or claimed
        self.active: dict[bytes, int] = {}

    def teardown(self) -> None:
        if hasattr(self, "saved_batch"):
            groups_module._FIRST_BATCH, groups_module._MAX_BATCH = self.saved_batch

    # -- helpers --------------------------------------------------------------

    def new_id(self, seq: int) -> StreamID:
        id = StreamID(self.next_ms, seq)
        self.next_ms += 1
        return id

    def known_id(self, data: st.DataObject) -> StreamID:
        return data.draw(st.sampled_from(sorted(self.fate)))

    def pending_id(self, data: st.DataObject) -> StreamID:
        return data.draw(st.sampled_from(sorted(self.pending)))

    # -- rules ------------------------------------------------------------------

    @rule(name=NAMES)
    def create_consumer(self, name: bytes) -> None:
        c, created = self.g.create_consumer(name, self.now)
        assert created == (name not in self.consumers)
        assert c.name == name
        if created:
            assert (c.seen_time, c.active_time) == (self.now, -1)
            self.active[name] = -1
        self.consumers.add(name)

    @rule(ms=st.integers(min_value=0, max_value=50))
    def tick(self, ms: int) -> None:
        self.now += ms

    @precondition(lambda self: self.consumers)
    @rule(data=st.data(), seq=st.integers(min_value=0, max_value=3))
    def deliver_new(self, data: st.DataObject, seq: int) -> None:
        name = data.draw(st.sampled_from(sorted(self.consumers)))
        id = self.new_id(seq)
        e = self.g.deliver(id, self.g.consumer(name), self.now)
        assert (e.id, e.delivery_count, e.delivery_time) == (id, 1, self.now)
        self.pending[id] = [name, self.now, 1]
        self.fate[id] = "pending"
        self.active[name] = self.now

    @precondition(lambda self: self.consumers and self.fate)
    @rule(data=st.data())
    def deliver_again(self, data: st.DataObject) -> None:
        # after XGROUP SETID moved last_id back: pending (reassign) or gone (new)
        name = data.draw(st.sampled_from(sorted(self.consumers)))
        id = self.known_id(data)
        before = self.g.pending(id)
        e = self.g.deliver(id, self.g.consumer(name), self.now)
        assert before is None or e is before
        self.pending[id] = [name, self.now, 1]
        self.fate[id] = "pending"
        self.active[name] = self.now

    @precondition(lambda self: self.consumers)
    @rule(data=st.data(), n=st.integers(min_value=1, max_value=12), again=st.booleans())
    def deliver_batch(self, data: st.DataObject, n: int, again: bool) -> None:
        # A ">" read's batch in bulk; with known IDs among the new ones (SETID
        # moved last_id back) it takes the per-ID path.
        name = data.draw(st.sampled_from(sorted(self.consumers)))
        ids = [self.new_id(0) for _ in range(n)]
        if again and self.fate:
            ids = sorted(set(ids) | set(data.draw(st.lists(st.sampled_from(sorted(self.fate)),
                                                            max_size=4))))
        before = {id: self.g.pending(id) for id in ids}
        self.g.deliver_new(ids, self.g.consumer(name), self.now)
        for id in ids:
            e = self.g.pending(id)
            assert before[id] is None or e is before[id]
            self.pending[id] = [name, self.now, 1]
            self.fate[id] = "pending"
        self.active[name] = self.now

    @rule(data=st.data(), shape=st.sampled_from(["mine", "group", "any"]))
    def ack_batch(self, data: st.DataObject, shape: str) -> None:
        # XACK of many IDs: a run of one consumer's pending IDs (the bulk
        # path), a run of the group's (owners may differ), or any list.
        order = sorted(self.pending)
        if shape == "mine" and order:
            owner = self.pending[data.draw(st.sampled_from(order))][0]
            order = [id for id in order if self.pending[id][0] == owner]
        if shape != "any" and order:
            at = data.draw(st.integers(min_value=0, max_value=len(order) - 1))
            ids = order[at:at + data.draw(st.integers(min_value=1, max_value=8))]
        else:
            known = sorted(self.fate) or [self.new_id(0)]
            ids = data.draw(st.lists(st.sampled_from(known), max_size=6))
        expect = 0
        for id in ids:
            if id in self.pending:
                del self.pending[id]
                self.fate[id] = "acked"
                expect += 1
        assert self.g.ack_all(ids) == expect

    @rule(data=st.data(), fresh=st.booleans())
    def ack(self, data: st.DataObject, fresh: bool) -> None:
        id = self.new_id(0) if fresh or not self.fate else self.known_id(data)
        assert self.g.ack(id) == (id in self.pending)
        if id in self.pending:
            del self.pending[id]
            self.fate[id] = "acked"

    @precondition(lambda self: self.consumers)
    @rule(data=st.data(), which=st.sampled_from(["known", "new"]), time=TIMES, count=COUNTS)
    def claim(self, data: st.DataObject, which: str, time: int, count: int) -> None:
        # XCLAIM (or XCLAIM FORCE for an ID that is not pending)
        name = data.draw(st.sampled_from(sorted(self.consumers)))
        id = self.known_id(data) if which == "known" and self.fate else self.new_id(0)
        before = self.g.pending(id)
        e = self.g.claim(id, self.g.consumer(name), time, count)
        assert before is None or e is before
        assert (e.consumer.name, e.delivery_time, e.delivery_count) == (name, time, count)
        self.pending[id] = [name, time, count]
        self.fate[id] = "pending"

    @rule(name=NAMES)
    def delete_consumer(self, name: bytes) -> None:
        owned = [id for id, (owner, _, _) in self.pending.items() if owner == name]
        assert self.g.delete_consumer(name) == len(owned)
        for id in owned:
            del self.pending[id]
            self.fate[id] = "dropped"
        self.consumers.discard(name)
        self.active.pop(name, None)
        assert self.g.consumer(name) is None

    @precondition(lambda self: self.pending)
    @rule(data=st.data(), increment=st.booleans())
    def touch_delivery(self, data: st.DataObject, increment: bool) -> None:
        # XREADGROUP with an explicit ID re-reads history
        id = self.pending_id(data)
        self.g.touch_delivery(self.g.pending(id), self.now, increment)
        self.pending[id][1] = self.now
        self.pending[id][2] += int(increment)

    @precondition(lambda self: self.pending)
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        # XNACK: the entry stays pending with no owner
        id = self.pending_id(data)
        assert self.g.release(id) is self.g.pending(id)
        self.pending[id][0] = None
        self.pending[id][1] = 0

    @precondition(lambda self: self.pending)
    @rule(data=st.data(), take=st.integers(min_value=1, max_value=6), min_idle=TIMES)
    def autoclaim_scan(self, data: st.DataObject, take: int, min_idle: int) -> None:
        # XAUTOCLAIM-like: scan from a cursor, ack some entries, claim the rest
        name = data.draw(st.sampled_from(sorted(self.consumers | {b"a"})))
        consumer, created = self.g.create_consumer(name, self.now)
        if created:
            self.consumers.add(name)
            self.active[name] = -1
        cursor = self.pending_id(data)
        expect = [id for id in sorted(self.pending) if id >= cursor][:take]
        got = []
        for e in islice(self.g.pending_range(cursor, MAX_ID), take):
            got.append(e.id)
            if e.id.seq == 1:
                self.g.ack(e.id)
                del self.pending[e.id]
                self.fate[e.id] = "acked"
            elif self.now - self.pending[e.id][1] >= min_idle:
                count = self.pending[e.id][2] + 1
                self.g.claim(e.id, consumer, self.now, count)
                self.pending[e.id] = [name, self.now, count]
        assert got == expect

    @precondition(lambda self: self.pending and self.consumers)
    @rule(data=st.data(), take=st.integers(min_value=1, max_value=6), min_idle=TIMES)
    def claim_idle(self, data: st.DataObject, take: int, min_idle: int) -> None:
        # XREADGROUP CLAIM-like: longest idle first, each claimed to now
        name = data.draw(st.sampled_from(sorted(self.consumers)))
        consumer = self.g.consumer(name)
        expect = sorted(
            (t, id) for id, (_, t, _) in self.pending.items() if self.now - t >= min_idle
        )[:take]
        got = []
        for e in islice(self.g.idle_first(self.now, min_idle), take):
            got.append((e.delivery_time, e.id))
            count = self.pending[e.id][2] + 1
            self.g.claim(e.id, consumer, self.now, count)
            self.pending[e.id] = [name, self.now, count]
        assert got == expect

    # -- invariants ---------------------------------------------------------------

    @invariant()
    def structure_is_consistent(self) -> None:
        if hasattr(self, "g"):
            self.g.check()

    @invariant()
    def every_delivered_id_is_pending_once_or_gone(self) -> None:
        if not hasattr(self, "g"):
            return
        g = self.g
        for id, fate in self.fate.items():
            holders = [c.name for c in g.consumers.values() if id in c.pel]
            entry = g.pending(id)
            if fate == "pending":
                owner, time, count = self.pending[id]
                assert entry is not None, f"{id} should be pending"
                assert (entry.delivery_time, entry.delivery_count) == (time, count)
                if owner is None:
                    assert entry.consumer is None and holders == []
                else:
                    assert entry.consumer is g.consumer(owner)
                    assert holders == [owner], f"{id} held by {holders}"
            else:
                assert entry is None and holders == [], f"{id} is {fate} but still pending"
        assert len(g.pel) == len(self.pending)

    @invariant()
    def consumers_match(self) -> None:
        if not hasattr(self, "g"):
            return
        assert set(self.g.consumers) == self.consumers
        for name, active in self.active.items():
            assert self.g.consumer(name).active_time == active

    @invariant()
    def views_match(self) -> None:
        if not hasattr(self, "g"):
            return
        g = self.g
        order = sorted(self.pending)
        assert [e.id for e in g.pending_range(MIN_ID, MAX_ID)] == order
        assert [e.id for e in g.pending_range(MIN_ID, MAX_ID, rev=True)] == order[::-1]
        counts: dict[bytes, int] = {}
        for owner, _, _ in self.pending.values():
            if owner is not None:
                counts[owner] = counts.get(owner, 0) + 1
        if order:
            assert g.summary() == (len(order), order[0], order[-1], sorted(counts.items()))
        else:
            assert g.summary() == (0, None, None, [])
        for name in self.consumers:
            mine = [id for id in order if self.pending[id][0] == name]
            got = g.consumer_pending_range(g.consumer(name), MIN_ID, MAX_ID)
            assert [e.id for e in got] == mine
        by_time = sorted((t, id) for id, (_, t, _) in self.pending.items())
        for min_idle in (0, 40):
            expect = [id for t, id in by_time if self.now - t >= min_idle]
            assert [e.id for e in g.idle_first(self.now, min_idle)] == expect


GroupMachine.TestCase.settings = settings(
    max_examples=300, stateful_step_count=60, deadline=None
)
TestGroupModel = GroupMachine.TestCase
