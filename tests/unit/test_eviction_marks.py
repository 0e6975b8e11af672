"""What each maxmemory-policy keeps per key (keyspace.py's eviction marks),
through the commands, on an engine with a fake clock: the LFU counter
(OBJECT FREQ) only under an LFU policy, the last write time only counting
writes under LRM (OBJECT IDLETIME), and a policy switch reading the same
24 bits the other way, as Redis does.  Expected values are computed here
from the clock, with plain arithmetic."""

from __future__ import annotations

import re

from tests.support.engine_harness import NOW, Harness
from tidelog.errors import LFU_NOT_SELECTED, LFU_SELECTED

MINUTE = 60_000


def policy(h: Harness, name: str, factor: int = 0, decay: int = 0) -> None:
    """Switch policy; by default every access counts and nothing decays."""
    h.ok("CONFIG", "SET", "maxmemory-policy", name, "lfu-log-factor", str(factor),
         "lfu-decay-time", str(decay))


def lru_field(h: Harness, key: str) -> int:
    return int(re.search(rb" lru:(\d+) ", h("DEBUG", "OBJECT", key).text).group(1))


def test_without_an_lfu_policy_nothing_counts() -> None:
    h = Harness()
    h.ok("SET", "k", "v")
    for _ in range(3):
        h.ok("GET", "k")
    assert h.err("OBJECT", "FREQ", "k") == LFU_NOT_SELECTED
    # Only times are kept (>= 0): no counter, and the lookups paid one store.
    assert all(marks == NOW for marks in h.engine.dbs[0].access.values())
    policy(h, "allkeys-lrm")
    assert h.err("OBJECT", "FREQ", "k") == LFU_NOT_SELECTED


def test_lfu_counts_decays_and_refuses_idletime() -> None:
    h = Harness()
    policy(h, "allkeys-lfu", decay=1)
    h.ok("SET", "k", "v")
    assert h("OBJECT", "FREQ", "k") == 5
    assert h.err("OBJECT", "IDLETIME", "k") == LFU_SELECTED
    assert h("OBJECT", "IDLETIME", "missing") is None
    for _ in range(10):
        h.ok("GET", "k")
    assert h("OBJECT", "FREQ", "k") == 15
    h.ok("SET", "k", "w")                     # the lookup counts, the counter stays
    assert h("OBJECT", "FREQ", "k") == 16
    h.clock.advance(3 * MINUTE)
    assert h("OBJECT", "FREQ", "k") == 13     # decayed when read ...
    assert h("OBJECT", "FREQ", "k") == 13     # ... and not stored
    h.ok("EXISTS", "k")                       # no lookup that counts
    h.ok("GET", "k")
    assert h("OBJECT", "FREQ", "k") == 14
    h.ok("CLIENT", "NO-TOUCH", "ON")
    h.ok("GET", "k")
    assert h("OBJECT", "FREQ", "k") == 14
    assert h("TOUCH", "k") == 1               # TOUCH counts, once
    assert h("OBJECT", "FREQ", "k") == 15
    h.ok("CLIENT", "NO-TOUCH", "OFF")
    assert h("TOUCH", "k") == 1
    assert h("OBJECT", "FREQ", "k") == 16


def test_the_counter_moves_with_the_value() -> None:
    h = Harness()
    policy(h, "allkeys-lfu")
    h.ok("SET", "k", "v")
    h.ok("GET", "k")                          # 6
    h.ok("RENAME", "k", "r")                  # its lookup: 7, carried
    assert h("OBJECT", "FREQ", "r") == 7
    h.ok("MOVE", "r", "1")                    # 8, carried
    h.ok("SELECT", "1")
    assert h("OBJECT", "FREQ", "r") == 8
    h.ok("SET", "other", "v")
    h.ok("COPY", "r", "other", "REPLACE")     # a new value: a new counter
    assert h("OBJECT", "FREQ", "other") == 5
    assert h("OBJECT", "FREQ", "r") == 9
    payload = h("DUMP", "r")
    h.ok("RESTORE", "f", "0", payload, "FREQ", "200")
    h.ok("RESTORE", "i", "0", payload, "IDLETIME", "100")  # not kept under LFU
    assert (h("OBJECT", "FREQ", "f"), h("OBJECT", "FREQ", "i")) == (200, 5)


def test_lrm_counts_writes_only() -> None:
    h = Harness()
    policy(h, "allkeys-lrm")
    h.ok("SET", "k", "v")
    h.ok("XADD", "s", "1-1", "f", "v")
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.clock.advance(50_000)
    for argv in (("GET", "k"), ("TOUCH", "k"), ("XRANGE", "s", "-", "+"), ("XLEN", "s")):
        h.ok(*argv)
    assert h("OBJECT", "IDLETIME", "k") == 50
    assert h("OBJECT", "IDLETIME", "s") == 50
    for argv in (("APPEND", "k", "x"), ("XADD", "s", "2-1", "f", "v")):
        h.clock.advance(10_000)
        h.ok(*argv)
        assert h("OBJECT", "IDLETIME", argv[1]) == 0
    # A stream's groups are part of its value: reading with a group writes.
    h.clock.advance(10_000)
    h.ok("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert h("OBJECT", "IDLETIME", "s") == 0
    h.clock.advance(10_000)
    assert h("XACK", "s", "g", "1-1") == 1
    assert h("OBJECT", "IDLETIME", "s") == 0
    h.clock.advance(10_000)
    h.ok("EXPIRE", "k", "1000")
    assert h("OBJECT", "IDLETIME", "k") == 0
    h.clock.advance(10_000)
    payload = h("DUMP", "k")
    h.ok("RESTORE", "r", "0", payload, "IDLETIME", "30")  # an explicit idle time wins
    assert h("OBJECT", "IDLETIME", "r") == 30


def test_a_switch_reads_the_same_bits_the_other_way() -> None:
    h = Harness()
    h.ok("SET", "a", "v")                     # under noeviction: an LRU clock
    clock = NOW // 1000 % 2**24
    assert lru_field(h, "a") == clock
    h.clock.advance(2 * MINUTE)
    policy(h, "allkeys-lfu", decay=1)
    # The clock's low byte is the counter, its high 16 bits the decrement
    # time: decayed by the minutes between those and now (Redis's wrap).
    now_minute = (NOW + 2 * MINUTE) // MINUTE % 65536
    stamp = clock >> 8
    elapsed = now_minute - stamp if now_minute >= stamp else 65535 - stamp + now_minute
    assert h("OBJECT", "FREQ", "a") == max(0, (clock & 255) - elapsed)
    assert lru_field(h, "a") == clock         # nothing converted
    h.ok("SET", "b", "v")
    word = now_minute << 8 | 5
    assert lru_field(h, "b") == word
    policy(h, "allkeys-lru")
    assert lru_field(h, "b") == word
    now_clock = (NOW + 2 * MINUTE) // 1000 % 2**24
    idle = now_clock - word if now_clock >= word else now_clock + 2**24 - 1 - word
    assert h("OBJECT", "IDLETIME", "b") == idle
    debug = h("DEBUG", "OBJECT", "b").text
    assert b" lru_seconds_idle:%d" % idle in debug
    h.ok("GET", "b")                          # stamped as a time again
    assert h("OBJECT", "IDLETIME", "b") == 0
    assert lru_field(h, "b") == now_clock
