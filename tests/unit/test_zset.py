"""The ZSet type: encodings, positions of score and lexicographic bounds,
removals and pops, with ``check()`` after every mutation."""

from __future__ import annotations

import math
import random

from tidelog.types.zset import LISTPACK, SKIPLIST, LexBound, ZSet, ZSetLimits

DEFAULT = ZSetLimits()


def make(pairs, limits=DEFAULT):
    z = ZSet.for_add(pairs[0][0], limits)
    for m, s in pairs:
        z.add(m, s, limits)
        z.check(limits)
    return z


def test_order_and_updates():
    z = make([(b"b", 2.0), (b"a", 2.0), (b"c", 1.0), (b"d", -math.inf), (b"e", math.inf)])
    assert z.items() == [(b"d", -math.inf), (b"c", 1.0), (b"a", 2.0), (b"b", 2.0),
                         (b"e", math.inf)]
    assert z.rank(b"a") == 2 and z.rank(b"x") is None
    assert not z.add(b"c", 3.0)
    z.check()
    assert [m for m, _ in z.items()] == [b"d", b"a", b"b", b"c", b"e"]
    assert z.remove(b"a") and not z.remove(b"a")
    z.check()
    assert len(z) == 4 and b"a" not in z and z.score(b"b") == 2.0


def test_negative_zero():
    z = make([(b"a", -0.0)])  # a listpack keeps no sign on 0 (7.0.15 replies 0)
    assert math.copysign(1, z.score(b"a")) == 1
    s = ZSet(SKIPLIST)
    s.add(b"a", -0.0)
    assert math.copysign(1, s.score(b"a")) == -1
    s.add(b"a", 0.0)  # the same score: no update
    assert math.copysign(1, s.score(b"a")) == -1
    s.shrink(ZSetLimits())
    assert s.encoding is LISTPACK and math.copysign(1, s.score(b"a")) == 1
    s.check()


def test_encodings_one_way():
    lim = ZSetLimits(3, 4)
    z = make([(b"a", 1), (b"b", 2), (b"c", 3)], lim)
    assert z.object_encoding() == LISTPACK
    z.add(b"d", 4, lim)
    assert z.object_encoding() == SKIPLIST
    z.remove(b"d")
    z.remove(b"c")
    assert z.object_encoding() == SKIPLIST  # never back
    z.check(lim)
    y = make([(b"a", 1)], lim)
    y.add(b"toolong", 1, lim)
    assert y.object_encoding() == SKIPLIST
    assert ZSet.for_add(b"toolong", lim).encoding == SKIPLIST
    assert ZSet.for_add(b"a", ZSetLimits(0, 64)).encoding == SKIPLIST
    assert ZSet.built([(b"a", 1), (b"b", 2)], lim).encoding == LISTPACK
    assert ZSet.built([(b"a", 1), (b"bbbbb", 2)], lim).encoding == SKIPLIST
    assert ZSet.built([(bytes([i]), i) for i in range(4)], lim).encoding == SKIPLIST


def _brute_score(z, low, low_ex, high, high_ex):
    return [m for m, s in z.items()
            if (s > low if low_ex else s >= low) and (s < high if high_ex else s <= high)]


def test_score_index_against_brute_force():
    rng = random.Random(3)
    scores = [-math.inf, -2.0, -0.5, 0.0, 0.5, 1.0, 3.0, math.inf]
    for _ in range(200):
        z = ZSet(SKIPLIST)
        for i in range(rng.randint(0, 12)):
            z.add(b"m%d" % i, rng.choice(scores))
        z.check()
        for _ in range(10):
            low, high = rng.choice(scores), rng.choice(scores)
            low_ex, high_ex = rng.random() < 0.5, rng.random() < 0.5
            start = z.score_index(low, low_ex, upper=False)
            stop = max(start, z.score_index(high, high_ex, upper=True))
            assert [m for m, _ in z.slice(start, stop)] == _brute_score(
                z, low, low_ex, high, high_ex)


def test_lex_index_against_brute_force():
    rng = random.Random(4)
    words = [b"", b"a", b"aa", b"ab", b"b", b"ba", b"c", b"\xff"]
    bounds = [LexBound(None, True, -1), LexBound(None, True, 1)] + [
        LexBound(w, inc) for w in words for inc in (True, False)]
    for _ in range(100):
        z = ZSet(LISTPACK)
        for w in rng.sample(words, rng.randint(0, len(words))):
            z.add(w, 0.0)
        for low in bounds:
            for high in bounds:
                start = z.lex_index(low, upper=False)
                stop = max(start, z.lex_index(high, upper=True))

                def above(m, b):
                    return b.infinite < 0 or (not b.infinite and (m > b.value or (
                        b.inclusive and m == b.value)))

                def below(m, b):
                    return b.infinite > 0 or (not b.infinite and (m < b.value or (
                        b.inclusive and m == b.value)))

                expected = [m for m in z if above(m, low) and below(m, high)]
                assert list(z)[start:stop] == expected, (low, high)


def test_pops_and_position_removal():
    z = make([(b"m%d" % i, float(i)) for i in range(10)], ZSetLimits(4, 64))
    assert z.pop(2, highest=False) == [(b"m0", 0.0), (b"m1", 1.0)]
    z.check(ZSetLimits(4, 64))
    assert z.pop(3, highest=True) == [(b"m9", 9.0), (b"m8", 8.0), (b"m7", 7.0)]
    assert z.remove_positions(1, 3) == [(b"m3", 3.0), (b"m4", 4.0)]
    z.check()
    assert z.pop(100, highest=True) == [(b"m6", 6.0), (b"m5", 5.0), (b"m2", 2.0)]
    assert len(z) == 0
    z.check()


def test_random_members():
    z = make([(b"m%d" % i, float(i)) for i in range(10)])
    rng = random.Random(1)
    picked = z.random_distinct(5, rng)
    assert len({m for m, _ in picked}) == 5
    assert all(z.score(m) == s for m, s in picked)
    assert len(z.random_with_repeats(30, rng)) == 30


def test_scan_guarantee_under_changes():
    """A skiplist's ZSCAN returns every member present for the whole walk at
    least once, whatever is added or removed between the calls."""
    rng = random.Random(7)
    for _ in range(50):
        z = ZSet(SKIPLIST)
        for i in range(rng.randint(0, 60)):
            z.add(b"m%d" % i, float(rng.randint(0, 9)))
        stable = {m for m in z if rng.random() < 0.5}
        seen: set[bytes] = set()
        cursor, first = 0, True
        extra = 1000
        while first or cursor:
            first = False
            cursor, found = z.scan(cursor, rng.randint(1, 7))
            assert all(z.score(m) == s for m, s in found)
            seen.update(m for m, _ in found)
            for m in list(z):  # remove some members not in the stable set, add others
                if m not in stable and rng.random() < 0.2:
                    z.remove(m)
            for _ in range(rng.randint(0, 3)):
                z.add(b"n%d" % extra, float(rng.randint(0, 9)))
                extra += 1
            z.check()
        assert stable <= seen


def test_scan_listpack_whole():
    z = make([(b"b", 1.0), (b"a", 2.0)])
    assert z.scan(0, 1) == (0, [(b"b", 1.0), (b"a", 2.0)])
