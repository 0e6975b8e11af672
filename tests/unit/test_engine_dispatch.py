"""The engine's dispatch: raw name bytes to a command, checks, counters, the turn clock.

The fast path (a dict lookup on the raw name, an arity check) must answer
exactly as the checked path: every letter case, container commands and their
subcommands, MULTI, arity errors; the cache of raw names stays bounded
whatever a client sends; calls are counted per command and in total.
"""

from __future__ import annotations

import time

from tidelog import engine as engine_module
from tidelog.clock import Clock
from tidelog.engine import Engine
from tidelog.engine import dispatch as dispatch_module
from tidelog.resp.replies import OK, PONG, QUEUED, ErrorReply


def run(engine, client, *argv):
    return engine.execute(client, [a if isinstance(a, bytes) else a.encode() for a in argv])


def test_any_letter_case_runs_the_command_and_counts_under_its_name():
    engine = Engine()
    client = engine.new_client()
    for name in ("XADD", "xadd", "XaDd", "xadd"):
        assert isinstance(run(engine, client, name, "s", "*", "f", "v"), bytes)
    assert engine.command_calls == {"xadd": 4}
    assert engine.total_commands_processed == 4


def test_arity_is_checked_on_the_fast_path_too():
    engine = Engine()
    client = engine.new_client()
    assert run(engine, client, "XLEN", "s") == 0  # now the raw name is known
    reply = run(engine, client, "XLEN", "s", "extra")
    assert reply == ErrorReply(b"ERR wrong number of arguments for 'xlen' command")
    reply = run(engine, client, "XADD", "s", "*")
    assert reply == ErrorReply(b"ERR wrong number of arguments for 'xadd' command")
    assert engine.command_calls == {"xlen": 1}


def test_a_container_name_never_stands_for_one_of_its_subcommands():
    engine = Engine()
    client = engine.new_client()
    run(engine, client, "XADD", "s", "1-1", "f", "v")
    assert run(engine, client, "XGROUP", "CREATE", "s", "g", "0") == OK
    assert run(engine, client, "XGROUP", "CREATECONSUMER", "s", "g", "c") == 1
    reply = run(engine, client, "XGROUP", "NOSUCH")
    assert isinstance(reply, ErrorReply) and reply.message.startswith(b"ERR unknown subcommand")
    assert engine.command_calls == {"xadd": 1, "xgroup|create": 1, "xgroup|createconsumer": 1}


def test_commands_inside_multi_are_queued_then_counted_when_exec_runs_them():
    engine = Engine()
    client = engine.new_client()
    run(engine, client, "PING")
    assert run(engine, client, "MULTI") == OK
    assert run(engine, client, "PING") == QUEUED  # a name the fast path knows
    assert run(engine, client, "EXEC") == [PONG]
    assert engine.command_calls == {"ping": 2, "multi": 1, "exec": 1}


def case_variants(name: bytes) -> list[bytes]:
    return [bytes(c - 32 if mask >> i & 1 else c for i, c in enumerate(name))
            for mask in range(1 << len(name))]


def test_the_cache_of_raw_names_is_bounded(monkeypatch):
    monkeypatch.setattr(dispatch_module, "DISPATCH_CACHE_MAX", 20)
    engine = Engine()
    client = engine.new_client()
    for i in range(50):
        engine.execute(client, [b"NOSUCH%d" % i])  # unknown names are never cached
    assert engine._dispatch == {}
    for raw in case_variants(b"ping") + case_variants(b"time"):  # 32 raw names
        assert not isinstance(engine.execute(client, [raw]), ErrorReply)
    assert len(engine._dispatch) == 20
    assert engine.command_calls == {"ping": 16, "time": 16}


def test_reset_stats_zeroes_every_counter():
    engine = Engine()
    client = engine.new_client()
    run(engine, client, "PING")
    run(engine, client, "NOSUCH")
    assert engine.stats["total_error_replies"] == 1
    run(engine, client, "CONFIG", "RESETSTAT")
    # As in Redis, a call is counted once it ran: RESETSTAT's own survives.
    assert engine.command_calls == {"config|resetstat": 1}
    assert engine.total_commands_processed == 1
    assert engine.stats["total_error_replies"] == 0 and engine.error_counts == {}


def test_the_clock_holds_one_reading_through_a_turn():
    clock = Clock()
    clock.begin_turn()
    held = clock.now_ms()
    time.sleep(0.003)
    assert clock.now_ms() == held
    clock.end_turn()
    assert clock.now_ms() >= held + 3


# -- execute_many: the commands of one read in one loop ------------------------------

def _argvs(*commands: str) -> list[list[bytes]]:
    return [command.encode().split() for command in commands]


def test_a_batch_answers_as_execute_one_by_one():
    batch = _argvs("PING", "SET k 1", "INCR k", "GET k", "XADD s 1-1 f v", "PING hello",
                   "GET nosuch", "INCR s", "SELECT 1", "SET k 2", "GET k")
    one = Engine()
    alone = one.new_client()
    expected = [one.execute(alone, argv) for argv in batch]
    many = Engine()
    client = many.new_client()
    replies: list = []
    i = 0
    while i < len(batch):  # as the network layer does
        i, reply = many.execute_many(client, batch, i, replies)
        if reply is engine_module.NOT_RUN:
            if i == len(batch):
                break
            reply = many.execute(client, batch[i])
            i += 1
        replies.append(reply)
    assert replies == expected
    assert many.command_calls == one.command_calls
    assert [(n, c, r, f) for n, c, _, r, f in many.command_stats()] == \
        [(n, c, r, f) for n, c, _, r, f in one.command_stats()]
    assert many.stats["total_error_replies"] == one.stats["total_error_replies"] == 1


def test_a_batch_stops_where_the_network_layer_must_look():
    engine = Engine()
    client = engine.new_client()
    engine.execute(client, [b"HELLO", b"2"])  # HELLO and the rest are known to the fast path
    engine.execute(client, [b"PING"])
    engine.execute(client, [b"MULTI"])
    engine.execute(client, [b"DISCARD"])
    replies: list = []
    batch = _argvs("PING", "HELLO 3", "PING")
    i, reply = engine.execute_many(client, batch, 0, replies)
    assert (i, replies) == (2, [PONG])  # HELLO ran; its reply is for the caller
    assert client.protocol == 3 and reply is not engine_module.NOT_RUN
    replies = []
    batch = _argvs("PING", "MULTI", "PING", "EXEC")
    i, reply = engine.execute_many(client, batch, 0, replies)
    assert (i, reply, replies) == (2, engine_module.NOT_RUN, [PONG, OK])  # queued by execute
    assert engine.execute(client, batch[2]) == QUEUED
    replies = []
    i, reply = engine.execute_many(client, _argvs("PING"), 0, replies)
    assert (i, reply, replies) == (0, engine_module.NOT_RUN, [])  # still in MULTI
    assert engine.execute(client, [b"DISCARD"]) == OK
    i, reply = engine.execute_many(client, _argvs("PING", "NOSUCH", "PING"), 0, replies)
    assert (i, reply, replies) == (1, engine_module.NOT_RUN, [PONG])  # for the checked path


def test_a_context_kept_by_a_handler_is_not_shared_with_the_next_command():
    engine = Engine()
    client = engine.new_client()
    engine.execute(client, [b"ECHO", b"x"])
    entry = client.dispatch[b"ECHO"]
    kept = []

    def echo(ctx, argv):  # keeps every context it is given
        kept.append(ctx)
        return argv[1]

    entry.handler = echo
    replies: list = []
    batch = [[b"ECHO", b"%d" % n] for n in range(5)]
    assert engine.execute_many(client, batch, 0, replies) == (5, engine_module.NOT_RUN)
    assert replies == [b"0", b"1", b"2", b"3", b"4"]
    assert len({id(ctx) for ctx in kept}) == 5
    assert [ctx.argv[1] for ctx in kept] == replies  # each still holds its own command
