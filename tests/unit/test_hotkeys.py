"""HOTKEYS without sockets: the Space-Saving top-K against a plain dict,
HOTKEYS START's arguments (Redis's errors, in Redis's order), a session's
accounting, and the engine's side (commands measured only while a session
records, EXEC's commands each on its own, DURATION's stop by the cron).

Pages: https://redis.io/docs/latest/commands/hotkeys-start/ (arguments),
https://redis.io/docs/latest/commands/hotkeys-get/ (the reply's fields).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.clock import FakeClock
from tidelog.commands import table
from tidelog.commands.key_specs import acl_keys
from tidelog.commands.server.hotkeys import (
    PLACES_PER_KEY,
    Session,
    StartArgs,
    command_keys,
    key_slot,
    parse_start,
    reply_size,
    request_size,
    slot_ranges,
)
from tidelog.engine import Engine
from tidelog.errors import CommandError
from tidelog.resp import encode
from tidelog.resp.replies import OK, ErrorReply, Map, Replies
from tidelog.types.topk import TopK

# =====================================================================================
# TopK
# =====================================================================================
streams = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 50)), max_size=400)


def _check(top: TopK) -> None:
    """The representation's invariants: at most ``capacity`` items, and one
    heap pair per item, never above its count."""
    assert len(top.counts) <= top.capacity
    assert len(top.heap) == len(top.counts)
    assert {i for _, i in top.heap} == set(top.counts)
    assert all(c <= top.counts[i] for c, i in top.heap)


@settings(max_examples=300, deadline=None)
@given(capacity=st.integers(1, 12), stream=streams)
def test_topk_keeps_space_savings_guarantees(capacity, stream):
    top = TopK(capacity)
    true: dict[bytes, int] = {}
    for n, weight in stream:
        item = b"k%d" % n
        top.add(item, weight)
        if weight > 0:
            true[item] = true.get(item, 0) + weight
        _check(top)
    total = sum(true.values())
    assert top.total == total == sum(top.counts.values())  # an eviction passes its count on
    bound = total / capacity
    for item, count in top.counts.items():
        assert count >= true[item]                # never below the truth
        assert count - true[item] <= bound        # and at most total/capacity above
    for item, weight in true.items():
        if weight > bound:
            assert item in top.counts             # every heavy item is kept
    if len(true) <= capacity:
        assert top.counts == true                 # exact while everything fits


@settings(max_examples=100, deadline=None)
@given(stream=streams, k=st.integers(1, 10))
def test_topk_top_is_the_heaviest_first(stream, k):
    top = TopK(64)  # more places than items: exact counts
    for n, weight in stream:
        top.add(b"k%d" % n, weight)
    expected = sorted(top.counts.items(), key=lambda p: (-p[1], p[0]))[:k]
    assert top.top(k) == expected
    counts = [c for _, c in top.top(k)]
    assert counts == sorted(counts, reverse=True)


def test_topk_counts_a_hot_item_among_many_passing_ones():
    top = TopK(4)
    for i in range(1000):
        top.add(b"hot", 1)
        top.add(b"k%d" % i, 1)  # a new item each time: an eviction each time
        _check(top)
    assert top.top(1) == [(b"hot", 1000)]


def test_topk_refuses_no_places():
    with pytest.raises(ValueError):
        TopK(0)


# =====================================================================================
# HOTKEYS START's arguments
# =====================================================================================
def start(*args: str, cluster: bool = False) -> StartArgs:
    return parse_start([b"HOTKEYS", b"START", *(a.encode() for a in args)], cluster)


def start_error(*args: str, cluster: bool = False) -> bytes:
    with pytest.raises(CommandError) as info:
        start(*args, cluster=cluster)
    return info.value.message


@pytest.mark.parametrize("args, error", [
    ((), b"ERR METRICS parameter is required"),
    (("METRICS",), b"ERR METRICS parameter is required"),
    (("COUNT", "1", "CPU"), b"ERR METRICS parameter is required"),
    (("METRICS", "0"), b"ERR METRICS count must be > 0 and <= 2"),
    (("METRICS", "-1", "CPU"), b"ERR METRICS count must be > 0 and <= 2"),
    (("METRICS", "3", "CPU", "NET"), b"ERR METRICS count must be > 0 and <= 2"),
    (("METRICS", "x", "CPU"), b"ERR METRICS count must be > 0 and <= 2"),
    (("METRICS", "2", "CPU"), b"ERR METRICS count does not match number of metric types provided"),
    (("METRICS", "1", "CPU", "NET"), b"ERR syntax error"),
    (("METRICS", "1", "GPU"), b"ERR METRICS no valid metrics passed. Supported: CPU|NET"),
    (("METRICS", "2", "GPU", "NYET"), b"ERR METRICS no valid metrics passed. Supported: CPU|NET"),
    (("METRICS", "2", "CPU", "cpu"), b"ERR METRICS CPU defined more than once!"),
    (("METRICS", "2", "NET", "NET"), b"ERR METRICS NET defined more than once!"),
    (("METRICS", "1", "CPU", "COUNT", "0"), b"ERR COUNT must be between 1 and 64"),
    (("METRICS", "1", "CPU", "COUNT", "65"), b"ERR COUNT must be between 1 and 64"),
    (("METRICS", "1", "CPU", "COUNT", "ten"), b"ERR COUNT must be between 1 and 64"),
    (("METRICS", "1", "CPU", "COUNT"), b"ERR syntax error"),
    (("METRICS", "1", "CPU", "DURATION", "0"), b"ERR DURATION must be between 1 and 1000000"),
    (("METRICS", "1", "CPU", "DURATION", "1000001"), b"ERR DURATION must be between 1 and 1000000"),
    (("METRICS", "1", "CPU", "SAMPLE", "0"), b"ERR SAMPLE ratio must be positive"),
    (("METRICS", "1", "CPU", "SAMPLE", "2147483648"), b"ERR SAMPLE ratio must be positive"),
    (("METRICS", "1", "CPU", "SLOTS", "2", "0", "5"),
     b"ERR SLOTS parameter cannot be used in non-cluster mode"),
    (("METRICS", "1", "CPU", "SLOTS"), b"ERR syntax error"),
    (("METRICS", "1", "CPU", "FOO", "1"), b"ERR syntax error"),
])
def test_start_errors(args, error):
    assert start_error(*args) == error


@pytest.mark.parametrize("args, error", [
    (("SLOTS", "2", "0"), b"ERR not enough slot numbers provided"),
    (("SLOTS", "2", "0", "0"), b"ERR duplicate slot number"),
    (("SLOTS", "1", "0", "SLOTS", "1", "5"), b"ERR SLOTS parameter already specified"),
    (("SLOTS", "0", "1"), b"ERR SLOTS count must be between 1 and 16384"),
    (("SLOTS", "1", "16384"), b"ERR Invalid or out of range slot"),
    (("SLOTS", "1", "x"), b"ERR Invalid or out of range slot"),
])
def test_start_slots_errors_in_cluster_mode(args, error):
    assert start_error("METRICS", "1", "CPU", *args, cluster=True) == error


def test_start_records_what_it_was_given():
    assert start("METRICS", "1", "cpu") == StartArgs(cpu=True, net=False)
    assert start("metrics", "2", "GPU", "NET") == StartArgs(cpu=False, net=True)
    assert start("METRICS", "2", "NET", "CPU", "sample", "5", "COUNT", "64", "DURATION", "3",
                 "COUNT", "7") == StartArgs(True, True, 7, 3000, 5)
    assert start("METRICS", "1", "CPU", "SLOTS", "3", "7", "5", "6", cluster=True).slots == (5, 6, 7)


options = st.fixed_dictionaries({}, optional={
    "COUNT": st.integers(1, 64), "DURATION": st.integers(1, 1_000_000),
    "SAMPLE": st.integers(1, 2**31 - 1),
    "SLOTS": st.lists(st.integers(0, 16383), min_size=1, max_size=5, unique=True)})


@settings(max_examples=200, deadline=None)
@given(metrics=st.sampled_from([["CPU"], ["NET"], ["CPU", "NET"], ["NET", "CPU"]]),
       opts=options, order=st.randoms(use_true_random=False))
def test_start_reads_any_valid_command_as_a_client_builds_it(metrics, opts, order):
    argv = ["METRICS", str(len(metrics)), *metrics]
    names = list(opts)
    order.shuffle(names)
    for name in names:
        value = opts[name]
        argv += [name, *map(str, [len(value), *value])] if name == "SLOTS" else [name, str(value)]
    got = start(*argv, cluster=True)
    assert got == StartArgs("CPU" in metrics, "NET" in metrics, opts.get("COUNT", 10),
                            opts.get("DURATION", 0) * 1000, opts.get("SAMPLE", 1),
                            tuple(sorted(opts.get("SLOTS", ()))))


def test_slot_ranges_join_runs():
    assert slot_ranges(()) == []
    assert slot_ranges((0, 5)) == [[0], [5]]
    assert slot_ranges((1, 2, 3, 7, 9, 10)) == [[1, 3], [7], [9, 10]]


@pytest.mark.parametrize("key, slot", [
    # CLUSTER KEYSLOT of redis-server 7.0.15 (cluster-enabled yes).
    (b"123456789", 12739), (b"foo", 12182), (b"somekey", 11058), (b"foo{hash_tag}", 2515),
    (b"foo{}{bar}", 8363), (b"foo{bar}{zap}", 5061), (b"bar", 5061), (b"foo{{bar}}zap", 4015),
    (b"{}x", 10595), (b"x", 16287),
])
def test_key_slot_is_redis_clusters(key, slot):
    assert key_slot(key) == slot


def test_request_and_reply_sizes_are_the_bytes_on_the_wire():
    argv = [b"SET", b"key", b"x" * 12]
    assert request_size(argv) == len(b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$12\r\n" + b"x" * 12 + b"\r\n")
    assert reply_size(OK, 2) == 5
    assert reply_size(None, 2) == 5 and reply_size(None, 3) == 3
    assert reply_size(Map([(b"a", 1)]), 3) == len(encode(Map([(b"a", 1)]), 3))
    assert reply_size(Replies([1, 22]), 2) == len(b":1\r\n:22\r\n")


_SPECS = [spec for top in table.COMMANDS.values() for spec in (top, *top.subcommands.values())]
_WORDS = [b"0", b"1", b"2", b"-1", b"9", b"k", b"x", b"STREAMS", b"KEYS", b"STORE", b"BY",
          b"GET", b"LIMIT", b"NUMKEYS", b"WEIGHTS"]


@settings(max_examples=300, deadline=None)
@given(spec=st.sampled_from(_SPECS), args=st.lists(st.sampled_from(_WORDS), max_size=8))
def test_command_keys_are_the_keys_acl_finds(spec, args):
    argv = [part.encode() for part in spec.name.split("|")] + args
    assert command_keys(spec, argv) == [argv[i] for i, _ in acl_keys(spec, argv)]


# =====================================================================================
# A session's accounting
# =====================================================================================
SPEC = table.lookup([b"mget", b"k"])
SET = table.lookup([b"set", b"k", b"v"])
PING = table.lookup([b"ping"])


def fields(session: Session, now_ms: int = 0) -> dict[bytes, object]:
    return dict(session.report(now_ms).items)


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.binary(min_size=1, max_size=3), min_size=1, max_size=8),
       cost=st.integers(0, 100), seed=st.integers(0, 2**32))
def test_a_commands_cost_is_shared_among_its_keys_in_full(keys, cost, seed):
    session = Session(StartArgs(cpu=True, net=True, count=64), 0, random.Random(seed))
    argv = [b"MGET", *keys]
    session.record(SPEC, argv, cost, OK, 2)
    assert session.cpu.total == cost == session.cpu_all_us
    net = request_size(argv) + 5
    assert session.net.total == net == session.net_all
    for top, whole in ((session.cpu, cost), (session.net, net)):
        shares = {}
        for key in keys:  # a key named twice has two shares
            shares[key] = shares.get(key, 0) + 1
        for key, count in top.counts.items():
            low = whole // len(keys) * shares[key]
            assert low <= count <= low + shares[key]


def test_commands_without_keys_are_not_counted():
    session = Session(StartArgs(cpu=True, net=True), 0)
    session.record(PING, [b"PING"], 50, OK, 2)
    assert session.cpu_all_us == session.net_all == 0 and not session.cpu.counts


def test_sampling_counts_some_commands_in_the_top_and_all_in_the_totals():
    session = Session(StartArgs(cpu=True, net=False, sample_ratio=4), 0, random.Random(7))
    for _ in range(400):
        session.record(SET, [b"SET", b"k", b"v"], 10, OK, 2)
    assert session.cpu_all_us == 4000
    assert session.cpu_sampled_us == session.cpu.total == session.cpu.counts[b"k"]
    assert 0 < session.cpu_sampled_us < 4000
    report = fields(session)
    assert b"sampled-commands-selected-slots-us" not in report  # only with SLOTS too


def test_slots_keep_the_other_slots_keys_out_of_the_top():
    slot = key_slot(b"{a}x")
    session = Session(StartArgs(cpu=False, net=True, sample_ratio=2, slots=(slot,)), 0,
                      random.Random(1))
    for _ in range(50):
        session.record(SET, [b"SET", b"{a}x", b"v"], 3, OK, 2)
        session.record(SET, [b"SET", b"{b}x", b"v"], 3, OK, 2)
    assert set(session.net.counts) == {b"{a}x"}
    assert session.net_all == 2 * session.net_selected
    report = fields(session)
    assert report[b"selected-slots"] == [[slot]]
    assert list(report)[3:8] == [
        b"sampled-commands-selected-slots-us", b"all-commands-selected-slots-us",
        b"all-commands-all-slots-us", b"net-bytes-sampled-commands-selected-slots",
        b"net-bytes-all-commands-selected-slots"]


@pytest.mark.parametrize("cpu, net, tail", [
    (True, False, [b"total-cpu-time-user-ms", b"total-cpu-time-sys-ms", b"by-cpu-time-us"]),
    (False, True, [b"total-net-bytes", b"by-net-bytes"]),
    (True, True, [b"total-cpu-time-user-ms", b"total-cpu-time-sys-ms", b"total-net-bytes",
                  b"by-cpu-time-us", b"by-net-bytes"]),
])
def test_the_report_has_redis_fields_in_redis_order(cpu, net, tail):
    session = Session(StartArgs(cpu=cpu, net=net, count=2), 1000)
    for key, cost in ((b"a", 5), (b"b", 9), (b"c", 7)):
        session.record(SET, [b"SET", key, b"v"], cost, OK, 2)
    report = fields(session, 1500)
    assert list(report) == [
        b"tracking-active", b"sample-ratio", b"selected-slots", b"all-commands-all-slots-us",
        b"net-bytes-all-commands-all-slots", b"collection-start-time-unix-ms",
        b"collection-duration-ms", *tail]
    assert report[b"tracking-active"] == 1 and report[b"sample-ratio"] == 1
    assert report[b"selected-slots"] == [[0, 16383]]
    assert report[b"collection-start-time-unix-ms"] == 1000
    assert report[b"collection-duration-ms"] == 500
    if cpu:
        assert report[b"by-cpu-time-us"] == [b"b", 9, b"c", 7]  # COUNT 2 of 3
    session.stop(1800)
    report = fields(session, 9999)
    assert report[b"tracking-active"] == 0 and report[b"collection-duration-ms"] == 800


def test_duration_stops_the_session_at_its_deadline():
    session = Session(StartArgs(cpu=True, net=False, duration_ms=2000), 1000)
    assert not session.expire(2999) and session.active
    assert session.expire(3500) and not session.active
    assert session.stopped_ms == 2000
    assert not session.expire(9999)


# =====================================================================================
# The engine's side
# =====================================================================================
def run(engine, client, *argv):
    return engine.execute(client, [a if isinstance(a, bytes) else str(a).encode() for a in argv])


def report(engine, client) -> dict[bytes, object]:
    got = run(engine, client, "HOTKEYS", "GET")
    assert isinstance(got, list) and len(got) == 1
    return dict(got[0].items)


def test_commands_are_measured_only_while_a_session_records():
    engine = Engine()
    client = engine.new_client()
    run(engine, client, "SET", "warm", "v")
    assert engine._dispatch and not engine.ops.bypass  # the fast path is in use
    assert run(engine, client, "HOTKEYS", "START", "METRICS", 1, "NET") == OK
    assert not engine._dispatch and engine.ops.bypass  # every command is checked now
    run(engine, client, "SET", "k", "v")
    assert not engine._dispatch
    assert report(engine, client)[b"by-net-bytes"] == [b"k", 27 + 5]  # request + "+OK\r\n"
    assert run(engine, client, "HOTKEYS", "STOP") == OK
    assert not engine.ops.bypass and engine.ops.hotkeys is None
    run(engine, client, "SET", "k", "v")
    run(engine, client, "SET", "other", "v")
    assert engine._dispatch  # the fast path again, and nothing more counted
    assert report(engine, client)[b"by-net-bytes"] == [b"k", 32]
    assert engine.internal_errors == 0


def test_exec_counts_each_queued_command_and_scripts_their_declared_keys():
    engine = Engine()
    client = engine.new_client()
    assert run(engine, client, "HOTKEYS", "START", "METRICS", 1, "NET") == OK
    run(engine, client, "MULTI")
    run(engine, client, "SET", "a", "1")
    run(engine, client, "INCR", "b")
    run(engine, client, "EXEC")
    run(engine, client, "EVAL", "redis.call('set', 'inner', 1)", 1, "x")
    got = dict(zip(*[iter(report(engine, client)[b"by-net-bytes"])] * 2))
    assert set(got) == {b"a", b"b", b"x"}  # not EXEC, not the script's own command
    assert got[b"a"] == request_size([b"SET", b"a", b"1"]) + 5
    assert got[b"b"] == request_size([b"INCR", b"b"]) + 4
    assert engine.internal_errors == 0


def test_duration_ends_the_session_in_the_cron_and_gives_the_fast_path_back():
    clock = FakeClock()
    engine = Engine(clock=clock)
    client = engine.new_client()
    assert run(engine, client, "HOTKEYS", "START", "METRICS", 1, "CPU", "DURATION", 2) == OK
    clock.advance(1999)
    engine.cron()
    assert engine.ops.bypass and report(engine, client)[b"tracking-active"] == 1
    clock.advance(1)
    engine.cron()
    assert not engine.ops.bypass
    got = report(engine, client)
    assert got[b"tracking-active"] == 0 and got[b"collection-duration-ms"] == 2000


def test_session_errors_and_nulls():
    engine = Engine()
    client = engine.new_client()
    assert run(engine, client, "HOTKEYS", "GET") is None
    assert run(engine, client, "HOTKEYS", "STOP") is None
    assert run(engine, client, "HOTKEYS", "RESET") == OK
    assert run(engine, client, "HOTKEYS", "START", "METRICS", 1, "CPU") == OK
    assert run(engine, client, "HOTKEYS", "START", "METRICS", 1, "NET") == ErrorReply(
        b"ERR hotkey tracking session already in progress")
    assert run(engine, client, "HOTKEYS", "RESET") == ErrorReply(
        b"ERR hotkey tracking session in progress, stop tracking first")
    assert run(engine, client, "HOTKEYS", "STOP") == OK
    assert run(engine, client, "HOTKEYS", "STOP") is None
    assert report(engine, client)[b"tracking-active"] == 0
    assert run(engine, client, "HOTKEYS", "START", "METRICS", 1, "NET") == OK  # replaces it
    assert b"by-net-bytes" in report(engine, client)
    run(engine, client, "HOTKEYS", "STOP")
    assert run(engine, client, "HOTKEYS", "RESET") == OK
    assert run(engine, client, "HOTKEYS", "GET") is None


def test_the_top_holds_count_times_ten_places():
    session = Session(StartArgs(cpu=True, net=False, count=3), 0)
    assert session.cpu.capacity == 3 * PLACES_PER_KEY
