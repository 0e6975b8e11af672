"""Random operations on a Stream, checked against a plain list of live entries.

The model is what XRANGE would show: ``[(id, [f1, v1, ...]), ...]`` in ID
order.  Exact trims are predicted entry by entry; approximate and limited
trims may remove any number of the oldest entries, within the rules that
hold for every node layout (never below MAXLEN, never at or past MINID,
never more than LIMIT), and the model then drops that many.  After every
step the machine runs ``Stream.check()`` and compares whole ranges both ways.
"""

from __future__ import annotations

from itertools import islice

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tidelog.ids import MAX_ID, MIN_ID, UINT64_MAX, StreamID
from tidelog.types.stream import Stream

FIELD_SETS = [[b"f"], [b"f", b"g"], [b"g", b"f"], [b"temp"], [b"123", b"-1"], []]
VALUES = st.sampled_from(
    [
        b"",
        b"0",
        b"7",
        b"-1",
        b"127",
        b"128",
        b"-4096",
        b"4096",
        b"01",
        b"+1",
        b"-0",
        b"x",
        b"hello",
        b"9223372036854775807",
        b"-9223372036854775808",
        b"9223372036854775808",
        b"v" * 64,
        b"w" * 300,
    ]
)
ID_STEPS = st.one_of(
    st.just(("seq", 1)),
    st.tuples(st.just("seq"), st.integers(1, 5)),
    st.tuples(st.just("ms"), st.integers(1, 3000)),
    st.tuples(st.just("seq-near-max"), st.integers(0, 3)),
)


class StreamMachine(RuleBasedStateMachine):
    @initialize(
        max_entries=st.sampled_from([1, 2, 4, 100, 0]),  # 0: no entry limit
        max_bytes=st.sampled_from([0, 4096, 120]),
    )
    def setup(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.stream = Stream()
        self.model: list[tuple[StreamID, list[bytes]]] = []
        self.last_id = MIN_ID
        self.max_deleted = MIN_ID
        self.added = 0
        self.fields = FIELD_SETS[0]

    def next_id(self, step: tuple) -> StreamID | None:
        ms, seq = self.last_id
        kind, amount = step
        if kind == "seq":
            seq += amount
        elif kind == "ms":
            ms, seq = ms + amount, 0
        elif kind == "seq-near-max":
            seq = max(seq + 1, UINT64_MAX - amount)
        else:  # "ms-jump": far enough that the ms delta leaves int64
            ms, seq = ms + amount, 3
        if seq > UINT64_MAX:
            ms, seq = ms + 1, 0
        if ms > UINT64_MAX:
            return None
        return StreamID(ms, seq)

    def add(self, id: StreamID | None, values: list[bytes], tail_fields: bool) -> None:
        if id is None:
            return
        chosen = self.fields
        nodes = self.stream._nodes
        if tail_fields and nodes and nodes[-1].fields is not None:
            chosen = nodes[-1].fields  # exactly the tail's master fields: SAMEFIELDS
        fv = []
        for f, v in zip(chosen, values, strict=False):
            fv += [f, v]
        self.stream.append(id, fv, self.max_entries, self.max_bytes)
        self.model.append((id, fv))
        self.last_id = id
        self.added += 1

    @rule(
        step=ID_STEPS,
        fields=st.one_of(st.none(), st.sampled_from(FIELD_SETS)),
        tail_fields=st.booleans(),
        values=st.lists(VALUES, min_size=2, max_size=2),
    )
    def append(self, step, fields, tail_fields, values) -> None:
        if fields is not None:
            self.fields = fields
        self.add(self.next_id(step), values, tail_fields)

    @rule(
        count=st.integers(1, 140),
        step=ID_STEPS,
        tail_fields=st.booleans(),
        values=st.lists(VALUES, min_size=2, max_size=2),
    )
    def append_many(self, count, step, tail_fields, values) -> None:
        for i in range(count):
            self.add(self.next_id(step), values[i % 2 :] + values[: i % 2], tail_fields)

    @precondition(lambda self: self.last_id.ms < 1 << 63)
    @rule(fields=st.sampled_from(FIELD_SETS), values=st.lists(VALUES, min_size=2, max_size=2))
    def append_far(self, fields, values) -> None:
        self.fields = fields
        self.add(self.next_id(("ms-jump", 1 << 62)), values, False)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def delete_live(self, data) -> None:
        index = data.draw(st.integers(0, len(self.model) - 1))
        id = self.model[index][0]
        assert self.stream.delete(id)
        del self.model[index]
        self.max_deleted = max(self.max_deleted, id)

    @rule(ms=st.integers(0, 5000), seq=st.integers(0, 3))
    def delete_any(self, ms: int, seq: int) -> None:
        id = StreamID(ms, seq)
        live = any(e[0] == id for e in self.model)
        assert self.stream.delete(id) == live
        if live:
            self.model = [e for e in self.model if e[0] != id]
            self.max_deleted = max(self.max_deleted, id)

    @rule(maxlen=st.integers(0, 30))
    def trim_maxlen_exact(self, maxlen: int) -> None:
        removed = self.stream.trim_maxlen(maxlen, False, 0)
        assert removed == max(0, len(self.model) - maxlen)
        self.model = self.model[removed:]

    @rule(maxlen=st.integers(0, 30), limit=st.sampled_from([0, 1, 3, 50]))
    def trim_maxlen_approx(self, maxlen: int, limit: int) -> None:
        before = len(self.model)
        removed = self.stream.trim_maxlen(maxlen, True, limit)
        assert 0 <= removed <= before
        assert before - removed >= min(before, maxlen)
        if limit:
            assert removed <= limit
        self.model = self.model[removed:]

    def pick_minid(self, data) -> StreamID:
        if self.model and data.draw(st.booleans()):
            return data.draw(st.sampled_from(self.model))[0]
        ms = data.draw(st.integers(0, self.last_id.ms + 1))
        return StreamID(ms, data.draw(st.integers(0, 3)))

    @rule(data=st.data())
    def trim_minid_exact(self, data) -> None:
        minid = self.pick_minid(data)
        removed = self.stream.trim_minid(minid, False, 0)
        assert removed == sum(1 for e in self.model if e[0] < minid)
        self.model = self.model[removed:]

    @rule(data=st.data(), limit=st.sampled_from([0, 1, 3, 50]))
    def trim_minid_approx(self, data, limit: int) -> None:
        minid = self.pick_minid(data)
        removed = self.stream.trim_minid(minid, True, limit)
        assert all(e[0] < minid for e in self.model[:removed])
        if limit:
            assert removed <= limit
        self.model = self.model[removed:]

    @rule()
    def reload(self) -> None:
        """What a snapshot save and load does: adopt the node blobs."""
        s = self.stream
        self.stream = Stream.from_nodes(
            s.nodes(), s.length, s.last_id, s.first_id, s.max_deleted_entry_id, s.entries_added
        )

    @rule(
        data=st.data(),
        rev=st.booleans(),
        count=st.integers(1, 5),
    )
    def partial_range(self, data, rev: bool, count: int) -> None:
        ids = [e[0] for e in self.model]
        bound = st.one_of(
            st.sampled_from(ids) if ids else st.just(MIN_ID),
            st.builds(StreamID, st.integers(0, self.last_id.ms + 1), st.integers(0, 4)),
        )
        start = data.draw(bound)
        end = data.draw(bound)
        expect = [e for e in self.model if start <= e[0] <= end]
        if rev:
            expect.reverse()
        assert list(islice(self.stream.range(start, end, rev=rev), count)) == expect[:count]
        for id in (start, end):
            live = [e[1] for e in self.model if e[0] == id]
            assert self.stream.get(id) == (live[0] if live else None)

    @invariant()
    def matches_the_model(self) -> None:
        s = self.stream
        s.check()
        assert list(s.range(MIN_ID, MAX_ID)) == self.model
        assert list(s.range(MIN_ID, MAX_ID, rev=True)) == self.model[::-1]
        assert s.length == len(self.model)
        assert s.first_entry() == (self.model[0] if self.model else None)
        assert s.last_entry() == (self.model[-1] if self.model else None)
        assert s.first_id == (self.model[0][0] if self.model else MIN_ID)
        assert s.last_id == self.last_id
        assert s.max_deleted_entry_id == self.max_deleted
        assert s.entries_added == self.added


StreamMachine.TestCase.settings = settings(max_examples=100, stateful_step_count=40, deadline=None)
TestStreamModel = StreamMachine.TestCase
