"""Random operations on a Set, checked against a plain Python set.

The model is the set of members plus the insertion order (what a listpack
returns) and the encoding Redis 7.2+ would report, worked out from the rules
alone: an intset while every member is an integer and there are at most
``set-max-intset-entries``; a listpack while at most
``set-max-listpack-entries`` members of at most ``set-max-listpack-value``
bytes; else a hashtable, never going back.  After every step the machine
runs ``Set.check()`` and compares members, order (intset: numeric,
listpack: insertion) and encoding.
"""

from __future__ import annotations

import random

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tidelog.types.set import HASHTABLE, INTSET, LISTPACK, Set, SetLimits, as_int64

MEMBERS = st.one_of(
    st.integers(min_value=-20, max_value=40).map(lambda i: b"%d" % i),
    st.sampled_from([b"9223372036854775807", b"-9223372036854775808", b"123456789012",
                     b"9223372036854775808", b"01", b"-0", b"", b"a", b"b", b"x" * 9]),
    st.binary(min_size=0, max_size=6),
)


class SetMachine(RuleBasedStateMachine):
    @initialize(limits=st.sampled_from([SetLimits(), SetLimits(4, 6, 5), SetLimits(0, 3, 8),
                                        SetLimits(10, 0, 64), SetLimits(3, 100, 2)]),
                first=MEMBERS, hint=st.integers(min_value=1, max_value=12))
    def start(self, limits, first, hint):
        self.lim = limits
        self.s = Set.for_first(first, hint, limits)
        self.order: list[bytes] = []
        # What the hint decides at creation (Redis 7.2+'s SADD).
        if as_int64(first) is not None and hint <= limits.intset_max:
            self.enc = INTSET
        elif hint <= limits.listpack_entries:
            self.enc = LISTPACK
        else:
            self.enc = HASHTABLE
        self.add(first)
        self.rng = random.Random(0)

    def _expect_add(self, m: bytes) -> None:
        lim, n = self.lim, len(self.order)
        if self.enc is INTSET:
            if as_int64(m) is not None:
                if n + 1 > lim.intset_max:
                    self.enc = HASHTABLE
            else:
                longest = max((len(x) for x in self.order), default=0)
                fits = (n < lim.listpack_entries and len(m) <= lim.listpack_value
                        and longest <= lim.listpack_value)
                self.enc = LISTPACK if fits else HASHTABLE
                self.order.sort(key=int)  # a listpack made from an intset starts in its order
        elif self.enc is LISTPACK:
            if not (n < lim.listpack_entries and len(m) <= lim.listpack_value):
                self.enc = HASHTABLE

    @rule(m=MEMBERS)
    def add(self, m):
        new = m not in self.order
        if new:
            self._expect_add(m)
            self.order.append(m)
        assert self.s.add(m, self.lim) == new

    @rule(ms=st.lists(MEMBERS, max_size=8))
    def add_many(self, ms):
        self.s.prepare(len(ms), self.lim)
        if ((self.enc is LISTPACK and len(ms) > self.lim.listpack_entries)
                or (self.enc is INTSET and len(ms) > self.lim.intset_max)):
            self.enc = HASHTABLE
        expected = 0
        for m in ms:
            if m not in self.order:
                self._expect_add(m)
                self.order.append(m)
                expected += 1
        assert self.s.add_many(ms, self.lim) == expected

    @rule(m=MEMBERS)
    def remove(self, m):
        there = m in self.order
        assert self.s.remove(m) == there
        if there:
            self.order.remove(m)

    @precondition(lambda self: self.order)
    @rule(data=st.data())
    def remove_present(self, data):
        m = data.draw(st.sampled_from(self.order))
        assert self.s.remove(m)
        self.order.remove(m)

    @precondition(lambda self: self.order)
    @rule(count=st.integers(min_value=1, max_value=5))
    def pop_random(self, count):
        count = min(count, len(self.order))
        for m in self.s.random_distinct(count, self.rng):
            assert self.s.remove(m)
            self.order.remove(m)

    @rule(cursor=st.integers(min_value=0, max_value=50), count=st.integers(min_value=1, max_value=9))
    def scan(self, cursor, count):
        nxt, found = self.s.scan(cursor, count)
        assert set(found) <= set(self.order)
        assert len(set(found)) == len(found)
        if self.enc is not HASHTABLE:
            assert nxt == 0 and len(found) == len(self.order)

    @invariant()
    def matches(self):
        self.s.check(self.lim)
        assert self.s.object_encoding() == self.enc
        assert len(self.s) == len(self.order)
        members = self.s.members()
        if self.enc is INTSET:
            assert members == sorted(self.order, key=int)
        elif self.enc is LISTPACK:
            assert members == self.order
        else:
            assert sorted(members) == sorted(self.order)
        for m in self.order[:5]:
            assert m in self.s


SetMachine.TestCase.settings = settings(max_examples=200, stateful_step_count=50, deadline=None)
TestSetModel = SetMachine.TestCase
