"""CLIENT PAUSE: a client whose command is held counts in INFO's
blocked_clients, as in Redis (its pause.tcl waits on that count); reads are
not held by a WRITE pause, nor are scripts and functions flagged no-writes
(Redis's pause.tcl "Test RO scripts are not blocked by pause RO")."""

from __future__ import annotations

from tests.support.engine_harness import Harness
from tidelog.engine import POSTPONED


def test_postponed_clients_count_as_blocked():
    h = Harness()
    writer, reader = h.new_client(), h.new_client()
    h.ok("CLIENT", "PAUSE", "60000", "WRITE")
    assert h("GET", "foo", client=reader) is None
    assert h.engine.blocked_clients == 0
    assert h("SET", "foo", "bar", client=writer) is POSTPONED
    assert h.engine.blocked_clients == 1
    info = h.ok("INFO", "clients")
    assert b"blocked_clients:1\r\n" in (info if isinstance(info, bytes) else info.text)
    h.ok("CLIENT", "UNPAUSE")
    assert h.engine.blocked_clients == 0


LIB = ("#!lua name=f1\nredis.register_function{function_name='f1', "
       "callback=function() return 'hello' end, flags={'no-writes'}}\n"
       "redis.register_function('f2', function() return 'writer' end)")


def test_no_writes_scripts_run_under_a_write_pause():
    h = Harness()
    c = h.new_client()
    h.ok("FUNCTION", "LOAD", LIB)
    ro = "#!lua flags=no-writes\nreturn 'unique script'"
    sha = h.ok("SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn 2")
    h.ok("CLIENT", "PAUSE", "60000", "WRITE")
    assert h("EVAL", ro, "0", client=c) == b"unique script"
    assert h("EVAL", ro, "0", client=c) == b"unique script"
    assert h("EVALSHA", sha, "0", client=c) == 2
    assert h("FCALL", "f1", "0", client=c) == b"hello"
    assert h("FCALL", "F1", "0", client=c) == b"hello"
    h.ok("MULTI", client=c)
    h.ok("EVAL", "#!lua flags=no-writes\nreturn 12", "0", client=c)
    assert h("EXEC", client=c) == [12]
    assert h.engine.blocked_clients == 0
    # may write: held
    for argv in (["EVAL", "return 1", "0"], ["FCALL", "f2", "0"], ["EVALSHA", "0" * 40, "0"],
                 ["EVAL", "#!lua\nreturn 1", "0"]):
        assert h(*argv, client=h.new_client()) is POSTPONED
    assert h.engine.blocked_clients == 4
    h.ok("CLIENT", "UNPAUSE")



def _expired_keys(h: Harness) -> int:
    return h.engine.stats["expired_keys"]  # INFO stats' expired_keys


def test_keys_do_not_expire_while_writes_are_paused():
    """Expiry is a write: during CLIENT PAUSE (WRITE or ALL) a key past its
    deadline reads as missing but is not deleted, nor counted, nor
    propagated; once the pause ends the next lookup expires it (Redis's
    pause.tcl "Test both active and passive expires are skipped during
    client pause")."""
    for mode in ("WRITE", "ALL"):
        h = Harness()
        reader = h.new_client()
        h.ok("SET", "foo", "bar", "PX", "10")
        h.ok("SET", "bar", "foo", "PX", "10")
        h.take_effects()
        before = _expired_keys(h)
        h.ok("CLIENT", "PAUSE", "50000", mode)
        h.clock.advance(20)
        h.engine.cron()  # the active cycle skips its work
        if mode == "WRITE":
            assert h("GET", "foo", client=reader) is None
            assert h("EXISTS", "foo", "bar", client=reader) == 0
            assert h("KEYS", "*", client=reader) == []
        assert b"foo" in h.engine.dbs[0].data and b"bar" in h.engine.dbs[0].data
        assert _expired_keys(h) == before
        assert h.take_effects() == []
        h.engine.unpause()  # (under ALL, CLIENT UNPAUSE itself would wait)
        assert h("GET", "foo", client=reader) is None
        assert h("GET", "bar", client=reader) is None
        assert b"foo" not in h.engine.dbs[0].data and b"bar" not in h.engine.dbs[0].data
        assert _expired_keys(h) == before + 2
        assert [argv[0].upper() for argv in h.take_effects()] == [b"DEL", b"DEL"]


def test_may_replicate_commands_are_writes_to_read_only_scripts():
    """PUBLISH and PFCOUNT may replicate: a read-only script (EVAL_RO, or
    flags=no-writes) is refused them, as Redis 7.0.15 and 8.x refuse them,
    so such scripts can run under CLIENT PAUSE WRITE; a script that may
    write runs them."""
    h = Harness()
    for argv in (["EVAL_RO", "return redis.call('publish','ch','msg')", "0"],
                 ["EVAL", "#!lua flags=no-writes\nreturn redis.call('publish','ch','msg')", "0"],
                 ["EVAL_RO", "return redis.call('pfcount','hll')", "0"]):
        assert h.err(*argv).startswith(
            b"ERR Write commands are not allowed from read-only scripts. script: ")
    assert h("EVAL", "return redis.call('publish','ch','msg')", "0") == 0
    assert h("EVAL", "return redis.call('pfcount','hll')", "0") == 0


def test_hash_fields_do_not_expire_while_writes_are_paused():
    """Field expiry waits too (Redis 7.4+ leaves a due field in place while
    paused): reads leave the due fields out, the hash keeps them, nothing is
    propagated; after the pause the next lookup deletes them (HDEL)."""
    h = Harness()
    reader = h.new_client()
    h.ok("HSET", "h", "a", "1", "b", "2")
    h.ok("HSET", "gone", "x", "1")
    h.ok("HPEXPIRE", "h", "10", "FIELDS", "1", "a")
    h.ok("HPEXPIRE", "gone", "10", "FIELDS", "1", "x")
    h.take_effects()
    h.ok("CLIENT", "PAUSE", "50000", "WRITE")
    h.clock.advance(20)
    h.engine.cron()
    assert h("HGETALL", "h", client=reader).items == [(b"b", b"2")]
    assert h("HGET", "h", "a", client=reader) is None
    assert h("HPTTL", "h", "FIELDS", "2", "a", "b", client=reader) == [-2, -1]
    assert h("EXISTS", "gone", client=reader) == 0
    assert set(h.engine.dbs[0].data[b"h"].map) == {b"a", b"b"}
    assert b"gone" in h.engine.dbs[0].data
    assert h.take_effects() == []
    h.ok("CLIENT", "UNPAUSE")
    assert h("HGETALL", "h", client=reader).items == [(b"b", b"2")]
    assert h("EXISTS", "gone", client=reader) == 0
    assert set(h.engine.dbs[0].data[b"h"].map) == {b"b"}
    assert b"gone" not in h.engine.dbs[0].data
    assert h.take_effects() == [[b"HDEL", b"h", b"a"], [b"HDEL", b"gone", b"x"]]
