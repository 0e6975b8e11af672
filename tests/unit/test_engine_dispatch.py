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
    monkeypatch.setattr(engine_module, "DISPATCH_CACHE_MAX", 20)
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
