"""Random operations on a ZSet, checked against a plain dict member -> score.

The model also tracks the encoding from the rules alone: listpack while at
most ``zset-max-listpack-entries`` members of at most
``zset-max-listpack-value`` bytes, skiplist after, never back.  After every
step the machine runs ``ZSet.check()`` and compares the ordered items.
"""

from __future__ import annotations

import math

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tidelog.types.zset import LISTPACK, SKIPLIST, ZSet, ZSetLimits

MEMBERS = st.one_of(st.sampled_from([b"", b"a", b"b", b"c", b"x" * 9]),
                    st.binary(min_size=0, max_size=5))
SCORES = st.one_of(st.sampled_from([0.0, 1.0, -1.0, 0.5, math.inf, -math.inf]),
                   st.floats(allow_nan=False, width=32))


def _key(pair):
    return (pair[1], pair[0])


class ZSetMachine(RuleBasedStateMachine):
    @initialize(limits=st.sampled_from([ZSetLimits(), ZSetLimits(3, 4), ZSetLimits(0, 64),
                                        ZSetLimits(10, 0)]), first=MEMBERS, score=SCORES)
    def start(self, limits, first, score):
        self.lim = limits
        self.z = ZSet.for_add(first, limits)
        self.enc = LISTPACK if limits.fits(1, len(first)) else SKIPLIST
        self.model: dict[bytes, float] = {}
        self.add(first, score)

    @rule(m=MEMBERS, s=SCORES)
    def add(self, m, s):
        new = m not in self.model
        if self.enc is LISTPACK:
            if new and (len(self.model) + 1 > self.lim.listpack_entries
                        or len(m) > self.lim.listpack_value):
                self.enc = SKIPLIST
            else:
                s += 0.0
        if new or self.model[m] != s:
            self.model[m] = s
        assert self.z.add(m, s, self.lim) == new

    @rule(m=MEMBERS)
    def remove(self, m):
        assert self.z.remove(m) == (m in self.model)
        self.model.pop(m, None)

    @rule(count=st.integers(min_value=0, max_value=4), highest=st.booleans())
    def pop(self, count, highest):
        ordered = sorted(self.model.items(), key=_key, reverse=highest)
        expected = ordered[:count]
        assert self.z.pop(count, highest) == expected
        for m, _ in expected:
            del self.model[m]

    @rule(start=st.integers(min_value=0, max_value=6), n=st.integers(min_value=0, max_value=4))
    def remove_positions(self, start, n):
        ordered = sorted(self.model.items(), key=_key)
        expected = ordered[start:start + n]
        assert self.z.remove_positions(start, start + n) == expected
        for m, _ in expected:
            del self.model[m]

    @rule(low=SCORES, high=SCORES, low_ex=st.booleans(), high_ex=st.booleans())
    def score_range(self, low, high, low_ex, high_ex):
        start = self.z.score_index(low, low_ex, upper=False)
        stop = max(start, self.z.score_index(high, high_ex, upper=True))
        expected = [p for p in sorted(self.model.items(), key=_key)
                    if (p[1] > low if low_ex else p[1] >= low)
                    and (p[1] < high if high_ex else p[1] <= high)]
        assert self.z.slice(start, stop) == expected

    @invariant()
    def agrees(self):
        if not hasattr(self, "z"):
            return
        self.z.check(self.lim)
        assert self.z.items() == sorted(self.model.items(), key=_key)
        assert self.z.encoding is self.enc
        for m, s in self.model.items():
            assert self.z.score(m) == s
            assert self.z.rank(m) == sorted(self.model.items(), key=_key).index((m, s))


ZSetMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=30,
                                         deadline=None)
TestZSetModel = ZSetMachine.TestCase
