"""Runs: consecutive pipelined calls of one command on one key handed to the
engine together (``Engine.run_key`` / ``Engine.execute_run``, the XADD run
handler in commands/streams.py).

The rule is that nobody can tell: two engines get the same commands, one
runs them one by one with ``execute``, the other groups them exactly as a
session does (``server/session.py``'s ``_run_end``) and runs each group with
``execute_run``; replies, the data, the effects (batch by batch), the dirty
count, the call and error counters and WATCH must come out equal.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.engine_harness import U64, Harness
from tidelog.engine import BLOCKED
from tidelog.resp.replies import ErrorReply
from tidelog.types.stream import Stream


def group_as_a_connection_does(engine, commands):
    """Split commands into what one connection would hand over: runs (lists
    of several) and single commands (lists of one)."""
    groups, i = [], 0
    while i < len(commands):
        first = commands[i]
        key = engine.run_key(first) if first[0] in engine.runnable else None
        run = [first]
        i += 1
        while key is not None and i < len(commands):
            argv = commands[i]
            if argv[0] in engine.runnable and engine.run_key(argv) == key:
                run.append(argv)
                i += 1
            else:
                break
        groups.append(run)
    return groups


def play_one_by_one(h, commands):
    return [h.engine.execute(h.client, argv) for argv in commands]


def play_in_runs(h, commands):
    replies = []
    # Groups are formed as commands arrive: the raw names a run may join by
    # are learnt from the commands run before, as on a connection.
    pending = list(commands)
    while pending:
        run = group_as_a_connection_does(h.engine, pending)[0]
        del pending[:len(run)]
        if len(run) == 1:
            replies.append(h.engine.execute(h.client, run[0]))
        else:
            replies.extend(h.engine.execute_run(h.client, run))
    return replies


def state_of(h):
    engine = h.engine
    dump = {}
    for key in sorted(engine.dbs[0].data):
        if h.engine.execute(h.client, [b"TYPE", key]).text == b"stream":
            dump[key] = (h.engine.execute(h.client, [b"XRANGE", key, b"-", b"+"]),
                         h.engine.execute(h.client, [b"XINFO", b"STREAM", key]))
        else:
            dump[key] = h.engine.execute(h.client, [b"GET", key])
    return {
        "data": dump,
        "effects": h.effects,
        "dirty": engine.dirty,
        "calls": engine.command_calls,
        "errors": engine.stats["total_error_replies"],
    }


xadd_auto = st.builds(
    lambda key, pairs, cut: [b"XADD", key, b"*"] + [b"f%d" % i if j % 2 == 0 else b"v" * i
                                                   for i in range(pairs) for j in range(2)][:2 * pairs - cut],
    st.sampled_from([b"s", b"t", b"str", b"full"]),
    st.integers(1, 3),
    st.sampled_from([0, 0, 0, 1]),  # 1: a field without its value (a wrong-arity call)
)
other = st.sampled_from([
    [b"XADD", b"s", b"9999999999999-1", b"f", b"v"],
    [b"xadd", b"s", b"*", b"lower", b"case"],
    [b"XLEN", b"s"],
    [b"SET", b"s", b"now a string"],
    [b"DEL", b"s"],
    [b"XADD", b"s", b"NOMKSTREAM", b"*", b"f", b"v"],
    [b"XTRIM", b"s", b"MAXLEN", b"2"],
])
commands = st.lists(st.one_of(xadd_auto, xadd_auto, xadd_auto, other), max_size=40)


def fresh(node_entries):
    h = Harness(node_entries=node_entries)
    h(b"SET", b"str", b"a string")
    h(b"XADD", b"full", b"%d-%d" % (U64, U64 - 1), b"f", b"v")
    h(b"XADD", b"full", b"*", b"f", b"v")  # the last ID there is: XADD * fails from now on
    h(b"XADD", b"t", b"*", b"f", b"v")     # the raw name XADD is known from here on
    h.effects.clear()
    return h


@settings(max_examples=150, deadline=None)
@given(commands, st.sampled_from([1, 3, 100]), st.integers(0, 2))
def test_runs_answer_and_change_exactly_as_one_by_one(cmds, node_entries, tick):
    one, runs = fresh(node_entries), fresh(node_entries)
    watcher_one, watcher_runs = one.engine.new_client(), runs.engine.new_client()
    one.engine.execute(watcher_one, [b"WATCH", b"s"])
    runs.engine.execute(watcher_runs, [b"WATCH", b"s"])
    # The clock moves between the halves (an ID's ms from the clock, or the
    # last ID's sequence + 1 when it did not move).
    half = len(cmds) // 2
    replies_one = play_one_by_one(one, cmds[:half])
    replies_runs = play_in_runs(runs, cmds[:half])
    one.clock.advance(tick)
    runs.clock.advance(tick)
    replies_one += play_one_by_one(one, cmds[half:])
    replies_runs += play_in_runs(runs, cmds[half:])
    assert replies_runs == replies_one
    assert watcher_runs.dirty_cas == watcher_one.dirty_cas
    assert state_of(runs) == state_of(one)
    for value in runs.engine.dbs[0].data.values():
        if isinstance(value, Stream):
            value.check()  # the stream's invariants, after the runs


def test_a_run_of_xadds_is_one_call_of_the_run_handler_with_a_reply_each():
    h = fresh(100)
    run = [[b"XADD", b"s", b"*", b"n", b"%d" % i] for i in range(5)]
    assert h.engine.run_key(run[0]) == h.engine.run_key(run[4]) is not None
    replies = h.engine.execute_run(h.client, run)
    assert replies == [b"1700000000000-%d" % i for i in range(5)]
    assert [argv for batch in h.effects for _, argv in batch] == [
        [b"XADD", b"s", b"1700000000000-%d" % i, b"n", b"%d" % i] for i in range(5)]
    assert all(len(batch) == 1 for batch in h.effects)  # one unit per call
    assert h.engine.command_calls["xadd"] == 3 + 5  # 3 in fresh()


def test_errors_inside_a_run_are_the_calls_own_and_the_others_still_run():
    h = fresh(100)
    run = [[b"XADD", b"s", b"*", b"a", b"1"], [b"XADD", b"s", b"*", b"a"], [b"XADD", b"s", b"*", b"b", b"2"]]
    before = h.engine.stats["total_error_replies"]
    replies = h.engine.execute_run(h.client, run)
    assert replies[0] == b"1700000000000-0"
    assert replies[1] == ErrorReply(b"ERR wrong number of arguments for 'xadd' command")
    assert replies[2] == b"1700000000000-1"
    assert h.engine.stats["total_error_replies"] == before + 1
    wrong = h.engine.execute_run(h.client, [[b"XADD", b"str", b"*", b"a", b"1"]] * 2)
    assert [r.message[:9] for r in wrong] == [b"WRONGTYPE"] * 2


def test_only_the_form_the_run_handler_takes_starts_a_run():
    h = fresh(100)
    assert h.engine.run_key([b"XADD", b"s", b"*", b"f", b"v"]) is not None
    assert h.engine.run_key([b"XADD", b"s", b"1-1", b"f", b"v"]) is None
    assert h.engine.run_key([b"XADD", b"s", b"MAXLEN", b"5", b"*", b"f", b"v"]) is None
    assert h.engine.run_key([b"XADD", b"s", b"*", b"f"]) is None  # under XADD's arity


def test_a_blocked_reader_makes_a_run_go_one_by_one():
    """Redis serves a blocked client between two commands, so with a waiter
    the reader gets the first entry alone, as one by one."""
    h = fresh(100)
    reader = h.new_client()
    assert h(b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"$", client=reader) is BLOCKED
    h.engine.execute_run(h.client, [[b"XADD", b"s", b"*", b"n", b"%d" % i] for i in range(3)])
    [[[key, entries]]] = reader.inbox
    assert key == b"s" and len(entries) == 1


def test_inside_multi_a_run_is_queued_call_by_call():
    h = fresh(100)
    h(b"MULTI")
    replies = h.engine.execute_run(h.client, [[b"XADD", b"s", b"*", b"n", b"1"]] * 3)
    assert [r.text for r in replies] == [b"QUEUED"] * 3
    assert len(h(b"EXEC")) == 3
