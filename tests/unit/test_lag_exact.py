"""Lag and entries-read are exact whenever they are known (Redis 8's rules).

Redis 7.0's rules could report a number that was simply wrong (a negative lag
after ``ENTRIESREAD``, a lag of entries already trimmed away, a deleted entry
counted as read); redis/redis PRs #13338, #13473, #13958 and #14259 made every
number Redis reports true, and nil where it cannot know.  So the oracle here
needs no Redis: random commands run through the engine, and after each one,
for every group,

- a known ``entries-read`` is the number of entries ever added up to the
  group's last-delivered ID;
- a known ``lag`` is the number of live entries after it.

The commands are the ones that keep those counters honest (XADD with
increasing IDs, XREADGROUP ``>`` and history reads, XACK, XDEL, XTRIM,
XGROUP CREATE/SETID without ENTRIESREAD); ``ENTRIESREAD``, ``XSETID
ENTRIESADDED`` and ``XCLAIM ... LASTID`` set the counters or the position to
whatever the caller says, and are left out.
"""

from __future__ import annotations

import random

import pytest

from tests.support.engine_harness import Harness
from tidelog.ids import StreamID


def check_exact(h: Harness, added: list[StreamID]) -> None:
    stream = h.stream()
    live = [id for id, _ in stream.range(StreamID(0, 0), StreamID(2**64 - 1, 2**64 - 1))]
    for group in stream.groups.values():
        last = group.last_id
        if group.entries_read != -1:
            assert group.entries_read == sum(1 for id in added if id <= last), (
                group.name, group.entries_read, last)
        lag = group.lag(stream)
        if lag is not None:
            assert lag == sum(1 for id in live if id > last), (group.name, lag, last)


@pytest.mark.parametrize("seed", range(12))
def test_known_lag_and_entries_read_are_true(seed):
    rng = random.Random(seed)
    h = Harness(node_entries=rng.choice([1, 3, 100]))
    added: list[StreamID] = []
    next_ms = 1
    h.ok("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    known = 0
    for _ in range(400):
        op = rng.randrange(10)
        group = rng.choice(["g", "h"])
        if op < 3:
            for _ in range(rng.randint(1, 5)):
                h("XADD", "s", f"{next_ms}-1", "f", "v")
                added.append(StreamID(next_ms, 1))
                next_ms += 1
        elif op == 3:
            h("XREADGROUP", "GROUP", group, rng.choice("abc"), "COUNT", rng.randint(0, 4),
              *(["NOACK"] if rng.random() < 0.2 else []), "STREAMS", "s", ">")
        elif op == 4:
            h("XREADGROUP", "GROUP", group, rng.choice("abc"), "STREAMS", "s", "0")
        elif op == 5:
            h("XACK", "s", group, f"{rng.randint(1, next_ms)}-1")
        elif op == 6:
            h("XDEL", "s", *(f"{rng.randint(1, next_ms)}-1" for _ in range(rng.randint(1, 3))))
        elif op == 7:
            h("XTRIM", "s", "MAXLEN", rng.choice(["~", "="]), rng.randint(0, 8))
        elif op == 8:
            h("XGROUP", "SETID", "s", group,
              rng.choice(["0", "$", f"{rng.randint(1, next_ms)}-1"]))
        else:
            h("XGROUP", "CREATE", "s", group, rng.choice(["0", "$"]))
        check_exact(h, added)
        stream = h.stream()
        known += sum(g.lag(stream) is not None for g in stream.groups.values())
    assert known > 100  # the walk does reach states with a known lag


def test_trimmed_past_the_group_then_read():
    """redis/redis#13957: after a trim past the group, the lag is what is left,
    and after reading the last entry it is 0 (7.0.15: 4, then 3)."""
    h = Harness()
    for i in range(1, 6):
        h("XADD", "x", f"{i}-0", "data", "abcde"[i - 1])
    h.ok("XGROUP", "CREATE", "x", "g1", "0")
    h("XREADGROUP", "GROUP", "g1", "c11", "COUNT", "1", "STREAMS", "x", ">")
    h("XTRIM", "x", "MAXLEN", "1")
    group = h.stream("x").groups[b"g1"]
    assert (group.entries_read, group.lag(h.stream("x"))) == (1, 1)
    h("XREADGROUP", "GROUP", "g1", "c11", "COUNT", "1", "STREAMS", "x", ">")
    assert (group.entries_read, group.lag(h.stream("x"))) == (5, 0)
