"""Idempotent production through Engine.execute with a FakeClock: XADD IDMP /
IDMPAUTO, XCFGSET, XIDMPRECORD, XINFO STREAM's IDMP fields, the cron sweep,
and effects replayed into a fresh engine.

redis-server 7.0.15 has none of this, so expected behaviour comes from
redis.io's pages, cited per test:
  XADD:        https://redis.io/docs/latest/commands/xadd/
  XCFGSET:     https://redis.io/docs/latest/commands/xcfgset/
  XIDMPRECORD: https://redis.io/docs/latest/commands/xidmprecord/
  XINFO STREAM https://redis.io/docs/latest/commands/xinfo-stream/
  Idempotency: https://redis.io/docs/latest/develop/data-types/streams/idempotency/
Error texts the pages do not spell out are Redis 8.6's own (its test suite);
XIDMPRECORD's are ours (see errors.py).
"""

from __future__ import annotations

import pytest

from tests.support.engine_harness import NOW, Harness, b
from tidelog import errors
from tidelog.engine import IDMP_EXPIRE_BUDGET
from tidelog.ids import StreamID
from tidelog.resp.replies import NULL_ARRAY, OK

SEC = 1000
IDMP_KEYS = [b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked",
             b"iids-added", b"iids-duplicates"]


@pytest.fixture
def h():
    return Harness()


def info(h, key="s", *full) -> dict:
    return dict(h.ok("XINFO", "STREAM", key, *full).items)


def idmp(h, key="s") -> list[int]:
    """XINFO STREAM's IDMP values, in field order."""
    fields = info(h, key)
    return [fields[k] for k in IDMP_KEYS]


def pairs(h, key="s") -> list[tuple[bytes, bytes, StreamID]]:
    state = h.stream(key).idmp
    if state is None:
        return []
    state.check()
    return sorted((pid, iid, id) for pid, iid, id, _ in state.pairs())


def ids(h, key="s") -> list[bytes]:
    return [e[0] for e in h.ok("XRANGE", key, "-", "+")]


# -- XADD IDMP / IDMPAUTO -----------------------------------------------------------------

def test_duplicate_returns_the_original_id_and_adds_nothing(h):
    # xadd: a repeat of (pid, iid) adds nothing and returns the original ID;
    # idempotency page: the original fields are kept.
    first = h("XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "100", "currency", "USD")
    assert first == b"%d-0" % NOW
    h.clock.advance(7)
    dirty = h.engine.dirty
    again = h("XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "200", "currency", "EUR")
    assert again == first
    assert h("XLEN", "s") == 1
    assert h("XRANGE", "s", "-", "+") == [[first, [b"amount", b"100", b"currency", b"USD"]]]
    assert idmp(h) == [100, 100, 1, 1, 1, 1]
    assert h.engine.dirty == dirty + 1  # the duplicate counter changed (redis/redis#14858)
    # Different iids, different producers: new entries.
    assert h("XADD", "s", "IDMP", "p1", "req-2", "*", "f", "v") == b"%d-0" % (NOW + 7)
    assert h("XADD", "s", "IDMP", "p2", "payment-abc", "*", "f", "v") == b"%d-1" % (NOW + 7)
    assert h("XLEN", "s") == 3
    assert idmp(h) == [100, 100, 2, 3, 3, 1]


def test_effects_keep_the_option_with_the_real_id_and_a_retry_sends_nothing(h):
    first = h("XADD", "s", "IDMP", "p", "i", "MAXLEN", "~", "100", "*", "f", "v")
    auto = h("XADD", "s", "idmpauto", "p", "*", "f", "w")
    assert h.take_effects() == [
        [b"XADD", b"s", b"IDMP", b"p", b"i", b"MAXLEN", b"=", b"1", first, b"f", b"v"],
        [b"XADD", b"s", b"idmpauto", b"p", auto, b"f", b"w"],
    ]
    assert h("XADD", "s", "IDMP", "p", "i", "*", "f", "x") == first
    assert h("XADD", "s", "IDMPAUTO", "p", "*", "f", "w") == auto
    assert h.take_effects() == []


def test_idmpauto_ignores_field_order_but_not_content(h):
    # idempotency page: "The same content produces the same iid"; Redis 8.6
    # also matches the same pairs in another order.
    first = h("XADD", "s", "IDMPAUTO", "p1", "*", "field1", "a", "field2", "b")
    assert h("XADD", "s", "IDMPAUTO", "p1", "*", "field2", "b", "field1", "a") == first
    h.clock.advance(1)
    assert h("XADD", "s", "IDMPAUTO", "p1", "*", "field1", "x", "field2", "b") != first
    assert h("XADD", "s", "IDMPAUTO", "p2", "*", "field1", "a", "field2", "b") != first
    assert h("XLEN", "s") == 3
    assert idmp(h)[2:] == [2, 3, 3, 1]


def test_syntax_errors(h):
    # xadd: "IDMP ... Only valid with * ID"; the texts are Redis 8.6's.
    assert h.err("XADD", "s", "IDMP", "p1", "*", "f", "v") == errors.INVALID_STREAM_ID
    assert h.err("XADD", "s", "IDMP", "p1", "iid1", "1-1", "f", "v") == \
        errors.IDMP_ONLY_WITH_AUTO_ID
    assert h.err("XADD", "s", "IDMPAUTO", "p1", "1-1", "f", "v") == errors.IDMP_ONLY_WITH_AUTO_ID
    assert h.err("XADD", "s", "IDMPAUTO", "p1", "5-*", "f", "v") == errors.IDMP_ONLY_WITH_AUTO_ID
    for argv in (["IDMP", "p1", "iid1", "IDMP", "p2", "iid2"],
                 ["IDMPAUTO", "p1", "IDMP", "p2", "i"], ["IDMP", "p1", "i", "IDMPAUTO", "p2"],
                 ["IDMPAUTO", "p1", "IDMPAUTO", "p2"]):
        assert h.err("XADD", "s", *argv, "*", "f", "v") == errors.IDMP_TWICE
    assert h.err("XADD", "s", "IDMP", "", "iid1", "*", "f", "v") == errors.IDMP_EMPTY_PID
    assert h.err("XADD", "s", "IDMP", "p1", "", "*", "f", "v") == errors.IDMP_EMPTY_IID
    assert h.err("XADD", "s", "IDMPAUTO", "", "*", "f", "v") == errors.IDMPAUTO_EMPTY_PID
    assert h.err("XADD", "s", "IDMP", "p", "i", "*", "f") == errors.wrong_arity(b"xadd").message
    assert h.err("XTRIM", "s", "IDMP", "p", "i", "MAXLEN", "1") == errors.SYNTAX
    assert h.engine.dbs[0].data == {}


def test_options_in_any_order_and_with_nomkstream(h):
    # xadd: IDMP among the other options; NOMKSTREAM on a missing key is nil.
    assert h("XADD", "s", "NOMKSTREAM", "IDMP", "p1", "req-1", "*", "f", "v") is None
    assert b"s" not in h.engine.dbs[0].data
    a = h("XADD", "s", "IDMP", "p1", "req-1", "MAXLEN", "~", "100", "*", "f", "v")
    b_ = h("XADD", "s", "MAXLEN", "~", "100", "IDMP", "p1", "req-2", "*", "f", "v")
    c = h("XADD", "s", "NOMKSTREAM", "IDMPAUTO", "p1", "MAXLEN", "100", "*", "f", "v3")
    assert len({a, b_, c}) == 3 and h("XLEN", "s") == 3


def test_a_duplicate_does_not_trim(h):
    for n in range(3):
        h.ok("XADD", "s", "*", "f", n)
    first = h("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert h("XADD", "s", "IDMP", "p", "i", "MAXLEN", "1", "*", "f", "v") == first
    assert h("XLEN", "s") == 4


def test_deleted_original_is_still_returned(h):
    # xadd (redis/docs#2923): the ID of the *original* entry, which "may no
    # longer exist in the stream"; redis/redis#14908 asked otherwise.
    first = h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "v1")
    assert h("XDEL", "s", first) == 1
    assert h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "v2") == first
    assert h("XLEN", "s") == 0
    # Trimmed by its own XADD: the pair is remembered all the same.
    own = h("XADD", "t", "IDMP", "p", "i", "MAXLEN", "0", "*", "f", "v")
    assert h("XLEN", "t") == 0
    assert h("XADD", "t", "IDMP", "p", "i", "*", "f", "v") == own


def test_retry_is_recognised_for_duration_seconds(h):
    # xcfgset: "Redis will not forget an idempotency ID before the duration
    # elapses"; idempotency page: iids expire after IDMP-DURATION.
    first = h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value1")
    h.ok("XCFGSET", "s", "IDMP-DURATION", "1")  # a change: clears the maps
    first = h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value1")
    h.clock.advance(SEC - 1)
    assert h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value2") == first
    h.clock.advance(1)
    again = h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value3")
    assert again != first
    assert h("XLEN", "s") == 3


def test_maxsize_evicts_the_oldest_iid_per_producer(h):
    # xcfgset: "the oldest idempotent IDs for that producer are evicted
    # regardless of remaining duration"; Redis 8.6's test of the same name.
    h.ok("XADD", "s", "IDMP", "p1", "init", "*", "field", "init")
    h.ok("XCFGSET", "s", "IDMP-MAXSIZE", "3", "IDMP-DURATION", "60")
    got = {n: h("XADD", "s", "IDMP", "p1", f"req-{n}", "*", "field", f"v{n}") for n in (1, 2, 3)}
    for n in (1, 2, 3):
        assert h("XADD", "s", "IDMP", "p1", f"req-{n}", "*", "field", "dup") == got[n]
    h.ok("XADD", "s", "IDMP", "p1", "req-4", "*", "field", "v4")
    assert h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "new") != got[1]
    assert h("XADD", "s", "IDMP", "p1", "req-3", "*", "field", "dup2") == got[3]
    assert h("XLEN", "s") == 6
    # Another producer has its own three.
    p2 = [h("XADD", "s", "IDMP", "p2", f"req-{n}", "*", "f", "v") for n in (1, 2, 3)]
    assert [h("XADD", "s", "IDMP", "p2", f"req-{n}", "*", "f", "d") for n in (1, 2, 3)] == p2
    assert idmp(h)[2:4] == [2, 6]


def test_stream_id_ahead_of_the_clock_still_expires(h):
    # redis/redis#15836: Redis ages a pair by its entry ID, so once the last
    # ID is in the future nothing expires.  Ours ages it from min(ID, now).
    future = NOW + 3600 * SEC
    h.ok("XADD", "s", f"{future}-0", "f", "v")
    h.ok("XCFGSET", "s", "IDMP-DURATION", "1")
    first = h("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert first == b"%d-1" % future
    h.clock.advance(SEC)
    h.engine.cron()
    assert h.stream().idmp.iids_tracked == 0
    assert h("XADD", "s", "IDMP", "p", "i", "*", "f", "v") != first


def test_duplicates_inside_multi(h):
    # Redis 8.6's "XADD IDMP pipelined requests": a transaction sees its own pairs.
    h.ok("MULTI")
    for iid, value in (("req-1", "v1"), ("req-2", "v2"), ("req-1", "v3"), ("req-3", "v4")):
        h("XADD", "s", "IDMP", "p1", iid, "*", "field", value)
    r1, r2, dup, r3 = h.ok("EXEC")
    assert dup == r1 and len({r1, r2, r3}) == 3
    assert h("XLEN", "s") == 3


def test_a_duplicate_breaks_watch(h):
    first = h("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    other = h.new_client()
    h.ok("WATCH", "s")
    assert h("XADD", "s", "IDMP", "p", "i", "*", "f", "v", client=other) == first
    h.ok("MULTI")
    h.ok("XLEN", "s")
    assert h("EXEC") == NULL_ARRAY


def test_exhausted_stream_answers_retries_and_records_nothing_new(h):
    U64 = 2**64 - 1
    first = h("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    h.ok("XADD", "s", f"{U64}-{U64}", "f", "v")
    assert h("XADD", "s", "IDMP", "p", "i", "*", "f", "v") == first
    assert h.err("XADD", "s", "IDMP", "p", "new", "*", "f", "v") == errors.XADD_ID_EXHAUSTED
    assert pairs(h) == [(b"p", b"i", StreamID(NOW, 0))]  # cf. redis/redis#15840


def test_binary_and_long_ids(h):
    # Redis 8.6's "binary-safe iid" and "maximum length iid" tests.
    first = h("XADD", "s", "IDMP", b"\x00\x01", b"\x00\x01\x02\xff", "*", "field", "value")
    assert h("XADD", "s", "IDMP", b"\x00\x01", b"\x00\x01\x02\xff", "*", "f", "dup") == first
    long_iid = b"x" * 65536
    assert h("XADD", "s", "IDMP", "p", long_iid, "*", "f", "v") != first
    assert h("XLEN", "s") == 2


# -- XCFGSET --------------------------------------------------------------------------

def test_xcfgset_sets_and_shows(h):
    # xcfgset examples, and XINFO STREAM showing the values.
    h.ok("XADD", "mystream", "*", "field", "value")
    assert h("XCFGSET", "mystream", "IDMP-DURATION", "300") == OK
    assert h("XCFGSET", "mystream", "IDMP-MAXSIZE", "1000") == OK
    assert idmp(h, "mystream")[:2] == [300, 1000]
    assert h("XCFGSET", "mystream", "idmp-duration", "600", "idmp-maxsize", "500") == OK
    assert idmp(h, "mystream")[:2] == [600, 500]
    assert h("XCFGSET", "mystream", "IDMP-DURATION", "86400", "IDMP-MAXSIZE", "10000") == OK
    assert h("XCFGSET", "mystream", "IDMP-DURATION", "1", "IDMP-MAXSIZE", "1") == OK
    assert idmp(h, "mystream")[:2] == [1, 1]


def test_xcfgset_errors(h):
    # xcfgset "Error conditions": WRONGTYPE, no such key, syntax, ranges
    # (range texts as Redis 8.6 words them).
    h.ok("XADD", "s", "*", "f", "v")
    h.ok("SET", "str", "x")
    assert h.err("XCFGSET", "s") == errors.XCFGSET_NO_PARAMETER
    for argv in (["IDMP-DURATION"], ["IDMP-MAXSIZE"], ["INVALID"], ["IDMP-DURATION", "5", "X"],
                 ["INVALID", "5"]):
        assert h.err("XCFGSET", "s", *argv) == errors.SYNTAX, argv
    for value in ("A", "*", "-", "+", "120-5", "3.14", "000000000", "IDMP-DURATION"):
        assert h.err("XCFGSET", "s", "IDMP-DURATION", value) == errors.NOT_INTEGER
        assert h.err("XCFGSET", "s", "IDMP-MAXSIZE", value) == errors.NOT_INTEGER
    assert h.err("XCFGSET", "s", "IDMP-DURATION", "INVALID", "IDMP-MAXSIZE") == errors.NOT_INTEGER
    for value in ("0", "-100", "86401"):
        assert h.err("XCFGSET", "s", "IDMP-DURATION", value) == errors.XCFGSET_DURATION_RANGE
    for value in ("0", "-50", "10001"):
        assert h.err("XCFGSET", "s", "IDMP-MAXSIZE", value) == errors.XCFGSET_MAXSIZE_RANGE
    assert h.err("XCFGSET", "nokey", "IDMP-DURATION", "5") == errors.NO_SUCH_KEY
    assert h.err("XCFGSET", "str", "IDMP-DURATION", "5") == errors.WRONGTYPE
    assert h.err("XCFGSET") == errors.wrong_arity(b"xcfgset").message
    assert idmp(h)[:2] == [100, 100]  # nothing was changed by a failed call
    assert h.stream().idmp is None


def test_xcfgset_clears_history_only_on_a_change(h):
    # idempotency page: XCFGSET "with different ... values than the current
    # values ... clears its IDMP map"; lifetime counters stay.
    id1 = h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value1")
    h("XADD", "s", "IDMP", "p2", "req-2", "*", "field", "value2")
    assert h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "dup") == id1
    h.take_effects()
    h.ok("XCFGSET", "s", "IDMP-DURATION", "100", "IDMP-MAXSIZE", "100")  # same values
    assert h.take_effects() == []
    assert h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "dup2") == id1
    assert idmp(h) == [100, 100, 2, 2, 2, 2]
    h.ok("XCFGSET", "s", "IDMP-DURATION", "60")
    assert h.take_effects() == [[b"XCFGSET", b"s", b"IDMP-DURATION", b"60"]]
    assert idmp(h) == [60, 100, 0, 0, 2, 2]
    new = h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "new1")
    assert new != id1
    assert h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "dup") == new
    assert h("XRANGE", "s", id1, id1) == [[id1, [b"field", b"value1"]]]  # entries stay


def test_xcfgset_then_xadd_uses_the_new_settings(h):
    h.ok("XADD", "s", "*", "field", "init")
    h.ok("XCFGSET", "s", "IDMP-DURATION", "10", "IDMP-MAXSIZE", "5000")
    id1 = h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value1")
    for _ in range(3):
        h.ok("XCFGSET", "s", "IDMP-DURATION", "10", "IDMP-MAXSIZE", "5000")
    assert h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "dup") == id1
    h.clock.advance(10 * SEC)
    assert h("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "later") != id1


# -- config ---------------------------------------------------------------------------

def test_server_defaults_apply_to_streams_that_start_using_idmp(h):
    # XINFO STREAM shows the defaults; CONFIG SET stream-idmp-* sets them.
    h.ok("XADD", "s", "*", "f", "v")
    assert idmp(h) == [100, 100, 0, 0, 0, 0]
    assert h.ok("CONFIG", "GET", "stream-idmp-*").items == [
        (b"stream-idmp-duration", b"100"), (b"stream-idmp-maxsize", b"100")]
    h.ok("CONFIG", "SET", "stream-idmp-duration", "2", "stream-idmp-maxsize", "3")
    h.ok("XADD", "t", "IDMP", "p", "i", "*", "f", "v")
    assert idmp(h, "t")[:2] == [2, 3]
    h.ok("CONFIG", "SET", "stream-idmp-duration", "100")
    assert idmp(h, "t")[:2] == [2, 3]  # a stream keeps what it took
    for name, bad in (("stream-idmp-duration", "0"), ("stream-idmp-duration", "86401"),
                      ("stream-idmp-maxsize", "0"), ("stream-idmp-maxsize", "10001")):
        assert b"must be between" in h.err("CONFIG", "SET", name, bad)


# -- XIDMPRECORD ----------------------------------------------------------------------

def test_xidmprecord_records_and_is_idempotent(h):
    # xidmprecord: "OK when the provided pid/iid pair already maps to the same stream ID".
    id = h("XADD", "s", "*", "f", "v")
    assert h("XIDMPRECORD", "s", "p", "i", id) == OK
    assert h.take_effects()[-1] == [b"XIDMPRECORD", b"s", b"p", b"i", id]
    assert h("XIDMPRECORD", "s", "p", "i", id) == OK
    assert h.take_effects() == []  # nothing changed, nothing propagated
    assert h("XADD", "s", "IDMP", "p", "i", "*", "f", "w") == id
    assert idmp(h)[2:] == [1, 1, 1, 1]


def test_xidmprecord_errors(h):
    # xidmprecord: errors for a missing key, another type, a non-existing or
    # deleted entry, an empty pid or iid, a pair mapped to another ID.
    a = h("XADD", "s", "*", "f", "v")
    bb = h("XADD", "s", "*", "f", "v")
    h.ok("SET", "str", "x")
    assert h.err("XIDMPRECORD", "nokey", "p", "i", a) == errors.NO_SUCH_KEY
    assert h.err("XIDMPRECORD", "str", "p", "i", a) == errors.WRONGTYPE
    assert h.err("XIDMPRECORD", "s", "p", "i", "9-9") == errors.XIDMPRECORD_NO_ENTRY
    h.ok("XDEL", "s", a)
    assert h.err("XIDMPRECORD", "s", "p", "i", a) == errors.XIDMPRECORD_NO_ENTRY
    assert h.err("XIDMPRECORD", "s", "", "i", bb) == errors.XIDMPRECORD_EMPTY_PID
    assert h.err("XIDMPRECORD", "s", "p", "", bb) == errors.XIDMPRECORD_EMPTY_IID
    for bad in ("x", "-", "+", "1-*"):
        assert h.err("XIDMPRECORD", "s", "p", "i", bad) == errors.INVALID_STREAM_ID
    assert h("XIDMPRECORD", "s", "p", "i", bb) == OK
    c = h("XADD", "s", "*", "f", "v")
    assert h.err("XIDMPRECORD", "s", "p", "i", c) == errors.XIDMPRECORD_CONFLICT
    assert h.err("XIDMPRECORD", "s", "p", "i") == errors.wrong_arity(b"xidmprecord").message
    assert pairs(h) == [(b"p", b"i", StreamID(*map(int, bb.split(b"-"))))]


def test_xidmprecord_from_the_aof_is_never_refused(h):
    a = h("XADD", "s", "*", "f", "v")
    h.ok("XDEL", "s", a)
    c = h("XADD", "s", "*", "f", "v")
    aof = h.new_client(kind="aof")
    assert h("XIDMPRECORD", "s", "p", "i", a, client=aof) == OK  # entry gone: still recorded
    assert h("XIDMPRECORD", "s", "p", "i", c, client=aof) == OK  # replaces the pair
    assert pairs(h) == [(b"p", b"i", StreamID(*map(int, c.split(b"-"))))]


# -- XINFO STREAM ---------------------------------------------------------------------

def test_xinfo_stream_field_order(h):
    # xinfo-stream: the IDMP fields; Redis 8.6 puts them after
    # recorded-first-entry-id, in summary and FULL replies alike.
    h.ok("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    summary = [k for k, _ in h.ok("XINFO", "STREAM", "s").items]
    assert summary == [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
                       b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id",
                       *IDMP_KEYS, b"groups", b"first-entry", b"last-entry"]
    full = [k for k, _ in h.ok("XINFO", "STREAM", "s", "FULL").items]
    assert full == [*summary[:7], *IDMP_KEYS, b"entries", b"groups"]
    assert [info(h, "s", "FULL")[k] for k in IDMP_KEYS] == [100, 100, 1, 1, 1, 0]


def test_xinfo_counts_drop_expired_pairs(h):
    h.ok("XADD", "s", "*", "f", "v")
    h.ok("XCFGSET", "s", "IDMP-DURATION", "2")
    h.ok("XADD", "s", "IDMP", "p1", "a", "*", "f", "v")
    h.clock.advance(SEC)
    h.ok("XADD", "s", "IDMP", "p2", "b", "*", "f", "v")
    assert idmp(h)[2:4] == [2, 2]
    h.clock.advance(SEC)
    assert idmp(h)[2:4] == [1, 1]
    h.clock.advance(SEC)
    assert idmp(h) == [2, 100, 0, 0, 2, 0]


# -- the cron sweep ---------------------------------------------------------------------

def test_cron_expires_pairs_nobody_touches(h):
    h.ok("CONFIG", "SET", "stream-idmp-duration", "1")
    for key in ("s", "t"):
        for n in range(5):
            h.ok("XADD", key, "IDMP", f"p{n}", "i", "*", "f", "v")
    h.clock.advance(SEC - 1)
    h.engine.cron()
    assert h.stream("s").idmp.iids_tracked == 5
    h.clock.advance(1)
    h.engine.cron()
    assert h.stream("s").idmp.iids_tracked == 0 and h.stream("t").idmp.pids_tracked == 0
    assert len(h.engine._idmp_sweep) == 0  # empty states leave the sweep


def test_cron_work_is_bounded(h):
    h.ok("CONFIG", "SET", "stream-idmp-duration", "1")
    h.ok("CONFIG", "SET", "stream-idmp-maxsize", "10000")
    total = 3 * IDMP_EXPIRE_BUDGET
    h.ok("MULTI")
    for n in range(total):
        h("XADD", "s", "IDMP", "p", n, "*", "f", "v")
    h.ok("EXEC")
    h.clock.advance(SEC)
    state = h.stream().idmp
    assert h.engine.expire_idmp() <= IDMP_EXPIRE_BUDGET
    assert total - IDMP_EXPIRE_BUDGET <= state.iids_tracked < total
    for _ in range(5):
        h.engine.cron()
    assert state.iids_tracked == 0


def test_deleted_streams_leave_the_sweep(h):
    h.ok("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert len(h.engine._idmp_sweep) == 1
    h.ok("DEL", "s")
    h.engine.cron()
    assert len(h.engine._idmp_sweep) == 0


def test_renamed_streams_keep_their_state(h):
    first = h("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    h.ok("RENAME", "s", "t")
    h.clock.advance(1)
    assert h("XADD", "t", "IDMP", "p", "i", "*", "f", "v") == first
    assert h("XADD", "s", "IDMP", "p", "i", "*", "f", "v") != first  # a new stream
    assert (h("XLEN", "t"), h("XLEN", "s")) == (1, 1)


# -- effects replayed --------------------------------------------------------------------

def replay(h: Harness, effects: list[list[bytes]]) -> Harness:
    replica = Harness()
    replica.clock.set_ms(h.clock.now_ms())
    aof = replica.new_client(kind="aof")
    for argv in effects:
        replica.ok(*argv, client=aof)
    return replica


def state_of(h: Harness, key="s"):
    fields = info(h, key)
    return (h.ok("XRANGE", key, "-", "+"), pairs(h, key),
            [fields[k] for k in IDMP_KEYS if k != b"iids-duplicates"])


def test_replayed_effects_reproduce_entries_and_pairs(h):
    h.ok("XADD", "s", "IDMP", "p1", "a", "*", "f", "1")
    h.ok("XADD", "s", "IDMPAUTO", "p2", "*", "f", "2", "g", "3")
    h.clock.advance(3)
    h.ok("XADD", "s", "IDMP", "p1", "a", "*", "f", "dup")          # retry: no effect
    h.ok("XADD", "s", "IDMPAUTO", "p2", "*", "g", "3", "f", "2")   # retry: no effect
    h.ok("XADD", "s", "IDMP", "p1", "b", "MAXLEN", "~", "1", "*", "f", "4")
    h.ok("XADD", "s", "IDMP", "p3", "gone", "MAXLEN", "0", "*", "f", "5")  # trims itself
    h.ok("XADD", "t", "*", "f", "v")
    h.ok("XCFGSET", "t", "IDMP-MAXSIZE", "2")
    for n in range(4):
        h.ok("XADD", "t", "IDMP", "q", n, "*", "f", n)
    effects = h.take_effects()
    assert [argv[0] for argv in effects].count(b"XADD") == 9  # the retries sent nothing
    replica = replay(h, effects)
    for key in ("s", "t"):
        assert state_of(replica, key) == state_of(h, key)
    # Retries sent to the replica's copy are recognised there too.
    for argv in (["IDMP", "p1", "a"], ["IDMP", "p3", "gone"], ["IDMPAUTO", "p2"]):
        fields = ["g", "3", "f", "2"] if argv[0] == "IDMPAUTO" else ["f", "x"]
        assert replica("XADD", "s", *argv, "*", *fields) == \
            h("XADD", "s", *argv, "*", *fields)
    assert replica("XLEN", "s") == h("XLEN", "s")


def test_replay_adds_even_when_the_replica_still_holds_the_pair(h):
    # A replica sweeps on its own clock: it may hold a pair its primary let
    # expire.  The replayed XADD still adds its entry, and the pair moves to it.
    h.ok("XADD", "s", "*", "f", "v")
    h.ok("XCFGSET", "s", "IDMP-DURATION", "1")
    h.ok("XADD", "s", "IDMP", "p", "i", "*", "f", "1")
    replica = replay(h, h.take_effects())
    h.clock.advance(SEC)
    second = h("XADD", "s", "IDMP", "p", "i", "*", "f", "2")
    effects = h.take_effects()
    aof = replica.new_client(kind="aof")  # the replica's clock did not move
    for argv in effects:
        assert replica(*argv, client=aof) == second
    assert state_of(replica) == state_of(h)


def test_replay_of_an_old_pair_ages_from_its_entry(h):
    # A pair replayed (AOF load) long after its XADD is as old as its entry,
    # as in Redis: it expires then rather than a full duration later.
    h.ok("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    effects = h.take_effects()
    h.clock.advance(100 * SEC)
    replica = replay(h, effects)
    assert idmp(replica)[2:5] == [0, 0, 1]  # recorded, and already expired
    assert replica("XADD", "s", "IDMP", "p", "i", "*", "f", "v") != h("XRANGE", "s", "-", "+")[0][0]


def test_xidmprecord_replays(h):
    a = h("XADD", "s", "*", "f", "v")
    h.ok("XIDMPRECORD", "s", "p", "i", a)
    replica = replay(h, h.take_effects())
    assert state_of(replica) == state_of(h)
    assert b(a) == replica("XADD", "s", "IDMP", "p", "i", "*", "f", "w")
